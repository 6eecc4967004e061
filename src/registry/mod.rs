//! The registry: typed records over the object store, and the one
//! compare-and-swap helper every mutation goes through.
//!
//! A record is stored as its JSON object plus a `"nonce"` member the writer
//! draws fresh for each write. When a conditional write comes back as a lost
//! race, [`Registry::update`] re-reads the key: if the stored nonce is its
//! own, the write landed and only the reply was lost (the SDK retried it),
//! so it is a success, not a conflict. The nonce also defeats A→B→A: equal
//! content never yields an equal ETag twice.

mod application;
mod deploy;
pub mod keys;
mod records;

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::store::{ETag, ObjectStore, StoreError};
pub use application::{
    ApplicationRecord, DomainClaim, Placement, REPLICAS_RULE, Release, Replicas, Retirement,
    TrustEntry,
};
pub use deploy::{ArtifactInfo, DeployState, DeployStatus, NodeProgress};
pub use keys::{RecordDir, RecordKey};
pub use records::{
    AssignmentRecord, CelldInfo, ClaimRecord, FleetRecord, FreezeRecord, LeaseRecord, NodeFailure,
    NodeRecord, Role, Serving, StorageLock, TrustedOperator, V1,
};

use std::sync::Arc;

/// How many times [`Registry::update`] tries before answering `cas-conflict`.
pub const MAX_ATTEMPTS: u32 = 32;

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The bucket cannot be reached (or does not exist, or refuses us).
    #[error("registry unavailable: {0}")]
    Unavailable(#[source] StoreError),
    /// A write lost its race [`MAX_ATTEMPTS`] times in a row.
    #[error("{key} kept changing under us; gave up after {MAX_ATTEMPTS} attempts")]
    Conflict { key: String },
    /// A stored record this scafo cannot read.
    #[error("record {key} is unreadable: {reason}")]
    Corrupt { key: String, reason: String },
    /// Anything else the store said (a bug if it happens: an invalid key).
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for RegistryError {
    fn from(err: StoreError) -> Self {
        if err.is_unavailable() || matches!(err, StoreError::Io { .. }) {
            RegistryError::Unavailable(err)
        } else {
            RegistryError::Store(err)
        }
    }
}

/// A record as read, with what a conditional write needs.
#[derive(Debug, Clone)]
pub struct Versioned<T> {
    pub value: T,
    pub etag: ETag,
    pub nonce: String,
}

/// What an [`Registry::update`] closure decides.
#[derive(Debug)]
pub enum Change<T> {
    /// Write this value.
    Put(T),
    /// Leave the key as it is.
    Keep,
}

#[derive(Debug, Clone)]
pub struct Registry {
    store: Arc<dyn ObjectStore>,
}

impl Registry {
    pub fn new(store: Arc<dyn ObjectStore>) -> Self {
        Registry { store }
    }

    pub fn store(&self) -> &dyn ObjectStore {
        &*self.store
    }

    /// Reads one record.
    pub async fn read<T: DeserializeOwned>(
        &self,
        key: &RecordKey<T>,
    ) -> Result<Option<Versioned<T>>, RegistryError> {
        match self.store.get(key.path()).await? {
            None => Ok(None),
            Some(object) => {
                let (value, nonce) = decode(key.path(), &object.bytes)?;
                Ok(Some(Versioned {
                    value,
                    etag: object.etag,
                    nonce,
                }))
            }
        }
    }

    /// Every record in a registry directory, in name order. Records deleted
    /// between the listing and the read are simply absent.
    pub async fn read_all<T: DeserializeOwned + Clone>(
        &self,
        dir: &RecordDir<T>,
    ) -> Result<Vec<Versioned<T>>, RegistryError> {
        self.read_all_changed(dir, &[]).await
    }

    /// Like [`Registry::read_all`] (name order), but a record whose listed
    /// ETag matches one in `previous` is taken from there instead of read
    /// again: one LIST and a GET only for what changed.
    pub async fn read_all_changed<T: DeserializeOwned + Clone>(
        &self,
        dir: &RecordDir<T>,
        previous: &[Versioned<T>],
    ) -> Result<Vec<Versioned<T>>, RegistryError> {
        let listing = crate::store::list_all(&*self.store, dir.prefix(), false).await?;
        let known: std::collections::HashMap<&ETag, &Versioned<T>> =
            previous.iter().map(|v| (&v.etag, v)).collect();
        let listed: Vec<_> = listing
            .objects
            .iter()
            .filter(|m| dir.name_of(&m.key).is_some())
            .collect();
        let reads = futures_util::future::join_all(listed.iter().map(|meta| async {
            match known.get(&meta.etag) {
                Some(record) => Ok(Some((*record).clone())),
                None => self.read(&RecordKey::<T>::from_listed(&meta.key)).await,
            }
        }))
        .await;
        let mut records = Vec::with_capacity(reads.len());
        for read in reads {
            records.extend(read?);
        }
        Ok(records)
    }

    /// Whether a registry directory holds any record, with one listing.
    pub async fn any<T>(&self, dir: &RecordDir<T>) -> Result<bool, RegistryError> {
        let page = self
            .store
            .list(crate::store::ListRequest {
                prefix: dir.prefix().to_owned(),
                ..Default::default()
            })
            .await?;
        Ok(page.objects.iter().any(|m| dir.name_of(&m.key).is_some()))
    }

    /// Removes a record. The one mutation that is not a CAS write: object
    /// stores have no conditional delete, so deletions that could race are
    /// kept apart by who may issue them (the coordinator lease, the caller).
    pub async fn remove<T>(&self, key: &RecordKey<T>) -> Result<(), RegistryError> {
        Ok(self.store.delete(key.path()).await?)
    }

    /// Removes every object under a prefix (an application's deploy records
    /// or artifacts); like [`Registry::remove`], only for callers that hold
    /// the right to delete.
    pub async fn remove_under(&self, prefix: &str) -> Result<usize, RegistryError> {
        let listing = crate::store::list_all(&*self.store, prefix, false).await?;
        for object in &listing.objects {
            self.store.delete(&object.key).await?;
        }
        Ok(listing.objects.len())
    }

    /// Creates a record unless the key exists. Answers the record now stored:
    /// ours, or the one that was there first.
    pub async fn create<T: Serialize + DeserializeOwned + Clone>(
        &self,
        key: &RecordKey<T>,
        value: &T,
    ) -> Result<T, RegistryError> {
        self.update(key, |current| {
            Ok::<_, RegistryError>(match current {
                Some(_) => Change::Keep,
                None => Change::Put(value.clone()),
            })
        })
        .await
        .and_then(|stored| {
            stored.ok_or_else(|| RegistryError::Conflict {
                key: key.path().to_owned(),
            })
        })
    }

    /// The compare-and-swap helper: read, let `change` decide, write
    /// conditionally on what was read; on a lost race read again and retry
    /// (with jittered backoff) up to [`MAX_ATTEMPTS`] times. Answers the value
    /// stored at the end (`None` when the key is missing and `change` kept it
    /// so). `change` may run several times and must be free of side effects.
    pub async fn update<T, E, F>(&self, key: &RecordKey<T>, mut change: F) -> Result<Option<T>, E>
    where
        T: Serialize + DeserializeOwned + Clone,
        E: From<RegistryError>,
        F: FnMut(Option<&T>) -> Result<Change<T>, E>,
    {
        let path = key.path();
        for attempt in 0..MAX_ATTEMPTS {
            let current = self.read(key).await?;
            let new = match change(current.as_ref().map(|c| &c.value))? {
                Change::Keep => return Ok(current.map(|c| c.value)),
                Change::Put(new) => new,
            };
            let nonce = new_nonce();
            let bytes = encode(path, &new, &nonce)?;
            let written = match &current {
                Some(current) => self.store.put_if_match(path, bytes, &current.etag).await,
                None => self.store.put_create(path, bytes).await,
            };
            match written {
                Ok(_) => return Ok(Some(new)),
                Err(StoreError::Conflict { .. }) => {
                    // Did our own write land, with only the reply lost?
                    let now = self.store.get(path).await.map_err(RegistryError::from)?;
                    if let Some(now) = now
                        && decode::<T>(path, &now.bytes).is_ok_and(|(_, n)| n == nonce)
                    {
                        return Ok(Some(new));
                    }
                    tokio::time::sleep(backoff(attempt)).await;
                }
                Err(other) => return Err(RegistryError::from(other).into()),
            }
        }
        Err(RegistryError::Conflict {
            key: path.to_owned(),
        }
        .into())
    }
}

/// "Full jitter": a random delay up to 5 ms doubling to a 200 ms cap, so
/// writers that collided spread out instead of colliding again.
fn backoff(attempt: u32) -> Duration {
    let cap = (5u64 << attempt.min(6)).min(200) * 1000;
    let random = u64::from(getrandom::u32().unwrap_or(u32::MAX / 2));
    Duration::from_micros(1000 + random % cap)
}

/// A fresh writer nonce: 16 random bytes, hex.
pub fn new_nonce() -> String {
    let mut bytes = [0u8; 16];
    // Failure leaves zeros: the write still happens, only the lost-reply
    // recognition gets weaker, and getrandom does not fail on Linux.
    let _ = getrandom::fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn encode<T: Serialize>(key: &str, value: &T, nonce: &str) -> Result<Vec<u8>, RegistryError> {
    let corrupt = |reason: String| RegistryError::Corrupt {
        key: key.to_owned(),
        reason,
    };
    let mut json = serde_json::to_value(value).map_err(|e| corrupt(e.to_string()))?;
    let Value::Object(map) = &mut json else {
        return Err(corrupt("a record must be a JSON object".into()));
    };
    map.insert("nonce".into(), Value::String(nonce.to_owned()));
    serde_json::to_vec(&json).map_err(|e| corrupt(e.to_string()))
}

fn decode<T: DeserializeOwned>(key: &str, bytes: &[u8]) -> Result<(T, String), RegistryError> {
    let corrupt = |reason: String| RegistryError::Corrupt {
        key: key.to_owned(),
        reason,
    };
    let mut json: Value = serde_json::from_slice(bytes).map_err(|e| corrupt(e.to_string()))?;
    let nonce = match json.as_object_mut().and_then(|m| m.remove("nonce")) {
        Some(Value::String(nonce)) => nonce,
        _ => return Err(corrupt("no writer nonce".into())),
    };
    let value = serde_json::from_value(json).map_err(|e| corrupt(e.to_string()))?;
    Ok((value, nonce))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_stays_bounded() {
        assert!(backoff(0) <= Duration::from_millis(6));
        assert!(backoff(20) <= Duration::from_millis(201));
    }

    #[test]
    fn nonce_is_added_and_stripped() -> Result<(), RegistryError> {
        let record = serde_json::json!({"v": 1, "id": "x"});
        let bytes = encode("k", &record, "abc")?;
        let (back, nonce): (Value, String) = decode("k", &bytes)?;
        assert_eq!((back, nonce.as_str()), (record, "abc"));
        assert!(decode::<Value>("k", b"{\"v\":1}").is_err());
        Ok(())
    }
}
