//! Benchmark: authenticated requests. Load on `GET /v1/operators` with an
//! operator token against the release binary (embedded file registry), and
//! the two costs every authenticated request pays, measured apart: the
//! Ed25519 signature check and the operator-record read.
//!
//!   cargo bench --bench auth

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../util/mod.rs"]
mod util;

use std::sync::Arc;
use std::time::{Duration, Instant};

use scafo::auth::token;
use scafo::names::OperatorId;
use scafo::registry::{Registry, keys};
use scafo::store::file::FileStore;

const CONNECTIONS: usize = 16;
const DURATION: Duration = Duration::from_secs(10);

async fn load(node: &util::Node, admin: &util::TestKey) -> (f64, Duration, Duration) {
    let url = format!("{}/v1/operators", node.url);
    let token = admin.token();
    let deadline = Instant::now() + DURATION;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..CONNECTIONS {
        let (url, token) = (url.clone(), token.clone());
        tasks.spawn(async move {
            let client = reqwest::Client::new();
            let mut latencies = Vec::new();
            while Instant::now() < deadline {
                let started = Instant::now();
                let response = client
                    .get(&url)
                    .bearer_auth(&token)
                    .send()
                    .await
                    .expect("send");
                assert_eq!(response.status(), 200);
                response.bytes().await.expect("body");
                latencies.push(started.elapsed());
            }
            latencies
        });
    }
    let mut latencies = Vec::new();
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done.expect("task"));
    }
    latencies.sort();
    let rate = latencies.len() as f64 / DURATION.as_secs_f64();
    (
        rate,
        latencies[latencies.len() / 2],
        latencies[latencies.len() * 99 / 100],
    )
}

fn per_op(iterations: u32, work: impl FnMut()) -> Duration {
    let mut work = work;
    let started = Instant::now();
    for _ in 0..iterations {
        work();
    }
    started.elapsed() / iterations
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let node = util::Node::start(util::NodeOptions::default()).await;
        let admin = node.admin();
        let (rate, p50, p99) = load(&node, &admin).await;
        println!("GET /v1/operators, operator token, file registry, {CONNECTIONS} connections, {DURATION:?}");
        println!("  {rate:.0} req/s   p50 {p50:.2?}   p99 {p99:.2?}   (load generator on the same 2 cores)");

        // The two costs apart, in this process.
        let signed = admin.token();
        let public = admin.secret.public();
        let verify = per_op(20_000, || {
            let parsed = token::parse(&signed, token::now()).expect("parse");
            parsed.verify(&public).expect("verify");
        });
        let store = Arc::new(FileStore::open(&node.scratch.path().join("bucket")).expect("open"));
        let registry = Registry::new(store);
        let id = OperatorId::parse(&admin.kid).expect("id");
        let started = Instant::now();
        let reads = 5_000u32;
        for _ in 0..reads {
            registry.read(&keys::operator(&id)).await.expect("read").expect("exists");
        }
        let read = started.elapsed() / reads;
        println!("  per request: parse + Ed25519 verify {verify:.1?}, operator record read (file store) {read:.1?}");
    });
}
