//! The JSON answers of the control routes, shared by node and client.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::registry::{CelldInfo, DeployStatus, FreezeRecord, TrustedOperator};
use crate::wire::Timestamp;

/// `GET /v1/operators`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OperatorList {
    pub operators: Vec<TrustedOperator>,
    pub scoped: bool,
}

/// `POST /v1/operators`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OperatorAnswer {
    pub operator: TrustedOperator,
}

/// `DELETE /v1/operators/:id`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Removed {
    pub removed: String,
}

/// `POST /v1/fleet/freeze`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FreezeAnswer {
    pub freeze: FreezeRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<bool>,
}

/// `DELETE /v1/fleet/freeze`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Lifted {
    pub lifted: bool,
}

/// `POST /v1/applications/:name/deploys` (202).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeployAnswer {
    pub deploy: DeployStatus,
}

/// `GET /v1/state` (DESIGN §6).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DaemonState {
    pub node: NodeView,
    pub fleet: Option<FleetView>,
    pub registry: RegistryView,
    pub coordinator: CoordinatorView,
    pub reconcile: ReconcileView,
    pub applications: Vec<ServedApplication>,
    pub nodes: Vec<FleetNode>,
    pub scoped: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeView {
    pub id: String,
    pub version: String,
    pub labels: BTreeMap<String, String>,
    pub advertise: String,
    pub started_at: Timestamp,
    pub celld: Option<CelldInfo>,
    /// Why this node has no runtime, when `celld` is null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub celld_error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetView {
    pub id: String,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RegistryView {
    pub kind: String,
    pub location: String,
    /// Requests this node made to the bucket since it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<crate::store::counted::Requests>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoordinatorView {
    pub holder: Option<String>,
    #[serde(rename = "self")]
    pub is_self: bool,
    pub epoch: Option<u64>,
    pub expires_at: Option<Timestamp>,
    pub last_assignment_at: Option<Timestamp>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReconcileView {
    pub ready: bool,
    pub passes: u64,
    pub last_pass_at: Option<Timestamp>,
    pub last_pass_ms: Option<u64>,
    pub last_error: Option<String>,
}

/// An application this node runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServedApplication {
    pub name: String,
    pub live: Option<String>,
    pub pending: Option<String>,
    pub state: String,
    pub url: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetNode {
    pub id: String,
    pub labels: BTreeMap<String, String>,
    pub alive: bool,
    pub heartbeat_at: Timestamp,
    pub celld: Option<CelldInfo>,
}
