//! Hosts as the engine holds them, and the free-slot indexes of the host
//! sets they are in ([`crate::slots::SlotIndex`]): every change to what a
//! host has free goes through [`Engine::refresh_host`] or
//! [`Engine::refresh_hosts`], which keep the indexes true. (A parked
//! reservation's hosts still count it; [`Engine::free_in`] adds it back:
//! [`crate::handover`].)

use std::collections::BTreeMap;

use smallvec::SmallVec;

use crate::engine::{Engine, Job, JobId};
use crate::time::Time;

/// Host set index and slots: what an allocation holds in each host set.
pub(crate) type SlotsBySet = SmallVec<[(u32, u32); 2]>;

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct HostState {
    pub(crate) name: String,
    pub(crate) slots: u32,
    pub(crate) cpus: u32,
    pub(crate) attrs: crate::model::HostAttrs,
    pub(crate) used: u32,
    /// MB held by running jobs' `rusage[mem=...]`.
    pub(crate) mem_reserved: f64,
    /// Running `cu[excl]` jobs whose compute units hold this host: while
    /// any does, no other job is placed here.
    pub(crate) excl_locks: u32,
    /// What pending jobs hold reserved here ([`crate::reserve`]): per job
    /// (slots, MB), and the totals.
    pub(crate) rsv: SmallVec<[(JobId, u32, f64); 1]>,
    pub(crate) rsv_slots: u32,
    pub(crate) rsv_mem: f64,
    /// Slots of jobs suspended by preemption here, in `used` too: free
    /// only to jobs that may preempt them ([`crate::preempt`]).
    pub(crate) suspended: u32,
    pub(crate) up: bool,
    /// Host sets (index, position) this host belongs to.
    pub(crate) in_sets: Vec<(usize, usize)>,
    /// The partition policy this host belongs to.
    pub(crate) partition: Option<usize>,
    /// Slots in use per queue here, and when the queue last started a job
    /// here (for PJOB_LIMIT, HJOB_LIMIT and JOB_ACCEPT_INTERVAL).
    pub(crate) per_queue: BTreeMap<usize, (u32, Time)>,
}

impl HostState {
    /// Down, or held by an exclusive compute unit job: gives no job slots.
    pub(crate) fn blocked(&self) -> bool {
        !self.up || self.excl_locks > 0
    }

    /// Whether the host takes `job`'s user: a host of a partition takes
    /// only jobs whose user has shares there.
    pub(crate) fn takes_user(&self, job: &Job) -> bool {
        self.partition.is_none_or(|p| job.accounts.iter().any(|a| a.0 == p))
    }

    /// Slots neither in use nor reserved.
    pub(crate) fn unclaimed(&self) -> u32 {
        self.unclaimed_without(0)
    }

    /// [`HostState::unclaimed`] once `n` of its slots in use or reserved
    /// are let go.
    pub(crate) fn unclaimed_without(&self, n: u32) -> u32 {
        self.slots.saturating_sub((self.used + self.rsv_slots).saturating_sub(n))
    }

    /// A job takes (`hold`) or gives back `n` slots here and `mem` MB of
    /// its `rusage[mem]`.
    pub(crate) fn hold(&mut self, n: u32, mem: f64, hold: bool) {
        if hold {
            self.used += n;
            self.mem_reserved += mem;
        } else {
            self.used = self.used.saturating_sub(n);
            self.mem_reserved = (self.mem_reserved - mem).max(0.0);
        }
    }

    /// What the free-slot indexes hold for the host: none while it is down.
    fn indexed_free(&self) -> u32 {
        if self.up { self.unclaimed() } else { 0 }
    }
}

impl Engine {
    pub(crate) fn set_host_up(&mut self, h: u32, up: bool) {
        if let Some(host) = self.hosts.get_mut(h as usize) {
            let was = host.blocked();
            host.up = up;
            self.caches.hosts_blocked = self.caches.hosts_blocked + u32::from(host.blocked()) - u32::from(was);
            self.refresh_host(h);
            self.invalidate_predictions();
            self.dirty = true;
        }
    }

    /// Free slots in host set `set`: its index's total, with what a
    /// parked reservation there gives back ([`crate::handover`]). Every count of free slots of a set goes through here.
    pub(crate) fn free_in(&self, set: usize) -> u64 {
        let parked = self.parked.as_ref().filter(|p| p.set == set);
        debug_assert!(parked.is_none_or(|p| p.holds(&self.hosts)), "a parked reservation's hosts changed");
        let parked = parked.map_or(0, |p| p.free);
        self.host_sets[set].1.total() + parked
    }

    /// Brings the host's free count up to date in every host set it is in.
    pub(crate) fn refresh_host(&mut self, h: u32) {
        let host = &self.hosts[h as usize];
        let free = host.indexed_free();
        for &(set, pos) in &host.in_sets {
            self.host_sets[set].1.set(pos, free);
        }
    }

    /// What `alloc` holds in each host set its hosts are in.
    pub(crate) fn slots_by_set(&self, alloc: &[(u32, u32)]) -> SlotsBySet {
        let mut by_set = SlotsBySet::new();
        for &(h, n) in alloc {
            for &(set, _) in &self.hosts[h as usize].in_sets {
                match by_set.iter_mut().find(|s| s.0 as usize == set) {
                    Some(s) => s.1 += n,
                    None => by_set.push((set as u32, n)),
                }
            }
        }
        by_set
    }

    /// [`Engine::refresh_host`] for many hosts.
    pub(crate) fn refresh_hosts(&mut self, hs: &[u32]) {
        for &h in hs {
            self.refresh_host(h);
        }
    }
}
