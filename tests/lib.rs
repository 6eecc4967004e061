//! scafo's integration tests, built as one test binary: the object-store
//! conformance suite (file store and moto), the registry's CAS helper, and
//! the real `scafo` binary driven over HTTP. `tests/run` runs them all with
//! the pinned peers installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

mod applications;
mod auth;
mod cli;
mod client;
mod deploys;
mod fleet;
mod ingress;
mod operators;
mod registry;
mod request_layer;
mod sail;
mod storage;
mod store;
mod workload;
