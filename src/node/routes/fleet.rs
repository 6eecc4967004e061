//! `/v1/fleet/freeze`: stop and restart deploy intake fleet-wide.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;

use crate::node::caller::OperatorCaller;
use crate::node::json::OptionalJsonBody;
use crate::node::{ApiError, Shared};
use crate::registry::{Change, FreezeRecord, RegistryError, Role, TrustedOperator, V1, keys};
use crate::wire::Code;
use crate::wire::Timestamp;
use crate::wire::answers::{FreezeAnswer, Lifted};

/// The longest freeze reason, in characters.
const MAX_REASON: usize = 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FreezeBody {
    #[serde(default)]
    reason: Option<String>,
}

/// The two writing routes are admin decisions about the fleet itself.
fn require_admin(me: &TrustedOperator) -> Result<(), ApiError> {
    if me.role == Role::Admin {
        return Ok(());
    }
    Err(ApiError::new(
        Code::AuthScope,
        "freezing deploys is a decision the fleet makes about itself rather than one taken \
inside an application: it needs an admin key",
    ))
}

pub async fn freeze(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
    OptionalJsonBody(body): OptionalJsonBody<FreezeBody>,
) -> Result<(StatusCode, Json<FreezeAnswer>), ApiError> {
    require_admin(&me)?;
    let reason = body.and_then(|b| b.reason);
    if reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > MAX_REASON)
    {
        return Err(ApiError::invalid_input(format!(
            "reason is limited to {MAX_REASON} characters"
        )));
    }
    let wanted = FreezeRecord {
        v: V1,
        frozen_at: Timestamp::now(),
        by: me.id.to_string(),
        reason,
    };
    let mut created = false;
    let stored = shared
        .registry
        .update(&keys::freeze(), |current: Option<&FreezeRecord>| {
            created = current.is_none();
            Ok::<_, ApiError>(if created {
                Change::Put(wanted.clone())
            } else {
                Change::Keep
            })
        })
        .await?
        .ok_or_else(|| {
            ApiError::from(RegistryError::Conflict {
                key: keys::freeze().path().to_owned(),
            })
        })?;
    if created {
        tracing::info!(actor = %me.id, "froze deploys fleet-wide");
    }
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(FreezeAnswer {
            freeze: stored,
            created: Some(created),
        }),
    ))
}

pub async fn lift(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
) -> Result<Json<Lifted>, ApiError> {
    require_admin(&me)?;
    let lifted = shared.registry.read(&keys::freeze()).await?.is_some();
    if lifted {
        shared.registry.remove(&keys::freeze()).await?;
        tracing::info!(actor = %me.id, "lifted the deploy freeze");
    }
    Ok(Json(Lifted { lifted }))
}

pub async fn status(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(_): OperatorCaller,
) -> Result<Json<FreezeAnswer>, ApiError> {
    match shared.registry.read(&keys::freeze()).await? {
        Some(record) => Ok(Json(FreezeAnswer {
            freeze: record.value,
            created: None,
        })),
        None => Err(ApiError::not_found("this fleet holds no freeze record")
            .titled("Deploys are not frozen")),
    }
}
