//! `scafo sail`: one node of a fleet. [`run`] takes a validated
//! configuration, a bound listener and a shutdown future, so a test binds
//! port 0 and owns the node's whole life.
//!
//! Start-up order: state directory (key, ingress token) → registry
//! registration (refusing a node id held by another key) → serve, with the
//! heartbeat beside it. Every background task watches one stop signal, and
//! the first task to end — the shutdown future, the server, or a heartbeat
//! that hit a fatal error — stops all the others.

pub mod assignment;
mod bootstrap;
pub mod caller;
mod carrier;
pub mod coordinator;
mod deletion;
mod error;
mod forward;
mod heartbeat;
pub mod json;
mod reaper;
mod reconcile;
pub mod request;
mod router;
mod routes;
pub mod routing;
pub mod runtime;
pub mod state;
pub mod workload;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use axum::extract::FromRef;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

pub use bootstrap::ADMIN_KEY_FILE;
pub use error::{ApiError, RETRY_AFTER_SECONDS, problem_response};
pub use heartbeat::INTERVAL as HEARTBEAT_INTERVAL;
pub use router::router;

use crate::config::NodeConfig;
use crate::names::NodeId;
use crate::registry::Registry;
use crate::wire::Timestamp;
use json::JsonLimit;
use state::LocalState;

/// How long start-up waits for the registry before serving anyway (the
/// heartbeat keeps trying, and routes answer `registry-unavailable`).
const FIRST_REGISTRATION: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("{0}")]
    State(String),
    #[error(
        "node id {id} is registered in this fleet with another key. If another machine runs as {id}, \
give this one its own --node-id; if this machine lost its state directory, stop the old node \
and delete {key} from the registry bucket, then start again"
    )]
    KeyMismatch { id: String, key: String },
    #[error("cannot open the registry: {0}")]
    Registry(#[from] crate::store::StoreError),
    #[error("the API server failed: {0}")]
    Serve(std::io::Error),
    #[error("a node task failed: {0}")]
    Task(String),
}

/// What a node record says about what the node runs: serving, failures.
pub type Reported = (
    std::collections::BTreeMap<String, crate::registry::Serving>,
    std::collections::BTreeMap<String, crate::registry::NodeFailure>,
);

/// What every route and background task of a node shares.
#[derive(Debug)]
pub struct Shared {
    pub id: NodeId,
    pub config: NodeConfig,
    pub registry: Registry,
    pub local: LocalState,
    /// The URL this node is reached at (configured, or from the bound address).
    pub advertise: String,
    pub started_at: Timestamp,
    /// What this node runs.
    pub runtime: runtime::Runtime,
    /// The coordinator lease as this node sees it.
    pub coordinator: coordinator::Coordinator,
    /// For calls to other nodes (forwarded gated calls).
    pub http: reqwest::Client,
    /// Workload-token verification and the issuers' cached keys.
    pub workloads: workload::Workloads,
    /// The routing document of the last reconcile pass.
    pub routing: std::sync::Mutex<Option<Arc<crate::wire::routing::FleetRouting>>>,
    /// What the node record said last time this node wrote it.
    pub reported: std::sync::Mutex<Option<Reported>>,
    /// The fleet's id, once read (it never changes).
    pub fleet_id: std::sync::OnceLock<String>,
    /// Set when the node starts shutting down: routing routes answer draining.
    pub draining: AtomicBool,
    /// Wakes the reconcile pass (a write on this node that it should see).
    pub wake: tokio::sync::Notify,
    /// The admin key of `--bootstrap-admin`, checked at start.
    pub bootstrap_admin: Option<bootstrap::BootstrapAdmin>,
    fleet_known: AtomicBool,
    bootstrapped: AtomicBool,
    registered: AtomicBool,
}

impl FromRef<Arc<Shared>> for JsonLimit {
    fn from_ref(shared: &Arc<Shared>) -> Self {
        JsonLimit(shared.config.json_bytes)
    }
}

/// Runs a node until `shutdown` completes or a fatal error stops it.
pub async fn run(
    config: NodeConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), NodeError> {
    let bootstrap_admin = config
        .bootstrap_admin
        .as_deref()
        .map(bootstrap::read_admin_file)
        .transpose()?;
    let local = state::prepare(&config.state_dir, &config.ingress_tokens)?;
    let bound = listener.local_addr().map_err(NodeError::Serve)?;
    state::write_api_addr(&local.dir, &bound.to_string())?;
    let advertise = match &config.advertise {
        Some(url) => url.clone(),
        None => {
            if bound.ip().is_unspecified() {
                tracing::warn!(%bound, "listening on all addresses: set node.advertise so other nodes and the ingress can reach this one");
            }
            format!("http://{bound}")
        }
    };
    let store: Arc<dyn crate::store::ObjectStore> = Arc::new(crate::store::counted::Counted::new(
        crate::store::open(&config.bucket, &config.s3).await?,
    ));
    let celld = crate::celld::Celld::discover(crate::celld::Settings {
        workerd: config.workerd.clone(),
        esbuild: config.esbuild.clone(),
        root: local.dir.join("celld"),
        bind: config.listen.ip(),
        url_host: url_host(&advertise),
        ports: config.ports,
        artifact_limit: config.artifact_bytes,
    })
    .await;
    match &celld {
        Ok(celld) => tracing::info!(celld = %celld.info().version, "Celld runtime found"),
        Err(why) => {
            tracing::warn!(%why, "no Celld runtime: this node serves its API but runs no application")
        }
    }
    tracing::info!(node = %config.node_id, api = %bound, registry = %store.location(), state = %local.dir.display(), "scafo {} sailing", crate::VERSION);
    let workloads = workload::Workloads::new(&config)
        .map_err(|e| NodeError::State(format!("cannot build the OIDC key client: {e}")))?;
    let shared = Arc::new(Shared {
        id: config.node_id.clone(),
        registry: Registry::new(store),
        local,
        advertise,
        started_at: Timestamp::now(),
        runtime: runtime::Runtime::new(celld),
        coordinator: coordinator::Coordinator::new(config.lease, config.node_id.clone()),
        http: reqwest::Client::new(),
        workloads,
        routing: std::sync::Mutex::new(None),
        draining: AtomicBool::new(false),
        fleet_id: std::sync::OnceLock::new(),
        reported: std::sync::Mutex::new(None),
        wake: tokio::sync::Notify::new(),
        bootstrap_admin,
        fleet_known: AtomicBool::new(false),
        bootstrapped: AtomicBool::new(false),
        registered: AtomicBool::new(false),
        config,
    });

    match tokio::time::timeout(FIRST_REGISTRATION, heartbeat::beat(&shared)).await {
        Ok(Ok(())) => shared
            .registered
            .store(true, std::sync::atomic::Ordering::Relaxed),
        Ok(Err(heartbeat::BeatError::Fatal(err))) => return Err(err),
        Ok(Err(heartbeat::BeatError::Registry(err))) => {
            tracing::warn!(error = %err, "registry unreachable at start; serving anyway and retrying")
        }
        Err(_) => tracing::warn!("registry slow to answer at start; serving anyway and retrying"),
    }

    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = JoinSet::new();
    {
        let mut stop = stop_rx.clone();
        tasks.spawn(async move {
            tokio::select! {
                () = shutdown => tracing::info!("shutting down"),
                _ = stop.wait_for(|s| *s) => {}
            }
            Ok(())
        });
    }
    tasks.spawn(heartbeat::run(Arc::clone(&shared), stop_rx.clone()));
    tasks.spawn(reconcile::run(Arc::clone(&shared), stop_rx.clone()));
    tasks.spawn(coordinator::run(Arc::clone(&shared), stop_rx.clone()));
    {
        let mut stop = stop_rx.clone();
        let app = router(Arc::clone(&shared));
        tasks.spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stop.wait_for(|s| *s).await;
                })
                .await
                .map_err(NodeError::Serve)
        });
    }

    let mut outcome = Ok(());
    while let Some(done) = tasks.join_next().await {
        // Leave the routing document first, then stop everything else.
        shared
            .draining
            .store(true, std::sync::atomic::Ordering::Relaxed);
        stop_tx.send_replace(true);
        let result = done.unwrap_or_else(|e| Err(NodeError::Task(e.to_string())));
        if let (Ok(()), Err(err)) = (&outcome, result) {
            outcome = Err(err);
        }
    }
    tracing::info!("stopped");
    outcome
}

/// The alive nodes among these records: a heartbeat younger than three
/// heartbeat intervals.
pub fn alive<'a>(
    nodes: impl Iterator<Item = &'a crate::registry::NodeRecord>,
) -> Vec<crate::registry::NodeRecord> {
    nodes
        .filter(|n| n.heartbeat_at.age() < routes::state::ALIVE)
        .cloned()
        .collect()
}

/// The host of a URL (`http://10.0.0.5:7070` → `10.0.0.5`, IPv6 kept in brackets).
fn url_host(url: &str) -> String {
    let authority = url.split_once("://").map(|(_, rest)| rest).unwrap_or(url);
    let authority = authority.split('/').next().unwrap_or_default();
    match authority.rfind(':') {
        Some(colon) if !authority[colon..].contains(']') => authority[..colon].to_owned(),
        _ => authority.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn url_hosts() {
        assert_eq!(super::url_host("http://10.0.0.5:7070"), "10.0.0.5");
        assert_eq!(super::url_host("https://node.example"), "node.example");
        assert_eq!(super::url_host("http://[::1]:7070"), "[::1]");
        assert_eq!(super::url_host("http://[::1]"), "[::1]");
    }
}
