//! # scafo
//!
//! A self-hosted platform for Workers-style applications: projects with a
//! `wrangler.jsonc`, served on a fleet of ordinary servers.
//!
//! ## Bird's-eye view
//!
//! One binary. `scafo sail` runs a **node**: an HTTP control API (axum), a
//! heartbeat, and — as the platform grows — the reconcile loop and Celld, the
//! runtime that runs applications on workerd. Every durable fact of a fleet
//! lives in one **registry** in an object-store bucket (S3, anything
//! S3-compatible, or a local directory), written only by compare-and-swap on
//! ETags. Nodes keep no durable truth of their own, so any node answers any
//! call and a restarted node loses nothing. The other subcommands are HTTP
//! clients of any node.
//!
//! ## Code map (in reading order)
//!
//! - [`cli`]: clap definitions for every subcommand; also generates the
//!   committed completions and man pages.
//! - [`config`]: node configuration, defaults < file < env < flags, validated once.
//! - [`names`]: ids, names, the host claim rule and scope patterns, parsed once.
//! - [`wire`]: JSON shapes that cross HTTP (problem documents, answers, the
//!   deploy metadata header, the routing document).
//! - [`auth`]: Ed25519 JWK key files and EdDSA tokens; workload OIDC tokens
//!   (RS256/ES256 against an issuer's JWK Set).
//! - [`store`]: the `ObjectStore` trait with `file` and `s3` backends (and a
//!   request-counting wrapper).
//! - [`registry`]: typed records over the store, the key layout, the CAS helper.
//! - [`artifact`]: checking and unpacking deploy archives.
//! - [`celld`]: the runtime — wrangler config, bundling, workerd config,
//!   supervised processes.
//! - [`node`]: `scafo sail` — `run(config, listener, shutdown)`; the router and
//!   routes; the caller extractors (and workload-token verification with the
//!   issuers' cached keys); the reconcile pass, the carrier, the
//!   coordinator (lease, assignment, deletion, reaper) and the routing document.
//! - [`client`]: the HTTP client every command uses (credentials, tokens, problems).
//! - [`cmd`]: one file per subcommand; `main.rs` maps their failures to exit codes.
//! - [`ui`]: terminal output for the client commands.
//!
//! The crate is a library with a thin `main.rs` so integration tests and the
//! benchmark drive the same store, registry and node code the binary runs.
//!
//! ## Invariants
//!
//! - Only `store/` talks to the object store; only `registry/keys.rs` knows
//!   the key layout; every registry mutation goes through
//!   [`registry::Registry::update`].
//! - Every record carries `"v": 1` and a writer nonce; nothing is written blind.
//! - `node/` never imports `cmd/`, `client/` or `ui`; nothing in `node/`
//!   prints to stdout. `celld/` serves no HTTP route and does no registry I/O.
//! - Every failure a route answers is an RFC 9457 document whose `code` comes
//!   from the one table in [`wire::problem`]; a 5xx carries a request id,
//!   never internal error text.
//! - No token, key or request body is ever logged.
//! - No `unwrap`/`expect` on anything a caller, a file or the network controls
//!   (enforced by the crate's clippy lints).

pub mod artifact;
pub mod auth;
pub mod celld;
pub mod cli;
pub mod client;
pub mod cmd;
pub mod config;
pub mod names;
pub mod node;
pub mod registry;
pub mod store;
pub mod ui;
pub mod wire;

/// This build's version, as `scafo --version` and the health route report it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
