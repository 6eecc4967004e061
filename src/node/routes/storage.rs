//! The storage surface (DESIGN §8), behind the ingress token: values kept
//! byte-exact in the bucket under `storage/objects/`, listings, and
//! try-acquire locks under `storage/locks/` — what a Caddy-compatible
//! storage module needs for ingresses to share certificates.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::Deserialize;
use serde_json::json;

use crate::node::caller::IngressCaller;
use crate::node::{ApiError, Shared};
use crate::registry::{Change, RegistryError, StorageLock, V1, keys};
use crate::store::list_all;
use crate::wire::{Code, Timestamp};

pub const VERSION_HEADER: &str = "x-scafo-storage-version";

/// Keys and lock names: relative, printable ASCII, no empty, `.` or `..`
/// segment.
fn checked(what: &str, text: &str) -> Result<String, ApiError> {
    let printable = !text.is_empty() && text.bytes().all(|b| (0x21..=0x7e).contains(&b));
    let segments_ok = !text.starts_with('/')
        && text
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..");
    if printable && segments_ok && text.len() <= 900 {
        Ok(text.to_owned())
    } else {
        Err(ApiError::invalid_input(format!(
            "{what} {text:?} must be relative printable ASCII (no spaces) without empty, '.' or '..' segments"
        )))
    }
}

fn version(headers: &HeaderMap) -> Result<(), ApiError> {
    match headers.get(VERSION_HEADER).map(|v| v.as_bytes()) {
        None | Some(b"") | Some(b"1") => Ok(()),
        Some(_) => Err(ApiError::invalid_input(format!(
            "{VERSION_HEADER} must be 1 (or absent)"
        ))),
    }
}

/// The storage surface's caller: the ingress token, speaking a storage
/// version this node understands.
#[derive(Debug)]
pub struct StorageCaller;

impl axum::extract::FromRequestParts<Arc<Shared>> for StorageCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, ApiError> {
        IngressCaller::from_request_parts(parts, shared).await?;
        version(&parts.headers)?;
        Ok(StorageCaller)
    }
}

fn missing(key: &str) -> ApiError {
    ApiError::not_found(format!("no stored value at {key}"))
}

pub async fn put(
    State(shared): State<Arc<Shared>>,
    _: StorageCaller,
    Path(key): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<StatusCode, ApiError> {
    let key = checked("key", &key)?;
    let limit = shared.config.storage_object_bytes;
    let too_large = || {
        ApiError::new(
            Code::ResourceLimit,
            format!("stored values are limited to {limit} bytes (storage.objectBytes)"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let bytes: Bytes = match Limited::new(body, limit as usize).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => return Err(too_large()),
        Err(e) => {
            return Err(ApiError::invalid_input(format!(
                "the value could not be read: {e}"
            )));
        }
    };
    shared
        .registry
        .store()
        .put(&keys::storage_object(&key), bytes.to_vec())
        .await
        .map_err(RegistryError::from)?;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn get(
    State(shared): State<Arc<Shared>>,
    _: StorageCaller,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    let key = checked("key", &key)?;
    let object = shared
        .registry
        .store()
        .get(&keys::storage_object(&key))
        .await
        .map_err(RegistryError::from)?;
    let object = object.ok_or_else(|| missing(&key))?;
    Ok((
        [(header::CONTENT_TYPE, "application/octet-stream")],
        object.bytes,
    )
        .into_response())
}

pub async fn head(
    State(shared): State<Arc<Shared>>,
    _: StorageCaller,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    let key = checked("key", &key)?;
    let meta = shared
        .registry
        .store()
        .head(&keys::storage_object(&key))
        .await
        .map_err(RegistryError::from)?;
    let meta = meta.ok_or_else(|| missing(&key))?;
    let mut response = StatusCode::OK.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(meta.size));
    if let Ok(modified) = HeaderValue::from_str(&httpdate::fmt_http_date(meta.modified)) {
        headers.insert(header::LAST_MODIFIED, modified);
    }
    Ok(response)
}

/// Removes the value and everything under `<key>/`.
pub async fn delete(
    State(shared): State<Arc<Shared>>,
    _: StorageCaller,
    Path(key): Path<String>,
) -> Result<StatusCode, ApiError> {
    let key = checked("key", &key)?;
    let store = shared.registry.store();
    store
        .delete(&keys::storage_object(&key))
        .await
        .map_err(RegistryError::from)?;
    shared
        .registry
        .remove_under(&format!("{}/", keys::storage_object(&key)))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    recursive: Option<String>,
}

async fn list_under(
    shared: &Shared,
    prefix: &str,
    query: &ListQuery,
) -> Result<Response, ApiError> {
    let recursive = matches!(query.recursive.as_deref(), Some("true" | "1"));
    let base = if prefix.is_empty() {
        keys::STORAGE_OBJECTS.to_owned()
    } else {
        format!("{}/", keys::storage_object(prefix))
    };
    let listing = list_all(shared.registry.store(), &base, !recursive)
        .await
        .map_err(RegistryError::from)?;
    let strip = |key: &str| {
        key.strip_prefix(keys::STORAGE_OBJECTS)
            .unwrap_or(key)
            .trim_end_matches('/')
            .to_owned()
    };
    let mut found: Vec<String> = listing.objects.iter().map(|m| strip(&m.key)).collect();
    found.extend(listing.prefixes.iter().map(|p| strip(p)));
    found.sort();
    if found.is_empty() {
        return Err(ApiError::not_found(format!(
            "nothing is stored under {prefix:?}"
        )));
    }
    Ok(axum::Json(json!({ "keys": found })).into_response())
}

pub async fn list(
    State(shared): State<Arc<Shared>>,
    _: StorageCaller,
    Path(prefix): Path<String>,
    Query(query): Query<ListQuery>,
) -> Result<Response, ApiError> {
    let prefix = checked("prefix", prefix.trim_end_matches('/'))?;
    list_under(&shared, &prefix, &query).await
}

pub async fn list_root(
    State(shared): State<Arc<Shared>>,
    _: StorageCaller,
    Query(query): Query<ListQuery>,
) -> Result<Response, ApiError> {
    list_under(&shared, "", &query).await
}

/// Try-acquire: 204 when taken, 409 `cas-conflict` while another holds it
/// (a lock older than `storage.lockSeconds` is a dead holder's and is taken).
pub async fn lock(
    State(shared): State<Arc<Shared>>,
    _: StorageCaller,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    let name = checked("lock name", &name)?;
    let lapse = shared.config.storage_lock;
    shared
        .registry
        .update(
            &keys::storage_lock(&name),
            |current: Option<&StorageLock>| match current {
                Some(held) if held.expires_at > Timestamp::now() => Err(ApiError::new(
                    Code::CasConflict,
                    format!("lock {name} is held; try again later"),
                )),
                _ => Ok(Change::Put(StorageLock {
                    v: V1,
                    expires_at: Timestamp::from(Timestamp::now().system_time() + lapse),
                })),
            },
        )
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Release: 204 whether or not it was held.
pub async fn unlock(
    State(shared): State<Arc<Shared>>,
    _: StorageCaller,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    let name = checked("lock name", &name)?;
    shared.registry.remove(&keys::storage_lock(&name)).await?;
    Ok(StatusCode::NO_CONTENT)
}
