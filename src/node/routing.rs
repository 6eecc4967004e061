//! Building the routing document from the registry (DESIGN §11), and its
//! Traefik rendering. Pure functions: the reconcile pass feeds them what it
//! read, the routes serve what they built.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

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
    // Wildcard claims by host: H → the application holding it.
    let wildcards: BTreeMap<&str, &str> = apps
        .iter()
        .flat_map(|a| {
            a.domains
                .iter()
                .filter(|d| d.wildcard)
                .map(move |d| (d.host.as_str(), a.name.as_str()))
        })
        .collect();
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
        let mut tls = Vec::new();
        for (host, holder) in &wildcards {
            let Some(env) = app.name.as_str().strip_prefix(&format!("{holder}-")) else {
                continue;
            };
            if crate::names::is_label(env) {
                let covered = format!("{env}.{host}");
                hosts.insert(covered.clone());
                tls.push(TlsWildcard {
                    host: covered,
                    wildcard_of: (*host).to_owned(),
                });
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

fn load_balancer(upstreams: &[&Upstream], health: &str) -> Value {
    json!({"loadBalancer": {
        "servers": upstreams.iter().map(|u| json!({"url": u.url})).collect::<Vec<_>>(),
        "passHostHeader": true,
        "healthCheck": {"path": health, "interval": "5s", "timeout": "2s"},
    }})
}

/// Services for one route: a plain load balancer, or — when `prefer` serves
/// it beside other nodes — a failover from the preferred node's servers to
/// the rest.
fn services(
    services: &mut Map<String, Value>,
    name: &str,
    upstreams: &[Upstream],
    health: &str,
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
    services.insert(name.to_owned(), json!({"failover": {"service": format!("{name}-preferred"), "fallback": format!("{name}-rest"), "healthCheck": {}}}));
    services.insert(
        format!("{name}-preferred"),
        load_balancer(&preferred, health),
    );
    services.insert(format!("{name}-rest"), load_balancer(&rest, health));
}

/// A Traefik dynamic configuration (HTTP provider) of the document.
pub fn traefik(routing: &FleetRouting, config: &NodeConfig, prefer: Option<&str>) -> Value {
    let mut routers = Map::new();
    let mut all_services = Map::new();
    let router = |hosts: &[String], service: &str, tls_domains: Vec<Value>| {
        let mut router = json!({"rule": rule(hosts), "service": service});
        if !config.traefik_entry_points.is_empty() {
            router["entryPoints"] = json!(config.traefik_entry_points);
        }
        if let Some(resolver) = &config.traefik_cert_resolver {
            let mut tls = json!({"certResolver": resolver});
            if !tls_domains.is_empty() {
                tls["domains"] = Value::Array(tls_domains);
            }
            router["tls"] = tls;
        }
        router
    };
    for route in &routing.routes {
        let name = format!("app-{}", route.application);
        let mut wildcard_domains: Vec<Value> = Vec::new();
        let parents: BTreeSet<&str> = route.tls.iter().map(|t| t.wildcard_of.as_str()).collect();
        for parent in parents {
            wildcard_domains.push(json!({"main": parent, "sans": [format!("*.{parent}")]}));
        }
        routers.insert(name.clone(), router(&route.hosts, &name, wildcard_domains));
        services(
            &mut all_services,
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
        services(
            &mut all_services,
            "scafo-api",
            &routing.api.upstreams,
            "/.well-known/scafo/health",
            prefer,
        );
    }
    json!({"http": {"routers": routers, "services": all_services}})
}
