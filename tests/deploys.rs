//! Deploys on one node, end to end through the real binary and workerd:
//! `scafo deploy` of a fixture worker, a switch with no failed request,
//! a worker that throws at startup, every intake refusal (leaving nothing
//! behind), the read-time liveness judgement, and a restart.

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use crate::util::{Answer, Node, NodeOptions, TestKey, call, eventually, scafo};

/// A worker importing a relative module and reading two vars.
pub(crate) fn fixture(dir: &Path, version: &str) {
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    std::fs::write(
        dir.join("wrangler.jsonc"),
        "{\n  // fixture\n  \"name\": \"hello\",\n  \"main\": \"src/index.js\",\n  \"compatibility_date\": \"2025-06-01\",\n  \"vars\": { \"GREETING\": \"hi\" },\n}\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("src/index.js"),
        format!(
            "import {{ shout }} from \"./shout.js\";\nexport default {{\n  async fetch(request, env) {{\n    return new Response(shout(`${{env.GREETING}} ${{env.WHO}} {version}`));\n  }},\n}};\n"
        ),
    )
    .expect("write");
    std::fs::write(
        dir.join("src/shout.js"),
        "export function shout(s) { return s.toUpperCase(); }\n",
    )
    .expect("write");
}

pub(crate) fn deploy_cli(node: &Node, dir: &Path, args: &[&str]) -> std::process::Output {
    let mut command = scafo();
    command
        .arg("deploy")
        .arg(dir)
        .args(args)
        .env("SCAFO_URL", &node.url)
        .env("SCAFO_KEY", node.state_dir.join("admin.jwk"))
        .env("HOME", dir);
    command.output().expect("run scafo deploy")
}

/// The URL this node serves `app` at, from `/v1/state`.
pub(crate) async fn app_url(node: &Node, admin: &TestKey, app: &str) -> Option<String> {
    let state = call(node, "GET", "/v1/state", Some(&admin.token()), None).await;
    state.body["applications"]
        .as_array()?
        .iter()
        .find(|a| a["name"] == app)?["url"]
        .as_str()
        .map(str::to_owned)
}

pub(crate) async fn fetch(url: &str) -> (u16, String) {
    match reqwest::get(url).await {
        Ok(response) => (
            response.status().as_u16(),
            response.text().await.unwrap_or_default(),
        ),
        Err(e) => (0, e.to_string()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deploy_switch_without_failed_requests_and_a_failing_start() {
    let node = Node::start(NodeOptions::default()).await;
    let admin = node.admin();
    let project = tempfile::tempdir().expect("project");
    fixture(project.path(), "v1");

    let first = deploy_cli(
        &node,
        project.path(),
        &[
            "--var",
            "WHO:world",
            "--var",
            "GREETING:hello:there",
            "-m",
            "first",
        ],
    );
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(
        stdout.contains(" is live") && stdout.contains("http://hello.localhost"),
        "{stdout}"
    );
    let url = app_url(&node, &admin, "hello").await.expect("served");
    assert!(
        stdout.contains(&format!("  node node-a: {url}")),
        "{stdout}"
    );
    assert_eq!(fetch(&url).await, (200, "HELLO:THERE WORLD V1".into()));

    // The second version replaces the first while a client keeps asking,
    // resolving the upstream as an ingress would.
    fixture(project.path(), "v2");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let looping = {
        let (node_url, token, stop) = (node.url.clone(), admin.token(), stop.clone());
        tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut answers = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let state: Value = client
                    .get(format!("{node_url}/v1/state"))
                    .bearer_auth(&token)
                    .send()
                    .await
                    .expect("state")
                    .json()
                    .await
                    .expect("json");
                let url = state["applications"][0]["url"]
                    .as_str()
                    .expect("url")
                    .to_owned();
                answers.push(fetch(&url).await);
            }
            answers
        })
    };
    let project_path = project.path().to_owned();
    let (node_url, key) = (node.url.clone(), node.state_dir.join("admin.jwk"));
    let second = tokio::task::spawn_blocking(move || {
        scafo()
            .arg("deploy")
            .arg(&project_path)
            .args(["--var", "WHO:world", "--json"])
            .env("SCAFO_URL", node_url)
            .env("SCAFO_KEY", key)
            .output()
            .expect("deploy")
    })
    .await
    .expect("join");
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let status: Value = serde_json::from_slice(&second.stdout).expect("final DeployStatus");
    assert_eq!(status["state"], "live");
    assert_eq!(status["source"], Value::Null, "not a git work tree");
    // Keep asking through the drain of the old release, until it stops.
    eventually(
        "v1 stopping after its drain",
        Duration::from_secs(30),
        || async { (fetch(&url).await.0 == 0).then_some(()) },
    )
    .await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let answers = looping.await.expect("loop");
    assert!(answers.len() > 20, "{} requests", answers.len());
    let failed: Vec<_> = answers
        .iter()
        .filter(|(status, _)| *status != 200)
        .collect();
    assert!(
        failed.is_empty(),
        "failed requests during the switch: {failed:?}"
    );
    assert_eq!(answers.last().map(|a| a.1.as_str()), Some("HI WORLD V2"));

    // A worker that throws at startup fails the deploy; v2 keeps serving.
    std::fs::write(project.path().join("src/index.js"), "throw new Error('broken at startup');\nexport default { fetch() { return new Response('never'); } };\n").expect("write");
    let broken = deploy_cli(&node, project.path(), &[]);
    assert_eq!(broken.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&broken.stderr);
    assert!(
        stderr.contains("failed [celld-start]") && stderr.contains("broken at startup"),
        "{stderr}"
    );
    assert!(
        !stderr.contains(&node.state_dir.display().to_string()),
        "no host paths in the detail: {stderr}"
    );
    let url = app_url(&node, &admin, "hello").await.expect("served");
    assert_eq!(fetch(&url).await, (200, "HI WORLD V2".into()));
}

const LIMIT: u64 = 8 << 20;

pub(crate) fn meta(value: Value) -> String {
    URL_SAFE_NO_PAD.encode(value.to_string())
}

pub(crate) async fn post_deploy(
    node: &Node,
    token: Option<&str>,
    app: &str,
    header: Option<&str>,
    content_type: &str,
    body: Vec<u8>,
) -> Answer {
    let mut request = reqwest::Client::new()
        .post(format!("{}/v1/applications/{app}/deploys", node.url))
        .header("content-type", content_type)
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(header) = header {
        request = request.header("x-scafo-deploy", header);
    }
    let response = request.send().await.expect("send");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let raw = response.bytes().await.expect("body").to_vec();
    Answer {
        status,
        headers,
        body: serde_json::from_slice(&raw).unwrap_or(Value::Null),
        raw,
    }
}

/// A gzip'd tar built from raw headers, so it can hold what a well-behaved
/// packer never writes.
pub(crate) fn archive(entries: &[(&str, tar::EntryType, &[u8], Option<&str>)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (path, kind, data, link) in entries {
        let mut header = tar::Header::new_gnu();
        let name = &mut header.as_gnu_mut().expect("gnu").name;
        name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_entry_type(*kind);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        if let Some(link) = link {
            header.set_link_name(link).expect("link");
        }
        header.set_cksum();
        builder.append(&header, *data).expect("append");
    }
    builder.into_inner().expect("tar").finish().expect("gzip")
}

pub(crate) const CONFIG: &[u8] = br#"{"name": "x", "main": "index.js"}"#;
pub(crate) const FILE: tar::EntryType = tar::EntryType::Regular;

fn assert_nothing_left(node: &Node) {
    let bucket = node.scratch.path().join("bucket");
    for dir in ["registry/deploys", "artifacts"] {
        let path = bucket.join(dir);
        let left: Vec<_> = walk(&path);
        assert!(left.is_empty(), "left behind under {dir}: {left:?}");
    }
    for dir in ["intake", "artifacts"] {
        let left = walk(&node.state_dir.join(dir));
        assert!(
            left.is_empty(),
            "left behind in the state dir {dir}: {left:?}"
        );
    }
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.path().is_dir() {
                out.extend(walk(&entry.path()));
            } else if !entry.file_name().to_string_lossy().ends_with("~lock") {
                out.push(entry.path().display().to_string());
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_intake_refusal_has_its_code_and_leaves_nothing_behind() {
    let node = Node::start(NodeOptions {
        env: vec![("SCAFO_DEPLOY_ARTIFACTBYTES".into(), LIMIT.to_string())],
        ..Default::default()
    })
    .await;
    let admin = node.admin();
    let token = admin.token();
    let good = archive(&[
        ("wrangler.json", FILE, CONFIG, None),
        ("index.js", FILE, b"export default {}", None),
    ]);
    let empty = meta(json!({}));
    let octets = "application/octet-stream";

    // Authentication comes before the header and the body are read.
    post_deploy(&node, None, "shop", Some("!!"), "text/plain", vec![])
        .await
        .problem(401, "auth-invalid");
    let node_key = TestKey::node(&node, "node-a");
    post_deploy(
        &node,
        Some(&node_key.token()),
        "shop",
        Some(&empty),
        octets,
        good.clone(),
    )
    .await
    .problem(403, "auth-scope");
    let blog = TestKey::generate("op-blog");
    call(
        &node,
        "POST",
        "/v1/operators",
        Some(&token),
        Some(json!({"id": "op-blog", "publicKey": blog.public(), "applications": ["blog"]})),
    )
    .await
    .ok(201);
    post_deploy(
        &node,
        Some(&blog.token()),
        "shop",
        Some("!!"),
        octets,
        good.clone(),
    )
    .await
    .problem(403, "auth-scope");
    post_deploy(
        &node,
        Some(&token),
        "Shop_1",
        Some(&empty),
        octets,
        good.clone(),
    )
    .await
    .problem(400, "invalid-input");

    // Every metadata defect is invalid-input, "Malformed request".
    let unsorted = URL_SAFE_NO_PAD.encode(r#"{"source":{},"message":"x"}"#);
    let spaced = URL_SAFE_NO_PAD.encode(r#"{ "message": "x" }"#);
    let padded = format!("{}=", meta(json!({"a": 1})));
    let mut defects = vec![
        None,
        Some(String::new()),
        Some("has space".into()),
        Some(padded),
        Some(URL_SAFE_NO_PAD.encode([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d])),
        Some(URL_SAFE_NO_PAD.encode("not json")),
        Some(unsorted),
        Some(spaced),
    ];
    for bad in [
        json!([1]),
        json!("text"),
        json!({"script": "x"}),
        json!({"bundle": true}),
        json!({"version": "1"}),
        json!({"source": "main"}),
        json!({"replicas": 0}),
        json!({"selector": ["eu"]}),
    ] {
        defects.push(Some(meta(bad)));
    }
    for header in &defects {
        let answer = post_deploy(
            &node,
            Some(&token),
            "shop",
            header.as_deref(),
            octets,
            good.clone(),
        )
        .await;
        answer.problem(400, "invalid-input");
        assert_eq!(answer.body["title"], "Malformed request", "{header:?}");
    }
    post_deploy(
        &node,
        Some(&token),
        "shop",
        Some(&empty),
        "application/json",
        good.clone(),
    )
    .await
    .problem(415, "unsupported-media-type");

    // Every archive defect.
    let mut many: Vec<(String, Vec<u8>)> =
        (0..10_001).map(|i| (format!("f{i}"), Vec::new())).collect();
    many.push(("wrangler.json".into(), CONFIG.to_vec()));
    let many_entries: Vec<(&str, tar::EntryType, &[u8], Option<&str>)> = many
        .iter()
        .map(|(p, d)| (p.as_str(), FILE, d.as_slice(), None))
        .collect();
    let zeros = vec![0u8; 2 * LIMIT as usize];
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        (
            "path traversal",
            archive(&[
                ("wrangler.json", FILE, CONFIG, None),
                ("../evil.js", FILE, b"x", None),
            ]),
            400,
            "invalid-input",
        ),
        (
            "absolute path",
            archive(&[
                ("wrangler.json", FILE, CONFIG, None),
                ("/etc/evil", FILE, b"x", None),
            ]),
            400,
            "invalid-input",
        ),
        (
            "symlink",
            archive(&[
                ("wrangler.json", FILE, CONFIG, None),
                ("link", tar::EntryType::Symlink, b"", Some("/etc/passwd")),
            ]),
            400,
            "invalid-input",
        ),
        (
            "hard link",
            archive(&[
                ("wrangler.json", FILE, CONFIG, None),
                ("hard", tar::EntryType::Link, b"", Some("wrangler.json")),
            ]),
            400,
            "invalid-input",
        ),
        (
            "device",
            archive(&[
                ("wrangler.json", FILE, CONFIG, None),
                ("dev", tar::EntryType::Char, b"", None),
            ]),
            400,
            "invalid-input",
        ),
        (
            "too many entries",
            archive(&many_entries),
            400,
            "invalid-input",
        ),
        (
            "gzip bomb",
            archive(&[
                ("wrangler.json", FILE, CONFIG, None),
                ("zeros", FILE, &zeros, None),
            ]),
            413,
            "resource-limit",
        ),
        (
            "no config",
            archive(&[("index.js", FILE, b"x", None)]),
            400,
            "invalid-input",
        ),
        (
            "config not at the root",
            archive(&[("sub/wrangler.json", FILE, CONFIG, None)]),
            400,
            "invalid-input",
        ),
        (
            "not gzip",
            b"plain bytes, not an archive".to_vec(),
            400,
            "invalid-input",
        ),
        ("empty body", Vec::new(), 400, "invalid-input"),
    ];
    for (what, body, status, code) in cases {
        let answer = post_deploy(&node, Some(&token), "shop", Some(&empty), octets, body).await;
        assert_eq!(
            (answer.status, answer.body["code"].as_str()),
            (status, Some(code)),
            "{what}: {}",
            answer.body
        );
    }

    // Oversize, declared and streamed.
    let big = vec![7u8; LIMIT as usize + 1];
    post_deploy(
        &node,
        Some(&token),
        "shop",
        Some(&empty),
        octets,
        big.clone(),
    )
    .await
    .problem(413, "resource-limit");
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        big.chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
    let streamed = reqwest::Client::new()
        .post(format!("{}/v1/applications/shop/deploys", node.url))
        .bearer_auth(&token)
        .header("x-scafo-deploy", &empty)
        .header("content-type", octets)
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )))
        .send()
        .await
        .expect("send");
    assert_eq!(streamed.status(), 413);

    // Frozen, blocked, retired.
    call(
        &node,
        "POST",
        "/v1/fleet/freeze",
        Some(&token),
        Some(json!({"reason": "maintenance"})),
    )
    .await
    .ok(201);
    let frozen = post_deploy(
        &node,
        Some(&token),
        "shop",
        Some(&empty),
        octets,
        good.clone(),
    )
    .await;
    frozen.problem(409, "deploys-frozen");
    assert!(
        frozen.body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("maintenance")
    );
    call(&node, "DELETE", "/v1/fleet/freeze", Some(&token), None)
        .await
        .ok(200);
    let registry = scafo::registry::Registry::new(std::sync::Arc::new(
        scafo::store::file::FileStore::open(&node.scratch.path().join("bucket")).expect("open"),
    ));
    for (app, blocked, code) in [
        ("held", true, "application-blocked"),
        ("gone", false, "application-retired"),
    ] {
        let name = scafo::names::AppName::parse(app).expect("name");
        let mut record = scafo::registry::ApplicationRecord::new(name.clone());
        record.blocked = blocked;
        if !blocked {
            let now = scafo::wire::Timestamp::now();
            record.retired = Some(scafo::registry::Retirement {
                at: now,
                by: "op-admin".into(),
                grace_until: now,
            });
        }
        registry
            .create(&scafo::registry::keys::application(&name), &record)
            .await
            .expect("create");
        post_deploy(&node, Some(&token), app, Some(&empty), octets, good.clone())
            .await
            .problem(409, code);
    }
    assert_nothing_left(&node);

    // The control: the same archive is accepted, with a Location.
    let accepted = post_deploy(
        &node,
        Some(&token),
        "shop",
        Some(&meta(json!({"message": "ok", "source": {"ci": "x"}}))),
        octets,
        good,
    )
    .await;
    let deploy = accepted.ok(202)["deploy"].clone();
    assert_eq!(deploy["state"], "accepted");
    assert_eq!(deploy["message"], "ok");
    assert_eq!(deploy["source"], json!({"ci": "x"}));
    let location = accepted
        .headers
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    assert_eq!(
        location,
        Some(format!(
            "/v1/deploys/{}",
            deploy["id"].as_str().expect("id")
        ))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deploy_ids_liveness_and_a_restart() {
    let mut a = Node::start(NodeOptions {
        id: Some("vps-a".into()),
        ..Default::default()
    })
    .await;
    let b = Node::start(NodeOptions {
        id: Some("vps-b".into()),
        bucket: Some(a.file_bucket()),
        ..Default::default()
    })
    .await;
    let admin = a.admin();
    let token = admin.token();
    let project = tempfile::tempdir().expect("project");
    fixture(project.path(), "v1");
    let done = deploy_cli(&a, project.path(), &["--var", "WHO:a", "--json"]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let live: Value = serde_json::from_slice(&done.stdout).expect("json");
    let id = live["id"].as_str().expect("id").to_owned();
    assert_eq!(
        live["nodes"].as_object().map(|n| n.len()),
        Some(2),
        "both nodes run it: {live}"
    );

    // Any node answers a poll; ids are checked.
    assert_eq!(
        call(&b, "GET", &format!("/v1/deploys/{id}"), Some(&token), None)
            .await
            .ok(200)["state"],
        "live"
    );
    call(&b, "GET", "/v1/deploys/not-an-id", Some(&token), None)
        .await
        .problem(404, "not-found");
    call(&b, "GET", "/v1/deploys/not-an-id", None, None)
        .await
        .problem(401, "auth-invalid");
    call(
        &b,
        "GET",
        "/v1/deploys/hello.0000000000000000",
        Some(&token),
        None,
    )
    .await
    .problem(404, "not-found");
    let blog = TestKey::generate("op-blog");
    call(
        &a,
        "POST",
        "/v1/operators",
        Some(&token),
        Some(json!({"id": "op-blog", "publicKey": blog.public(), "applications": ["blog"]})),
    )
    .await
    .ok(201);
    call(
        &b,
        "GET",
        &format!("/v1/deploys/{id}"),
        Some(&blog.token()),
        None,
    )
    .await
    .problem(403, "auth-scope");

    // A deploy whose carrier (vps-a) died mid-flight. The record is written
    // as vps-a left it, then time is moved on in the bucket: 100 s unmoved,
    // the carrier's heartbeat a minute old.
    let store = std::sync::Arc::new(
        scafo::store::file::FileStore::open(&a.scratch.path().join("bucket")).expect("open"),
    );
    let registry = scafo::registry::Registry::new(store);
    let stuck_id = scafo::names::DeployId::parse("hello.00000000000000aa").expect("id");
    let old = scafo::wire::Timestamp::from(std::time::SystemTime::now() - Duration::from_secs(100));
    let mut stuck: scafo::registry::DeployStatus =
        serde_json::from_value(live.clone()).expect("status");
    stuck.id = stuck_id.clone();
    stuck.state = scafo::registry::DeployState::Activating;
    stuck.updated_at = old;
    registry
        .create(&scafo::registry::keys::deploy(&stuck_id), &stuck)
        .await
        .expect("create");
    assert!(a.signal_and_wait(libc::SIGKILL).code().is_none());
    let vps_a = scafo::names::NodeId::parse("vps-a").expect("id");
    registry
        .update(
            &scafo::registry::keys::node(&vps_a),
            |current: Option<&scafo::registry::NodeRecord>| {
                let mut record = current.cloned().expect("record");
                record.heartbeat_at = scafo::wire::Timestamp::from(
                    std::time::SystemTime::now() - Duration::from_secs(60),
                );
                Ok::<_, scafo::registry::RegistryError>(scafo::registry::Change::Put(record))
            },
        )
        .await
        .expect("age the heartbeat");
    let judged = call(
        &b,
        "GET",
        &format!("/v1/deploys/{stuck_id}"),
        Some(&token),
        None,
    )
    .await;
    let judged = judged.ok(200);
    assert_eq!(
        (judged["state"].as_str(), judged["code"].as_str()),
        (Some("failed"), Some("deploy-timeout"))
    );
    assert!(
        judged["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("node vps-a"),
        "{judged}"
    );
    let stored = registry
        .read(&scafo::registry::keys::deploy(&stuck_id))
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(
        stored.value.state,
        scafo::registry::DeployState::Activating,
        "a poll writes nothing"
    );

    // vps-a comes back and serves its live release again.
    let restarted = Node::start(NodeOptions {
        id: Some("vps-a".into()),
        bucket: Some(a.file_bucket()),
        state_dir: Some(a.state_dir.clone()),
        ..Default::default()
    })
    .await;
    let url = eventually("vps-a serving hello again", Duration::from_secs(30), || {
        let (restarted, admin) = (&restarted, &admin);
        async move {
            let url = app_url(restarted, admin, "hello").await?;
            (fetch(&url).await.0 == 200).then_some(url)
        }
    })
    .await;
    assert_eq!(fetch(&url).await, (200, "HI A V1".into()));
}

#[tokio::test]
async fn a_node_without_workerd_serves_its_api_and_says_so() {
    let node = Node::start(NodeOptions {
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        ..Default::default()
    })
    .await;
    let state = call(&node, "GET", "/v1/state", Some(&node.admin().token()), None).await;
    let state = state.ok(200);
    assert_eq!(state["node"]["celld"], Value::Null);
    assert!(
        state["node"]["celldError"]
            .as_str()
            .unwrap_or_default()
            .contains("workerd not found"),
        "{state}"
    );
}

/// The workerd processes whose parent is `pid`.
fn workerd_children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("proc").flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        let Some((comm, rest)) = stat.split_once(") ") else {
            continue;
        };
        if comm.ends_with("(workerd")
            && rest.split_whitespace().nth(1) == Some(pid.to_string().as_str())
        {
            found.push(child);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_bundle_crash_restart_and_refused_configs() {
    let node = Node::start(NodeOptions::default()).await;
    let admin = node.admin();
    let project = tempfile::tempdir().expect("project");
    fixture(project.path(), "plain");

    // --no-bundle: the project's own modules, relative imports resolved by workerd.
    let plain = deploy_cli(
        &node,
        project.path(),
        &["--no-bundle", "--var", "WHO:modules"],
    );
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let url = app_url(&node, &admin, "hello").await.expect("served");
    assert_eq!(fetch(&url).await, (200, "HI MODULES PLAIN".into()));

    // A crashed workerd is restarted on the same port.
    let pid = node.pid().expect("running");
    let children = workerd_children(pid);
    assert_eq!(children.len(), 1, "{children:?}");
    // SAFETY: kill(2) on a process of this test's node.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(children[0] as i32, libc::SIGKILL)
    };
    let back = eventually("workerd restarted", Duration::from_secs(20), || {
        let url = url.clone();
        let old = children[0];
        async move {
            let restarted = workerd_children(pid).into_iter().any(|c| c != old);
            let answer = fetch(&url).await;
            (restarted && answer.0 == 200).then_some(answer)
        }
    })
    .await;
    assert_eq!(back.1, "HI MODULES PLAIN");

    // Bindings this runtime does not provide fail the deploy by name.
    let config = std::fs::read_to_string(project.path().join("wrangler.jsonc")).expect("read");
    std::fs::write(
        project.path().join("wrangler.jsonc"),
        config.replace("\"vars\"", "\"kv_namespaces\": [{ \"binding\": \"CACHE\", \"id\": \"x\" }],\n  \"d1_databases\": [{ \"binding\": \"DB\" }],\n  \"vars\""),
    )
    .expect("write");
    let refused = deploy_cli(&node, project.path(), &[]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("[celld-config]") && stderr.contains("kv_namespaces, d1_databases"),
        "{stderr}"
    );
    assert_eq!(
        fetch(&url).await,
        (200, "HI MODULES PLAIN".into()),
        "the live release keeps serving"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_esbuild_relative_modules_run_and_packages_fail_clearly() {
    let bin = tempfile::tempdir().expect("bin");
    std::os::unix::fs::symlink(crate::util::peer("workerd"), bin.path().join("workerd"))
        .expect("symlink");
    let node = Node::start(NodeOptions {
        env: vec![(
            "PATH".into(),
            format!("{}:/usr/bin:/bin", bin.path().display()),
        )],
        ..Default::default()
    })
    .await;
    let admin = node.admin();
    let project = tempfile::tempdir().expect("project");
    fixture(project.path(), "unbundled");
    let done = deploy_cli(&node, project.path(), &["--var", "WHO:nobody"]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let url = app_url(&node, &admin, "hello").await.expect("served");
    assert_eq!(fetch(&url).await, (200, "HI NOBODY UNBUNDLED".into()));
    std::fs::write(project.path().join("src/index.js"), "import { Hono } from \"hono\";\nexport default { fetch() { return new Response('x'); } };\n").expect("write");
    let refused = deploy_cli(&node, project.path(), &[]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("[celld-build]") && stderr.contains("hono") && stderr.contains("esbuild"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_bundle_cannot_reach_files_outside_the_project() {
    let node = Node::start(NodeOptions::default()).await;
    let project = tempfile::tempdir().expect("project");
    fixture(project.path(), "x");
    // From <state>/celld/hello/<dir>/src, four levels up is the state dir.
    for import in ["../../../../node.jwk", "../../../../admin.jwk"] {
        std::fs::write(
            project.path().join("src/index.js"),
            format!("import key from \"{import}\" with {{ type: \"json\" }};\nexport default {{ fetch() {{ return Response.json(key); }} }};\n"),
        )
        .expect("write");
        let refused = deploy_cli(&node, project.path(), &[]);
        assert_eq!(refused.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("[celld-build]"), "{stderr}");
        let key: Value = serde_json::from_slice(
            &std::fs::read(
                node.state_dir
                    .join(import.trim_start_matches("../../../../")),
            )
            .expect("key"),
        )
        .expect("json");
        let secret = key["d"].as_str().expect("d");
        assert!(
            !stderr.contains(secret),
            "the key leaked into the deploy record: {stderr}"
        );
    }
}
