//! `GET /v1/ingress/routes[/{format}][?prefer=<node>|self]`: the routing
//! document as of the last reconcile pass, behind the ingress token. Until
//! the first pass completes, and while the node shuts down, both answer 503
//! `draining`: an empty document would read as every route withdrawn, a
//! refusal is a pause the ingress rides out on its last good document.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::node::caller::IngressCaller;
use crate::node::routing::{FORMATS, traefik};
use crate::node::{ApiError, Shared};
use crate::wire::Code;
use crate::wire::routing::FleetRouting;

#[derive(Debug, Deserialize)]
pub struct RoutesQuery {
    prefer: Option<String>,
}

/// The document to serve, with `prefer` applied; the node it prefers.
fn current(
    shared: &Shared,
    query: &RoutesQuery,
) -> Result<(FleetRouting, Option<String>), ApiError> {
    let draining = || {
        ApiError::new(
            Code::Draining,
            "this node has no current routing document (starting, or shutting down); keep the last one",
        )
    };
    if shared.draining.load(Ordering::Relaxed) {
        return Err(draining());
    }
    let routing = crate::node::runtime::lock(&shared.routing)
        .clone()
        .ok_or_else(draining)?;
    let prefer = match query.prefer.as_deref() {
        None | Some("") => None,
        Some("self") => Some(shared.id.to_string()),
        Some(node) => Some(node.to_owned()),
    };
    let routing = match &prefer {
        Some(node) => routing.preferring(node),
        None => (*routing).clone(),
    };
    Ok((routing, prefer))
}

pub async fn generic(
    State(shared): State<Arc<Shared>>,
    _: IngressCaller,
    Query(query): Query<RoutesQuery>,
) -> Result<Json<FleetRouting>, ApiError> {
    current(&shared, &query).map(|(routing, _)| Json(routing))
}

pub async fn format(
    State(shared): State<Arc<Shared>>,
    _: IngressCaller,
    Path(format): Path<String>,
    Query(query): Query<RoutesQuery>,
) -> Result<Response, ApiError> {
    if !FORMATS.contains(&format.as_str()) {
        return Err(ApiError::not_found(format!(
            "no routing format {format:?}; this node renders: {}",
            FORMATS.join(", ")
        )));
    }
    let (routing, prefer) = current(&shared, &query)?;
    Ok(Json(traefik(&routing, &shared.config, prefer.as_deref())).into_response())
}
