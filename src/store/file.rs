//! The embedded object store: a directory on local disk with the guarantees
//! of S3 conditional writes, also between several processes sharing it.
//!
//! Layout: each key segment is percent-encoded (everything but `A-Z a-z 0-9 .
//! _ -`), directories carry the encoded segment and object files carry it
//! followed by `~`. A raw `~` never survives encoding, so `a` (the object) and
//! `a/b` (under the directory) never collide, and the helper files — `…~lock`
//! per key, `~tmp-…` while writing — never read as objects.
//!
//! Every write takes the key's `flock`, writes a temp file, fsyncs it, renames
//! it over the object and fsyncs the directory, so a reader sees the old bytes
//! or the new ones, never a torn file. The ETag is the content's SHA-256, so
//! it is the same in every process without any shared state.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::{
    ETag, ListPage, ListRequest, Meta, Object, ObjectStore, PAGE_SIZE, StoreError, StoreFuture,
    validate_key,
};

/// The longest encoded segment, leaving room for the `~lock` suffix.
const MAX_SEGMENT: usize = 250;

#[derive(Debug, Clone)]
pub struct FileStore {
    root: Arc<PathBuf>,
}

impl FileStore {
    /// Opens (creating when needed) the store rooted at `root`.
    pub fn open(root: &Path) -> Result<Self, StoreError> {
        fs::create_dir_all(root).map_err(|e| io(root, e))?;
        Ok(FileStore {
            root: Arc::new(root.to_owned()),
        })
    }

    /// Runs blocking file work off the async threads.
    fn blocking<'a, T: Send + 'static>(
        &'a self,
        key: &str,
        work: impl FnOnce(&Path, &str) -> Result<T, StoreError> + Send + 'static,
    ) -> StoreFuture<'a, T> {
        let root = Arc::clone(&self.root);
        let key = key.to_owned();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || work(&root, &key))
                .await
                .map_err(|e| StoreError::Unavailable(format!("file store task failed: {e}")))?
        })
    }
}

impl ObjectStore for FileStore {
    fn get<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Object>> {
        self.blocking(key, |root, key| {
            let paths = KeyPaths::new(root, key)?;
            Ok(read(&paths.object)?.map(|bytes| Object {
                etag: etag_of(&bytes),
                bytes,
            }))
        })
    }

    fn head<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Meta>> {
        self.blocking(key, |root, key| {
            let paths = KeyPaths::new(root, key)?;
            meta(&paths.object, key)
        })
    }

    fn put_create<'a>(&'a self, key: &'a str, bytes: Vec<u8>) -> StoreFuture<'a, ETag> {
        self.blocking(key, move |root, key| {
            let paths = KeyPaths::new(root, key)?;
            let _lock = paths.lock()?;
            if paths.object.exists() {
                return Err(StoreError::Conflict {
                    key: key.to_owned(),
                });
            }
            paths.replace(&bytes)
        })
    }

    fn put_if_match<'a>(
        &'a self,
        key: &'a str,
        bytes: Vec<u8>,
        etag: &'a ETag,
    ) -> StoreFuture<'a, ETag> {
        let expected = etag.clone();
        self.blocking(key, move |root, key| {
            let paths = KeyPaths::new(root, key)?;
            let _lock = paths.lock()?;
            match read(&paths.object)? {
                Some(current) if etag_of(&current) == expected => paths.replace(&bytes),
                _ => Err(StoreError::Conflict {
                    key: key.to_owned(),
                }),
            }
        })
    }

    fn put<'a>(&'a self, key: &'a str, bytes: Vec<u8>) -> StoreFuture<'a, ETag> {
        self.blocking(key, move |root, key| {
            let paths = KeyPaths::new(root, key)?;
            let _lock = paths.lock()?;
            paths.replace(&bytes)
        })
    }

    fn put_file<'a>(&'a self, key: &'a str, path: &'a Path) -> StoreFuture<'a, ETag> {
        let source = path.to_owned();
        self.blocking(key, move |root, key| {
            let paths = KeyPaths::new(root, key)?;
            let _lock = paths.lock()?;
            let mut file = File::open(&source).map_err(|e| io(&source, e))?;
            paths.replace_from(&mut file)
        })
    }

    fn get_file<'a>(&'a self, key: &'a str, path: &'a Path) -> StoreFuture<'a, bool> {
        let target = path.to_owned();
        self.blocking(key, move |root, key| {
            let paths = KeyPaths::new(root, key)?;
            match fs::copy(&paths.object, &target) {
                Ok(_) => Ok(true),
                Err(e) if e.kind() == ErrorKind::NotFound && !paths.object.exists() => Ok(false),
                Err(e) => Err(io(&target, e)),
            }
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> StoreFuture<'a, ()> {
        self.blocking(key, |root, key| {
            let paths = KeyPaths::new(root, key)?;
            let lock = paths.lock()?;
            match fs::remove_file(&paths.object) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(io(&paths.object, e)),
            }
            // Removing the lock file while holding it is safe: `lock()` checks
            // that the file it locked is still the one at the path.
            let _ = fs::remove_file(&paths.lock);
            drop(lock);
            sync_dir(&paths.dir)
        })
    }

    fn list<'a>(&'a self, request: ListRequest) -> StoreFuture<'a, ListPage> {
        self.blocking("", move |root, _| list(root, &request))
    }

    fn location(&self) -> String {
        format!("file://{}", self.root.display())
    }

    fn kind(&self) -> &'static str {
        "file"
    }
}

/// The files behind one key.
struct KeyPaths {
    dir: PathBuf,
    object: PathBuf,
    lock: PathBuf,
}

impl KeyPaths {
    fn new(root: &Path, key: &str) -> Result<Self, StoreError> {
        validate_key(key)?;
        let mut dir = root.to_owned();
        let mut segments = key.split('/').peekable();
        let mut leaf = String::new();
        while let Some(segment) = segments.next() {
            let encoded = encode(segment);
            if encoded.len() > MAX_SEGMENT {
                return Err(StoreError::InvalidKey {
                    key: key.to_owned(),
                    rule: "each segment must encode to at most 250 bytes on the file store",
                });
            }
            if segments.peek().is_some() {
                dir.push(encoded);
            } else {
                leaf = encoded;
            }
        }
        Ok(KeyPaths {
            object: dir.join(format!("{leaf}~")),
            lock: dir.join(format!("{leaf}~lock")),
            dir,
        })
    }

    /// Takes the key's exclusive lock, waiting for any other holder.
    fn lock(&self) -> Result<File, StoreError> {
        create_dirs(&self.dir)?;
        loop {
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .mode(0o600)
                .open(&self.lock)
                .map_err(|e| io(&self.lock, e))?;
            file.lock().map_err(|e| io(&self.lock, e))?;
            let held = file.metadata().map_err(|e| io(&self.lock, e))?;
            // A deleter may have unlinked the file between our open and our
            // lock; then we hold a lock nobody else can see, so start over.
            match fs::metadata(&self.lock) {
                Ok(now) if now.ino() == held.ino() && now.dev() == held.dev() => return Ok(file),
                Ok(_) => continue,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(io(&self.lock, e)),
            }
        }
    }

    /// Atomically replaces the object (the caller holds the lock).
    fn replace(&self, bytes: &[u8]) -> Result<ETag, StoreError> {
        self.replace_from(&mut &bytes[..])
    }

    /// Atomically replaces the object with what `source` yields, hashing
    /// as it copies (the caller holds the lock).
    fn replace_from(&self, source: &mut dyn Read) -> Result<ETag, StoreError> {
        let tmp = self
            .dir
            .join(format!("~tmp-{:016x}", getrandom::u64().unwrap_or(0)));
        let written = (|| {
            let mut file = OpenOptions::new()
                .create_new(true)
                .write(true)
                .mode(0o600)
                .open(&tmp)?;
            let mut hasher = Sha256::new();
            let mut buffer = vec![0u8; 64 * 1024];
            loop {
                let n = source.read(&mut buffer)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buffer[..n]);
                file.write_all(&buffer[..n])?;
            }
            file.sync_all()?;
            fs::rename(&tmp, &self.object)?;
            Ok::<_, std::io::Error>(hasher.finalize())
        })();
        let digest = match written {
            Ok(digest) => digest,
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                return Err(io(&self.object, e));
            }
        };
        sync_dir(&self.dir)?;
        Ok(etag_from_digest(&digest))
    }
}

fn list(root: &Path, request: &ListRequest) -> Result<ListPage, StoreError> {
    let (base, partial) = match request.prefix.rfind('/') {
        Some(i) => request.prefix.split_at(i + 1),
        None => ("", request.prefix.as_str()),
    };
    let mut dir = root.to_owned();
    for segment in base.split('/').filter(|s| !s.is_empty()) {
        if segment == "." || segment == ".." {
            return Ok(ListPage::default());
        }
        dir.push(encode(segment));
    }
    // (key, path) for objects; (prefix, None) for common prefixes.
    let mut entries: Vec<(String, Option<PathBuf>)> = Vec::new();
    for (name, path, is_dir) in read_dir(&dir)? {
        if !name.starts_with(partial) {
            continue;
        }
        let key = format!("{base}{name}");
        if !is_dir {
            entries.push((key, Some(path)));
        } else if request.delimited {
            if has_objects(&path)? {
                entries.push((format!("{key}/"), None));
            }
        } else {
            walk(&path, &format!("{key}/"), &mut entries)?;
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let start = match &request.token {
        Some(token) => entries.partition_point(|(key, _)| key.as_str() <= token.as_str()),
        None => 0,
    };
    let rest = &entries[start..];
    let page = &rest[..rest.len().min(PAGE_SIZE)];
    let mut out = ListPage {
        next: (rest.len() > PAGE_SIZE).then(|| page[page.len() - 1].0.clone()),
        ..ListPage::default()
    };
    for (key, path) in page {
        match path {
            // An object deleted since the directory was read is simply not listed.
            Some(path) => out.objects.extend(meta(path, key)?),
            None => out.prefixes.push(key.clone()),
        }
    }
    Ok(out)
}

/// Every object below `dir`, keyed under `prefix`.
fn walk(
    dir: &Path,
    prefix: &str,
    out: &mut Vec<(String, Option<PathBuf>)>,
) -> Result<(), StoreError> {
    for (name, path, is_dir) in read_dir(dir)? {
        if is_dir {
            walk(&path, &format!("{prefix}{name}/"), out)?;
        } else {
            out.push((format!("{prefix}{name}"), Some(path)));
        }
    }
    Ok(())
}

fn has_objects(dir: &Path) -> Result<bool, StoreError> {
    for (_, path, is_dir) in read_dir(dir)? {
        if !is_dir || has_objects(&path)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The decoded names in a directory: objects (`…~`) and subdirectories;
/// helper files are skipped. A missing directory is empty.
fn read_dir(dir: &Path) -> Result<Vec<(String, PathBuf, bool)>, StoreError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io(dir, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let file_type = entry.file_type().map_err(|e| io(&entry.path(), e))?;
        let (encoded, is_dir) = match name.strip_suffix('~') {
            Some(stem) if file_type.is_file() && !stem.contains('~') => (stem.to_owned(), false),
            None if file_type.is_dir() && !name.contains('~') => (name, true),
            _ => continue,
        };
        if let Some(decoded) = decode(&encoded) {
            out.push((decoded, entry.path(), is_dir));
        }
    }
    Ok(out)
}

fn read(path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path, e)),
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|e| io(path, e))?;
    Ok(Some(bytes))
}

fn meta(path: &Path, key: &str) -> Result<Option<Meta>, StoreError> {
    let Some(bytes) = read(path)? else {
        return Ok(None);
    };
    let modified = fs::metadata(path)
        .and_then(|m| m.modified())
        .map_err(|e| io(path, e))?;
    Ok(Some(Meta {
        key: key.to_owned(),
        etag: etag_of(&bytes),
        size: bytes.len() as u64,
        modified,
    }))
}

fn etag_of(bytes: &[u8]) -> ETag {
    etag_from_digest(&Sha256::digest(bytes))
}

fn etag_from_digest(digest: &[u8]) -> ETag {
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    ETag::new(format!("\"{hex}\""))
}

fn create_dirs(dir: &Path) -> Result<(), StoreError> {
    fs::create_dir_all(dir).map_err(|e| io(dir, e))
}

fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io(dir, e))
}

fn io(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn decode(encoded: &str) -> Option<String> {
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = encoded.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_and_keeps_namespaces_apart() {
        for segment in ["plain", "with space", "a+b%c", "ünï~", "x.y_z-0"] {
            let encoded = encode(segment);
            assert!(!encoded.contains('~') && !encoded.contains('/'));
            assert_eq!(decode(&encoded).as_deref(), Some(segment));
        }
    }
}
