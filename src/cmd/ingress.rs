//! `scafo ingress caddy-permission`: beside Caddy, the answer to its
//! on-demand TLS permission asks (DESIGN §11). A name gets a certificate
//! only when some fleet's current routing document names it exactly.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::anyhow;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use tokio::signal::unix::{SignalKind, signal};

use super::Failure;
use crate::cli::IngressCommand;
use crate::config::{LogFormat, http_url};
use crate::wire::routing::FleetRouting;

/// One fleet: where to ask, with which token, and the last good answer.
struct Fleet {
    url: String,
    token: String,
    last_good: Mutex<Option<FleetRouting>>,
}

pub fn run(command: &IngressCommand, verbosity: i8) -> Result<(), Failure> {
    let IngressCommand::CaddyPermission {
        fleets,
        token_files,
        listen,
        interval_ms,
    } = command;
    if fleets.len() != token_files.len() {
        return Err(Failure::Usage(anyhow!(
            "give one --ingress-token-file for each --fleet, in the same order"
        )));
    }
    let mut known = Vec::new();
    for (url, file) in fleets.iter().zip(token_files) {
        let url =
            http_url(url).map_err(|rule| Failure::Usage(anyhow!("--fleet {url:?}: {rule}")))?;
        known.push(Arc::new(Fleet {
            url,
            token: read_token(file)?,
            last_good: Mutex::new(None),
        }));
    }
    let listen: std::net::SocketAddr = listen
        .parse()
        .map_err(|_| Failure::Usage(anyhow!("--listen {listen:?}: an IP address and port")))?;
    super::sail::init_logging(LogFormat::Text, verbosity);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Refused(anyhow!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async move {
        let mut terminate =
            signal(SignalKind::terminate()).map_err(|e| Failure::Refused(e.into()))?;
        let mut interrupt =
            signal(SignalKind::interrupt()).map_err(|e| Failure::Refused(e.into()))?;
        let http = reqwest::Client::new();
        for fleet in &known {
            tokio::spawn(poll(
                Arc::clone(fleet),
                http.clone(),
                Duration::from_millis((*interval_ms).max(100)),
            ));
        }
        let app = Router::new()
            .fallback(permission)
            .with_state(Arc::new(known));
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| Failure::Refused(anyhow!("cannot listen on {listen}: {e}")))?;
        tracing::info!(%listen, "answering Caddy's permission asks");
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
            })
            .await
            .map_err(|e| Failure::Refused(e.into()))
    })
}

/// A token file: private to its owner, one token.
fn read_token(path: &Path) -> Result<String, Failure> {
    let meta = std::fs::metadata(path)
        .map_err(|e| Failure::Usage(anyhow!("cannot read {}: {e}", path.display())))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(Failure::Usage(anyhow!(
            "{} may be read by others (mode {mode:o}); run `chmod 600 {}`",
            path.display(),
            path.display()
        )));
    }
    let token = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(anyhow!("cannot read {}: {e}", path.display())))?;
    let token = token.trim().to_owned();
    if !crate::config::is_token(&token) {
        return Err(Failure::Usage(anyhow!(
            "{} does not hold an ingress token",
            path.display()
        )));
    }
    Ok(token)
}

/// Fetches the fleet's document forever; a failure keeps the last good one.
async fn poll(fleet: Arc<Fleet>, http: reqwest::Client, every: Duration) {
    let mut failing = false;
    loop {
        let answer = http
            .get(format!("{}/v1/ingress/routes", fleet.url))
            .bearer_auth(&fleet.token)
            .timeout(Duration::from_secs(10))
            .send()
            .await;
        let document = match answer {
            Ok(response) if response.status().is_success() => response
                .json::<FleetRouting>()
                .await
                .map_err(|e| e.to_string()),
            Ok(response) => Err(format!("answered {}", response.status())),
            Err(e) => Err(e.to_string()),
        };
        match document {
            Ok(document) => {
                if failing {
                    tracing::info!(fleet = %fleet.url, "routing document fetched again");
                }
                failing = false;
                *fleet
                    .last_good
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(document);
            }
            Err(why) => {
                if !failing {
                    tracing::warn!(fleet = %fleet.url, %why, "cannot fetch the routing document; keeping the last good one");
                }
                failing = true;
            }
        }
        tokio::time::sleep(every).await;
    }
}

#[derive(Debug, Deserialize)]
struct Ask {
    domain: Option<String>,
}

async fn permission(
    State(fleets): State<Arc<Vec<Arc<Fleet>>>>,
    Query(ask): Query<Ask>,
) -> (StatusCode, &'static str) {
    let Some(domain) = ask.domain.map(|d| d.to_ascii_lowercase()) else {
        return (StatusCode::BAD_REQUEST, "ask with ?domain=<name>\n");
    };
    let named = fleets.iter().any(|fleet| {
        fleet
            .last_good
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .is_some_and(|doc| doc.names(&domain))
    });
    if named {
        tracing::debug!(%domain, "permitted");
        (StatusCode::OK, "ok\n")
    } else {
        tracing::info!(%domain, "refused: no fleet routes it");
        (StatusCode::FORBIDDEN, "no fleet routes this name\n")
    }
}
