//! Route handlers, one file per surface.

pub mod applications;
pub mod deploys;
pub mod domains;
pub mod fleet;
pub mod health;
pub mod ingress;
pub mod operators;
pub mod state;
pub mod storage;
