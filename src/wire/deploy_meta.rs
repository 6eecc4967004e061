//! The `X-Scafo-Deploy` header: deploy metadata as base64url (no padding)
//! of compact JSON with sorted keys (DESIGN §8). The client encodes it here
//! and the node decodes it here, strictly: the header must re-encode to
//! exactly the bytes given.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};

use crate::registry::Replicas;

pub const HEADER: &str = "x-scafo-deploy";

/// The longest `message`, in characters.
pub const MAX_MESSAGE: usize = 1024;

/// What the node reads from the header; everything else is ignored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeployMeta {
    /// Recorded verbatim on the deploy.
    pub source: Option<Value>,
    pub message: Option<String>,
    /// Placement intent: `Some(None)` clears the selector.
    pub selector: Option<Option<BTreeMap<String, String>>>,
    pub replicas: Option<Replicas>,
}

/// Encodes a metadata object for the header.
pub fn encode(object: &Map<String, Value>) -> String {
    // serde_json's map is ordered by key, and to_string is compact.
    URL_SAFE_NO_PAD.encode(Value::Object(object.clone()).to_string())
}

/// Decodes and checks the header; the error says what is wrong.
pub fn decode(header: &str) -> Result<DeployMeta, String> {
    if header.is_empty()
        || !header
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(format!(
            "{HEADER} must match ^[A-Za-z0-9_-]+$ (base64url without padding)"
        ));
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(header)
        .map_err(|_| format!("{HEADER} is not valid base64url"))?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{HEADER} does not decode to UTF-8"))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|_| format!("{HEADER} does not decode to JSON"))?;
    let Value::Object(object) = &value else {
        return Err(format!("{HEADER} must carry a JSON object"));
    };
    if serde_json::to_string(&value).ok().as_deref() != Some(text.as_str()) {
        return Err(format!(
            "{HEADER} must be compact JSON with its keys sorted"
        ));
    }
    for refused in ["script", "bundle", "version"] {
        if object.contains_key(refused) {
            return Err(format!(
                "{refused} is not deploy metadata: the artifact's wrangler config decides it (edit it, or use scafo deploy --var / --no-bundle)"
            ));
        }
    }
    let mut meta = DeployMeta::default();
    match object.get("source") {
        None => {}
        Some(source @ Value::Object(_)) => meta.source = Some(source.clone()),
        Some(_) => return Err("source must be a JSON object".into()),
    }
    match object.get("message") {
        None | Some(Value::Null) => {}
        Some(Value::String(message)) if message.chars().count() <= MAX_MESSAGE => {
            meta.message = Some(message.clone())
        }
        Some(_) => {
            return Err(format!(
                "message must be a string of at most {MAX_MESSAGE} characters"
            ));
        }
    }
    if let Some(selector) = object.get("selector") {
        meta.selector = Some(crate::names::parse_selector(selector)?);
    }
    if let Some(replicas) = object.get("replicas") {
        meta.replicas = Some(Replicas::from_json(replicas).ok_or(crate::registry::REPLICAS_RULE)?);
    }
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn header(value: Value) -> String {
        URL_SAFE_NO_PAD.encode(value.to_string())
    }

    #[test]
    fn round_trips_and_reads_the_fields() {
        let object = json!({"source": {"commit": "abc", "dirty": false}, "message": "hi", "replicas": 2, "selector": {"region": "eu"}, "extra": [1]});
        let Value::Object(map) = object else {
            unreachable!()
        };
        let meta = decode(&encode(&map));
        assert_eq!(
            meta,
            Ok(DeployMeta {
                source: Some(json!({"commit": "abc", "dirty": false})),
                message: Some("hi".into()),
                selector: Some(Some([("region".to_owned(), "eu".to_owned())].into())),
                replicas: Some(Replicas::Count(2)),
            })
        );
        assert_eq!(decode(&header(json!({}))), Ok(DeployMeta::default()));
    }

    #[test]
    fn refuses_every_defect() {
        let unsorted = URL_SAFE_NO_PAD.encode(r#"{"message":"x","source":{}}"#.replace(
            "\"message\":\"x\",\"source\":{}",
            "\"source\":{},\"message\":\"x\"",
        ));
        let spaced = URL_SAFE_NO_PAD.encode(r#"{ "message": "x" }"#);
        let padded = format!("{}=", header(json!({"a": 1})));
        let latin1 = URL_SAFE_NO_PAD.encode([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]);
        for bad in [
            String::new(),
            "has space".into(),
            padded,
            "!!!!".into(),
            latin1,
            URL_SAFE_NO_PAD.encode("not json"),
            header(json!([1, 2])),
            header(json!("text")),
            unsorted,
            spaced,
            header(json!({"script": "x"})),
            header(json!({"bundle": true})),
            header(json!({"version": "1"})),
            header(json!({"source": "main"})),
            header(json!({"message": 5})),
            header(json!({"message": "x".repeat(1025)})),
            header(json!({"selector": ["eu"]})),
            header(json!({"selector": {"region": 1}})),
            header(json!({"replicas": 0})),
            header(json!({"replicas": "2"})),
            header(json!({"replicas": 1.5})),
            header(json!({"replicas": null})),
        ] {
            assert!(decode(&bad).is_err(), "{bad}");
        }
    }
}
