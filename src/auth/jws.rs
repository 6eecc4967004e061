//! Compact JWS (`header.payload.signature`, base64url without padding),
//! split and decoded: the one parser under operator, node and workload
//! tokens. What the parts mean is the callers' business.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// A compact JWS's three parts, decoded, and the input its signature covers.
#[derive(Debug)]
pub struct Compact<'a> {
    pub header: Vec<u8>,
    pub payload: Vec<u8>,
    pub signature: Vec<u8>,
    pub signing_input: &'a str,
}

/// Splits and decodes `token`; `None` for anything that is not exactly
/// three base64url parts within `max_bytes`, or has an empty signature.
pub fn split(token: &str, max_bytes: usize) -> Option<Compact<'_>> {
    if token.len() > max_bytes {
        return None;
    }
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).ok();
    let signature = decode(signature).filter(|s| !s.is_empty())?;
    Some(Compact {
        header: decode(header)?,
        payload: decode(payload)?,
        signature,
        signing_input: &token[..token.rfind('.')?],
    })
}

/// The header of a compact JWS read as `T`, without checking anything else.
pub fn peek_header<T: DeserializeOwned>(token: &str) -> Option<T> {
    let header = token.split('.').next()?;
    let bytes = URL_SAFE_NO_PAD.decode(header).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The `aud` claim: one audience or several.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Audience {
    One(String),
    Many(Vec<String>),
}

impl Audience {
    pub fn includes(&self, audience: &str) -> bool {
        match self {
            Audience::One(aud) => aud == audience,
            Audience::Many(auds) => auds.iter().any(|a| a == audience),
        }
    }
}
