//! Route handlers, one file per surface.

pub mod health;
