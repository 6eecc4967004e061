//! The reconcile pass: read the applications, run every wanted release
//! through Celld (an application's live release, and its pending one beside
//! it), stop what is no longer wanted after a drain delay, and report in the
//! node record. It runs every `reconcile.intervalMs`, and at once when a
//! write on this node wakes it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::runtime::{Slot, lock};
use super::{NodeError, Shared};
use crate::celld::Failure;
use crate::names::{AppName, DeployId};
use crate::registry::{ApplicationRecord, NodeRecord, RegistryError, Versioned, keys};
use crate::wire::Timestamp;

/// How long a replaced release keeps serving in-flight requests.
pub const DRAIN: Duration = Duration::from_secs(5);

/// The longest a stopping node waits for the fleet to route around it.
const LEAVE_MAX: Duration = Duration::from_secs(30);
/// The longest a starting node withholds its first routing document.
const SETTLE: Duration = Duration::from_secs(60);
/// How long a live release that failed to start here waits before retrying.
const RETRY_FAILED: Duration = Duration::from_secs(30);

pub async fn run(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) -> Result<(), NodeError> {
    let (mut seen, mut nodes_seen) = (Vec::new(), Vec::new());
    loop {
        let started = Instant::now();
        let outcome = pass(&shared, &mut seen, &mut nodes_seen).await;
        {
            let mut stats = lock(&shared.runtime.stats);
            stats.passes += 1;
            stats.last_pass_at = Some(Timestamp::now());
            stats.last_pass_ms = Some(started.elapsed().as_millis() as u64);
            match &outcome {
                Ok(()) => {
                    stats.ready = true;
                    stats.last_error = None;
                }
                Err(e) => stats.last_error = Some(e.to_string()),
            }
        }
        if let Err(e) = outcome {
            tracing::warn!(error = %e, "reconcile pass failed");
        }
        tokio::select! {
            _ = tokio::time::sleep(shared.config.reconcile_interval) => {}
            _ = shared.wake.notified() => {}
            _ = stop.wait_for(|s| *s) => break,
        }
    }
    leave(&shared).await;
    stop_all(&shared).await;
    Ok(())
}

/// Shutting down: first leave the routing documents — the node record says
/// this node serves nothing, and the other nodes' next passes drop its
/// upstreams — then give them (and the ingresses polling them) time to
/// before the applications stop: two reconcile intervals, no less than the
/// drain delay and no more than [`LEAVE_MAX`].
async fn leave(shared: &Shared) {
    let running = lock(&shared.runtime.releases)
        .values()
        .any(|(_, slot)| matches!(slot, Slot::Running { .. }));
    if !running {
        return;
    }
    shared
        .runtime
        .leaving
        .store(true, std::sync::atomic::Ordering::Relaxed);
    match super::heartbeat::report(shared).await {
        Ok(()) => {
            let wait = (shared.config.reconcile_interval * 2).clamp(DRAIN, LEAVE_MAX);
            tracing::info!("left the routing documents; stopping applications in {wait:?}");
            tokio::time::sleep(wait).await;
        }
        Err(e) => tracing::warn!(error = %e, "could not leave the routing documents"),
    }
}

/// The releases every application placed on this node wants here.
fn wanted(shared: &Shared) -> BTreeMap<DeployId, AppName> {
    let mut wanted = BTreeMap::new();
    let placements = lock(&shared.runtime.placements);
    for app in lock(&shared.runtime.applications).iter() {
        if app.blocked || app.retired.is_some() {
            continue;
        }
        let here = placements
            .get(app.name.as_str())
            .is_some_and(|p| p.nodes.iter().any(|n| n == shared.id.as_str()));
        if !here {
            continue;
        }
        for deploy in [&app.release.live, &app.release.pending]
            .into_iter()
            .flatten()
        {
            wanted.insert(deploy.clone(), app.name.clone());
        }
    }
    wanted
}

/// One pass; `seen` holds the application records of the last one, so only
/// records whose ETag changed are read again.
async fn pass(
    shared: &Arc<Shared>,
    seen: &mut Vec<Versioned<ApplicationRecord>>,
    nodes_seen: &mut Vec<Versioned<NodeRecord>>,
) -> Result<(), RegistryError> {
    *seen = shared
        .registry
        .read_all_changed(&keys::APPLICATIONS, seen)
        .await?;
    *nodes_seen = shared
        .registry
        .read_all_changed(&keys::NODES, nodes_seen)
        .await?;
    let apps: Vec<ApplicationRecord> = seen.iter().map(|a| a.value.clone()).collect();
    let alive = super::alive(nodes_seen.iter().map(|n| &n.value));
    // The coordinator places; everyone follows its assignment, placing a
    // new application provisionally (the same function) until it has.
    let assignment = match shared.coordinator.holder() {
        super::coordinator::Holder::Me(epoch) => {
            Some(super::coordinator::assign(shared, epoch, &apps, &alive).await?)
        }
        _ => shared
            .registry
            .read(&keys::assignment())
            .await?
            .map(|a| a.value),
    };
    let placements = apps
        .iter()
        .map(|app| {
            let placed = assignment
                .as_ref()
                .and_then(|a| a.applications.get(app.name.as_str()).cloned())
                .unwrap_or_else(|| super::assignment::place(app, &alive));
            (app.name.to_string(), placed)
        })
        .collect();
    *lock(&shared.runtime.placements) = placements;
    *lock(&shared.runtime.applications) = apps;
    let wanted = wanted(shared);
    let live: Vec<DeployId> = lock(&shared.runtime.applications)
        .iter()
        .filter_map(|a| a.release.live.clone())
        .collect();
    let mut to_stop = Vec::new();
    let mut forgotten = Vec::new();
    {
        let mut releases = lock(&shared.runtime.releases);
        // A live release that failed here (an outage at boot, a slow start)
        // is tried again after a pause; a pending one fails its deploy.
        releases.retain(|deploy, (_, slot)| {
            !matches!(slot, Slot::Failed { at, .. } if at.age() > RETRY_FAILED && live.contains(deploy))
        });
        for (deploy, app) in &wanted {
            if !releases.contains_key(deploy) {
                releases.insert(deploy.clone(), (app.clone(), Slot::Starting));
                tokio::spawn(start(Arc::clone(shared), app.clone(), deploy.clone()));
            }
        }
        let unwanted: Vec<DeployId> = releases
            .keys()
            .filter(|d| !wanted.contains_key(*d))
            .cloned()
            .collect();
        for deploy in unwanted {
            if let Some((_, Slot::Running { process, .. })) = releases.get_mut(&deploy)
                && let Some(process) = process.take()
            {
                to_stop.push((deploy.clone(), process));
            }
            if !matches!(releases.get(&deploy), Some((_, Slot::Starting))) {
                releases.remove(&deploy);
                forgotten.push(deploy);
            }
        }
    }
    for (deploy, process) in to_stop {
        tracing::info!(%deploy, "release no longer wanted; stopping after the drain delay");
        tokio::spawn(async move {
            tokio::time::sleep(DRAIN).await;
            process.stop().await;
        });
    }
    // This node's copy of an artifact goes with the last release using it.
    for deploy in forgotten {
        let _ = tokio::fs::remove_file(artifact_cache(shared, &deploy)).await;
    }
    super::heartbeat::report(shared).await?;
    publish_routing(shared, nodes_seen).await
}

/// Builds the routing document from the alive nodes' records (this node's
/// own serving taken fresh from the runtime).
async fn publish_routing(
    shared: &Arc<Shared>,
    nodes_seen: &[Versioned<NodeRecord>],
) -> Result<(), RegistryError> {
    let fleet = match shared.fleet_id.get() {
        Some(id) => id.clone(),
        None => match shared.registry.read(&keys::fleet()).await? {
            Some(fleet) => shared.fleet_id.get_or_init(|| fleet.value.id).clone(),
            None => return Ok(()),
        },
    };
    let mut nodes = super::alive(nodes_seen.iter().map(|n| &n.value));
    for node in nodes.iter_mut().filter(|n| n.id == shared.id) {
        node.serving = shared.runtime.serving();
    }
    // The first document waits until the releases this node found wanted
    // at start have settled (or a minute has passed): published earlier, it
    // would withdraw routes this node is about to serve again.
    let first = lock(&shared.routing).is_none();
    let starting = lock(&shared.runtime.releases)
        .values()
        .any(|(_, slot)| matches!(slot, Slot::Starting));
    if first && starting && shared.started_at.age() < SETTLE {
        return Ok(());
    }
    let apps = lock(&shared.runtime.applications).clone();
    let routing = super::routing::build(&shared.config, &fleet, &apps, &nodes);
    *lock(&shared.routing) = Some(Arc::new(routing));
    Ok(())
}

/// Fetches the artifact (the local copy when this node accepted it) and
/// runs the release; the outcome lands in the runtime and is reported.
async fn start(shared: Arc<Shared>, app: AppName, deploy: DeployId) {
    let outcome = async {
        let celld = shared.runtime.celld.as_ref().ok_or_else(|| {
            Failure::new(
                "celld-start",
                format!(
                    "node {} has no runtime: {}",
                    shared.id,
                    shared
                        .runtime
                        .celld_error
                        .as_deref()
                        .unwrap_or("workerd missing")
                ),
            )
        })?;
        let artifact = fetch_artifact(&shared, &deploy).await?;
        celld.run(&app, &deploy, &artifact).await
    }
    .await;
    let slot = match outcome {
        Ok(process) => {
            tracing::info!(%deploy, url = %process.url, "release running");
            Slot::Running {
                url: process.url.clone(),
                process: Some(process),
            }
        }
        Err(failure) => {
            tracing::warn!(%deploy, code = failure.code, detail = %failure.detail, "release failed to start");
            Slot::Failed {
                failure,
                at: Timestamp::now(),
            }
        }
    };
    let orphan = {
        let mut releases = lock(&shared.runtime.releases);
        match releases.get_mut(&deploy) {
            Some(entry) => {
                entry.1 = slot;
                None
            }
            // Unwanted while it started: stop it at once.
            None => match slot {
                Slot::Running { process, .. } => process,
                _ => None,
            },
        }
    };
    if let Some(process) = orphan {
        process.stop().await;
    }
    shared.wake.notify_one();
}

/// `<state>/artifacts/<app>/<hex>.tar.gz`, downloaded from the bucket unless
/// this node already holds it.
pub fn artifact_cache(shared: &Shared, deploy: &DeployId) -> std::path::PathBuf {
    shared
        .local
        .dir
        .join("artifacts")
        .join(deploy.application().as_str())
        .join(format!("{}.tar.gz", deploy.hex()))
}

async fn fetch_artifact(shared: &Shared, deploy: &DeployId) -> Result<std::path::PathBuf, Failure> {
    let path = artifact_cache(shared, deploy);
    if path.is_file() {
        return Ok(path);
    }
    let unavailable =
        |e: String| Failure::new("celld-start", format!("cannot fetch the artifact: {e}"));
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| unavailable(e.to_string()))?;
    }
    let partial = path.with_extension("part");
    let found = shared
        .registry
        .store()
        .get_file(&keys::artifact(deploy), &partial)
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    if !found {
        let _ = tokio::fs::remove_file(&partial).await;
        return Err(Failure::new(
            "artifact-invalid",
            "the artifact is missing from the registry bucket",
        ));
    }
    tokio::fs::rename(&partial, &path)
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    Ok(path)
}

/// On shutdown: every release stops (SIGTERM, then SIGKILL after a grace).
async fn stop_all(shared: &Shared) {
    let processes: Vec<_> = lock(&shared.runtime.releases)
        .values_mut()
        .filter_map(|(_, slot)| match slot {
            Slot::Running { process, .. } => process.take(),
            _ => None,
        })
        .collect();
    futures_util::future::join_all(processes.into_iter().map(|p| p.stop())).await;
}
