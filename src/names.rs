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
