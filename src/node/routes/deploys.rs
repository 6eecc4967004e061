//! `POST /v1/applications/{name}/deploys` (intake) and `GET /v1/deploys/{id}`.
//!
//! Intake runs in the order node-api.txt fixes: the caller is authenticated
//! (and its scope checked — for a workload token, the application's trust
//! policy) before the header or the body is read; then the
//! metadata header; the freeze; the application created or checked (and its
//! placement intent applied); and only then the body, streamed to a file
//! under the state directory, bounded, and checked as an archive. Nothing is
//! recorded for a refused deploy: the deploy record is created last.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode, header};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use crate::artifact::{self, ArtifactError};
use crate::names::{AppName, DeployId};
use crate::node::caller::{self, Caller, DeployCaller};
use crate::node::workload::Workload;
use crate::node::{ApiError, Shared, carrier, reconcile};
use crate::registry::{
    ApplicationRecord, ArtifactInfo, Change, DeployState, DeployStatus, V1, keys,
};
use crate::wire::answers::DeployAnswer;
use crate::wire::deploy_meta::{self, DeployMeta};
use crate::wire::{Code, Timestamp};

/// A deploy record unmoved this long, whose carrier is gone, is judged failed.
pub const LIVENESS_WINDOW: Duration = Duration::from_secs(90);

fn malformed(detail: impl Into<String>) -> ApiError {
    ApiError::invalid_input(detail)
}

/// A file under the state directory that is removed unless kept.
struct TempFile {
    path: PathBuf,
    keep: bool,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

pub async fn create(
    State(shared): State<Arc<Shared>>,
    caller: DeployCaller,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, HeaderMap, Json<DeployAnswer>), ApiError> {
    if let DeployCaller::Fleet(Caller::Node(_)) = &caller {
        return Err(ApiError::new(
            Code::AuthScope,
            "deploys take an operator or workload token, not a node token",
        ));
    }
    let app = AppName::parse(&name)
        .map_err(|rule| malformed(format!("application name {name:?}: {rule}")))?;
    let workload = admit_caller(&shared, &caller, &app).await?;
    let meta = match headers.get(deploy_meta::HEADER) {
        None => {
            return Err(malformed(format!(
                "the {} header is required (use {{}} base64url-encoded when there is nothing to say)",
                deploy_meta::HEADER
            )));
        }
        Some(value) => deploy_meta::decode(value.to_str().unwrap_or("\u{0}")).map_err(malformed)?,
    };
    if let Some(freeze) = shared.registry.read(&keys::freeze()).await? {
        let reason = freeze
            .value
            .reason
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        return Err(ApiError::new(
            Code::DeploysFrozen,
            format!(
                "deploys are frozen fleet-wide since {} by {}{reason}",
                freeze.value.frozen_at, freeze.value.by
            ),
        ));
    }
    let record = admit_application(&shared, &app, &meta, workload.as_ref()).await?;
    same_celld(&shared, &record).await?;

    // The body, only now.
    let media = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if media.split(';').next().unwrap_or_default().trim() != "application/octet-stream" {
        return Err(ApiError::new(
            Code::UnsupportedMediaType,
            "the artifact is sent as content-type: application/octet-stream",
        ));
    }
    let limit = shared.config.artifact_bytes;
    let too_large = || {
        ApiError::new(
            Code::ResourceLimit,
            format!("artifacts are limited to {limit} bytes (deploy.artifactBytes)"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let id = DeployId::new(&app);
    let intake_dir = shared.local.dir.join("intake");
    tokio::fs::create_dir_all(&intake_dir)
        .await
        .map_err(ApiError::internal)?;
    let mut temp = TempFile {
        path: intake_dir.join(format!("{}.tar.gz", id)),
        keep: false,
    };
    let (bytes, sha256) = receive(body, &temp.path, limit).await?;
    if bytes == 0 {
        return Err(malformed("the artifact body is empty"));
    }
    let inspected = {
        let path = temp.path.clone();
        tokio::task::spawn_blocking(move || artifact::inspect(&path, limit))
            .await
            .map_err(ApiError::internal)?
    };
    let inspection = inspected.map_err(|e| match e {
        ArtifactError::TooLarge { .. } => too_large(),
        ArtifactError::Io(e) => ApiError::internal(e),
        other => malformed(other.to_string()),
    })?;

    // Accepted: the record, then the carrier takes it from here.
    let cache = reconcile::artifact_cache(&shared, &id);
    if let Some(parent) = cache.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(ApiError::internal)?;
    }
    tokio::fs::rename(&temp.path, &cache)
        .await
        .map_err(ApiError::internal)?;
    temp.keep = true;
    let now = Timestamp::now();
    let record = DeployStatus {
        v: V1,
        id: id.clone(),
        application: app.clone(),
        state: DeployState::Accepted,
        code: None,
        detail: None,
        accepted_by: shared.id.clone(),
        caller: caller.actor(),
        created_at: now,
        updated_at: now,
        source: meta.source,
        message: meta.message,
        artifact: None,
        nodes: Default::default(),
        urls: Vec::new(),
    };
    if let Err(e) = shared.registry.create(&keys::deploy(&id), &record).await {
        let _ = tokio::fs::remove_file(&cache).await;
        return Err(e.into());
    }
    let info = ArtifactInfo {
        bytes,
        expanded_bytes: inspection.expanded_bytes,
        sha256,
    };
    tokio::spawn(carrier::carry(Arc::clone(&shared), id.clone(), cache, info));
    let mut answer_headers = HeaderMap::new();
    if let Ok(location) = format!("/v1/deploys/{id}").parse() {
        answer_headers.insert(header::LOCATION, location);
    }
    tracing::info!(deploy = %id, bytes, caller = %record.caller, "deploy accepted");
    Ok((
        StatusCode::ACCEPTED,
        answer_headers,
        Json(DeployAnswer { deploy: record }),
    ))
}

/// Checks the caller may use `app`'s deploy routes, before any other I/O
/// for an operator (its scope) and before anything of the request is read
/// for a workload (the application's trust policy, which a missing
/// application fails too). Answers the workload, when it is one.
async fn admit_caller(
    shared: &Shared,
    caller: &DeployCaller,
    app: &AppName,
) -> Result<Option<Workload>, ApiError> {
    match caller {
        DeployCaller::Fleet(fleet) => {
            fleet.require_reach(app.as_str())?;
            Ok(None)
        }
        DeployCaller::Workload(workload) => {
            let record = shared.registry.read(&keys::application(app)).await?;
            match record {
                Some(record) if caller::trusts(&record.value.trust, workload) => {
                    Ok(Some(workload.clone()))
                }
                _ => Err(caller::trust_mismatch(app.as_str(), workload)),
            }
        }
    }
}

/// Creates the application on its first deploy (never for a workload), or
/// checks it — and a workload's trust, against the record being written —
/// and applies the placement intent the metadata carries.
async fn admit_application(
    shared: &Shared,
    app: &AppName,
    meta: &DeployMeta,
    workload: Option<&Workload>,
) -> Result<ApplicationRecord, ApiError> {
    let stored = shared
        .registry
        .update(
            &keys::application(app),
            |current: Option<&ApplicationRecord>| {
                if let Some(workload) = workload
                    && !current.is_some_and(|r| caller::trusts(&r.trust, workload))
                {
                    return Err(caller::trust_mismatch(app.as_str(), workload));
                }
                let mut next = match current {
                    None => ApplicationRecord::new(app.clone()),
                    Some(record) if record.blocked => {
                        return Err(ApiError::new(
                            Code::ApplicationBlocked,
                            format!("application {app} is blocked: it accepts no deploys"),
                        ));
                    }
                    Some(record) if record.retired.is_some() => {
                        return Err(ApiError::new(
                            Code::ApplicationRetired,
                            format!("application {app} is retired: unretire it to deploy again"),
                        ));
                    }
                    Some(record) => record.clone(),
                };
                if let Some(selector) = &meta.selector {
                    next.selector = selector.clone();
                }
                if let Some(replicas) = meta.replicas {
                    next.replicas = replicas;
                }
                Ok(match current {
                    Some(record)
                        if record.selector == next.selector && record.replicas == next.replicas =>
                    {
                        Change::Keep
                    }
                    _ => {
                        next.updated_at = Timestamp::now();
                        Change::Put(next)
                    }
                })
            },
        )
        .await?;
    stored.ok_or_else(|| ApiError::not_found(format!("no application {app}")))
}

/// The alive nodes eligible for the application must run one Celld
/// release: a deploy built and started by two different runtimes could
/// behave differently on different nodes.
async fn same_celld(shared: &Shared, app: &ApplicationRecord) -> Result<(), ApiError> {
    let nodes = shared.registry.read_all(&keys::NODES).await?;
    let alive = crate::node::alive(nodes.iter().map(|n| &n.value));
    let mut releases: std::collections::BTreeMap<String, Vec<String>> =
        std::collections::BTreeMap::new();
    for node in alive
        .iter()
        .filter(|n| crate::node::assignment::matches(n, app.selector.as_ref()))
    {
        if let Some(celld) = &node.celld {
            releases
                .entry(celld.version.clone())
                .or_default()
                .push(node.id.to_string());
        }
    }
    if releases.len() <= 1 {
        return Ok(());
    }
    let listed: Vec<String> = releases
        .iter()
        .map(|(release, nodes)| format!("{release} on {}", nodes.join(", ")))
        .collect();
    Err(ApiError::new(
        Code::CelldMismatch,
        format!(
            "the nodes eligible for {} run different Celld releases: {}. Freeze deploys (scafo freeze) while nodes are upgraded, then lift the freeze",
            app.name,
            listed.join("; ")
        ),
    ))
}

/// Streams the body to `path`, hashing it, cut off past `limit` bytes.
async fn receive(body: Body, path: &Path, limit: u64) -> Result<(u64, String), ApiError> {
    let mut file = tokio::fs::File::create(path)
        .await
        .map_err(ApiError::internal)?;
    let mut stream = body.into_data_stream();
    let mut hasher = Sha256::new();
    let mut bytes = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| malformed(format!("the artifact body could not be read: {e}")))?;
        bytes += chunk.len() as u64;
        if bytes > limit {
            return Err(ApiError::new(
                Code::ResourceLimit,
                format!("artifacts are limited to {limit} bytes (deploy.artifactBytes)"),
            ));
        }
        hasher.update(&chunk);
        file.write_all(&chunk).await.map_err(ApiError::internal)?;
    }
    file.flush().await.map_err(ApiError::internal)?;
    let digest = hasher.finalize();
    Ok((bytes, digest.iter().map(|b| format!("{b:02x}")).collect()))
}

pub async fn get(
    State(shared): State<Arc<Shared>>,
    caller: DeployCaller,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<DeployStatus>, ApiError> {
    // A non-id names no application: the caller was verified (as against
    // no application at all), and the answer is simply 404.
    let Some(id) = DeployId::parse(&id) else {
        return Err(ApiError::not_found(format!(
            "{id:?} is not a deploy id (<application>.<16 hex>)"
        )));
    };
    let app = id.application();
    admit_caller(&shared, &caller, &app).await?;
    let record = shared
        .registry
        .read(&keys::deploy(&id))
        .await?
        .map(|r| r.value);
    let Some(mut record) = record.filter(|r| r.id == id && r.application == app) else {
        return Err(ApiError::not_found(format!("no deploy {id}")));
    };
    if !record.state.is_terminal() && record.updated_at.age() > LIVENESS_WINDOW {
        let carrier = shared
            .registry
            .read(&keys::node(&record.accepted_by))
            .await?;
        let gone = carrier.is_none_or(|n| n.value.heartbeat_at.age() > super::state::ALIVE);
        if gone {
            record.state = DeployState::Failed;
            record.code = Some("deploy-timeout".into());
            record.detail = Some(timeout_detail(&record));
        }
    }
    Ok(Json(record))
}

/// The detail of a deploy whose carrier died (the reaper writes the same).
pub fn timeout_detail(record: &DeployStatus) -> String {
    format!(
        "node {} accepted this deploy and stopped answering before finishing it (last progress {})",
        record.accepted_by, record.updated_at
    )
}
