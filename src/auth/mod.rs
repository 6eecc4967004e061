//! Keys and tokens. Pure: nothing here knows HTTP routes or the bucket.

pub mod keyfile;
pub mod token;

pub use keyfile::{KeyFileError, PublicJwk, SecretKey};
