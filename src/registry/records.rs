//! The records of the registry (DESIGN §6). Each carries `"v": 1`; the
//! writer nonce is added and stripped by the registry itself, so it never
//! reaches an API answer.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::auth::PublicJwk;
use crate::names::{NodeId, OperatorId, ScopePattern};
use crate::wire::Timestamp;

/// The record format version: serialises as `1`, and a record carrying
/// any other `v` is refused rather than misread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct V1;

impl Serialize for V1 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(1)
    }
}

impl<'de> Deserialize<'de> for V1 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match u64::deserialize(deserializer)? {
            1 => Ok(V1),
            other => Err(serde::de::Error::custom(format!(
                "record version {other} is not understood by this scafo (it reads v1)"
            ))),
        }
    }
}

/// `registry/fleet.json`: created once, by the first node of a fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetRecord {
    pub v: V1,
    pub id: String,
    pub created_at: Timestamp,
}

/// What the Celld runtime of a node reports about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CelldInfo {
    pub engine: String,
    pub version: String,
}

/// One application this node serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Serving {
    pub deploy: String,
    pub state: String,
    pub url: String,
}

/// One deploy this node failed to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeFailure {
    pub code: String,
    pub detail: String,
    pub at: Timestamp,
}

/// `registry/nodes/<id>.json`: written only by that node, every heartbeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeRecord {
    pub v: V1,
    pub id: NodeId,
    pub public_key: PublicJwk,
    pub labels: BTreeMap<String, String>,
    pub advertise: String,
    pub version: String,
    /// `null` until the node's Celld runtime reports a release.
    pub celld: Option<CelldInfo>,
    pub started_at: Timestamp,
    pub heartbeat_at: Timestamp,
    #[serde(default)]
    pub serving: BTreeMap<String, Serving>,
    #[serde(default)]
    pub failures: BTreeMap<String, NodeFailure>,
}

/// An operator key's tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Operator,
    Admin,
}

/// `registry/operators/<id>.json`: one key allowed to call the API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustedOperator {
    pub v: V1,
    pub id: OperatorId,
    pub public_key: PublicJwk,
    pub role: Role,
    pub applications: Vec<ScopePattern>,
    #[serde(default)]
    pub supersedes: Option<OperatorId>,
    pub created_at: Timestamp,
    /// The operator that registered this key (`bootstrap` for the first admin).
    pub created_by: String,
}

/// `registry/fleet/freeze.json`: deploy intake is stopped fleet-wide.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FreezeRecord {
    pub v: V1,
    pub frozen_at: Timestamp,
    pub by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `registry/coordinator/lease.json`: which node coordinates the fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseRecord {
    pub v: V1,
    pub holder: NodeId,
    pub epoch: u64,
    pub acquired_at: Timestamp,
    pub renewed_at: Timestamp,
    pub expires_at: Timestamp,
}

/// `registry/claims/<host>.json`: a host an application answers on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimRecord {
    pub v: V1,
    pub host: String,
    pub application: crate::names::AppName,
    pub wildcard: bool,
    pub created_at: Timestamp,
    pub by: String,
}

/// `storage/locks/<name>`: a storage-surface lock and when it lapses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StorageLock {
    pub v: V1,
    pub expires_at: Timestamp,
}

/// `registry/coordinator/assignment.json`: where the coordinator placed
/// every application, under its lease epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssignmentRecord {
    pub v: V1,
    pub epoch: u64,
    pub computed_at: Timestamp,
    pub applications: BTreeMap<String, super::Placement>,
}
