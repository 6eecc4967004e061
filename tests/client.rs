//! The client commands as a user runs them: `scafo operators …` and
//! `scafo freeze …` against a real node, credential resolution, problem
//! rendering and exit codes, and an interrupted `operators rotate`.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::util::{Node, NodeOptions, TestKey, call, scafo};

/// Runs the CLI against `node` as a user with an empty home: `key` is the
/// key file (SCAFO_KEY), or the node's own bootstrap key when `None`.
fn cli(url: &str, home: &Path, key: Option<&Path>, state: Option<&Path>, args: &[&str]) -> Output {
    let mut command = scafo();
    command
        .args(args)
        .env("SCAFO_URL", url)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env(
            "SCAFO_STATE_DIR",
            state
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join("no-state")),
        );
    if let Some(key) = key {
        command.env("SCAFO_KEY", key);
    }
    command.output().expect("run scafo")
}

fn out(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn err(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test]
async fn operators_commands_from_keygen_to_removal() {
    let node = Node::start(NodeOptions::default()).await;
    let home = tempfile::tempdir().expect("home");
    let state = node.state_dir.clone();
    let as_admin = |args: &[&str]| cli(&node.url, home.path(), None, Some(&state), args);

    // The local node's bootstrap key is used when nothing else is configured.
    let whoami = as_admin(&["operators", "whoami"]);
    assert!(whoami.status.success(), "{}", err(&whoami));
    assert!(
        out(&whoami).starts_with("op-admin (admin) scope: *"),
        "{}",
        out(&whoami)
    );

    let keygen = cli(
        &node.url,
        home.path(),
        None,
        None,
        &["operators", "keygen", "--id", "op-bob"],
    );
    assert!(keygen.status.success(), "{}", err(&keygen));
    let public: Value = serde_json::from_slice(&keygen.stdout).expect("public JWK on stdout");
    assert_eq!(
        (public["kid"].as_str(), public.get("d")),
        (Some("op-bob"), None)
    );
    let key = home.path().join("config/scafo/keys/op-bob.jwk");
    assert!(key.exists(), "{}", err(&keygen));
    let public_file = home.path().join("bob.pub.jwk");
    std::fs::write(&public_file, &keygen.stdout).expect("write");

    let add = as_admin(&[
        "operators",
        "add",
        "--id",
        "op-bob",
        "--public-key",
        public_file.to_str().expect("utf8"),
        "--app",
        "shop",
        "--app",
        "shop-*",
    ]);
    assert!(add.status.success(), "{}", err(&add));
    assert_eq!(
        out(&add).trim(),
        "registered op-bob (operator; shop, shop-*)"
    );

    let list = as_admin(&["operators", "list"]);
    let table = out(&list);
    assert!(
        table.starts_with("ID") && table.contains("op-bob    operator  shop, shop-*"),
        "{table}"
    );
    let json_list = as_admin(&["--json", "operators", "list"]);
    let parsed: Value = serde_json::from_slice(&json_list.stdout).expect("json");
    assert_eq!(parsed["operators"].as_array().map(Vec::len), Some(2));

    let bob = |args: &[&str]| cli(&node.url, home.path(), Some(&key), None, args);
    assert!(
        out(&bob(&["operators", "whoami"])).starts_with("op-bob (operator) scope: shop, shop-*")
    );

    // A refusal renders the problem and exits 1.
    let refused = bob(&["operators", "remove", "op-admin", "--yes"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        err(&refused).starts_with("error[auth-scope]: Outside the caller's scope\n  "),
        "{}",
        err(&refused)
    );
    let refused_json = bob(&["--json", "operators", "remove", "op-admin", "--yes"]);
    let problem: Value = serde_json::from_slice(&refused_json.stderr).expect("problem on stderr");
    assert_eq!(problem["code"], "auth-scope");

    // Without a terminal, a destructive command needs --yes.
    let unconfirmed = as_admin(&["operators", "remove", "op-bob"]);
    assert_eq!(unconfirmed.status.code(), Some(2));
    assert!(
        err(&unconfirmed).contains("pass --yes"),
        "{}",
        err(&unconfirmed)
    );
    assert!(
        bob(&["operators", "whoami"]).status.success(),
        "nothing was removed"
    );
    let removed = as_admin(&["operators", "remove", "op-bob", "--yes"]);
    assert_eq!(out(&removed).trim(), "removed op-bob");
    let after = bob(&["operators", "whoami"]);
    assert_eq!(after.status.code(), Some(1));
    assert!(
        err(&after).starts_with("error[auth-invalid]"),
        "{}",
        err(&after)
    );
}

#[tokio::test]
async fn freeze_commands_and_their_refusals() {
    let node = Node::start(NodeOptions::default()).await;
    let home = tempfile::tempdir().expect("home");
    let state = node.state_dir.clone();
    let as_admin = |args: &[&str]| cli(&node.url, home.path(), None, Some(&state), args);
    assert_eq!(
        out(&as_admin(&["freeze", "status"])).trim(),
        "deploys are not frozen"
    );
    let frozen = as_admin(&["freeze", "--reason", "moving nodes"]);
    assert!(
        out(&frozen).starts_with("deploys are frozen fleet-wide (since "),
        "{}",
        err(&frozen)
    );
    assert!(
        out(&frozen)
            .trim_end()
            .ends_with("by op-admin: moving nodes)")
    );
    assert!(out(&as_admin(&["freeze"])).starts_with("deploys were already frozen"));
    let status: Value =
        serde_json::from_slice(&as_admin(&["--json", "freeze", "status"]).stdout).expect("json");
    assert_eq!(status["freeze"]["reason"], "moving nodes");

    let dir = tempfile::tempdir().expect("dir");
    let bob = TestKey::generate("op-bob");
    call(
        &node,
        "POST",
        "/v1/operators",
        Some(&node.admin().token()),
        Some(json!({"id": "op-bob", "publicKey": bob.public(), "applications": ["shop"]})),
    )
    .await
    .ok(201);
    let key = bob.write(dir.path());
    let as_bob = |args: &[&str]| cli(&node.url, home.path(), Some(&key), None, args);
    assert!(out(&as_bob(&["freeze", "status"])).starts_with("deploys are frozen since"));
    let refused = as_bob(&["freeze", "lift", "--yes"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        err(&refused).contains("error[auth-scope]")
            && err(&refused).contains("fleet makes about itself")
    );

    assert_eq!(
        as_admin(&["freeze", "lift"]).status.code(),
        Some(2),
        "lift asks first"
    );
    assert_eq!(
        out(&as_admin(&["freeze", "lift", "--yes"])).trim(),
        "lifted: nodes take deploys again"
    );
    assert_eq!(
        out(&as_admin(&["freeze", "lift", "--yes"])).trim(),
        "deploys were not frozen"
    );
}

#[tokio::test]
async fn credentials_and_unreachable_nodes() {
    let node = Node::start(NodeOptions::default()).await;
    let home = tempfile::tempdir().expect("home");
    // No credential anywhere: a usage error naming the ways to give one.
    let none = cli(&node.url, home.path(), None, None, &["operators", "list"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(err(&none).contains("SCAFO_KEY"), "{}", err(&none));
    // The client config file.
    let config = home.path().join("config/scafo");
    std::fs::create_dir_all(&config).expect("mkdir");
    let admin_key = node.state_dir.join("admin.jwk");
    std::fs::write(
        config.join("config.toml"),
        format!(
            "url = \"{}\"\nkey = \"{}\"\n",
            node.url,
            admin_key.display()
        ),
    )
    .expect("write");
    let mut command = scafo();
    command
        .args(["operators", "whoami"])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"));
    let from_file = command.output().expect("run");
    assert!(
        out(&from_file).starts_with("op-admin"),
        "{}",
        err(&from_file)
    );
    std::fs::write(
        config.join("config.toml"),
        "url = \"http://x\"\nkee = \"typo\"\n",
    )
    .expect("write");
    let typo = cli(&node.url, home.path(), None, None, &["operators", "list"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(err(&typo).contains("unknown field `kee`"), "{}", err(&typo));
    std::fs::remove_file(config.join("config.toml")).expect("rm");
    // A raw token is sent as it is.
    let token = node.admin().token();
    let with_token = cli(
        &node.url,
        home.path(),
        None,
        None,
        &["--token", &token, "operators", "whoami"],
    );
    assert!(
        out(&with_token).starts_with("op-admin"),
        "{}",
        err(&with_token)
    );
    // Nobody listening: exit 3.
    let closed = format!("http://127.0.0.1:{}", crate::util::free_port());
    let unreachable = cli(
        &closed,
        home.path(),
        Some(&admin_key),
        None,
        &["operators", "list"],
    );
    assert_eq!(unreachable.status.code(), Some(3));
    assert!(
        err(&unreachable).contains("cannot reach the node at"),
        "{}",
        err(&unreachable)
    );
    let bad_url = cli(
        "ftp://x",
        home.path(),
        Some(&admin_key),
        None,
        &["operators", "list"],
    );
    assert_eq!(bad_url.status.code(), Some(2));
}

/// Forwards every request to `upstream`, except that the first
/// `DELETE /v1/operators/…` kills the client process instead: the client
/// dies between the POST and the DELETE of its rotation.
async fn killing_proxy(upstream: String, victim: Arc<Mutex<Option<u32>>>) -> String {
    use axum::body::Body;
    use axum::extract::Request;
    use axum::response::Response;
    let handler = move |request: Request| {
        let (upstream, victim) = (upstream.clone(), Arc::clone(&victim));
        async move {
            let deleting =
                request.method() == "DELETE" && request.uri().path().starts_with("/v1/operators/");
            if deleting && let Some(pid) = victim.lock().expect("lock").take() {
                // SAFETY: kill(2) on the child this test spawned.
                #[allow(unsafe_code)]
                unsafe {
                    libc::kill(pid as i32, libc::SIGKILL)
                };
                return Response::builder()
                    .status(502)
                    .body(Body::empty())
                    .expect("response");
            }
            let method =
                reqwest::Method::from_bytes(request.method().as_str().as_bytes()).expect("method");
            let url = format!("{upstream}{}", request.uri());
            let mut forward = reqwest::Client::new().request(method, url);
            for (name, value) in request.headers() {
                if name != "host" {
                    forward = forward.header(name.as_str(), value.as_bytes());
                }
            }
            let body = axum::body::to_bytes(request.into_body(), 1 << 20)
                .await
                .expect("body");
            let answer = forward.body(body).send().await.expect("upstream");
            let mut response = Response::builder().status(answer.status().as_u16());
            for (name, value) in answer.headers() {
                response = response.header(name.as_str(), value.as_bytes());
            }
            response
                .body(Body::from(answer.bytes().await.expect("bytes")))
                .expect("response")
        }
    };
    let app = axum::Router::new().fallback(handler);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_rotation_completes_when_run_again() {
    let node = Node::start(NodeOptions::default()).await;
    let admin = node.admin();
    let home = tempfile::tempdir().expect("home");
    let carol = TestKey::generate("op-carol");
    call(
        &node,
        "POST",
        "/v1/operators",
        Some(&admin.token()),
        Some(json!({"id": "op-carol", "publicKey": carol.public(), "applications": ["blog-*"]})),
    )
    .await
    .ok(201);
    let key = carol.write(home.path());

    let victim = Arc::new(Mutex::new(None));
    let proxy = killing_proxy(node.url.clone(), Arc::clone(&victim)).await;
    let mut command = scafo();
    command
        .args(["operators", "rotate"])
        .env("SCAFO_URL", &proxy)
        .env("SCAFO_KEY", &key)
        .env("HOME", home.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = command.spawn().expect("spawn rotate");
    *victim.lock().expect("lock") = Some(child.id());
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .expect("join")
        .expect("wait");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL),
        "killed mid-rotation"
    );

    // Interrupted between the POST and the DELETE: both keys registered, the
    // new one waiting beside the key file, which still holds the old key.
    let ids = |body: &Value| {
        body["operators"]
            .as_array()
            .expect("list")
            .iter()
            .map(|o| o["id"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    let listed = call(&node, "GET", "/v1/operators", Some(&admin.token()), None).await;
    assert_eq!(ids(listed.ok(200)), ["op-admin", "op-carol", "op-carol-r1"]);
    let next = PathBuf::from(format!("{}.next", key.display()));
    assert!(next.exists());
    assert_eq!(TestKey::read(&key).kid, "op-carol");

    // Run again, straight to the node: it completes.
    let again = cli(
        &node.url,
        home.path(),
        Some(&key),
        None,
        &["operators", "rotate"],
    );
    assert!(again.status.success(), "{}", err(&again));
    assert!(err(&again).contains("resuming"), "{}", err(&again));
    let listed = call(&node, "GET", "/v1/operators", Some(&admin.token()), None).await;
    assert_eq!(ids(listed.ok(200)), ["op-admin", "op-carol-r1"]);
    assert_eq!(listed.body["operators"][1]["supersedes"], "op-carol");
    assert_eq!(
        listed.body["operators"][1]["applications"],
        json!(["blog-*"])
    );
    assert!(!next.exists());
    let rotated = TestKey::read(&key);
    assert_eq!(rotated.kid, "op-carol-r1");
    call(&node, "GET", "/v1/operators", Some(&rotated.token()), None)
        .await
        .ok(200);
    call(&node, "GET", "/v1/operators", Some(&carol.token()), None)
        .await
        .problem(401, "auth-invalid");

    // A clean rotation in one go, and again: ids count up.
    let third = cli(
        &node.url,
        home.path(),
        Some(&key),
        None,
        &["operators", "rotate"],
    );
    assert!(
        out(&third).starts_with("rotated op-carol-r1 → op-carol-r2"),
        "{}",
        err(&third)
    );
}

#[tokio::test]
async fn apps_commands() {
    let node = Node::start(NodeOptions::default()).await;
    let home = tempfile::tempdir().expect("home");
    let state = node.state_dir.clone();
    let store =
        scafo::store::file::FileStore::open(&node.scratch.path().join("bucket")).expect("open");
    let registry = scafo::registry::Registry::new(Arc::new(store));
    let name = scafo::names::AppName::parse("shop").expect("name");
    registry
        .create(
            &scafo::registry::keys::application(&name),
            &scafo::registry::ApplicationRecord::new(name.clone()),
        )
        .await
        .expect("seed");
    let apps = |args: &[&str]| {
        let mut all = vec!["apps"];
        all.extend_from_slice(args);
        cli(&node.url, home.path(), None, Some(&state), &all)
    };
    let ok = |output: Output| {
        assert!(output.status.success(), "{}", err(&output));
        out(&output)
    };
    assert!(
        ok(apps(&[
            "domains",
            "add",
            "shop",
            "shop.example",
            "--wildcard"
        ]))
        .contains("platform hosts: shop.localhost")
    );
    ok(apps(&["selector", "shop", "region=eu"]));
    ok(apps(&["replicas", "shop", "2"]));
    ok(apps(&["labels", "shop", "plan=pro"]));
    ok(apps(&[
        "trust",
        "shop",
        "--issuer",
        "https://token.actions.githubusercontent.com",
        "--subject",
        "repo:acme/shop:*",
    ]));
    let listed = ok(apps(&["list"]));
    assert!(
        listed.starts_with("NAME")
            && listed.contains("shop  -     2         region=eu  shop.example (+*)  -"),
        "{listed}"
    );
    let shown = ok(apps(&["show", "shop"]));
    assert!(
        shown.contains("labels     plan=pro")
            && shown.contains(
                "trust      https://token.actions.githubusercontent.com repo:acme/shop:*"
            ),
        "{shown}"
    );
    assert_eq!(
        apps(&["block", "shop"]).status.code(),
        Some(2),
        "block asks first"
    );
    assert!(ok(apps(&["block", "shop", "--yes"])).contains("blocked"));
    ok(apps(&["unblock", "shop"]));
    let refused = apps(&["delete", "shop", "--yes"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        err(&refused).starts_with("error[retirement-required]"),
        "{}",
        err(&refused)
    );
    ok(apps(&["retire", "shop"]));
    assert!(ok(apps(&["show", "shop"])).contains("retired (until"));
    ok(apps(&["unretire", "shop"]));
    assert_eq!(
        ok(apps(&["delete", "shop", "--force", "--yes"])).trim(),
        "deleted shop"
    );
    assert_eq!(apps(&["show", "shop"]).status.code(), Some(1));
    let json: Value = serde_json::from_slice(&apps(&["--json", "list"]).stdout).expect("json");
    assert_eq!(json, json!({"applications": [], "scoped": false}));
}
