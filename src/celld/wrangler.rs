//! Reading an application's wrangler config (JSONC) into what Celld needs:
//! the main module, compatibility settings, `vars`, and whether to bundle.
//! Bindings this runtime does not provide refuse the deploy by name.

use std::path::Path;

use serde_json::{Map, Value};

use super::Failure;

/// Binding kinds workerd could host but Celld does not provide (wrangler's
/// config keys; `scafo deploy --env` also knows them as not inherited).
pub const UNSUPPORTED: &[&str] = &[
    "kv_namespaces",
    "r2_buckets",
    "d1_databases",
    "durable_objects",
    "queues",
    "services",
    "analytics_engine_datasets",
    "vectorize",
    "hyperdrive",
    "ai",
    "browser",
    "mtls_certificates",
    "send_email",
    "dispatch_namespaces",
    "workflows",
    "images",
    "secrets_store_secrets",
];

/// Used when the config names no compatibility date.
pub const DEFAULT_COMPATIBILITY_DATE: &str = "2025-01-01";

#[derive(Debug, Clone, PartialEq)]
pub struct WorkerSpec {
    /// The main module, relative to the project root.
    pub main: String,
    pub compatibility_date: String,
    pub compatibility_flags: Vec<String>,
    pub vars: Map<String, Value>,
    pub no_bundle: bool,
}

fn config_error(detail: impl Into<String>) -> Failure {
    Failure::new("celld-config", detail)
}

/// Reads `<root>/<config>` (JSONC).
pub fn read(root: &Path, config: &str) -> Result<WorkerSpec, Failure> {
    let text = std::fs::read_to_string(root.join(config))
        .map_err(|e| config_error(format!("{config}: {e}")))?;
    let value: Value = jsonc_parser::parse_to_serde_value(&text, &Default::default())
        .map_err(|e| config_error(format!("{config}: {e}")))?;
    let Value::Object(object) = value else {
        return Err(config_error(format!("{config} must hold a JSON object")));
    };
    let unsupported: Vec<&str> = UNSUPPORTED
        .iter()
        .copied()
        .filter(|key| {
            object.get(*key).is_some_and(|v| {
                !v.is_null() && v != &Value::Array(vec![]) && v != &Value::Object(Map::new())
            })
        })
        .collect();
    if !unsupported.is_empty() {
        return Err(config_error(format!(
            "{config} declares bindings this runtime does not provide: {}",
            unsupported.join(", ")
        )));
    }
    let main = match object.get("main") {
        Some(Value::String(main)) if !main.is_empty() => main.trim_start_matches("./").to_owned(),
        _ => {
            return Err(config_error(format!(
                "{config} needs \"main\": the worker's entry module"
            )));
        }
    };
    if Path::new(&main)
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(config_error(format!(
            "main {main:?} must be a path inside the project"
        )));
    }
    let compatibility_date = match object.get("compatibility_date") {
        None => DEFAULT_COMPATIBILITY_DATE.to_owned(),
        Some(Value::String(date)) if is_date(date) => date.clone(),
        Some(_) => return Err(config_error("compatibility_date must be YYYY-MM-DD")),
    };
    let compatibility_flags = match object.get("compatibility_flags") {
        None => Vec::new(),
        Some(Value::Array(flags)) => flags
            .iter()
            .map(|f| {
                f.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| config_error("compatibility_flags must be strings"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(config_error(
                "compatibility_flags must be a list of strings",
            ));
        }
    };
    let vars = match object.get("vars") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(vars)) => vars.clone(),
        Some(_) => return Err(config_error("vars must be an object")),
    };
    let no_bundle = match object.get("no_bundle") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(config_error("no_bundle must be true or false")),
    };
    Ok(WorkerSpec {
        main,
        compatibility_date,
        compatibility_flags,
        vars,
        no_bundle,
    })
}

fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Result<WorkerSpec, Failure> {
        let dir =
            std::env::temp_dir().join(format!("scafo-wrangler-{}", crate::registry::new_nonce()));
        std::fs::create_dir_all(&dir).map_err(|e| Failure::new("io", e.to_string()))?;
        std::fs::write(dir.join("wrangler.jsonc"), text)
            .map_err(|e| Failure::new("io", e.to_string()))?;
        let out = read(&dir, "wrangler.jsonc");
        let _ = std::fs::remove_dir_all(&dir);
        out
    }

    #[test]
    fn reads_jsonc_with_comments_and_trailing_commas() {
        let parsed = spec(
            "{\n // the shop\n \"name\": \"shop\", \"main\": \"./src/index.js\",\n \"compatibility_date\": \"2025-06-01\",\n \"vars\": {\"A\": \"x\", \"B\": {\"n\": 1}},\n}",
        );
        let parsed = parsed.map_err(|f| f.detail);
        assert_eq!(parsed.as_ref().map(|s| s.main.as_str()), Ok("src/index.js"));
        assert_eq!(parsed.as_ref().map(|s| s.vars.len()), Ok(2));
        assert_eq!(parsed.map(|s| s.no_bundle), Ok(false));
    }

    #[test]
    fn names_unsupported_bindings_and_needs_main() {
        let refused =
            spec(r#"{"main": "a.js", "kv_namespaces": [{"binding": "K"}], "r2_buckets": [{}]}"#);
        let detail = refused
            .err()
            .map(|f| (f.code, f.detail))
            .unwrap_or_default();
        assert_eq!(detail.0, "celld-config");
        assert!(
            detail.1.ends_with("kv_namespaces, r2_buckets"),
            "{}",
            detail.1
        );
        assert!(spec(r#"{"name": "x"}"#).is_err());
        assert!(spec(r#"{"main": "../x.js"}"#).is_err());
        assert!(spec(r#"{"main": "a.js", "compatibility_date": "soon"}"#).is_err());
    }
}
