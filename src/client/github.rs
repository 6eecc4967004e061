//! `scafo deploy --oidc`: the GitHub Actions ID token of the running job.
//!
//! A job granted `permissions: id-token: write` finds two variables in its
//! environment: `ACTIONS_ID_TOKEN_REQUEST_URL` and
//! `ACTIONS_ID_TOKEN_REQUEST_TOKEN`. A GET of the URL, with `audience=<aud>`
//! added to its query and the request token as bearer, answers
//! `{"value": "<JWT>"}`. The token is fetched when first needed and again
//! when it has under [`REFRESH_MARGIN`] left, so a long deploy keeps
//! following with a valid token. It is never printed.

use std::time::Duration;

use anyhow::anyhow;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::cmd::Failure;
use crate::config::Env;

pub const REQUEST_URL: &str = "ACTIONS_ID_TOKEN_REQUEST_URL";
pub const REQUEST_TOKEN: &str = "ACTIONS_ID_TOKEN_REQUEST_TOKEN";
/// A token with less than this left is fetched anew.
const REFRESH_MARGIN: u64 = 60;

/// Where to ask for the job's ID token, and the last one received.
#[derive(Debug)]
pub struct GithubOidc {
    url: String,
    request_token: String,
    audience: String,
    http: reqwest::Client,
    current: tokio::sync::Mutex<Option<(String, u64)>>,
}

impl GithubOidc {
    /// Reads the job's environment; a clear usage error outside a job
    /// granted `id-token: write`.
    pub fn from_env(env: Env<'_>, audience: &str) -> Result<GithubOidc, Failure> {
        let missing = |name: &str| {
            Failure::Usage(anyhow!(
                "--oidc fetches a GitHub Actions ID token, but {name} is not set: give the job `permissions: id-token: write` (in another CI, pass its OIDC token with SCAFO_TOKEN or --token)"
            ))
        };
        let url = env(REQUEST_URL)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| missing(REQUEST_URL))?;
        let request_token = env(REQUEST_TOKEN)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| missing(REQUEST_TOKEN))?;
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(Failure::Usage(anyhow!(
                "{REQUEST_URL} is not an http(s) URL"
            )));
        }
        if audience.is_empty() {
            return Err(Failure::Usage(anyhow!("--audience must not be empty")));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(30))
            .user_agent(concat!("scafo/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Failure::Refused(anyhow!("cannot build the HTTP client: {e}")))?;
        Ok(GithubOidc {
            url,
            request_token,
            audience: audience.to_owned(),
            http,
            current: tokio::sync::Mutex::new(None),
        })
    }

    /// The job's ID token, fetched when there is none with time left.
    pub async fn token(&self) -> Result<String, Failure> {
        let mut current = self.current.lock().await;
        let now = crate::auth::token::now();
        if let Some((token, exp)) = current.as_ref()
            && *exp > now + REFRESH_MARGIN
        {
            return Ok(token.clone());
        }
        let token = self.fetch().await?;
        let exp = expiry(&token).unwrap_or(now + REFRESH_MARGIN + 1);
        *current = Some((token.clone(), exp));
        Ok(token)
    }

    async fn fetch(&self) -> Result<String, Failure> {
        #[derive(serde::Deserialize)]
        struct Answer {
            value: String,
        }
        let failed = |why: String| {
            Failure::Refused(anyhow!(
                "could not get the GitHub Actions ID token ({REQUEST_URL}): {why}"
            ))
        };
        let mut url = reqwest::Url::parse(&self.url)
            .map_err(|e| failed(format!("{REQUEST_URL} is not a URL: {e}")))?;
        url.query_pairs_mut()
            .append_pair("audience", &self.audience);
        let response = self
            .http
            .get(url)
            .bearer_auth(&self.request_token)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| failed(super::root_cause(&e)))?;
        let status = response.status();
        if !status.is_success() {
            return Err(failed(format!("answered {status}")));
        }
        let answer: Answer = response
            .json()
            .await
            .map_err(|e| failed(format!("unexpected answer: {e}")))?;
        if answer.value.split('.').count() != 3 {
            return Err(failed("the answer holds no JWT".to_owned()));
        }
        Ok(answer.value)
    }
}

/// A JWT's `exp`, read without verifying (the node verifies).
fn expiry(token: &str) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Exp {
        exp: u64,
    }
    let payload = token.split('.').nth(1)?;
    let bytes = URL_SAFE_NO_PAD.decode(payload).ok()?;
    serde_json::from_slice::<Exp>(&bytes).ok().map(|c| c.exp)
}
