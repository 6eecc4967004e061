//! Deleting an application, on the coordinator only: the application record
//! first (so every node stops serving it on its next pass), then its claims,
//! its deploy records and its artifacts. The retired-past-grace sweep goes
//! through the same function. Deletions run one at a time, so concurrent
//! requests for one application delete it once and find it gone after.

use super::Shared;
use super::coordinator::Holder;
use crate::names::AppName;
use crate::registry::{ApplicationRecord, RegistryError, keys};
use crate::wire::Timestamp;

/// Deletes `name` if it exists; answers whether it did. The caller holds
/// the lease (checked again here, under the deletion lock).
pub async fn delete(shared: &Shared, name: &AppName, actor: &str) -> Result<bool, RegistryError> {
    let _one_at_a_time = shared.coordinator.deletions.lock().await;
    if !matches!(shared.coordinator.holder(), Holder::Me(_)) {
        return Err(RegistryError::Conflict {
            key: keys::lease().path().to_owned(),
        });
    }
    let Some(record) = shared.registry.read(&keys::application(name)).await? else {
        return Ok(false);
    };
    shared.registry.remove(&keys::application(name)).await?;
    shared.wake.notify_one();
    remove_claims(shared, &record.value).await?;
    shared
        .registry
        .remove_under(&keys::deploys_of(name))
        .await?;
    shared
        .registry
        .remove_under(&keys::artifacts_of(name))
        .await?;
    tracing::info!(event = "application.deleted", application = %name, %actor, "deleted application");
    Ok(true)
}

/// Every claim the application holds, listed on it or left behind by an
/// interrupted claim.
async fn remove_claims(shared: &Shared, record: &ApplicationRecord) -> Result<(), RegistryError> {
    for claim in shared.registry.read_all(&keys::CLAIMS).await? {
        if claim.value.application == record.name {
            shared
                .registry
                .remove(&keys::claim(&claim.value.host))
                .await?;
        }
    }
    Ok(())
}

/// The coordinator's sweep: retired applications past their grace period.
pub async fn sweep(shared: &Shared) -> Result<(), RegistryError> {
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
