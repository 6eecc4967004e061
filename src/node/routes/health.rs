//! `GET /.well-known/scafo/health`: public, answered from memory, never
//! touching the registry, so a load balancer can ask as often as it likes.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;

use crate::node::Shared;
use crate::wire::Health;

pub async fn get(State(node): State<Arc<Shared>>) -> Json<Health> {
    Json(Health {
        ok: true,
        version: crate::VERSION.to_owned(),
        node: node.id.to_string(),
    })
}
