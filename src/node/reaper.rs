//! The coordinator's reaper (DESIGN §9): a deploy nobody carries any more —
//! not terminal, unmoved for the liveness window, its accepting node not
//! alive — is recorded `failed`/`deploy-timeout` with the same detail the
//! read-time judgement gives, and its `pending` cleared; a `pending` still
//! naming a failed or superseded deploy (its carrier stopped between the two
//! writes) is cleared too; terminal records older than seven days go, with
//! their artifacts, except the live release's.

use std::time::Duration;

use super::Shared;
use super::coordinator::Holder;
use super::routes::deploys::{LIVENESS_WINDOW, timeout_detail};
use crate::names::DeployId;
use crate::registry::{ApplicationRecord, Change, DeployState, DeployStatus, RegistryError, keys};
use crate::wire::Timestamp;

/// How long a terminal deploy record is kept.
pub const RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

pub async fn reap(shared: &Shared) -> Result<(), RegistryError> {
    let listing = crate::store::list_all(shared.registry.store(), keys::DEPLOYS, false).await?;
    if listing.objects.is_empty() {
        return Ok(());
    }
    let nodes = shared.registry.read_all(&keys::NODES).await?;
    let alive = super::alive(nodes.iter().map(|n| &n.value));
    let apps = shared.registry.read_all(&keys::APPLICATIONS).await?;
    let live = |id: &DeployId| {
        apps.iter()
            .any(|a| a.value.release.live.as_ref() == Some(id))
    };
    let pending = |id: &DeployId| {
        apps.iter()
            .any(|a| a.value.release.pending.as_ref() == Some(id))
    };
    for object in listing.objects {
        if !matches!(shared.coordinator.holder(), Holder::Me(_)) {
            return Ok(());
        }
        let Some(id) = keys::deploy_of(&object.key) else {
            continue;
        };
        let Some(record) = shared.registry.read(&keys::deploy(&id)).await? else {
            continue;
        };
        let record = record.value;
        if !record.state.is_terminal() && record.updated_at.age() > LIVENESS_WINDOW {
            let carried = alive.iter().any(|n| n.id == record.accepted_by);
            if !carried {
                timeout(shared, &id).await?;
            }
        } else if matches!(record.state, DeployState::Failed | DeployState::Superseded)
            && pending(&id)
        {
            // Its carrier (or an earlier pass) stopped between recording the
            // end and clearing `pending`: finish that step.
            clear_pending(shared, &id).await?;
        }
        if record.state.is_terminal() && record.updated_at.age() > RETENTION && !live(&id) {
            // The artifact goes first: a pass cut short between the two
            // leaves a record the next pass removes, never an artifact no
            // record names.
            shared.registry.store().delete(&keys::artifact(&id)).await?;
            shared.registry.remove(&keys::deploy(&id)).await?;
            tracing::info!(deploy = %id, "deleted a deploy record past retention");
        }
    }
    Ok(())
}

/// Records the deploy-timeout (if still unmoved) and clears `pending`.
async fn timeout(shared: &Shared, id: &DeployId) -> Result<(), RegistryError> {
    let mut reaped = false;
    shared
        .registry
        .update(&keys::deploy(id), |current: Option<&DeployStatus>| {
            reaped = false;
            Ok::<_, RegistryError>(match current {
                Some(record)
                    if !record.state.is_terminal() && record.updated_at.age() > LIVENESS_WINDOW =>
                {
                    let mut next = record.clone();
                    next.state = DeployState::Failed;
                    next.code = Some("deploy-timeout".into());
                    next.detail = Some(timeout_detail(record));
                    next.updated_at = Timestamp::now();
                    reaped = true;
                    Change::Put(next)
                }
                _ => Change::Keep,
            })
        })
        .await?;
    if !reaped {
        return Ok(());
    }
    tracing::info!(deploy = %id, "reaped a deploy its carrier abandoned");
    clear_pending(shared, id).await
}

/// Clears the application's `pending` when it still names `id`.
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
