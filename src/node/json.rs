//! `JsonBody<T>`: the one way a route reads a JSON control body, bounded by
//! `api.jsonBytes`. A `Content-Length` above the bound is refused before a
//! byte is read; a chunked body is cut off the moment it grows past the
//! bound and dropped, never aggregated.

use axum::extract::{FromRef, FromRequest, Request};
use axum::http::header;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::de::DeserializeOwned;

use super::error::ApiError;
use crate::wire::Code;

/// The bound on JSON control bodies, in bytes (`api.jsonBytes`).
#[derive(Debug, Clone, Copy)]
pub struct JsonLimit(pub usize);

/// A JSON request body deserialised into `T`.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<S, T> FromRequest<S> for JsonBody<T>
where
    S: Send + Sync,
    JsonLimit: FromRef<S>,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let JsonLimit(limit) = JsonLimit::from_ref(state);
        let headers = request.headers();
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(too_large(limit));
        }
        let media = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase()
            });
        if media.as_deref() != Some("application/json") {
            return Err(ApiError::new(
                Code::UnsupportedMediaType,
                "this route takes a JSON body: send content-type: application/json",
            ));
        }
        let bytes = match Limited::new(request.into_body(), limit).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
                return Err(too_large(limit));
            }
            Err(e) => {
                return Err(ApiError::invalid_input(format!(
                    "the body could not be read: {e}"
                )));
            }
        };
        if bytes.is_empty() {
            return Err(ApiError::invalid_input("a JSON body is required"));
        }
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|e| ApiError::invalid_input(format!("the JSON body is not valid: {e}")))
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        Code::ResourceLimit,
        format!("JSON bodies are limited to {limit} bytes (api.jsonBytes)"),
    )
}
