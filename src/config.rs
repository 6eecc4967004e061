//! Node configuration (DESIGN §4): defaults < config file (TOML) < `SCAFO_*`
//! environment < flags, merged and validated once. A value that breaks its
//! rule refuses the start with a message naming the key, where the value came
//! from and the rule; an unknown config-file key is an error too.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::cli::SailArgs;
use crate::names::{self, NodeId};
use crate::store::{BucketUrl, S3Settings};

/// The default config file, read only when it exists.
pub const DEFAULT_CONFIG_FILE: &str = "/etc/scafo/scafo.toml";

/// Every key a config file may hold, with the flag that overrides it.
/// The environment name is `SCAFO_` + the key upper-cased, `.` → `_`.
const KEYS: &[(&str, Option<&str>)] = &[
    ("node.id", Some("--node-id")),
    ("node.labels", Some("--label")),
    ("node.advertise", Some("--advertise")),
    ("api.listen", Some("--listen")),
    ("api.jsonBytes", None),
    ("state.dir", Some("--state-dir")),
    ("registry.bucket", Some("--bucket")),
    ("registry.s3.endpoint", None),
    ("registry.s3.region", None),
    ("registry.s3.forcePathStyle", None),
    ("ingress.token", Some("--ingress-token")),
    ("log.format", Some("--log-format")),
    ("bootstrap.admin", Some("--bootstrap-admin")),
    ("platform.domains", Some("--platform-domain")),
    ("deploy.artifactBytes", None),
    ("celld.workerd", None),
    ("celld.esbuild", None),
    ("celld.ports", None),
    ("reconcile.intervalMs", None),
    ("coordinator.leaseSeconds", None),
    ("api.hosts", Some("--api-host")),
    ("storage.objectBytes", None),
    ("storage.lockSeconds", None),
    ("ingress.traefik.entryPoints", None),
    ("ingress.traefik.certResolver", None),
    ("retire.graceSeconds", None),
    ("oidc.issuers", None),
    ("oidc.audience", None),
    ("oidc.allowHttp", None),
    ("oidc.keysSeconds", None),
];

/// The issuers whose workload tokens a node verifies when none are configured.
pub const DEFAULT_OIDC_ISSUERS: &[&str] = &[
    "https://token.actions.githubusercontent.com",
    "https://gitlab.com",
];

/// How the node writes its logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// The validated configuration of one node.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    pub node_id: NodeId,
    pub labels: BTreeMap<String, String>,
    /// `None`: advertise `http://<bound address>`.
    pub advertise: Option<String>,
    pub listen: SocketAddr,
    pub json_bytes: usize,
    pub state_dir: PathBuf,
    pub bucket: BucketUrl,
    pub s3: S3Settings,
    /// Empty: keep (or mint) the token in `<state>/ingress-token`.
    pub ingress_tokens: Vec<String>,
    pub log_format: LogFormat,
    /// A public JWK or key file registered as the first admin.
    pub bootstrap_admin: Option<PathBuf>,
    /// Applications answer at `<name>.<domain>` for each.
    pub platform_domains: Vec<String>,
    /// Bound on an artifact, compressed and expanded alike.
    pub artifact_bytes: u64,
    /// Runtime binaries; `None`: searched on PATH and beside the install.
    pub workerd: Option<PathBuf>,
    pub esbuild: Option<PathBuf>,
    /// Ports for application processes, inclusive.
    pub ports: (u16, u16),
    /// The reconcile period.
    pub reconcile_interval: std::time::Duration,
    /// The coordinator lease's time to live; renewed every third of it.
    pub lease: std::time::Duration,
    /// How long a retired application may be unretired before it is deleted.
    pub retire_grace: std::time::Duration,
    /// The fleet's API host names, published in the routing document.
    pub api_hosts: Vec<String>,
    /// Traefik entry points the rendering names on every router (none: all).
    pub traefik_entry_points: Vec<String>,
    /// The Traefik certificate resolver routers ask for TLS with.
    pub traefik_cert_resolver: Option<String>,
    /// Bound on a storage-surface value.
    pub storage_object_bytes: u64,
    /// A storage lock left by a dead holder expires after this.
    pub storage_lock: std::time::Duration,
    /// Issuers of workload OIDC tokens: the only ones whose keys are fetched.
    pub oidc_issuers: Vec<String>,
    /// The `aud` a workload token must carry.
    pub oidc_audience: String,
    /// Admit `http://` issuers on loopback (test issuers).
    pub oidc_allow_http: bool,
    /// How long an issuer's fetched keys are used before they are fetched again.
    pub oidc_keys_ttl: std::time::Duration,
}

/// Where a value came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    File(PathBuf),
    Env(String),
    Flag(&'static str),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(path) => write!(f, "config file {}", path.display()),
            Origin::Env(name) => write!(f, "environment {name}"),
            Origin::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("invalid {key} (from {origin}): {rule}")]
    Invalid {
        key: &'static str,
        origin: Origin,
        rule: String,
    },
    #[error("unknown key `{key}` in config file {path} (known keys: {known})")]
    UnknownKey {
        key: String,
        path: PathBuf,
        known: String,
    },
    #[error("cannot read config file {path}: {reason}")]
    File { path: PathBuf, reason: String },
}

/// A raw value before its key's parser reads it.
#[derive(Debug, Clone)]
enum Raw {
    Text(String),
    List(Vec<String>),
    Toml(toml::Value),
}

/// The environment, as a lookup (tests pass a map).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Merges defaults, the config file, the environment and the flags, then
/// validates the result.
pub fn resolve(flags: &SailArgs, env: Env<'_>) -> Result<NodeConfig, ConfigError> {
    let file = match flags
        .config
        .clone()
        .or_else(|| env("SCAFO_CONFIG").map(PathBuf::from))
    {
        Some(path) => read_file(&path, true)?,
        None => read_file(Path::new(DEFAULT_CONFIG_FILE), false)?,
    };
    let layers = Layers { flags, env, file };

    let node_id = match layers.pick("node.id") {
        Some((raw, origin)) => {
            let text = string(&raw, "node.id", &origin)?;
            NodeId::parse(&text).map_err(|rule| invalid("node.id", origin, rule))?
        }
        None => NodeId::from_hostname(&hostname()),
    };
    let state_dir = match layers.pick("state.dir") {
        Some((raw, origin)) => {
            let dir = PathBuf::from(string(&raw, "state.dir", &origin)?);
            if !dir.is_absolute() {
                return Err(invalid("state.dir", origin, "must be an absolute path"));
            }
            dir
        }
        None => default_state_dir(env),
    };
    let bucket = match layers.pick("registry.bucket") {
        Some((raw, origin)) => BucketUrl::parse(&string(&raw, "registry.bucket", &origin)?)
            .map_err(|rule| invalid("registry.bucket", origin, rule))?,
        None => BucketUrl::File(state_dir.join("bucket")),
    };
    let s3 = S3Settings {
        endpoint: layers.string_with("registry.s3.endpoint", http_url)?,
        region: layers.string_with("registry.s3.region", |r| {
            (!r.is_empty() && r.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
                .then(|| r.to_owned())
                .ok_or("must be a region name such as eu-west-1")
        })?,
        force_path_style: match layers.pick("registry.s3.forcePathStyle") {
            Some((raw, origin)) => Some(boolean(&raw, "registry.s3.forcePathStyle", origin)?),
            None => None,
        },
    };
    if matches!(bucket, BucketUrl::File(_)) && s3 != S3Settings::default() {
        let key = if s3.endpoint.is_some() {
            "registry.s3.endpoint"
        } else if s3.region.is_some() {
            "registry.s3.region"
        } else {
            "registry.s3.forcePathStyle"
        };
        let origin = layers
            .pick(key)
            .map(|(_, o)| o)
            .unwrap_or(Origin::Flag("--bucket"));
        return Err(invalid(
            key,
            origin,
            "only applies to an s3:// registry.bucket",
        ));
    }

    let oidc_allow_http = match layers.pick("oidc.allowHttp") {
        Some((raw, origin)) => boolean(&raw, "oidc.allowHttp", origin)?,
        None => false,
    };
    let oidc_issuers = match layers.pick("oidc.issuers") {
        None => DEFAULT_OIDC_ISSUERS
            .iter()
            .map(|i| (*i).to_owned())
            .collect(),
        Some((_, origin)) => {
            let issuers = layers.list("oidc.issuers", |_| Ok(()))?;
            for issuer in &issuers {
                crate::auth::oidc::check_url(issuer, oidc_allow_http).map_err(|rule| {
                    invalid("oidc.issuers", origin.clone(), format!("{issuer:?} {rule}"))
                })?;
            }
            issuers
        }
    };

    Ok(NodeConfig {
        node_id,
        oidc_issuers,
        oidc_allow_http,
        oidc_keys_ttl: seconds(&layers, "oidc.keysSeconds", 600, 1..=86_400)?,
        oidc_audience: layers
            .string_with("oidc.audience", |aud| {
                (!aud.is_empty() && aud.len() <= 256 && !aud.chars().any(char::is_control))
                    .then(|| aud.to_owned())
                    .ok_or("must be 1-256 characters")
            })?
            .unwrap_or_else(|| crate::auth::token::AUDIENCE.to_owned()),
        labels: layers.labels()?,
        advertise: layers.string_with("node.advertise", http_url)?,
        listen: layers
            .string_with("api.listen", |text| {
                text.parse::<SocketAddr>()
                    .map_err(|_| "must be an IP address and port, e.g. 127.0.0.1:7070 or [::]:7070")
            })?
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 7070))),
        json_bytes: match layers.pick("api.jsonBytes") {
            Some((raw, origin)) => {
                let n = integer(&raw, "api.jsonBytes", origin.clone())?;
                if !(1024..=16 << 20).contains(&n) {
                    return Err(invalid(
                        "api.jsonBytes",
                        origin,
                        "must be between 1024 and 16777216",
                    ));
                }
                n as usize
            }
            None => 65536,
        },
        state_dir,
        bucket,
        s3,
        ingress_tokens: layers.ingress_tokens()?,
        log_format: layers
            .string_with("log.format", |text| match text {
                "text" => Ok(LogFormat::Text),
                "json" => Ok(LogFormat::Json),
                _ => Err("must be text or json"),
            })?
            .unwrap_or(LogFormat::Text),
        platform_domains: layers.domains("platform.domains", &["localhost"])?,
        api_hosts: layers.domains("api.hosts", &[])?,
        traefik_entry_points: layers.list("ingress.traefik.entryPoints", |name| {
            (!name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .then_some(())
            .ok_or("entry point names are letters, digits, '-' and '_'")
        })?,
        traefik_cert_resolver: layers.string_with("ingress.traefik.certResolver", |name| {
            (!name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .then(|| name.to_owned())
            .ok_or("a resolver name is letters, digits, '-' and '_'")
        })?,
        artifact_bytes: match layers.pick("deploy.artifactBytes") {
            Some((raw, origin)) => {
                let n = integer(&raw, "deploy.artifactBytes", origin.clone())?;
                if !(1024..=(4u64 << 30)).contains(&n) {
                    return Err(invalid(
                        "deploy.artifactBytes",
                        origin,
                        "must be between 1024 and 4294967296",
                    ));
                }
                n
            }
            None => 64 << 20,
        },
        workerd: layers.string_with("celld.workerd", absolute_path)?,
        esbuild: layers.string_with("celld.esbuild", absolute_path)?,
        ports: layers
            .string_with("celld.ports", |text| {
                let rule = "must be a port range FIRST-LAST with 1024 <= FIRST <= LAST <= 65535";
                let (a, b) = text.split_once('-').ok_or(rule)?;
                let (a, b) = (
                    a.trim().parse::<u16>().map_err(|_| rule)?,
                    b.trim().parse::<u16>().map_err(|_| rule)?,
                );
                (1024 <= a && a <= b).then_some((a, b)).ok_or(rule)
            })?
            .unwrap_or((17000, 17999)),
        reconcile_interval: match layers.pick("reconcile.intervalMs") {
            Some((raw, origin)) => {
                let n = integer(&raw, "reconcile.intervalMs", origin.clone())?;
                if !(100..=600_000).contains(&n) {
                    return Err(invalid(
                        "reconcile.intervalMs",
                        origin,
                        "must be between 100 and 600000",
                    ));
                }
                std::time::Duration::from_millis(n)
            }
            None => std::time::Duration::from_millis(2000),
        },
        lease: seconds(&layers, "coordinator.leaseSeconds", 15, 3..=600)?,
        storage_lock: seconds(&layers, "storage.lockSeconds", 300, 1..=86_400)?,
        storage_object_bytes: match layers.pick("storage.objectBytes") {
            Some((raw, origin)) => {
                let n = integer(&raw, "storage.objectBytes", origin.clone())?;
                if !(1024..=(64u64 << 20)).contains(&n) {
                    return Err(invalid(
                        "storage.objectBytes",
                        origin,
                        "must be between 1024 and 67108864",
                    ));
                }
                n
            }
            None => 1 << 20,
        },
        retire_grace: seconds(&layers, "retire.graceSeconds", 604_800, 0..=31_536_000)?,
        bootstrap_admin: layers.string_with("bootstrap.admin", |text| {
            if text.is_empty() {
                Err("must be the path of a public JWK or key file")
            } else {
                Ok(PathBuf::from(text))
            }
        })?,
    })
}

/// A config file's path and its values by dotted key.
type FileValues = (PathBuf, BTreeMap<String, toml::Value>);

struct Layers<'a> {
    flags: &'a SailArgs,
    env: Env<'a>,
    file: Option<FileValues>,
}

impl Layers<'_> {
    /// The highest-precedence value given for `key`, if any.
    fn pick(&self, key: &'static str) -> Option<(Raw, Origin)> {
        let flag = KEYS.iter().find(|(k, _)| *k == key).and_then(|(_, f)| *f);
        let flags = self.flags;
        let from_flag = match key {
            "node.id" => flags.node_id.clone().map(Raw::Text),
            "node.labels" => (!flags.label.is_empty()).then(|| Raw::List(flags.label.clone())),
            "node.advertise" => flags.advertise.clone().map(Raw::Text),
            "api.listen" => flags.listen.clone().map(Raw::Text),
            "state.dir" => flags
                .state_dir
                .as_ref()
                .map(|d| Raw::Text(d.display().to_string())),
            "registry.bucket" => flags.bucket.clone().map(Raw::Text),
            "ingress.token" => {
                (!flags.ingress_token.is_empty()).then(|| Raw::List(flags.ingress_token.clone()))
            }
            "log.format" => flags.log_format.clone().map(Raw::Text),
            "api.hosts" => (!flags.api_host.is_empty()).then(|| Raw::List(flags.api_host.clone())),
            "platform.domains" => (!flags.platform_domain.is_empty())
                .then(|| Raw::List(flags.platform_domain.clone())),
            "bootstrap.admin" => flags
                .bootstrap_admin
                .as_ref()
                .map(|p| Raw::Text(p.display().to_string())),
            _ => None,
        };
        if let (Some(raw), Some(flag)) = (from_flag, flag) {
            return Some((raw, Origin::Flag(flag)));
        }
        let env_name = env_name(key);
        if let Some(value) = (self.env)(&env_name) {
            return Some((Raw::Text(value), Origin::Env(env_name)));
        }
        let (path, values) = self.file.as_ref()?;
        values
            .get(key)
            .map(|value| (Raw::Toml(value.clone()), Origin::File(path.clone())))
    }

    fn string_with<T>(
        &self,
        key: &'static str,
        parse: impl Fn(&str) -> Result<T, &'static str>,
    ) -> Result<Option<T>, ConfigError> {
        match self.pick(key) {
            None => Ok(None),
            Some((raw, origin)) => {
                let text = string(&raw, key, &origin)?;
                parse(&text)
                    .map(Some)
                    .map_err(|rule| invalid(key, origin, rule))
            }
        }
    }

    fn labels(&self) -> Result<BTreeMap<String, String>, ConfigError> {
        const KEY: &str = "node.labels";
        let Some((raw, origin)) = self.pick(KEY) else {
            return Ok(BTreeMap::new());
        };
        let pairs: Vec<(String, String)> = match raw {
            Raw::Toml(toml::Value::Table(table)) => table
                .into_iter()
                .map(|(k, v)| match v {
                    toml::Value::String(v) => Ok((k, v)),
                    _ => Err(invalid(KEY, origin.clone(), "label values must be strings")),
                })
                .collect::<Result<_, _>>()?,
            Raw::Toml(_) => return Err(invalid(KEY, origin, "must be a table of strings")),
            Raw::Text(text) => split_pairs(text.split(',').filter(|s| !s.is_empty()), &origin)?,
            Raw::List(items) => split_pairs(items.iter().map(String::as_str), &origin)?,
        };
        let mut labels = BTreeMap::new();
        for (k, v) in pairs {
            if !names::is_node_label(&k, &v) {
                return Err(invalid(
                    KEY,
                    origin,
                    format!("{k}={v}: {}", names::NODE_LABEL_RULE),
                ));
            }
            labels.insert(k, v);
        }
        Ok(labels)
    }

    /// A list value: comma-separated text, repeated flags, or a TOML array
    /// of strings; each item checked by `rule`.
    fn list(
        &self,
        key: &'static str,
        rule: impl Fn(&str) -> Result<(), &'static str>,
    ) -> Result<Vec<String>, ConfigError> {
        let Some((raw, origin)) = self.pick(key) else {
            return Ok(Vec::new());
        };
        let items: Vec<String> = match raw {
            Raw::Text(text) => text
                .split(',')
                .map(|d| d.trim().to_owned())
                .filter(|d| !d.is_empty())
                .collect(),
            Raw::List(items) => items,
            Raw::Toml(toml::Value::String(one)) => vec![one],
            Raw::Toml(toml::Value::Array(items)) => items
                .into_iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s),
                    _ => Err(invalid(key, origin.clone(), "items must be strings")),
                })
                .collect::<Result<_, _>>()?,
            Raw::Toml(_) => return Err(invalid(key, origin, "must be a list of strings")),
        };
        for item in &items {
            rule(item).map_err(|why| invalid(key, origin.clone(), format!("{item:?}: {why}")))?;
        }
        Ok(items)
    }

    /// A list of lower-case domain names; `default` when not given.
    fn domains(&self, key: &'static str, default: &[&str]) -> Result<Vec<String>, ConfigError> {
        if self.pick(key).is_none() {
            return Ok(default.iter().map(|d| (*d).to_owned()).collect());
        }
        self.list(key, |domain| {
            let ok = domain.len() <= 253 && domain.split('.').all(names::is_label);
            ok.then_some(()).ok_or("not a lower-case domain name")
        })
    }

    fn ingress_tokens(&self) -> Result<Vec<String>, ConfigError> {
        const KEY: &str = "ingress.token";
        let Some((raw, origin)) = self.pick(KEY) else {
            return Ok(Vec::new());
        };
        let tokens = match raw {
            Raw::Text(text) => text.split(',').map(str::to_owned).collect(),
            Raw::List(items) => items,
            Raw::Toml(toml::Value::String(one)) => vec![one],
            Raw::Toml(toml::Value::Array(items)) => items
                .into_iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s),
                    _ => Err(invalid(KEY, origin.clone(), "tokens must be strings")),
                })
                .collect::<Result<_, _>>()?,
            Raw::Toml(_) => {
                return Err(invalid(
                    KEY,
                    origin,
                    "must be a string or a list of strings",
                ));
            }
        };
        for token in &tokens {
            if !is_token(token) {
                // Never echo the token itself.
                return Err(invalid(KEY, origin, TOKEN_RULE));
            }
        }
        Ok(tokens)
    }
}

/// The rule for ingress tokens.
pub const TOKEN_RULE: &str =
    "each token must be 16-512 characters of A-Z, a-z, 0-9 and . _ ~ + / = -";

pub fn is_token(token: &str) -> bool {
    (16..=512).contains(&token.len())
        && token.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '+' | '/' | '=' | '-')
        })
}

fn split_pairs<'a>(
    items: impl Iterator<Item = &'a str>,
    origin: &Origin,
) -> Result<Vec<(String, String)>, ConfigError> {
    items
        .map(|item| {
            item.split_once('=')
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .ok_or_else(|| {
                    invalid(
                        "node.labels",
                        origin.clone(),
                        format!("{item:?} is not KEY=VALUE"),
                    )
                })
        })
        .collect()
}

/// A whole number of seconds within `range`.
fn seconds(
    layers: &Layers<'_>,
    key: &'static str,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<std::time::Duration, ConfigError> {
    match layers.pick(key) {
        Some((raw, origin)) => {
            let n = integer(&raw, key, origin.clone())?;
            if !range.contains(&n) {
                return Err(invalid(
                    key,
                    origin,
                    format!("must be between {} and {}", range.start(), range.end()),
                ));
            }
            Ok(std::time::Duration::from_secs(n))
        }
        None => Ok(std::time::Duration::from_secs(default)),
    }
}

fn absolute_path(text: &str) -> Result<PathBuf, &'static str> {
    let path = PathBuf::from(text);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err("must be an absolute path")
    }
}

fn env_name(key: &str) -> String {
    format!("SCAFO_{}", key.to_ascii_uppercase().replace('.', "_"))
}

fn invalid(key: &'static str, origin: Origin, rule: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key,
        origin,
        rule: rule.into(),
    }
}

fn string(raw: &Raw, key: &'static str, origin: &Origin) -> Result<String, ConfigError> {
    match raw {
        Raw::Text(text) | Raw::Toml(toml::Value::String(text)) => Ok(text.clone()),
        Raw::List(items) if items.len() == 1 => Ok(items[0].clone()),
        _ => Err(invalid(key, origin.clone(), "must be a string")),
    }
}

fn integer(raw: &Raw, key: &'static str, origin: Origin) -> Result<u64, ConfigError> {
    match raw {
        Raw::Toml(toml::Value::Integer(n)) if *n >= 0 => Ok(*n as u64),
        Raw::Text(text) => text
            .trim()
            .parse()
            .map_err(|_| invalid(key, origin, "must be a whole number")),
        _ => Err(invalid(key, origin, "must be a whole number")),
    }
}

fn boolean(raw: &Raw, key: &'static str, origin: Origin) -> Result<bool, ConfigError> {
    match raw {
        Raw::Toml(toml::Value::Boolean(b)) => Ok(*b),
        Raw::Text(text) => match text.trim() {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            _ => Err(invalid(key, origin, "must be true or false")),
        },
        _ => Err(invalid(key, origin, "must be true or false")),
    }
}

/// `http://` or `https://` with a host and no path, query or fragment;
/// a trailing `/` is dropped.
pub fn http_url(text: &str) -> Result<String, &'static str> {
    const RULE: &str =
        "must be an http:// or https:// URL with a host and no path, e.g. http://10.0.0.5:7070";
    let rest = text
        .strip_prefix("http://")
        .or_else(|| text.strip_prefix("https://"))
        .ok_or(RULE)?;
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.is_empty()
        || authority
            .chars()
            .any(|c| matches!(c, '/' | '?' | '#' | '@') || c.is_whitespace() || c.is_control())
    {
        return Err(RULE);
    }
    Ok(text.strip_suffix('/').unwrap_or(text).to_owned())
}

/// Reads a config file into dotted keys; `required` makes a missing file an
/// error (an explicit `--config`), otherwise it is simply not there.
fn read_file(path: &Path, required: bool) -> Result<Option<FileValues>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => return Ok(None),
        Err(e) => {
            return Err(ConfigError::File {
                path: path.to_owned(),
                reason: e.to_string(),
            });
        }
    };
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::File {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
    let mut values = BTreeMap::new();
    flatten(path, "", table, &mut values)?;
    Ok(Some((path.to_owned(), values)))
}

fn flatten(
    path: &Path,
    prefix: &str,
    table: toml::Table,
    out: &mut BTreeMap<String, toml::Value>,
) -> Result<(), ConfigError> {
    for (name, value) in table {
        let key = format!("{prefix}{name}");
        if KEYS.iter().any(|(k, _)| *k == key) {
            out.insert(key, value);
            continue;
        }
        let section = format!("{key}.");
        match value {
            toml::Value::Table(inner) if KEYS.iter().any(|(k, _)| k.starts_with(&section)) => {
                flatten(path, &section, inner, out)?;
            }
            _ => {
                return Err(ConfigError::UnknownKey {
                    key,
                    path: path.to_owned(),
                    known: KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", "),
                });
            }
        }
    }
    Ok(())
}

/// `/var/lib/scafo` as root, else `$XDG_STATE_HOME/scafo` (or
/// `~/.local/state/scafo`).
pub fn default_state_dir(env: Env<'_>) -> PathBuf {
    if is_root() {
        return PathBuf::from("/var/lib/scafo");
    }
    match env("XDG_STATE_HOME").filter(|d| d.starts_with('/')) {
        Some(dir) => PathBuf::from(dir).join("scafo"),
        None => {
            PathBuf::from(env("HOME").unwrap_or_else(|| "/tmp".into())).join(".local/state/scafo")
        }
    }
}

/// True when this process runs as root (read from /proc, no `unsafe`).
pub fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn file(text: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!(
            "scafo-config-{}-{}.toml",
            std::process::id(),
            crate::registry::new_nonce()
        ));
        std::fs::write(&path, text).unwrap_or_default();
        path
    }

    #[test]
    fn flags_beat_env_beat_file_beat_defaults() {
        let path = file(
            "[node]\nid = \"from-file\"\nadvertise = \"http://file:1\"\n[api]\nlisten = \"127.0.0.1:1\"\njsonBytes = 2048\n",
        );
        let env = env_of(&[
            ("SCAFO_NODE_ID", "from-env"),
            ("SCAFO_API_LISTEN", "127.0.0.1:2"),
            ("HOME", "/h"),
        ]);
        let flags = SailArgs {
            config: Some(path.clone()),
            node_id: Some("from-flag".into()),
            ..SailArgs::default()
        };
        let config = resolve(&flags, &env).map_err(|e| e.to_string());
        let config = config.as_ref().map_err(String::as_str);
        assert_eq!(config.map(|c| c.node_id.as_str()), Ok("from-flag"));
        assert_eq!(config.map(|c| c.listen.port()), Ok(2));
        assert_eq!(
            config.map(|c| c.advertise.as_deref()),
            Ok(Some("http://file:1"))
        );
        assert_eq!(config.map(|c| c.json_bytes), Ok(2048));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn defaults_need_nothing() {
        let config = resolve(&SailArgs::default(), &env_of(&[("HOME", "/home/u")]));
        let config = config.map_err(|e| e.to_string());
        assert_eq!(
            config.as_ref().map(|c| c.listen.to_string()),
            Ok("127.0.0.1:7070".into())
        );
        assert_eq!(config.as_ref().map(|c| c.json_bytes), Ok(65536));
        let state = config
            .as_ref()
            .map(|c| c.state_dir.clone())
            .unwrap_or_default();
        assert_eq!(
            config.as_ref().map(|c| c.bucket.clone()),
            Ok(BucketUrl::File(state.join("bucket")))
        );
        assert_eq!(
            config.as_ref().map(|c| (
                c.oidc_issuers.clone(),
                c.oidc_audience.as_str(),
                c.oidc_allow_http
            )),
            Ok((
                vec![
                    "https://token.actions.githubusercontent.com".to_owned(),
                    "https://gitlab.com".to_owned()
                ],
                "scafo",
                false
            ))
        );
        // An empty list admits no workload token at all.
        let none = resolve(
            &SailArgs::default(),
            &env_of(&[("HOME", "/h"), ("SCAFO_OIDC_ISSUERS", "")]),
        );
        assert_eq!(
            none.map(|c| c.oidc_issuers.len())
                .map_err(|e| e.to_string()),
            Ok(0)
        );
    }

    #[test]
    fn errors_name_key_origin_and_rule() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (
                &[("SCAFO_NODE_ID", "Bad_Id")],
                "invalid node.id (from environment SCAFO_NODE_ID): must be 1-63",
            ),
            (
                &[("SCAFO_API_LISTEN", "localhost")],
                "invalid api.listen (from environment SCAFO_API_LISTEN)",
            ),
            (&[("SCAFO_API_JSONBYTES", "10")], "invalid api.jsonBytes"),
            (
                &[("SCAFO_REGISTRY_BUCKET", "ftp://x")],
                "invalid registry.bucket",
            ),
            (&[("SCAFO_INGRESS_TOKEN", "short")], "invalid ingress.token"),
            (&[("SCAFO_NODE_LABELS", "region")], "invalid node.labels"),
            (&[("SCAFO_LOG_FORMAT", "xml")], "invalid log.format"),
            (
                &[("SCAFO_NODE_ADVERTISE", "10.0.0.1:7070")],
                "invalid node.advertise",
            ),
            (
                &[("SCAFO_REGISTRY_S3_ENDPOINT", "http://127.0.0.1:9000")],
                "only applies to an s3://",
            ),
            (&[("SCAFO_STATE_DIR", "relative")], "invalid state.dir"),
            (
                &[("SCAFO_OIDC_ISSUERS", "http://127.0.0.1:8080")],
                "invalid oidc.issuers (from environment SCAFO_OIDC_ISSUERS): \"http://127.0.0.1:8080\" must be https://",
            ),
            (
                &[
                    ("SCAFO_OIDC_ISSUERS", "http://10.0.0.5:8080"),
                    ("SCAFO_OIDC_ALLOWHTTP", "true"),
                ],
                "may be http:// only on a loopback host",
            ),
            (&[("SCAFO_OIDC_ALLOWHTTP", "yes")], "invalid oidc.allowHttp"),
            (&[("SCAFO_OIDC_AUDIENCE", "")], "invalid oidc.audience"),
        ];
        for (pairs, expected) in cases {
            let env = move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            };
            let message = resolve(&SailArgs::default(), &env)
                .map(|_| String::new())
                .unwrap_or_else(|e| e.to_string());
            assert!(
                message.contains(expected),
                "{message:?} should contain {expected:?}"
            );
        }
    }

    #[test]
    fn ingress_token_errors_never_echo_the_token() {
        let env = env_of(&[(
            "SCAFO_INGRESS_TOKEN",
            "good-token-0123456789,secret with space",
        )]);
        let message = resolve(&SailArgs::default(), &env)
            .map(|_| String::new())
            .unwrap_or_else(|e| e.to_string());
        assert!(
            message.contains("ingress.token") && !message.contains("secret"),
            "{message}"
        );
    }

    #[test]
    fn unknown_file_keys_are_errors() {
        for text in [
            "[node]\nidd = \"x\"\n",
            "port = 1\n",
            "[registry.s4]\nregion = \"x\"\n",
        ] {
            let path = file(text);
            let flags = SailArgs {
                config: Some(path.clone()),
                ..SailArgs::default()
            };
            let message = resolve(&flags, &env_of(&[]))
                .map(|_| String::new())
                .unwrap_or_else(|e| e.to_string());
            assert!(message.starts_with("unknown key `"), "{message}");
            let _ = std::fs::remove_file(path);
        }
    }

    #[test]
    fn labels_from_each_layer() {
        let path = file("[node.labels]\nregion = \"eu\"\n");
        let flags = SailArgs {
            config: Some(path.clone()),
            ..SailArgs::default()
        };
        let labels = resolve(&flags, &env_of(&[]))
            .map(|c| c.labels)
            .unwrap_or_default();
        assert_eq!(labels.get("region").map(String::as_str), Some("eu"));
        let env = env_of(&[("SCAFO_NODE_LABELS", "region=us,tier=fast")]);
        let labels = resolve(&flags, &env).map(|c| c.labels).unwrap_or_default();
        assert_eq!(labels.len(), 2);
        let flags = SailArgs {
            label: vec!["zone=a".into()],
            ..flags
        };
        let labels = resolve(&flags, &env).map(|c| c.labels).unwrap_or_default();
        assert_eq!(labels.keys().collect::<Vec<_>>(), ["zone"]);
        let _ = std::fs::remove_file(path);
    }
}
