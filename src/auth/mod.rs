//! Keys and tokens — operator and node tokens, workload OIDC tokens. Pure:
//! nothing here knows HTTP routes or the bucket.

pub mod jws;
pub mod keyfile;
pub mod oidc;
pub mod token;

pub use keyfile::{KeyFileError, PublicJwk, SecretKey};
