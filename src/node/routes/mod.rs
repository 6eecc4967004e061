//! Route handlers, one file per surface.

pub mod deploys;
pub mod fleet;
pub mod health;
pub mod operators;
pub mod state;
