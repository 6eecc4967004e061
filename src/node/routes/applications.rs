//! `/v1/applications…`: reads, the admin routes (block, unblock, labels),
//! the setters (retire, unretire, selector, replicas), the trust policy and
//! the coordinator-gated delete. Application scope is checked before any
//! I/O; a missing application is not-found; every answer but the listing
//! and the delete is `{"application": …}`, labels removed for non-admins.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::names::AppName;
use crate::node::caller::{Caller, OperatorCaller};
use crate::node::json::JsonBody;
use crate::node::{ApiError, Shared, forward};
use crate::registry::{ApplicationRecord, Change, Replicas, Retirement, TrustEntry, keys};
use crate::wire::{Code, Timestamp};

pub fn app_name(name: &str) -> Result<AppName, ApiError> {
    AppName::parse(name)
        .map_err(|rule| ApiError::invalid_input(format!("application name {name:?}: {rule}")))
}

/// The record as this caller may see it: fleet-owned labels are removed
/// for operators other than admins.
pub fn redact(record: &ApplicationRecord, caller: &Caller) -> Value {
    let mut value = serde_json::to_value(record).unwrap_or(Value::Null);
    if matches!(caller, Caller::Operator(_))
        && !caller.is_admin()
        && let Value::Object(map) = &mut value
    {
        map.remove("labels");
    }
    value
}

fn answer(record: &ApplicationRecord, caller: &Caller) -> Json<Value> {
    Json(json!({ "application": redact(record, caller) }))
}

/// One CAS update of an existing application; `change` answers whether it
/// changed anything (no write when it did not).
pub async fn mutate(
    shared: &Shared,
    name: &AppName,
    mut change: impl FnMut(&mut ApplicationRecord) -> Result<bool, ApiError>,
) -> Result<ApplicationRecord, ApiError> {
    let stored = shared
        .registry
        .update(
            &keys::application(name),
            |current: Option<&ApplicationRecord>| {
                let Some(current) = current else {
                    return Err(ApiError::not_found(format!("no application {name}")));
                };
                let mut next = current.clone();
                Ok(if change(&mut next)? {
                    next.updated_at = Timestamp::now();
                    Change::Put(next)
                } else {
                    Change::Keep
                })
            },
        )
        .await?;
    shared.wake.notify_one();
    stored.ok_or_else(|| ApiError::not_found(format!("no application {name}")))
}

pub async fn list(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
) -> Result<Json<Value>, ApiError> {
    let caller = Caller::Operator(me);
    let scoped = !caller.is_admin();
    let mut records: Vec<ApplicationRecord> = shared
        .registry
        .read_all(&keys::APPLICATIONS)
        .await?
        .into_iter()
        .map(|r| r.value)
        .collect();
    records.sort_by(|a, b| a.name.cmp(&b.name));
    let applications: Vec<Value> = records
        .iter()
        .filter(|r| caller.require_reach(r.name.as_str()).is_ok())
        .map(|r| redact(r, &caller))
        .collect();
    Ok(Json(
        json!({ "applications": applications, "scoped": scoped }),
    ))
}

pub async fn show(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let caller = Caller::Operator(me);
    let name = app_name(&name)?;
    caller.require_reach(name.as_str())?;
    let record = shared.registry.read(&keys::application(&name)).await?;
    let record = record.ok_or_else(|| ApiError::not_found(format!("no application {name}")))?;
    Ok(answer(&record.value, &caller))
}

/// Scope first, then the admin tier.
fn admin_for(caller: &Caller, name: &AppName) -> Result<(), ApiError> {
    caller.require_reach(name.as_str())?;
    if !caller.is_admin() {
        return Err(ApiError::new(
            Code::AuthScope,
            "this route needs an admin key",
        ));
    }
    Ok(())
}

async fn set_blocked(
    shared: &Shared,
    me: crate::registry::TrustedOperator,
    name: &str,
    blocked: bool,
) -> Result<Json<Value>, ApiError> {
    let caller = Caller::Operator(me);
    let name = app_name(name)?;
    admin_for(&caller, &name)?;
    let record = mutate(shared, &name, |app| {
        Ok(std::mem::replace(&mut app.blocked, blocked) != blocked)
    })
    .await?;
    let event = if blocked {
        "application.blocked"
    } else {
        "application.unblocked"
    };
    tracing::info!(event, application = %name, actor = %caller.actor(), "{event}");
    Ok(answer(&record, &caller))
}

pub async fn block(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    set_blocked(&shared, me, &name, true).await
}

pub async fn unblock(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    set_blocked(&shared, me, &name, false).await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelsBody {
    labels: Option<Value>,
}

pub async fn labels(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
    Path(name): Path<String>,
    JsonBody(body): JsonBody<LabelsBody>,
) -> Result<Json<Value>, ApiError> {
    let caller = Caller::Operator(me);
    let name = app_name(&name)?;
    admin_for(&caller, &name)?;
    let rule = "labels must be an object of at most 64 string values, keys 1-128 and values at most 256 characters";
    let Some(Value::Object(given)) = body.labels else {
        return Err(ApiError::invalid_input(rule));
    };
    let mut labels = BTreeMap::new();
    for (key, value) in given {
        match value {
            Value::String(v)
                if (1..=128).contains(&key.chars().count()) && v.chars().count() <= 256 =>
            {
                labels.insert(key, v);
            }
            _ => return Err(ApiError::invalid_input(rule)),
        }
    }
    if labels.len() > 64 {
        return Err(ApiError::invalid_input(rule));
    }
    let record = mutate(&shared, &name, |app| {
        Ok(std::mem::replace(&mut app.labels, labels.clone()) != labels)
    })
    .await?;
    Ok(answer(&record, &caller))
}

pub async fn retire(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let name = app_name(&name)?;
    caller.require_reach(name.as_str())?;
    let grace = shared.config.retire_grace;
    let actor = caller.actor();
    let record = mutate(&shared, &name, |app| {
        if app.retired.is_some() {
            return Ok(false);
        }
        let now = Timestamp::now();
        app.retired = Some(Retirement {
            at: now,
            by: actor.clone(),
            grace_until: Timestamp::from(now.system_time() + grace),
        });
        Ok(true)
    })
    .await?;
    tracing::info!(event = "application.retired", application = %name, %actor, "application.retired");
    Ok(answer(&record, &caller))
}

pub async fn unretire(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let name = app_name(&name)?;
    caller.require_reach(name.as_str())?;
    let record = mutate(&shared, &name, |app| match &app.retired {
        None => Ok(false),
        Some(retired) if retired.grace_until <= Timestamp::now() => Err(ApiError::new(
            Code::GraceExpired,
            format!(
                "the grace period ended at {}: the application is being deleted",
                retired.grace_until
            ),
        )),
        Some(_) => {
            app.retired = None;
            Ok(true)
        }
    })
    .await?;
    Ok(answer(&record, &caller))
}

pub async fn selector(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    Path(name): Path<String>,
    JsonBody(body): JsonBody<Map<String, Value>>,
) -> Result<Json<Value>, ApiError> {
    let name = app_name(&name)?;
    caller.require_reach(name.as_str())?;
    let selector = match body.get("selector") {
        None => {
            return Err(ApiError::invalid_input(
                "selector must be given: an object of label values, or null to clear it",
            ));
        }
        Some(given) => crate::names::parse_selector(given).map_err(ApiError::invalid_input)?,
    };
    let record = mutate(&shared, &name, |app| {
        Ok(std::mem::replace(&mut app.selector, selector.clone()) != selector)
    })
    .await?;
    Ok(answer(&record, &caller))
}

pub async fn replicas(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    Path(name): Path<String>,
    JsonBody(body): JsonBody<Map<String, Value>>,
) -> Result<Json<Value>, ApiError> {
    let name = app_name(&name)?;
    caller.require_reach(name.as_str())?;
    let replicas = body
        .get("replicas")
        .and_then(Replicas::from_json)
        .ok_or_else(|| ApiError::invalid_input(crate::registry::REPLICAS_RULE))?;
    let record = mutate(&shared, &name, |app| {
        Ok(std::mem::replace(&mut app.replicas, replicas) != replicas)
    })
    .await?;
    Ok(answer(&record, &caller))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustBody {
    trust: Option<Vec<TrustInput>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustInput {
    issuer: String,
    subject: String,
}

pub async fn trust(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
    Path(name): Path<String>,
    JsonBody(body): JsonBody<TrustBody>,
) -> Result<Json<Value>, ApiError> {
    let caller = Caller::Operator(me);
    let name = app_name(&name)?;
    caller.require_reach(name.as_str())?;
    let given = body.trust.ok_or_else(|| {
        ApiError::invalid_input("trust must be given: a list of {issuer, subject}, [] clears it")
    })?;
    if given.len() > 32 {
        return Err(ApiError::invalid_input("at most 32 trust entries"));
    }
    let mut entries = Vec::new();
    for entry in given {
        let issuer_ok = entry
            .issuer
            .strip_prefix("https://")
            .or_else(|| entry.issuer.strip_prefix("http://"))
            .is_some_and(|rest| !rest.is_empty() && !rest.contains(char::is_whitespace));
        if !issuer_ok {
            return Err(ApiError::invalid_input(format!(
                "issuer {:?} must be the issuer's URL, e.g. https://token.actions.githubusercontent.com",
                entry.issuer
            )));
        }
        if let Err(rule) = trust_subject(&entry.subject) {
            return Err(ApiError::invalid_input(format!(
                "subject {:?}: {rule}",
                entry.subject
            )));
        }
        entries.push(TrustEntry {
            issuer: entry.issuer,
            subject: entry.subject,
        });
    }
    let record = mutate(&shared, &name, |app| {
        Ok(std::mem::replace(&mut app.trust, entries.clone()) != entries)
    })
    .await?;
    Ok(answer(&record, &caller))
}

#[derive(Debug, Deserialize)]
pub struct DeleteQuery {
    force: Option<String>,
}

pub async fn delete(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
    Path(name): Path<String>,
    Query(query): Query<DeleteQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let name = app_name(&name)?;
    caller.require_reach(name.as_str())?;
    let force = matches!(query.force.as_deref(), Some("1" | "true"));
    // Unforced, the record must say the application is retired past its
    // grace. Forced, even a missing record goes through: a deletion that
    // was interrupted after removing it is finished (claims, deploys,
    // artifacts left behind), and 404 only means nothing was left at all.
    if !force {
        let record = shared.registry.read(&keys::application(&name)).await?;
        let record = record.ok_or_else(|| ApiError::not_found(format!("no application {name}")))?;
        match &record.value.retired {
            Some(retired) if retired.grace_until <= Timestamp::now() => {}
            Some(retired) => {
                return Err(ApiError::new(
                    Code::RetirementRequired,
                    format!(
                        "{name} is in its retirement grace period until {}; wait, or delete with ?force=1",
                        retired.grace_until
                    ),
                ));
            }
            None => {
                return Err(ApiError::new(
                    Code::RetirementRequired,
                    format!("retire {name} first, or delete with ?force=1"),
                ));
            }
        }
    }
    match forward::gate(&shared, &headers).await? {
        forward::Gate::Here => {
            if crate::node::deletion::delete(&shared, &name, &caller.actor()).await? {
                Ok(Json(json!({ "deleted": name.to_string() })).into_response())
            } else {
                Err(ApiError::not_found(format!("no application {name}")))
            }
        }
        forward::Gate::There(target) => {
            forward::forward(
                &shared,
                &target,
                "DELETE",
                &format!(
                    "/v1/applications/{name}{}",
                    if force { "?force=1" } else { "" }
                ),
            )
            .await
        }
    }
}

/// A trust entry's subject: exact, or a prefix ending in one `*` that
/// follows a separator, so `repo:acme/shop*` cannot admit
/// `repo:acme/shopping`, and a bare `*` cannot admit every project of a
/// shared issuer.
fn trust_subject(subject: &str) -> Result<(), &'static str> {
    const RULE: &str = "an exact subject, or a prefix ending in a single * right after one of : / - _ . (e.g. repo:acme/shop:*)";
    if subject.is_empty() || subject.len() > 512 || subject.contains(char::is_control) {
        return Err(RULE);
    }
    match subject.find('*') {
        None => Ok(()),
        Some(i) if i + 1 != subject.len() => Err(RULE),
        Some(i) => match subject[..i].chars().last() {
            Some(':' | '/' | '-' | '_' | '.') => Ok(()),
            _ => Err(RULE),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::trust_subject;

    #[test]
    fn trust_globs_start_at_a_separator() {
        for ok in [
            "repo:acme/shop:ref:refs/heads/main",
            "repo:acme/shop:*",
            "repo:acme/shop:ref:refs/heads/release-*",
            "project_path:acme/shop:ref_type:branch:ref:*",
            "repo:acme/*",
        ] {
            assert_eq!(trust_subject(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "*",
            "repo:acme/shop*",
            "repo:*:ref",
            "repo:acme/**",
            "a\u{1b}b",
        ] {
            assert!(trust_subject(bad).is_err(), "{bad}");
        }
    }
}
