//! `FleetRouting` (DESIGN §11): which hosts go to which upstreams, as each
//! node publishes it at `/v1/ingress/routes`.

use serde::{Deserialize, Serialize};

use crate::wire::Timestamp;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetRouting {
    pub v: u8,
    pub fleet: String,
    pub node: String,
    pub generated_at: Timestamp,
    pub api: ApiRouting,
    pub routes: Vec<Route>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiRouting {
    pub hosts: Vec<String>,
    pub upstreams: Vec<Upstream>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    pub application: String,
    pub hosts: Vec<String>,
    pub tls: Vec<TlsWildcard>,
    pub upstreams: Vec<Upstream>,
}

/// A host served under another application's wildcard claim: the
/// certificate that covers it is the wildcard of `wildcard_of`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TlsWildcard {
    pub host: String,
    pub wildcard_of: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upstream {
    pub node: String,
    pub url: String,
}

impl FleetRouting {
    /// Every host the document names exactly: route hosts and API hosts
    /// (what may get a certificate).
    pub fn names(&self, host: &str) -> bool {
        self.api.hosts.iter().any(|h| h == host)
            || self
                .routes
                .iter()
                .any(|r| r.hosts.iter().any(|h| h == host))
    }

    /// The same document with `node`'s upstreams first on every route.
    pub fn preferring(&self, node: &str) -> FleetRouting {
        let mut copy = self.clone();
        let first = |upstreams: &mut Vec<Upstream>| upstreams.sort_by_key(|u| u.node != node);
        first(&mut copy.api.upstreams);
        for route in &mut copy.routes {
            first(&mut route.upstreams);
        }
        copy
    }
}
