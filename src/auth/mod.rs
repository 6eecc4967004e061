//! Keys and tokens. Pure where possible: nothing here knows HTTP routes or
//! the bucket.

pub mod keyfile;

pub use keyfile::{KeyFileError, PublicJwk, SecretKey};
