//! `ApiError`: every failure a route can answer, mapped to its RFC 9457
//! document from the one code table in `wire::problem`.

use std::borrow::Cow;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::request;
use crate::registry::RegistryError;
use crate::wire::problem::{CONTENT_TYPE, Code, Problem};

/// Seconds a client is told to wait when the registry is unreachable.
pub const RETRY_AFTER_SECONDS: u32 = 5;

#[derive(Debug)]
pub struct ApiError {
    pub code: Code,
    pub title: Option<Cow<'static, str>>,
    pub detail: Option<String>,
}

impl ApiError {
    pub fn new(code: Code, detail: impl Into<String>) -> Self {
        ApiError {
            code,
            title: None,
            detail: Some(detail.into()),
        }
    }

    /// A route-specific title (node-api.txt names some, e.g. "Deploys are not frozen").
    pub fn titled(mut self, title: impl Into<Cow<'static, str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    pub fn invalid_input(detail: impl Into<String>) -> Self {
        Self::new(Code::InvalidInput, detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(Code::NotFound, detail)
    }

    /// A bug or an unexpected failure: logged in full with the request id,
    /// answered with only that id.
    pub fn internal(error: impl std::fmt::Display) -> Self {
        let id = request::current_id();
        tracing::error!(request_id = %id, %error, "internal error");
        Self::new(
            Code::Internal,
            format!("the node logged this failure as request {id}"),
        )
    }
}

impl From<RegistryError> for ApiError {
    fn from(err: RegistryError) -> Self {
        match err {
            RegistryError::Unavailable(cause) => {
                let id = request::current_id();
                tracing::warn!(request_id = %id, error = %cause, "registry unavailable");
                ApiError::new(
                    Code::RegistryUnavailable,
                    format!("the registry bucket cannot be reached; retry shortly (request {id})"),
                )
            }
            RegistryError::Conflict { key } => ApiError::new(
                Code::CasConflict,
                format!(
                    "{} kept changing under concurrent writers; retry",
                    describe_key(&key)
                ),
            ),
            other => ApiError::internal(other),
        }
    }
}

/// A registry key as a reader would call it, without the bucket layout.
fn describe_key(key: &str) -> String {
    let name = key.rsplit('/').next().unwrap_or(key);
    name.strip_suffix(".json").unwrap_or(name).to_owned()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        problem_response(self.code, self.title.as_deref(), self.detail)
    }
}

/// Builds the problem response for `code`, with `instance` set to the path
/// of the request being answered.
pub fn problem_response(code: Code, title: Option<&str>, detail: Option<String>) -> Response {
    let problem = Problem::new(code, title, detail, request::current_path());
    let body = serde_json::to_vec(&problem).unwrap_or_default();
    let status = StatusCode::from_u16(code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    match code {
        Code::AuthInvalid => {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        Code::RegistryUnavailable | Code::CoordinatorUnavailable | Code::Draining => {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
        }
        _ => {}
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreError;

    #[test]
    fn registry_unavailable_is_503_with_retry_after() {
        let err = ApiError::from(RegistryError::Unavailable(StoreError::Unavailable(
            "down".into(),
        )));
        let response = err.into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            response
                .headers()
                .get(header::RETRY_AFTER)
                .map(|v| v.as_bytes()),
            Some(&b"5"[..])
        );
        assert_eq!(
            response
                .headers()
                .get(header::CONTENT_TYPE)
                .map(|v| v.as_bytes()),
            Some(CONTENT_TYPE.as_bytes())
        );
    }

    #[test]
    fn lost_races_are_cas_conflict() {
        let err = ApiError::from(RegistryError::Conflict {
            key: "registry/nodes/a.json".into(),
        });
        assert_eq!(err.code, Code::CasConflict);
        assert_eq!(
            err.detail.as_deref(),
            Some("a kept changing under concurrent writers; retry")
        );
    }
}
