//! Ed25519 keys as JWK files (`{"kty":"OKP","crv":"Ed25519","x":…,"d":…}`).
//!
//! A key file holding `d` is a secret: it is written 0600 and refused when
//! anyone but its owner may read it.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

/// The public half as it is registered (`publicKey` in records).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicJwk {
    pub kty: String,
    pub crv: String,
    pub x: String,
}

impl PublicJwk {
    /// The Ed25519 key, when this is a well-formed Ed25519 JWK.
    pub fn decode(&self) -> Option<VerifyingKey> {
        if self.kty != "OKP" || self.crv != "Ed25519" {
            return None;
        }
        let bytes: [u8; 32] = URL_SAFE_NO_PAD.decode(&self.x).ok()?.try_into().ok()?;
        VerifyingKey::from_bytes(&bytes).ok()
    }

    pub fn from_verifying_key(key: &VerifyingKey) -> Self {
        PublicJwk {
            kty: "OKP".into(),
            crv: "Ed25519".into(),
            x: URL_SAFE_NO_PAD.encode(key.as_bytes()),
        }
    }
}

/// The file form: the public half plus `d`, and an optional `kid`.
#[derive(Serialize, Deserialize)]
struct SecretJwk {
    kty: String,
    crv: String,
    x: String,
    d: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kid: Option<String>,
}

/// An Ed25519 signing key loaded from (or about to be written to) a file.
pub struct SecretKey {
    signing: SigningKey,
    kid: Option<String>,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret itself.
        f.debug_struct("SecretKey")
            .field("kid", &self.kid)
            .field("x", &self.public().x)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    #[error("cannot read key file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write key file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("key file {path} may be read by others (mode {mode:o}); run `chmod 600 {path}`")]
    TooOpen { path: PathBuf, mode: u32 },
    #[error("key file {path} is not an Ed25519 JWK with \"d\": {reason}")]
    Malformed { path: PathBuf, reason: String },
}

impl SecretKey {
    /// A fresh key from the operating system's randomness.
    pub fn generate(kid: Option<String>) -> Result<Self, getrandom::Error> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed)?;
        Ok(SecretKey {
            signing: SigningKey::from_bytes(&seed),
            kid,
        })
    }

    pub fn public(&self) -> PublicJwk {
        PublicJwk::from_verifying_key(&self.signing.verifying_key())
    }

    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    pub fn signing_key(&self) -> &SigningKey {
        &self.signing
    }

    /// Reads a secret key file, refusing one that group or others may read.
    pub fn read(path: &Path) -> Result<Self, KeyFileError> {
        let read_err = |source| KeyFileError::Read {
            path: path.to_owned(),
            source,
        };
        let mode = fs::metadata(path).map_err(read_err)?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(KeyFileError::TooOpen {
                path: path.to_owned(),
                mode,
            });
        }
        let text = fs::read(path).map_err(read_err)?;
        let malformed = |reason: String| KeyFileError::Malformed {
            path: path.to_owned(),
            reason,
        };
        let jwk: SecretJwk = serde_json::from_slice(&text).map_err(|e| malformed(e.to_string()))?;
        if jwk.kty != "OKP" || jwk.crv != "Ed25519" {
            return Err(malformed(format!("kty {:?} crv {:?}", jwk.kty, jwk.crv)));
        }
        let seed: [u8; 32] = URL_SAFE_NO_PAD
            .decode(jwk.d.as_bytes())
            .ok()
            .and_then(|d| d.try_into().ok())
            .ok_or_else(|| malformed("\"d\" must be 32 bytes of base64url".into()))?;
        let key = SecretKey {
            signing: SigningKey::from_bytes(&seed),
            kid: jwk.kid,
        };
        if key.public().x != jwk.x {
            return Err(malformed("\"x\" is not the public half of \"d\"".into()));
        }
        Ok(key)
    }

    /// Writes the key to a new file, mode 0600; refuses to overwrite one.
    pub fn write_new(&self, path: &Path) -> Result<(), KeyFileError> {
        let public = self.public();
        let jwk = SecretJwk {
            kty: public.kty,
            crv: public.crv,
            x: public.x,
            d: URL_SAFE_NO_PAD.encode(self.signing.to_bytes()),
            kid: self.kid.clone(),
        };
        let mut text = serde_json::to_vec_pretty(&jwk).map_err(|e| KeyFileError::Write {
            path: path.to_owned(),
            source: e.into(),
        })?;
        text.push(b'\n');
        write_secret_new(path, &text).map_err(|source| KeyFileError::Write {
            path: path.to_owned(),
            source,
        })
    }
}

/// Creates `path` with mode 0600 and `bytes`, synced; fails when it exists.
pub fn write_secret_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_0600_and_reads_back() -> Result<(), Box<dyn std::error::Error>> {
        let dir = std::env::temp_dir().join(format!("scafo-key-{}", std::process::id()));
        fs::create_dir_all(&dir)?;
        let path = dir.join("k.jwk");
        let _ = fs::remove_file(&path);
        let key = SecretKey::generate(Some("op-a".into()))?;
        key.write_new(&path)?;
        assert_eq!(fs::metadata(&path)?.permissions().mode() & 0o777, 0o600);
        let back = SecretKey::read(&path)?;
        assert_eq!(back.public(), key.public());
        assert_eq!(back.kid(), Some("op-a"));
        assert!(key.write_new(&path).is_err(), "never overwrites");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644))?;
        assert!(matches!(
            SecretKey::read(&path),
            Err(KeyFileError::TooOpen { .. })
        ));
        fs::remove_dir_all(&dir)?;
        Ok(())
    }
}
