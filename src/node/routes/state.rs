//! `GET /v1/state`: what this node is and sees (DESIGN §6). Nodes and admins
//! get the whole document; other operators get it narrowed to the
//! applications their key reaches, with `scoped: true`.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;

use crate::node::caller::Caller;
use crate::node::runtime::lock;
use crate::node::{ApiError, HEARTBEAT_INTERVAL, Shared};
use crate::registry::keys;
use crate::wire::answers::{
    CoordinatorView, DaemonState, FleetNode, FleetView, NodeView, RegistryView,
};

/// A node is alive while its heartbeat is younger than three intervals.
pub const ALIVE: Duration = Duration::from_secs(3 * HEARTBEAT_INTERVAL.as_secs());

pub async fn get(
    State(shared): State<Arc<Shared>>,
    caller: Caller,
) -> Result<Json<DaemonState>, ApiError> {
    let registry = &shared.registry;
    let (fleet_key, lease_key) = (keys::fleet(), keys::lease());
    let (fleet, lease, nodes) = tokio::join!(
        registry.read(&fleet_key),
        registry.read(&lease_key),
        registry.read_all(&keys::NODES),
    );
    let lease = lease?.map(|l| l.value);
    let mut nodes: Vec<FleetNode> = nodes?
        .into_iter()
        .map(|n| FleetNode {
            alive: n.value.heartbeat_at.age() < ALIVE,
            id: n.value.id.to_string(),
            labels: n.value.labels,
            heartbeat_at: n.value.heartbeat_at,
            celld: n.value.celld,
        })
        .collect();
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    let scoped = matches!(caller, Caller::Operator(_)) && !caller.is_admin();
    Ok(Json(DaemonState {
        node: NodeView {
            id: shared.id.to_string(),
            version: crate::VERSION.to_owned(),
            labels: shared.config.labels.clone(),
            advertise: shared.advertise.clone(),
            started_at: shared.started_at,
            celld: shared.runtime.celld_info(),
            celld_error: shared.runtime.celld_error.clone(),
        },
        fleet: fleet?.map(|f| FleetView {
            id: f.value.id,
            created_at: f.value.created_at,
        }),
        registry: RegistryView {
            kind: registry.store().kind().to_owned(),
            location: registry.store().location(),
            requests: registry.store().requests(),
        },
        coordinator: CoordinatorView {
            is_self: matches!(
                shared.coordinator.holder(),
                crate::node::coordinator::Holder::Me(_)
            ),
            holder: lease.as_ref().map(|l| l.holder.to_string()),
            epoch: lease.as_ref().map(|l| l.epoch),
            expires_at: lease.as_ref().map(|l| l.expires_at),
            last_assignment_at: *crate::node::runtime::lock(&shared.coordinator.last_assignment),
        },
        reconcile: {
            let mut stats = lock(&shared.runtime.stats).clone();
            if scoped {
                // Errors may name any application's records.
                stats.last_error = stats
                    .last_error
                    .map(|_| "the last pass failed; an admin can see why".into());
            }
            stats
        },
        applications: shared
            .runtime
            .served_applications()
            .into_iter()
            .filter(|app| caller.require_reach(&app.name).is_ok())
            .collect(),
        nodes,
        scoped,
    }))
}
