//! `/v1/applications…` through the real binary: every caller kind on every
//! route, redaction, the setters' rules, domains and their claims, the
//! coordinator lease, gated deletion across three nodes, and the sweep.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::oidc::{GITHUB_SUBJECT, Issuer, issuer_env};
use crate::util::{Node, NodeOptions, TestKey, call, eventually};

/// Creates application records as a first deploy would, straight in the bucket.
async fn seed(node: &Node, names: &[&str]) {
    seed_bucket(&node.scratch.path().join("bucket"), names).await;
}

async fn seed_bucket(bucket: &std::path::Path, names: &[&str]) {
    let store = scafo::store::file::FileStore::open(bucket).expect("open");
    let registry = scafo::registry::Registry::new(Arc::new(store));
    for name in names {
        let name = scafo::names::AppName::parse(name).expect("name");
        let mut record = scafo::registry::ApplicationRecord::new(name.clone());
        record.labels.insert("plan".into(), "pro".into());
        registry
            .create(&scafo::registry::keys::application(&name), &record)
            .await
            .expect("create");
    }
}

async fn operator(node: &Node, admin: &TestKey, id: &str, apps: &[&str]) -> TestKey {
    let key = TestKey::generate(id);
    call(
        node,
        "POST",
        "/v1/operators",
        Some(&admin.token()),
        Some(json!({"id": id, "publicKey": key.public(), "applications": apps})),
    )
    .await
    .ok(201);
    key
}

#[tokio::test]
async fn every_caller_kind_on_every_route() {
    // A verified workload token, trusted by shop: still auth-scope on
    // every route that is not a deploy route.
    let issuer = Issuer::start();
    let node = Node::start(NodeOptions {
        env: issuer_env(&issuer),
        ..NodeOptions::default()
    })
    .await;
    seed(&node, &["shop", "blog"]).await;
    let admin = node.admin();
    call(
        &node,
        "POST",
        "/v1/applications/shop/trust",
        Some(&admin.token()),
        Some(json!({"trust": [{"issuer": issuer.url(), "subject": "repo:acme/shop:*"}]})),
    )
    .await
    .ok(200);
    let inside = operator(&node, &admin, "op-shop", &["shop", "shop-*"]).await;
    let outside = operator(&node, &admin, "op-blog", &["blog"]).await;
    let node_key = TestKey::node(&node, "node-a");
    let callers: [(&str, Option<String>); 6] = [
        ("admin", Some(admin.token())),
        ("in-scope operator", Some(inside.token())),
        ("out-of-scope operator", Some(outside.token())),
        ("node", Some(node_key.token())),
        (
            "workload",
            Some(issuer.token("rsa-1", GITHUB_SUBJECT, json!({}))),
        ),
        ("none", None),
    ];
    // (method, path, body, expected status per caller in the order above)
    let scope = (403, "auth-scope");
    let invalid = (401, "auth-invalid");
    let ok = (200, "");
    type Row<'a> = (&'a str, &'a str, Option<Value>, [(u16, &'a str); 6]);
    let table: Vec<Row> = vec![
        (
            "GET",
            "/v1/applications",
            None,
            [ok, ok, ok, scope, scope, invalid],
        ),
        (
            "GET",
            "/v1/applications/shop",
            None,
            [ok, ok, scope, scope, scope, invalid],
        ),
        (
            "POST",
            "/v1/applications/shop/block",
            None,
            [ok, scope, scope, scope, scope, invalid],
        ),
        (
            "POST",
            "/v1/applications/shop/unblock",
            None,
            [ok, scope, scope, scope, scope, invalid],
        ),
        (
            "POST",
            "/v1/applications/shop/labels",
            Some(json!({"labels": {"plan": "pro"}})),
            [ok, scope, scope, scope, scope, invalid],
        ),
        (
            "POST",
            "/v1/applications/shop/retire",
            None,
            [ok, ok, scope, ok, scope, invalid],
        ),
        (
            "POST",
            "/v1/applications/shop/unretire",
            None,
            [ok, ok, scope, ok, scope, invalid],
        ),
        (
            "POST",
            "/v1/applications/shop/selector",
            Some(json!({"selector": null})),
            [ok, ok, scope, ok, scope, invalid],
        ),
        (
            "POST",
            "/v1/applications/shop/replicas",
            Some(json!({"replicas": "all"})),
            [ok, ok, scope, ok, scope, invalid],
        ),
        (
            "POST",
            "/v1/applications/shop/trust",
            Some(json!({"trust": []})),
            [ok, ok, scope, scope, scope, invalid],
        ),
        (
            "POST",
            "/v1/applications/shop/domains/shop.example",
            None,
            [ok, ok, scope, scope, scope, invalid],
        ),
        (
            "POST",
            "/v1/applications/shop/domains/shop.example?wildcard=1",
            None,
            [ok, ok, scope, scope, scope, invalid],
        ),
        (
            "DELETE",
            "/v1/applications/shop",
            None,
            [
                (409, "retirement-required"),
                (409, "retirement-required"),
                scope,
                (409, "retirement-required"),
                scope,
                invalid,
            ],
        ),
    ];
    for (method, path, body, expected) in &table {
        for ((who, token), (status, code)) in callers.iter().zip(expected) {
            let answer = call(&node, method, path, token.as_deref(), body.clone()).await;
            assert_eq!(
                answer.status, *status,
                "{who} {method} {path}: {}",
                answer.body
            );
            if !code.is_empty() {
                answer.problem(*status, code);
            }
        }
    }
    // Releasing a host: every caller kind, the claim re-made before each.
    for ((who, token), (status, code)) in callers.iter().zip([ok, ok, scope, scope, scope, invalid])
    {
        call(
            &node,
            "POST",
            "/v1/applications/shop/domains/shop.example",
            Some(&admin.token()),
            None,
        )
        .await
        .ok(200);
        let answer = call(
            &node,
            "DELETE",
            "/v1/applications/shop/domains/shop.example",
            token.as_deref(),
            None,
        )
        .await;
        assert_eq!(answer.status, status, "{who} release: {}", answer.body);
        if !code.is_empty() {
            answer.problem(status, code);
        }
    }

    // Redaction and scoped on every read.
    let all = call(&node, "GET", "/v1/applications", Some(&admin.token()), None).await;
    let names: Vec<&str> = all.body["applications"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert_eq!(
        (names, all.body["scoped"].clone()),
        (vec!["blog", "shop"], json!(false))
    );
    assert_eq!(
        all.body["applications"][0]["labels"],
        json!({"plan": "pro"})
    );
    let mine = call(
        &node,
        "GET",
        "/v1/applications",
        Some(&inside.token()),
        None,
    )
    .await;
    assert_eq!(mine.body["scoped"], true);
    assert_eq!(mine.body["applications"].as_array().map(Vec::len), Some(1));
    assert!(mine.body["applications"][0].get("labels").is_none());
    assert_eq!(
        mine.body["applications"][0]["blocked"], false,
        "blocked stays visible"
    );
    let one = call(
        &node,
        "GET",
        "/v1/applications/shop",
        Some(&inside.token()),
        None,
    )
    .await;
    assert!(one.body["application"].get("labels").is_none());
    let one = call(
        &node,
        "GET",
        "/v1/applications/shop",
        Some(&admin.token()),
        None,
    )
    .await;
    assert_eq!(one.body["application"]["labels"], json!({"plan": "pro"}));
    call(
        &node,
        "GET",
        "/v1/applications/none",
        Some(&admin.token()),
        None,
    )
    .await
    .problem(404, "not-found");
    call(
        &node,
        "GET",
        "/v1/applications/Bad_Name",
        Some(&admin.token()),
        None,
    )
    .await
    .problem(400, "invalid-input");
}

#[tokio::test]
async fn setters_check_their_bodies_and_missing_applications() {
    let node = Node::start(NodeOptions {
        env: vec![("SCAFO_RETIRE_GRACESECONDS".into(), "3600".into())],
        ..Default::default()
    })
    .await;
    seed(&node, &["shop"]).await;
    let token = node.admin().token();
    for body in [
        json!({}),
        json!({"selector": ["eu"]}),
        json!({"selector": {"region": 1}}),
        json!({"selector": "eu"}),
    ] {
        call(
            &node,
            "POST",
            "/v1/applications/shop/selector",
            Some(&token),
            Some(body),
        )
        .await
        .problem(400, "invalid-input");
    }
    for body in [
        json!({}),
        json!({"replicas": null}),
        json!({"replicas": 0}),
        json!({"replicas": "2"}),
        json!({"replicas": 1.5}),
        json!({"replicas": -1}),
    ] {
        call(
            &node,
            "POST",
            "/v1/applications/shop/replicas",
            Some(&token),
            Some(body),
        )
        .await
        .problem(400, "invalid-input");
    }
    for body in [
        json!({}),
        json!({"labels": ["x"]}),
        json!({"labels": {"a": 1}}),
    ] {
        call(
            &node,
            "POST",
            "/v1/applications/shop/labels",
            Some(&token),
            Some(body),
        )
        .await
        .problem(400, "invalid-input");
    }
    for body in [
        json!({}),
        json!({"trust": [{"issuer": "nope", "subject": "x"}]}),
        json!({"trust": [{"issuer": "https://i", "subject": "a*b"}]}),
        json!({"trust": [{"issuer": "https://i", "subject": "*"}]}),
        json!({"trust": [{"issuer": "https://i", "subject": "repo:acme/shop*"}]}),
    ] {
        call(
            &node,
            "POST",
            "/v1/applications/shop/trust",
            Some(&token),
            Some(body),
        )
        .await
        .problem(400, "invalid-input");
    }
    let set = call(
        &node,
        "POST",
        "/v1/applications/shop/selector",
        Some(&token),
        Some(json!({"selector": {"region": "mars"}})),
    )
    .await;
    assert_eq!(
        set.ok(200)["application"]["selector"],
        json!({"region": "mars"}),
        "an unsatisfiable selector is accepted"
    );
    let set = call(
        &node,
        "POST",
        "/v1/applications/shop/replicas",
        Some(&token),
        Some(json!({"replicas": 2})),
    )
    .await;
    assert_eq!(set.ok(200)["application"]["replicas"], 2);
    let set = call(
        &node,
        "POST",
        "/v1/applications/shop/labels",
        Some(&token),
        Some(json!({"labels": {}})),
    )
    .await;
    assert_eq!(
        set.ok(200)["application"]["labels"],
        json!({}),
        "{{}} clears"
    );
    let set = call(&node, "POST", "/v1/applications/shop/trust", Some(&token), Some(json!({"trust": [{"issuer": "https://gitlab.com", "subject": "project_path:acme/shop:*"}]}))).await;
    assert_eq!(
        set.ok(200)["application"]["trust"][0]["subject"],
        "project_path:acme/shop:*"
    );
    for (path, body) in [
        ("block", None),
        ("unblock", None),
        ("labels", Some(json!({"labels": {}}))),
        ("retire", None),
        ("unretire", None),
        ("selector", Some(json!({"selector": null}))),
        ("replicas", Some(json!({"replicas": 1}))),
        ("trust", Some(json!({"trust": []}))),
    ] {
        call(
            &node,
            "POST",
            &format!("/v1/applications/ghost/{path}"),
            Some(&token),
            body,
        )
        .await
        .problem(404, "not-found");
    }
    // Retirement: a grace period, reversible within it; deploys refused.
    let retired = call(
        &node,
        "POST",
        "/v1/applications/shop/retire",
        Some(&token),
        None,
    )
    .await;
    let until = retired.ok(200)["application"]["retired"]["graceUntil"]
        .as_str()
        .map(str::to_owned);
    assert!(until.is_some());
    let again = call(
        &node,
        "POST",
        "/v1/applications/shop/retire",
        Some(&token),
        None,
    )
    .await;
    assert_eq!(
        again.ok(200)["application"]["retired"]["graceUntil"]
            .as_str()
            .map(str::to_owned),
        until,
        "retiring twice is one retirement"
    );
    call(&node, "DELETE", "/v1/applications/shop", Some(&token), None)
        .await
        .problem(409, "retirement-required");
    let back = call(
        &node,
        "POST",
        "/v1/applications/shop/unretire",
        Some(&token),
        None,
    )
    .await;
    assert_eq!(back.ok(200)["application"]["retired"], Value::Null);
}

#[tokio::test]
async fn unretire_after_the_grace_period_is_refused() {
    let node = Node::start(NodeOptions {
        env: vec![
            ("SCAFO_RETIRE_GRACESECONDS".into(), "0".into()),
            ("SCAFO_COORDINATOR_LEASESECONDS".into(), "600".into()),
        ],
        ..Default::default()
    })
    .await;
    seed(&node, &["shop"]).await;
    let token = node.admin().token();
    call(
        &node,
        "POST",
        "/v1/applications/shop/retire",
        Some(&token),
        None,
    )
    .await
    .ok(200);
    // The sweep may delete it first; either answer shows the grace is over.
    let answer = call(
        &node,
        "POST",
        "/v1/applications/shop/unretire",
        Some(&token),
        None,
    )
    .await;
    assert!(
        matches!(
            (answer.status, answer.body["code"].as_str()),
            (409, Some("grace-expired")) | (404, Some("not-found"))
        ),
        "{}",
        answer.body
    );
}

#[tokio::test]
async fn domain_claims_follow_the_rules() {
    let node = Node::start(NodeOptions {
        args: vec!["--platform-domain".into(), "apps.example.com".into()],
        ..Default::default()
    })
    .await;
    seed(&node, &["shop", "blog"]).await;
    let admin = node.admin();
    let token = admin.token();
    let claim = |app: &str, host: &str| format!("/v1/applications/{app}/domains/{host}");

    for host in [
        "https:%2F%2Fshop.example",
        "shop.example:443",
        "localhost",
        "shop_x.example",
        "shop.example.",
        "10.0.0.1",
        "-a.example",
    ] {
        let answer = call(&node, "POST", &claim("shop", host), Some(&token), None).await;
        answer.problem(400, "invalid-input");
    }
    let platform = call(
        &node,
        "POST",
        &claim("shop", "x.apps.example.com"),
        Some(&token),
        None,
    )
    .await;
    platform.problem(400, "invalid-input");
    assert!(
        platform.body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("platform domain")
    );

    // A first claim, its answer, and idempotent re-claims that never narrow.
    let first = call(
        &node,
        "POST",
        &claim("shop", "Shop.Example"),
        Some(&token),
        None,
    )
    .await;
    let first = first.ok(200);
    assert_eq!(first["host"], "shop.example");
    assert_eq!(first["platformHosts"], json!(["shop.apps.example.com"]));
    assert_eq!(
        first["application"]["domains"],
        json!([{"host": "shop.example", "wildcard": false}])
    );
    let wide = call(
        &node,
        "POST",
        &format!("{}?wildcard=1", claim("shop", "shop.example")),
        Some(&token),
        None,
    )
    .await;
    assert_eq!(
        wide.ok(200)["application"]["domains"],
        json!([{"host": "shop.example", "wildcard": true}])
    );
    let plain = call(
        &node,
        "POST",
        &claim("shop", "shop.example"),
        Some(&token),
        None,
    )
    .await;
    assert_eq!(
        plain.ok(200)["application"]["domains"],
        json!([{"host": "shop.example", "wildcard": true}]),
        "never downgraded"
    );
    let only_true = call(
        &node,
        "POST",
        &format!("{}?wildcard=true", claim("shop", "other.example")),
        Some(&token),
        None,
    )
    .await;
    assert_eq!(
        only_true.ok(200)["application"]["domains"][0],
        json!({"host": "other.example", "wildcard": false}),
        "only 1 counts"
    );

    // Held by another application, covered by its wildcard, or a wildcard over its host.
    call(
        &node,
        "POST",
        &claim("blog", "shop.example"),
        Some(&token),
        None,
    )
    .await
    .problem(409, "host-claimed");
    call(
        &node,
        "POST",
        &claim("blog", "staging.shop.example"),
        Some(&token),
        None,
    )
    .await
    .problem(409, "host-claimed");
    call(
        &node,
        "POST",
        &claim("blog", "a.blog.example"),
        Some(&token),
        None,
    )
    .await
    .ok(200);
    call(
        &node,
        "POST",
        &format!("{}?wildcard=1", claim("shop", "blog.example")),
        Some(&token),
        None,
    )
    .await
    .problem(409, "host-claimed");

    // A wildcard needs a key reaching <name>-*.
    let narrow = operator(&node, &admin, "op-narrow", &["shop"]).await;
    call(
        &node,
        "POST",
        &format!("{}?wildcard=1", claim("shop", "narrow.example")),
        Some(&narrow.token()),
        None,
    )
    .await
    .problem(403, "auth-scope");
    call(
        &node,
        "POST",
        &claim("shop", "narrow.example"),
        Some(&narrow.token()),
        None,
    )
    .await
    .ok(200);

    // Release: the application stops listing it and the host is free again.
    let released = call(
        &node,
        "DELETE",
        &claim("shop", "other.example"),
        Some(&token),
        None,
    )
    .await;
    assert!(
        !released.ok(200)["application"]["domains"]
            .to_string()
            .contains("other.example")
    );
    call(
        &node,
        "DELETE",
        &claim("shop", "other.example"),
        Some(&token),
        None,
    )
    .await
    .problem(404, "not-found");
    call(
        &node,
        "POST",
        &claim("blog", "other.example"),
        Some(&token),
        None,
    )
    .await
    .ok(200);
    call(
        &node,
        "POST",
        &claim("ghost", "ghost.example"),
        Some(&token),
        None,
    )
    .await
    .problem(404, "not-found");

    // A claim written before a crash kept the application from listing it:
    // re-running the call repairs it.
    let store =
        scafo::store::file::FileStore::open(&node.scratch.path().join("bucket")).expect("open");
    let registry = scafo::registry::Registry::new(Arc::new(store));
    let orphan = scafo::registry::ClaimRecord {
        v: scafo::registry::V1,
        host: "crash.example".into(),
        application: scafo::names::AppName::parse("shop").expect("name"),
        wildcard: false,
        created_at: scafo::wire::Timestamp::now(),
        by: "op-admin".into(),
    };
    registry
        .create(&scafo::registry::keys::claim("crash.example"), &orphan)
        .await
        .expect("claim");
    let listed = call(&node, "GET", "/v1/applications/shop", Some(&token), None).await;
    assert!(!listed.body.to_string().contains("crash.example"));
    let repaired = call(
        &node,
        "POST",
        &claim("shop", "crash.example"),
        Some(&token),
        None,
    )
    .await;
    assert!(
        repaired.ok(200)["application"]["domains"]
            .to_string()
            .contains("crash.example")
    );
}

fn three(bucket: &str, id: &str, lease: u64) -> NodeOptions {
    NodeOptions {
        id: Some(id.into()),
        bucket: Some(bucket.into()),
        env: vec![("SCAFO_COORDINATOR_LEASESECONDS".into(), lease.to_string())],
        ..Default::default()
    }
}

async fn holder(node: &Node, token: &str) -> Option<String> {
    let state = call(node, "GET", "/v1/state", Some(token), None).await;
    state.body["coordinator"]["holder"]
        .as_str()
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_nodes_gate_deletion_through_the_coordinator() {
    let dir = tempfile::tempdir().expect("dir");
    let bucket = format!("file://{}", dir.path().join("bucket").display());
    let a = Node::start(three(&bucket, "vps-a", 3)).await;
    let b = Node::start(three(&bucket, "vps-b", 3)).await;
    let c = Node::start(three(&bucket, "vps-c", 3)).await;
    let token = a.admin().token();
    seed_bucket(&dir.path().join("bucket"), &["gone", "race", "busy"]).await;
    let first = eventually("a coordinator", Duration::from_secs(20), || {
        holder(&a, &token)
    })
    .await;
    let mut nodes = vec![a, b, c];
    let others: Vec<usize> = (0..3).filter(|i| nodes[*i].id() != first).collect();

    // A delete sent to a non-coordinator is forwarded and answered verbatim.
    let via = &nodes[others[0]];
    let answer = call(
        via,
        "DELETE",
        "/v1/applications/gone?force=1",
        Some(&token),
        None,
    )
    .await;
    assert_eq!(answer.raw, br#"{"deleted":"gone"}"#.to_vec());
    assert_eq!(
        answer
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    let coordinator = nodes.iter().find(|n| n.id() == first).expect("holder");
    assert!(
        coordinator.log().contains("deleted application"),
        "the coordinator did the work"
    );
    call(via, "GET", "/v1/applications/gone", Some(&token), None)
        .await
        .problem(404, "not-found");

    // 20 concurrent deletes of one application from every node: one deletes.
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..20 {
        let (url, token) = (nodes[i % 3].url.clone(), token.clone());
        tasks.spawn(async move {
            let response = reqwest::Client::new()
                .delete(format!("{url}/v1/applications/race?force=1"))
                .bearer_auth(token)
                .send()
                .await
                .expect("send");
            response.status().as_u16()
        });
    }
    let mut statuses = Vec::new();
    while let Some(done) = tasks.join_next().await {
        statuses.push(done.expect("task"));
    }
    statuses.sort();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 404),
        "{statuses:?}"
    );

    // 50 concurrent updates of two fields from every node: neither is lost.
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..50 {
        let (url, token) = (nodes[i % 3].url.clone(), token.clone());
        tasks.spawn(async move {
            let (path, body) = if i % 2 == 0 {
                ("selector", json!({"selector": {"slot": format!("s{i}")}}))
            } else {
                ("replicas", json!({"replicas": i}))
            };
            let response = reqwest::Client::new()
                .post(format!("{url}/v1/applications/busy/{path}"))
                .bearer_auth(token)
                .json(&body)
                .send()
                .await
                .expect("send");
            response.status().as_u16()
        });
    }
    while let Some(done) = tasks.join_next().await {
        assert_eq!(done.expect("task"), 200);
    }
    let busy = call(
        &nodes[0],
        "GET",
        "/v1/applications/busy",
        Some(&token),
        None,
    )
    .await;
    let busy = &busy.body["application"];
    assert!(
        busy["selector"]["slot"].is_string() && busy["replicas"].is_u64(),
        "both kinds of update survive: {busy}"
    );

    // Killing the lease holder: another node takes the lease.
    let index = nodes.iter().position(|n| n.id() == first).expect("holder");
    let killed_at = Instant::now();
    assert!(nodes[index].signal_and_wait(libc::SIGKILL).code().is_none());
    let survivor = &nodes[others[0]];
    let next = eventually("a new coordinator", Duration::from_secs(20), || async {
        holder(survivor, &token).await.filter(|h| *h != first)
    })
    .await;
    let took = killed_at.elapsed();
    eprintln!(
        "lease taken over by {next} {took:?} after the holder was killed (TTL 3 s, renewed every 1 s)"
    );
    // Within TTL + one renew interval (4 s), with 1.5 s for a loaded machine.
    assert!(took < Duration::from_millis(5500), "took {took:?}");
    // The new coordinator carries out deletions.
    seed_bucket(&dir.path().join("bucket"), &["later"]).await;
    let answer = call(
        survivor,
        "DELETE",
        "/v1/applications/later?force=1",
        Some(&token),
        None,
    )
    .await;
    assert_eq!(answer.ok(200), &json!({"deleted": "later"}));
    nodes.clear();
}

#[tokio::test]
async fn the_coordinator_sweeps_retired_applications_past_grace() {
    let node = Node::start(NodeOptions {
        env: vec![
            ("SCAFO_RETIRE_GRACESECONDS".into(), "1".into()),
            ("SCAFO_COORDINATOR_LEASESECONDS".into(), "3".into()),
        ],
        ..Default::default()
    })
    .await;
    seed(&node, &["old"]).await;
    let token = node.admin().token();
    call(
        &node,
        "POST",
        "/v1/applications/old/domains/old.example",
        Some(&token),
        None,
    )
    .await
    .ok(200);
    call(
        &node,
        "POST",
        "/v1/applications/old/retire",
        Some(&token),
        None,
    )
    .await
    .ok(200);
    eventually("the sweep", Duration::from_secs(20), || async {
        (call(&node, "GET", "/v1/applications/old", Some(&token), None)
            .await
            .status
            == 404)
            .then_some(())
    })
    .await;
    // The record goes first, then its claims.
    let claim = node
        .scratch
        .path()
        .join("bucket/registry/claims/old.example.json~");
    eventually(
        "its claim going with it",
        Duration::from_secs(10),
        || async { (!claim.exists()).then_some(()) },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn block_stops_serving_refuses_deploys_and_unblock_restores() {
    let node = Node::start(NodeOptions::default()).await;
    let admin = node.admin();
    let token = admin.token();
    let project = tempfile::tempdir().expect("project");
    std::fs::write(
        project.path().join("wrangler.json"),
        r#"{"name": "shop", "main": "index.js"}"#,
    )
    .expect("write");
    std::fs::write(
        project.path().join("index.js"),
        "export default { fetch() { return new Response('open'); } };",
    )
    .expect("write");
    let deploy = || {
        crate::util::scafo()
            .arg("deploy")
            .arg(project.path())
            .env("SCAFO_URL", &node.url)
            .env("SCAFO_KEY", node.state_dir.join("admin.jwk"))
            .output()
            .expect("deploy")
    };
    assert!(deploy().status.success());
    let served = |node: &Node| {
        let token = token.clone();
        let url = node.url.clone();
        async move {
            let state: Value = reqwest::Client::new()
                .get(format!("{url}/v1/state"))
                .bearer_auth(token)
                .send()
                .await
                .ok()?
                .json()
                .await
                .ok()?;
            state["applications"]
                .as_array()?
                .iter()
                .find(|a| a["name"] == "shop")?["url"]
                .as_str()
                .map(str::to_owned)
        }
    };
    let url = served(&node).await.expect("serving");
    assert_eq!(
        reqwest::get(&url)
            .await
            .expect("get")
            .text()
            .await
            .expect("text"),
        "open"
    );

    let blocked_at = Instant::now();
    let answer = call(
        &node,
        "POST",
        "/v1/applications/shop/block",
        Some(&token),
        None,
    )
    .await;
    assert_eq!(answer.ok(200)["application"]["blocked"], true);
    eventually(
        "shop leaving /v1/state",
        Duration::from_secs(10),
        || async { served(&node).await.is_none().then_some(()) },
    )
    .await;
    let left_state = blocked_at.elapsed();
    eventually("workerd stopping", Duration::from_secs(20), || {
        let url = url.clone();
        async move { reqwest::get(&url).await.is_err().then_some(()) }
    })
    .await;
    let stopped = blocked_at.elapsed();
    eprintln!(
        "block: left /v1/state after {left_state:?}, Celld stopped it after {stopped:?} (drain 5 s)"
    );
    assert!(
        node.log().contains("application.blocked") && node.log().contains("actor=op-admin"),
        "one event naming the actor"
    );
    let refused = deploy();
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("error[application-blocked]"));

    call(
        &node,
        "POST",
        "/v1/applications/shop/unblock",
        Some(&token),
        None,
    )
    .await
    .ok(200);
    let back = eventually("shop serving again", Duration::from_secs(20), || {
        served(&node)
    })
    .await;
    assert_eq!(
        reqwest::get(&back)
            .await
            .expect("get")
            .text()
            .await
            .expect("text"),
        "open"
    );
}

#[tokio::test]
async fn an_interrupted_deletion_is_finished_and_nothing_is_inherited() {
    let node = Node::start(NodeOptions {
        env: vec![("SCAFO_COORDINATOR_LEASESECONDS".into(), "3".into())],
        ..Default::default()
    })
    .await;
    seed(&node, &["shop"]).await;
    let token = node.admin().token();
    call(
        &node,
        "POST",
        "/v1/applications/shop/domains/shop.example",
        Some(&token),
        None,
    )
    .await
    .ok(200);
    // The deletion stopped right after removing the record.
    std::fs::remove_file(
        node.scratch
            .path()
            .join("bucket/registry/applications/shop.json~"),
    )
    .expect("rm");
    call(&node, "DELETE", "/v1/applications/shop", Some(&token), None)
        .await
        .problem(404, "not-found");
    // Forced, the deletion is finished: what the application left goes.
    let finished = call(
        &node,
        "DELETE",
        "/v1/applications/shop?force=1",
        Some(&token),
        None,
    )
    .await;
    assert_eq!(finished.ok(200), &json!({"deleted": "shop"}));
    assert!(
        !node
            .scratch
            .path()
            .join("bucket/registry/claims/shop.example.json~")
            .exists()
    );
    call(
        &node,
        "DELETE",
        "/v1/applications/shop?force=1",
        Some(&token),
        None,
    )
    .await
    .problem(404, "not-found");
    seed(&node, &["shop"]).await;
    let fresh = call(&node, "GET", "/v1/applications/shop", Some(&token), None).await;
    assert_eq!(fresh.ok(200)["application"]["domains"], json!([]));
    // Malformed queries are problem documents too.
    let duplicate = call(
        &node,
        "DELETE",
        "/v1/applications/shop?force=1&force=x",
        Some(&token),
        None,
    )
    .await;
    duplicate.problem(400, "invalid-input");
}
