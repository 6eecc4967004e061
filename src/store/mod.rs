//! The object store: the one place scafo talks to a bucket.
//!
//! [`ObjectStore`] is the whole contract the registry relies on — get (bytes
//! and ETag), head, create-only put, put-if-match, plain put, delete and
//! paginated listing — with two backends that keep it identically:
//! [`file::FileStore`] (the embedded default, a directory) and
//! [`s3::S3Store`] (S3 or anything S3-compatible with conditional writes).
//!
//! "Lost the race" is always [`StoreError::Conflict`], whatever the backend
//! said (412, 409, or 404 on `If-Match`). A conditional write whose reply was
//! lost and was retried can also come back as `Conflict` although it landed;
//! telling the two apart is the registry's job (records carry a writer nonce).

pub mod counted;
pub mod file;
mod key;
pub mod s3;
mod url;

use std::fmt;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

pub use key::validate_key;
pub use url::{BucketUrl, S3Settings};

/// The future every store operation returns; boxed so the trait stays
/// usable as `dyn ObjectStore`.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// An object's entity tag, exactly as the backend spelled it (quotes included).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ETag(String);

impl ETag {
    pub fn new(tag: impl Into<String>) -> Self {
        ETag(tag.into())
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ETag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for ETag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An object read whole.
#[derive(Debug, Clone)]
pub struct Object {
    pub bytes: Vec<u8>,
    pub etag: ETag,
}

/// What `head` and `list` tell about an object without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    pub key: String,
    pub etag: ETag,
    pub size: u64,
    pub modified: SystemTime,
}

/// One page of a listing. Keys and prefixes are relative to the store's own
/// prefix, in byte order.
#[derive(Debug, Clone, Default)]
pub struct ListPage {
    pub objects: Vec<Meta>,
    /// With a delimiter: the "directories" directly under the listed prefix,
    /// each ending in `/`.
    pub prefixes: Vec<String>,
    /// Pass back as `token` for the next page; `None` on the last page.
    pub next: Option<String>,
}

/// What to list.
#[derive(Debug, Clone, Default)]
pub struct ListRequest {
    /// A plain string prefix (it need not end at a `/`).
    pub prefix: String,
    /// Group keys at the next `/` after the prefix into `prefixes`.
    pub delimited: bool,
    /// The `next` of the previous page.
    pub token: Option<String>,
}

/// Every way a store operation can fail.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A conditional write lost its race: the object exists (create-only), or
    /// changed or vanished since the ETag was read (put-if-match).
    #[error("conditional write on {key} lost its race")]
    Conflict { key: String },
    /// The bucket itself does not exist.
    #[error("bucket {bucket} does not exist")]
    NoSuchBucket { bucket: String },
    /// The store refused our credentials.
    #[error("access to {bucket} denied: {detail}")]
    Denied { bucket: String, detail: String },
    /// The store could not be reached or failed on its side; try again later.
    #[error("object store unavailable: {0}")]
    Unavailable(String),
    /// A key the store cannot hold (see [`validate_key`]).
    #[error("invalid object key {key:?}: {rule}")]
    InvalidKey { key: String, rule: &'static str },
    /// A local I/O failure of the file store.
    #[error("object store I/O error on {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    /// True when retrying later may succeed without anyone changing anything.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            StoreError::Unavailable(_)
                | StoreError::NoSuchBucket { .. }
                | StoreError::Denied { .. }
        )
    }
}

/// The bucket contract. Every method is safe to call concurrently, from many
/// tasks and from many processes sharing the same bucket.
pub trait ObjectStore: Send + Sync + fmt::Debug {
    /// The object's bytes and ETag, or `None` when it does not exist.
    fn get<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Object>>;
    /// The object's ETag, size and modification time, or `None`.
    fn head<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Meta>>;
    /// Writes only when the key does not exist yet (`If-None-Match: *`).
    fn put_create<'a>(&'a self, key: &'a str, bytes: Vec<u8>) -> StoreFuture<'a, ETag>;
    /// Writes only when the object still has `etag` (`If-Match`).
    fn put_if_match<'a>(
        &'a self,
        key: &'a str,
        bytes: Vec<u8>,
        etag: &'a ETag,
    ) -> StoreFuture<'a, ETag>;
    /// Writes unconditionally.
    fn put<'a>(&'a self, key: &'a str, bytes: Vec<u8>) -> StoreFuture<'a, ETag>;
    /// Writes a local file as the object, unconditionally, streaming it:
    /// the bytes are never held in memory whole.
    fn put_file<'a>(&'a self, key: &'a str, path: &'a Path) -> StoreFuture<'a, ETag>;
    /// Streams the object into a local file (created or truncated); `false`
    /// when the object does not exist.
    fn get_file<'a>(&'a self, key: &'a str, path: &'a Path) -> StoreFuture<'a, bool>;
    /// Removes the object; removing a missing object succeeds.
    fn delete<'a>(&'a self, key: &'a str) -> StoreFuture<'a, ()>;
    /// One page (at most 1 000 entries) of keys under a prefix.
    fn list<'a>(&'a self, request: ListRequest) -> StoreFuture<'a, ListPage>;
    /// Where the store lives, for logs and `/v1/state` (`file:///…`, `s3://…`).
    fn location(&self) -> String;
    /// `"file"` or `"s3"`.
    fn kind(&self) -> &'static str;
    /// Requests made so far, when this store counts them.
    fn requests(&self) -> Option<counted::Requests> {
        None
    }
}

/// Every page of a listing, gathered.
pub async fn list_all(
    store: &dyn ObjectStore,
    prefix: &str,
    delimited: bool,
) -> Result<ListPage, StoreError> {
    let mut all = ListPage::default();
    let mut token = None;
    loop {
        let page = store
            .list(ListRequest {
                prefix: prefix.to_owned(),
                delimited,
                token,
            })
            .await?;
        all.objects.extend(page.objects);
        all.prefixes.extend(page.prefixes);
        match page.next {
            Some(next) => token = Some(next),
            None => return Ok(all),
        }
    }
}

/// Opens the store a bucket URL names.
pub async fn open(url: &BucketUrl, s3: &S3Settings) -> Result<Arc<dyn ObjectStore>, StoreError> {
    Ok(match url {
        BucketUrl::File(root) => Arc::new(file::FileStore::open(root)?),
        BucketUrl::S3 { bucket, prefix } => {
            Arc::new(s3::S3Store::connect(bucket, prefix.as_deref(), s3).await)
        }
    })
}

/// The largest page a listing returns, as on S3.
pub const PAGE_SIZE: usize = 1000;
