//! The node's request layer over raw HTTP/1.1. The JSON control-body bound
//! (`api.jsonBytes`): a
//! declared length over the bound is refused before any body is sent, and a
//! chunked body is cut off as it grows past the bound — the 413 arrives while
//! the body is still unfinished, so nothing was aggregated. And a handler
//! that panics answers `internal` naming the request id, nothing more.

use axum::Router;
use axum::routing::post;
use scafo::node::json::{JsonBody, JsonLimit};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const LIMIT: usize = 1024;

async fn boom() -> &'static str {
    panic!("secret internal detail")
}

async fn serve() -> String {
    let app = Router::new()
        .route("/panic", axum::routing::get(boom))
        .route(
            "/echo",
            post(|JsonBody(body): JsonBody<Value>| async move { axum::Json(body) }),
        )
        .layer(axum::middleware::from_fn(scafo::node::request::track))
        .with_state(JsonLimit(LIMIT));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// Sends `head` and `chunks` (not necessarily a complete request), then
/// reads one response: (status, body).
async fn exchange(addr: &str, head: &str, chunks: &[Vec<u8>]) -> (u16, Value) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("head");
    for chunk in chunks {
        // The server may already have answered and closed: that is the point.
        if stream.write_all(chunk).await.is_err() {
            break;
        }
    }
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let response = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            let n = stream.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            received.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&received).into_owned();
            if let Some((headers, body)) = text.split_once("\r\n\r\n") {
                let length = headers
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().to_owned())
                    })
                    .and_then(|v| v.parse::<usize>().ok());
                if length.is_some_and(|n| body.len() >= n) {
                    break;
                }
            }
        }
        String::from_utf8_lossy(&received).into_owned()
    })
    .await
    .expect("the node answered without waiting for the rest of the body");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

fn chunked(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

#[tokio::test]
async fn a_declared_length_over_the_bound_is_413_before_any_body() {
    let addr = serve().await;
    let head = format!(
        "POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        LIMIT + 1
    );
    let (status, body) = exchange(&addr, &head, &[]).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (413, Some("resource-limit"))
    );
    assert_eq!(body["instance"], "/echo");
}

#[tokio::test]
async fn a_chunked_body_growing_past_the_bound_is_cut_off() {
    let addr = serve().await;
    let head = "POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
    // Three times the bound, and never the terminating chunk.
    let chunks: Vec<Vec<u8>> = (0..12).map(|_| chunked(&[b' '; 256])).collect();
    let (status, body) = exchange(&addr, head, &chunks).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (413, Some("resource-limit"))
    );
}

#[tokio::test]
async fn within_the_bound_the_body_is_read() {
    let addr = serve().await;
    let json = br#"{"reason":"moving every node"}"#;
    let head = "POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
    let (status, body) = exchange(&addr, head, &[chunked(json), b"0\r\n\r\n".to_vec()]).await;
    assert_eq!(
        (status, body),
        (200, serde_json::json!({"reason": "moving every node"}))
    );
}

#[tokio::test]
async fn wrong_media_type_malformed_and_empty_bodies() {
    let addr = serve().await;
    let send = |content_type: &'static str, body: &'static str| {
        let addr = addr.clone();
        async move {
            let head = format!(
                "POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            exchange(&addr, &head, &[body.as_bytes().to_vec()]).await
        }
    };
    let (status, body) = send("text/plain", "{}").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (415, Some("unsupported-media-type"))
    );
    let (status, body) = send("application/json", "{\"a\":").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid-input"))
    );
    let (status, body) = send("application/json", "").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid-input"))
    );
    let (status, _) = send("application/json; charset=utf-8", "{\"a\":1}").await;
    assert_eq!(status, 200);
    let (status, body) = send("application/json", "[1]").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid-input"))
    );
}

#[tokio::test]
async fn a_panicking_handler_answers_internal_with_the_request_id_only() {
    let addr = serve().await;
    let response = reqwest::get(format!("http://{addr}/panic"))
        .await
        .expect("answer, not a dropped connection");
    assert_eq!(response.status(), 500);
    let id = response.headers()["x-request-id"]
        .to_str()
        .expect("id")
        .to_owned();
    let body: Value = response.json().await.expect("problem");
    assert_eq!(body["code"], "internal");
    let detail = body["detail"].as_str().expect("detail");
    assert!(
        detail.contains(&id) && !detail.contains("secret"),
        "{detail}"
    );
}
