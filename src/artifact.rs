//! Deploy artifacts: gzip'd tar archives of a project, checked before any
//! deploy record exists and unpacked safely where Celld runs them
//! (DESIGN §8). Only regular files and directories; no absolute paths, `..`,
//! links or devices; at most 10 000 entries; expanded size bounded; a
//! `wrangler.jsonc` (or else `wrangler.json`) at the root.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use flate2::read::GzDecoder;

/// The most entries an archive may hold.
pub const MAX_ENTRIES: usize = 10_000;

/// The wrangler config names, in the order they are looked for.
pub const CONFIG_NAMES: [&str; 2] = ["wrangler.jsonc", "wrangler.json"];

#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("the artifact expands past {limit} bytes (deploy.artifactBytes)")]
    TooLarge { limit: u64 },
    #[error("the artifact is not a gzip'd tar archive: {0}")]
    NotTarGz(String),
    #[error("archive entry {path:?}: {rule}")]
    Entry { path: String, rule: &'static str },
    #[error("the archive holds more than {MAX_ENTRIES} entries")]
    TooManyEntries,
    #[error("the archive has no wrangler.jsonc or wrangler.json at its root")]
    NoConfig,
    #[error("cannot unpack the artifact: {0}")]
    Io(#[from] io::Error),
}

/// What a valid archive holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    pub entries: usize,
    pub expanded_bytes: u64,
    /// `wrangler.jsonc` or `wrangler.json`.
    pub config: &'static str,
}

/// A reader that fails once more than `limit` bytes came through: the bound
/// on decompressed bytes, whatever the tar headers claim.
struct Bounded<R> {
    inner: R,
    remaining: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.remaining {
            return Err(io::Error::other(TOO_LARGE));
        }
        self.remaining -= n as u64;
        Ok(n)
    }
}

const TOO_LARGE: &str = "scafo: expanded past the bound";

fn map_io(err: io::Error, limit: u64) -> ArtifactError {
    let too_large = err
        .get_ref()
        .is_some_and(|inner| inner.to_string() == TOO_LARGE);
    if too_large {
        ArtifactError::TooLarge { limit }
    } else {
        ArtifactError::NotTarGz(err.to_string())
    }
}

/// A relative path made of normal components only.
fn safe_path(path: &Path) -> bool {
    !path.as_os_str().is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Walks the archive, checking every entry; `unpack_to` also writes them.
fn walk(
    reader: impl Read,
    limit: u64,
    unpack_to: Option<&Path>,
) -> Result<Inspection, ArtifactError> {
    let decoder = Bounded {
        inner: GzDecoder::new(reader),
        remaining: limit,
    };
    let mut archive = tar::Archive::new(decoder);
    let mut inspection = Inspection {
        entries: 0,
        expanded_bytes: 0,
        config: "",
    };
    let mut configs = [false; 2];
    let entries = archive.entries().map_err(|e| map_io(e, limit))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| map_io(e, limit))?;
        inspection.entries += 1;
        if inspection.entries > MAX_ENTRIES {
            return Err(ArtifactError::TooManyEntries);
        }
        let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let bad = |rule| ArtifactError::Entry {
            path: raw.clone(),
            rule,
        };
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind.is_dir()) {
            return Err(bad(match kind {
                tar::EntryType::Symlink | tar::EntryType::Link => "links are not allowed",
                tar::EntryType::Char | tar::EntryType::Block | tar::EntryType::Fifo => {
                    "devices and fifos are not allowed"
                }
                _ => "only regular files and directories are allowed",
            }));
        }
        let relative = entry
            .path()
            .map_err(|_| bad("the path is not valid"))?
            .into_owned();
        if relative.is_absolute() {
            return Err(bad("absolute paths are not allowed"));
        }
        if !safe_path(&relative) {
            return Err(bad("paths must stay inside the archive (no '..')"));
        }
        let size = entry
            .header()
            .size()
            .map_err(|_| bad("the size is not valid"))?;
        inspection.expanded_bytes = inspection
            .expanded_bytes
            .checked_add(size)
            .ok_or(ArtifactError::TooLarge { limit })?;
        if inspection.expanded_bytes > limit {
            return Err(ArtifactError::TooLarge { limit });
        }
        let normal: PathBuf = relative
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .collect();
        if kind.is_file() {
            for (i, name) in CONFIG_NAMES.iter().enumerate() {
                if normal == Path::new(name) {
                    configs[i] = true;
                }
            }
        }
        match unpack_to {
            Some(root) => {
                let target = root.join(&normal);
                if kind.is_dir() {
                    fs::create_dir_all(&target)?;
                } else {
                    if let Some(parent) = target.parent() {
                        fs::create_dir_all(parent)?;
                    }
                    let mut out = File::create(&target)?;
                    io::copy(&mut entry, &mut out).map_err(|e| map_io(e, limit))?;
                }
            }
            None => {
                io::copy(&mut entry, &mut io::sink()).map_err(|e| map_io(e, limit))?;
            }
        }
    }
    // Trailing bytes after the end-of-archive blocks still count.
    io::copy(archive.into_inner().by_ref(), &mut io::sink()).map_err(|e| map_io(e, limit))?;
    inspection.config = match configs {
        [true, _] => CONFIG_NAMES[0],
        [false, true] => CONFIG_NAMES[1],
        [false, false] => return Err(ArtifactError::NoConfig),
    };
    Ok(inspection)
}

/// Checks an archive without writing anything.
pub fn inspect(path: &Path, limit: u64) -> Result<Inspection, ArtifactError> {
    walk(File::open(path)?, limit, None)
}

/// Checks an archive from any reader (the client checks what it packed).
pub fn inspect_reader(reader: impl Read, limit: u64) -> Result<Inspection, ArtifactError> {
    walk(reader, limit, None)
}

/// Checks and unpacks an archive into `dest` (created).
pub fn unpack(path: &Path, dest: &Path, limit: u64) -> Result<Inspection, ArtifactError> {
    fs::create_dir_all(dest)?;
    walk(File::open(path)?, limit, Some(dest))
}
