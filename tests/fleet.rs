//! The fleet on one bucket: placement by replicas and selector, reasons for
//! what cannot be placed, Celld releases compared at intake, and a serving
//! node killed — its application placed and served elsewhere.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{Node, NodeOptions, call, eventually, peer, scafo};

fn node(bucket: &str, id: &str, region: &str, env: Vec<(String, String)>) -> NodeOptions {
    let mut env = env;
    env.push(("SCAFO_COORDINATOR_LEASESECONDS".into(), "3".into()));
    env.push(("SCAFO_RECONCILE_INTERVALMS".into(), "500".into()));
    NodeOptions {
        id: Some(id.into()),
        bucket: Some(bucket.into()),
        args: vec!["--label".into(), format!("region={region}")],
        env,
        ..Default::default()
    }
}

/// An executable at `path` that runs `before` and then the real workerd,
/// for a node given it as `SCAFO_CELLD_WORKERD`.
fn workerd_wrapper(path: &std::path::Path, before: &str) {
    std::fs::write(
        path,
        format!(
            "#!/bin/sh\n{before}\nexec '{}' \"$@\"\n",
            peer("workerd").display()
        ),
    )
    .expect("write");
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
}

fn project(dir: &std::path::Path, name: &str) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(
        dir.join("wrangler.json"),
        format!(r#"{{"name": "{name}", "main": "index.js"}}"#),
    )
    .expect("write");
    std::fs::write(
        dir.join("index.js"),
        format!("export default {{ fetch() {{ return new Response('{name}'); }} }};"),
    )
    .expect("write");
}

fn deploy(
    via: &Node,
    key: &std::path::Path,
    dir: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    scafo()
        .arg("deploy")
        .arg(dir)
        .args(args)
        .arg("--json")
        .env("SCAFO_URL", &via.url)
        .env("SCAFO_KEY", key)
        .output()
        .expect("deploy")
}

/// The applications a node serves, by name → upstream URL.
async fn served(node: &Node, token: &str) -> Vec<(String, String)> {
    let state = call(node, "GET", "/v1/state", Some(token), None).await.body;
    state["applications"]
        .as_array()
        .map(|apps| {
            apps.iter()
                .filter_map(|a| {
                    Some((
                        a["name"].as_str()?.to_owned(),
                        a["url"].as_str()?.to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn serving(nodes: &[&Node], token: &str, app: &str) -> Vec<String> {
    let mut on = Vec::new();
    for node in nodes {
        if served(node, token)
            .await
            .iter()
            .any(|(name, _)| name == app)
        {
            on.push(node.id());
        }
    }
    on
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_selectors_reasons_and_a_killed_node() {
    let dir = tempfile::tempdir().expect("dir");
    let bucket = format!("file://{}", dir.path().join("bucket").display());
    let mut all = [
        Node::start(node(&bucket, "vps-a", "eu", vec![])).await,
        Node::start(node(&bucket, "vps-b", "eu", vec![])).await,
        Node::start(node(&bucket, "vps-c", "us", vec![])).await,
    ];
    let key = all[0].state_dir.join("admin.jwk");
    let token = all[0].admin().token();
    let work = tempfile::tempdir().expect("work");
    {
        let (a, b, c) = (&all[0], &all[1], &all[2]);
        let nodes = [a, b, c];
        eventually("three alive nodes", Duration::from_secs(20), || async {
            let state = call(a, "GET", "/v1/state", Some(&token), None).await.body;
            let alive = state["nodes"]
                .as_array()
                .map(|n| n.iter().filter(|n| n["alive"] == true).count());
            (alive == Some(3)).then_some(())
        })
        .await;

        // replicas: 2 → exactly two nodes run it and report it live.
        project(&work.path().join("two"), "two");
        let done = deploy(b, &key, &work.path().join("two"), &["--replicas", "2"]);
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        let status: Value = serde_json::from_slice(&done.stdout).expect("json");
        assert_eq!(
            status["nodes"].as_object().map(|n| n.len()),
            Some(2),
            "{status}"
        );
        eventually("two serving nodes", Duration::from_secs(20), || async {
            (serving(&nodes, &token, "two").await.len() == 2).then_some(())
        })
        .await;

        // selector region=eu → only the eu nodes.
        project(&work.path().join("eu"), "eu");
        let done = deploy(
            c,
            &key,
            &work.path().join("eu"),
            &["--selector", "region=eu"],
        );
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        let on = eventually("eu on the eu nodes", Duration::from_secs(20), || async {
            let on = serving(&nodes, &token, "eu").await;
            (on.len() == 2).then_some(on)
        })
        .await;
        assert_eq!(on, ["vps-a", "vps-b"]);

        // An unsatisfiable selector is accepted and reported in placement.
        let mars = serde_json::json!({"selector": {"region": "mars"}});
        call(
            a,
            "POST",
            "/v1/applications/eu/selector",
            Some(&token),
            Some(mars),
        )
        .await
        .ok(200);
        let placement = eventually(
            "the reason in placement",
            Duration::from_secs(20),
            || async {
                let app = call(a, "GET", "/v1/applications/eu", Some(&token), None)
                    .await
                    .body;
                let placement = app["application"]["placement"].clone();
                (placement["reason"] == "no alive node has the labels region=mars")
                    .then_some(placement)
            },
        )
        .await;
        assert_eq!(placement["nodes"], serde_json::json!([]));
        let shown = scafo()
            .args(["apps", "show", "eu"])
            .env("SCAFO_URL", &a.url)
            .env("SCAFO_KEY", &key)
            .output()
            .expect("show");
        assert!(
            String::from_utf8_lossy(&shown.stdout)
                .contains("(no alive node has the labels region=mars)")
        );
        eventually("eu stopped everywhere", Duration::from_secs(20), || async {
            serving(&nodes, &token, "eu").await.is_empty().then_some(())
        })
        .await;

        project(&work.path().join("solo"), "solo");
        let done = deploy(a, &key, &work.path().join("solo"), &["--replicas", "1"]);
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
    }

    // One replica; kill the node serving it: it is placed and served elsewhere.
    let first = eventually("solo served", Duration::from_secs(20), || async {
        let on = serving(&[&all[0], &all[1], &all[2]], &token, "solo").await;
        (on.len() == 1).then(|| on[0].clone())
    })
    .await;
    let victim = all.iter().position(|n| n.id() == first).expect("victim");
    let killed_at = Instant::now();
    assert!(all[victim].signal_and_wait(libc::SIGKILL).code().is_none());
    let survivors: Vec<&Node> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != victim)
        .map(|(_, n)| n)
        .collect();
    let token = crate::util::TestKey::read(&key).token();
    let moved = eventually(
        "solo served by another node",
        Duration::from_secs(45),
        || async {
            for node in &survivors {
                let found = served(node, &token)
                    .await
                    .into_iter()
                    .find(|(name, _)| name == "solo");
                if let Some((_, url)) = found
                    && reqwest::get(&url).await.is_ok_and(|r| r.status() == 200)
                {
                    return Some(node.id());
                }
            }
            None
        },
    )
    .await;
    eprintln!(
        "solo moved from {first} to {moved} {:?} after the SIGKILL (heartbeat 5 s, alive window 15 s)",
        killed_at.elapsed()
    );
    assert_ne!(moved, first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn different_celld_releases_refuse_deploys_until_they_agree() {
    let dir = tempfile::tempdir().expect("dir");
    let bucket = format!("file://{}", dir.path().join("bucket").display());
    let wrapper = dir.path().join("workerd-next");
    workerd_wrapper(
        &wrapper,
        "if [ \"$1\" = \"--version\" ]; then echo 'workerd 2099-01-01'; exit 0; fi",
    );
    let a = Node::start(node(&bucket, "vps-a", "eu", vec![])).await;
    let b = Node::start(node(
        &bucket,
        "vps-b",
        "us",
        vec![("SCAFO_CELLD_WORKERD".into(), wrapper.display().to_string())],
    ))
    .await;
    let key = a.state_dir.join("admin.jwk");
    let token = a.admin().token();
    eventually("both nodes alive", Duration::from_secs(20), || async {
        let state = call(&a, "GET", "/v1/state", Some(&token), None).await.body;
        (state["nodes"]
            .as_array()
            .map(|n| n.iter().filter(|n| !n["celld"].is_null()).count())
            == Some(2))
        .then_some(())
    })
    .await;
    let work = tempfile::tempdir().expect("work");
    project(&work.path().join("shop"), "shop");
    let refused = deploy(&b, &key, &work.path().join("shop"), &[]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    let problem: Value =
        serde_json::from_str(stderr.lines().last().unwrap_or_default()).expect("problem");
    assert_eq!(
        (problem["status"].as_u64(), problem["code"].as_str()),
        (Some(409), Some("celld-mismatch"))
    );
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("workerd 2026")
            && detail.contains("workerd 2099-01-01 on vps-b")
            && detail.contains("scafo freeze"),
        "{detail}"
    );
    // Placed only on the eu node, the eligible nodes agree.
    let placed = deploy(
        &b,
        &key,
        &work.path().join("shop"),
        &["--selector", "region=eu"],
    );
    assert!(
        placed.status.success(),
        "{}",
        String::from_utf8_lossy(&placed.stderr)
    );
}

fn record(
    id: &str,
    state: &str,
    accepted_by: &str,
    age: Duration,
) -> scafo::registry::DeployStatus {
    let at = scafo::wire::Timestamp::from(std::time::SystemTime::now() - age);
    serde_json::from_value(serde_json::json!({
        "v": 1, "id": id, "application": id.split('.').next().unwrap_or_default(), "state": state, "code": null, "detail": null,
        "acceptedBy": accepted_by, "caller": "op-admin", "createdAt": at, "updatedAt": at,
        "source": null, "message": null, "artifact": null, "nodes": {}, "urls": []
    }))
    .expect("record")
}

#[tokio::test]
async fn the_reaper_fails_abandoned_deploys_and_forgets_old_ones() {
    let node = Node::start(NodeOptions {
        env: vec![("SCAFO_COORDINATOR_LEASESECONDS".into(), "3".into())],
        ..Default::default()
    })
    .await;
    let token = node.admin().token();
    let store = std::sync::Arc::new(
        scafo::store::file::FileStore::open(&node.scratch.path().join("bucket")).expect("open"),
    );
    let registry = scafo::registry::Registry::new(store.clone());
    use scafo::names::{AppName, DeployId};
    use scafo::registry::keys;
    let (stuck, old, kept) = (
        DeployId::parse("shop.00000000000000a1").expect("id"),
        DeployId::parse("shop.00000000000000a2").expect("id"),
        DeployId::parse("shop.00000000000000a3").expect("id"),
    );
    let week = Duration::from_secs(8 * 24 * 3600);
    registry
        .create(
            &keys::deploy(&stuck),
            &record(
                stuck.as_str(),
                "activating",
                "vps-gone",
                Duration::from_secs(100),
            ),
        )
        .await
        .expect("create");
    registry
        .create(
            &keys::deploy(&old),
            &record(old.as_str(), "failed", "node-a", week),
        )
        .await
        .expect("create");
    registry
        .create(
            &keys::deploy(&kept),
            &record(kept.as_str(), "live", "node-a", week),
        )
        .await
        .expect("create");
    for id in [&old, &kept] {
        scafo::store::ObjectStore::put(&*store, &keys::artifact(id), b"artifact".to_vec())
            .await
            .expect("artifact");
    }
    let name = AppName::parse("shop").expect("name");
    let mut app = scafo::registry::ApplicationRecord::new(name.clone());
    app.release.pending = Some(stuck.clone());
    app.release.live = Some(kept.clone());
    registry
        .create(&keys::application(&name), &app)
        .await
        .expect("app");

    // A pending release naming a failed deploy (its carrier stopped between
    // recording the failure and clearing pending) is cleared.
    let blog = AppName::parse("blog").expect("name");
    let failed = DeployId::parse("blog.00000000000000b1").expect("id");
    registry
        .create(
            &keys::deploy(&failed),
            &record(failed.as_str(), "failed", "node-a", Duration::from_secs(5)),
        )
        .await
        .expect("create");
    let mut dangling = scafo::registry::ApplicationRecord::new(blog.clone());
    dangling.release.pending = Some(failed.clone());
    registry
        .create(&keys::application(&blog), &dangling)
        .await
        .expect("app");

    let reaped = eventually("the reaper", Duration::from_secs(30), || async {
        let status = call(
            &node,
            "GET",
            &format!("/v1/deploys/{stuck}"),
            Some(&token),
            None,
        )
        .await
        .body;
        let stored = registry.read(&keys::deploy(&stuck)).await.ok()??;
        (stored.value.state == scafo::registry::DeployState::Failed).then_some(status)
    })
    .await;
    assert_eq!(reaped["code"], "deploy-timeout");
    assert!(
        reaped["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("node vps-gone"),
        "{reaped}"
    );
    // The record is written first, then `pending` cleared.
    eventually("pending cleared", Duration::from_secs(10), || async {
        let app = registry.read(&keys::application(&name)).await.ok()??;
        app.value.release.pending.is_none().then_some(())
    })
    .await;
    eventually(
        "a dangling pending cleared",
        Duration::from_secs(10),
        || async {
            let app = registry.read(&keys::application(&blog)).await.ok()??;
            app.value.release.pending.is_none().then_some(())
        },
    )
    .await;
    // The artifact is deleted before the record, so once the record is gone
    // the artifact must be too.
    eventually("old records gone", Duration::from_secs(30), || async {
        registry
            .read(&keys::deploy(&old))
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;
    assert!(
        scafo::store::ObjectStore::get(&*store, &keys::artifact(&old))
            .await
            .expect("get")
            .is_none(),
        "the artifact of a forgotten deploy is deleted with it"
    );
    assert!(
        registry
            .read(&keys::deploy(&kept))
            .await
            .expect("read")
            .is_some(),
        "the live release's record stays"
    );
    assert!(
        scafo::store::ObjectStore::get(&*store, &keys::artifact(&kept))
            .await
            .expect("get")
            .is_some(),
        "and its artifact"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_that_cannot_start_a_release_fails_it_and_the_previous_keeps_serving() {
    let dir = tempfile::tempdir().expect("dir");
    let bucket = format!("file://{}", dir.path().join("bucket").display());
    // vps-c's runtime refuses to start anything once the marker exists.
    let marker = dir.path().join("broken");
    let wrapper = dir.path().join("workerd-flaky");
    workerd_wrapper(
        &wrapper,
        &format!(
            "if [ \"$1\" = serve ] && [ -e '{}' ]; then echo 'injected: this node cannot start releases' >&2; exit 1; fi",
            marker.display()
        ),
    );
    let a = Node::start(node(&bucket, "vps-a", "eu", vec![])).await;
    let b = Node::start(node(&bucket, "vps-b", "eu", vec![])).await;
    let c = Node::start(node(
        &bucket,
        "vps-c",
        "us",
        vec![("SCAFO_CELLD_WORKERD".into(), wrapper.display().to_string())],
    ))
    .await;
    let key = a.state_dir.join("admin.jwk");
    let token = a.admin().token();
    let nodes = [&a, &b, &c];
    eventually("three alive nodes", Duration::from_secs(20), || async {
        let state = call(&a, "GET", "/v1/state", Some(&token), None).await.body;
        let alive = state["nodes"]
            .as_array()
            .map(|n| n.iter().filter(|n| n["alive"] == true).count());
        (alive == Some(3)).then_some(())
    })
    .await;
    let work = tempfile::tempdir().expect("work");
    project(&work.path().join("shop"), "shop");
    let first = deploy(&a, &key, &work.path().join("shop"), &[]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );

    std::fs::write(&marker, b"").expect("marker");
    std::fs::write(
        work.path().join("shop/index.js"),
        "export default { fetch() { return new Response('v2'); } };",
    )
    .expect("write");
    let second = deploy(&b, &key, &work.path().join("shop"), &[]);
    assert_eq!(second.status.code(), Some(1));
    let status: Value = serde_json::from_slice(&second.stdout).expect("final status");
    assert_eq!(
        (status["state"].as_str(), status["code"].as_str()),
        (Some("failed"), Some("celld-start"))
    );
    let detail = status["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("on node vps-c") && detail.contains("injected"),
        "{detail}"
    );
    // A node that ran v2 while it was pending drops it on its next pass
    // after `pending` is cleared; from then on every node serves v1.
    for node in nodes {
        eventually(
            &format!("the previous release on {}", node.id()),
            Duration::from_secs(10),
            || async {
                let url = served(node, &token)
                    .await
                    .into_iter()
                    .find(|(name, _)| name == "shop")
                    .map(|(_, url)| url)?;
                let body = reqwest::get(&url).await.ok()?.text().await.ok()?;
                (body == "shop").then_some(())
            },
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn through_traefik_a_killed_node_costs_at_most_its_in_flight_request() {
    use crate::ingress::{INGRESS, through, traefik};
    let dir = tempfile::tempdir().expect("dir");
    let bucket = format!("file://{}", dir.path().join("bucket").display());
    let with_token = |id: &str, region: &str| {
        let mut options = node(&bucket, id, region, vec![]);
        options
            .args
            .extend(["--ingress-token".to_owned(), INGRESS.to_owned()]);
        options
    };
    let a = Node::start(with_token("vps-a", "eu")).await;
    let b = Node::start(with_token("vps-b", "eu")).await;
    let mut c = Node::start(with_token("vps-c", "us")).await;
    let key = a.state_dir.join("admin.jwk");
    let token = a.admin().token();
    eventually("three alive nodes", Duration::from_secs(20), || async {
        let state = call(&a, "GET", "/v1/state", Some(&token), None).await.body;
        let alive = state["nodes"]
            .as_array()
            .map(|n| n.iter().filter(|n| n["alive"] == true).count());
        (alive == Some(3)).then_some(())
    })
    .await;
    let work = tempfile::tempdir().expect("work");
    project(&work.path().join("shop"), "shop");
    let done = deploy(&a, &key, &work.path().join("shop"), &[]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let proxy = traefik(&a.url);
    eventually(
        "three upstreams through traefik",
        Duration::from_secs(30),
        || async {
            let doc = call(&a, "GET", "/v1/ingress/routes", Some(INGRESS), None)
                .await
                .body;
            let upstreams = doc["routes"][0]["upstreams"].as_array().map(Vec::len);
            (upstreams == Some(3) && through(&proxy, "shop.localhost").await.0 == 200).then_some(())
        },
    )
    .await;

    // A client loop, one request at a time, while vps-c dies.
    let started = Instant::now();
    let mut failed = 0;
    let mut answered = 0;
    let mut killed = false;
    while started.elapsed() < Duration::from_secs(25) {
        if !killed && started.elapsed() > Duration::from_secs(2) {
            assert!(c.signal_and_wait(libc::SIGKILL).code().is_none());
            killed = true;
        }
        match through(&proxy, "shop.localhost").await {
            (200, _) => answered += 1,
            _ => failed += 1,
        }
    }
    eprintln!("through traefik across a SIGKILL: {answered} answered, {failed} failed");
    assert!(answered > 100, "{answered}");
    assert!(
        failed <= 1,
        "{failed} requests failed; only the one in flight may"
    );
    drop(b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_leaves_the_routing_documents_before_stopping_applications() {
    use crate::ingress::INGRESS;
    let dir = tempfile::tempdir().expect("dir");
    let bucket = format!("file://{}", dir.path().join("bucket").display());
    let with_token = |id: &str| {
        let mut options = node(&bucket, id, "eu", vec![]);
        options
            .args
            .extend(["--ingress-token".to_owned(), INGRESS.to_owned()]);
        options
    };
    let a = Node::start(with_token("vps-a")).await;
    let mut b = Node::start(with_token("vps-b")).await;
    let key = a.state_dir.join("admin.jwk");
    let token = a.admin().token();
    eventually("two alive nodes", Duration::from_secs(20), || async {
        let state = call(&a, "GET", "/v1/state", Some(&token), None).await.body;
        (state["nodes"]
            .as_array()
            .map(|n| n.iter().filter(|n| n["alive"] == true).count())
            == Some(2))
        .then_some(())
    })
    .await;
    let work = tempfile::tempdir().expect("work");
    project(&work.path().join("shop"), "shop");
    assert!(
        deploy(&a, &key, &work.path().join("shop"), &[])
            .status
            .success()
    );
    let upstreams = || async {
        let doc = call(&a, "GET", "/v1/ingress/routes", Some(INGRESS), None)
            .await
            .body;
        doc["routes"][0]["upstreams"]
            .as_array()
            .map(|u| {
                u.iter()
                    .filter_map(|u| u["node"].as_str().map(str::to_owned))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    eventually("both upstreams", Duration::from_secs(20), || async {
        (upstreams().await.len() == 2).then_some(())
    })
    .await;
    let b_url = served(&b, &token)
        .await
        .into_iter()
        .find(|(n, _)| n == "shop")
        .map(|(_, u)| u)
        .expect("b serves");

    // SIGTERM: b's upstream leaves a's document while b still answers.
    // SAFETY: kill(2) on this test's node.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(b.pid().expect("pid") as i32, libc::SIGTERM)
    };
    eventually(
        "b leaving the document",
        Duration::from_secs(10),
        || async { (upstreams().await == ["vps-a"]).then_some(()) },
    )
    .await;
    assert_eq!(
        reqwest::get(&b_url)
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0),
        200,
        "b still serves while it leaves"
    );
    assert!(b.wait_exit(Duration::from_secs(20)).success());
}
