//! Per-request context: a request id (echoed as `X-Request-Id`, named in
//! every 5xx), the path for problem `instance`s, and one log line per
//! answered request. Tokens and bodies are never logged. A handler that
//! panics is answered as `internal` rather than with a dropped connection.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use tracing::Instrument;

use super::error::ApiError;

#[derive(Debug, Clone)]
struct Context {
    id: String,
    path: String,
}

tokio::task_local! {
    static CONTEXT: Context;
}

/// The id of the request being answered (`-` outside one).
pub fn current_id() -> String {
    CONTEXT
        .try_with(|c| c.id.clone())
        .unwrap_or_else(|_| "-".into())
}

/// The path of the request being answered.
pub fn current_path() -> Option<String> {
    CONTEXT.try_with(|c| c.path.clone()).ok()
}

fn new_id() -> String {
    format!("{:016x}", getrandom::u64().unwrap_or_default())
}

/// The outermost layer of every node route.
pub async fn track(request: Request, next: Next) -> Response {
    let context = Context {
        id: new_id(),
        path: request.uri().path().to_owned(),
    };
    let method = request.method().clone();
    let span = tracing::info_span!("request", id = %context.id, %method, path = %context.path);
    let started = Instant::now();
    let id = context.id.clone();
    let quiet = context.path.starts_with("/.well-known/");
    // A panicking handler answers `internal` with the request id instead of
    // dropping the connection; the panic itself is logged by the hook.
    let answer = AssertUnwindSafe(next.run(request)).catch_unwind();
    let mut response = CONTEXT
        .scope(context, async {
            let response = answer
                .await
                .unwrap_or_else(|_| ApiError::internal("a route handler panicked").into_response());
            as_problem(response).await
        })
        .instrument(span.clone())
        .await;
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert("x-request-id", value);
    }
    let status = response.status().as_u16();
    let micros = started.elapsed().as_micros() as u64;
    span.in_scope(|| {
        if quiet && status < 400 {
            tracing::debug!(status, micros, "answered");
        } else {
            tracing::info!(status, micros, "answered");
        }
    });
    response
}

/// Every failure leaves as a problem document: a rejection axum wrote
/// itself (a malformed path or query) is rewritten into one.
async fn as_problem(response: Response) -> Response {
    let status = response.status();
    let is_problem = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == crate::wire::problem::CONTENT_TYPE.as_bytes());
    if !(status.is_client_error() || status.is_server_error()) || is_problem {
        return response;
    }
    use crate::wire::Code;
    let code = match status.as_u16() {
        400 => Code::InvalidInput,
        401 => Code::AuthInvalid,
        404 => Code::NotFound,
        405 => Code::MethodNotAllowed,
        413 => Code::ResourceLimit,
        415 => Code::UnsupportedMediaType,
        500..=599 => Code::Internal,
        _ => Code::InvalidInput,
    };
    let allow = response.headers().get(axum::http::header::ALLOW).cloned();
    let text = axum::body::to_bytes(response.into_body(), 16 * 1024)
        .await
        .unwrap_or_default();
    let detail = match code {
        Code::Internal => ApiError::internal(String::from_utf8_lossy(&text)).detail,
        _ => Some(String::from_utf8_lossy(&text).into_owned()).filter(|t| !t.is_empty()),
    };
    let mut rewritten = super::error::problem_response(code, None, detail);
    if let Some(allow) = allow {
        rewritten
            .headers_mut()
            .insert(axum::http::header::ALLOW, allow);
    }
    rewritten
}
