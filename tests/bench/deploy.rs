//! Benchmarks for deploys on one node (release build, embedded registry):
//! deploy-to-first-200 latency, intake throughput for a 50 MiB artifact and
//! the node's peak RSS during it, and idle memory per running application.
//!
//!   eval "$(tests/peers)" && cargo bench --bench deploy

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../util/mod.rs"]
mod util;

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

fn worker(dir: &Path, name: &str, version: usize) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("wrangler.jsonc"),
        format!("{{ \"name\": \"{name}\", \"main\": \"src/index.js\", \"compatibility_date\": \"2025-06-01\" }}"),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/index.js"),
        format!("export default {{ fetch() {{ return new Response(\"v{version}\"); }} }};\n"),
    )
    .unwrap();
}

fn deploy(node: &util::Node, dir: &Path) {
    let output = util::scafo()
        .arg("deploy")
        .arg(dir)
        .arg("--detach")
        .env("SCAFO_URL", &node.url)
        .env("SCAFO_KEY", node.state_dir.join("admin.jwk"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

async fn app_url(node: &util::Node, token: &str, app: &str) -> Option<String> {
    let state = util::call(node, "GET", "/v1/state", Some(token), None)
        .await
        .body;
    state["applications"]
        .as_array()?
        .iter()
        .find(|a| a["name"] == app)?["url"]
        .as_str()
        .map(str::to_owned)
}

fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The workerd processes that are children of `parent`.
fn workerd_children(parent: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let Some((comm, rest)) = stat.split_once(") ") else {
            continue;
        };
        let ppid = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        if comm.ends_with("(workerd") && ppid == Some(parent) {
            found.push(pid);
        }
    }
    found
}

/// A valid project plus `blob_bytes` of incompressible data, gzip'd tar.
fn big_artifact(blob_bytes: usize) -> Vec<u8> {
    let mut blob = vec![0u8; blob_bytes];
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for chunk in blob.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (path, data) in [
        (
            "wrangler.json",
            br#"{"name": "big", "main": "index.js"}"#.as_slice(),
        ),
        (
            "index.js",
            b"export default { fetch() { return new Response('big'); } };".as_slice(),
        ),
        ("blob.bin", blob.as_slice()),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, path, data).unwrap();
    }
    let mut gz = builder.into_inner().unwrap();
    gz.flush().unwrap();
    gz.finish().unwrap()
}

async fn upload(node: &util::Node, token: &str, body: Vec<u8>) -> Duration {
    let started = Instant::now();
    let response = reqwest::Client::new()
        .post(format!("{}/v1/applications/big/deploys", node.url))
        .bearer_auth(token)
        .header("x-scafo-deploy", "e30")
        .header("content-type", "application/octet-stream")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        202,
        "{}",
        response.text().await.unwrap_or_default()
    );
    started.elapsed()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let node = util::Node::start(util::NodeOptions::default()).await;
        let token = node.admin().token();
        let pid = node.pid().unwrap();

        // Deploy to first 200 of the new version.
        let project = tempfile::tempdir().unwrap();
        let mut latencies = Vec::new();
        for version in 0..10 {
            worker(project.path(), "hello", version);
            let started = Instant::now();
            deploy(&node, project.path());
            let expected = format!("v{version}");
            loop {
                if let Some(url) = app_url(&node, &token, "hello").await
                    && let Ok(answer) = reqwest::get(&url).await
                    && answer.status() == 200
                    && answer.text().await.unwrap_or_default() == expected
                {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            latencies.push(started.elapsed());
        }
        latencies.sort();
        println!("deploy to first 200 (scafo deploy --detach, then polling the app): median {:.0?}, min {:.0?}, max {:.0?} (10 deploys)", latencies[5], latencies[0], latencies[9]);

        // Intake: 5 MiB, then 50 MiB; peak RSS after each.
        let hwm_before = status_kib(pid, "VmHWM:");
        let small = big_artifact(5 << 20);
        let took = upload(&node, &token, small).await;
        let hwm_small = status_kib(pid, "VmHWM:");
        let large = big_artifact(50 << 20);
        let bytes = large.len();
        let took_large = upload(&node, &token, large).await;
        let hwm_large = status_kib(pid, "VmHWM:");
        println!(
            "intake 50 MiB artifact: {:.0} MB/s ({bytes} bytes in {took_large:.2?}); 5 MiB took {took:.2?}",
            bytes as f64 / took_large.as_secs_f64() / 1e6
        );
        println!("node peak RSS: {} MiB before, {} MiB after 5 MiB, {} MiB after 50 MiB", hwm_before / 1024, hwm_small / 1024, hwm_large / 1024);

        // Idle memory per running application.
        let apps = 5;
        let dirs: Vec<_> = (0..apps).map(|_| tempfile::tempdir().unwrap()).collect();
        for (i, dir) in dirs.iter().enumerate() {
            worker(dir.path(), &format!("idle-{i}"), 0);
            deploy(&node, dir.path());
        }
        for i in 0..apps {
            while app_url(&node, &token, &format!("idle-{i}")).await.is_none() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        tokio::time::sleep(Duration::from_secs(8)).await; // replaced releases drain
        let children = workerd_children(pid);
        let rss: u64 = children.iter().map(|c| status_kib(*c, "VmRSS:")).sum();
        println!(
            "idle: {} workerd processes, {:.1} MiB RSS each on average; node itself {} MiB RSS",
            children.len(),
            rss as f64 / children.len().max(1) as f64 / 1024.0,
            status_kib(pid, "VmRSS:") / 1024
        );
    });
}
