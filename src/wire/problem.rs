//! RFC 9457 problem documents and the one table of problem codes (DESIGN §3).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The media type every failure is answered with.
pub const CONTENT_TYPE: &str = "application/problem+json";

macro_rules! codes {
    ($($variant:ident => $code:literal, $status:literal, $title:literal;)*) => {
        /// Every problem code a node answers with. Clients branch on these.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code { $($variant,)* }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The stable machine-readable spelling.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $code,)* }
            }

            /// The HTTP status this code is always answered with.
            pub fn status(self) -> u16 {
                match self { $(Code::$variant => $status,)* }
            }

            /// The short human summary used unless a route says otherwise.
            pub fn title(self) -> &'static str {
                match self { $(Code::$variant => $title,)* }
            }

            pub fn parse(code: &str) -> Option<Code> {
                match code { $($code => Some(Code::$variant),)* _ => None }
            }
        }
    };
}

codes! {
    InvalidInput => "invalid-input", 400, "Malformed request";
    AuthInvalid => "auth-invalid", 401, "Invalid or missing token";
    AuthScope => "auth-scope", 403, "Outside the caller's scope";
    TrustMismatch => "trust-mismatch", 403, "Workload not admitted by the trust policy";
    NotFound => "not-found", 404, "Not found";
    MethodNotAllowed => "method-not-allowed", 405, "Method not allowed";
    CasConflict => "cas-conflict", 409, "Concurrent update";
    DeploysFrozen => "deploys-frozen", 409, "Deploys are frozen";
    ApplicationBlocked => "application-blocked", 409, "Application is blocked";
    ApplicationRetired => "application-retired", 409, "Application is retired";
    HostClaimed => "host-claimed", 409, "Host is claimed by another application";
    RetirementRequired => "retirement-required", 409, "Application must be retired first";
    GraceExpired => "grace-expired", 409, "Retirement grace period has ended";
    CelldMismatch => "celld-mismatch", 409, "Nodes run different Celld releases";
    ResourceLimit => "resource-limit", 413, "Request too large";
    UnsupportedMediaType => "unsupported-media-type", 415, "Unsupported media type";
    Draining => "draining", 503, "Node is draining";
    RegistryUnavailable => "registry-unavailable", 503, "Registry unavailable";
    CoordinatorUnavailable => "coordinator-unavailable", 503, "Coordinator unavailable";
    Internal => "internal", 500, "Internal error";
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An RFC 9457 problem document as scafo writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    #[serde(rename = "type")]
    pub kind: String,
    pub code: String,
    pub title: String,
    pub status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

impl Problem {
    pub fn new(
        code: Code,
        title: Option<&str>,
        detail: Option<String>,
        instance: Option<String>,
    ) -> Self {
        Problem {
            kind: format!("urn:scafo:problem:{}", code.as_str()),
            code: code.as_str().to_owned(),
            title: title.unwrap_or(code.title()).to_owned(),
            status: code.status(),
            detail,
            instance,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_and_has_an_error_status() {
        for code in Code::ALL {
            assert_eq!(Code::parse(code.as_str()), Some(*code));
            assert!((400..600).contains(&code.status()));
        }
    }

    #[test]
    fn serialises_as_rfc9457() {
        let problem = Problem::new(
            Code::InvalidInput,
            None,
            Some("bad".into()),
            Some("/x".into()),
        );
        let json = serde_json::to_value(&problem).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"type": "urn:scafo:problem:invalid-input", "code": "invalid-input",
                "title": "Malformed request", "status": 400, "detail": "bad", "instance": "/x"})
        );
    }
}
