//! `/v1/operators`: list, register and remove operator keys, with every
//! authorization rule of node-api.txt (Operators).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde_json::Value;

use crate::auth::PublicJwk;
use crate::names::{OperatorId, ScopePattern, scope_covers};
use crate::node::caller::OperatorCaller;
use crate::node::json::JsonBody;
use crate::node::{ApiError, Shared};
use crate::registry::{Change, RegistryError, Role, TrustedOperator, V1, keys};
use crate::wire::Code;
use crate::wire::Timestamp;
use crate::wire::answers::{OperatorAnswer, OperatorList, Removed};

/// Is `other` in `me`'s one-step rotation lineage: itself, the key it
/// supersedes, or a key superseding it?
fn in_lineage(me: &TrustedOperator, other: &TrustedOperator) -> bool {
    other.id == me.id
        || me.supersedes.as_ref() == Some(&other.id)
        || other.supersedes.as_ref() == Some(&me.id)
}

async fn all_operators(shared: &Shared) -> Result<Vec<TrustedOperator>, ApiError> {
    let mut operators: Vec<TrustedOperator> = shared
        .registry
        .read_all(&keys::OPERATORS)
        .await?
        .into_iter()
        .map(|r| r.value)
        .collect();
    operators.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(operators)
}

pub async fn list(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
) -> Result<Json<OperatorList>, ApiError> {
    let mut operators = all_operators(&shared).await?;
    let scoped = me.role != Role::Admin;
    if scoped {
        operators.retain(|other| in_lineage(&me, other));
    }
    Ok(Json(OperatorList { operators, scoped }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NewOperator {
    id: String,
    public_key: Value,
    #[serde(default)]
    role: Option<Role>,
    #[serde(default)]
    supersedes: Option<String>,
    #[serde(default)]
    applications: Option<Vec<String>>,
}

/// Checks a public JWK: an Ed25519 OKP key with a 32-byte `x` and no `d`.
fn public_key(value: &Value) -> Result<PublicJwk, ApiError> {
    let bad = |why: &str| ApiError::invalid_input(format!("publicKey {why}"));
    let object = value
        .as_object()
        .ok_or_else(|| bad("must be a JWK object"))?;
    if object.contains_key("d") {
        return Err(bad(
            "must be the public half only: it carries the private member d",
        ));
    }
    let field = |name: &str| object.get(name).and_then(Value::as_str);
    if field("kty") != Some("OKP") || field("crv") != Some("Ed25519") {
        return Err(bad("must be an Ed25519 key (kty OKP, crv Ed25519)"));
    }
    let x = field("x").ok_or_else(|| bad("needs x"))?;
    let bytes = URL_SAFE_NO_PAD
        .decode(x)
        .map_err(|_| bad("x must be base64url without padding"))?;
    let bytes: [u8; 32] = bytes
        .try_into()
        .map_err(|_| bad("x must encode 32 bytes"))?;
    ed25519_dalek::VerifyingKey::from_bytes(&bytes)
        .map_err(|_| bad("x is not a valid Ed25519 point"))?;
    Ok(PublicJwk {
        kty: "OKP".into(),
        crv: "Ed25519".into(),
        x: x.to_owned(),
    })
}

fn scope_error(detail: &str) -> ApiError {
    ApiError::new(Code::AuthScope, detail)
}

pub async fn register(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
    JsonBody(body): JsonBody<NewOperator>,
) -> Result<(StatusCode, Json<OperatorAnswer>), ApiError> {
    let id = OperatorId::parse(&body.id)
        .map_err(|rule| ApiError::invalid_input(format!("id {:?}: {rule}", body.id)))?;
    let key = public_key(&body.public_key)?;
    let supersedes = body
        .supersedes
        .as_deref()
        .map(|s| {
            OperatorId::parse(s)
                .map_err(|rule| ApiError::invalid_input(format!("supersedes {s:?}: {rule}")))
        })
        .transpose()?;
    let requested = body
        .applications
        .as_ref()
        .map(|patterns| {
            patterns
                .iter()
                .map(|p| {
                    ScopePattern::parse(p).map_err(|rule| {
                        ApiError::invalid_input(format!("applications {p:?}: {rule}"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;

    let replacing_self = match &supersedes {
        Some(target) if *target != me.id => {
            return Err(scope_error("a key may only supersede itself"));
        }
        Some(_) => true,
        None => false,
    };
    let role = body.role.unwrap_or(if replacing_self {
        me.role
    } else {
        Role::Operator
    });
    if role == Role::Admin && me.role != Role::Admin {
        return Err(scope_error("only an admin key may register an admin key"));
    }
    let applications = match requested {
        Some(patterns) => patterns,
        None if replacing_self => me.applications.clone(),
        None => {
            return Err(ApiError::invalid_input(
                "a new key needs an explicit applications scope, e.g. [\"shop\", \"shop-*\"]",
            ));
        }
    };
    if applications
        .iter()
        .any(|p| !scope_covers(&me.applications, p))
    {
        return Err(scope_error(
            "the requested scope reaches past this key's own",
        ));
    }
    if applications.contains(&ScopePattern::All) && me.role != Role::Admin && !replacing_self {
        return Err(scope_error("only an admin key may grant *"));
    }

    let wanted = TrustedOperator {
        v: V1,
        id: id.clone(),
        public_key: key,
        role,
        applications,
        supersedes,
        created_at: Timestamp::now(),
        created_by: me.id.to_string(),
    };
    let mut created = false;
    let stored = shared
        .registry
        .update(
            &keys::operator(&id),
            |current: Option<&TrustedOperator>| match current {
                None => {
                    created = true;
                    Ok(Change::Put(wanted.clone()))
                }
                Some(existing) if same_grant(existing, &wanted) => {
                    created = false;
                    Ok(Change::Keep)
                }
                Some(_) => Err(ApiError::invalid_input(format!(
                    "operator {id} already exists with a different key or grant; choose another id"
                ))),
            },
        )
        .await?
        .ok_or_else(|| {
            ApiError::from(RegistryError::Conflict {
                key: keys::operator(&id).path().to_owned(),
            })
        })?;
    if created {
        tracing::info!(actor = %me.id, operator = %id, role = ?stored.role, "registered operator key");
    }
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(OperatorAnswer { operator: stored })))
}

/// A repeated registration is the same grant: key, tier, scope, lineage.
fn same_grant(a: &TrustedOperator, b: &TrustedOperator) -> bool {
    a.public_key == b.public_key
        && a.role == b.role
        && a.applications == b.applications
        && a.supersedes == b.supersedes
}

pub async fn remove(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
    Path(id): Path<String>,
) -> Result<Json<Removed>, ApiError> {
    let id = OperatorId::parse(&id)
        .map_err(|rule| ApiError::invalid_input(format!("operator id {id:?}: {rule}")))?;
    let outside = || {
        scope_error("a key other than an admin may only remove keys of its own rotation lineage")
    };
    let target = shared
        .registry
        .read(&keys::operator(&id))
        .await?
        .map(|r| r.value);
    let target = match (target, me.role) {
        (Some(target), Role::Admin) => target,
        (Some(target), Role::Operator) if in_lineage(&me, &target) => target,
        // A non-admin learns nothing about keys outside its lineage.
        (_, Role::Operator) => return Err(outside()),
        (None, Role::Admin) => return Err(ApiError::not_found(format!("no operator {id}"))),
    };
    if target.role == Role::Admin {
        let admins = all_operators(&shared)
            .await?
            .into_iter()
            .filter(|o| o.role == Role::Admin)
            .count();
        if admins <= 1 {
            return Err(ApiError::invalid_input(format!(
                "{id} is the fleet's last admin key; register another admin key first"
            )));
        }
    }
    shared.registry.remove(&keys::operator(&id)).await?;
    // Two admins removing each other at once both pass the check above:
    // whoever finds no admin left puts its target back.
    if target.role == Role::Admin
        && !all_operators(&shared)
            .await?
            .iter()
            .any(|o| o.role == Role::Admin)
    {
        shared
            .registry
            .create(&keys::operator(&id), &target)
            .await?;
        return Err(ApiError::invalid_input(format!(
            "{id} was the fleet's last admin key; it stays registered"
        )));
    }
    tracing::info!(actor = %me.id, operator = %id, "removed operator key");
    Ok(Json(Removed {
        removed: id.to_string(),
    }))
}
