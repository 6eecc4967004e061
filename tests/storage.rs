//! The storage surface, as a contract modelled on certmagic's Storage
//! interface (Store, Load, Exists, Stat, Delete with prefix, List recursive
//! and not, Lock/Unlock), run unchanged against a node on the file store and
//! a node on moto.

use std::time::Duration;

use crate::util::{Moto, Node, NodeOptions, eventually, moto_env};

const INGRESS: &str = "storage-ingress-token-0123456789";

struct Surface {
    base: String,
    client: reqwest::Client,
}

impl Surface {
    fn new(node: &Node) -> Surface {
        Surface {
            base: format!("{}/v1/storage", node.url),
            client: reqwest::Client::new(),
        }
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> (u16, Vec<u8>, reqwest::header::HeaderMap) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(INGRESS);
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send().await.expect("send");
        let (status, headers) = (response.status().as_u16(), response.headers().clone());
        (
            status,
            response.bytes().await.expect("body").to_vec(),
            headers,
        )
    }

    async fn keys(&self, path: &str) -> (u16, Vec<String>) {
        let (status, body, _) = self.send("GET", path, None).await;
        let keys = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| {
                v["keys"].as_array().map(|k| {
                    k.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
            })
            .unwrap_or_default();
        (status, keys)
    }
}

async fn contract(node: &Node) {
    let s = Surface::new(node);
    let cert = "certificates/acme-v02.api.letsencrypt.org-directory/shop.example/shop.example.crt";
    let bytes: Vec<u8> = (0..=255u8).cycle().take(3000).collect();

    // Store, Load: byte-exact.
    assert_eq!(
        s.send("PUT", &format!("/objects/{cert}"), Some(bytes.clone()))
            .await
            .0,
        204
    );
    let (status, loaded, headers) = s.send("GET", &format!("/objects/{cert}"), None).await;
    assert_eq!((status, loaded), (200, bytes.clone()));
    assert_eq!(
        headers.get("content-type").map(|v| v.as_bytes()),
        Some(&b"application/octet-stream"[..])
    );
    // Exists, Stat.
    let (status, _, headers) = s.send("HEAD", &format!("/objects/{cert}"), None).await;
    assert_eq!(status, 200);
    assert_eq!(
        headers.get("content-length").and_then(|v| v.to_str().ok()),
        Some("3000")
    );
    let modified = headers
        .get("last-modified")
        .and_then(|v| v.to_str().ok())
        .expect("last-modified");
    assert!(httpdate::parse_http_date(modified).is_ok(), "{modified}");
    assert_eq!(
        s.send("HEAD", "/objects/certificates/none", None).await.0,
        404
    );
    let (status, body, _) = s.send("GET", "/objects/certificates/none", None).await;
    assert_eq!(status, 404);
    assert!(String::from_utf8_lossy(&body).contains("not-found"));

    // List: immediate children, recursive for true/1 only, empty is 404.
    for key in [
        "certificates/acme/a.example/a.key",
        "certificates/acme/a.example/a.crt",
        "certificates/acme/b.example/b.crt",
        "locks-not/x",
    ] {
        assert_eq!(
            s.send("PUT", &format!("/objects/{key}"), Some(b"x".to_vec()))
                .await
                .0,
            204
        );
    }
    let (status, keys) = s.keys("/list/certificates/acme").await;
    assert_eq!(
        (status, keys),
        (
            200,
            vec![
                "certificates/acme/a.example".to_owned(),
                "certificates/acme/b.example".to_owned()
            ]
        )
    );
    for truthy in ["true", "1"] {
        let (_, keys) = s
            .keys(&format!("/list/certificates/acme?recursive={truthy}"))
            .await;
        assert_eq!(
            keys,
            [
                "certificates/acme/a.example/a.crt",
                "certificates/acme/a.example/a.key",
                "certificates/acme/b.example/b.crt"
            ]
        );
    }
    let (_, keys) = s.keys("/list/certificates/acme?recursive=yes").await;
    assert_eq!(keys.len(), 2, "only true and 1 are truthy");
    let (_, top) = s.keys("/list").await;
    assert_eq!(top, ["certificates", "locks-not"]);
    assert_eq!(s.keys("/list/certificates/nothing").await.0, 404);

    // Delete: the key and everything under it.
    assert_eq!(
        s.send("DELETE", "/objects/certificates/acme/a.example", None)
            .await
            .0,
        204
    );
    assert_eq!(s.keys("/list/certificates/acme/a.example").await.0, 404);
    let (_, keys) = s.keys("/list/certificates/acme?recursive=1").await;
    assert_eq!(keys, ["certificates/acme/b.example/b.crt"]);
    assert_eq!(
        s.send("DELETE", "/objects/certificates/never", None)
            .await
            .0,
        204
    );

    // Lock, Unlock: try-acquire, idempotent release.
    assert_eq!(
        s.send("POST", "/locks/issue_cert_shop.example", None)
            .await
            .0,
        204
    );
    let (status, body, _) = s.send("POST", "/locks/issue_cert_shop.example", None).await;
    assert_eq!(status, 409);
    assert!(String::from_utf8_lossy(&body).contains("cas-conflict"));
    assert_eq!(
        s.send("DELETE", "/locks/issue_cert_shop.example", None)
            .await
            .0,
        204
    );
    assert_eq!(
        s.send("DELETE", "/locks/issue_cert_shop.example", None)
            .await
            .0,
        204
    );
    assert_eq!(
        s.send("POST", "/locks/issue_cert_shop.example", None)
            .await
            .0,
        204
    );

    // Bad keys, names, versions and credentials.
    for bad in [
        "/objects/a//b",
        "/objects/a/%00b",
        "/objects/with%20space",
        "/locks/a//b",
        "/list/a//b",
    ] {
        let (status, body, _) = s.send("PUT", bad, Some(b"x".to_vec())).await;
        let (status, body) = if bad.starts_with("/list") {
            let (st, b, _) = s.send("GET", bad, None).await;
            (st, b)
        } else if bad.starts_with("/locks") {
            let (st, b, _) = s.send("POST", bad, None).await;
            (st, b)
        } else {
            (status, body)
        };
        assert_eq!(status, 400, "{bad}: {}", String::from_utf8_lossy(&body));
        assert!(
            String::from_utf8_lossy(&body).contains("invalid-input"),
            "{bad}"
        );
    }
    let versioned = |version: &'static str| {
        s.client
            .get(format!("{}/objects/{cert}", s.base))
            .bearer_auth(INGRESS)
            .header("x-scafo-storage-version", version)
            .send()
    };
    assert_eq!(versioned("1").await.expect("send").status(), 200);
    assert_eq!(versioned("").await.expect("send").status(), 200);
    assert_eq!(versioned("2").await.expect("send").status(), 400);
    let admin = node.admin().token();
    let as_operator = s
        .client
        .get(format!("{}/objects/{cert}", s.base))
        .bearer_auth(admin)
        .send()
        .await
        .expect("send");
    assert_eq!(as_operator.status(), 401);
    let without = s
        .client
        .get(format!("{}/objects/{cert}", s.base))
        .send()
        .await
        .expect("send");
    assert_eq!(without.status(), 401);
}

fn options() -> NodeOptions {
    NodeOptions {
        args: vec!["--ingress-token".into(), INGRESS.into()],
        env: vec![
            ("SCAFO_STORAGE_OBJECTBYTES".into(), "4096".into()),
            // Short enough for the expiry check, long enough that a second
            // POST right after the first still finds the lock on a loaded
            // machine (moto is one server for the whole suite).
            ("SCAFO_STORAGE_LOCKSECONDS".into(), "3".into()),
        ],
        ..Default::default()
    }
}

#[tokio::test]
async fn storage_contract_on_the_file_store() {
    let node = Node::start(options()).await;
    contract(&node).await;
    bounds_and_expiry(&node).await;
}

#[tokio::test]
async fn storage_contract_on_s3() {
    let (endpoint, bucket) = Moto::bucket().await;
    let mut opts = options();
    opts.bucket = Some(format!("s3://{bucket}"));
    opts.env.extend(moto_env(&endpoint));
    let node = Node::start(opts).await;
    contract(&node).await;
    bounds_and_expiry(&node).await;
}

async fn bounds_and_expiry(node: &Node) {
    let s = Surface::new(node);
    let (status, body, _) = s.send("PUT", "/objects/big", Some(vec![1u8; 4097])).await;
    assert_eq!(status, 413, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        s.send("PUT", "/objects/fits", Some(vec![1u8; 4096]))
            .await
            .0,
        204
    );
    // A dead holder's lock lapses after storage.lockSeconds (3 s here).
    assert_eq!(s.send("POST", "/locks/stale", None).await.0, 204);
    eventually(
        "the stale lock lapsing",
        Duration::from_secs(10),
        || async { (s.send("POST", "/locks/stale", None).await.0 == 204).then_some(()) },
    )
    .await;
}
