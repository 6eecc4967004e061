//! The routing document and its Traefik rendering, against a real Traefik
//! polling a real node: platform hosts, custom domains, `<env>.<host>` under a
//! wildcard, block and unblock, and a node restart that never drops routes.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{Node, NodeOptions, call, eventually, free_port, peer, scafo};

pub(crate) const INGRESS: &str = "test-ingress-token-0123456789";

fn project(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(
        dir.join("wrangler.json"),
        format!(r#"{{"name": "{name}", "main": "index.js"}}"#),
    )
    .expect("write");
    std::fs::write(
        dir.join("index.js"),
        format!("export default {{ fetch() {{ return new Response('{text}'); }} }};"),
    )
    .expect("write");
}

fn deploy(node: &Node, dir: &std::path::Path) {
    let output = scafo()
        .arg("deploy")
        .arg(dir)
        .env("SCAFO_URL", &node.url)
        .env("SCAFO_KEY", node.state_dir.join("admin.jwk"))
        .output()
        .expect("deploy");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

pub(crate) struct Traefik {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Traefik {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn traefik(node_url: &str) -> Traefik {
    let dir = tempfile::tempdir().expect("dir");
    let port = free_port();
    let config = dir.path().join("traefik.toml");
    std::fs::write(
        &config,
        format!(
            "[entryPoints.web]\naddress = \"127.0.0.1:{port}\"\n\n[providers.http]\nendpoint = \"{node_url}/v1/ingress/routes/traefik?prefer=self\"\npollInterval = \"1s\"\npollTimeout = \"1s\"\n\n[providers.http.headers]\nAuthorization = \"Bearer {INGRESS}\"\n\n[log]\nlevel = \"ERROR\"\n"
        ),
    )
    .expect("write");
    let child = Command::new(peer("traefik"))
        .arg(format!("--configFile={}", config.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn traefik");
    Traefik {
        child,
        port,
        _dir: dir,
    }
}

/// One request through Traefik: (status, body).
pub(crate) async fn through(traefik: &Traefik, host: &str) -> (u16, String) {
    let sent = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{}/", traefik.port))
        .header("host", host)
        .timeout(Duration::from_secs(5))
        .send()
        .await;
    match sent {
        Ok(response) => (
            response.status().as_u16(),
            response.text().await.unwrap_or_default(),
        ),
        Err(_) => (0, String::new()),
    }
}

async fn until(traefik: &Traefik, host: &str, want: (u16, &str)) -> Duration {
    let started = Instant::now();
    eventually(
        &format!("{host} answering {want:?} through traefik"),
        Duration::from_secs(30),
        || async {
            let got = through(traefik, host).await;
            (got.0 == want.0 && (want.1.is_empty() || got.1 == want.1)).then_some(())
        },
    )
    .await;
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn traefik_routes_platform_hosts_domains_and_environments() {
    let listen = format!("127.0.0.1:{}", free_port());
    let options = NodeOptions {
        listen: Some(listen.clone()),
        args: vec![
            "--ingress-token".into(),
            INGRESS.into(),
            "--api-host".into(),
            "api.fleet.example".into(),
        ],
        ..Default::default()
    };
    let mut node = Node::start(options.clone()).await;
    let token = node.admin().token();
    let work = tempfile::tempdir().expect("work");
    project(&work.path().join("shop"), "shop", "shop live");
    project(&work.path().join("staging"), "shop-staging", "staging live");
    deploy(&node, &work.path().join("shop"));
    call(
        &node,
        "POST",
        "/v1/applications/shop/domains/shop.example?wildcard=1",
        Some(&token),
        None,
    )
    .await
    .ok(200);
    deploy(&node, &work.path().join("staging"));

    // The document itself.
    let routes = eventually("both routes", Duration::from_secs(20), || async {
        let doc = call(&node, "GET", "/v1/ingress/routes", Some(INGRESS), None)
            .await
            .body;
        (doc["routes"].as_array().map(Vec::len) == Some(2)).then_some(doc)
    })
    .await;
    assert_eq!(
        routes["routes"][0]["hosts"],
        json!(["shop.example", "shop.localhost"])
    );
    assert_eq!(
        routes["routes"][1]["hosts"],
        json!(["shop-staging.localhost", "staging.shop.example"])
    );
    assert_eq!(
        routes["routes"][1]["tls"],
        json!([{"host": "staging.shop.example", "wildcardOf": "shop.example"}])
    );
    assert_eq!(routes["api"]["hosts"], json!(["api.fleet.example"]));
    assert_eq!(
        routes["api"]["upstreams"][0]["url"],
        format!("http://{listen}")
    );
    call(&node, "GET", "/v1/ingress/routes", Some(&token), None)
        .await
        .problem(401, "auth-invalid");
    call(&node, "GET", "/v1/state", Some(INGRESS), None)
        .await
        .problem(401, "auth-invalid");
    let unknown = call(
        &node,
        "GET",
        "/v1/ingress/routes/nginx",
        Some(INGRESS),
        None,
    )
    .await;
    unknown.problem(404, "not-found");
    assert!(
        unknown.body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("traefik")
    );

    let proxy = traefik(&node.url);
    until(&proxy, "shop.localhost", (200, "shop live")).await;
    assert_eq!(
        through(&proxy, "shop.example").await,
        (200, "shop live".into())
    );
    assert_eq!(
        through(&proxy, "staging.shop.example").await,
        (200, "staging live".into())
    );
    assert_eq!(
        through(&proxy, "shop-staging.localhost").await,
        (200, "staging live".into())
    );
    assert_eq!(through(&proxy, "other.example").await.0, 404);
    assert_eq!(
        through(&proxy, "api.fleet.example").await.0,
        404,
        "the API answers / with a problem document"
    );

    // Block: gone through Traefik within a few polls; unblock: back.
    call(
        &node,
        "POST",
        "/v1/applications/shop/block",
        Some(&token),
        None,
    )
    .await
    .ok(200);
    let gone = until(&proxy, "shop.localhost", (404, "")).await;
    eprintln!("block -> 404 through traefik after {gone:?} (poll interval 1 s)");
    assert!(gone < Duration::from_secs(10));
    assert_eq!(
        through(&proxy, "staging.shop.example").await.0,
        200,
        "only the blocked application left"
    );
    call(
        &node,
        "POST",
        "/v1/applications/shop/unblock",
        Some(&token),
        None,
    )
    .await
    .ok(200);
    until(&proxy, "shop.localhost", (200, "shop live")).await;

    // A restart: while the node is away or draining, Traefik keeps its
    // routes — no request finds the router gone (404).
    assert!(node.signal_and_wait(libc::SIGTERM).success());
    let mut seen = Vec::new();
    for _ in 0..10 {
        seen.push(through(&proxy, "shop.localhost").await.0);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let restarted = Node::start(NodeOptions {
        state_dir: Some(node.state_dir.clone()),
        bucket: Some(node.file_bucket()),
        ..options
    })
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = through(&proxy, "shop.localhost").await;
        seen.push(status);
        if status == 200 && body == "shop live" {
            break;
        }
        assert!(Instant::now() < deadline, "never served again: {seen:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        !seen.contains(&404),
        "traefik dropped its routes during the restart: {seen:?}"
    );
    drop(restarted);
}

#[tokio::test]
async fn the_rendering_names_entry_points_resolvers_and_wildcards() {
    let node = Node::start(NodeOptions {
        args: vec!["--ingress-token".into(), INGRESS.into()],
        env: vec![
            (
                "SCAFO_INGRESS_TRAEFIK_ENTRYPOINTS".into(),
                "websecure".into(),
            ),
            ("SCAFO_INGRESS_TRAEFIK_CERTRESOLVER".into(), "le".into()),
        ],
        ..Default::default()
    })
    .await;
    let token = node.admin().token();
    let work = tempfile::tempdir().expect("work");
    project(&work.path().join("shop"), "shop", "x");
    project(&work.path().join("eu"), "shop-eu", "y");
    deploy(&node, &work.path().join("shop"));
    call(
        &node,
        "POST",
        "/v1/applications/shop/domains/shop.example?wildcard=1",
        Some(&token),
        None,
    )
    .await
    .ok(200);
    deploy(&node, &work.path().join("eu"));
    let rendered: Value = eventually("the rendering", Duration::from_secs(20), || async {
        let doc = call(
            &node,
            "GET",
            "/v1/ingress/routes/traefik?prefer=self",
            Some(INGRESS),
            None,
        )
        .await
        .body;
        (doc["http"]["routers"].as_object().map(|r| r.len()) == Some(2)).then_some(doc)
    })
    .await;
    let router = &rendered["http"]["routers"]["app-shop-eu"];
    assert_eq!(
        router["rule"],
        "Host(`eu.shop.example`) || Host(`shop-eu.localhost`)"
    );
    assert_eq!(router["entryPoints"], json!(["websecure"]));
    assert_eq!(
        router["tls"],
        json!({"certResolver": "le", "domains": [{"main": "shop.example", "sans": ["*.shop.example"]}]})
    );
    let service = &rendered["http"]["services"]["app-shop"]["loadBalancer"];
    assert_eq!(service["healthCheck"]["path"], "/.well-known/celld/health");
    assert!(
        service["servers"][0]["url"]
            .as_str()
            .unwrap_or_default()
            .starts_with("http://127.0.0.1:")
    );
}

struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn caddy_gets_certificates_only_for_routed_names() {
    let mut node = Node::start(NodeOptions {
        args: vec![
            "--ingress-token".into(),
            INGRESS.into(),
            "--api-host".into(),
            "api.fleet.example".into(),
        ],
        ..Default::default()
    })
    .await;
    let work = tempfile::tempdir().expect("work");
    project(&work.path().join("shop"), "shop", "shop live");
    deploy(&node, &work.path().join("shop"));

    // scafo ingress caddy-permission, beside Caddy.
    let token_file = work.path().join("ingress-token");
    std::fs::write(&token_file, INGRESS).expect("write");
    std::fs::set_permissions(
        &token_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .expect("chmod");
    let permission_port = free_port();
    let permission = Reaped(
        scafo()
            .args([
                "ingress",
                "caddy-permission",
                "--fleet",
                &node.url,
                "--ingress-token-file",
            ])
            .arg(&token_file)
            .args([
                "--listen",
                &format!("127.0.0.1:{permission_port}"),
                "--interval-ms",
                "200",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn caddy-permission"),
    );
    let ask = |domain: &'static str| async move {
        reqwest::get(format!(
            "http://127.0.0.1:{permission_port}/check?domain={domain}"
        ))
        .await
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
    };
    eventually(
        "the permission service",
        Duration::from_secs(20),
        || async { (ask("shop.localhost").await == 200).then_some(()) },
    )
    .await;
    assert_eq!(ask("api.fleet.example").await, 200);
    assert_eq!(ask("nope.example").await, 403);

    let caddy_dir = tempfile::tempdir().expect("caddy");
    let (admin, http, https) = (free_port(), free_port(), free_port());
    let caddyfile = caddy_dir.path().join("Caddyfile");
    std::fs::write(
        &caddyfile,
        format!(
            "{{\n\tadmin 127.0.0.1:{admin}\n\tlocal_certs\n\tskip_install_trust\n\tstorage file_system {}\n\tdefault_bind 127.0.0.1\n\thttp_port {http}\n\thttps_port {https}\n\ton_demand_tls {{\n\t\tpermission http http://127.0.0.1:{permission_port}/check\n\t}}\n}}\n\nhttps:// {{\n\ttls {{\n\t\ton_demand\n\t}}\n\trespond \"ok {{host}}\"\n}}\n",
            caddy_dir.path().join("data").display()
        ),
    )
    .expect("write");
    let _caddy = Reaped(
        Command::new(peer("caddy"))
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(&caddyfile)
            .env("HOME", caddy_dir.path())
            .env("XDG_DATA_HOME", caddy_dir.path().join("xdg-data"))
            .env("XDG_CONFIG_HOME", caddy_dir.path().join("xdg-config"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn caddy"),
    );
    let over_tls = |host: &'static str| async move {
        let client = reqwest::Client::builder()
            .danger_accept_invalid_certs(true)
            .resolve(host, std::net::SocketAddr::from(([127, 0, 0, 1], https)))
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client");
        match client.get(format!("https://{host}:{https}/")).send().await {
            Ok(response) => Ok((
                response.status().as_u16(),
                response.text().await.unwrap_or_default(),
            )),
            Err(e) => Err(format!("{e:?}")),
        }
    };
    let routed = eventually(
        "a TLS handshake for shop.localhost",
        Duration::from_secs(30),
        || async { over_tls("shop.localhost").await.ok() },
    )
    .await;
    assert_eq!(routed, (200, "ok shop.localhost".into()));
    let unrouted = over_tls("unrouted.example").await;
    assert!(
        unrouted.is_err(),
        "no certificate for a name no fleet routes: {unrouted:?}"
    );
    // The fleet goes away: the last good document still answers.
    assert!(node.signal_and_wait(libc::SIGTERM).success());
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert_eq!(
            ask("shop.localhost").await,
            200,
            "the last good document is kept through errors"
        );
    }
    assert_eq!(ask("nope.example").await, 403);
    drop(permission);
}
