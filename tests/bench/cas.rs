//! Benchmarks: registry CAS-update throughput (one writer, and eight writers
//! on one key and on eight keys) against the file store and moto's S3
//! server, and `scafo sail` cold start to its first healthy answer.
//!
//!   cargo bench --bench cas            (needs moto: run `tests/peers` first)
//!
//! Figures go to stdout as a table; the README quotes them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../util/mod.rs"]
mod util;

use std::sync::Arc;
use std::time::{Duration, Instant};

use scafo::auth::SecretKey;
use scafo::names::NodeId;
use scafo::registry::{Change, NodeRecord, Registry, RegistryError, V1, keys};
use scafo::store::ObjectStore;
use scafo::store::file::FileStore;
use scafo::store::s3::S3Store;
use scafo::wire::Timestamp;

const UPDATES: usize = 400;

fn record(id: &NodeId) -> NodeRecord {
    NodeRecord {
        v: V1,
        id: id.clone(),
        public_key: SecretKey::generate(None).expect("key").public(),
        labels: [("n".to_owned(), "0".to_owned())].into(),
        advertise: "http://127.0.0.1:1".into(),
        version: "bench".into(),
        celld: None,
        started_at: Timestamp::now(),
        heartbeat_at: Timestamp::now(),
        serving: Default::default(),
        failures: Default::default(),
    }
}

/// `UPDATES` increments spread over `writers` tasks, on `keys` distinct keys.
async fn updates_per_second(registry: &Registry, writers: usize, keys_used: usize) -> f64 {
    let ids: Vec<NodeId> = (0..keys_used)
        .map(|i| NodeId::parse(&format!("bench-{i}")).unwrap())
        .collect();
    for id in &ids {
        registry
            .create(&keys::node(id), &record(id))
            .await
            .expect("create");
    }
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for writer in 0..writers {
        let registry = registry.clone();
        let id = ids[writer % keys_used].clone();
        tasks.spawn(async move {
            for _ in 0..UPDATES / writers {
                registry
                    .update(&keys::node(&id), |current: Option<&NodeRecord>| {
                        let mut next = current.cloned().expect("exists");
                        let n: u64 = next.labels["n"].parse().expect("number");
                        next.labels.insert("n".into(), (n + 1).to_string());
                        Ok::<_, RegistryError>(Change::Put(next))
                    })
                    .await
                    .expect("update");
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("writer");
    }
    let total = (UPDATES / writers * writers) as f64;
    total / started.elapsed().as_secs_f64()
}

async fn cas_table() {
    println!("registry CAS updates/s ({UPDATES} updates per row)");
    println!(
        "{:<8} {:>12} {:>18} {:>18}",
        "backend", "1 writer", "8 writers 1 key", "8 writers 8 keys"
    );
    for backend in ["file", "s3"] {
        let mut row = Vec::new();
        for (writers, keys_used) in [(1, 1), (8, 1), (8, 8)] {
            let dir = tempfile::tempdir().expect("tempdir");
            let store: Arc<dyn ObjectStore> = match backend {
                "file" => Arc::new(FileStore::open(dir.path()).expect("open")),
                _ => {
                    let (endpoint, bucket) = util::Moto::bucket().await;
                    Arc::new(S3Store::new(util::s3_client(&endpoint), &bucket, None))
                }
            };
            row.push(updates_per_second(&Registry::new(store), writers, keys_used).await);
        }
        println!(
            "{:<8} {:>12.0} {:>18.0} {:>18.0}",
            if backend == "s3" { "s3/moto" } else { backend },
            row[0],
            row[1],
            row[2]
        );
    }
}

async fn cold_start() {
    let mut fresh = Vec::new();
    let mut restart = Vec::new();
    for _ in 0..7 {
        let started = Instant::now();
        let node = util::Node::start(util::NodeOptions::default()).await;
        fresh.push(started.elapsed());
        let state = node.state_dir.clone();
        let bucket = format!("file://{}", node.scratch.path().join("bucket").display());
        drop(node);
        let started = Instant::now();
        let again = util::Node::start(util::NodeOptions {
            state_dir: Some(state),
            bucket: Some(bucket),
            ..Default::default()
        })
        .await;
        restart.push(started.elapsed());
        drop(again);
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    println!();
    println!("scafo sail to first healthy answer (embedded file registry, 7 runs, median / min)");
    println!(
        "fresh state dir:  {:>7.1?} / {:>7.1?}",
        median(&mut fresh),
        fresh[0]
    );
    println!(
        "restart:          {:>7.1?} / {:>7.1?}",
        median(&mut restart),
        restart[0]
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        cas_table().await;
        cold_start().await;
    });
}
