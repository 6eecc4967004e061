//! `JsonBody<T>` and `OptionalJsonBody<T>`: the only ways a route reads a
//! JSON control body, bounded by `api.jsonBytes`. A `Content-Length` above
//! the bound is refused before a byte is read; a chunked body is cut off the
//! moment it grows past the bound and dropped, never aggregated.

use axum::body::Bytes;
use axum::extract::{FromRef, FromRequest, Request};
use axum::http::header;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::de::DeserializeOwned;

use super::error::ApiError;
use crate::wire::Code;

/// The bound on JSON control bodies, in bytes (`api.jsonBytes`).
#[derive(Debug, Clone, Copy)]
pub struct JsonLimit(pub usize);

/// A required JSON request body deserialised into `T`.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

/// A JSON body that may be left out entirely (no bytes at all); when there
/// is one, it is held to the same rules as [`JsonBody`].
#[derive(Debug)]
pub struct OptionalJsonBody<T>(pub Option<T>);

impl<S, T> FromRequest<S> for JsonBody<T>
where
    S: Send + Sync,
    JsonLimit: FromRef<S>,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let (json, bytes) = read(request, JsonLimit::from_ref(state)).await?;
        if bytes.is_empty() {
            return Err(ApiError::invalid_input("a JSON body is required"));
        }
        parse(json, &bytes).map(JsonBody)
    }
}

impl<S, T> FromRequest<S> for OptionalJsonBody<T>
where
    S: Send + Sync,
    JsonLimit: FromRef<S>,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let (json, bytes) = read(request, JsonLimit::from_ref(state)).await?;
        if bytes.is_empty() {
            return Ok(OptionalJsonBody(None));
        }
        parse(json, &bytes).map(|value| OptionalJsonBody(Some(value)))
    }
}

/// Reads the body within the bound; answers whether it was declared JSON.
async fn read(request: Request, JsonLimit(limit): JsonLimit) -> Result<(bool, Bytes), ApiError> {
    let headers = request.headers();
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large(limit));
    }
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .is_some_and(|media| media == "application/json");
    match Limited::new(request.into_body(), limit).collect().await {
        Ok(collected) => Ok((json, collected.to_bytes())),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large(limit)),
        Err(e) => Err(ApiError::invalid_input(format!(
            "the body could not be read: {e}"
        ))),
    }
}

fn parse<T: DeserializeOwned>(json: bool, bytes: &[u8]) -> Result<T, ApiError> {
    if !json {
        return Err(ApiError::new(
            Code::UnsupportedMediaType,
            "this route takes a JSON body: send content-type: application/json",
        ));
    }
    // Every control body is a JSON object: serde would otherwise read an
    // array positionally into a struct.
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::invalid_input(format!("the body is not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::invalid_input("the body must be a JSON object"));
    }
    T::deserialize(value)
        .map_err(|e| ApiError::invalid_input(format!("the JSON body is not valid: {e}")))
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        Code::ResourceLimit,
        format!("JSON bodies are limited to {limit} bytes (api.jsonBytes)"),
    )
}
