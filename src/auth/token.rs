//! Operator and node tokens: compact JWS, EdDSA (Ed25519) only (DESIGN §7).
//!
//! Header `{"alg":"EdDSA","typ":"JWT","kid":…}`, claims `{"aud":"scafo",
//! "iat","exp","jti"}`; a lifetime of at most 300 s and 60 s of leeway for
//! clock skew. Signing happens on the client; the node parses here, finds
//! the key the `kid` names in the registry, and verifies. Every way a token
//! can fail is a [`TokenError`], for the node's debug log only: the caller
//! always sees the same `auth-invalid`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signature, Signer, SigningKey};
use serde::Deserialize;
use serde_json::json;

use super::{PublicJwk, jws};

/// The audience every operator and node token carries.
pub const AUDIENCE: &str = "scafo";
/// The longest lifetime (`exp - iat`) a verifier accepts, in seconds.
pub const MAX_LIFETIME: u64 = 300;
/// Clock skew tolerated on `iat` and `exp`, in seconds.
pub const LEEWAY: u64 = 60;
/// The lifetime the scafo client gives its tokens, in seconds.
pub const CLIENT_LIFETIME: u64 = 120;
/// Tokens longer than this are refused before any parsing.
pub const MAX_TOKEN_BYTES: usize = 4096;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("not a compact JWS")]
    Malformed,
    #[error("algorithm is not EdDSA")]
    Algorithm,
    #[error("claims missing or malformed")]
    Claims,
    #[error("wrong audience")]
    Audience,
    #[error("expired")]
    Expired,
    #[error("issued in the future")]
    NotYetValid,
    #[error("lifetime over {MAX_LIFETIME} s")]
    Lifetime,
    #[error("no registered key for this kid")]
    UnknownKey,
    #[error("signature does not verify")]
    Signature,
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Signs a fresh token for `kid`, valid from `now` for [`CLIENT_LIFETIME`].
pub fn sign(key: &SigningKey, kid: &str, now: u64) -> String {
    let mut jti = [0u8; 12];
    let _ = getrandom::fill(&mut jti);
    let header = json!({"alg": "EdDSA", "typ": "JWT", "kid": kid});
    let claims = json!({
        "aud": AUDIENCE,
        "iat": now,
        "exp": now + CLIENT_LIFETIME,
        "jti": URL_SAFE_NO_PAD.encode(jti),
    });
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key.sign(input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

#[derive(Deserialize)]
struct Header {
    alg: String,
    kid: String,
}

#[derive(Deserialize)]
struct Claims {
    aud: jws::Audience,
    iat: u64,
    exp: u64,
    jti: String,
}

/// A token whose form and claims hold up, awaiting the key its `kid` names.
#[derive(Debug)]
pub struct Unverified<'a> {
    pub kid: String,
    signing_input: &'a str,
    signature: Signature,
}

/// The `kid` a token's header names, when the header can be read at all
/// (for clients reporting which key a raw token belongs to).
pub fn peek_kid(token: &str) -> Option<String> {
    jws::peek_header::<Header>(token).map(|h| h.kid)
}

/// Checks everything that needs no key: shape, algorithm, audience and time.
pub fn parse(token: &str, now: u64) -> Result<Unverified<'_>, TokenError> {
    let parts = jws::split(token, MAX_TOKEN_BYTES).ok_or(TokenError::Malformed)?;
    let header: Header =
        serde_json::from_slice(&parts.header).map_err(|_| TokenError::Malformed)?;
    if header.alg != "EdDSA" {
        return Err(TokenError::Algorithm);
    }
    if header.kid.is_empty() {
        return Err(TokenError::Malformed);
    }
    let claims: Claims = serde_json::from_slice(&parts.payload).map_err(|_| TokenError::Claims)?;
    if !claims.aud.includes(AUDIENCE) {
        return Err(TokenError::Audience);
    }
    if claims.jti.is_empty() || claims.jti.len() > 256 {
        return Err(TokenError::Claims);
    }
    if claims.exp <= claims.iat {
        return Err(TokenError::Claims);
    }
    if claims.exp - claims.iat > MAX_LIFETIME {
        return Err(TokenError::Lifetime);
    }
    if claims.iat > now + LEEWAY {
        return Err(TokenError::NotYetValid);
    }
    if now > claims.exp + LEEWAY {
        return Err(TokenError::Expired);
    }
    let signature: [u8; 64] = parts
        .signature
        .try_into()
        .map_err(|_| TokenError::Malformed)?;
    Ok(Unverified {
        kid: header.kid,
        signing_input: parts.signing_input,
        signature: Signature::from_bytes(&signature),
    })
}

impl Unverified<'_> {
    /// Verifies the signature against the registered public key.
    pub fn verify(&self, key: &PublicJwk) -> Result<(), TokenError> {
        let verifying = key.decode().ok_or(TokenError::UnknownKey)?;
        verifying
            .verify_strict(self.signing_input.as_bytes(), &self.signature)
            .map_err(|_| TokenError::Signature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::SecretKey;

    #[test]
    fn signed_tokens_verify_with_their_key_only() -> Result<(), Box<dyn std::error::Error>> {
        let key = SecretKey::generate(None)?;
        let other = SecretKey::generate(None)?;
        let now = now();
        let token = sign(key.signing_key(), "op-a", now);
        let parsed = parse(&token, now).map_err(|e| e.to_string())?;
        assert_eq!(parsed.kid, "op-a");
        assert_eq!(parsed.verify(&key.public()), Ok(()));
        assert_eq!(parsed.verify(&other.public()), Err(TokenError::Signature));
        assert_eq!(peek_kid(&token).as_deref(), Some("op-a"));
        Ok(())
    }

    #[test]
    fn time_is_checked_with_leeway() -> Result<(), Box<dyn std::error::Error>> {
        let key = SecretKey::generate(None)?;
        let t = 1_000_000;
        let token = sign(key.signing_key(), "op-a", t);
        assert!(parse(&token, t + CLIENT_LIFETIME + LEEWAY).is_ok());
        assert_eq!(
            parse(&token, t + CLIENT_LIFETIME + LEEWAY + 1).err(),
            Some(TokenError::Expired)
        );
        assert!(parse(&token, t - LEEWAY).is_ok());
        assert_eq!(
            parse(&token, t - LEEWAY - 1).err(),
            Some(TokenError::NotYetValid)
        );
        Ok(())
    }
}
