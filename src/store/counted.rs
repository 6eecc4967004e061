//! A store that counts the requests it passes on, so a node can say what
//! its registry traffic is (`/v1/state` → `registry.requests`).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::{ETag, ListPage, ListRequest, Meta, Object, ObjectStore, StoreFuture};

/// Requests made so far, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requests {
    pub get: u64,
    pub head: u64,
    pub put: u64,
    pub delete: u64,
    pub list: u64,
}

#[derive(Debug, Default)]
struct Counters {
    get: AtomicU64,
    head: AtomicU64,
    put: AtomicU64,
    delete: AtomicU64,
    list: AtomicU64,
}

#[derive(Debug)]
pub struct Counted {
    inner: Arc<dyn ObjectStore>,
    counters: Counters,
}

impl Counted {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Counted {
            inner,
            counters: Counters::default(),
        }
    }
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl ObjectStore for Counted {
    fn get<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Object>> {
        bump(&self.counters.get);
        self.inner.get(key)
    }
    fn head<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Meta>> {
        bump(&self.counters.head);
        self.inner.head(key)
    }
    fn put_create<'a>(&'a self, key: &'a str, bytes: Vec<u8>) -> StoreFuture<'a, ETag> {
        bump(&self.counters.put);
        self.inner.put_create(key, bytes)
    }
    fn put_if_match<'a>(
        &'a self,
        key: &'a str,
        bytes: Vec<u8>,
        etag: &'a ETag,
    ) -> StoreFuture<'a, ETag> {
        bump(&self.counters.put);
        self.inner.put_if_match(key, bytes, etag)
    }
    fn put<'a>(&'a self, key: &'a str, bytes: Vec<u8>) -> StoreFuture<'a, ETag> {
        bump(&self.counters.put);
        self.inner.put(key, bytes)
    }
    fn put_file<'a>(&'a self, key: &'a str, path: &'a Path) -> StoreFuture<'a, ETag> {
        bump(&self.counters.put);
        self.inner.put_file(key, path)
    }
    fn get_file<'a>(&'a self, key: &'a str, path: &'a Path) -> StoreFuture<'a, bool> {
        bump(&self.counters.get);
        self.inner.get_file(key, path)
    }
    fn delete<'a>(&'a self, key: &'a str) -> StoreFuture<'a, ()> {
        bump(&self.counters.delete);
        self.inner.delete(key)
    }
    fn list<'a>(&'a self, request: ListRequest) -> StoreFuture<'a, ListPage> {
        bump(&self.counters.list);
        self.inner.list(request)
    }
    fn location(&self) -> String {
        self.inner.location()
    }
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    fn requests(&self) -> Option<Requests> {
        let c = &self.counters;
        Some(Requests {
            get: c.get.load(Ordering::Relaxed),
            head: c.head.load(Ordering::Relaxed),
            put: c.put.load(Ordering::Relaxed),
            delete: c.delete.load(Ordering::Relaxed),
            list: c.list.load(Ordering::Relaxed),
        })
    }
}
