//! The node's registration and heartbeat: `registry/fleet.json` created once
//! by the first node, the bootstrap admin while no operator exists, then
//! this node's record written every 5 s through the
//! CAS helper. A node id registered under another public key is fatal: two
//! machines must never speak for one node.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::watch;

use super::{NodeError, Shared};
use crate::registry::{Change, FleetRecord, NodeRecord, RegistryError, V1, keys, new_nonce};
use crate::wire::Timestamp;

/// How often the node record is rewritten.
pub const INTERVAL: Duration = Duration::from_secs(5);
/// First retry delay after a failed heartbeat; doubles up to [`INTERVAL`].
const RETRY: Duration = Duration::from_millis(250);

#[derive(Debug)]
pub enum BeatError {
    Fatal(NodeError),
    Registry(RegistryError),
}

impl From<RegistryError> for BeatError {
    fn from(err: RegistryError) -> Self {
        BeatError::Registry(err)
    }
}

/// Writes the fleet record (once) and this node's record (every time).
pub async fn beat(shared: &Shared) -> Result<(), BeatError> {
    let registry = &shared.registry;
    if !shared.fleet_known.load(Ordering::Relaxed) {
        let fleet = FleetRecord {
            v: V1,
            id: new_nonce()[..16].to_owned(),
            created_at: Timestamp::now(),
        };
        let stored = registry.create(&keys::fleet(), &fleet).await?;
        if stored.id == fleet.id {
            tracing::info!(fleet = %stored.id, "created a new fleet in the registry");
        }
        shared.fleet_known.store(true, Ordering::Relaxed);
    }
    if !shared.bootstrapped.load(Ordering::Relaxed) {
        match super::bootstrap::ensure_admin(shared).await {
            Ok(()) => shared.bootstrapped.store(true, Ordering::Relaxed),
            Err(super::bootstrap::BootstrapError::Registry(e)) => return Err(e.into()),
            Err(super::bootstrap::BootstrapError::Fatal(e)) => return Err(BeatError::Fatal(e)),
        }
    }
    let public_key = shared.local.node_key.public();
    registry
        .update(&keys::node(&shared.id), |current: Option<&NodeRecord>| {
            if let Some(current) = current
                && current.public_key != public_key
            {
                return Err(BeatError::Fatal(NodeError::KeyMismatch {
                    id: shared.id.to_string(),
                    key: keys::node(&shared.id).path().to_owned(),
                }));
            }
            let mut record = current.cloned().unwrap_or_else(|| NodeRecord {
                v: V1,
                id: shared.id.clone(),
                public_key: public_key.clone(),
                labels: Default::default(),
                advertise: String::new(),
                version: String::new(),
                celld: None,
                started_at: shared.started_at,
                heartbeat_at: shared.started_at,
                serving: Default::default(),
                failures: Default::default(),
            });
            record.labels = shared.config.labels.clone();
            record.advertise = shared.advertise.clone();
            record.version = crate::VERSION.to_owned();
            record.started_at = shared.started_at;
            record.heartbeat_at = Timestamp::now();
            record.celld = shared.runtime.celld_info();
            record.serving = shared.runtime.serving();
            record.failures = shared.runtime.failures();
            Ok(Change::Put(record))
        })
        .await?
        .inspect(|written| {
            *crate::node::runtime::lock(&shared.reported) =
                Some((written.serving.clone(), written.failures.clone()));
        });
    Ok(())
}

/// Writes the node record now (after the reconcile pass changed what it runs).
pub async fn report(shared: &Shared) -> Result<(), RegistryError> {
    // Only a change is written now; otherwise the 5 s heartbeat carries it.
    let now = (shared.runtime.serving(), shared.runtime.failures());
    if shared.registered.load(Ordering::Relaxed)
        && crate::node::runtime::lock(&shared.reported).as_ref() == Some(&now)
    {
        return Ok(());
    }
    match beat(shared).await {
        Ok(()) => Ok(()),
        Err(BeatError::Registry(e)) => Err(e),
        // The heartbeat task reports fatal errors and stops the node.
        Err(BeatError::Fatal(_)) => Ok(()),
    }
}

/// Heartbeats until `stop`; returns early only for a fatal key mismatch.
pub async fn run(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) -> Result<(), NodeError> {
    let mut retry = RETRY;
    let mut failing = !shared.registered.load(Ordering::Relaxed);
    loop {
        let wait = if failing { retry } else { INTERVAL };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = stop.wait_for(|stopped| *stopped) => return Ok(()),
        }
        match beat(&shared).await {
            Ok(()) => {
                if failing {
                    tracing::info!(node = %shared.id, "registry reachable: node registered");
                }
                shared.registered.store(true, Ordering::Relaxed);
                failing = false;
                retry = RETRY;
            }
            Err(BeatError::Fatal(err)) => return Err(err),
            Err(BeatError::Registry(err)) => {
                if !failing {
                    tracing::warn!(error = %err, "heartbeat failed; retrying until the registry answers");
                } else {
                    tracing::debug!(error = %err, "heartbeat failed again");
                }
                failing = true;
                retry = (retry * 2).min(INTERVAL);
            }
        }
    }
}
