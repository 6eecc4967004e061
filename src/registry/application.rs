//! `registry/applications/<name>.json`: an application and what the fleet
//! should do with it (DESIGN §6). Created by its first deploy.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::V1;
use crate::names::{AppName, DeployId};
use crate::wire::Timestamp;

/// How many nodes run an application: every eligible node, or a count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Replicas {
    #[default]
    All,
    Count(u32),
}

impl Replicas {
    /// Reads `"all"` or a whole number of at least 1 from JSON.
    pub fn from_json(value: &serde_json::Value) -> Option<Replicas> {
        match value {
            serde_json::Value::String(s) if s == "all" => Some(Replicas::All),
            serde_json::Value::Number(n) => n
                .as_u64()
                .filter(|n| (1..=u32::MAX as u64).contains(n))
                .map(|n| Replicas::Count(n as u32)),
            _ => None,
        }
    }
}

pub const REPLICAS_RULE: &str = "replicas must be \"all\" or a whole number of at least 1";

impl Serialize for Replicas {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Replicas::All => serializer.serialize_str("all"),
            Replicas::Count(n) => serializer.serialize_u32(*n),
        }
    }
}

impl<'de> Deserialize<'de> for Replicas {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Replicas::from_json(&value).ok_or_else(|| serde::de::Error::custom(REPLICAS_RULE))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Retirement {
    pub at: Timestamp,
    pub by: String,
    pub grace_until: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DomainClaim {
    pub host: String,
    pub wildcard: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustEntry {
    pub issuer: String,
    pub subject: String,
}

/// Which deploy serves, and which is on its way.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Release {
    pub live: Option<DeployId>,
    pub pending: Option<DeployId>,
}

/// Where the assignment put the application (read-only for callers).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Placement {
    pub nodes: Vec<String>,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationRecord {
    pub v: V1,
    pub name: AppName,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub blocked: bool,
    pub retired: Option<Retirement>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    pub selector: Option<BTreeMap<String, String>>,
    pub replicas: Replicas,
    #[serde(default)]
    pub domains: Vec<DomainClaim>,
    #[serde(default)]
    pub trust: Vec<TrustEntry>,
    #[serde(default)]
    pub release: Release,
    #[serde(default)]
    pub placement: Placement,
}

impl ApplicationRecord {
    /// The record a first deploy creates.
    pub fn new(name: AppName) -> Self {
        let now = Timestamp::now();
        ApplicationRecord {
            v: V1,
            name,
            created_at: now,
            updated_at: now,
            blocked: false,
            retired: None,
            labels: BTreeMap::new(),
            selector: None,
            replicas: Replicas::All,
            domains: Vec::new(),
            trust: Vec::new(),
            release: Release::default(),
            placement: Placement::default(),
        }
    }
}
