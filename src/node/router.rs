//! Every route and layer of the node API, in this one function.

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::Method;
use axum::middleware;
use axum::response::Response;
use axum::routing::{delete, get, post};

use super::Shared;
use super::error::problem_response;
use super::routes;
use crate::wire::Code;

pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/.well-known/scafo/health", get(routes::health::get))
        .route("/v1/state", get(routes::state::get))
        .route(
            "/v1/operators",
            get(routes::operators::list).post(routes::operators::register),
        )
        .route("/v1/operators/{id}", delete(routes::operators::remove))
        .route(
            "/v1/applications/{name}/deploys",
            post(routes::deploys::create),
        )
        .route("/v1/deploys/{id}", get(routes::deploys::get))
        .route(
            "/v1/storage/objects/{*key}",
            get(routes::storage::get)
                .head(routes::storage::head)
                .put(routes::storage::put)
                .delete(routes::storage::delete),
        )
        .route("/v1/storage/list", get(routes::storage::list_root))
        .route("/v1/storage/list/", get(routes::storage::list_root))
        .route("/v1/storage/list/{*prefix}", get(routes::storage::list))
        .route(
            "/v1/storage/locks/{*name}",
            post(routes::storage::lock).delete(routes::storage::unlock),
        )
        .route("/v1/ingress/routes", get(routes::ingress::generic))
        .route("/v1/ingress/routes/{format}", get(routes::ingress::format))
        .route("/v1/applications", get(routes::applications::list))
        .route(
            "/v1/applications/{name}",
            get(routes::applications::show).delete(routes::applications::delete),
        )
        .route(
            "/v1/applications/{name}/block",
            post(routes::applications::block),
        )
        .route(
            "/v1/applications/{name}/unblock",
            post(routes::applications::unblock),
        )
        .route(
            "/v1/applications/{name}/labels",
            post(routes::applications::labels),
        )
        .route(
            "/v1/applications/{name}/retire",
            post(routes::applications::retire),
        )
        .route(
            "/v1/applications/{name}/unretire",
            post(routes::applications::unretire),
        )
        .route(
            "/v1/applications/{name}/selector",
            post(routes::applications::selector),
        )
        .route(
            "/v1/applications/{name}/replicas",
            post(routes::applications::replicas),
        )
        .route(
            "/v1/applications/{name}/trust",
            post(routes::applications::trust),
        )
        .route(
            "/v1/applications/{name}/domains/{host}",
            post(routes::domains::claim).delete(routes::domains::release),
        )
        .route(
            "/v1/fleet/freeze",
            get(routes::fleet::status)
                .post(routes::fleet::freeze)
                .delete(routes::fleet::lift),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn(super::request::track))
        .with_state(shared)
}

async fn not_found(method: Method, request: Request) -> Response {
    problem_response(
        Code::NotFound,
        None,
        Some(format!(
            "no route answers {method} {}",
            request.uri().path()
        )),
    )
}

async fn method_not_allowed(method: Method, request: Request) -> Response {
    problem_response(
        Code::MethodNotAllowed,
        None,
        Some(format!("{} does not answer {method}", request.uri().path())),
    )
}
