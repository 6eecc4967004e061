//! The object-store conformance suite: the same cases, unchanged, against
//! the file store and against a real S3 API server (moto). Races included.

use std::collections::BTreeSet;
use std::sync::Arc;

use scafo::store::file::FileStore;
use scafo::store::s3::S3Store;
use scafo::store::{ETag, ListRequest, ObjectStore, StoreError, list_all};

use crate::util::{Moto, s3_client, unique};

async fn file_store() -> (Arc<dyn ObjectStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(&dir.path().join("bucket")).expect("open");
    (Arc::new(store), dir)
}

async fn s3_store() -> (Arc<dyn ObjectStore>, ()) {
    let (endpoint, bucket) = Moto::bucket().await;
    // A key prefix, so prefix handling is exercised on every case.
    let store = S3Store::new(s3_client(&endpoint), &bucket, Some("fleet/x"));
    (Arc::new(store), ())
}

/// The keys of a listing, in order.
fn keys_of(page: &scafo::store::ListPage) -> Vec<&str> {
    page.objects.iter().map(|m| m.key.as_str()).collect()
}

/// The bytes stored at `key`, which must exist.
async fn bytes_at(store: &dyn ObjectStore, key: &str) -> Vec<u8> {
    store.get(key).await.expect("get").expect("exists").bytes
}

/// Adds one to the decimal counter at `key` by CAS, retrying lost races;
/// answers how many races were lost.
async fn increment(store: &dyn ObjectStore, key: &str) -> u32 {
    let mut lost = 0;
    loop {
        let current = store.get(key).await.expect("get").expect("exists");
        let n: u64 = String::from_utf8(current.bytes)
            .expect("utf8")
            .parse()
            .expect("number");
        match store
            .put_if_match(key, (n + 1).to_string().into_bytes(), &current.etag)
            .await
        {
            Ok(_) => return lost,
            Err(StoreError::Conflict { .. }) => lost += 1,
            Err(other) => panic!("{other}"),
        }
    }
}

macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        mod file {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    let (store, _dir) = super::file_store().await;
                    super::$case(store).await;
                }
            )*
        }
        mod s3 {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    let (store, _keep) = super::s3_store().await;
                    super::$case(store).await;
                }
            )*
        }
    };
}

conformance!(
    missing_keys_read_as_none,
    put_get_head_round_trip_bytes_and_etags,
    create_only_refuses_an_existing_key,
    put_if_match_needs_the_current_etag,
    plain_put_overwrites,
    delete_removes_and_is_idempotent,
    odd_keys_are_spelled_back_exactly,
    listing_by_prefix_and_delimiter,
    a_key_and_keys_under_it_coexist,
    listing_pages_past_a_thousand_keys,
    forty_eight_parallel_creates_have_one_winner,
    eight_writers_twenty_cas_increments_make_160,
    invalid_keys_are_refused_alike,
    files_stream_in_and_out,
);

async fn files_stream_in_and_out(store: Arc<dyn ObjectStore>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = dir.path().join("artifact.tar.gz");
    let bytes: Vec<u8> = (0..3 * 1024 * 1024u32)
        .map(|i| (i * 7 % 251) as u8)
        .collect();
    std::fs::write(&source, &bytes).expect("write");
    let etag = store
        .put_file("artifacts/shop/x.tar.gz", &source)
        .await
        .expect("put_file");
    let meta = store
        .head("artifacts/shop/x.tar.gz")
        .await
        .expect("head")
        .expect("exists");
    assert_eq!((meta.size, meta.etag), (bytes.len() as u64, etag));
    let target = dir.path().join("back");
    assert!(
        store
            .get_file("artifacts/shop/x.tar.gz", &target)
            .await
            .expect("get_file")
    );
    assert_eq!(std::fs::read(&target).expect("read"), bytes);
    assert!(
        !store
            .get_file("artifacts/shop/none", &dir.path().join("none"))
            .await
            .expect("get_file")
    );
}

async fn missing_keys_read_as_none(store: Arc<dyn ObjectStore>) {
    assert!(store.get("nope").await.expect("get").is_none());
    assert!(store.head("a/b/nope").await.expect("head").is_none());
    let page = store
        .list(ListRequest {
            prefix: "nothing/".into(),
            ..Default::default()
        })
        .await
        .expect("list");
    assert!(page.objects.is_empty() && page.prefixes.is_empty() && page.next.is_none());
}

async fn put_get_head_round_trip_bytes_and_etags(store: Arc<dyn ObjectStore>) {
    let bytes: Vec<u8> = (0..=255u8).chain(0..=255u8).collect();
    let etag = store
        .put("bin/all-bytes", bytes.clone())
        .await
        .expect("put");
    let object = store
        .get("bin/all-bytes")
        .await
        .expect("get")
        .expect("exists");
    assert_eq!(object.bytes, bytes);
    assert_eq!(object.etag, etag);
    let meta = store
        .head("bin/all-bytes")
        .await
        .expect("head")
        .expect("exists");
    assert_eq!(
        (meta.etag, meta.size, meta.key.as_str()),
        (etag, 512, "bin/all-bytes")
    );
    assert!(meta.modified > std::time::UNIX_EPOCH);
}

async fn create_only_refuses_an_existing_key(store: Arc<dyn ObjectStore>) {
    store
        .put_create("k", b"first".to_vec())
        .await
        .expect("create");
    let again = store.put_create("k", b"second".to_vec()).await;
    assert!(
        matches!(again, Err(StoreError::Conflict { ref key }) if key == "k"),
        "{again:?}"
    );
    assert_eq!(bytes_at(&*store, "k").await, b"first");
}

async fn put_if_match_needs_the_current_etag(store: Arc<dyn ObjectStore>) {
    let first = store.put_create("k", b"1".to_vec()).await.expect("create");
    let second = store
        .put_if_match("k", b"2".to_vec(), &first)
        .await
        .expect("matching etag");
    assert_ne!(first, second);
    let stale = store.put_if_match("k", b"3".to_vec(), &first).await;
    assert!(
        matches!(stale, Err(StoreError::Conflict { .. })),
        "{stale:?}"
    );
    let missing = store.put_if_match("missing", b"x".to_vec(), &first).await;
    assert!(
        matches!(missing, Err(StoreError::Conflict { .. })),
        "{missing:?}"
    );
    let made_up = store
        .put_if_match("k", b"4".to_vec(), &ETag::new("\"0000\""))
        .await;
    assert!(
        matches!(made_up, Err(StoreError::Conflict { .. })),
        "{made_up:?}"
    );
    assert_eq!(bytes_at(&*store, "k").await, b"2");
    assert!(store.get("missing").await.expect("get").is_none());
}

async fn plain_put_overwrites(store: Arc<dyn ObjectStore>) {
    store.put("k", b"one".to_vec()).await.expect("put");
    let etag = store.put("k", b"two".to_vec()).await.expect("put");
    let object = store.get("k").await.expect("get").expect("exists");
    assert_eq!((object.bytes.as_slice(), object.etag), (&b"two"[..], etag));
}

async fn delete_removes_and_is_idempotent(store: Arc<dyn ObjectStore>) {
    store.put("d/k", b"x".to_vec()).await.expect("put");
    store.delete("d/k").await.expect("delete");
    assert!(store.get("d/k").await.expect("get").is_none());
    store.delete("d/k").await.expect("delete again");
    store.delete("never/was").await.expect("delete missing");
    store
        .put_create("d/k", b"y".to_vec())
        .await
        .expect("create after delete");
    let listed = list_all(&*store, "d/", false).await.expect("list");
    assert_eq!(keys_of(&listed), ["d/k"]);
}

async fn odd_keys_are_spelled_back_exactly(store: Arc<dyn ObjectStore>) {
    let keys = [
        "odd/with space",
        "odd/plus+sign",
        "odd/per%cent",
        "odd/ünïcødé/日本",
        "odd/tilde~x",
        "odd/a.b..c",
    ];
    for key in keys {
        store
            .put_create(key, key.as_bytes().to_vec())
            .await
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        let object = store.get(key).await.expect("get").expect("exists");
        assert_eq!(object.bytes, key.as_bytes());
    }
    let listed: BTreeSet<String> = list_all(&*store, "odd/", false)
        .await
        .expect("list")
        .objects
        .into_iter()
        .map(|m| m.key)
        .collect();
    assert_eq!(listed, keys.iter().map(|k| k.to_string()).collect());
}

async fn listing_by_prefix_and_delimiter(store: Arc<dyn ObjectStore>) {
    for key in [
        "app/shop.json",
        "app/shop-staging.json",
        "app/blog.json",
        "dep/shop/1.json",
        "dep/shop/2.json",
        "dep/blog/1.json",
        "depot",
    ] {
        store.put(key, b"{}".to_vec()).await.expect("put");
    }
    let apps = list_all(&*store, "app/", false).await.expect("list");
    assert_eq!(
        keys_of(&apps),
        ["app/blog.json", "app/shop-staging.json", "app/shop.json"]
    );
    let partial = list_all(&*store, "app/sh", false).await.expect("list");
    assert_eq!(
        keys_of(&partial),
        ["app/shop-staging.json", "app/shop.json"]
    );
    let deep = list_all(&*store, "dep/", false).await.expect("list");
    assert_eq!(
        keys_of(&deep),
        ["dep/blog/1.json", "dep/shop/1.json", "dep/shop/2.json"]
    );
    let grouped = list_all(&*store, "dep/", true).await.expect("list");
    assert!(grouped.objects.is_empty());
    assert_eq!(grouped.prefixes, ["dep/blog/", "dep/shop/"]);
    let top = list_all(&*store, "", true).await.expect("list");
    assert_eq!(keys_of(&top), ["depot"]);
    assert_eq!(top.prefixes, ["app/", "dep/"]);
    let etag = store
        .head("app/blog.json")
        .await
        .expect("head")
        .expect("exists")
        .etag;
    assert_eq!(apps.objects[0].etag, etag, "listings carry ETags");
}

async fn a_key_and_keys_under_it_coexist(store: Arc<dyn ObjectStore>) {
    store.put("certs/a", b"file".to_vec()).await.expect("put");
    store
        .put("certs/a/b", b"under".to_vec())
        .await
        .expect("put");
    assert_eq!(bytes_at(&*store, "certs/a").await, b"file");
    assert_eq!(bytes_at(&*store, "certs/a/b").await, b"under");
    let grouped = list_all(&*store, "certs/", true).await.expect("list");
    assert_eq!(keys_of(&grouped), ["certs/a"]);
    assert_eq!(grouped.prefixes, ["certs/a/"]);
    store.delete("certs/a").await.expect("delete");
    assert_eq!(bytes_at(&*store, "certs/a/b").await, b"under");
}

async fn listing_pages_past_a_thousand_keys(store: Arc<dyn ObjectStore>) {
    let keys: Vec<String> = (0..1100).map(|i| format!("many/{i:05}")).collect();
    let mut tasks = tokio::task::JoinSet::new();
    for chunk in keys.chunks(55) {
        let (store, chunk) = (Arc::clone(&store), chunk.to_vec());
        tasks.spawn(async move {
            for key in chunk {
                store.put(&key, key.as_bytes().to_vec()).await.expect("put");
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("writer");
    }
    let first = store
        .list(ListRequest {
            prefix: "many/".into(),
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(first.objects.len(), 1000);
    assert!(
        first.next.is_some(),
        "a first page of 1000 says there is more"
    );
    let all = list_all(&*store, "many/", false).await.expect("list");
    assert_eq!(
        all.objects.into_iter().map(|m| m.key).collect::<Vec<_>>(),
        keys
    );
}

async fn forty_eight_parallel_creates_have_one_winner(store: Arc<dyn ObjectStore>) {
    let barrier = Arc::new(tokio::sync::Barrier::new(48));
    let mut tasks = tokio::task::JoinSet::new();
    for writer in 0..48u32 {
        let (store, barrier) = (Arc::clone(&store), Arc::clone(&barrier));
        tasks.spawn(async move {
            barrier.wait().await;
            (
                writer,
                store
                    .put_create("race/one", format!("writer {writer}").into_bytes())
                    .await,
            )
        });
    }
    let mut winners = Vec::new();
    while let Some(done) = tasks.join_next().await {
        match done.expect("task") {
            (writer, Ok(_)) => winners.push(writer),
            (_, Err(StoreError::Conflict { .. })) => {}
            (_, Err(other)) => panic!("a loser must see Conflict, got {other}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one winner, got {winners:?}");
    let stored = store.get("race/one").await.expect("get").expect("exists");
    assert_eq!(stored.bytes, format!("writer {}", winners[0]).into_bytes());
}

async fn eight_writers_twenty_cas_increments_make_160(store: Arc<dyn ObjectStore>) {
    store
        .put_create("race/counter", b"0".to_vec())
        .await
        .expect("create");
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let store = Arc::clone(&store);
        tasks.spawn(async move {
            let mut lost = 0;
            for _ in 0..20 {
                lost += increment(&*store, "race/counter").await;
            }
            lost
        });
    }
    let mut lost = 0;
    while let Some(done) = tasks.join_next().await {
        lost += done.expect("writer");
    }
    let stored = bytes_at(&*store, "race/counter").await;
    assert_eq!(
        String::from_utf8(stored).expect("utf8"),
        "160",
        "after {lost} lost races"
    );
}

async fn invalid_keys_are_refused_alike(store: Arc<dyn ObjectStore>) {
    for key in ["", "/abs", "a//b", "a/../b", "trailing/", "ctl\u{7}"] {
        let put = store.put(key, b"x".to_vec()).await;
        assert!(
            matches!(put, Err(StoreError::InvalidKey { .. })),
            "{key:?}: {put:?}"
        );
        let get = store.get(key).await;
        assert!(
            matches!(get, Err(StoreError::InvalidKey { .. })),
            "{key:?}: {get:?}"
        );
    }
}

#[tokio::test]
async fn s3_missing_bucket_is_a_typed_error() {
    let store = S3Store::new(s3_client(Moto::shared()), &unique("absent"), None);
    assert!(matches!(
        store.get("k").await,
        Err(StoreError::NoSuchBucket { .. })
    ));
    assert!(matches!(
        store.put("k", b"x".to_vec()).await,
        Err(StoreError::NoSuchBucket { .. })
    ));
    assert!(matches!(
        store.put_create("k", b"x".to_vec()).await,
        Err(StoreError::NoSuchBucket { .. })
    ));
    let listed = store.list(ListRequest::default()).await;
    assert!(
        matches!(listed, Err(StoreError::NoSuchBucket { .. })),
        "{listed:?}"
    );
}

#[tokio::test]
async fn s3_unreachable_endpoint_is_a_typed_error() {
    let closed = format!("http://127.0.0.1:{}", crate::util::free_port());
    let store = S3Store::new(s3_client(&closed), "fleet", None);
    let started = std::time::Instant::now();
    let got = store.get("k").await;
    assert!(matches!(got, Err(StoreError::Unavailable(_))), "{got:?}");
    let put = store.put_create("k", b"x".to_vec()).await;
    assert!(matches!(put, Err(StoreError::Unavailable(_))), "{put:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[tokio::test]
async fn file_store_answers_paths_it_cannot_create_with_a_typed_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"not a directory").expect("write");
    assert!(matches!(
        FileStore::open(&blocker.join("bucket")),
        Err(StoreError::Io { .. })
    ));
}

/// Several processes on one directory: the file store's guarantee is
/// between processes, not only between tasks. The parent re-runs this test
/// binary as four writer processes on a shared directory.
#[test]
fn file_store_cas_holds_between_processes() {
    const WRITERS: usize = 4;
    const EACH: u64 = 20;
    if let Ok(dir) = std::env::var("SCAFO_TEST_SHARED_BUCKET") {
        // Child: increment a shared counter EACH times.
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        runtime.block_on(async {
            let store = FileStore::open(std::path::Path::new(&dir)).expect("open");
            let _ = store.put_create("counter", b"0".to_vec()).await;
            for _ in 0..EACH {
                increment(&store, "counter").await;
            }
        });
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let children: Vec<_> = (0..WRITERS)
        .map(|_| {
            std::process::Command::new(std::env::current_exe().expect("exe"))
                .args([
                    "--exact",
                    "store::file_store_cas_holds_between_processes",
                    "--test-threads=1",
                ])
                .env("SCAFO_TEST_SHARED_BUCKET", dir.path())
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawn writer")
        })
        .collect();
    for mut child in children {
        assert!(
            child.wait().expect("wait").success(),
            "a writer process failed"
        );
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let value = runtime.block_on(async {
        let store = FileStore::open(dir.path()).expect("open");
        bytes_at(&store, "counter").await
    });
    assert_eq!(
        String::from_utf8(value).expect("utf8"),
        (WRITERS as u64 * EACH).to_string()
    );
}
