//! The registry's CAS helper: lost replies are not lost races, races are
//! retried to exactly-once effects, and giving up answers `Conflict`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use scafo::auth::SecretKey;
use scafo::names::NodeId;
use scafo::registry::{Change, MAX_ATTEMPTS, NodeRecord, Registry, RegistryError, V1, keys};
use scafo::store::file::FileStore;
use scafo::store::s3::S3Store;
use scafo::store::{
    ETag, ListPage, ListRequest, Meta, Object, ObjectStore, StoreError, StoreFuture,
};
use scafo::wire::Timestamp;

use crate::util::{Moto, s3_client};

fn record(id: &NodeId, n: u64) -> NodeRecord {
    NodeRecord {
        v: V1,
        id: id.clone(),
        public_key: SecretKey::generate(None).expect("key").public(),
        labels: [("n".to_owned(), n.to_string())].into(),
        advertise: "http://127.0.0.1:1".into(),
        version: "test".into(),
        celld: None,
        started_at: Timestamp::now(),
        heartbeat_at: Timestamp::now(),
        serving: Default::default(),
        failures: Default::default(),
    }
}

fn count(record: &NodeRecord) -> u64 {
    record.labels["n"].parse().expect("number")
}

async fn increments(registry: Registry) {
    let id = NodeId::parse("counter").expect("id");
    registry
        .create(&keys::node(&id), &record(&id, 0))
        .await
        .expect("create");
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let registry = registry.clone();
        let id = id.clone();
        tasks.spawn(async move {
            for _ in 0..20 {
                registry
                    .update(&keys::node(&id), |current: Option<&NodeRecord>| {
                        let mut next = current.cloned().expect("exists");
                        next.labels
                            .insert("n".into(), (count(&next) + 1).to_string());
                        Ok::<_, RegistryError>(Change::Put(next))
                    })
                    .await
                    .expect("update");
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("writer");
    }
    let stored = registry
        .read(&keys::node(&id))
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(count(&stored.value), 160);
    let raw = registry
        .store()
        .get(keys::node(&id).path())
        .await
        .expect("get")
        .expect("exists");
    let json: serde_json::Value = serde_json::from_slice(&raw.bytes).expect("json");
    assert_eq!(json["v"], 1);
    assert_eq!(json["nonce"], stored.nonce.as_str());
    assert_eq!(stored.nonce.len(), 32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_writers_twenty_updates_make_160_on_the_file_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    increments(Registry::new(Arc::new(
        FileStore::open(dir.path()).expect("open"),
    )))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_writers_twenty_updates_make_160_on_s3() {
    let (endpoint, bucket) = Moto::bucket().await;
    increments(Registry::new(Arc::new(S3Store::new(
        s3_client(&endpoint),
        &bucket,
        None,
    ))))
    .await;
}

/// A store that lands a conditional write but answers `Conflict` — what a
/// retried request whose first reply was lost looks like from S3 (412) —
/// `lose_replies` times; or, with `always_conflict`, refuses every write.
#[derive(Debug)]
struct LossyStore {
    inner: FileStore,
    lose_replies: AtomicU32,
    always_conflict: bool,
    gets: AtomicU32,
}

impl LossyStore {
    fn outcome<'a>(&'a self, key: &'a str, landed: StoreFuture<'a, ETag>) -> StoreFuture<'a, ETag> {
        Box::pin(async move {
            if self.always_conflict {
                return Err(StoreError::Conflict {
                    key: key.to_owned(),
                });
            }
            let etag = landed.await?;
            if self
                .lose_replies
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
                return Err(StoreError::Conflict {
                    key: key.to_owned(),
                });
            }
            Ok(etag)
        })
    }
}

impl ObjectStore for LossyStore {
    fn get<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Object>> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        self.inner.get(key)
    }
    fn head<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Meta>> {
        self.inner.head(key)
    }
    fn put_create<'a>(&'a self, key: &'a str, bytes: Vec<u8>) -> StoreFuture<'a, ETag> {
        self.outcome(key, self.inner.put_create(key, bytes))
    }
    fn put_if_match<'a>(
        &'a self,
        key: &'a str,
        bytes: Vec<u8>,
        etag: &'a ETag,
    ) -> StoreFuture<'a, ETag> {
        self.outcome(key, self.inner.put_if_match(key, bytes, etag))
    }
    fn put<'a>(&'a self, key: &'a str, bytes: Vec<u8>) -> StoreFuture<'a, ETag> {
        self.inner.put(key, bytes)
    }
    fn delete<'a>(&'a self, key: &'a str) -> StoreFuture<'a, ()> {
        self.inner.delete(key)
    }
    fn put_file<'a>(&'a self, key: &'a str, path: &'a std::path::Path) -> StoreFuture<'a, ETag> {
        self.inner.put_file(key, path)
    }
    fn get_file<'a>(&'a self, key: &'a str, path: &'a std::path::Path) -> StoreFuture<'a, bool> {
        self.inner.get_file(key, path)
    }
    fn list<'a>(&'a self, request: ListRequest) -> StoreFuture<'a, ListPage> {
        self.inner.list(request)
    }
    fn location(&self) -> String {
        self.inner.location()
    }
    fn kind(&self) -> &'static str {
        "lossy"
    }
}

fn lossy(dir: &tempfile::TempDir, lose_replies: u32, always_conflict: bool) -> Registry {
    Registry::new(Arc::new(LossyStore {
        inner: FileStore::open(dir.path()).expect("open"),
        lose_replies: AtomicU32::new(lose_replies),
        always_conflict,
        gets: AtomicU32::new(0),
    }))
}

#[tokio::test]
async fn a_write_whose_reply_was_lost_is_recognised_by_its_nonce() {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = lossy(&dir, 2, false);
    let id = NodeId::parse("n").expect("id");
    let calls = AtomicU32::new(0);
    let bump = |current: Option<&NodeRecord>| {
        calls.fetch_add(1, Ordering::SeqCst);
        Ok::<_, RegistryError>(Change::Put(match current {
            Some(current) => {
                let mut next = current.clone();
                next.labels
                    .insert("n".into(), (count(current) + 1).to_string());
                next
            }
            None => record(&id, 1),
        }))
    };
    // The create lands but its reply says Conflict: still one write.
    let created = registry
        .update(&keys::node(&id), bump)
        .await
        .expect("create");
    assert_eq!(created.map(|r| count(&r)), Some(1));
    // The same for an If-Match update.
    let updated = registry
        .update(&keys::node(&id), bump)
        .await
        .expect("update");
    assert_eq!(updated.map(|r| count(&r)), Some(2));
    assert_eq!(calls.load(Ordering::SeqCst), 2, "no write was repeated");
    let stored = registry
        .read(&keys::node(&id))
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(count(&stored.value), 2);
}

#[tokio::test]
async fn a_key_that_never_settles_is_cas_conflict_after_bounded_attempts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = lossy(&dir, 0, true);
    let id = NodeId::parse("n").expect("id");
    let calls = AtomicU32::new(0);
    let result = registry
        .update(&keys::node(&id), |_: Option<&NodeRecord>| {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok::<_, RegistryError>(Change::Put(record(&id, 1)))
        })
        .await;
    assert!(
        matches!(result, Err(RegistryError::Conflict { ref key }) if key == "registry/nodes/n.json"),
        "{result:?}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), MAX_ATTEMPTS);
}

#[tokio::test]
async fn keep_writes_nothing_and_errors_from_the_closure_pass_through() {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = Registry::new(Arc::new(FileStore::open(dir.path()).expect("open")));
    let id = NodeId::parse("n").expect("id");
    let kept = registry
        .update(&keys::node(&id), |_: Option<&NodeRecord>| {
            Ok::<_, RegistryError>(Change::Keep)
        })
        .await;
    assert!(matches!(kept, Ok(None)));
    assert!(
        registry
            .store()
            .get(keys::node(&id).path())
            .await
            .expect("get")
            .is_none()
    );
    let refused = registry
        .update(&keys::node(&id), |_: Option<&NodeRecord>| {
            Err::<Change<NodeRecord>, _>(RegistryError::Corrupt {
                key: "x".into(),
                reason: "refused".into(),
            })
        })
        .await;
    assert!(matches!(refused, Err(RegistryError::Corrupt { .. })));
}

#[tokio::test]
async fn records_of_another_version_or_without_nonce_are_refused_not_misread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(FileStore::open(dir.path()).expect("open"));
    let registry = Registry::new(store.clone());
    store
        .put(
            "registry/fleet.json",
            br#"{"v":2,"id":"x","createdAt":"2026-01-01T00:00:00Z","nonce":"n"}"#.to_vec(),
        )
        .await
        .expect("put");
    let read = registry.read(&keys::fleet()).await;
    assert!(
        matches!(read, Err(RegistryError::Corrupt { ref reason, .. }) if reason.contains("version 2")),
        "{read:?}"
    );
    store
        .put(
            "registry/fleet.json",
            br#"{"v":1,"id":"x","createdAt":"2026-01-01T00:00:00Z"}"#.to_vec(),
        )
        .await
        .expect("put");
    assert!(matches!(
        registry.read(&keys::fleet()).await,
        Err(RegistryError::Corrupt { .. })
    ));
}

#[tokio::test]
async fn an_unreachable_bucket_is_registry_unavailable() {
    let closed = format!("http://127.0.0.1:{}", crate::util::free_port());
    let registry = Registry::new(Arc::new(S3Store::new(s3_client(&closed), "fleet", None)));
    let read = registry.read(&keys::fleet()).await;
    assert!(
        matches!(read, Err(RegistryError::Unavailable(_))),
        "{read:?}"
    );
}

#[tokio::test]
async fn read_all_changed_reads_only_what_changed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(LossyStore {
        inner: FileStore::open(dir.path()).expect("open"),
        lose_replies: AtomicU32::new(0),
        always_conflict: false,
        gets: AtomicU32::new(0),
    });
    let registry = Registry::new(store.clone());
    let ids: Vec<NodeId> = ["a", "b", "c"]
        .iter()
        .map(|i| NodeId::parse(i).expect("id"))
        .collect();
    for id in &ids {
        registry
            .create(&keys::node(id), &record(id, 0))
            .await
            .expect("create");
    }
    let gets = || store.gets.swap(0, Ordering::SeqCst);
    gets();
    let first = registry
        .read_all_changed(&keys::NODES, &[])
        .await
        .expect("read");
    assert_eq!((first.len(), gets()), (3, 3));
    let again = registry
        .read_all_changed(&keys::NODES, &first)
        .await
        .expect("read");
    assert_eq!(
        (again.len(), gets()),
        (3, 0),
        "nothing changed, nothing read"
    );
    registry
        .update(&keys::node(&ids[1]), |current: Option<&NodeRecord>| {
            let mut next = current.cloned().expect("exists");
            next.labels.insert("n".into(), "9".into());
            Ok::<_, RegistryError>(Change::Put(next))
        })
        .await
        .expect("update");
    gets();
    let changed = registry
        .read_all_changed(&keys::NODES, &again)
        .await
        .expect("read");
    assert_eq!(gets(), 1, "one record changed, one read");
    let counts: Vec<u64> = changed.iter().map(|r| count(&r.value)).collect();
    assert_eq!(counts.iter().sum::<u64>(), 9);
}
