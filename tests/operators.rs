//! `/v1/operators`, `/v1/state` and `/v1/fleet/freeze` over HTTP against the
//! real binary: every rule of node-api.txt, refusals by status and code,
//! successes by the shape of the answer.

use serde_json::{Value, json};

use crate::util::{Node, NodeOptions, TestKey, call};

/// Registers `key` with `body` extras, signed by `by`; answers the exchange.
async fn register(node: &Node, by: &TestKey, key: &TestKey, extra: Value) -> crate::util::Answer {
    let mut body = json!({"id": key.kid, "publicKey": key.public()});
    for (k, v) in extra.as_object().expect("object") {
        body[k] = v.clone();
    }
    call(node, "POST", "/v1/operators", Some(&by.token()), Some(body)).await
}

fn ids(body: &Value) -> Vec<String> {
    body["operators"]
        .as_array()
        .expect("operators")
        .iter()
        .map(|o| o["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn fresh_grants_follow_tier_scope_and_wildcard_rules() {
    let node = Node::start(NodeOptions::default()).await;
    let admin = node.admin();
    let shop = TestKey::generate("op-shop");
    let answer = register(
        &node,
        &admin,
        &shop,
        json!({"applications": ["shop", "shop-*"]}),
    )
    .await;
    let record = answer.ok(201)["operator"].clone();
    assert_eq!(record["role"], "operator", "role defaults to operator");
    assert_eq!(record["applications"], json!(["shop", "shop-*"]));
    assert_eq!(record["createdBy"], admin.kid);
    assert_eq!(record["v"], 1);
    assert!(
        record.get("nonce").is_none(),
        "the writer nonce stays in the bucket"
    );

    // Within the caller's scope: fine.
    let eu = TestKey::generate("op-shop-eu");
    register(
        &node,
        &shop,
        &eu,
        json!({"applications": ["shop-eu", "shop-eu-*"]}),
    )
    .await
    .ok(201);
    // Past it, a tier it may not grant, or * from an operator: auth-scope.
    let other = TestKey::generate("op-other");
    for extra in [
        json!({"applications": ["blog"]}),
        json!({"applications": ["shop*"]}),
        json!({"applications": ["*"]}),
        json!({"applications": ["shop"], "role": "admin"}),
        json!({"applications": ["shop"], "supersedes": "op-admin"}),
    ] {
        register(&node, &shop, &other, extra.clone())
            .await
            .problem(403, "auth-scope");
    }
    // A fresh grant must name its scope.
    register(&node, &shop, &other, json!({}))
        .await
        .problem(400, "invalid-input");

    // An operator-tier key holding * may not hand * out beside itself...
    let star = TestKey::generate("op-star");
    register(&node, &admin, &star, json!({"applications": ["*"]}))
        .await
        .ok(201);
    register(&node, &star, &other, json!({"applications": ["*"]}))
        .await
        .problem(403, "auth-scope");
    register(&node, &star, &other, json!({"applications": ["blog"]}))
        .await
        .ok(201);
    // ...but may replace itself with a wildcard key.
    let star2 = TestKey::generate("op-star-r1");
    let replaced = register(
        &node,
        &star,
        &star2,
        json!({"supersedes": "op-star", "applications": ["*"]}),
    )
    .await;
    assert_eq!(replaced.ok(201)["operator"]["supersedes"], "op-star");
    // Admins grant admin.
    let admin2 = TestKey::generate("op-admin-two");
    register(
        &node,
        &admin,
        &admin2,
        json!({"role": "admin", "applications": ["*"]}),
    )
    .await
    .ok(201);
}

#[tokio::test]
async fn replacement_inherits_and_repeats_idempotently() {
    let node = Node::start(NodeOptions::default()).await;
    let admin = node.admin();
    let bob = TestKey::generate("op-bob");
    register(&node, &admin, &bob, json!({"applications": ["shop-*"]}))
        .await
        .ok(201);
    let bob2 = TestKey::generate("op-bob-r1");
    let first = register(&node, &bob, &bob2, json!({"supersedes": "op-bob"})).await;
    let first = first.ok(201)["operator"].clone();
    assert_eq!(
        (first["role"].as_str(), first["applications"].clone()),
        (Some("operator"), json!(["shop-*"]))
    );
    // The interrupted rotation repeats: same answer, 200, nothing rewritten.
    let again = register(&node, &bob, &bob2, json!({"supersedes": "op-bob"})).await;
    assert_eq!(again.ok(200)["operator"], first);
    // The superseded key stays valid until deleted.
    call(&node, "GET", "/v1/operators", Some(&bob.token()), None)
        .await
        .ok(200);
    // The same id with another key is refused.
    let impostor = TestKey::generate("op-bob-r1");
    register(&node, &bob, &impostor, json!({"supersedes": "op-bob"}))
        .await
        .problem(400, "invalid-input");
}

#[tokio::test]
async fn malformed_registrations_are_invalid_input() {
    let node = Node::start(NodeOptions::default()).await;
    let admin = node.admin();
    let key = TestKey::generate("op-x");
    let mut with_d = key.public();
    with_d["d"] = json!("AAAA");
    let bodies = [
        json!({"id": "Op_X", "publicKey": key.public(), "applications": ["x"]}),
        json!({"id": "node:x", "publicKey": key.public(), "applications": ["x"]}),
        json!({"id": "op-x", "publicKey": with_d, "applications": ["x"]}),
        json!({"id": "op-x", "publicKey": {"kty": "OKP", "crv": "X25519", "x": key.public()["x"]}, "applications": ["x"]}),
        json!({"id": "op-x", "publicKey": {"kty": "OKP", "crv": "Ed25519", "x": "c2hvcnQ"}, "applications": ["x"]}),
        json!({"id": "op-x", "publicKey": "not an object", "applications": ["x"]}),
        json!({"id": "op-x", "publicKey": key.public(), "applications": ["sh*p"]}),
        json!({"id": "op-x", "publicKey": key.public(), "applications": ["x"], "role": "root"}),
        json!({"id": "op-x", "publicKey": key.public(), "applications": ["x"], "colour": "blue"}),
        json!({"publicKey": key.public(), "applications": ["x"]}),
        json!(["not", "an", "object"]),
    ];
    for body in bodies {
        let answer = call(
            &node,
            "POST",
            "/v1/operators",
            Some(&admin.token()),
            Some(body.clone()),
        )
        .await;
        assert_eq!(
            (answer.status, answer.body["code"].as_str()),
            (400, Some("invalid-input")),
            "{body}"
        );
    }
    let wrong_type = reqwest::Client::new()
        .post(format!("{}/v1/operators", node.url))
        .bearer_auth(admin.token())
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .expect("send");
    assert_eq!(wrong_type.status(), 415);
    let huge = json!({"id": "op-x", "publicKey": key.public(), "applications": vec!["x"; 20000]});
    call(
        &node,
        "POST",
        "/v1/operators",
        Some(&admin.token()),
        Some(huge),
    )
    .await
    .problem(413, "resource-limit");
    let listed = call(&node, "GET", "/v1/operators", Some(&admin.token()), None).await;
    assert_eq!(
        ids(listed.ok(200)),
        ["op-admin"],
        "no refused registration left a record"
    );
}

#[tokio::test]
async fn non_admins_see_and_remove_only_their_lineage() {
    let node = Node::start(NodeOptions::default()).await;
    let admin = node.admin();
    let (bob, bob2, carol) = (
        TestKey::generate("op-bob"),
        TestKey::generate("op-bob-r1"),
        TestKey::generate("op-carol"),
    );
    register(&node, &admin, &bob, json!({"applications": ["shop"]}))
        .await
        .ok(201);
    register(&node, &admin, &carol, json!({"applications": ["blog"]}))
        .await
        .ok(201);
    register(&node, &bob, &bob2, json!({"supersedes": "op-bob"}))
        .await
        .ok(201);

    let all = call(&node, "GET", "/v1/operators", Some(&admin.token()), None).await;
    assert_eq!(
        ids(all.ok(200)),
        ["op-admin", "op-bob", "op-bob-r1", "op-carol"]
    );
    assert_eq!(all.body["scoped"], false);
    for key in [&bob, &bob2] {
        let mine = call(&node, "GET", "/v1/operators", Some(&key.token()), None).await;
        assert_eq!(ids(mine.ok(200)), ["op-bob", "op-bob-r1"]);
        assert_eq!(mine.body["scoped"], true);
    }
    // Outside the lineage, existing or not, is the same auth-scope.
    call(
        &node,
        "DELETE",
        "/v1/operators/op-carol",
        Some(&bob.token()),
        None,
    )
    .await
    .problem(403, "auth-scope");
    call(
        &node,
        "DELETE",
        "/v1/operators/op-nobody",
        Some(&bob.token()),
        None,
    )
    .await
    .problem(403, "auth-scope");
    call(
        &node,
        "DELETE",
        "/v1/operators/op-nobody",
        Some(&admin.token()),
        None,
    )
    .await
    .problem(404, "not-found");
    call(
        &node,
        "DELETE",
        "/v1/operators/Bad_Id",
        Some(&admin.token()),
        None,
    )
    .await
    .problem(400, "invalid-input");
    // The new key removes the old one; the old one is refused at once.
    let removed = call(
        &node,
        "DELETE",
        "/v1/operators/op-bob",
        Some(&bob2.token()),
        None,
    )
    .await;
    assert_eq!(removed.ok(200), &json!({"removed": "op-bob"}));
    call(&node, "GET", "/v1/operators", Some(&bob.token()), None)
        .await
        .problem(401, "auth-invalid");
    // An admin removes anyone, but never the last admin key.
    call(
        &node,
        "DELETE",
        "/v1/operators/op-carol",
        Some(&admin.token()),
        None,
    )
    .await
    .ok(200);
    call(
        &node,
        "DELETE",
        "/v1/operators/op-admin",
        Some(&admin.token()),
        None,
    )
    .await
    .problem(400, "invalid-input");
    // A key may remove itself.
    call(
        &node,
        "DELETE",
        "/v1/operators/op-bob-r1",
        Some(&bob2.token()),
        None,
    )
    .await
    .ok(200);
}

#[tokio::test]
async fn a_revoked_key_is_refused_on_the_next_request_on_every_node() {
    let a = Node::start(NodeOptions {
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
    let dana = TestKey::generate("op-dana");
    register(&a, &admin, &dana, json!({"applications": ["*"]}))
        .await
        .ok(201);
    call(&b, "GET", "/v1/operators", Some(&dana.token()), None)
        .await
        .ok(200);
    let token = dana.token();
    call(
        &a,
        "DELETE",
        "/v1/operators/op-dana",
        Some(&admin.token()),
        None,
    )
    .await
    .ok(200);
    call(&b, "GET", "/v1/operators", Some(&token), None)
        .await
        .problem(401, "auth-invalid");
    call(&a, "GET", "/v1/state", Some(&token), None)
        .await
        .problem(401, "auth-invalid");
}

#[tokio::test]
async fn freeze_is_one_admin_decision_readable_by_every_operator() {
    let node = Node::start(NodeOptions::default()).await;
    let admin = node.admin();
    let bob = TestKey::generate("op-bob");
    register(&node, &admin, &bob, json!({"applications": ["shop"]}))
        .await
        .ok(201);

    let absent = call(&node, "GET", "/v1/fleet/freeze", Some(&bob.token()), None).await;
    absent.problem(404, "not-found");
    assert_eq!(absent.body["title"], "Deploys are not frozen");

    // No body at all is a freeze with nothing to say.
    let first = call(
        &node,
        "POST",
        "/v1/fleet/freeze",
        Some(&admin.token()),
        None,
    )
    .await;
    let first = first.ok(201).clone();
    assert_eq!(first["created"], true);
    assert_eq!(first["freeze"]["by"], "op-admin");
    assert_eq!(first["freeze"]["v"], 1);
    assert!(first["freeze"].get("reason").is_none());
    // Freezing twice is one freeze: neither stamp nor reason moves.
    let again = call(
        &node,
        "POST",
        "/v1/fleet/freeze",
        Some(&admin.token()),
        Some(json!({"reason": "new reason"})),
    )
    .await;
    assert_eq!(again.ok(200)["created"], false);
    assert_eq!(again.body["freeze"], first["freeze"]);
    let read = call(&node, "GET", "/v1/fleet/freeze", Some(&bob.token()), None).await;
    assert_eq!(read.ok(200), &json!({"freeze": first["freeze"]}));

    let refused = call(&node, "POST", "/v1/fleet/freeze", Some(&bob.token()), None).await;
    refused.problem(403, "auth-scope");
    assert!(
        refused.body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("the fleet makes about itself")
    );
    call(
        &node,
        "DELETE",
        "/v1/fleet/freeze",
        Some(&bob.token()),
        None,
    )
    .await
    .problem(403, "auth-scope");

    assert_eq!(
        call(
            &node,
            "DELETE",
            "/v1/fleet/freeze",
            Some(&admin.token()),
            None
        )
        .await
        .ok(200),
        &json!({"lifted": true})
    );
    assert_eq!(
        call(
            &node,
            "DELETE",
            "/v1/fleet/freeze",
            Some(&admin.token()),
            None
        )
        .await
        .ok(200),
        &json!({"lifted": false})
    );

    let with_reason = call(
        &node,
        "POST",
        "/v1/fleet/freeze",
        Some(&admin.token()),
        Some(json!({"reason": "moving every node to a new Celld release"})),
    )
    .await;
    assert_eq!(
        with_reason.ok(201)["freeze"]["reason"],
        "moving every node to a new Celld release"
    );
}

#[tokio::test]
async fn freeze_bodies_other_than_an_object_with_a_reason_are_refused() {
    let node = Node::start(NodeOptions::default()).await;
    let admin = node.admin();
    for body in [
        json!([]),
        json!("stop"),
        json!({"reason": 5}),
        json!({"reason": "x", "by": "someone-else"}),
        json!({"reason": "x".repeat(1025)}),
    ] {
        call(
            &node,
            "POST",
            "/v1/fleet/freeze",
            Some(&admin.token()),
            Some(body.clone()),
        )
        .await
        .problem(400, "invalid-input");
    }
    let text = reqwest::Client::new()
        .post(format!("{}/v1/fleet/freeze", node.url))
        .bearer_auth(admin.token())
        .header("content-type", "text/plain")
        .body("please")
        .send()
        .await
        .expect("send");
    assert_eq!(text.status(), 415);
    call(&node, "GET", "/v1/fleet/freeze", Some(&admin.token()), None)
        .await
        .problem(404, "not-found");
}

#[tokio::test]
async fn state_is_whole_for_admins_and_nodes_and_scoped_for_others() {
    let node = Node::start(NodeOptions {
        id: Some("vps-a".into()),
        args: vec!["--label".into(), "region=eu".into()],
        ..Default::default()
    })
    .await;
    let admin = node.admin();
    let bob = TestKey::generate("op-bob");
    register(&node, &admin, &bob, json!({"applications": ["shop"]}))
        .await
        .ok(201);
    let state = call(&node, "GET", "/v1/state", Some(&admin.token()), None).await;
    let state = state.ok(200);
    assert_eq!(state["node"]["id"], "vps-a");
    assert_eq!(state["node"]["labels"], json!({"region": "eu"}));
    assert_eq!(state["node"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(state["registry"]["kind"], "file");
    assert_eq!(state["fleet"]["id"].as_str().map(str::len), Some(16));
    let coordinator =
        crate::util::eventually("the lease", std::time::Duration::from_secs(10), || async {
            let state = call(&node, "GET", "/v1/state", Some(&admin.token()), None)
                .await
                .body;
            (state["coordinator"]["holder"] == "vps-a").then(|| state["coordinator"].clone())
        })
        .await;
    assert_eq!(
        (
            coordinator["self"].clone(),
            coordinator["epoch"].as_u64().is_some()
        ),
        (json!(true), true)
    );
    assert_eq!(state["nodes"][0]["id"], "vps-a");
    assert_eq!(state["nodes"][0]["alive"], true);
    assert_eq!(state["applications"], json!([]));
    assert_eq!(state["scoped"], false);
    let scoped = call(&node, "GET", "/v1/state", Some(&bob.token()), None).await;
    assert_eq!(scoped.ok(200)["scoped"], true);
    call(&node, "GET", "/v1/state", None, None)
        .await
        .problem(401, "auth-invalid");
}

#[tokio::test]
async fn two_admins_removing_each_other_leave_one() {
    let node = Node::start(NodeOptions::default()).await;
    let admin = node.admin();
    let (x, y) = (TestKey::generate("op-x"), TestKey::generate("op-y"));
    register(
        &node,
        &admin,
        &x,
        json!({"role": "admin", "applications": ["*"]}),
    )
    .await
    .ok(201);
    register(
        &node,
        &admin,
        &y,
        json!({"role": "admin", "applications": ["*"]}),
    )
    .await
    .ok(201);
    call(
        &node,
        "DELETE",
        "/v1/operators/op-admin",
        Some(&x.token()),
        None,
    )
    .await
    .ok(200);
    let (tx, ty) = (x.token(), y.token());
    let (one, two) = tokio::join!(
        call(&node, "DELETE", "/v1/operators/op-y", Some(&tx), None),
        call(&node, "DELETE", "/v1/operators/op-x", Some(&ty), None),
    );
    assert!(
        one.status != 200 || two.status != 200,
        "both removals went through: {} {}",
        one.body,
        two.body
    );
    let mut admins = 0;
    for key in [&x, &y] {
        if call(&node, "GET", "/v1/operators", Some(&key.token()), None)
            .await
            .status
            == 200
        {
            admins += 1;
        }
    }
    assert!(admins >= 1, "neither op-x nor op-y is left");
}
