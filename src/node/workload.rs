//! Workload OIDC tokens on the node: the issuers' keys, fetched and cached,
//! and the verification that uses them (DESIGN §7).
//!
//! A node fetches keys only from the issuers `oidc.issuers` lists, and only
//! after the token's other claims held up: OpenID discovery
//! (`<iss>/.well-known/openid-configuration`, whose `issuer` must be the
//! token's) names the `jwks_uri`, and the key set is kept for
//! `oidc.keysSeconds` (10 minutes by default).
//! With warm keys verification makes no network call at all. A token naming
//! a `kid` the cached set lacks (the issuer rotated) refetches the set, at
//! most once a [`KID_REFETCH`] per issuer, so forged `kid`s cannot make a
//! node hammer an issuer. When a refetch fails, the keys held keep working;
//! with none held the token is `auth-invalid` like any other that cannot be
//! verified. Fetches of one issuer are single-flight, and the key set must
//! come from the issuer's own origin (scheme, host and port).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use crate::auth::oidc::{self, Algorithm, KeySet, WorkloadError};
use crate::config::NodeConfig;

/// The shortest interval between two refetches for an unknown `kid`.
pub const KID_REFETCH: Duration = Duration::from_secs(60);
/// The shortest interval between two attempts after a failed fetch.
pub const FAILED_RETRY: Duration = Duration::from_secs(5);
/// Keys that could not be refreshed are used this long past their TTL, then
/// dropped: a key the issuer withdrew stops working even if the node
/// cannot reach the issuer.
pub const STALE_LIMIT: Duration = Duration::from_secs(24 * 3600);
/// Bound on a discovery document or key set.
const DOCUMENT_BYTES: usize = 256 * 1024;

/// A verified workload: who the CI system says is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    pub issuer: String,
    pub subject: String,
}

impl Workload {
    /// How deploy records name this caller: `oidc:<iss>#<sub>`.
    pub fn actor(&self) -> String {
        format!("oidc:{}#{}", self.issuer, self.subject)
    }
}

#[derive(Debug, Default)]
struct Fetching {
    last_kid_refetch: Option<Instant>,
    last_failure: Option<Instant>,
}

/// What this node knows of one issuer.
#[derive(Debug, Default)]
struct Issuer {
    /// The keys last fetched, and when.
    held: RwLock<Option<(Arc<KeySet>, Instant)>>,
    /// Held while fetching: one fetch per issuer at a time.
    fetching: tokio::sync::Mutex<Fetching>,
}

/// The node's workload-token verifier and its key cache.
#[derive(Debug)]
pub struct Workloads {
    issuers: Vec<String>,
    audience: String,
    allow_http: bool,
    /// How long a fetched key set is used before it is fetched again.
    ttl: Duration,
    http: reqwest::Client,
    cache: Mutex<HashMap<String, Arc<Issuer>>>,
}

impl Workloads {
    pub fn new(config: &NodeConfig) -> Result<Workloads, reqwest::Error> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(3))
            .timeout(Duration::from_secs(5))
            .user_agent(concat!("scafo/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Workloads {
            issuers: config.oidc_issuers.clone(),
            audience: config.oidc_audience.clone(),
            allow_http: config.oidc_allow_http,
            ttl: config.oidc_keys_ttl,
            http,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// Verifies a workload token: claims, then the issuer's keys.
    pub async fn verify(&self, token: &str) -> Result<Workload, WorkloadError> {
        let unverified = oidc::parse(
            token,
            &self.issuers,
            &self.audience,
            crate::auth::token::now(),
        )?;
        let keys = self
            .keys(
                &unverified.issuer,
                unverified.kid.as_deref(),
                unverified.algorithm,
            )
            .await?;
        unverified.verify(&keys)?;
        Ok(Workload {
            issuer: unverified.issuer,
            subject: unverified.subject,
        })
    }

    fn issuer(&self, issuer: &str) -> Arc<Issuer> {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(cache.entry(issuer.to_owned()).or_default())
    }

    /// The key set to verify with. Held keys that know the token's `kid`
    /// answer at once; past their TTL one request refreshes them while the
    /// others go on with what is held. Otherwise the request waits for a
    /// fetch — unless an unknown `kid` already refetched within
    /// [`KID_REFETCH`], or the last fetch failed within [`FAILED_RETRY`].
    async fn keys(
        &self,
        issuer: &str,
        kid: Option<&str>,
        algorithm: Algorithm,
    ) -> Result<Arc<KeySet>, WorkloadError> {
        let entry = self.issuer(issuer);
        let usable = |entry: &Issuer| {
            let held = entry.held.read().unwrap_or_else(|p| p.into_inner());
            held.clone()
                .filter(|(_, at)| at.elapsed() < self.ttl + STALE_LIMIT)
        };
        let current = usable(&entry);
        if let Some((keys, at)) = &current
            && keys.has(kid, algorithm)
        {
            if at.elapsed() < self.ttl {
                return Ok(Arc::clone(keys));
            }
            // Stale: refresh unless another request is already at it.
            let Ok(mut fetching) = entry.fetching.try_lock() else {
                return Ok(Arc::clone(keys));
            };
            if usable(&entry).is_some_and(|(_, at)| at.elapsed() < self.ttl) {
                return Ok(Arc::clone(keys));
            }
            if self.may_retry(&fetching) {
                // A failure keeps the held keys (logged in `refresh`).
                let _ = self.refresh(issuer, &entry, &mut fetching).await;
            }
            return Ok(usable(&entry).map_or_else(|| Arc::clone(keys), |(keys, _)| keys));
        }
        let mut fetching = entry.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let current = usable(&entry);
        if let Some((keys, _)) = &current
            && keys.has(kid, algorithm)
        {
            return Ok(Arc::clone(keys));
        }
        let refetch_for_kid = current.is_some();
        if refetch_for_kid
            && fetching
                .last_kid_refetch
                .is_some_and(|t| t.elapsed() < KID_REFETCH)
        {
            return Err(WorkloadError::UnknownKey);
        }
        if !self.may_retry(&fetching) {
            return match current {
                Some(_) => Err(WorkloadError::UnknownKey),
                None => Err(WorkloadError::Keys(
                    "the last fetch failed moments ago".into(),
                )),
            };
        }
        if refetch_for_kid {
            fetching.last_kid_refetch = Some(Instant::now());
        }
        match self.refresh(issuer, &entry, &mut fetching).await {
            Ok(keys) => Ok(keys),
            Err(why) => match current {
                Some((keys, _)) => Ok(keys),
                None => Err(WorkloadError::Keys(why)),
            },
        }
    }

    fn may_retry(&self, fetching: &Fetching) -> bool {
        fetching
            .last_failure
            .is_none_or(|t| t.elapsed() >= FAILED_RETRY)
    }

    /// Fetches the issuer's keys and holds them; a failure is remembered
    /// (from when it ended) so the next attempt waits [`FAILED_RETRY`].
    async fn refresh(
        &self,
        issuer: &str,
        entry: &Issuer,
        fetching: &mut Fetching,
    ) -> Result<Arc<KeySet>, String> {
        match self.fetch(issuer).await {
            Ok(keys) => {
                fetching.last_failure = None;
                tracing::info!(issuer, keys = keys.len(), "workload issuer keys fetched");
                let keys = Arc::new(keys);
                *entry.held.write().unwrap_or_else(|p| p.into_inner()) =
                    Some((Arc::clone(&keys), Instant::now()));
                Ok(keys)
            }
            Err(why) => {
                fetching.last_failure = Some(Instant::now());
                tracing::warn!(issuer, %why, "workload issuer keys could not be fetched");
                Err(why)
            }
        }
    }

    /// Discovery, then the key set.
    async fn fetch(&self, issuer: &str) -> Result<KeySet, String> {
        #[derive(serde::Deserialize)]
        struct Discovery {
            issuer: String,
            jwks_uri: String,
        }
        let discovery_url = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        let body = self.get(&discovery_url).await?;
        let discovery: Discovery = serde_json::from_slice(&body)
            .map_err(|e| format!("{discovery_url}: not an OpenID discovery document: {e}"))?;
        if discovery.issuer != issuer {
            return Err(format!(
                "{discovery_url} names issuer {:?}, not {issuer:?}",
                discovery.issuer
            ));
        }
        oidc::check_url(&discovery.jwks_uri, self.allow_http)
            .map_err(|rule| format!("jwks_uri {:?} {rule}", discovery.jwks_uri))?;
        if !oidc::same_origin(issuer, &discovery.jwks_uri) {
            return Err(format!(
                "jwks_uri {:?} is not on the issuer's own origin; scafo fetches keys from the issuer only",
                discovery.jwks_uri
            ));
        }
        let body = self.get(&discovery.jwks_uri).await?;
        KeySet::parse(&body).map_err(|e| format!("{}: {e}", discovery.jwks_uri))
    }

    async fn get(&self, url: &str) -> Result<Vec<u8>, String> {
        let response = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("{url}: {}", root_cause(&e)))?;
        if !response.status().is_success() {
            return Err(format!("{url} answered {}", response.status()));
        }
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| format!("{url}: {e}"))?;
            if body.len() + chunk.len() > DOCUMENT_BYTES {
                return Err(format!("{url}: larger than {DOCUMENT_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}
