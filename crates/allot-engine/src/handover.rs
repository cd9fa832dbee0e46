//! Handing over an expired reservation where it is ([`crate::reserve`]).
//!
//! Once every free slot is reserved and nothing ends, the jobs take turns
//! under MAX_RESERVE_TIME: one gives up all it holds, and
//! at its turn the next takes exactly that (on KTH-SP2 with `allot sim
//! --backfill`, 92% of the 64,601 reservations made). So when the only
//! reservation expires, its hosts keep it for the pass ("parked"): it is
//! gone for everything but the hosts' own records and the free-slot index,
//! and the free count of its host set ([`Engine::free_in`]) includes what
//! it held. A job placed without requirements that would now reserve
//! exactly those hosts takes them over where they are; anything else that
//! looks at the hosts makes them let go first, and so does the pass's end
//! unless the caller keeps it parked between passes
//! ([`crate::event::Setting::KeepParked`]; the workload simulator does): then the next event but
//! a submission makes them let go, and the job that gave it up takes it
//! back where it is at its next turn. Either way the pass decides what it
//! would have decided had they let go at once.

use smallvec::SmallVec;

use crate::engine::{Engine, JobId};
use crate::hosts::HostState;
use crate::reserve::{Reservation, plain_cap};
use crate::time::Time;

/// A reservation given up whose hosts still hold it (module docs): since
/// this pass, or an earlier one when kept parked.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Parked {
    id: JobId,
    /// The host set all its hosts are in (and in no other).
    pub(crate) set: usize,
    /// Host, slots, MB (none), in the reservation's order.
    hosts: SmallVec<[(u32, u32, f64); 4]>,
    /// What the set's free-slot index gains once the hosts let go.
    pub(crate) free: u64,
}

impl Parked {
    /// What the index gains for `host` once `n` slots reserved there let
    /// go: the slots that frees (none while the host is down).
    fn gain(host: &HostState, n: u32) -> u64 {
        if host.up { u64::from(host.unclaimed_without(n) - host.unclaimed()) } else { 0 }
    }

    /// Whether `free` still tells what letting go gives: no host of it
    /// changed since it parked (each event that may change one lets go
    /// first).
    pub(crate) fn holds(&self, hosts: &[HostState]) -> bool {
        self.free == self.hosts.iter().map(|&(h, n, _)| Parked::gain(&hosts[h as usize], n)).sum::<u64>()
    }
}

impl Engine {
    /// Gives up `id`'s reservation, leaving it parked on its hosts (module
    /// docs), if it is the only one, in one host set, and
    /// holds slots and no memory on each host: false, having done nothing,
    /// if not.
    pub(crate) fn park(&mut self, id: JobId) -> bool {
        if !self.switches.handover || self.parked.is_some() || self.reservations.len() != 1 {
            return false;
        }
        let Some(r) = self.reservations.get(&id) else { return false };
        let set = self.queues[r.queue].host_set;
        let mut free = 0;
        for &(h, n, m) in &r.hosts {
            let host = &self.hosts[h as usize];
            if n == 0 || m != 0.0 || host.rsv.len() != 1 || !matches!(host.in_sets[..], [(s, _)] if s == set) {
                return false;
            }
            free += Parked::gain(host, n);
        }
        let Some(r) = self.forget_reservation(id) else { return false };
        self.invalidate_predictions();
        self.parked = Some(Parked { id, set, hosts: r.hosts, free });
        true
    }

    /// The parked reservation's hosts let go of it (module docs): before
    /// anything looks at them, and at the end of a pass unless it is kept
    /// parked.
    pub(crate) fn settle(&mut self) {
        if let Some(p) = self.parked.take() {
            for &(h, _, _) in &p.hosts {
                self.unreserve_host(h, p.id);
            }
        }
    }

    /// [`Engine::grow`] for a job holding nothing when a reservation is
    /// parked (module docs): if the parked hosts are the
    /// only free ones of its host set, and each gives it exactly what the
    /// parked reservation held there, too little to start on, they hold it
    /// for `id` from now on without letting go. Whether it did.
    pub(crate) fn hand_over(&mut self, id: JobId, t: Time) -> bool {
        let (Some(p), Some(job)) = (self.parked.as_ref(), self.jobs.get(&id)) else { return false };
        if self.reservations.contains_key(&id)
            || self.queues[job.queue].host_set != p.set
            || self.host_sets[p.set].1.total() != 0
        {
            return false;
        }
        // As grow walks the free hosts (all of them parked ones, in the
        // order of their positions in the set), with what each gives.
        let cpus_bound = self.cpus_bound(job);
        let mut total = 0u64;
        let mut last = None;
        for &(h, n, _) in &p.hosts {
            let host = &self.hosts[h as usize];
            let pos = host.in_sets[0].1;
            if last.is_some_and(|l| l >= pos) {
                return false;
            }
            last = Some(pos);
            let cap = plain_cap(host, job, cpus_bound, host.unclaimed_without(n));
            if cap != n {
                return false;
            }
            total += u64::from(n);
        }
        if total >= u64::from(job.slots) {
            return false;
        }
        let (queue, user) = (job.queue, job.user);
        let Some(p) = self.parked.take() else { return false };
        for &(h, _, _) in &p.hosts {
            if let Some(e) = self.hosts[h as usize].rsv.first_mut() {
                e.0 = id;
            }
        }
        let (since, expires) = self.reservation_time(queue, t);
        let hosts = p.hosts;
        let r = Reservation::new(queue, user, (since, expires), hosts);
        self.record_reservation(id, r);
        self.counters.handovers += 1;
        true
    }

    /// How many reservations were handed over where they were.
    pub fn handovers(&self) -> u64 {
        self.counters.handovers
    }
}
