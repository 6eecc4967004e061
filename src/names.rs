//! Names scafo gives to things (DESIGN §2), parsed once and never re-checked.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

/// The rule every id of the fleet follows: a DNS label.
pub const LABEL_RULE: &str =
    "must be 1-63 characters of a-z, 0-9 and '-', not starting or ending with '-'";

/// True when `name` is a DNS label as DESIGN §2 defines it.
pub fn is_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// A node's id: a DNS label, unique in the fleet.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct NodeId(String);

impl NodeId {
    pub fn parse(name: &str) -> Result<Self, &'static str> {
        if is_label(name) {
            Ok(NodeId(name.to_owned()))
        } else {
            Err(LABEL_RULE)
        }
    }

    /// Turns a host name into the nearest valid id: lower-cased, the first
    /// DNS label only, every other character a `-`, trimmed to 63.
    pub fn from_hostname(host: &str) -> Self {
        let first = host.trim().split('.').next().unwrap_or_default();
        let mapped: String = first
            .chars()
            .map(|c| match c.to_ascii_lowercase() {
                c @ ('a'..='z' | '0'..='9') => c,
                _ => '-',
            })
            .take(63)
            .collect();
        let trimmed = mapped.trim_matches('-');
        NodeId(if trimmed.is_empty() {
            "node".to_owned()
        } else {
            trimmed.to_owned()
        })
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for NodeId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        NodeId::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Rule for node label keys and values (`--label region=eu-west-1`).
pub const NODE_LABEL_RULE: &str = "keys are 1-63 characters of a-z, A-Z, 0-9, '.', '_', '/' and '-' starting with a letter or digit; values are at most 63 of a-z, A-Z, 0-9, '.', '_' and '-'";

/// Checks one node label pair against [`NODE_LABEL_RULE`].
pub fn is_node_label(key: &str, value: &str) -> bool {
    let key_ok = (1..=63).contains(&key.len())
        && key.starts_with(|c: char| c.is_ascii_alphanumeric())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-'));
    let value_ok = value.len() <= 63
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    key_ok && value_ok
}

/// An operator's id: a DNS label (so it never contains the `:` of node kids).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct OperatorId(String);

impl OperatorId {
    pub fn parse(name: &str) -> Result<Self, &'static str> {
        if is_label(name) {
            Ok(OperatorId(name.to_owned()))
        } else {
            Err(LABEL_RULE)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for OperatorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for OperatorId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        OperatorId::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// An application's name: a DNS label (environments are `<name>-<env>`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct AppName(String);

impl AppName {
    pub fn parse(name: &str) -> Result<Self, &'static str> {
        if is_label(name) {
            Ok(AppName(name.to_owned()))
        } else {
            Err(LABEL_RULE)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AppName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for AppName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        AppName::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A deploy's id: `<application>.<16 lowercase hex>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct DeployId(String);

impl DeployId {
    /// A fresh id for a deploy of `app`.
    pub fn new(app: &AppName) -> Self {
        DeployId(format!(
            "{app}.{:016x}",
            getrandom::u64().unwrap_or_default()
        ))
    }

    pub fn parse(text: &str) -> Option<Self> {
        let (app, hex) = text.rsplit_once('.')?;
        let hex_ok = hex.len() == 16
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        (is_label(app) && hex_ok).then(|| DeployId(text.to_owned()))
    }

    pub fn application(&self) -> AppName {
        AppName(
            self.0
                .rsplit_once('.')
                .map(|(app, _)| app)
                .unwrap_or_default()
                .to_owned(),
        )
    }

    /// The 16 hex digits after the application.
    pub fn hex(&self) -> &str {
        self.0
            .rsplit_once('.')
            .map(|(_, hex)| hex)
            .unwrap_or_default()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DeployId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for DeployId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        DeployId::parse(&text)
            .ok_or_else(|| serde::de::Error::custom("not a deploy id (<application>.<16 hex>)"))
    }
}

/// Checks a host against the claim rule (node-api.txt) after lower-casing
/// it; the error names the rule broken.
pub fn parse_host(text: &str) -> Result<String, &'static str> {
    let host = text.to_ascii_lowercase();
    if host.contains("://") {
        return Err("a host has no scheme");
    }
    if host.contains('/') {
        return Err("a host has no path");
    }
    if host.contains(':') {
        return Err("a host has no port");
    }
    if host.contains('*') {
        return Err("a host has no wildcard: claim the parent with ?wildcard=1");
    }
    if host.contains('_') {
        return Err("a host has no underscore");
    }
    if host.ends_with('.') {
        return Err("a host has no trailing dot");
    }
    if host.len() > 253 {
        return Err("a host is at most 253 characters");
    }
    let labels: Vec<&str> = host.split('.').collect();
    if labels.len() < 2 {
        return Err("a host is fully qualified: at least two labels");
    }
    if !labels.iter().all(|l| is_label(l)) {
        return Err(
            "each label is 1-63 characters of a-z, 0-9 and '-', not starting or ending with '-'",
        );
    }
    if labels
        .last()
        .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err("the last label is not all digits");
    }
    Ok(host)
}

/// Is `host` one of the platform domains or under one?
pub fn under_domain(host: &str, domain: &str) -> bool {
    host == domain
        || host
            .strip_suffix(domain)
            .is_some_and(|rest| rest.ends_with('.'))
}

/// The host one label up (`a.shop.example` → `shop.example`), if that is
/// still a host of two labels or more.
pub fn parent_host(host: &str) -> Option<&str> {
    host.split_once('.')
        .map(|(_, parent)| parent)
        .filter(|p| p.contains('.'))
}

/// The rule for scope patterns.
pub const SCOPE_RULE: &str =
    "a scope pattern is *, an application name, or a prefix glob such as shop-*";

/// One pattern of an operator key's application scope (DESIGN §2): `*`, an
/// exact name, or a prefix glob `<prefix>*`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScopePattern {
    All,
    Exact(String),
    Prefix(String),
}

impl ScopePattern {
    pub fn parse(text: &str) -> Result<Self, &'static str> {
        if text == "*" {
            return Ok(ScopePattern::All);
        }
        let valid = |p: &str| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        };
        match text.strip_suffix('*') {
            Some(prefix) if valid(prefix) => Ok(ScopePattern::Prefix(prefix.to_owned())),
            Some(_) => Err(SCOPE_RULE),
            None if is_label(text) => Ok(ScopePattern::Exact(text.to_owned())),
            None => Err(SCOPE_RULE),
        }
    }

    /// Does this pattern reach the application `name`?
    pub fn reaches(&self, name: &str) -> bool {
        match self {
            ScopePattern::All => true,
            ScopePattern::Exact(exact) => exact == name,
            ScopePattern::Prefix(prefix) => name.starts_with(prefix.as_str()),
        }
    }

    /// Does this single pattern cover `other`: reach every name `other` can?
    pub fn covers(&self, other: &ScopePattern) -> bool {
        match (self, other) {
            (ScopePattern::All, _) => true,
            (_, ScopePattern::All) => false,
            (ScopePattern::Exact(a), ScopePattern::Exact(b)) => a == b,
            (ScopePattern::Exact(_), ScopePattern::Prefix(_)) => false,
            (ScopePattern::Prefix(p), ScopePattern::Exact(name) | ScopePattern::Prefix(name)) => {
                name.starts_with(p.as_str())
            }
        }
    }
}

/// Does some pattern of `scope` reach `name`?
pub fn scope_reaches(scope: &[ScopePattern], name: &str) -> bool {
    scope.iter().any(|p| p.reaches(name))
}

/// Does `scope` cover the pattern `wanted` (DESIGN §2)? Coverage is decided
/// pattern by pattern: some single pattern of the scope must cover it.
pub fn scope_covers(scope: &[ScopePattern], wanted: &ScopePattern) -> bool {
    scope.iter().any(|p| p.covers(wanted))
}

impl fmt::Display for ScopePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScopePattern::All => f.write_str("*"),
            ScopePattern::Exact(name) => f.write_str(name),
            ScopePattern::Prefix(prefix) => write!(f, "{prefix}*"),
        }
    }
}

impl Serialize for ScopePattern {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ScopePattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        ScopePattern::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A selector as JSON carries it: an object of node-label values, or null
/// (no constraint). The error names the rule broken.
pub fn parse_selector(
    value: &serde_json::Value,
) -> Result<Option<std::collections::BTreeMap<String, String>>, String> {
    match value {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::Object(pairs) => pairs
            .iter()
            .map(|(key, value)| match value {
                serde_json::Value::String(v) if is_node_label(key, v) => {
                    Ok((key.clone(), v.clone()))
                }
                _ => Err(format!("selector {key}: {NODE_LABEL_RULE}")),
            })
            .collect::<Result<_, _>>()
            .map(Some),
        _ => Err("selector must be an object of label values, or null".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        for ok in ["a", "vps-a", "0", "a-b-c", &"x".repeat(63)] {
            assert!(is_label(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a.b", "ü", &"x".repeat(64)] {
            assert!(!is_label(bad), "{bad}");
        }
    }

    #[test]
    fn hostnames_become_ids() {
        assert_eq!(NodeId::from_hostname("VPS_A.example.com").as_str(), "vps-a");
        assert_eq!(NodeId::from_hostname("--").as_str(), "node");
        assert_eq!(NodeId::from_hostname(&"h".repeat(80)).as_str().len(), 63);
    }

    fn pattern(text: &str) -> ScopePattern {
        ScopePattern::parse(text).unwrap_or_else(|rule| panic!("{text}: {rule}"))
    }

    #[test]
    fn scope_patterns_parse() {
        assert_eq!(pattern("*"), ScopePattern::All);
        assert_eq!(pattern("shop"), ScopePattern::Exact("shop".into()));
        assert_eq!(pattern("shop-*"), ScopePattern::Prefix("shop-".into()));
        assert_eq!(pattern("s*"), ScopePattern::Prefix("s".into()));
        for bad in [
            "", "**", "*shop", "sh*p", "Shop", "shop_*", "-*x", "shop-", "a b", "shop*-",
        ] {
            assert!(ScopePattern::parse(bad).is_err(), "{bad}");
        }
        for text in ["*", "shop", "shop-*"] {
            assert_eq!(pattern(text).to_string(), text);
        }
    }

    #[test]
    fn reaches_every_case() {
        let cases = [
            ("*", "anything", true),
            ("shop", "shop", true),
            ("shop", "shop-staging", false),
            ("shop", "sho", false),
            ("shop-*", "shop-staging", true),
            ("shop-*", "shop-", true),
            ("shop-*", "shop", false),
            ("shop*", "shop", true),
            ("shop*", "shopping", true),
            ("shop*", "blog", false),
        ];
        for (p, name, expected) in cases {
            assert_eq!(pattern(p).reaches(name), expected, "{p} reaches {name}");
        }
        let scope = [pattern("blog"), pattern("shop-*")];
        assert!(scope_reaches(&scope, "blog") && scope_reaches(&scope, "shop-eu"));
        assert!(!scope_reaches(&scope, "shop") && !scope_reaches(&[], "x"));
    }

    #[test]
    fn covers_every_pair_of_kinds() {
        let cases = [
            // (key pattern, wanted, covered)
            ("*", "*", true),
            ("*", "shop", true),
            ("*", "shop-*", true),
            ("shop", "*", false),
            ("shop", "shop", true),
            ("shop", "blog", false),
            ("shop", "shop-*", false),
            ("shop", "shop*", false),
            ("shop-*", "*", false),
            ("shop-*", "shop-eu", true),
            ("shop-*", "shop", false),
            ("shop-*", "shop-eu-*", true),
            ("shop-*", "shop-*", true),
            ("shop-*", "shop*", false),
            ("shop*", "shop-*", true),
            ("shop*", "shopping", true),
            ("s*", "shop-*", true),
            ("shop-eu*", "shop-*", false),
        ];
        for (key, wanted, expected) in cases {
            assert_eq!(
                pattern(key).covers(&pattern(wanted)),
                expected,
                "{key} covers {wanted}"
            );
        }
        let scope = [pattern("blog"), pattern("shop-*")];
        assert!(scope_covers(&scope, &pattern("shop-eu-*")));
        assert!(!scope_covers(&scope, &pattern("blog-*")));
        assert!(!scope_covers(&[], &pattern("blog")));
    }

    #[test]
    fn the_claim_rule() {
        assert_eq!(parse_host("Shop.Example"), Ok("shop.example".into()));
        assert_eq!(
            parse_host("a-b.c.example.co"),
            Ok("a-b.c.example.co".into())
        );
        for (bad, rule) in [
            ("https://shop.example", "scheme"),
            ("shop.example/x", "path"),
            ("shop.example:443", "port"),
            ("*.shop.example", "wildcard"),
            ("shop_x.example", "underscore"),
            ("shop.example.", "trailing dot"),
            ("localhost", "two labels"),
            ("-shop.example", "label"),
            ("shop..example", "label"),
            ("10.0.0.1", "digits"),
        ] {
            let got = parse_host(bad);
            assert!(
                got.as_ref().is_err_and(|r| r.contains(rule)),
                "{bad}: {got:?}"
            );
        }
        assert!(parse_host(&format!("{}.example", "a.".repeat(130))).is_err());
        assert!(under_domain("shop.apps.example.com", "apps.example.com"));
        assert!(under_domain("apps.example.com", "apps.example.com"));
        assert!(!under_domain("myapps.example.com", "apps.example.com"));
        assert_eq!(parent_host("a.shop.example"), Some("shop.example"));
        assert_eq!(parent_host("shop.example"), None);
    }

    #[test]
    fn deploy_ids() {
        let app = AppName::parse("shop").unwrap_or_else(|r| panic!("{r}"));
        let id = DeployId::new(&app);
        assert_eq!(DeployId::parse(id.as_str()), Some(id.clone()));
        assert_eq!(id.application(), app);
        assert_eq!(id.hex().len(), 16);
        for bad in [
            "shop",
            "shop.",
            "shop.0F3A9C1D2B4E5A67",
            "shop.0f3a",
            ".0f3a9c1d2b4e5a67",
            "Shop.0f3a9c1d2b4e5a67",
            "shop.0f3a9c1d2b4e5a6g",
        ] {
            assert_eq!(DeployId::parse(bad), None, "{bad}");
        }
        assert!(DeployId::parse("shop-eu.0f3a9c1d2b4e5a67").is_some());
    }

    #[test]
    fn operator_ids_are_labels() {
        assert!(OperatorId::parse("op-9f3c").is_ok());
        assert!(OperatorId::parse("node:vps-a").is_err());
    }

    #[test]
    fn node_labels() {
        assert!(is_node_label("region", "eu-west-1"));
        assert!(is_node_label("topology.kubernetes.io/zone", ""));
        assert!(!is_node_label("", "x"));
        assert!(!is_node_label("-a", "x"));
        assert!(!is_node_label("a", "x,y"));
        assert!(!is_node_label("a", "x=y"));
    }
}
