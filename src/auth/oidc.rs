//! Workload tokens: OIDC ID tokens a CI system issues to a job (DESIGN §7).
//!
//! Pure: the token's form and claims, a JSON Web Key Set, and the signature
//! check. Fetching and caching an issuer's keys is the node's business
//! (`node/workload.rs`), and so is the trust policy.
//!
//! Only RS256 (RSA PKCS#1 v1.5, SHA-256, 2048–8192 bit keys) and ES256
//! (ECDSA P-256, SHA-256) are accepted — the algorithms GitHub Actions and
//! GitLab sign with. The algorithm is taken from a fixed list, never from the
//! key set, and a key is used only for the algorithm its type allows, so
//! `alg: none` and the "JWKS as an HMAC secret" confusion have nowhere to go.
//! Every failure is a [`WorkloadError`] for the node's debug log; the caller
//! sees the same `auth-invalid` as for any other bad token.

use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED, ParsedPublicKey, RSA_PKCS1_2048_8192_SHA256, RsaPublicKeyComponents,
    UnparsedPublicKey,
};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;

use super::jws;

/// Workload tokens longer than this are refused before any parsing.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
pub const LEEWAY: u64 = 60;
/// A key set with more keys than this is refused (issuers publish a few).
pub const MAX_KEYS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    #[error("not a compact JWS")]
    Malformed,
    #[error("algorithm is not RS256 or ES256")]
    Algorithm,
    #[error("claims missing or malformed")]
    Claims,
    #[error("issuer is not one of oidc.issuers")]
    Issuer,
    #[error("wrong audience")]
    Audience,
    #[error("expired")]
    Expired,
    #[error("not valid yet")]
    NotYetValid,
    #[error("no key of the issuer's key set matches")]
    UnknownKey,
    #[error("signature does not verify")]
    Signature,
    #[error("the issuer's keys could not be fetched: {0}")]
    Keys(String),
}

/// The two signature algorithms a workload token may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Rs256,
    Es256,
}

impl Algorithm {
    fn from_name(name: &str) -> Option<Self> {
        match name {
            "RS256" => Some(Algorithm::Rs256),
            "ES256" => Some(Algorithm::Es256),
            _ => None,
        }
    }
}

/// The `alg` a compact JWS's header names, if the header can be read.
pub fn peek_alg(token: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Alg {
        alg: String,
    }
    jws::peek_header::<Alg>(token).map(|h| h.alg)
}

#[derive(Deserialize)]
struct Header {
    alg: String,
    kid: Option<String>,
}

#[derive(Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    aud: jws::Audience,
    exp: u64,
    nbf: Option<u64>,
    iat: Option<u64>,
}

/// A workload token whose form, issuer, audience and times hold up, awaiting
/// its issuer's keys.
#[derive(Debug)]
pub struct Unverified<'a> {
    pub issuer: String,
    pub subject: String,
    pub kid: Option<String>,
    pub algorithm: Algorithm,
    signing_input: &'a str,
    signature: Vec<u8>,
}

/// Checks everything that needs no key: shape, algorithm, that `iss` is one
/// of `issuers` (before anything would be fetched from it), `aud` and time.
pub fn parse<'a>(
    token: &'a str,
    issuers: &[String],
    audience: &str,
    now: u64,
) -> Result<Unverified<'a>, WorkloadError> {
    let parts = jws::split(token, MAX_TOKEN_BYTES).ok_or(WorkloadError::Malformed)?;
    let header: Header =
        serde_json::from_slice(&parts.header).map_err(|_| WorkloadError::Malformed)?;
    let algorithm = Algorithm::from_name(&header.alg).ok_or(WorkloadError::Algorithm)?;
    let claims: Claims =
        serde_json::from_slice(&parts.payload).map_err(|_| WorkloadError::Claims)?;
    if !issuers.contains(&claims.iss) {
        return Err(WorkloadError::Issuer);
    }
    if claims.sub.is_empty() || claims.sub.len() > 1024 || claims.sub.contains(char::is_control) {
        return Err(WorkloadError::Claims);
    }
    if !claims.aud.includes(audience) {
        return Err(WorkloadError::Audience);
    }
    if now > claims.exp.saturating_add(LEEWAY) {
        return Err(WorkloadError::Expired);
    }
    let not_before = claims.nbf.into_iter().chain(claims.iat).max();
    if not_before.is_some_and(|t| t > now + LEEWAY) {
        return Err(WorkloadError::NotYetValid);
    }
    Ok(Unverified {
        issuer: claims.iss,
        subject: claims.sub,
        kid: header.kid.filter(|k| !k.is_empty()),
        algorithm,
        signing_input: parts.signing_input,
        signature: parts.signature,
    })
}

impl Unverified<'_> {
    /// Verifies the signature with the key of `keys` the token's `kid` names
    /// (or, without a `kid`, any key of the token's algorithm).
    pub fn verify(&self, keys: &KeySet) -> Result<(), WorkloadError> {
        let mut candidates = keys
            .candidates(self.kid.as_deref(), self.algorithm)
            .peekable();
        if candidates.peek().is_none() {
            return Err(WorkloadError::UnknownKey);
        }
        let message = self.signing_input.as_bytes();
        if candidates.any(|key| key.verify_sig(message, &self.signature).is_ok()) {
            Ok(())
        } else {
            Err(WorkloadError::Signature)
        }
    }
}

/// One verification key of an issuer, parsed once.
#[derive(Debug)]
struct Key {
    kid: Option<String>,
    algorithm: Algorithm,
    parsed: ParsedPublicKey,
}

/// An issuer's signing keys (its `jwks_uri` document), the usable ones.
#[derive(Debug, Default)]
pub struct KeySet {
    keys: Vec<Key>,
}

#[derive(Deserialize)]
struct RawSet {
    keys: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawKey {
    kty: String,
    kid: Option<String>,
    #[serde(rename = "use")]
    usage: Option<String>,
    alg: Option<String>,
    n: Option<String>,
    e: Option<String>,
    crv: Option<String>,
    x: Option<String>,
    y: Option<String>,
}

impl KeySet {
    /// Parses a JWK Set. Keys scafo cannot use (other types, curves or
    /// algorithms, encryption keys) are skipped; a document that is not a
    /// key set at all is an error naming what is wrong.
    pub fn parse(bytes: &[u8]) -> Result<KeySet, String> {
        let raw: RawSet = serde_json::from_slice(bytes)
            .map_err(|e| format!("the key set is not a JWK Set: {e}"))?;
        if raw.keys.len() > MAX_KEYS {
            return Err(format!(
                "the key set holds {} keys, more than {MAX_KEYS}",
                raw.keys.len()
            ));
        }
        let keys = raw
            .keys
            .into_iter()
            .filter_map(|value| serde_json::from_value::<RawKey>(value).ok())
            .filter_map(Key::from_raw)
            .collect();
        Ok(KeySet { keys })
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether a token with this `kid` and algorithm has a key to try.
    pub fn has(&self, kid: Option<&str>, algorithm: Algorithm) -> bool {
        self.candidates(kid, algorithm).next().is_some()
    }

    fn candidates<'s>(
        &'s self,
        kid: Option<&'s str>,
        algorithm: Algorithm,
    ) -> impl Iterator<Item = &'s ParsedPublicKey> + 's {
        self.keys
            .iter()
            .filter(move |key| key.algorithm == algorithm)
            .filter(move |key| kid.is_none() || key.kid.as_deref() == kid)
            .map(|key| &key.parsed)
    }
}

impl Key {
    fn from_raw(raw: RawKey) -> Option<Key> {
        if raw.usage.as_deref().is_some_and(|u| u != "sig") {
            return None;
        }
        let b64 = |field: Option<String>| -> Option<Vec<u8>> {
            URL_SAFE_NO_PAD.decode(field?.trim_end_matches('=')).ok()
        };
        let (algorithm, parsed) = match raw.kty.as_str() {
            "RSA" if raw.alg.as_deref().is_none_or(|a| a == "RS256") => {
                let n = b64(raw.n)?;
                let e = b64(raw.e)?;
                // 2048 to 8192 bits, as the verification will demand.
                if !(256..=1024).contains(&strip_zeros(&n).len()) {
                    return None;
                }
                let components = RsaPublicKeyComponents {
                    n: strip_zeros(&n),
                    e: strip_zeros(&e),
                };
                let parsed = components
                    .to_parsed_public_key(&RSA_PKCS1_2048_8192_SHA256)
                    .ok()?;
                (Algorithm::Rs256, parsed)
            }
            "EC" if raw.crv.as_deref() == Some("P-256")
                && raw.alg.as_deref().is_none_or(|a| a == "ES256") =>
            {
                let (x, y) = (b64(raw.x)?, b64(raw.y)?);
                if x.len() != 32 || y.len() != 32 {
                    return None;
                }
                let mut point = Vec::with_capacity(65);
                point.push(0x04);
                point.extend_from_slice(&x);
                point.extend_from_slice(&y);
                let parsed = UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
                    .parse()
                    .ok()?;
                (Algorithm::Es256, parsed)
            }
            _ => return None,
        };
        Some(Key {
            kid: raw.kid,
            algorithm,
            parsed,
        })
    }
}

/// A big-endian integer without its leading zero bytes.
fn strip_zeros(bytes: &[u8]) -> &[u8] {
    let first = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
    &bytes[first..]
}

/// An issuer or key-set URL a node may fetch: `https://`, or `http://` on a
/// loopback host when `oidc.allowHttp` is set (test issuers only).
pub fn check_url(url: &str, allow_http: bool) -> Result<(), &'static str> {
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return Err("must be an https:// URL");
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty()
        || authority.contains('@')
        || rest.contains(['?', '#'])
        || rest.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err("must be an https:// URL with a host and no query or fragment");
    }
    if url.starts_with("http://") {
        if !allow_http {
            return Err("must be https:// (oidc.allowHttp admits http:// on loopback, for tests)");
        }
        let host = authority
            .rsplit_once(':')
            .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
            .map_or(authority, |(host, _)| host);
        if !matches!(host, "127.0.0.1" | "[::1]" | "localhost") {
            return Err("may be http:// only on a loopback host (127.0.0.1, [::1], localhost)");
        }
    }
    Ok(())
}

/// Whether `url` has the issuer's scheme, host and port.
pub fn same_origin(issuer: &str, url: &str) -> bool {
    fn origin(url: &str) -> Option<(&str, &str)> {
        let (scheme, rest) = url.split_once("://")?;
        let authority = rest.split('/').next()?;
        Some((scheme, authority))
    }
    match (origin(issuer), origin(url)) {
        (Some((a, b)), Some((c, d))) => a.eq_ignore_ascii_case(c) && b.eq_ignore_ascii_case(d),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
    use serde_json::json;

    type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

    const ISSUER: &str = "https://issuer.example";

    fn issuers() -> Vec<String> {
        vec![ISSUER.to_owned()]
    }

    fn token(
        header: serde_json::Value,
        claims: serde_json::Value,
        sign: impl Fn(&[u8]) -> Vec<u8>,
    ) -> String {
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature))
    }

    fn claims(now: u64) -> serde_json::Value {
        json!({"iss": ISSUER, "sub": "repo:acme/web:ref:refs/heads/main", "aud": "scafo",
               "iat": now, "exp": now + 300})
    }

    fn ec_key() -> Result<(EcdsaKeyPair, serde_json::Value)> {
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)?;
        let point = pair.public_key().as_ref().to_vec();
        let jwk = json!({"kty": "EC", "crv": "P-256", "kid": "ec1", "use": "sig",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..])});
        Ok((pair, jwk))
    }

    #[test]
    fn es256_tokens_verify_against_their_key_only() -> Result<()> {
        let (pair, jwk) = ec_key()?;
        let (_, other) = ec_key()?;
        let keys = KeySet::parse(json!({"keys": [jwk]}).to_string().as_bytes())?;
        let now = 1_800_000_000;
        let sign = |m: &[u8]| {
            pair.sign(&SystemRandom::new(), m)
                .map(|s| s.as_ref().to_vec())
                .unwrap_or_default()
        };
        let good = token(json!({"alg": "ES256", "kid": "ec1"}), claims(now), sign);
        let parsed = parse(&good, &issuers(), "scafo", now)?;
        assert_eq!(parsed.subject, "repo:acme/web:ref:refs/heads/main");
        assert_eq!(parsed.verify(&keys), Ok(()));
        let wrong = KeySet::parse(json!({"keys": [other]}).to_string().as_bytes())?;
        assert_eq!(parsed.verify(&wrong), Err(WorkloadError::Signature));
        // Keys scafo cannot use are skipped: a symmetric key (the "JWKS as
        // HMAC secret" confusion has nothing to work with), an encryption key,
        // another curve, a tiny RSA modulus.
        let mut enc = jwk.clone();
        enc["use"] = json!("enc");
        let mut p384 = jwk.clone();
        p384["crv"] = json!("P-384");
        let unusable = json!({"keys": [
            {"kty": "oct", "kid": "ec1", "k": "c2VjcmV0"}, enc, p384,
            {"kty": "RSA", "kid": "ec1", "n": "AQAB", "e": "AQAB"},
        ]});
        let unusable = KeySet::parse(unusable.to_string().as_bytes())?;
        assert!(unusable.is_empty());
        assert!(KeySet::parse(b"{\"keys\": 3}").is_err());
        let unknown = token(json!({"alg": "ES256", "kid": "ec9"}), claims(now), sign);
        let parsed = parse(&unknown, &issuers(), "scafo", now)?;
        assert_eq!(parsed.verify(&keys), Err(WorkloadError::UnknownKey));
        Ok(())
    }

    #[test]
    fn claims_are_checked_before_any_key() -> Result<()> {
        let now = 1_800_000_000;
        let no_sig = |_: &[u8]| vec![1u8; 64];
        let header = json!({"alg": "ES256", "kid": "ec1"});
        let with = |f: &dyn Fn(&mut serde_json::Value)| {
            let mut c = claims(now);
            f(&mut c);
            token(header.clone(), c, no_sig)
        };
        let check = |t: &str| parse(t, &issuers(), "scafo", now).err();
        assert_eq!(
            check(&with(&|c| c["iss"] = json!("https://elsewhere.example"))),
            Some(WorkloadError::Issuer)
        );
        assert_eq!(
            check(&with(&|c| c["aud"] = json!("other"))),
            Some(WorkloadError::Audience)
        );
        assert_eq!(
            check(&with(&|c| c["aud"] = json!(["other", "scafo"]))),
            None
        );
        assert_eq!(
            check(&with(&|c| c["exp"] = json!(now - LEEWAY - 1))),
            Some(WorkloadError::Expired)
        );
        assert_eq!(check(&with(&|c| c["exp"] = json!(now - LEEWAY))), None);
        assert_eq!(
            check(&with(&|c| c["nbf"] = json!(now + LEEWAY + 1))),
            Some(WorkloadError::NotYetValid)
        );
        assert_eq!(
            check(&with(&|c| c["sub"] = json!(""))),
            Some(WorkloadError::Claims)
        );
        assert_eq!(
            check(&with(&|c| {
                c.as_object_mut().map(|o| o.remove("exp"));
            })),
            Some(WorkloadError::Claims)
        );
        for alg in ["none", "HS256", "EdDSA", "RS384", "PS256"] {
            let t = token(json!({"alg": alg}), claims(now), no_sig);
            assert_eq!(check(&t), Some(WorkloadError::Algorithm), "{alg}");
        }
        assert_eq!(
            check(&format!("{}.", with(&|_| {}))),
            Some(WorkloadError::Malformed)
        );
        assert_eq!(
            check(&"a".repeat(MAX_TOKEN_BYTES + 1)),
            Some(WorkloadError::Malformed)
        );
        Ok(())
    }

    #[test]
    fn issuer_urls_are_https_or_loopback_http_when_allowed() {
        assert_eq!(
            check_url("https://token.actions.githubusercontent.com", false),
            Ok(())
        );
        assert_eq!(
            check_url("https://gitlab.example.com/gitlab", false),
            Ok(())
        );
        assert!(check_url("http://127.0.0.1:8080", false).is_err());
        assert_eq!(check_url("http://127.0.0.1:8080", true), Ok(()));
        assert_eq!(check_url("http://localhost:9/issuer", true), Ok(()));
        assert_eq!(check_url("http://[::1]:9", true), Ok(()));
        assert!(check_url("http://10.0.0.5:8080", true).is_err());
        assert!(check_url("http://127.0.0.1.evil.example", true).is_err());
        assert!(check_url("https://user@host", false).is_err());
        assert!(check_url("https://host/?q", false).is_err());
        assert!(check_url("ftp://host", true).is_err());
        assert!(check_url("https://", true).is_err());
    }

    #[test]
    fn key_sets_come_from_the_issuers_origin() {
        let github = "https://token.actions.githubusercontent.com";
        assert!(same_origin(
            github,
            "https://token.actions.githubusercontent.com/.well-known/jwks"
        ));
        assert!(same_origin(
            "https://gitlab.com",
            "https://gitlab.com/oauth/discovery/keys"
        ));
        assert!(same_origin(
            "http://127.0.0.1:9/tenant",
            "http://127.0.0.1:9/jwks"
        ));
        assert!(!same_origin(
            github,
            "https://token.actions.githubusercontent.com.evil.example/jwks"
        ));
        assert!(!same_origin(
            github,
            "http://token.actions.githubusercontent.com/jwks"
        ));
        assert!(!same_origin(
            "http://127.0.0.1:9",
            "http://127.0.0.1:10/jwks"
        ));
        assert!(!same_origin(
            github,
            "https://evil.example/token.actions.githubusercontent.com"
        ));
    }
}
