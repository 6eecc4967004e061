//! Workload OIDC tokens against a local issuer (discovery and JWKS over HTTP
//! on 127.0.0.1, RSA and EC keys, rotation, an outage): deploys under a
//! trust policy, every way a token fails, the key cache (no network call per
//! request, refetch on an unknown kid at most once a minute, cached keys
//! through an outage), and `scafo deploy --oidc` as a GitHub Actions job.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use crate::deploys::{CONFIG, FILE, app_url, archive, fetch, fixture, meta, post_deploy};
use crate::util::oidc::{GITHUB_SUBJECT, Issuer, REQUEST_TOKEN, issuer_env, issuers_env};
use crate::util::{Answer, Node, NodeOptions, call, eventually, scafo};

const MAIN: &str = "repo:acme/shop:ref:refs/heads/main";

fn project() -> Vec<u8> {
    archive(&[
        ("wrangler.jsonc", FILE, CONFIG, None),
        (
            "index.js",
            FILE,
            b"export default { fetch() { return new Response('shop'); } };\n",
            None,
        ),
    ])
}

async fn deploy(node: &Node, token: &str, app: &str) -> Answer {
    post_deploy(
        node,
        Some(token),
        app,
        Some(&meta(json!({}))),
        "application/octet-stream",
        project(),
    )
    .await
}

/// Every refusal of a token that does not hold up is the same 401.
fn assert_invalid(answer: &Answer, what: &str) {
    assert_eq!(answer.status, 401, "{what}: {}", answer.body);
    answer.problem(401, "auth-invalid");
    assert_eq!(
        answer.body["detail"],
        "a bearer token signed by a key registered in this fleet is required",
        "{what}"
    );
    assert_eq!(
        answer
            .headers
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer"),
        "{what}"
    );
}

/// A token's signing input signed with HMAC-SHA256 under `secret`.
fn hs256(token_claims: &Value, secret: &[u8]) -> String {
    let header =
        URL_SAFE_NO_PAD.encode(json!({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}).to_string());
    let claims = URL_SAFE_NO_PAD.encode(token_claims.to_string());
    let input = format!("{header}.{claims}");
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, secret);
    let tag = aws_lc_rs::hmac::sign(&key, input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(tag.as_ref()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workload_tokens_deploy_under_the_trust_policy_only() {
    let issuer = Issuer::start();
    let other = Issuer::start();
    let unlisted = Issuer::start();
    let node = Node::start(NodeOptions {
        env: issuers_env(&[&issuer, &other]),
        ..NodeOptions::default()
    })
    .await;
    let admin = node.admin();
    let main = issuer.token("rsa-1", MAIN, json!({}));

    // A workload token never creates an application, and learns nothing of
    // whether one exists.
    let refused = deploy(&node, &main, "shop").await;
    refused.problem(403, "trust-mismatch");
    let detail = refused.body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(issuer.url()) && detail.contains(MAIN),
        "{detail}"
    );
    call(
        &node,
        "GET",
        "/v1/applications/shop",
        Some(&admin.token()),
        None,
    )
    .await
    .problem(404, "not-found");

    // An operator creates it and trusts the main branch and any environment.
    deploy(&node, &admin.token(), "shop").await.ok(202);
    call(
        &node,
        "POST",
        "/v1/applications/shop/trust",
        Some(&admin.token()),
        Some(json!({"trust": [
            {"issuer": issuer.url(), "subject": MAIN},
            {"issuer": issuer.url(), "subject": "repo:acme/shop:environment:*"},
        ]})),
    )
    .await
    .ok(200);
    assert_eq!(
        issuer.hits(),
        (1, 1),
        "one discovery and one key-set fetch so far"
    );

    // RS256 on the exact subject; ES256 on the glob; a token without a kid
    // (the keys of its algorithm are tried).
    let accepted = deploy(&node, &main, "shop").await;
    let record = accepted.ok(202)["deploy"].clone();
    assert_eq!(record["caller"], format!("oidc:{}#{MAIN}", issuer.url()));
    let id = record["id"].as_str().expect("id").to_owned();
    let status = call(
        &node,
        "GET",
        &format!("/v1/deploys/{id}"),
        Some(&main),
        None,
    )
    .await;
    assert_eq!(status.ok(200)["caller"], record["caller"]);
    let prod = issuer.token("ec-1", "repo:acme/shop:environment:prod", json!({}));
    deploy(&node, &prod, "shop").await.ok(202);

    let no_kid = issuer.sign_as(
        "rsa-1",
        json!({"alg": "RS256", "typ": "JWT"}),
        issuer.claims(MAIN, json!({})),
    );
    deploy(&node, &no_kid, "shop").await.ok(202);

    // Verified with warm keys: no request to the issuer per call.
    for _ in 0..40 {
        call(
            &node,
            "GET",
            &format!("/v1/deploys/{id}"),
            Some(&main),
            None,
        )
        .await
        .ok(200);
    }
    assert_eq!(
        issuer.hits(),
        (1, 1),
        "warm keys: no network call per request"
    );

    // Trust mismatches name what the token presented, never the policy.
    for subject in [
        "repo:acme/shop:ref:refs/heads/dev",
        "repo:acme/shop:environment",
        "repo:acme/shopping:environment:prod",
    ] {
        let token = issuer.token("rsa-1", subject, json!({}));
        let answer = deploy(&node, &token, "shop").await;
        answer.problem(403, "trust-mismatch");
        let detail = answer.body["detail"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            detail.contains(subject) && detail.contains(issuer.url()),
            "{detail}"
        );
        assert!(
            !detail.contains("environment:*"),
            "the policy leaked: {detail}"
        );
        call(
            &node,
            "GET",
            &format!("/v1/deploys/{id}"),
            Some(&token),
            None,
        )
        .await
        .problem(403, "trust-mismatch");
    }
    // Another listed issuer, the same subject: the policy names the issuer too.
    let elsewhere = other.token("ec-1", MAIN, json!({}));
    let answer = deploy(&node, &elsewhere, "shop").await;
    answer.problem(403, "trust-mismatch");
    assert!(
        answer.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains(other.url())),
        "{}",
        answer.body
    );
    // A trusted workload reaches no other application, existing or not.
    let blog = deploy(&node, &admin.token(), "blog").await;
    let blog_id = blog.ok(202)["deploy"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    deploy(&node, &main, "blog")
        .await
        .problem(403, "trust-mismatch");
    call(
        &node,
        "GET",
        &format!("/v1/deploys/{blog_id}"),
        Some(&main),
        None,
    )
    .await
    .problem(403, "trust-mismatch");

    // Tokens that do not hold up: all the same 401.
    let forged_issuer = unlisted.sign(
        "rsa-1",
        json!({"iss": issuer.url(), "sub": MAIN, "aud": "scafo", "exp": scafo::auth::token::now() + 300}),
    );
    let mut tampered = main.clone();
    let last = tampered.pop().expect("char");
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    let now = scafo::auth::token::now();
    let unsigned = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(json!({"alg": "none", "typ": "JWT"}).to_string()),
        URL_SAFE_NO_PAD.encode(issuer.claims(MAIN, json!({})).to_string())
    );
    let cases: Vec<(&str, String)> = vec![
        ("unlisted issuer", unlisted.token("rsa-1", MAIN, json!({}))),
        ("listed issuer, another issuer's key", forged_issuer),
        ("bad signature", tampered),
        (
            "expired",
            issuer.token(
                "rsa-1",
                MAIN,
                json!({"iat": now - 4000, "nbf": now - 4000, "exp": now - 3600}),
            ),
        ),
        (
            "not yet valid",
            issuer.token("rsa-1", MAIN, json!({"nbf": now + 3600, "exp": now + 4000})),
        ),
        (
            "wrong audience",
            issuer.token("rsa-1", MAIN, json!({"aud": "not-scafo"})),
        ),
        ("no exp", issuer.token("ec-1", MAIN, json!({"exp": null}))),
        ("no sub", issuer.token("ec-1", MAIN, json!({"sub": null}))),
        ("alg none", unsigned),
        (
            "HS256 with the JWKS as secret",
            hs256(
                &issuer.claims(MAIN, json!({})),
                issuer.jwks_text().as_bytes(),
            ),
        ),
        (
            "unknown kid (refetched once, then within the refetch window)",
            issuer.sign_as(
                "rsa-1",
                json!({"alg": "RS256", "typ": "JWT", "kid": "nope"}),
                issuer.claims(MAIN, json!({})),
            ),
        ),
        (
            "ES256 header naming the RSA key",
            issuer.sign_as(
                "rsa-1",
                json!({"alg": "ES256", "typ": "JWT", "kid": "rsa-1"}),
                issuer.claims(MAIN, json!({})),
            ),
        ),
        (
            "control characters in the subject",
            issuer.token("rsa-1", "repo:acme/shop:\u{1b}[2J", json!({})),
        ),
    ];
    for (what, token) in &cases {
        assert_invalid(&deploy(&node, token, "shop").await, what);
        assert_invalid(
            &call(
                &node,
                "GET",
                &format!("/v1/deploys/{id}"),
                Some(token),
                None,
            )
            .await,
            what,
        );
    }
    assert_eq!(
        unlisted.hits(),
        (0, 0),
        "an unlisted issuer is never contacted"
    );
    // The unknown kid refetched the keys once; the second request with it
    // (within a minute) did not.
    assert_eq!(issuer.hits(), (2, 2), "one refetch for the unknown kid");

    // A workload token anywhere but the deploy routes: auth-scope.
    for (method, path, body) in [
        ("GET", "/v1/state", None),
        ("GET", "/v1/applications", None),
        ("GET", "/v1/applications/shop", None),
        (
            "POST",
            "/v1/applications/shop/trust",
            Some(json!({"trust": []})),
        ),
        ("POST", "/v1/applications/shop/retire", None),
        ("POST", "/v1/applications/shop/domains/shop.example", None),
        ("GET", "/v1/operators", None),
        ("GET", "/v1/fleet/freeze", None),
    ] {
        call(&node, method, path, Some(&main), body)
            .await
            .problem(403, "auth-scope");
    }
    // ...and a token that does not verify is still auth-invalid there.
    assert_invalid(
        &call(&node, "GET", "/v1/applications", Some(&cases[0].1), None).await,
        "unlisted issuer on an operator route",
    );

    // Workload deploys carry the freeze and the block like any other.
    call(
        &node,
        "POST",
        "/v1/fleet/freeze",
        Some(&admin.token()),
        None,
    )
    .await
    .ok(201);
    deploy(&node, &main, "shop")
        .await
        .problem(409, "deploys-frozen");
    call(
        &node,
        "DELETE",
        "/v1/fleet/freeze",
        Some(&admin.token()),
        None,
    )
    .await
    .ok(200);
    call(
        &node,
        "POST",
        "/v1/applications/shop/block",
        Some(&admin.token()),
        None,
    )
    .await
    .ok(200);
    deploy(&node, &main, "shop")
        .await
        .problem(409, "application-blocked");
}

/// A node (with `env`) holding application shop, deployed by the admin and
/// trusting `issuer`'s [`MAIN`]; answers the node and that deploy's path.
async fn trusted_shop(issuer: &Issuer, env: Vec<(String, String)>) -> (Node, String) {
    let node = Node::start(NodeOptions {
        env,
        ..NodeOptions::default()
    })
    .await;
    let admin = node.admin();
    let id = deploy(&node, &admin.token(), "shop").await.ok(202)["deploy"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    call(
        &node,
        "POST",
        "/v1/applications/shop/trust",
        Some(&admin.token()),
        Some(json!({"trust": [{"issuer": issuer.url(), "subject": MAIN}]})),
    )
    .await
    .ok(200);
    let path = format!("/v1/deploys/{id}");
    (node, path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotation_and_an_issuer_outage() {
    let issuer = Issuer::start();
    let (node, path) = trusted_shop(&issuer, issuer_env(&issuer)).await;

    // Twenty requests at once on a cold cache: one fetch between them.
    let first = issuer.token("rsa-1", MAIN, json!({}));
    let answers = futures_util::future::join_all(
        (0..20).map(|_| call(&node, "GET", &path, Some(&first), None)),
    )
    .await;
    assert!(answers.iter().all(|a| a.status == 200));
    assert_eq!(issuer.hits(), (1, 1), "concurrent cold requests fetch once");

    // The issuer rotates: a token under the new kid refetches, then verifies.
    issuer.rotate("rsa-2");
    let rotated = issuer.token("rsa-2", MAIN, json!({}));
    call(&node, "GET", &path, Some(&rotated), None)
        .await
        .ok(200);
    assert_eq!(issuer.hits(), (2, 2), "the unknown kid refetched once");
    call(&node, "GET", &path, Some(&rotated), None)
        .await
        .ok(200);
    assert_eq!(issuer.hits(), (2, 2));
    // The retired key is no longer published, so no longer accepted.
    assert_invalid(
        &call(
            &node,
            "GET",
            &path,
            Some(&issuer.token("rsa-1", MAIN, json!({}))),
            None,
        )
        .await,
        "a key the issuer no longer publishes",
    );

    // The issuer goes down: the keys held keep working.
    issuer.set_down(true);
    for _ in 0..5 {
        call(&node, "GET", &path, Some(&rotated), None)
            .await
            .ok(200);
    }
    // A second node, on the same bucket, holds no keys: auth-invalid, not 500.
    let second = Node::start(NodeOptions {
        id: Some("node-b".into()),
        bucket: Some(node.file_bucket()),
        env: issuer_env(&issuer),
        ..NodeOptions::default()
    })
    .await;
    let before = issuer.hits();
    assert_invalid(
        &call(&second, "GET", &path, Some(&rotated), None).await,
        "no keys and the issuer down",
    );
    assert_invalid(
        &call(&second, "GET", &path, Some(&rotated), None).await,
        "no keys and the issuer down, again",
    );
    assert_eq!(
        issuer.hits().0 - before.0,
        1,
        "a failed fetch is not retried on every request"
    );
    // Back up: the second node verifies once its retry interval passed.
    issuer.set_down(false);
    eventually(
        "the second node verifying after the outage",
        Duration::from_secs(20),
        || {
            let (second, path, rotated) = (&second, &path, &rotated);
            async move {
                let answer = call(second, "GET", path, Some(rotated), None).await;
                (answer.status == 200).then_some(())
            }
        },
    )
    .await;
    assert!(
        !node.log().contains(&rotated[..40]),
        "a token reached the log"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scafo_deploy_oidc_as_a_github_actions_job() {
    let issuer = Issuer::start();
    let node = Node::start(NodeOptions {
        env: issuer_env(&issuer),
        ..NodeOptions::default()
    })
    .await;
    let admin = node.admin();
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path(), "v1");
    // The operator's first deploy creates the application; then the trust.
    let first = crate::deploys::deploy_cli(&node, dir.path(), &["--var", "WHO:ops"]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let trust = scafo()
        .args([
            "apps",
            "trust",
            "hello",
            "--issuer",
            issuer.url(),
            "--subject",
            "repo:acme/shop:*",
        ])
        .env("SCAFO_URL", &node.url)
        .env("SCAFO_KEY", node.state_dir.join("admin.jwk"))
        .output()
        .expect("scafo apps trust");
    assert!(
        trust.status.success(),
        "{}",
        String::from_utf8_lossy(&trust.stderr)
    );

    fixture(dir.path(), "v2");
    let job = |extra: &[&str], env: &[(&str, String)]| {
        let mut command = scafo();
        command
            .arg("deploy")
            .arg(dir.path())
            .args(["--oidc", "--var", "WHO:ci"])
            .args(extra)
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("SCAFO_STATE_DIR", dir.path().join("no-state"))
            .env("SCAFO_URL", &node.url)
            .env_remove("SCAFO_KEY")
            .env_remove("SCAFO_TOKEN")
            .env_remove("ACTIONS_ID_TOKEN_REQUEST_URL")
            .env_remove("ACTIONS_ID_TOKEN_REQUEST_TOKEN");
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().expect("scafo deploy --oidc")
    };
    let github = [
        (
            "ACTIONS_ID_TOKEN_REQUEST_URL",
            format!("{}/github-token?api-version=2.0", issuer.url()),
        ),
        ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", REQUEST_TOKEN.to_owned()),
    ];

    // Outside a job granted id-token: write: a usage error saying so.
    let outside = job(&[], &[]);
    assert_eq!(outside.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&outside.stderr);
    assert!(stderr.contains("id-token: write"), "{stderr}");
    assert_eq!(issuer.github_hits(), 0);

    // --oidc is the credential: another one beside it is a usage error.
    let both = job(&["--token", "op-token"], &github);
    assert_eq!(both.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&both.stderr);
    assert!(stderr.contains("drop --key/--token"), "{stderr}");
    assert_eq!(issuer.github_hits(), 0);

    // An audience the nodes do not expect: the node refuses the token.
    let wrong = job(&["--audience", "elsewhere"], &github);
    assert_eq!(wrong.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(stderr.contains("auth-invalid"), "{stderr}");

    // The job deploys and follows its deploy to live.
    let deployed = job(&[], &github);
    let stdout = String::from_utf8_lossy(&deployed.stdout);
    assert!(
        deployed.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&deployed.stderr)
    );
    assert!(stdout.contains("is live"), "{stdout}");
    // The job's token appears nowhere in what the client printed.
    let header =
        URL_SAFE_NO_PAD.encode(json!({"alg": "RS256", "typ": "JWT", "kid": "rsa-1"}).to_string());
    let printed = format!("{stdout}{}", String::from_utf8_lossy(&deployed.stderr));
    assert!(!printed.contains(&header[..16]), "{printed}");
    let url = app_url(&node, &admin, "hello").await.expect("served");
    assert_eq!(fetch(&url).await, (200, "HI CI V2".to_owned()));
    let deploys = call(
        &node,
        "GET",
        "/v1/applications/hello",
        Some(&admin.token()),
        None,
    )
    .await;
    let live = deploys.ok(200)["application"]["release"]["live"]
        .as_str()
        .expect("live")
        .to_owned();
    let record = call(
        &node,
        "GET",
        &format!("/v1/deploys/{live}"),
        Some(&admin.token()),
        None,
    )
    .await;
    assert_eq!(
        record.ok(200)["caller"],
        format!("oidc:{}#{GITHUB_SUBJECT}", issuer.url())
    );

    // The client does not ask a workload token's forbidden questions.
    assert!(
        !node
            .log()
            .lines()
            .any(|l| l.contains("path=/v1/state}") && l.contains("status=403")),
        "the job's client asked for /v1/state"
    );

    // Any other CI (GitLab's id_tokens) hands its token over in SCAFO_TOKEN.
    fixture(dir.path(), "v3");
    let gitlab = scafo()
        .arg("deploy")
        .arg(dir.path())
        .args(["--var", "WHO:lab"])
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("SCAFO_STATE_DIR", dir.path().join("no-state"))
        .env("SCAFO_URL", &node.url)
        .env_remove("SCAFO_KEY")
        .env(
            "SCAFO_TOKEN",
            issuer.token("ec-1", "repo:acme/shop:environment:prod", json!({})),
        )
        .output()
        .expect("scafo deploy with SCAFO_TOKEN");
    assert!(
        gitlab.status.success(),
        "{}",
        String::from_utf8_lossy(&gitlab.stderr)
    );
    eventually("v3 served", Duration::from_secs(10), || {
        let (node, admin) = (&node, &admin);
        async move {
            let url = app_url(node, admin, "hello").await?;
            (fetch(&url).await == (200, "HI LAB V3".to_owned())).then_some(())
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_keys_are_refreshed_after_their_ttl() {
    let issuer = Issuer::start();
    let mut env = issuer_env(&issuer);
    env.push(("SCAFO_OIDC_KEYSSECONDS".into(), "1".into()));
    let (node, path) = trusted_shop(&issuer, env).await;
    let token = issuer.token("ec-1", MAIN, json!({}));
    call(&node, "GET", &path, Some(&token), None).await.ok(200);
    assert_eq!(issuer.hits(), (1, 1));
    // Past the TTL, a request refreshes the keys (and is answered).
    eventually("a refresh after the TTL", Duration::from_secs(10), || {
        let (node, path, token, issuer) = (&node, &path, &token, &issuer);
        async move {
            let answer = call(node, "GET", path, Some(token), None).await;
            assert_eq!(answer.status, 200, "{}", answer.body);
            (issuer.hits() == (2, 2)).then_some(())
        }
    })
    .await;
    // With the issuer down, stale keys keep answering; failed refreshes are
    // spaced out rather than tried on every request.
    issuer.set_down(true);
    let down_at = issuer.hits();
    let started = std::time::Instant::now();
    let mut answered = 0;
    while started.elapsed() < Duration::from_secs(3) {
        call(&node, "GET", &path, Some(&token), None).await.ok(200);
        answered += 1;
    }
    let attempts = issuer.hits().0 - down_at.0;
    assert!(
        (1..=2).contains(&attempts),
        "{attempts} discovery attempts over {answered} requests in 3 s"
    );
}
