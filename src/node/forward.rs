//! Coordinator-gated calls (node-api.txt, deletion): answered here when this
//! node holds the lease; otherwise the lease is read afresh (when nobody
//! holds it, this node offers itself once) and the call is forwarded once to
//! the holder under a fresh node token this node signs for itself, and the
//! holder's answer is returned verbatim. `X-Scafo-Forwarded-By` keeps a call
//! from a second hop.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::coordinator::Holder;
use super::{ApiError, Shared};
use crate::auth::token;
use crate::names::NodeId;
use crate::registry::keys;
use crate::wire::Code;

pub const FORWARDED_BY: &str = "x-scafo-forwarded-by";

/// Where a gated call is carried out.
#[derive(Debug)]
pub enum Gate {
    Here,
    /// The holder's advertised URL.
    There(String),
}

fn unavailable(detail: impl Into<String>) -> ApiError {
    ApiError::new(Code::CoordinatorUnavailable, detail)
}

pub async fn gate(shared: &Shared, headers: &HeaderMap) -> Result<Gate, ApiError> {
    let holder = match shared.coordinator.holder() {
        Holder::Me(epoch) => Holder::Me(epoch),
        // The view is up to a lease step old: the holder it names may have
        // died and been replaced since. Read the lease afresh (and offer
        // this node if nobody holds it) rather than forward to a dead node.
        _ => shared
            .coordinator
            .offer(shared)
            .await
            .map_err(|e| unavailable(format!("could not read the coordinator lease: {e}")))?,
    };
    let other = match holder {
        Holder::Me(_) => return Ok(Gate::Here),
        Holder::Other(id) => id,
        Holder::Nobody => {
            return Err(unavailable(
                "no node holds the coordinator lease; retry shortly",
            ));
        }
    };
    if let Some(by) = headers.get(FORWARDED_BY) {
        return Err(unavailable(format!(
            "forwarded here by {} but {other} holds the coordinator lease; a call is forwarded only once, retry shortly",
            by.to_str().unwrap_or("another node")
        )));
    }
    advertised(shared, &other).await.map(Gate::There)
}

async fn advertised(shared: &Shared, id: &NodeId) -> Result<String, ApiError> {
    let record = shared.registry.read(&keys::node(id)).await?;
    record
        .map(|r| r.value.advertise)
        .ok_or_else(|| unavailable(format!("the coordinator {id} has no node record")))
}

/// Sends the call to `base` and answers with its response as it came.
pub async fn forward(
    shared: &Shared,
    base: &str,
    method: &str,
    path: &str,
) -> Result<Response, ApiError> {
    let bearer = token::sign(
        shared.local.node_key.signing_key(),
        &format!("node:{}", shared.id),
        token::now(),
    );
    let method = reqwest::Method::from_bytes(method.as_bytes()).map_err(ApiError::internal)?;
    let sent = shared
        .http
        .request(method, format!("{base}{path}"))
        .bearer_auth(bearer)
        .header(FORWARDED_BY, shared.id.as_str())
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| unavailable(format!("could not reach the coordinator at {base}: {e}")))?;
    let status = StatusCode::from_u16(sent.status().as_u16()).map_err(ApiError::internal)?;
    let kept: Vec<(header::HeaderName, Vec<u8>)> = [
        header::CONTENT_TYPE,
        header::RETRY_AFTER,
        header::WWW_AUTHENTICATE,
    ]
    .into_iter()
    .filter_map(|name| {
        let value = sent.headers().get(name.as_str())?.as_bytes().to_vec();
        Some((name, value))
    })
    .collect();
    let body = sent.bytes().await.map_err(|e| {
        unavailable(format!(
            "the coordinator at {base} broke off its answer: {e}"
        ))
    })?;
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    for (name, value) in kept {
        if let Ok(value) = HeaderValue::from_bytes(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    Ok(response)
}
