//! The workerd configuration Celld generates (Cap'n Proto text): an entry
//! worker on the socket that answers `/.well-known/celld/health` itself and
//! hands everything else to the application through a service binding.

use std::fmt::Write;

use serde_json::Value;

/// The entry worker's source.
pub const ENTRY_JS: &str = r#"export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/.well-known/celld/health") {
      return Response.json({ ok: true, application: env.APPLICATION, deploy: env.DEPLOY });
    }
    return env.APP.fetch(request);
  },
};
"#;

pub const ENTRY_FILE: &str = "celld-entry.js";

/// One ES module of the application: its name and the file to embed.
#[derive(Debug, Clone)]
pub struct Module {
    pub name: String,
    pub file: String,
}

#[derive(Debug)]
pub struct Config<'a> {
    pub address: String,
    pub application: &'a str,
    pub deploy: &'a str,
    /// The main module first.
    pub modules: Vec<Module>,
    pub compatibility_date: &'a str,
    pub compatibility_flags: &'a [String],
    pub vars: &'a serde_json::Map<String, Value>,
}

/// A Cap'n Proto text literal (JSON escaping is a subset it reads).
fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

pub fn render(config: &Config<'_>) -> String {
    let mut out = String::new();
    let modules: Vec<String> = config
        .modules
        .iter()
        .map(|m| {
            format!(
                "(name = {}, esModule = embed {})",
                quote(&m.name),
                quote(&m.file)
            )
        })
        .collect();
    let mut bindings: Vec<String> = Vec::new();
    for (name, value) in config.vars {
        bindings.push(match value {
            Value::String(text) => format!("(name = {}, text = {})", quote(name), quote(text)),
            other => format!(
                "(name = {}, json = {})",
                quote(name),
                quote(&other.to_string())
            ),
        });
    }
    let flags: Vec<String> = config
        .compatibility_flags
        .iter()
        .map(|f| quote(f))
        .collect();
    let _ = write!(
        out,
        r#"using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "celld-entry", worker = .entry),
    (name = "app", worker = .app),
  ],
  sockets = [
    (name = "http", address = {address}, http = (), service = "celld-entry"),
  ],
);

const entry :Workerd.Worker = (
  modules = [(name = {entry}, esModule = embed {entry})],
  compatibilityDate = "2024-01-01",
  bindings = [
    (name = "APP", service = "app"),
    (name = "APPLICATION", text = {application}),
    (name = "DEPLOY", text = {deploy}),
  ],
);

const app :Workerd.Worker = (
  modules = [{modules}],
  compatibilityDate = {date},
  compatibilityFlags = [{flags}],
  bindings = [{bindings}],
);
"#,
        address = quote(&config.address),
        entry = quote(ENTRY_FILE),
        application = quote(config.application),
        deploy = quote(config.deploy),
        modules = modules.join(", "),
        date = quote(config.compatibility_date),
        flags = flags.join(", "),
        bindings = bindings.join(", "),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vars_become_text_and_json_bindings() {
        let mut vars = serde_json::Map::new();
        vars.insert("GREETING".into(), Value::String("hi \"there\"".into()));
        vars.insert("LIMITS".into(), serde_json::json!({"n": 1}));
        let text = render(&Config {
            address: "127.0.0.1:17001".into(),
            application: "shop",
            deploy: "shop.0f3a9c1d2b4e5a67",
            modules: vec![Module {
                name: "worker.js".into(),
                file: "bundle/worker.js".into(),
            }],
            compatibility_date: "2025-06-01",
            compatibility_flags: &["nodejs_compat".into()],
            vars: &vars,
        });
        assert!(
            text.contains(r#"(name = "GREETING", text = "hi \"there\"")"#),
            "{text}"
        );
        assert!(
            text.contains(r#"(name = "LIMITS", json = "{\"n\":1}")"#),
            "{text}"
        );
        assert!(text.contains(r#"address = "127.0.0.1:17001""#));
        assert!(text.contains(r#"compatibilityFlags = ["nodejs_compat"]"#));
    }
}
