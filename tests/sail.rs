//! `scafo sail` as a real process: health, problem documents, the state
//! directory, registration and heartbeat, key mismatch, signals, the
//! registry going away and coming back, and the JSON body bound.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::Value;

use crate::util::{Moto, Node, NodeOptions, eventually, moto_env, s3_client, unique};

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

async fn problem(response: reqwest::Response, status: u16, code: &str) -> Value {
    assert_eq!(response.status().as_u16(), status);
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/problem+json")
    );
    let body: Value = response.json().await.expect("problem json");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], status);
    assert_eq!(body["type"], format!("urn:scafo:problem:{code}"));
    body
}

#[tokio::test]
async fn health_answers_exactly_ok_version_and_node() {
    let node = Node::start(NodeOptions {
        id: Some("vps-a".into()),
        ..Default::default()
    })
    .await;
    let response = node.get("/.well-known/scafo/health").await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("x-request-id"));
    let body: Value = response.json().await.expect("json");
    assert_eq!(
        body,
        serde_json::json!({"ok": true, "version": env!("CARGO_PKG_VERSION"), "node": "vps-a"})
    );
}

#[tokio::test]
async fn unknown_routes_and_wrong_methods_are_problem_documents() {
    let node = Node::start(NodeOptions::default()).await;
    let body = problem(node.get("/v1/nothing-here").await, 404, "not-found").await;
    assert_eq!(body["instance"], "/v1/nothing-here");
    let client = reqwest::Client::new();
    let response = client
        .delete(format!("{}/.well-known/scafo/health", node.url))
        .send()
        .await
        .expect("send");
    assert!(
        response.headers().get("allow").is_some(),
        "405 names the allowed methods"
    );
    let body = problem(response, 405, "method-not-allowed").await;
    assert_eq!(body["title"], "Method not allowed");
}

#[tokio::test]
async fn state_directory_key_and_token_are_private_and_kept_across_restarts() {
    let mut node = Node::start(NodeOptions::default()).await;
    let state = node.state_dir.clone();
    assert_eq!(mode(&state), 0o700);
    assert_eq!(mode(&state.join("node.jwk")), 0o600);
    assert_eq!(mode(&state.join("ingress-token")), 0o600);
    let key = std::fs::read_to_string(state.join("node.jwk")).expect("key");
    let token = std::fs::read_to_string(state.join("ingress-token")).expect("token");
    assert!(token.trim().len() >= 32);
    assert!(
        !node.log().contains(token.trim()),
        "the ingress token is never logged"
    );
    let bucket = format!("file://{}", node.scratch.path().join("bucket").display());
    assert!(node.signal_and_wait(libc::SIGTERM).success());

    let again = Node::start(NodeOptions {
        state_dir: Some(state.clone()),
        bucket: Some(bucket),
        ..Default::default()
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(state.join("node.jwk")).expect("key"),
        key
    );
    assert_eq!(
        std::fs::read_to_string(state.join("ingress-token")).expect("token"),
        token
    );
    drop(again);
}

#[tokio::test]
async fn configured_ingress_tokens_are_admitted_and_the_first_is_written() {
    let node = Node::start(NodeOptions {
        args: [
            "--ingress-token",
            "first-token-0123456789",
            "--ingress-token",
            "second-token-0123456789",
        ]
        .map(String::from)
        .to_vec(),
        ..Default::default()
    })
    .await;
    let written = std::fs::read_to_string(node.state_dir.join("ingress-token")).expect("token");
    assert_eq!(written.trim(), "first-token-0123456789");
    assert_eq!(mode(&node.state_dir.join("ingress-token")), 0o600);
}

#[tokio::test]
async fn registers_fleet_and_node_record_on_the_file_bucket() {
    let node = Node::start(NodeOptions {
        id: Some("vps-a".into()),
        args: [
            "--label",
            "region=eu",
            "--advertise",
            "http://10.0.0.5:7070",
        ]
        .map(String::from)
        .to_vec(),
        ..Default::default()
    })
    .await;
    let bucket =
        scafo::store::file::FileStore::open(&node.scratch.path().join("bucket")).expect("open");
    let registry = scafo::registry::Registry::new(std::sync::Arc::new(bucket));
    let fleet = registry
        .read(&scafo::registry::keys::fleet())
        .await
        .expect("read")
        .expect("fleet.json");
    assert_eq!(fleet.value.id.len(), 16);
    let id = scafo::names::NodeId::parse("vps-a").expect("id");
    let record = registry
        .read(&scafo::registry::keys::node(&id))
        .await
        .expect("read")
        .expect("node record");
    let key = scafo::auth::SecretKey::read(&node.state_dir.join("node.jwk")).expect("node key");
    assert_eq!(record.value.public_key, key.public());
    assert_eq!(record.value.advertise, "http://10.0.0.5:7070");
    assert_eq!(
        record.value.labels.get("region").map(String::as_str),
        Some("eu")
    );
    assert_eq!(record.value.version, env!("CARGO_PKG_VERSION"));
    let celld = record
        .value
        .celld
        .expect("workerd is a test peer, so the node has a runtime");
    assert_eq!(celld.engine, "workerd");
    assert!(celld.version.starts_with("workerd "), "{}", celld.version);
}

#[tokio::test]
async fn heartbeats_move_and_a_second_node_joins_the_same_fleet_on_s3() {
    let (endpoint, bucket) = Moto::bucket().await;
    let options = |id: &str| NodeOptions {
        id: Some(id.into()),
        bucket: Some(format!("s3://{bucket}/fleet")),
        env: moto_env(&endpoint),
        ..Default::default()
    };
    let a = Node::start(options("vps-a")).await;
    let b = Node::start(options("vps-b")).await;
    let store = scafo::store::s3::S3Store::new(s3_client(&endpoint), &bucket, Some("fleet"));
    let registry = scafo::registry::Registry::new(std::sync::Arc::new(store));
    let first = registry
        .read(&scafo::registry::keys::fleet())
        .await
        .expect("read")
        .expect("fleet");
    let id = scafo::names::NodeId::parse("vps-a").expect("id");
    let before = registry
        .read(&scafo::registry::keys::node(&id))
        .await
        .expect("read")
        .expect("record");
    let moved = eventually("a second heartbeat", Duration::from_secs(15), || {
        let registry = registry.clone();
        let id = id.clone();
        async move {
            let now = registry
                .read(&scafo::registry::keys::node(&id))
                .await
                .ok()??;
            (now.value.heartbeat_at > before.value.heartbeat_at).then_some(now)
        }
    })
    .await;
    assert_eq!(moved.value.started_at, before.value.started_at);
    let nodes = scafo::store::list_all(registry.store(), "registry/nodes/", false)
        .await
        .expect("list");
    let ids: Vec<_> = nodes.objects.iter().map(|m| m.key.as_str()).collect();
    assert_eq!(
        ids,
        ["registry/nodes/vps-a.json", "registry/nodes/vps-b.json"]
    );
    let again = registry
        .read(&scafo::registry::keys::fleet())
        .await
        .expect("read")
        .expect("fleet");
    assert_eq!(again.value.id, first.value.id, "fleet.json is created once");
    drop((a, b));
}

#[tokio::test]
async fn a_node_id_held_by_another_key_refuses_to_start() {
    let first = Node::start(NodeOptions {
        id: Some("vps-a".into()),
        ..Default::default()
    })
    .await;
    let bucket = format!("file://{}", first.scratch.path().join("bucket").display());
    let mut second = Node::spawn(NodeOptions {
        id: Some("vps-a".into()),
        bucket: Some(bucket),
        ..Default::default()
    });
    let status = second.wait_exit(Duration::from_secs(20));
    assert_eq!(status.code(), Some(1));
    let log = second.log();
    assert!(
        log.contains("node id vps-a is registered in this fleet with another key"),
        "{log}"
    );
    assert!(
        log.contains("--node-id") && log.contains("registry/nodes/vps-a.json"),
        "names the remedy: {log}"
    );
}

#[tokio::test]
async fn a_key_file_others_may_read_refuses_to_start() {
    let mut node = Node::start(NodeOptions::default()).await;
    let state = node.state_dir.clone();
    assert!(node.signal_and_wait(libc::SIGINT).success());
    std::fs::set_permissions(
        state.join("node.jwk"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    let mut again = Node::spawn(NodeOptions {
        state_dir: Some(state.clone()),
        ..Default::default()
    });
    assert_eq!(again.wait_exit(Duration::from_secs(20)).code(), Some(1));
    assert!(again.log().contains("chmod 600"), "{}", again.log());
}

#[tokio::test]
async fn sigterm_and_sigint_stop_the_node_cleanly() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let mut node = Node::start(NodeOptions::default()).await;
        let started = std::time::Instant::now();
        let status = node.signal_and_wait(signal);
        assert!(status.success(), "signal {signal}: {status}");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(node.log().contains("stopped"));
    }
}

#[tokio::test]
async fn serves_without_its_bucket_and_registers_when_the_bucket_appears() {
    let endpoint = Moto::shared().to_owned();
    let bucket = unique("late");
    let node = Node::start(NodeOptions {
        id: Some("vps-late".into()),
        bucket: Some(format!("s3://{bucket}")),
        env: moto_env(&endpoint),
        ..Default::default()
    })
    .await;
    assert_eq!(node.get("/.well-known/scafo/health").await.status(), 200);
    assert!(
        node.log().contains("registry unreachable at start"),
        "{}",
        node.log()
    );
    s3_client(&endpoint)
        .create_bucket()
        .bucket(&bucket)
        .send()
        .await
        .expect("create bucket");
    let store = scafo::store::s3::S3Store::new(s3_client(&endpoint), &bucket, None);
    let registry = scafo::registry::Registry::new(std::sync::Arc::new(store));
    let id = scafo::names::NodeId::parse("vps-late").expect("id");
    eventually(
        "registration once the bucket exists",
        Duration::from_secs(20),
        || {
            let registry = registry.clone();
            let id = id.clone();
            async move {
                registry
                    .read(&scafo::registry::keys::node(&id))
                    .await
                    .ok()
                    .flatten()
            }
        },
    )
    .await;
}

#[tokio::test]
async fn an_unreachable_endpoint_does_not_stop_the_api() {
    let closed = format!("http://127.0.0.1:{}", crate::util::free_port());
    let node = Node::start(NodeOptions {
        bucket: Some("s3://fleet".into()),
        env: moto_env(&closed),
        ..Default::default()
    })
    .await;
    assert_eq!(node.get("/.well-known/scafo/health").await.status(), 200);
}

#[tokio::test]
async fn json_logs_are_one_object_a_line() {
    let mut node = Node::start(NodeOptions {
        args: vec!["--log-format".into(), "json".into()],
        ..Default::default()
    })
    .await;
    node.get("/nope").await;
    assert!(node.signal_and_wait(libc::SIGTERM).success());
    let log = node.log();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l["message"] == "answered" && l["status"] == 404),
        "{log}"
    );
}
