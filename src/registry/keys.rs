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

use super::{
    ApplicationRecord, AssignmentRecord, ClaimRecord, DeployStatus, FleetRecord, FreezeRecord,
    LeaseRecord, NodeRecord, StorageLock, TrustedOperator,
};
use crate::names::{AppName, DeployId, NodeId, OperatorId};

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

    /// The key of a record found by listing its directory.
    pub(super) fn from_listed(path: &str) -> Self {
        RecordKey::new(path.to_owned())
    }
}

impl<T> Clone for RecordKey<T> {
    fn clone(&self) -> Self {
        RecordKey::new(self.path.clone())
    }
}

/// A registry "directory": every `<prefix><name>.json` holds a `T`.
#[derive(Debug)]
pub struct RecordDir<T> {
    prefix: &'static str,
    record: PhantomData<fn() -> T>,
}

impl<T> RecordDir<T> {
    const fn new(prefix: &'static str) -> Self {
        RecordDir {
            prefix,
            record: PhantomData,
        }
    }

    pub fn prefix(&self) -> &'static str {
        self.prefix
    }

    /// The record name a listed key holds, if the key is one of this directory's.
    pub fn name_of<'a>(&self, key: &'a str) -> Option<&'a str> {
        key.strip_prefix(self.prefix)?
            .strip_suffix(".json")
            .filter(|n| !n.contains('/'))
    }

    fn key(&self, name: &str) -> RecordKey<T> {
        RecordKey::new(format!("{}{name}.json", self.prefix))
    }
}

pub fn fleet() -> RecordKey<FleetRecord> {
    RecordKey::new("registry/fleet.json".into())
}

pub const NODES: RecordDir<NodeRecord> = RecordDir::new("registry/nodes/");

pub fn node(id: &NodeId) -> RecordKey<NodeRecord> {
    NODES.key(id.as_str())
}

pub const OPERATORS: RecordDir<TrustedOperator> = RecordDir::new("registry/operators/");

pub fn operator(id: &OperatorId) -> RecordKey<TrustedOperator> {
    OPERATORS.key(id.as_str())
}

pub fn freeze() -> RecordKey<FreezeRecord> {
    RecordKey::new("registry/fleet/freeze.json".into())
}

pub fn lease() -> RecordKey<LeaseRecord> {
    RecordKey::new("registry/coordinator/lease.json".into())
}

pub const APPLICATIONS: RecordDir<ApplicationRecord> = RecordDir::new("registry/applications/");

pub fn application(name: &AppName) -> RecordKey<ApplicationRecord> {
    APPLICATIONS.key(name.as_str())
}

/// Where every deploy record lives.
pub const DEPLOYS: &str = "registry/deploys/";

/// The deploy a listed key under [`DEPLOYS`] holds.
pub fn deploy_of(key: &str) -> Option<DeployId> {
    let (app, file) = key.strip_prefix(DEPLOYS)?.split_once('/')?;
    DeployId::parse(&format!("{app}.{}", file.strip_suffix(".json")?))
}

pub fn deploy(id: &DeployId) -> RecordKey<DeployStatus> {
    RecordKey::new(format!(
        "registry/deploys/{}/{}.json",
        id.application(),
        id.hex()
    ))
}

/// Where a deploy's artifact is kept, as uploaded.
pub fn artifact(id: &DeployId) -> String {
    format!("artifacts/{}/{}.tar.gz", id.application(), id.hex())
}

/// Every deploy record of an application.
pub fn deploys_of(app: &AppName) -> String {
    format!("registry/deploys/{app}/")
}

/// Every artifact of an application.
pub fn artifacts_of(app: &AppName) -> String {
    format!("artifacts/{app}/")
}

pub const CLAIMS: RecordDir<ClaimRecord> = RecordDir::new("registry/claims/");

/// The claim on a host (already held to the claim rule).
pub fn claim(host: &str) -> RecordKey<ClaimRecord> {
    CLAIMS.key(host)
}

/// Where the storage surface keeps values: `storage/objects/<key>`.
pub const STORAGE_OBJECTS: &str = "storage/objects/";

pub fn storage_object(key: &str) -> String {
    format!("{STORAGE_OBJECTS}{key}")
}

/// A storage-surface lock: `storage/locks/<name>`.
pub fn storage_lock(name: &str) -> RecordKey<StorageLock> {
    RecordKey::new(format!("storage/locks/{name}"))
}

pub fn assignment() -> RecordKey<AssignmentRecord> {
    RecordKey::new("registry/coordinator/assignment.json".into())
}
