//! The carrier: the accepting node takes each deploy it accepted to a
//! terminal state (DESIGN §8) — artifact stored (`stored`), the release
//! made pending (`activating`), then `live` once every node that should run
//! it reports it live, or `failed` with the first failure, or `superseded`
//! when a newer deploy takes `pending`. Nothing that was live stops.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Shared;
use crate::names::DeployId;
use crate::registry::{
    ApplicationRecord, ArtifactInfo, Change, DeployState, DeployStatus, NodeProgress,
    RegistryError, keys,
};
use crate::wire::Timestamp;

/// How long the assigned nodes have to report a release live.
const ACTIVATION: Duration = Duration::from_secs(180);
/// How often the carrier looks at the registry while it waits.
const POLL: Duration = Duration::from_millis(200);
/// The carrier touches `updatedAt` at least this often.
const TOUCH: Duration = Duration::from_secs(20);

/// Carries one deploy; logs rather than returns its errors.
pub async fn carry(shared: Arc<Shared>, id: DeployId, artifact: PathBuf, info: ArtifactInfo) {
    let Err(e) = run(&shared, &id, &artifact, info).await else {
        return;
    };
    // A deploy is never left behind unfinished by a live carrier: record
    // the failure (clearing `pending`), retrying while the registry is away.
    tracing::warn!(deploy = %id, error = %e, "the carrier could not finish; recording the failure");
    let detail = format!(
        "the registry failed while node {} carried the deploy: {e}",
        shared.id
    );
    for attempt in 0..30u32 {
        match fail(&shared, &id, "deploy-timeout", detail.clone()).await {
            Ok(()) => return,
            Err(e) => {
                tracing::debug!(deploy = %id, error = %e, attempt, "recording the failure failed");
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        }
    }
}

/// Writes the deploy record through the CAS helper, unless it is terminal.
async fn set(
    shared: &Shared,
    id: &DeployId,
    change: impl Fn(&mut DeployStatus),
) -> Result<Option<DeployStatus>, RegistryError> {
    shared
        .registry
        .update(&keys::deploy(id), |current: Option<&DeployStatus>| {
            Ok::<_, RegistryError>(match current {
                Some(record) if !record.state.is_terminal() => {
                    let mut next = record.clone();
                    change(&mut next);
                    next.updated_at = Timestamp::now();
                    Change::Put(next)
                }
                _ => Change::Keep,
            })
        })
        .await
}

async fn fail(
    shared: &Shared,
    id: &DeployId,
    code: &str,
    detail: String,
) -> Result<(), RegistryError> {
    tracing::info!(deploy = %id, code, %detail, "deploy failed");
    set(shared, id, |d| {
        d.state = DeployState::Failed;
        d.code = Some(code.to_owned());
        d.detail = Some(detail.clone());
    })
    .await?;
    clear_pending(shared, id).await
}

async fn clear_pending(shared: &Shared, id: &DeployId) -> Result<(), RegistryError> {
    shared
        .registry
        .update(
            &keys::application(&id.application()),
            |current: Option<&ApplicationRecord>| {
                Ok::<_, RegistryError>(match current {
                    Some(app) if app.release.pending.as_ref() == Some(id) => {
                        let mut next = app.clone();
                        next.release.pending = None;
                        next.updated_at = Timestamp::now();
                        Change::Put(next)
                    }
                    _ => Change::Keep,
                })
            },
        )
        .await?;
    shared.wake.notify_one();
    Ok(())
}

async fn run(
    shared: &Shared,
    id: &DeployId,
    artifact: &std::path::Path,
    info: ArtifactInfo,
) -> Result<(), RegistryError> {
    let app_name = id.application();
    shared
        .registry
        .store()
        .put_file(&keys::artifact(id), artifact)
        .await?;
    set(shared, id, |d| {
        d.state = DeployState::Stored;
        d.artifact = Some(info.clone());
    })
    .await?;

    // Take `pending`; a deploy it replaces there is superseded.
    let mut replaced = None;
    let mut refused = None;
    shared
        .registry
        .update(
            &keys::application(&app_name),
            |current: Option<&ApplicationRecord>| {
                replaced = None;
                refused = None;
                Ok::<_, RegistryError>(match current {
                    None => {
                        refused = Some(
                            "the application was deleted while the deploy was stored".to_owned(),
                        );
                        Change::Keep
                    }
                    Some(app) if app.blocked || app.retired.is_some() => {
                        refused = Some(
                            "the application was blocked or retired while the deploy was stored"
                                .to_owned(),
                        );
                        Change::Keep
                    }
                    Some(app) => {
                        let mut next = app.clone();
                        replaced = next.release.pending.replace(id.clone());
                        next.updated_at = Timestamp::now();
                        Change::Put(next)
                    }
                })
            },
        )
        .await?;
    if let Some(detail) = refused {
        return fail(shared, id, "unplaced", detail).await;
    }
    if let Some(old) = replaced.filter(|old| old != id) {
        set(shared, &old, |d| {
            d.state = DeployState::Superseded;
            d.detail = Some(format!("superseded by {id}"));
        })
        .await?;
    }
    set(shared, id, |d| d.state = DeployState::Activating).await?;
    shared.wake.notify_one();

    let started = Instant::now();
    let mut touched = Instant::now();
    loop {
        tokio::time::sleep(POLL).await;
        if started.elapsed() > ACTIVATION {
            let detail = format!("not live within {ACTIVATION:?}: the registry could not be read");
            return fail(shared, id, "activation-timeout", detail).await;
        }
        // A registry read that fails is tried again on the next poll.
        let app = match shared.registry.read(&keys::application(&app_name)).await {
            Ok(app) => app.map(|a| a.value),
            Err(e) => {
                tracing::debug!(deploy = %id, error = %e, "carrier poll failed; retrying");
                continue;
            }
        };
        let Some(app) = app.filter(|a| a.release.pending.as_ref() == Some(id)) else {
            set(shared, id, |d| {
                d.state = DeployState::Superseded;
                d.detail
                    .get_or_insert_with(|| "a newer deploy took its place".into());
            })
            .await?;
            return Ok(());
        };
        let nodes = match shared.registry.read_all(&keys::NODES).await {
            Ok(nodes) => nodes,
            Err(e) => {
                tracing::debug!(deploy = %id, error = %e, "carrier poll failed; retrying");
                continue;
            }
        };
        let alive = super::alive(nodes.iter().map(|n| &n.value));
        // The nodes the assignment gives it (provisionally placed until the
        // coordinator has written one for it).
        let assigned = match shared.registry.read(&keys::assignment()).await {
            Ok(assignment) => {
                assignment.and_then(|a| a.value.applications.get(app_name.as_str()).cloned())
            }
            Err(e) => {
                tracing::debug!(deploy = %id, error = %e, "carrier poll failed; retrying");
                continue;
            }
        }
        .unwrap_or_else(|| super::assignment::place(&app, &alive));
        if assigned.nodes.is_empty() {
            let reason = assigned
                .reason
                .unwrap_or_else(|| "no node is assigned to it".into());
            return fail(shared, id, "unplaced", reason).await;
        }
        let nodes: Vec<_> = alive
            .into_iter()
            .filter(|n| assigned.nodes.iter().any(|a| a == n.id.as_str()))
            .collect();
        if nodes.is_empty() {
            // A stale assignment: the coordinator places it again shortly.
            continue;
        }
        let mut progress = BTreeMap::new();
        let mut failure = None;
        for node in &nodes {
            let report = if let Some(f) = node.failures.get(id.as_str()) {
                failure.get_or_insert_with(|| {
                    (f.code.clone(), format!("on node {}: {}", node.id, f.detail))
                });
                NodeProgress {
                    state: "failed".into(),
                    detail: Some(f.detail.clone()),
                    at: f.at,
                }
            } else if node
                .serving
                .get(app_name.as_str())
                .is_some_and(|s| s.deploy == id.as_str())
            {
                NodeProgress {
                    state: "live".into(),
                    detail: None,
                    at: node.heartbeat_at,
                }
            } else {
                NodeProgress {
                    state: "starting".into(),
                    detail: None,
                    at: node.heartbeat_at,
                }
            };
            progress.insert(node.id.to_string(), report);
        }
        if let Some((code, detail)) = failure {
            set(shared, id, |d| d.nodes = progress.clone()).await?;
            return fail(shared, id, &code, detail).await;
        }
        if progress.values().all(|p| p.state == "live") {
            return promote(shared, id, &app, progress).await;
        }
        if started.elapsed() > ACTIVATION {
            let waiting: Vec<&str> = progress
                .iter()
                .filter(|(_, p)| p.state != "live")
                .map(|(n, _)| n.as_str())
                .collect();
            let detail = format!("not live within {ACTIVATION:?} on {}", waiting.join(", "));
            set(shared, id, |d| d.nodes = progress.clone()).await?;
            return fail(shared, id, "activation-timeout", detail).await;
        }
        if touched.elapsed() > TOUCH {
            set(shared, id, |d| d.nodes = progress.clone()).await?;
            touched = Instant::now();
        }
    }
}

/// Every node runs it: it becomes the live release.
async fn promote(
    shared: &Shared,
    id: &DeployId,
    app: &ApplicationRecord,
    progress: BTreeMap<String, NodeProgress>,
) -> Result<(), RegistryError> {
    let mut promoted = false;
    shared
        .registry
        .update(
            &keys::application(&app.name),
            |current: Option<&ApplicationRecord>| {
                promoted = false;
                Ok::<_, RegistryError>(match current {
                    Some(app) if app.release.pending.as_ref() == Some(id) => {
                        let mut next = app.clone();
                        next.release.live = Some(id.clone());
                        next.release.pending = None;
                        next.updated_at = Timestamp::now();
                        promoted = true;
                        Change::Put(next)
                    }
                    _ => Change::Keep,
                })
            },
        )
        .await?;
    if !promoted {
        set(shared, id, |d| d.state = DeployState::Superseded).await?;
        return Ok(());
    }
    let urls: Vec<String> = shared
        .config
        .platform_domains
        .iter()
        .map(|domain| format!("http://{}.{domain}", app.name))
        .collect();
    set(shared, id, |d| {
        d.state = DeployState::Live;
        d.nodes = progress.clone();
        d.urls = urls.clone();
    })
    .await?;
    tracing::info!(deploy = %id, "deploy live");
    shared.wake.notify_one();
    Ok(())
}
