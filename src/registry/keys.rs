//! The bucket's key layout (DESIGN §5), in this one place. No other module
//! spells a registry key.
//!
//! ```text
//! registry/fleet.json                    FleetRecord, created once by the first node
//! registry/applications/<name>.json      ApplicationRecord
//! registry/claims/<host>.json            host claims
//! registry/operators/<id>.json           TrustedOperator
//! registry/nodes/<id>.json               NodeRecord (written only by that node)
//! registry/coordinator/lease.json        the coordinator lease
//! registry/coordinator/assignment.json   the coordinator's assignment
//! registry/fleet/freeze.json             FreezeRecord
//! registry/deploys/<name>/<hex>.json     DeployStatus
//! artifacts/<name>/<hex>.tar.gz          artifacts as uploaded
//! storage/objects/<key>                  storage surface values
//! storage/locks/<name>                   storage locks
//! ```

use std::marker::PhantomData;

use super::{FleetRecord, NodeRecord};
use crate::names::NodeId;

/// A registry key that holds records of type `T`.
#[derive(Debug)]
pub struct RecordKey<T> {
    path: String,
    record: PhantomData<fn() -> T>,
}

impl<T> RecordKey<T> {
    fn new(path: String) -> Self {
        RecordKey {
            path,
            record: PhantomData,
        }
    }

    pub fn path(&self) -> &str {
        &self.path
    }
}

impl<T> Clone for RecordKey<T> {
    fn clone(&self) -> Self {
        RecordKey::new(self.path.clone())
    }
}

pub fn fleet() -> RecordKey<FleetRecord> {
    RecordKey::new("registry/fleet.json".into())
}

pub const NODES: &str = "registry/nodes/";

pub fn node(id: &NodeId) -> RecordKey<NodeRecord> {
    RecordKey::new(format!("{NODES}{id}.json"))
}
