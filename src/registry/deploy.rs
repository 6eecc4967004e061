//! `registry/deploys/<name>/<hex>.json`: one deploy's life (DESIGN §6, §8),
//! every state a CAS write by the node carrying it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::V1;
use crate::names::{AppName, DeployId, NodeId};
use crate::wire::Timestamp;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeployState {
    Accepted,
    Stored,
    Activating,
    Live,
    Failed,
    Superseded,
}

impl DeployState {
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            DeployState::Live | DeployState::Failed | DeployState::Superseded
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DeployState::Accepted => "accepted",
            DeployState::Stored => "stored",
            DeployState::Activating => "activating",
            DeployState::Live => "live",
            DeployState::Failed => "failed",
            DeployState::Superseded => "superseded",
        }
    }
}

/// The artifact as uploaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactInfo {
    pub bytes: u64,
    pub expanded_bytes: u64,
    pub sha256: String,
}

/// One node's report on this deploy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeProgress {
    pub state: String,
    pub detail: Option<String>,
    pub at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeployStatus {
    pub v: V1,
    pub id: DeployId,
    pub application: AppName,
    pub state: DeployState,
    pub code: Option<String>,
    pub detail: Option<String>,
    pub accepted_by: NodeId,
    pub caller: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub source: Option<Value>,
    pub message: Option<String>,
    pub artifact: Option<ArtifactInfo>,
    #[serde(default)]
    pub nodes: BTreeMap<String, NodeProgress>,
    #[serde(default)]
    pub urls: Vec<String>,
}
