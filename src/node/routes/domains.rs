//! `POST/DELETE /v1/applications/{name}/domains/{host}[?wildcard=1]`: custom
//! domains, held as claims in `registry/claims/`. Operator tokens only.
//! Writes go referent-first: the application is checked, the claim is
//! written, then the application lists the host — a crash in between leaves
//! a claim nothing routes to, which re-running the call repairs.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use serde_json::{Value, json};

use super::applications::{app_name, mutate, redact};
use crate::names::{AppName, ScopePattern, parent_host, parse_host, scope_covers, under_domain};
use crate::node::caller::{Caller, OperatorCaller};
use crate::node::{ApiError, Shared};
use crate::registry::{
    ApplicationRecord, Change, ClaimRecord, DomainClaim, RegistryError, V1, keys,
};
use crate::wire::{Code, Timestamp};

#[derive(Debug, Deserialize)]
pub struct ClaimQuery {
    wildcard: Option<String>,
}

fn claimed(detail: String) -> ApiError {
    ApiError::new(Code::HostClaimed, detail)
}

/// The host, held to the claim rule and kept off the platform domains.
fn checked_host(shared: &Shared, host: &str) -> Result<String, ApiError> {
    let host = parse_host(host)
        .map_err(|rule| ApiError::invalid_input(format!("host {host:?}: {rule}")))?;
    if let Some(domain) = shared
        .config
        .platform_domains
        .iter()
        .find(|d| under_domain(&host, d))
    {
        return Err(ApiError::invalid_input(format!(
            "{host} is under the platform domain {domain}: every host there is rendered from an application's name"
        )));
    }
    Ok(host)
}

fn answer(shared: &Shared, record: &ApplicationRecord, caller: &Caller, host: &str) -> Json<Value> {
    let platform: Vec<String> = shared
        .config
        .platform_domains
        .iter()
        .map(|d| format!("{}.{d}", record.name))
        .collect();
    Json(json!({ "application": redact(record, caller), "host": host, "platformHosts": platform }))
}

async fn existing(shared: &Shared, name: &AppName) -> Result<(), ApiError> {
    match shared.registry.read(&keys::application(name)).await? {
        Some(_) => Ok(()),
        None => Err(ApiError::not_found(format!("no application {name}"))),
    }
}

pub async fn claim(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
    Path((name, host)): Path<(String, String)>,
    Query(query): Query<ClaimQuery>,
) -> Result<Json<Value>, ApiError> {
    let name = app_name(&name)?;
    let wildcard = query.wildcard.as_deref() == Some("1");
    if wildcard && !scope_covers(&me.applications, &ScopePattern::Prefix(format!("{name}-"))) {
        return Err(ApiError::new(
            Code::AuthScope,
            format!(
                "a wildcard claim also decides what {name}-<env> answers on: it needs a key whose scope reaches {name}-*"
            ),
        ));
    }
    let caller = Caller::Operator(me);
    caller.require_reach(name.as_str())?;
    let host = checked_host(&shared, &host)?;
    existing(&shared, &name).await?;

    // Another application's wildcard one label up covers this host; a
    // wildcard here would cover another application's host one label down.
    if let Some(parent) = parent_host(&host)
        && let Some(over) = shared.registry.read(&keys::claim(parent)).await?
        && over.value.wildcard
        && over.value.application != name
    {
        return Err(claimed(format!(
            "{host} is covered by another application's wildcard claim on {parent}"
        )));
    }
    if wildcard {
        for below in shared.registry.read_all(&keys::CLAIMS).await? {
            if parent_host(&below.value.host) == Some(host.as_str())
                && below.value.application != name
            {
                return Err(claimed(format!(
                    "a wildcard on {host} would cover {}, which another application holds",
                    below.value.host
                )));
            }
        }
    }

    let by = caller.actor();
    let stored = shared
        .registry
        .update(
            &keys::claim(&host),
            |current: Option<&ClaimRecord>| match current {
                None => Ok(Change::Put(ClaimRecord {
                    v: V1,
                    host: host.clone(),
                    application: name.clone(),
                    wildcard,
                    created_at: Timestamp::now(),
                    by: by.clone(),
                })),
                Some(claim) if claim.application != name => {
                    Err(claimed(format!("{host} is claimed by another application")))
                }
                // Widened on request, never narrowed by a later call without it.
                Some(claim) if wildcard && !claim.wildcard => Ok(Change::Put(ClaimRecord {
                    wildcard: true,
                    ..claim.clone()
                })),
                Some(_) => Ok(Change::Keep),
            },
        )
        .await?
        .ok_or_else(|| {
            ApiError::from(RegistryError::Conflict {
                key: keys::claim(&host).path().to_owned(),
            })
        })?;
    let record = mutate(&shared, &name, |app| {
        let entry = DomainClaim {
            host: host.clone(),
            wildcard: stored.wildcard,
        };
        match app.domains.iter_mut().find(|d| d.host == host) {
            Some(existing) if *existing == entry => Ok(false),
            Some(existing) => {
                *existing = entry;
                Ok(true)
            }
            None => {
                app.domains.push(entry);
                app.domains.sort_by(|a, b| a.host.cmp(&b.host));
                Ok(true)
            }
        }
    })
    .await?;
    tracing::info!(event = "domain.claimed", application = %name, %host, wildcard = stored.wildcard, actor = %by, "domain.claimed");
    Ok(answer(&shared, &record, &caller, &host))
}

pub async fn release(
    State(shared): State<Arc<Shared>>,
    OperatorCaller(me): OperatorCaller,
    Path((name, host)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let name = app_name(&name)?;
    let caller = Caller::Operator(me);
    caller.require_reach(name.as_str())?;
    let host = checked_host(&shared, &host)?;
    existing(&shared, &name).await?;
    let claim = shared
        .registry
        .read(&keys::claim(&host))
        .await?
        .filter(|c| c.value.application == name);
    let mut listed = false;
    let record = mutate(&shared, &name, |app| {
        let before = app.domains.len();
        app.domains.retain(|d| d.host != host);
        listed = app.domains.len() != before;
        Ok(listed)
    })
    .await?;
    if claim.is_none() && !listed {
        return Err(ApiError::not_found(format!(
            "{name} holds no claim on {host}"
        )));
    }
    // Released and claimed again by another application meanwhile? Then
    // the claim is no longer this application's to remove.
    let still_ours = shared
        .registry
        .read(&keys::claim(&host))
        .await?
        .is_some_and(|c| c.value.application == name);
    if claim.is_some() && still_ours {
        shared.registry.remove(&keys::claim(&host)).await?;
    }
    tracing::info!(event = "domain.released", application = %name, %host, actor = %caller.actor(), "domain.released");
    Ok(answer(&shared, &record, &caller, &host))
}
