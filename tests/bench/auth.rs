//! Benchmark: authenticated requests. Load on `GET /v1/operators` with an
//! operator token against the release binary (embedded file registry), and
//! the two costs every authenticated request pays, measured apart: the
//! Ed25519 signature check and the operator-record read. Then the deploy
//! route `GET /v1/deploys/{id}` with an operator token and with workload
//! OIDC tokens (RS256 and ES256) from a local issuer whose keys the node
//! already holds, counting the issuer's requests to show that verification
//! with warm keys makes no network call.
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

async fn load(node: &util::Node, path: &str, token: &str) -> (f64, Duration, Duration) {
    let url = format!("{}{path}", node.url);
    let token = token.to_owned();
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
        let issuer = util::oidc::Issuer::start();
        let node = util::Node::start(util::NodeOptions {
            env: util::oidc::issuer_env(&issuer),
            ..util::NodeOptions::default()
        })
        .await;
        let admin = node.admin();
        let (rate, p50, p99) = load(&node, "/v1/operators", &admin.token()).await;
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

        deploy_route(&node, &admin, &issuer).await;
    });
}

/// The deploy route under operator and workload tokens.
async fn deploy_route(node: &util::Node, admin: &util::TestKey, issuer: &util::oidc::Issuer) {
    const SUBJECT: &str = "repo:acme/shop:ref:refs/heads/main";
    let client = reqwest::Client::new();
    let created = client
        .post(format!("{}/v1/applications/shop/deploys", node.url))
        .bearer_auth(admin.token())
        .header("x-scafo-deploy", "e30")
        .header("content-type", "application/octet-stream")
        .body(project())
        .send()
        .await
        .expect("deploy");
    assert_eq!(created.status(), 202);
    let id = created.json::<serde_json::Value>().await.expect("json")["deploy"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let trusted = client
        .post(format!("{}/v1/applications/shop/trust", node.url))
        .bearer_auth(admin.token())
        .json(&serde_json::json!({"trust": [{"issuer": issuer.url(), "subject": SUBJECT}]}))
        .send()
        .await
        .expect("trust");
    assert_eq!(trusted.status(), 200);
    let path = format!("/v1/deploys/{id}");
    let rs256 = issuer.token("rsa-1", SUBJECT, serde_json::json!({}));
    let es256 = issuer.token("ec-1", SUBJECT, serde_json::json!({}));
    // Warm the node's key cache: one discovery and one key-set fetch.
    let warm = client
        .get(format!("{}{path}", node.url))
        .bearer_auth(&rs256)
        .send()
        .await;
    assert_eq!(warm.expect("warm").status(), 200);
    let before = issuer.hits();
    println!("GET /v1/deploys/{{id}}, file registry, {CONNECTIONS} connections, {DURATION:?}");
    for (what, token) in [
        ("operator token (EdDSA)", admin.token()),
        ("workload token RS256, warm keys", rs256.clone()),
        ("workload token ES256, warm keys", es256.clone()),
    ] {
        let (rate, p50, p99) = load(node, &path, &token).await;
        println!("  {what:34} {rate:6.0} req/s   p50 {p50:.2?}   p99 {p99:.2?}");
    }
    let after = issuer.hits();
    assert_eq!(before, after, "the issuer was called during the load");
    println!(
        "  issuer requests during the load: {} (discovery + key set fetched once, before it: {before:?})",
        (after.0 - before.0) + (after.1 - before.1)
    );

    // The verification alone, in this process.
    let issuers = vec![issuer.url().to_owned()];
    let keys = scafo::auth::oidc::KeySet::parse(issuer.jwks_text().as_bytes()).expect("keys");
    for (what, token) in [("RS256", &rs256), ("ES256", &es256)] {
        let cost = per_op(5_000, || {
            let parsed =
                scafo::auth::oidc::parse(token, &issuers, "scafo", token::now()).expect("parse");
            parsed.verify(&keys).expect("verify");
        });
        println!("  per request: workload token parse + {what} verify {cost:.1?}");
    }
}

/// A minimal project archive: a wrangler config and one module.
fn project() -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (path, data) in [
        (
            "wrangler.jsonc",
            &br#"{"name": "shop", "main": "index.js"}"#[..],
        ),
        (
            "index.js",
            b"export default { fetch() { return new Response('shop'); } };\n",
        ),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder
            .append_data(&mut header, path, data)
            .expect("append");
    }
    builder.into_inner().expect("tar").finish().expect("gzip")
}
