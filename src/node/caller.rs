//! Who is calling: the authentication extractor and the route guards.
//!
//! [`Caller`] verifies the bearer token on every request, reading the key it
//! names from the registry each time (an operator record, or a node record
//! for `node:` kids), so a revoked key is refused on the very next request
//! on every node. Every way a token fails is the same `auth-invalid`; the
//! reason goes to the debug log only, never the token.
//!
//! A bearer that is not an EdDSA token is tried as a workload OIDC token
//! (`node/workload.rs`): only [`DeployCaller`], the extractor of the two
//! deploy routes, admits one; every other route answers a verified workload
//! token with `auth-scope` (and one that does not verify with the same
//! `auth-invalid` as any bad token).
//!
//! Guards narrow the caller: [`OperatorCaller`] (a node token is
//! `auth-scope`) and [`AdminCaller`]. Application scope is checked with
//! [`Caller::require_reach`] right after authentication, before any other
//! I/O, and its refusal never says what the key does reach.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

use super::workload::Workload;
use super::{ApiError, Shared};
use crate::auth::oidc::WorkloadError;
use crate::auth::token::{self, TokenError};
use crate::names::{NodeId, OperatorId, scope_reaches};
use crate::registry::{Role, TrustEntry, TrustedOperator, keys};
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

fn refuse_workload(reason: WorkloadError) -> ApiError {
    tracing::debug!(%reason, "workload token refused");
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
        match DeployCaller::from_request_parts(parts, shared).await? {
            DeployCaller::Fleet(caller) => Ok(caller),
            DeployCaller::Workload(_) => Err(ApiError::new(
                Code::AuthScope,
                "a workload token is accepted on the deploy routes only (POST /v1/applications/{name}/deploys, GET /v1/deploys/{id})",
            )),
        }
    }
}

/// The caller of the deploy routes: an operator or node token, or a
/// verified workload OIDC token. What a workload may do is decided by the
/// application's trust policy ([`DeployCaller::require_trust`]).
#[derive(Debug, Clone)]
pub enum DeployCaller {
    Fleet(Caller),
    Workload(Workload),
}

impl DeployCaller {
    /// Verifies an EdDSA token as an operator or node token and anything
    /// else as a workload token.
    pub async fn authenticate(shared: &Shared, token: &str) -> Result<DeployCaller, ApiError> {
        match crate::auth::oidc::peek_alg(token).as_deref() {
            Some("EdDSA") | None => Caller::authenticate(shared, token)
                .await
                .map(DeployCaller::Fleet),
            Some(_) => shared
                .workloads
                .verify(token)
                .await
                .map(DeployCaller::Workload)
                .map_err(refuse_workload),
        }
    }

    /// Who this is, for records and logs (`op-9f3c`, `oidc:<iss>#<sub>`).
    pub fn actor(&self) -> String {
        match self {
            DeployCaller::Fleet(caller) => caller.actor(),
            DeployCaller::Workload(workload) => workload.actor(),
        }
    }
}

/// Does `policy` admit this workload? An entry admits its exact issuer and
/// its subject exactly, or every subject starting with what precedes a
/// trailing `*`.
pub fn trusts(policy: &[TrustEntry], workload: &Workload) -> bool {
    policy.iter().any(|entry| {
        entry.issuer == workload.issuer
            && match entry.subject.strip_suffix('*') {
                Some(prefix) => workload.subject.starts_with(prefix),
                None => entry.subject == workload.subject,
            }
    })
}

/// The refusal of a verified workload that no trust entry of `application`
/// admits, including when there is no such application (a workload token
/// never creates one, and learns nothing of what exists). It names what the
/// token presented — what a CI job can act on — and never the policy.
pub fn trust_mismatch(application: &str, workload: &Workload) -> ApiError {
    ApiError::new(
        Code::TrustMismatch,
        format!(
            "no trust entry of application {application} admits issuer {:?} with subject {:?}; an operator of {application} can add an entry for it to the trust policy (a workload token deploys only to an application an operator created)",
            workload.issuer, workload.subject
        ),
    )
}

impl FromRequestParts<Arc<Shared>> for DeployCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, shared: &Arc<Shared>) -> Result<Self, ApiError> {
        let token = bearer(parts)?;
        DeployCaller::authenticate(shared, token).await
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
