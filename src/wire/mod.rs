//! JSON shapes that cross HTTP: problem documents, timestamps, answers. The
//! node and the client share them, so both sides agree by construction.

pub mod answers;
pub mod deploy_meta;
pub mod problem;
pub mod routing;
pub mod timestamp;

use serde::{Deserialize, Serialize};

pub use problem::{Code, Problem};
pub use timestamp::Timestamp;

/// `GET /.well-known/scafo/health`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    pub ok: bool,
    pub version: String,
    pub node: String,
}
