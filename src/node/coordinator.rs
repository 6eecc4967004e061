//! The coordinator lease (DESIGN §9): one node at a time holds
//! `registry/coordinator/lease.json`, taken and renewed by CAS, its epoch
//! rising with every new holder. The holder renews every TTL/3 and counts
//! its authority from the start of its last successful renewal on its own
//! monotonic clock, minus a margin; a renewal that fails ends it at once. A
//! challenger takes an expired lease only after seeing it unchanged for a
//! whole TTL on its own clock, so clocks of different machines never decide.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::runtime::lock;
use super::{NodeError, Shared};
use crate::names::NodeId;
use crate::registry::{Change, LeaseRecord, RegistryError, V1, keys};
use crate::store::ETag;
use crate::wire::Timestamp;

/// Who holds the lease, as far as this node can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// This node, with this epoch.
    Me(u64),
    /// Another node.
    Other(NodeId),
    /// Nobody: no lease, or one unchanged for a whole TTL.
    Nobody,
}

#[derive(Debug, Default)]
struct Seen {
    /// The lease as last read, and when it last changed on our clock.
    lease: Option<(LeaseRecord, ETag, Instant)>,
    /// Our own authority: epoch and until when.
    held: Option<(u64, Instant)>,
}

#[derive(Debug)]
pub struct Coordinator {
    ttl: Duration,
    seen: Mutex<Seen>,
    /// Deletions run one at a time on the holder.
    pub deletions: tokio::sync::Mutex<()>,
    /// When this node last wrote or confirmed the assignment.
    pub last_assignment: Mutex<Option<Timestamp>>,
    /// One lease step at a time (the loop and a gated call may both step).
    stepping: tokio::sync::Mutex<()>,
    /// This node.
    me: NodeId,
}

impl Coordinator {
    pub fn new(ttl: Duration, me: NodeId) -> Self {
        Coordinator {
            ttl,
            seen: Mutex::new(Seen::default()),
            deletions: tokio::sync::Mutex::new(()),
            stepping: tokio::sync::Mutex::new(()),
            last_assignment: Mutex::new(None),
            me,
        }
    }

    /// The lease as last read.
    pub fn lease(&self) -> Option<LeaseRecord> {
        lock(&self.seen)
            .lease
            .as_ref()
            .map(|(lease, _, _)| lease.clone())
    }

    /// Who holds the lease now, judged without I/O.
    pub fn holder(&self) -> Holder {
        let seen = lock(&self.seen);
        if let Some((epoch, until)) = seen.held
            && Instant::now() < until
        {
            return Holder::Me(epoch);
        }
        match &seen.lease {
            None => Holder::Nobody,
            Some((_, _, changed)) if changed.elapsed() > self.ttl => Holder::Nobody,
            // A lease naming this node that it does not hold (a restart, a
            // failed renewal) is taken again by CAS, not waited out.
            Some((lease, _, _)) if lease.holder == self.me => Holder::Nobody,
            Some((lease, _, _)) => Holder::Other(lease.holder.clone()),
        }
    }

    /// Reads the lease, renews it if ours, takes it if nobody holds it.
    pub async fn step(&self, shared: &Shared) -> Result<Holder, RegistryError> {
        let _one_at_a_time = self.stepping.lock().await;
        let current = shared.registry.read(&keys::lease()).await?;
        {
            let mut seen = lock(&self.seen);
            match (&current, &seen.lease) {
                (Some(now), Some((_, etag, _))) if *etag == now.etag => {}
                (Some(now), _) => {
                    seen.lease = Some((now.value.clone(), now.etag.clone(), Instant::now()))
                }
                (None, _) => seen.lease = None,
            }
        }
        let mine = matches!(self.holder(), Holder::Me(_));
        if mine || self.holder() == Holder::Nobody {
            match self.acquire(shared).await {
                Ok(epoch) => return Ok(Holder::Me(epoch)),
                Err(e) => {
                    if mine {
                        tracing::warn!(error = %e, "could not renew the coordinator lease; stopping coordinator work");
                    }
                    lock(&self.seen).held = None;
                    if !matches!(e, RegistryError::Conflict { .. }) {
                        return Err(e);
                    }
                }
            }
        }
        Ok(self.holder())
    }

    /// Takes or renews the lease by CAS; answers the epoch held.
    async fn acquire(&self, shared: &Shared) -> Result<u64, RegistryError> {
        let started = Instant::now();
        let held = lock(&self.seen).held.map(|(epoch, _)| epoch);
        // The lease our clock judged (abandoned, or absent).
        let judged = lock(&self.seen)
            .lease
            .as_ref()
            .map(|(lease, _, _)| lease.clone());
        let mut lost = false;
        let stored = shared
            .registry
            .update(&keys::lease(), |current: Option<&LeaseRecord>| {
                lost = false;
                let now = Timestamp::now();
                let expires = Timestamp::from(now.system_time() + self.ttl);
                Ok::<_, RegistryError>(match current {
                    Some(lease) if held == Some(lease.epoch) && lease.holder == shared.id => {
                        let mut renewed = lease.clone();
                        renewed.renewed_at = now;
                        renewed.expires_at = expires;
                        Change::Put(renewed)
                    }
                    Some(lease) if held.is_none() => {
                        // Only the lease we judged abandoned may be taken;
                        // if it moved since (every renewal changes it),
                        // its holder is alive.
                        if judged.as_ref() != Some(lease) {
                            lost = true;
                            Change::Keep
                        } else {
                            Change::Put(LeaseRecord {
                                v: V1,
                                holder: shared.id.clone(),
                                epoch: lease.epoch + 1,
                                acquired_at: now,
                                renewed_at: now,
                                expires_at: expires,
                            })
                        }
                    }
                    Some(_) => {
                        lost = true;
                        Change::Keep
                    }
                    None => Change::Put(LeaseRecord {
                        v: V1,
                        holder: shared.id.clone(),
                        epoch: 1,
                        acquired_at: now,
                        renewed_at: now,
                        expires_at: expires,
                    }),
                })
            })
            .await?;
        let Some(lease) = stored.filter(|l| !lost && l.holder == shared.id) else {
            return Err(RegistryError::Conflict {
                key: keys::lease().path().to_owned(),
            });
        };
        let was = held;
        lock(&self.seen).held = Some((lease.epoch, started + self.ttl - self.ttl / 5));
        if was != Some(lease.epoch) {
            tracing::info!(
                epoch = lease.epoch,
                "this node is now the fleet's coordinator"
            );
        }
        Ok(lease.epoch)
    }

    /// How long the lease loop sleeps before its next step: `interval`,
    /// or less when another node's lease would lapse sooner on this node's
    /// clock — so a challenger takes an abandoned lease within a TTL of
    /// first seeing it unchanged, not up to an interval later.
    pub fn pause(&self, interval: Duration) -> Duration {
        let seen = lock(&self.seen);
        if seen.held.is_some() {
            return interval;
        }
        match &seen.lease {
            Some((lease, _, changed)) if lease.holder != self.me => {
                let lapses =
                    (self.ttl + Duration::from_millis(10)).saturating_sub(changed.elapsed());
                // Already lapsed (a step that could not read or take it):
                // keep the pace rather than spin.
                if lapses.is_zero() {
                    interval
                } else {
                    interval.min(lapses)
                }
            }
            _ => interval,
        }
    }

    /// One step for a gated call: reads the lease afresh, and takes it when
    /// nobody holds it.
    pub async fn offer(&self, shared: &Shared) -> Result<Holder, RegistryError> {
        self.step(shared).await
    }
}

/// Steps the lease every TTL/3 and, while holding it, does the
/// coordinator's work: the retired-past-grace sweep.
pub async fn run(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) -> Result<(), NodeError> {
    let interval = shared.coordinator.ttl / 3;
    // The reaper reads every deploy record: once a TTL is often enough.
    let mut reaped: Option<Instant> = None;
    loop {
        match shared.coordinator.step(&shared).await {
            Ok(Holder::Me(_)) => {
                if let Err(e) = super::deletion::sweep(&shared).await {
                    tracing::warn!(error = %e, "retirement sweep failed");
                }
                if reaped.is_none_or(|at| at.elapsed() >= shared.coordinator.ttl) {
                    reaped = Some(Instant::now());
                    if let Err(e) = super::reaper::reap(&shared).await {
                        tracing::warn!(error = %e, "reaper pass failed");
                    }
                }
            }
            Ok(_) => {}
            Err(e) => tracing::debug!(error = %e, "coordinator lease step failed"),
        }
        tokio::select! {
            _ = tokio::time::sleep(shared.coordinator.pause(interval)) => {}
            _ = stop.wait_for(|s| *s) => return Ok(()),
        }
    }
}

/// The coordinator's assignment pass: places every application, writes the
/// assignment under this epoch when it changed, and each application's
/// `placement` when its own changed. Answers the assignment in force.
pub async fn assign(
    shared: &Shared,
    epoch: u64,
    apps: &[crate::registry::ApplicationRecord],
    alive: &[crate::registry::NodeRecord],
) -> Result<crate::registry::AssignmentRecord, RegistryError> {
    use crate::registry::{ApplicationRecord, AssignmentRecord, Placement};
    let placements: std::collections::BTreeMap<String, Placement> = apps
        .iter()
        .map(|app| (app.name.to_string(), super::assignment::place(app, alive)))
        .collect();
    let written = shared
        .registry
        .update(&keys::assignment(), |current: Option<&AssignmentRecord>| {
            Ok::<_, RegistryError>(match current {
                Some(current) if current.epoch == epoch && current.applications == placements => {
                    Change::Keep
                }
                Some(current) if current.epoch > epoch => Change::Keep,
                _ => Change::Put(AssignmentRecord {
                    v: V1,
                    epoch,
                    computed_at: Timestamp::now(),
                    applications: placements.clone(),
                }),
            })
        })
        .await?
        .unwrap_or(AssignmentRecord {
            v: V1,
            epoch,
            computed_at: Timestamp::now(),
            applications: placements.clone(),
        });
    *lock(&shared.coordinator.last_assignment) = Some(written.computed_at);
    for app in apps {
        let Some(placed) = placements.get(app.name.as_str()) else {
            continue;
        };
        if app.placement == *placed {
            continue;
        }
        shared
            .registry
            .update(
                &keys::application(&app.name),
                |current: Option<&ApplicationRecord>| {
                    Ok::<_, RegistryError>(match current {
                        Some(current) if current.placement != *placed => {
                            let mut next = current.clone();
                            next.placement = placed.clone();
                            Change::Put(next)
                        }
                        _ => Change::Keep,
                    })
                },
            )
            .await?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(name: &str) -> NodeId {
        NodeId::parse(name).unwrap_or_else(|r| panic!("{r}"))
    }

    fn seen_from(coordinator: &Coordinator, holder: &str, unchanged_for: Duration) {
        let now = Timestamp::now();
        let lease = LeaseRecord {
            v: V1,
            holder: id(holder),
            epoch: 1,
            acquired_at: now,
            renewed_at: now,
            expires_at: now,
        };
        lock(&coordinator.seen).lease =
            Some((lease, ETag::new("e1"), Instant::now() - unchanged_for));
    }

    #[test]
    fn a_challenger_steps_when_the_lease_lapses_not_an_interval_later() {
        let ttl = Duration::from_secs(3);
        let interval = ttl / 3;
        let coordinator = Coordinator::new(ttl, id("vps-b"));
        assert_eq!(coordinator.pause(interval), interval, "no lease seen");

        seen_from(&coordinator, "vps-a", Duration::from_millis(2500));
        let pause = coordinator.pause(interval);
        assert!(
            pause > Duration::from_millis(400) && pause <= Duration::from_millis(510),
            "{pause:?}"
        );
        assert_eq!(coordinator.holder(), Holder::Other(id("vps-a")));

        seen_from(&coordinator, "vps-a", Duration::from_millis(500));
        assert_eq!(coordinator.pause(interval), interval, "far from lapsing");

        // Already lapsed: nobody holds it, and the loop keeps its pace.
        seen_from(&coordinator, "vps-a", Duration::from_secs(4));
        assert_eq!(coordinator.holder(), Holder::Nobody);
        assert_eq!(coordinator.pause(interval), interval);

        // Its own lease (a restart) is not waited out.
        seen_from(&coordinator, "vps-b", Duration::from_millis(2500));
        assert_eq!(coordinator.pause(interval), interval);
    }
}
