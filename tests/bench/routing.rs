//! Benchmarks for routing: building the routing document and rendering it
//! (generic JSON and Traefik) for 10 000 applications on 3 nodes, and the
//! registry requests an idle reconcile pass makes with 1 000 applications.
//!
//!   eval "$(tests/peers)" && cargo bench --bench routing

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../util/mod.rs"]
mod util;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use scafo::cli::SailArgs;
use scafo::names::{AppName, DeployId, NodeId};
use scafo::registry::{ApplicationRecord, DomainClaim, NodeRecord, Registry, Serving, V1, keys};
use scafo::wire::Timestamp;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn fleet(apps: usize) -> (Vec<ApplicationRecord>, Vec<NodeRecord>) {
    let mut records = Vec::new();
    for i in 0..apps {
        let name = AppName::parse(&format!("app{i:05}")).unwrap();
        let mut app = ApplicationRecord::new(name.clone());
        app.release.live = Some(DeployId::new(&name));
        if i % 10 == 0 {
            app.domains.push(DomainClaim {
                host: format!("app{i:05}.example"),
                wildcard: true,
            });
        }
        records.push(app);
    }
    let nodes = (0..3)
        .map(|n| {
            let serving: BTreeMap<String, Serving> = records
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    let deploy = a.release.live.clone().unwrap().to_string();
                    (
                        a.name.to_string(),
                        Serving {
                            deploy,
                            state: "live".into(),
                            url: format!("http://10.0.0.{n}:{}", 17000 + i % 1000),
                        },
                    )
                })
                .collect();
            NodeRecord {
                v: V1,
                id: NodeId::parse(&format!("vps-{n}")).unwrap(),
                public_key: scafo::auth::SecretKey::generate(None).unwrap().public(),
                labels: BTreeMap::new(),
                advertise: format!("http://10.0.0.{n}:7070"),
                version: "bench".into(),
                celld: None,
                started_at: Timestamp::now(),
                heartbeat_at: Timestamp::now(),
                serving,
                failures: BTreeMap::new(),
            }
        })
        .collect();
    (records, nodes)
}

fn build_and_render() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().display().to_string();
    let env = move |name: &str| match name {
        "SCAFO_STATE_DIR" => Some(dir.clone()),
        "SCAFO_NODE_ID" => Some("vps-0".into()),
        "SCAFO_API_HOSTS" => Some("api.fleet.example".into()),
        _ => None,
    };
    let config = scafo::config::resolve(&SailArgs::default(), &env).unwrap();
    let (apps, nodes) = fleet(10_000);
    let (mut build, mut generic, mut traefik) = (Vec::new(), Vec::new(), Vec::new());
    let mut bytes = (0, 0);
    for _ in 0..5 {
        let started = Instant::now();
        let doc = scafo::node::routing::build(&config, "fleet", &apps, &nodes);
        build.push(started.elapsed());
        let started = Instant::now();
        let json = serde_json::to_vec(&doc).unwrap();
        generic.push(started.elapsed());
        let started = Instant::now();
        let rendered =
            serde_json::to_vec(&scafo::node::routing::traefik(&doc, &config, Some("vps-0")))
                .unwrap();
        traefik.push(started.elapsed());
        bytes = (json.len(), rendered.len());
    }
    println!("routing document, 10 000 applications x 3 nodes (median of 5):");
    println!(
        "  build {:.1?}; generic JSON {:.1?} ({} KiB); traefik rendering {:.1?} ({} KiB)",
        median(build),
        median(generic),
        bytes.0 / 1024,
        median(traefik),
        bytes.1 / 1024
    );
}

async fn idle_pass_requests() {
    let node = util::Node::start(util::NodeOptions {
        env: vec![
            ("SCAFO_RECONCILE_INTERVALMS".into(), "200".into()),
            ("SCAFO_COORDINATOR_LEASESECONDS".into(), "600".into()),
        ],
        ..Default::default()
    })
    .await;
    let registry = Registry::new(Arc::new(
        scafo::store::file::FileStore::open(&node.scratch.path().join("bucket")).unwrap(),
    ));
    for i in 0..1000 {
        let name = AppName::parse(&format!("idle{i:04}")).unwrap();
        registry
            .create(
                &keys::application(&name),
                &ApplicationRecord::new(name.clone()),
            )
            .await
            .unwrap();
    }
    let token = node.admin().token();
    let read = || async {
        let state = util::call(&node, "GET", "/v1/state", Some(&token), None)
            .await
            .body;
        (
            state["reconcile"]["passes"].as_u64().unwrap(),
            state["registry"]["requests"].clone(),
        )
    };
    tokio::time::sleep(Duration::from_secs(2)).await; // every record read once
    let (passes_before, before) = read().await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let (passes_after, after) = read().await;
    let passes = passes_after - passes_before;
    let diff = |kind: &str| after[kind].as_u64().unwrap() - before[kind].as_u64().unwrap();
    let (list, get, put, head) = (diff("list"), diff("get"), diff("put"), diff("head"));
    println!();
    println!("idle node, 1 000 applications, reconcile every 200 ms, 10 s window: {passes} passes");
    println!(
        "  {list} LIST, {get} GET, {put} PUT, {head} HEAD in all ({:.2} LIST and {:.2} GET a pass; the PUTs and most GETs are the 5 s heartbeat, /v1/state and the lease)",
        list as f64 / passes as f64,
        get as f64 / passes as f64
    );
}

fn main() {
    build_and_render();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(idle_pass_requests());
}
