//! Authentication through the real binary: every kind of bad token is the
//! same `auth-invalid` (byte-identical body on a route, `WWW-Authenticate:
//! Bearer`), and only keys registered in the bucket are admitted.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::Signer;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::util::{Node, NodeOptions, TestKey, call};

fn b64(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn now() -> u64 {
    scafo::auth::token::now()
}

fn claims(iat: u64, exp: u64) -> Value {
    json!({"aud": "scafo", "iat": iat, "exp": exp, "jti": "t-1"})
}

/// A token with any header and claims, signed with `key`.
fn craft(header: Value, claims: Value, key: &TestKey) -> String {
    let input = format!("{}.{}", b64(header.to_string()), b64(claims.to_string()));
    let signature = key.secret.signing_key().sign(input.as_bytes());
    format!("{input}.{}", b64(signature.to_bytes()))
}

fn eddsa(kid: &str) -> Value {
    json!({"alg": "EdDSA", "typ": "JWT", "kid": kid})
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut block = [0u8; 64];
    block[..key.len().min(64)].copy_from_slice(&key[..key.len().min(64)]);
    let inner: Vec<u8> = block
        .iter()
        .map(|b| b ^ 0x36)
        .chain(message.iter().copied())
        .collect();
    let inner = Sha256::digest(inner);
    let outer: Vec<u8> = block
        .iter()
        .map(|b| b ^ 0x5c)
        .chain(inner.iter().copied())
        .collect();
    Sha256::digest(outer).to_vec()
}

#[tokio::test]
async fn every_bad_token_is_one_identical_auth_invalid() {
    let node = Node::start(NodeOptions::default()).await;
    let admin = node.admin();
    let t = now();

    // A key that was registered, then deleted.
    let gone = TestKey::generate("op-gone");
    call(
        &node,
        "POST",
        "/v1/operators",
        Some(&admin.token()),
        Some(json!({"id": "op-gone", "publicKey": gone.public(), "applications": ["x"]})),
    )
    .await
    .ok(201);
    call(
        &node,
        "DELETE",
        "/v1/operators/op-gone",
        Some(&admin.token()),
        None,
    )
    .await
    .ok(200);

    let signed = craft(eddsa(&admin.kid), claims(t, t + 60), &admin);
    let (head, rest) = signed.split_once('.').expect("dot");
    let (_, signature) = rest.split_once('.').expect("dot");
    let tampered = format!(
        "{head}.{}.{signature}",
        b64(json!({"aud": "scafo", "iat": t, "exp": t + 299, "jti": "t-1"}).to_string())
    );
    let hs_input = format!(
        "{}.{}",
        b64(json!({"alg": "HS256", "kid": admin.kid}).to_string()),
        b64(claims(t, t + 60).to_string())
    );
    let hs256 = format!(
        "{hs_input}.{}",
        b64(hmac_sha256(
            admin.secret.public().x.as_bytes(),
            hs_input.as_bytes()
        ))
    );
    let none = format!(
        "{}.{}.",
        b64(json!({"alg": "none", "kid": admin.kid}).to_string()),
        b64(claims(t, t + 60).to_string())
    );
    let stranger = TestKey::generate(&admin.kid);

    let corpus: Vec<(&str, Option<String>)> = vec![
        ("missing header", None),
        ("wrong scheme", Some(format!("Basic {}", admin.token()))),
        ("empty token", Some("Bearer ".into())),
        ("two segments", Some(format!("Bearer {head}.{}", b64("{}")))),
        (
            "four segments",
            Some(format!("Bearer {signed}.{signature}")),
        ),
        ("bad base64", Some("Bearer !!!.@@@.###".into())),
        ("alg none", Some(format!("Bearer {none}"))),
        (
            "alg HS256 with the public key as secret",
            Some(format!("Bearer {hs256}")),
        ),
        (
            "unknown kid",
            Some(format!(
                "Bearer {}",
                craft(eddsa("op-nobody"), claims(t, t + 60), &admin)
            )),
        ),
        (
            "kid of a deleted operator",
            Some(format!("Bearer {}", gone.token())),
        ),
        (
            "unknown node kid",
            Some(format!(
                "Bearer {}",
                craft(eddsa("node:ghost"), claims(t, t + 60), &admin)
            )),
        ),
        (
            "wrong signature",
            Some(format!(
                "Bearer {}",
                craft(eddsa(&admin.kid), claims(t, t + 60), &stranger)
            )),
        ),
        ("tampered payload", Some(format!("Bearer {tampered}"))),
        (
            "expired",
            Some(format!(
                "Bearer {}",
                craft(eddsa(&admin.kid), claims(t - 400, t - 100), &admin)
            )),
        ),
        (
            "iat in the future",
            Some(format!(
                "Bearer {}",
                craft(eddsa(&admin.kid), claims(t + 120, t + 200), &admin)
            )),
        ),
        (
            "lifetime over 300 s",
            Some(format!(
                "Bearer {}",
                craft(eddsa(&admin.kid), claims(t, t + 301), &admin)
            )),
        ),
        (
            "wrong aud",
            Some(format!(
                "Bearer {}",
                craft(
                    eddsa(&admin.kid),
                    json!({"aud": "other", "iat": t, "exp": t + 60, "jti": "t"}),
                    &admin
                )
            )),
        ),
        (
            "no jti",
            Some(format!(
                "Bearer {}",
                craft(
                    eddsa(&admin.kid),
                    json!({"aud": "scafo", "iat": t, "exp": t + 60}),
                    &admin
                )
            )),
        ),
        (
            "an 8 KiB header",
            Some(format!("Bearer {}", "a".repeat(8192))),
        ),
    ];
    for route in ["/v1/operators", "/v1/state"] {
        let mut first: Option<Vec<u8>> = None;
        for (cause, header) in &corpus {
            let mut request = reqwest::Client::new().get(format!("{}{route}", node.url));
            if let Some(header) = header {
                request = request.header("authorization", header);
            }
            let response = request.send().await.expect("send");
            assert_eq!(response.status(), 401, "{cause} on {route}");
            assert_eq!(
                response
                    .headers()
                    .get("www-authenticate")
                    .map(|v| v.as_bytes()),
                Some(&b"Bearer"[..]),
                "{cause}"
            );
            let body = response.bytes().await.expect("body").to_vec();
            let parsed: Value = serde_json::from_slice(&body).expect("problem");
            assert_eq!(parsed["code"], "auth-invalid", "{cause}");
            match &first {
                None => first = Some(body),
                Some(first) => assert_eq!(
                    &body, first,
                    "{cause}: body differs from the other causes on {route}"
                ),
            }
        }
    }
    // The control: the same node admits a good token.
    call(&node, "GET", "/v1/operators", Some(&admin.token()), None)
        .await
        .ok(200);
    assert!(
        !node.log().contains(&admin.token()[..40]),
        "tokens are never logged"
    );
}

#[tokio::test]
async fn node_tokens_are_callers_but_not_operators() {
    let node = Node::start(NodeOptions {
        id: Some("vps-a".into()),
        ..Default::default()
    })
    .await;
    let as_node = TestKey::node(&node, "vps-a");
    let state = call(&node, "GET", "/v1/state", Some(&as_node.token()), None).await;
    assert_eq!(state.ok(200)["scoped"], false);
    call(&node, "GET", "/v1/operators", Some(&as_node.token()), None)
        .await
        .problem(403, "auth-scope");
    call(
        &node,
        "GET",
        "/v1/fleet/freeze",
        Some(&as_node.token()),
        None,
    )
    .await
    .problem(403, "auth-scope");
    call(
        &node,
        "POST",
        "/v1/fleet/freeze",
        Some(&as_node.token()),
        None,
    )
    .await
    .problem(403, "auth-scope");
    // A node key under another node's name is not that node.
    let impostor = TestKey {
        kid: "node:vps-b".into(),
        secret: scafo::auth::SecretKey::read(&node.state_dir.join("node.jwk")).expect("key"),
    };
    call(&node, "GET", "/v1/state", Some(&impostor.token()), None)
        .await
        .problem(401, "auth-invalid");
}

#[tokio::test]
async fn a_bootstrap_admin_file_names_the_first_admin_and_nothing_is_generated() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = TestKey::generate("op-root");
    let public = dir.path().join("root.pub.jwk");
    let mut jwk = root.public();
    jwk["kid"] = json!("op-root");
    std::fs::write(&public, jwk.to_string()).expect("write");
    let node = Node::start(NodeOptions {
        args: vec!["--bootstrap-admin".into(), public.display().to_string()],
        ..Default::default()
    })
    .await;
    assert!(!node.state_dir.join("admin.jwk").exists());
    let list = call(&node, "GET", "/v1/operators", Some(&root.token()), None).await;
    let body = list.ok(200);
    assert_eq!(body["operators"].as_array().map(Vec::len), Some(1));
    assert_eq!(body["operators"][0]["id"], "op-root");
    assert_eq!(body["operators"][0]["role"], "admin");
    assert_eq!(body["operators"][0]["applications"], json!(["*"]));
    assert_eq!(body["operators"][0]["createdBy"], "bootstrap");

    // A second node on the same bucket, with its own bootstrap file: the
    // registry already holds an operator, so nothing changes.
    let other = TestKey::generate("op-other");
    let other_file = dir.path().join("other.pub.jwk");
    std::fs::write(&other_file, other.public().to_string()).expect("write");
    let second = Node::start(NodeOptions {
        id: Some("node-b".into()),
        bucket: Some(node.file_bucket()),
        args: vec!["--bootstrap-admin".into(), other_file.display().to_string()],
        ..Default::default()
    })
    .await;
    let list = call(&second, "GET", "/v1/operators", Some(&root.token()), None).await;
    assert_eq!(list.ok(200)["operators"].as_array().map(Vec::len), Some(1));
    assert!(!second.state_dir.join("admin.jwk").exists());
}

#[tokio::test]
async fn a_malformed_bootstrap_admin_file_refuses_to_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.jwk");
    std::fs::write(&bad, r#"{"kty":"RSA","n":"x","e":"AQAB"}"#).expect("write");
    let mut node = Node::spawn(NodeOptions {
        args: vec!["--bootstrap-admin".into(), bad.display().to_string()],
        ..Default::default()
    });
    assert_eq!(
        node.wait_exit(std::time::Duration::from_secs(20)).code(),
        Some(1)
    );
    assert!(node.log().contains("--bootstrap-admin"), "{}", node.log());
}
