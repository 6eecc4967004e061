//! What this node runs right now: every release Celld holds (starting,
//! running or failed), and what the node reports about them in its record
//! and in `/v1/state`. Owned by the reconcile pass; read by the heartbeat.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::celld::{Celld, Failure, Running};
use crate::names::{AppName, DeployId};
use crate::registry::{ApplicationRecord, CelldInfo, NodeFailure, Serving};
use crate::wire::Timestamp;
use crate::wire::answers::{ReconcileView, ServedApplication};

#[derive(Debug)]
pub enum Slot {
    Starting,
    Running {
        url: String,
        process: Option<Running>,
    },
    Failed {
        failure: Failure,
        at: Timestamp,
    },
}

#[derive(Debug)]
pub struct Runtime {
    /// `None` when this node has no workerd; `celld_error` says why.
    pub celld: Option<Celld>,
    pub celld_error: Option<String>,
    pub releases: Mutex<BTreeMap<DeployId, (AppName, Slot)>>,
    /// The applications as the last pass read them.
    pub applications: Mutex<Vec<ApplicationRecord>>,
    /// Where each application is placed, as the last pass saw it.
    pub placements: Mutex<BTreeMap<String, crate::registry::Placement>>,
    pub stats: Mutex<ReconcileView>,
    /// Set while the node shuts down: it serves nothing any more as far as
    /// its node record (and so every routing document) says.
    pub leaving: std::sync::atomic::AtomicBool,
}

impl Runtime {
    pub fn new(celld: Result<Celld, String>) -> Self {
        let (celld, celld_error) = match celld {
            Ok(celld) => (Some(celld), None),
            Err(why) => (None, Some(why)),
        };
        Runtime {
            celld,
            celld_error,
            releases: Mutex::new(BTreeMap::new()),
            applications: Mutex::new(Vec::new()),
            placements: Mutex::new(BTreeMap::new()),
            leaving: std::sync::atomic::AtomicBool::new(false),
            stats: Mutex::new(ReconcileView {
                ready: false,
                passes: 0,
                last_pass_at: None,
                last_pass_ms: None,
                last_error: None,
            }),
        }
    }

    pub fn celld_info(&self) -> Option<CelldInfo> {
        self.celld.as_ref().map(Celld::info)
    }

    /// The running release each application is served by here: its pending
    /// release once that runs, else its live one.
    pub fn serving(&self) -> BTreeMap<String, Serving> {
        if self.leaving.load(std::sync::atomic::Ordering::Relaxed) {
            return BTreeMap::new();
        }
        let releases = lock(&self.releases);
        let applications = lock(&self.applications);
        let mut serving = BTreeMap::new();
        for app in applications
            .iter()
            .filter(|a| !a.blocked && a.retired.is_none())
        {
            for deploy in [&app.release.pending, &app.release.live]
                .into_iter()
                .flatten()
            {
                if let Some((_, Slot::Running { url, .. })) = releases.get(deploy) {
                    serving.insert(
                        app.name.to_string(),
                        Serving {
                            deploy: deploy.to_string(),
                            state: "live".into(),
                            url: url.clone(),
                        },
                    );
                    break;
                }
            }
        }
        serving
    }

    /// Releases this node failed to run, by deploy id.
    pub fn failures(&self) -> BTreeMap<String, NodeFailure> {
        lock(&self.releases)
            .iter()
            .filter_map(|(deploy, (_, slot))| match slot {
                Slot::Failed { failure, at } => Some((
                    deploy.to_string(),
                    NodeFailure {
                        code: failure.code.to_owned(),
                        detail: failure.detail.clone(),
                        at: *at,
                    },
                )),
                _ => None,
            })
            .collect()
    }

    /// What `/v1/state` lists as this node's applications.
    pub fn served_applications(&self) -> Vec<ServedApplication> {
        let serving = self.serving();
        let failures = self.failures();
        lock(&self.applications)
            .iter()
            .filter(|app| !app.blocked && app.retired.is_none())
            .filter(|app| app.release.live.is_some() || app.release.pending.is_some())
            .map(|app| {
                let here = serving.get(app.name.as_str());
                let failed = app
                    .release
                    .pending
                    .as_ref()
                    .is_some_and(|p| failures.contains_key(p.as_str()));
                ServedApplication {
                    name: app.name.to_string(),
                    live: app.release.live.as_ref().map(ToString::to_string),
                    pending: app.release.pending.as_ref().map(ToString::to_string),
                    state: match (here, failed) {
                        (Some(_), _) => "serving".into(),
                        (None, true) => "failed".into(),
                        (None, false) => "starting".into(),
                    },
                    url: here.map(|s| s.url.clone()),
                }
            })
            .collect()
    }
}

/// Locks a mutex, taking the data even if a panicking holder poisoned it.
pub fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
