//! Who is calling: the authentication extractor and the route guards.
//!
//! [`Caller`] verifies the bearer token on every request, reading the key it
//! names from the registry each time (an operator record, or a node record
//! for `node:` kids), so a revoked key is refused on the very next request
//! on every node. Every way a token fails is the same `auth-invalid`; the
//! reason goes to the debug log only, never the token.
//!
//! Guards narrow the caller: [`OperatorCaller`] (a node token is
//! `auth-scope`) and [`AdminCaller`]. Application scope is checked with
//! [`Caller::require_reach`] right after authentication, before any other
//! I/O, and its refusal never says what the key does reach.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

use super::{ApiError, Shared};
use crate::auth::token::{self, TokenError};
use crate::names::{NodeId, OperatorId, scope_reaches};
use crate::registry::{Role, TrustedOperator, keys};
use crate::wire::Code;

/// An authenticated caller.
#[derive(Debug, Clone)]
pub enum Caller {
    /// A node of this fleet, by its node token.
    Node(NodeId),
    /// An operator key, with its record as read for this request.
    Operator(TrustedOperator),
}

/// The one body of every authentication failure.
pub fn auth_invalid() -> ApiError {
    ApiError::new(
        Code::AuthInvalid,
        "a bearer token signed by a key registered in this fleet is required",
    )
}

fn refuse(reason: TokenError) -> ApiError {
    tracing::debug!(%reason, "token refused");
    auth_invalid()
}

/// The token of an `Authorization: Bearer <token>` header.
fn bearer(parts: &Parts) -> Result<&str, ApiError> {
    let value = parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| refuse(TokenError::Malformed))?;
    let (scheme, token) = value
        .split_once(' ')
        .ok_or_else(|| refuse(TokenError::Malformed))?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(refuse(TokenError::Malformed));
    }
    Ok(token)
}

impl Caller {
    /// Verifies `token` against the key its `kid` names in the registry.
    pub async fn authenticate(shared: &Shared, token: &str) -> Result<Caller, ApiError> {
        let unverified = token::parse(token, token::now()).map_err(refuse)?;
        let (caller, key) = match unverified.kid.strip_prefix("node:") {
            Some(node) => {
                let id = NodeId::parse(node).map_err(|_| refuse(TokenError::UnknownKey))?;
                let record = shared.registry.read(&keys::node(&id)).await?;
                let record = record.ok_or_else(|| refuse(TokenError::UnknownKey))?.value;
                (Caller::Node(id), record.public_key)
            }
            None => {
                let id = OperatorId::parse(&unverified.kid)
                    .map_err(|_| refuse(TokenError::UnknownKey))?;
                let record = shared.registry.read(&keys::operator(&id)).await?;
                let record = record.ok_or_else(|| refuse(TokenError::UnknownKey))?.value;
                let key = record.public_key.clone();
                (Caller::Operator(record), key)
            }
        };
        unverified.verify(&key).map_err(refuse)?;
        Ok(caller)
    }

    /// Who this is, for records and logs (`op-9f3c`, `node:vps-a`).
    pub fn actor(&self) -> String {
        match self {
            Caller::Node(id) => format!("node:{id}"),
            Caller::Operator(record) => record.id.to_string(),
        }
    }

    pub fn is_admin(&self) -> bool {
        matches!(self, Caller::Operator(record) if record.role == Role::Admin)
    }

    /// Refuses an application outside an operator key's scope (nodes reach
    /// every application). Call before any other I/O.
    pub fn require_reach(&self, application: &str) -> Result<(), ApiError> {
        match self {
            Caller::Operator(record) if !scope_reaches(&record.applications, application) => {
                Err(ApiError::new(
                    Code::AuthScope,
                    format!("this key's scope does not reach application {application}"),
                ))
            }
            _ => Ok(()),
        }
    }
}

impl FromRequestParts<Arc<Shared>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, shared: &Arc<Shared>) -> Result<Self, ApiError> {
        let token = bearer(parts)?;
        Caller::authenticate(shared, token).await
    }
}

/// An operator token's caller; a node token is `auth-scope`.
#[derive(Debug, Clone)]
pub struct OperatorCaller(pub TrustedOperator);

impl FromRequestParts<Arc<Shared>> for OperatorCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, shared: &Arc<Shared>) -> Result<Self, ApiError> {
        match Caller::from_request_parts(parts, shared).await? {
            Caller::Operator(record) => Ok(OperatorCaller(record)),
            Caller::Node(_) => Err(ApiError::new(
                Code::AuthScope,
                "this route takes an operator token, not a node token",
            )),
        }
    }
}

/// An admin operator's caller.
#[derive(Debug, Clone)]
pub struct AdminCaller(pub TrustedOperator);

impl FromRequestParts<Arc<Shared>> for AdminCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, shared: &Arc<Shared>) -> Result<Self, ApiError> {
        let OperatorCaller(record) = OperatorCaller::from_request_parts(parts, shared).await?;
        if record.role != Role::Admin {
            return Err(ApiError::new(
                Code::AuthScope,
                "this route needs an admin key",
            ));
        }
        Ok(AdminCaller(record))
    }
}

/// The ingress's caller: a bearer equal to one of the admitted ingress
/// tokens, compared in constant time against every one of them. Operator
/// and node tokens are not ingress tokens; every refusal is the same
/// `auth-invalid`.
#[derive(Debug, Clone, Copy)]
pub struct IngressCaller;

impl FromRequestParts<Arc<Shared>> for IngressCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, shared: &Arc<Shared>) -> Result<Self, ApiError> {
        use subtle::ConstantTimeEq;
        let token = bearer(parts)?.as_bytes();
        let admitted = shared
            .local
            .ingress_tokens
            .iter()
            .fold(subtle::Choice::from(0), |any, candidate| {
                any | candidate.as_bytes().ct_eq(token)
            });
        if bool::from(admitted) {
            Ok(IngressCaller)
        } else {
            Err(refuse(TokenError::UnknownKey))
        }
    }
}
