//! The first admin (DESIGN §7). While the registry holds no operator at
//! all, a node registers one with scope `*`: the key of
//! `--bootstrap-admin <public JWK or key file>` under the JWK's `kid`
//! (`op-admin` when it has none), or else a key it generates into
//! `<state.dir>/admin.jwk` (0600) as `op-admin`. Once any operator exists,
//! nothing here runs again.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{NodeError, Shared};
use crate::auth::{KeyFileError, PublicJwk, SecretKey};
use crate::names::{OperatorId, ScopePattern};
use crate::registry::{RegistryError, Role, TrustedOperator, V1, keys};
use crate::wire::Timestamp;

pub const ADMIN_KEY_FILE: &str = "admin.jwk";
const DEFAULT_ID: &str = "op-admin";

/// The admin key named by `--bootstrap-admin`, read and checked at start.
#[derive(Debug, Clone)]
pub struct BootstrapAdmin {
    pub id: OperatorId,
    pub public: PublicJwk,
    pub path: PathBuf,
}

#[derive(Deserialize)]
struct JwkFile {
    kty: String,
    crv: String,
    x: String,
    #[serde(default)]
    d: Option<String>,
    #[serde(default)]
    kid: Option<String>,
}

/// Reads a public JWK or a key file (a secret one must be private to its owner).
pub fn read_admin_file(path: &Path) -> Result<BootstrapAdmin, NodeError> {
    let fail =
        |why: String| NodeError::State(format!("--bootstrap-admin {}: {why}", path.display()));
    let text = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let jwk: JwkFile =
        serde_json::from_slice(&text).map_err(|e| fail(format!("not a JWK: {e}")))?;
    let public = if jwk.d.is_some() {
        SecretKey::read(path)
            .map_err(|e: KeyFileError| fail(e.to_string()))?
            .public()
    } else {
        if jwk.kty != "OKP" || jwk.crv != "Ed25519" {
            return Err(fail("not an Ed25519 JWK (kty OKP, crv Ed25519)".into()));
        }
        PublicJwk {
            kty: jwk.kty,
            crv: jwk.crv,
            x: jwk.x,
        }
    };
    if public.decode().is_none() {
        return Err(fail("x is not a 32-byte base64url Ed25519 key".into()));
    }
    let id = OperatorId::parse(jwk.kid.as_deref().unwrap_or(DEFAULT_ID))
        .map_err(|rule| fail(format!("kid: {rule}")))?;
    Ok(BootstrapAdmin {
        id,
        public,
        path: path.to_owned(),
    })
}

/// Registers the first admin when the registry holds no operator.
pub async fn ensure_admin(shared: &Shared) -> Result<(), BootstrapError> {
    let registry = &shared.registry;
    if registry.any(&keys::OPERATORS).await? {
        return Ok(());
    }
    let admin = match &shared.bootstrap_admin {
        Some(admin) => admin.clone(),
        None => local_admin(&shared.local.dir)?,
    };
    let record = TrustedOperator {
        v: V1,
        id: admin.id.clone(),
        public_key: admin.public.clone(),
        role: Role::Admin,
        applications: vec![ScopePattern::All],
        supersedes: None,
        created_at: Timestamp::now(),
        created_by: "bootstrap".into(),
    };
    let stored = registry.create(&keys::operator(&admin.id), &record).await?;
    if stored.public_key == record.public_key {
        tracing::info!(operator = %admin.id, key = %admin.path.display(), "registered the bootstrap admin key");
    }
    Ok(())
}

/// `<state>/admin.jwk`: kept from an earlier start, or generated now.
fn local_admin(state: &Path) -> Result<BootstrapAdmin, BootstrapError> {
    let path = state.join(ADMIN_KEY_FILE);
    let key = match SecretKey::read(&path) {
        Ok(key) => key,
        Err(KeyFileError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            let key = SecretKey::generate(Some(DEFAULT_ID.into()))
                .map_err(|e| NodeError::State(format!("no randomness: {e}")))?;
            key.write_new(&path)
                .map_err(|e| NodeError::State(e.to_string()))?;
            key
        }
        Err(e) => return Err(NodeError::State(e.to_string()).into()),
    };
    let id = OperatorId::parse(key.kid().unwrap_or(DEFAULT_ID))
        .map_err(|rule| NodeError::State(format!("{}: kid {rule}", path.display())))?;
    Ok(BootstrapAdmin {
        id,
        public: key.public(),
        path,
    })
}

#[derive(Debug)]
pub enum BootstrapError {
    Fatal(NodeError),
    Registry(RegistryError),
}

impl From<RegistryError> for BootstrapError {
    fn from(err: RegistryError) -> Self {
        BootstrapError::Registry(err)
    }
}

impl From<NodeError> for BootstrapError {
    fn from(err: NodeError) -> Self {
        BootstrapError::Fatal(err)
    }
}
