//! Deleting an application, on the coordinator only: the application record
//! first (so every node stops serving it on its next pass), then its claims,
//! its deploy records and its artifacts. The retired-past-grace sweep goes
//! through the same function. Deletions run one at a time, so concurrent
//! requests for one application delete it once and find it gone after.

use super::Shared;
use super::coordinator::Holder;
use crate::names::AppName;
use crate::registry::{RegistryError, keys};
use crate::wire::Timestamp;

/// Deletes `name`: its record, then whatever it left — claims, deploy
/// records, artifacts, this node's cached artifacts — even when the record
/// is already gone (an interrupted deletion is finished by the next one).
/// Answers whether anything existed. The caller holds the lease; it is
/// checked again under the deletion lock and before every step, so a node
/// that lost it stops at once.
pub async fn delete(shared: &Shared, name: &AppName, actor: &str) -> Result<bool, DeleteError> {
    let _one_at_a_time = shared.coordinator.deletions.lock().await;
    let fence = || match shared.coordinator.holder() {
        Holder::Me(_) => Ok(()),
        _ => Err(DeleteError::NotCoordinator),
    };
    fence()?;
    let record = shared.registry.read(&keys::application(name)).await?;
    if record.is_some() {
        shared.registry.remove(&keys::application(name)).await?;
        shared.wake.notify_one();
    }
    fence()?;
    let claims = remove_claims(shared, name).await?;
    fence()?;
    let deploys = shared
        .registry
        .remove_under(&keys::deploys_of(name))
        .await?;
    fence()?;
    let artifacts = shared
        .registry
        .remove_under(&keys::artifacts_of(name))
        .await?;
    let existed = record.is_some() || claims + deploys + artifacts > 0;
    if existed {
        tracing::info!(event = "application.deleted", application = %name, %actor, "deleted application");
    }
    Ok(existed)
}

/// Why a deletion stopped.
#[derive(Debug, thiserror::Error)]
pub enum DeleteError {
    #[error("this node does not hold the coordinator lease (any more)")]
    NotCoordinator,
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

impl From<DeleteError> for crate::node::ApiError {
    fn from(err: DeleteError) -> Self {
        match err {
            DeleteError::NotCoordinator => crate::node::ApiError::new(
                crate::wire::Code::CoordinatorUnavailable,
                "this node lost the coordinator lease while deleting; retry to finish the deletion",
            ),
            DeleteError::Registry(e) => e.into(),
        }
    }
}

/// Every claim the application holds, listed on it or left behind by an
/// interrupted claim; answers how many there were.
async fn remove_claims(shared: &Shared, name: &AppName) -> Result<usize, RegistryError> {
    let mut removed = 0;
    for claim in shared.registry.read_all(&keys::CLAIMS).await? {
        if claim.value.application == *name {
            shared
                .registry
                .remove(&keys::claim(&claim.value.host))
                .await?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// The coordinator's sweep: retired applications past their grace period.
pub async fn sweep(shared: &Shared) -> Result<(), DeleteError> {
    let now = Timestamp::now();
    for app in shared.registry.read_all(&keys::APPLICATIONS).await? {
        let expired = app
            .value
            .retired
            .as_ref()
            .is_some_and(|r| r.grace_until <= now);
        if expired {
            delete(
                shared,
                &app.value.name,
                "coordinator (retirement grace ended)",
            )
            .await?;
        }
    }
    Ok(())
}
