//! The node's state directory: created 0700, holding the node key (0600,
//! created once), the ingress token file (0600) and the bound API address.

use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::NodeError;
use crate::auth::SecretKey;
use crate::auth::keyfile::write_secret_new;
use crate::config::is_token;

pub const NODE_KEY_FILE: &str = "node.jwk";
pub const INGRESS_TOKEN_FILE: &str = "ingress-token";
pub const API_ADDR_FILE: &str = "api-addr";

/// What the node keeps on local disk.
#[derive(Debug)]
pub struct LocalState {
    pub dir: PathBuf,
    pub node_key: SecretKey,
    /// Every admitted ingress token; the first is the one in the file.
    pub ingress_tokens: Vec<String>,
}

/// Prepares the state directory and loads (or creates) what it holds.
pub fn prepare(dir: &Path, configured_tokens: &[String]) -> Result<LocalState, NodeError> {
    let fail =
        |what: &str, e: std::io::Error| NodeError::State(format!("{what} {}: {e}", dir.display()));
    fs::create_dir_all(dir).map_err(|e| fail("cannot create state directory", e))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .map_err(|e| fail("cannot restrict state directory", e))?;

    let key_path = dir.join(NODE_KEY_FILE);
    let node_key = match SecretKey::read(&key_path) {
        Ok(key) => key,
        Err(crate::auth::KeyFileError::Read { source, .. })
            if source.kind() == ErrorKind::NotFound =>
        {
            let key = SecretKey::generate(None)
                .map_err(|e| NodeError::State(format!("no randomness: {e}")))?;
            key.write_new(&key_path)
                .map_err(|e| NodeError::State(e.to_string()))?;
            tracing::info!(path = %key_path.display(), "created node key");
            key
        }
        Err(e) => return Err(NodeError::State(e.to_string())),
    };

    let token_path = dir.join(INGRESS_TOKEN_FILE);
    let ingress_tokens = if configured_tokens.is_empty() {
        vec![read_or_mint_token(&token_path)?]
    } else {
        write_token(&token_path, &configured_tokens[0])?;
        configured_tokens.to_vec()
    };
    Ok(LocalState {
        dir: dir.to_owned(),
        node_key,
        ingress_tokens,
    })
}

fn read_or_mint_token(path: &Path) -> Result<String, NodeError> {
    match fs::read_to_string(path) {
        Ok(text) => {
            let mode = fs::metadata(path)
                .map(|m| m.permissions().mode() & 0o777)
                .unwrap_or(0);
            if mode & 0o077 != 0 {
                return Err(NodeError::State(format!(
                    "{} may be read by others (mode {mode:o}); run `chmod 600 {}`",
                    path.display(),
                    path.display()
                )));
            }
            let token = text.trim().to_owned();
            if !is_token(&token) {
                return Err(NodeError::State(format!(
                    "{} does not hold a valid ingress token ({}); delete it to mint a new one",
                    path.display(),
                    crate::config::TOKEN_RULE
                )));
            }
            Ok(token)
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes)
                .map_err(|e| NodeError::State(format!("no randomness: {e}")))?;
            let token = URL_SAFE_NO_PAD.encode(bytes);
            write_token(path, &token)?;
            tracing::info!(path = %path.display(), "minted an ingress token");
            Ok(token)
        }
        Err(e) => Err(NodeError::State(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

/// Writes the token file (0600) through a temp file, unless it already
/// holds exactly this token.
fn write_token(path: &Path, token: &str) -> Result<(), NodeError> {
    if fs::read_to_string(path).is_ok_and(|t| t.trim() == token) {
        return Ok(());
    }
    let tmp = path.with_extension("tmp");
    let _ = fs::remove_file(&tmp);
    write_secret_new(&tmp, format!("{token}\n").as_bytes())
        .and_then(|()| fs::rename(&tmp, path))
        .map_err(|e| NodeError::State(format!("cannot write {}: {e}", path.display())))
}

/// Records the bound API address for scripts and tests (`--listen …:0`).
pub fn write_api_addr(dir: &Path, addr: &str) -> Result<(), NodeError> {
    let tmp = dir.join(format!("{API_ADDR_FILE}.tmp"));
    fs::write(&tmp, format!("{addr}\n"))
        .and_then(|()| fs::rename(&tmp, dir.join(API_ADDR_FILE)))
        .map_err(|e| NodeError::State(format!("cannot write {API_ADDR_FILE}: {e}")))
}
