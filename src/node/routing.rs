//! Building the routing document from the registry (DESIGN §11), and its
//! Traefik rendering. Pure functions: the reconcile pass feeds them what it
//! read, the routes serve what they built.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::config::NodeConfig;
use crate::registry::{ApplicationRecord, NodeRecord};
use crate::wire::Timestamp;
use crate::wire::routing::{ApiRouting, FleetRouting, Route, TlsWildcard, Upstream};

/// The formats `/v1/ingress/routes/{format}` renders.
pub const FORMATS: &[&str] = &["traefik"];

/// The document for `apps` served by the alive `nodes`.
pub fn build(
    config: &NodeConfig,
    fleet: &str,
    apps: &[ApplicationRecord],
    nodes: &[NodeRecord],
) -> FleetRouting {
    // Wildcard claims by the application holding them.
    let mut wildcards: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for app in apps {
        for domain in app.domains.iter().filter(|d| d.wildcard) {
            wildcards
                .entry(app.name.as_str())
                .or_default()
                .push(domain.host.as_str());
        }
    }
    let mut routes = Vec::new();
    for app in apps
        .iter()
        .filter(|a| !a.blocked && a.retired.is_none() && a.release.live.is_some())
    {
        let mut upstreams: Vec<Upstream> = nodes
            .iter()
            .filter_map(|n| {
                n.serving.get(app.name.as_str()).map(|s| Upstream {
                    node: n.id.to_string(),
                    url: s.url.clone(),
                })
            })
            .collect();
        if upstreams.is_empty() {
            continue;
        }
        upstreams.sort_by(|a, b| a.node.cmp(&b.node));
        let mut hosts: BTreeSet<String> = config
            .platform_domains
            .iter()
            .map(|d| format!("{}.{d}", app.name))
            .collect();
        hosts.extend(app.domains.iter().map(|d| d.host.clone()));
        // `<holder>-<env>` answers on `<env>.<H>` for each wildcard H of
        // the holder: every `-` of the name may end a holder's name.
        let mut tls = Vec::new();
        let name = app.name.as_str();
        for (at, _) in name.match_indices('-') {
            let (holder, env) = (&name[..at], &name[at + 1..]);
            let Some(held) = wildcards.get(holder) else {
                continue;
            };
            if crate::names::is_label(env) {
                for host in held {
                    let covered = format!("{env}.{host}");
                    hosts.insert(covered.clone());
                    tls.push(TlsWildcard {
                        host: covered,
                        wildcard_of: (*host).to_owned(),
                    });
                }
            }
        }
        tls.sort_by(|a, b| a.host.cmp(&b.host));
        routes.push(Route {
            application: app.name.to_string(),
            hosts: hosts.into_iter().collect(),
            tls,
            upstreams,
        });
    }
    routes.sort_by(|a, b| a.application.cmp(&b.application));
    let mut api_upstreams: Vec<Upstream> = nodes
        .iter()
        .map(|n| Upstream {
            node: n.id.to_string(),
            url: n.advertise.clone(),
        })
        .collect();
    api_upstreams.sort_by(|a, b| a.node.cmp(&b.node));
    FleetRouting {
        v: 1,
        fleet: fleet.to_owned(),
        node: config.node_id.to_string(),
        generated_at: Timestamp::now(),
        api: ApiRouting {
            hosts: config.api_hosts.clone(),
            upstreams: api_upstreams,
        },
        routes,
    }
}

fn rule(hosts: &[String]) -> String {
    hosts
        .iter()
        .map(|h| format!("Host(`{h}`)"))
        .collect::<Vec<_>>()
        .join(" || ")
}

/// A Traefik dynamic configuration, as its HTTP provider reads it.
#[derive(Debug, Serialize)]
pub struct Traefik<'a> {
    http: TraefikHttp<'a>,
}

#[derive(Debug, Serialize)]
struct TraefikHttp<'a> {
    routers: BTreeMap<String, Router<'a>>,
    services: BTreeMap<String, Service<'a>>,
    middlewares: BTreeMap<&'static str, Middleware>,
}

/// A request that could not reach a server (a node that just died) is
/// tried on another before the client sees a failure.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
enum Middleware {
    Retry {
        attempts: u8,
        #[serde(rename = "initialInterval")]
        initial_interval: &'static str,
    },
}

const RETRY: &str = "scafo-retry";

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Router<'a> {
    rule: String,
    service: String,
    middlewares: [&'static str; 1],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    entry_points: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    tls: Option<RouterTls<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RouterTls<'a> {
    cert_resolver: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    domains: Vec<TlsDomain>,
}

#[derive(Debug, Serialize)]
struct TlsDomain {
    main: String,
    sans: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
enum Service<'a> {
    LoadBalancer(LoadBalancer<'a>),
    Failover(Failover),
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct LoadBalancer<'a> {
    servers: Vec<Server<'a>>,
    pass_host_header: bool,
    health_check: HealthCheck<'a>,
}

#[derive(Debug, Serialize)]
struct Server<'a> {
    url: &'a str,
}

#[derive(Debug, Serialize)]
struct HealthCheck<'a> {
    path: &'a str,
    interval: &'static str,
    timeout: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Failover {
    service: String,
    fallback: String,
    health_check: BTreeMap<String, String>,
}

fn load_balancer<'a>(upstreams: &[&'a Upstream], health: &'a str) -> Service<'a> {
    Service::LoadBalancer(LoadBalancer {
        servers: upstreams.iter().map(|u| Server { url: &u.url }).collect(),
        pass_host_header: true,
        health_check: HealthCheck {
            path: health,
            interval: "5s",
            timeout: "2s",
        },
    })
}

/// Services for one route: a plain load balancer, or — when `prefer` serves
/// it beside other nodes — a failover from the preferred node's servers to
/// the rest.
fn add_services<'a>(
    services: &mut BTreeMap<String, Service<'a>>,
    name: &str,
    upstreams: &'a [Upstream],
    health: &'a str,
    prefer: Option<&str>,
) {
    let (preferred, rest): (Vec<&Upstream>, Vec<&Upstream>) = upstreams
        .iter()
        .partition(|u| Some(u.node.as_str()) == prefer);
    if preferred.is_empty() || rest.is_empty() {
        services.insert(
            name.to_owned(),
            load_balancer(&upstreams.iter().collect::<Vec<_>>(), health),
        );
        return;
    }
    services.insert(
        name.to_owned(),
        Service::Failover(Failover {
            service: format!("{name}-preferred"),
            fallback: format!("{name}-rest"),
            health_check: BTreeMap::new(),
        }),
    );
    services.insert(
        format!("{name}-preferred"),
        load_balancer(&preferred, health),
    );
    services.insert(format!("{name}-rest"), load_balancer(&rest, health));
}

/// The Traefik rendering of the document.
pub fn traefik<'a>(
    routing: &'a FleetRouting,
    config: &'a NodeConfig,
    prefer: Option<&str>,
) -> Traefik<'a> {
    let mut routers = BTreeMap::new();
    let mut services = BTreeMap::new();
    let router = |hosts: &[String], service: &str, domains: Vec<TlsDomain>| Router {
        rule: rule(hosts),
        service: service.to_owned(),
        middlewares: [RETRY],
        entry_points: &config.traefik_entry_points,
        tls: config
            .traefik_cert_resolver
            .as_deref()
            .map(|resolver| RouterTls {
                cert_resolver: resolver,
                domains,
            }),
    };
    for route in &routing.routes {
        let name = format!("app-{}", route.application);
        let parents: BTreeSet<&str> = route.tls.iter().map(|t| t.wildcard_of.as_str()).collect();
        let domains = parents
            .into_iter()
            .map(|parent| TlsDomain {
                main: parent.to_owned(),
                sans: vec![format!("*.{parent}")],
            })
            .collect();
        routers.insert(name.clone(), router(&route.hosts, &name, domains));
        add_services(
            &mut services,
            &name,
            &route.upstreams,
            "/.well-known/celld/health",
            prefer,
        );
    }
    if !routing.api.hosts.is_empty() && !routing.api.upstreams.is_empty() {
        routers.insert(
            "scafo-api".into(),
            router(&routing.api.hosts, "scafo-api", Vec::new()),
        );
        add_services(
            &mut services,
            "scafo-api",
            &routing.api.upstreams,
            "/.well-known/scafo/health",
            prefer,
        );
    }
    Traefik {
        http: TraefikHttp {
            routers,
            services,
            middlewares: [(
                RETRY,
                Middleware::Retry {
                    attempts: 3,
                    initial_interval: "50ms",
                },
            )]
            .into(),
        },
    }
}
