//! The HTTP client every command uses: where the node is, which credential
//! to present, one fresh token per request, and problem documents turned
//! into typed failures.
//!
//! Resolution (DESIGN §4): flags (`--url`, `--token`, `--key`) > environment
//! (`SCAFO_URL`, `SCAFO_TOKEN`, `SCAFO_KEY`) > `$XDG_CONFIG_HOME/scafo/config.toml`
//! (`url`, `key`) > the local node: `http://127.0.0.1:7070` with its
//! bootstrap key (`<state.dir>/admin.jwk`) when this user can read it.

pub mod github;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::anyhow;
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::auth::{SecretKey, token};
use crate::cli::GlobalArgs;
use crate::cmd::Failure;
use crate::config::{self, Env};
use crate::wire::Problem;

pub const DEFAULT_URL: &str = "http://127.0.0.1:7070";

/// What the client signs its requests with.
#[derive(Debug)]
pub enum Credential {
    /// A key file: a fresh token is signed for every request.
    Key {
        key: Box<SecretKey>,
        kid: String,
        path: PathBuf,
    },
    /// A raw bearer (a CI OIDC token, or a token minted elsewhere).
    Token(String),
    /// The running GitHub Actions job's ID token (`scafo deploy --oidc`).
    Github(Box<github::GithubOidc>),
}

impl Credential {
    /// The operator id this credential speaks for, when it can be told.
    pub fn kid(&self) -> Option<String> {
        match self {
            Credential::Key { kid, .. } => Some(kid.clone()),
            Credential::Token(token) => token::peek_kid(token),
            Credential::Github(_) => None,
        }
    }

    /// Whether this is a CI workload's OIDC token rather than an operator
    /// key or token (workload tokens reach the deploy routes only).
    pub fn is_workload(&self) -> bool {
        match self {
            Credential::Key { .. } => false,
            Credential::Token(token) => {
                crate::auth::oidc::peek_alg(token).is_some_and(|alg| alg != "EdDSA")
            }
            Credential::Github(_) => true,
        }
    }

    async fn bearer(&self) -> Result<String, Failure> {
        Ok(match self {
            Credential::Key { key, kid, .. } => token::sign(key.signing_key(), kid, token::now()),
            Credential::Token(token) => token.clone(),
            Credential::Github(github) => github.token().await?,
        })
    }

    /// Loads a key file, which must name its operator id in `kid`.
    pub fn from_key_file(path: &Path) -> Result<Credential, Failure> {
        let key = SecretKey::read(path).map_err(|e| Failure::Usage(e.into()))?;
        let kid = key.kid().map(str::to_owned).ok_or_else(|| {
            Failure::Usage(anyhow!(
                "key file {} has no \"kid\" naming its operator id",
                path.display()
            ))
        })?;
        Ok(Credential::Key {
            key: Box::new(key),
            kid,
            path: path.to_owned(),
        })
    }
}

/// `$XDG_CONFIG_HOME/scafo/config.toml`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientFile {
    url: Option<String>,
    key: Option<PathBuf>,
}

/// The client configuration directory (`$XDG_CONFIG_HOME/scafo`).
pub fn config_dir(env: Env<'_>) -> PathBuf {
    match env("XDG_CONFIG_HOME").filter(|d| d.starts_with('/')) {
        Some(dir) => PathBuf::from(dir).join("scafo"),
        None => PathBuf::from(env("HOME").unwrap_or_else(|| "/tmp".into())).join(".config/scafo"),
    }
}

fn read_client_file(env: Env<'_>) -> Result<ClientFile, Failure> {
    let path = config_dir(env).join("config.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            toml::from_str(&text).map_err(|e| Failure::Usage(anyhow!("{}: {e}", path.display())))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ClientFile::default()),
        Err(e) => Err(Failure::Usage(anyhow!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

#[derive(Debug)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    credential: Option<Credential>,
}

impl Client {
    /// Resolves the node URL and credential from flags, environment, the
    /// client config file and the local node.
    pub fn resolve(global: &GlobalArgs, env: Env<'_>) -> Result<Client, Failure> {
        let file = read_client_file(env)?;
        let url = global
            .url
            .clone()
            .or_else(|| env("SCAFO_URL"))
            .or(file.url)
            .unwrap_or_else(|| DEFAULT_URL.to_owned());
        let base = config::http_url(&url)
            .map_err(|rule| Failure::Usage(anyhow!("node URL {url:?}: {rule}")))?;
        let credential = if let Some(token) = &global.token {
            Some(Credential::Token(token.clone()))
        } else if let Some(path) = &global.key {
            Some(Credential::from_key_file(path)?)
        } else if let Some(token) = env("SCAFO_TOKEN").filter(|t| !t.is_empty()) {
            Some(Credential::Token(token))
        } else if let Some(path) = env("SCAFO_KEY").filter(|p| !p.is_empty()) {
            Some(Credential::from_key_file(Path::new(&path))?)
        } else if let Some(path) = file.key {
            Some(Credential::from_key_file(&path)?)
        } else {
            local_admin_key(env)
        };
        Client::new(base, credential)
    }

    pub fn new(base: String, credential: Option<Credential>) -> Result<Client, Failure> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .user_agent(concat!("scafo/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Failure::Refused(anyhow!("cannot build the HTTP client: {e}")))?;
        Ok(Client {
            http,
            base,
            credential,
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn credential(&self) -> Option<&Credential> {
        self.credential.as_ref()
    }

    /// The same node, another credential (rotation signs with both keys).
    pub fn with_credential(&self, credential: Credential) -> Client {
        Client {
            http: self.http.clone(),
            base: self.base.clone(),
            credential: Some(credential),
        }
    }

    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, Failure> {
        self.call(Method::GET, path, None::<&()>).await
    }

    /// Sends one request with a fresh token and a JSON body.
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&impl Serialize>,
    ) -> Result<T, Failure> {
        self.request(method, path, |request| match body {
            Some(body) => request.json(body),
            None => request,
        })
        .await
    }

    /// Sends one request with a fresh token, shaped by `build` (headers,
    /// body, a longer timeout), and reads its JSON answer.
    pub async fn request<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        build: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ) -> Result<T, Failure> {
        let credential = self.credential.as_ref().ok_or_else(|| {
            Failure::Usage(anyhow!(
                "no credential: pass --key FILE or --token T, set SCAFO_KEY or SCAFO_TOKEN, or put key = \"…\" in {}",
                config_dir(&config::process_env).join("config.toml").display()
            ))
        })?;
        let url = format!("{}{path}", self.base);
        let request = self
            .http
            .request(method.clone(), &url)
            .bearer_auth(credential.bearer().await?)
            .timeout(Duration::from_secs(60));
        let response = build(request).send().await.map_err(|e| {
            Failure::Unreachable(anyhow!(
                "cannot reach the node at {}: {}",
                self.base,
                root_cause(&e)
            ))
        })?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(|e| {
            Failure::Unreachable(anyhow!(
                "the node at {} broke off its answer: {e}",
                self.base
            ))
        })?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|e| {
                Failure::Refused(anyhow!(
                    "{method} {path}: unexpected answer from the node: {e}"
                ))
            });
        }
        match serde_json::from_slice::<Problem>(&bytes) {
            Ok(problem) => Err(Failure::Problem(Box::new(problem))),
            Err(_) if status.is_server_error() => Err(Failure::Unreachable(anyhow!(
                "the node at {} answered {status}",
                self.base
            ))),
            Err(_) => Err(Failure::Refused(anyhow!(
                "{method} {path}: the node answered {status} without a problem document"
            ))),
        }
    }
}

/// `<state.dir>/admin.jwk` of a node on this machine, when readable.
fn local_admin_key(env: Env<'_>) -> Option<Credential> {
    let state = env("SCAFO_STATE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| config::default_state_dir(env));
    Credential::from_key_file(&state.join(crate::node::ADMIN_KEY_FILE)).ok()
}

fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// Is this failure the node's `status`?
pub fn is_status(failure: &Failure, status: StatusCode) -> bool {
    matches!(failure, Failure::Problem(p) if p.status == status.as_u16())
}
