//! A local OIDC issuer for workload-token tests: OpenID discovery and a JWK
//! Set over HTTP on 127.0.0.1, RSA and EC signing keys, key rotation, an
//! outage switch, request counters — and GitHub Actions' ID-token endpoint,
//! so `scafo deploy --oidc` runs as it would in a job.
//!
//! It serves from its own thread, so a test may block on a child process
//! (the CLI) that calls it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair, RSA_PKCS1_SHA256, RsaKeyPair,
};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

/// The bearer GitHub's runner gives a job for the ID-token endpoint.
pub const REQUEST_TOKEN: &str = "runner-request-token-7f3a";
/// The subject the GitHub endpoint puts in its tokens.
pub const GITHUB_SUBJECT: &str = "repo:acme/shop:ref:refs/heads/main";

pub enum Key {
    Rsa(RsaKeyPair),
    Ec(EcdsaKeyPair),
}

impl Key {
    pub fn rsa() -> Key {
        Key::Rsa(RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).expect("rsa key"))
    }

    pub fn ec() -> Key {
        Key::Ec(EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).expect("ec key"))
    }

    fn alg(&self) -> &'static str {
        match self {
            Key::Rsa(_) => "RS256",
            Key::Ec(_) => "ES256",
        }
    }

    fn sign(&self, message: &[u8]) -> Vec<u8> {
        match self {
            Key::Rsa(pair) => {
                let mut signature = vec![0; pair.public_modulus_len()];
                pair.sign(
                    &RSA_PKCS1_SHA256,
                    &SystemRandom::new(),
                    message,
                    &mut signature,
                )
                .expect("rsa sign");
                signature
            }
            Key::Ec(pair) => pair
                .sign(&SystemRandom::new(), message)
                .expect("ec sign")
                .as_ref()
                .to_vec(),
        }
    }

    fn jwk(&self, kid: &str) -> Value {
        match self {
            Key::Rsa(pair) => {
                let (n, e) = rsa_components(pair.public_key().as_ref()).expect("rsa der");
                json!({"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                       "n": URL_SAFE_NO_PAD.encode(n), "e": URL_SAFE_NO_PAD.encode(e)})
            }
            Key::Ec(pair) => {
                let point = pair.public_key().as_ref();
                json!({"kty": "EC", "kid": kid, "use": "sig", "alg": "ES256", "crv": "P-256",
                       "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
                       "y": URL_SAFE_NO_PAD.encode(&point[33..65])})
            }
        }
    }
}

/// `n` and `e` of a DER RSAPublicKey (a SEQUENCE of two INTEGERs).
fn rsa_components(der: &[u8]) -> Option<(&[u8], &[u8])> {
    fn item(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
        let (&t, rest) = input.split_first()?;
        if t != tag {
            return None;
        }
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = if first < 0x80 {
            (first as usize, rest)
        } else {
            let count = (first & 0x7f) as usize;
            let len = rest
                .get(..count)?
                .iter()
                .fold(0usize, |a, b| a << 8 | *b as usize);
            (len, rest.get(count..)?)
        };
        Some((rest.get(..len)?, rest.get(len..)?))
    }
    let (body, _) = item(der, 0x30)?;
    let (n, rest) = item(body, 0x02)?;
    let (e, _) = item(rest, 0x02)?;
    let zeros = n.iter().take_while(|b| **b == 0).count();
    Some((&n[zeros..], e))
}

struct Inner {
    url: String,
    /// Published keys, by kid (every key ever made stays usable to sign).
    keys: Mutex<Vec<(String, Arc<Key>, bool)>>,
    discovery: AtomicUsize,
    jwks: AtomicUsize,
    github: AtomicUsize,
    down: AtomicBool,
}

/// A running issuer; stops with the test process.
pub struct Issuer {
    inner: Arc<Inner>,
}

impl Issuer {
    /// An issuer publishing one RSA key (`rsa-1`) and one EC key (`ec-1`).
    pub fn start() -> Issuer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind issuer");
        listener.set_nonblocking(true).expect("nonblocking");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let inner = Arc::new(Inner {
            url,
            keys: Mutex::new(vec![
                ("rsa-1".into(), Arc::new(Key::rsa()), true),
                ("ec-1".into(), Arc::new(Key::ec()), true),
            ]),
            discovery: AtomicUsize::new(0),
            jwks: AtomicUsize::new(0),
            github: AtomicUsize::new(0),
            down: AtomicBool::new(false),
        });
        let state = Arc::clone(&inner);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("issuer runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let app = axum::Router::new()
                    .route("/.well-known/openid-configuration", get(discovery))
                    .route("/jwks", get(jwks))
                    .route("/github-token", get(github_token))
                    .with_state(state);
                let _ = axum::serve(listener, app).await;
            });
        });
        Issuer { inner }
    }

    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// Requests served so far: (discovery, key set).
    pub fn hits(&self) -> (usize, usize) {
        (
            self.inner.discovery.load(Ordering::SeqCst),
            self.inner.jwks.load(Ordering::SeqCst),
        )
    }

    /// Tokens handed out by the GitHub endpoint.
    pub fn github_hits(&self) -> usize {
        self.inner.github.load(Ordering::SeqCst)
    }

    /// Discovery and key set answer 503 while down.
    pub fn set_down(&self, down: bool) {
        self.inner.down.store(down, Ordering::SeqCst);
    }

    /// Replaces every published key with a new RSA key, answering its kid
    /// (the old keys can still sign, as a stolen or retired key could).
    pub fn rotate(&self, kid: &str) {
        let mut keys = self.inner.keys.lock().expect("keys");
        for key in keys.iter_mut() {
            key.2 = false;
        }
        keys.push((kid.to_owned(), Arc::new(Key::rsa()), true));
    }

    /// The key set exactly as served.
    pub fn jwks_text(&self) -> String {
        jwks_document(&self.inner).to_string()
    }

    /// Default claims for this issuer, `changes` merged in (a null removes).
    pub fn claims(&self, subject: &str, changes: Value) -> Value {
        let now = scafo::auth::token::now();
        let mut claims = json!({"iss": self.inner.url, "sub": subject, "aud": "scafo",
                                "iat": now, "nbf": now, "exp": now + 300, "jti": crate::util::unique("j")});
        if let (Some(claims), Value::Object(changes)) = (claims.as_object_mut(), changes) {
            for (k, v) in changes {
                if v.is_null() {
                    claims.remove(&k);
                } else {
                    claims.insert(k, v);
                }
            }
        }
        claims
    }

    /// A token for `subject` signed with key `kid` (claims changed by `changes`).
    pub fn token(&self, kid: &str, subject: &str, changes: Value) -> String {
        self.sign(kid, self.claims(subject, changes))
    }

    /// Signs `claims` with key `kid`, the header naming that kid.
    pub fn sign(&self, kid: &str, claims: Value) -> String {
        let alg = self.key(kid).alg();
        self.sign_as(kid, json!({"alg": alg, "typ": "JWT", "kid": kid}), claims)
    }

    fn key(&self, kid: &str) -> Arc<Key> {
        let keys = self.inner.keys.lock().expect("keys");
        Arc::clone(&keys.iter().find(|k| k.0 == kid).expect("kid").1)
    }

    /// Signs `claims` with key `kid` under whatever `header` says.
    pub fn sign_as(&self, kid: &str, header: Value, claims: Value) -> String {
        let key = self.key(kid);
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = key.sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature))
    }
}

fn jwks_document(inner: &Inner) -> Value {
    let keys = inner.keys.lock().expect("keys");
    let keys: Vec<Value> = keys
        .iter()
        .filter(|k| k.2)
        .map(|(kid, key, _)| key.jwk(kid))
        .collect();
    json!({ "keys": keys })
}

async fn discovery(State(inner): State<Arc<Inner>>) -> Response {
    inner.discovery.fetch_add(1, Ordering::SeqCst);
    if inner.down.load(Ordering::SeqCst) {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    axum::Json(json!({
        "issuer": inner.url,
        "jwks_uri": format!("{}/jwks", inner.url),
        "id_token_signing_alg_values_supported": ["RS256", "ES256"],
    }))
    .into_response()
}

async fn jwks(State(inner): State<Arc<Inner>>) -> Response {
    inner.jwks.fetch_add(1, Ordering::SeqCst);
    if inner.down.load(Ordering::SeqCst) {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    axum::Json(jwks_document(&inner)).into_response()
}

/// GitHub's `ACTIONS_ID_TOKEN_REQUEST_URL`: `?audience=` and the runner's
/// request token as bearer.
async fn github_token(
    State(inner): State<Arc<Inner>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let authorized = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == format!("Bearer {REQUEST_TOKEN}"));
    if !authorized || query.get("api-version").map(String::as_str) != Some("2.0") {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    inner.github.fetch_add(1, Ordering::SeqCst);
    let issuer = Issuer {
        inner: Arc::clone(&inner),
    };
    let audience = query.get("audience").cloned().unwrap_or_default();
    let kid = {
        let keys = inner.keys.lock().expect("keys");
        keys.iter()
            .rev()
            .find(|k| k.2)
            .map(|k| k.0.clone())
            .expect("a key")
    };
    let token = issuer.token(&kid, GITHUB_SUBJECT, json!({"aud": audience}));
    axum::Json(json!({"count": 1, "value": token})).into_response()
}

/// The node environment that lists `issuers` (and, for these loopback
/// test issuers only, admits http).
pub fn issuer_env(issuer: &Issuer) -> Vec<(String, String)> {
    issuers_env(&[issuer])
}

/// [`issuer_env`] for several issuers.
pub fn issuers_env(issuers: &[&Issuer]) -> Vec<(String, String)> {
    let urls: Vec<&str> = issuers.iter().map(|i| i.url()).collect();
    vec![
        ("SCAFO_OIDC_ISSUERS".into(), urls.join(",")),
        ("SCAFO_OIDC_ALLOWHTTP".into(), "true".into()),
    ]
}
