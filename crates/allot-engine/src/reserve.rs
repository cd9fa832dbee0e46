//! Reservation and backfill (spec 004, "Reserving Processors", "Reserving
//! Memory for Pending Parallel Jobs", "Backfill Scheduling").
//!
//! Reservation. A pending job of a queue with SLOT_RESERVE (a parallel
//! job) or RESOURCE_RESERVE (a parallel job, or one with `rusage[mem]`)
//! that cannot start at its turn in the pass reserves what it could use of
//! what is free: slots placed as its requirements place them (up to its
//! minimum), and on each of those hosts the memory its `rusage[mem]` needs
//! there, or all that is free when less is. A reserved slot or MB is free
//! to no other job. At its next turn the job sees its own reservation as
//! free, starts if it can, and otherwise reserves again, so what it holds
//! grows as slots free up. With first execution host candidates, placement
//! needs a candidate, so no reservation is made without one.
//!
//! The reservation time starts with the first slot reserved, and runs on
//! while what the job holds is lent to backfill jobs or it finds nothing
//! more to reserve. At the first
//! pass at or after `MAX_RESERVE_TIME[n]` × MBD_SLEEP_TIME the job gives
//! up everything it holds, and reserves nothing in that pass; it may
//! reserve again from the next one. Reserved slots count against the
//! queue's and users' job slot limits (QJOB_LIMIT, UJOB_LIMIT, MAX_JOBS) of
//! other jobs, as running ones do. A reconfiguration gives up every
//! reservation; the jobs reserve again at their next turn.
//!
//! Handing over an expired reservation where it is: the `handover`
//! module.
//!
//! Predicted start: the `predict` module.
//!
//! Backfill. A job of a BACKFILL=Y queue with a run limit (`-W`, else the
//! queue's RUNLIMIT) or a run time estimate (`-We`, RUNTIME) that cannot
//! start on free slots may also use slots and memory of reservations whose
//! predicted start is no earlier than its own expected end (now + the
//! estimate, else the run limit), past the hosts' job slot limits but
//! within its queue's and user's. What it uses leaves the reservation's
//! hosts: it comes back as a release at the backfill job's end, which is
//! no later than the reservation's predicted start, so a backfill never
//! makes a predicted start later (an estimate, not enforced, can be
//! overrun). A job with neither never backfills.
//!
//! Lent slots stay the pending job's (spec 004, "Job Slot Limits For
//! Parallel Jobs": "when a pending job and a running job occupy the same
//! physical job slot on a host, both jobs count towards the queue limit,
//! but only the pending job counts towards host limit"): a reservation
//! keeps what it lent (`lent`, with the engine's `loans` by borrower)
//! until the backfill job ends, counts it against the queue's and users'
//! limits, and shows it reserved (`bjobs`; the spec's job 3 of the
//! parallel memory example "reserves 2 slots" while job 5 runs on one),
//! while the host counts only the slot the backfill job uses.
//!
//! Fairshare. Reserved slots count in the dynamic priority of the job's
//! share accounts as slots in use do (LSF fairshare: `job_slots` is "the
//! number of job slots reserved and in use"), and show in the RESERVED
//! column of `bqueues -l` and `bhpart`: charged as a start is, to the
//! account of the queue's policy and to that of the partition the first
//! reserved host is in.

use smallvec::SmallVec;

use crate::engine::{Engine, HostIdx, Job, JobId, Slots};
use crate::hosts::HostState;
use crate::placement::free_mem;
use crate::shares::NodeId;
use crate::time::Time;

/// Whose view of the hosts a placement takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum View {
    /// What is free: neither used nor reserved.
    Free,
    /// What is free to a job holding a reservation: its own included.
    Own(JobId),
    /// As `Own`, with no memory needed: what a job may reserve.
    Reserve(JobId),
    /// What is free to a backfill job ending at `until`: reservations
    /// predicted to start no earlier included.
    Backfill { until: Time },
}

/// What [`Engine::host_cap`] gives a job placed without requirements, `-x`,
/// per-host limits or memory, where `unclaimed` slots are open to it (its
/// own reserved ones among them): none on a host that is blocked or does
/// not take its user, and within the host's CPUs when `cpus_bound`
/// ([`Engine::cpus_bound`]).
pub(crate) fn plain_cap(host: &HostState, job: &Job, cpus_bound: bool, unclaimed: u32) -> u32 {
    match !host.blocked() && host.takes_user(job) {
        true if cpus_bound => unclaimed.min(host.cpus),
        true => unclaimed,
        false => 0,
    }
}

/// What running jobs release by some time, per host: slots and MB. Its
/// order decides nothing (placement walks hosts in host order).
pub(crate) type Released = std::collections::HashMap<u32, (u32, f64), std::hash::BuildHasherDefault<HostHasher>>;

/// Host indexes hash to themselves.
#[derive(Default)]
pub(crate) struct HostHasher(u64);

impl std::hash::Hasher for HostHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// What a placement asks for: `min` to `max` slots in `view`, with what
/// running jobs will have released by then (host: slots, MB) when
/// predicting a start, and the slots per host a compound requirement's
/// earlier terms took ([`crate::compound`]).
#[derive(Clone, Copy)]
pub(crate) struct Ask<'a> {
    pub(crate) min: u32,
    pub(crate) max: u32,
    pub(crate) view: View,
    pub(crate) released: Option<&'a Released>,
    pub(crate) taken: Option<&'a std::collections::BTreeMap<u32, u32>>,
}

impl Ask<'_> {
    /// A job's start on free slots.
    pub(crate) fn start(job: &Job) -> Self {
        Ask { min: job.slots, max: job.max_slots, view: View::Free, released: None, taken: None }
    }

    /// [`Ask::start`] for a job of `-n min,max`, taking no more than its
    /// limits leave room for (`room`, [`crate::Engine`]'s `slot_room`).
    pub(crate) fn start_within(job: &Job, room: u32) -> Self {
        Ask { max: job.max_slots.min(room.max(job.slots)), ..Ask::start(job) }
    }

    /// Free slots only: the free-slot index tells all.
    pub(crate) fn is_plain(&self) -> bool {
        self.view == View::Free && self.released.is_none() && self.taken.is_none()
    }
}

/// What a pending job holds reserved.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Reservation {
    pub(crate) queue: usize,
    pub(crate) user: u32,
    /// When its first slot was reserved, and when it gives all up.
    pub(crate) since: Time,
    pub(crate) expires: Time,
    /// Host, slots, MB.
    pub(crate) hosts: SmallVec<[(u32, u32, f64); 4]>,
    /// The predicted start, once computed in this state of the cluster
    /// (`Some(None)`: none can be predicted).
    pub(crate) predicted: Option<Option<Time>>,
    /// With a predicted start of a job placed without requirements: at
    /// least how many slots more than its minimum the hosts can give it
    /// then ([`Engine::take_free`]).
    pub(crate) spare: Option<u32>,
    /// The share accounts its slots are charged to, with the slots.
    pub(crate) charged: SmallVec<[(usize, NodeId, u32); 1]>,
    /// Slots it lent to running backfill jobs, by host: no longer in
    /// `hosts` (the backfill job uses them), but still the pending job's
    /// (module docs, "Job Slot Limits For Parallel Jobs").
    pub(crate) lent: SmallVec<[(u32, u32); 1]>,
}

impl Reservation {
    /// A reservation of `queue`'s job of `user` on `hosts` (host, slots,
    /// MB), reserving from `since` until `expires`; nothing predicted,
    /// charged or lent yet.
    pub(crate) fn new(
        queue: usize,
        user: u32,
        (since, expires): (Time, Time),
        hosts: SmallVec<[(u32, u32, f64); 4]>,
    ) -> Reservation {
        Reservation {
            queue,
            user,
            since,
            expires,
            hosts,
            predicted: None,
            spare: None,
            charged: SmallVec::new(),
            lent: SmallVec::new(),
        }
    }

    /// The slots it holds on its hosts now.
    pub(crate) fn slots(&self) -> u32 {
        self.hosts.iter().map(|h| h.1).sum()
    }

    /// The slots that are the pending job's: those it holds and those it
    /// lent to backfill jobs. What counts against the queue's and users'
    /// job slot limits, and what `bjobs` shows reserved.
    pub(crate) fn slots_with_lent(&self) -> u32 {
        self.slots() + self.lent.iter().map(|l| l.1).sum::<u32>()
    }
}

impl Engine {
    /// Whether `job` reserves when it cannot start (module docs).
    pub(crate) fn reserves(&self, job: &Job) -> bool {
        let spec = &self.queues[job.queue].spec;
        match spec.reserve {
            None => false,
            Some(r) => job.slots > 1 || (r.memory && rusage_mem(job) > 0.0) || spec.plans_every_job(),
        }
    }

    /// What `host` holds reserved that `view` may use: slots and MB.
    pub(crate) fn reserved_to(&self, host: &HostState, view: View) -> (u32, f64) {
        match view {
            View::Free => (0, 0.0),
            View::Own(id) | View::Reserve(id) => host.rsv.iter().find(|r| r.0 == id).map_or((0, 0.0), |r| (r.1, r.2)),
            View::Backfill { until } => {
                host.rsv.iter().filter(|r| self.may_borrow(r.0, until)).fold((0, 0.0), |(s, m), r| (s + r.1, m + r.2))
            }
        }
    }

    /// Whether a job ending at `until` may use what `id` holds reserved.
    fn may_borrow(&self, id: JobId, until: Time) -> bool {
        self.reservations.get(&id).and_then(|r| r.predicted.flatten()).is_some_and(|p| p >= until)
    }

    /// Hosts a view sees reserved slots on of its own: the job's own
    /// reservation's. (With backfill, every reservation's hosts too:
    /// `rsv_hosts`, walked by placement.)
    pub(crate) fn own_reserved_hosts(&self, ask: &Ask) -> impl Iterator<Item = u32> + '_ {
        let own = match ask.view {
            View::Own(id) | View::Reserve(id) => self.reservations.get(&id),
            View::Free | View::Backfill { .. } => None,
        };
        own.into_iter().flat_map(|r| r.hosts.iter().map(|h| h.0))
    }

    /// Slots reserved by jobs other than `except` for which `counts` holds
    /// (queue, user): what reserved slots add to a limit's count.
    pub(crate) fn reserved_slots(&self, except: JobId, counts: impl Fn(usize, u32) -> bool) -> u32 {
        self.reservations
            .iter()
            .filter(|(id, r)| **id != except && counts(r.queue, r.user))
            .map(|(_, r)| r.slots_with_lent())
            .sum()
    }

    /// At the start of a pass: reservations whose time is up give all they
    /// hold back. Returns the jobs that may not reserve in this pass.
    pub(crate) fn expire_reservations(&mut self, t: Time) -> Vec<JobId> {
        let mut expired = Vec::new();
        while let Some(&(at, id)) = self.rsv_expiry.first() {
            if at > t {
                break;
            }
            // One kept from an earlier pass lets go: this one may park.
            self.settle();
            if !self.park(id) {
                self.drop_reservation(id);
            }
            expired.push(id);
            self.counters.rsv_expired += 1;
        }
        expired
    }

    /// Whether any host holds reserved slots (a parked reservation's hosts
    /// hold none: it was the only one).
    pub(crate) fn holds_reserved_hosts(&self) -> bool {
        self.parked.is_none() && !self.rsv_hosts.is_empty()
    }

    /// At the cycle after reservations expired: whether a pass would
    /// change anything for the jobs that gave them up. Nothing else has
    /// happened since the last pass (or this pass has other work), so the
    /// only news is that they may reserve again, and a job holding nothing
    /// reserves nothing where nothing is free ([`Engine::reserve`]).
    pub(crate) fn cooldown_matters(&self) -> bool {
        self.rsv_cooldown.iter().any(|id| {
            self.jobs.get(id).is_some_and(|job| {
                matches!(job.state, crate::engine::JobState::Pending)
                    && self.reserves(job)
                    && self.free_in(self.queues[job.queue].host_set) > 0
            })
        })
    }

    /// Gives back all that `id` holds reserved: what it frees may bring
    /// other reservations' predicted starts forward.
    pub(crate) fn drop_reservation(&mut self, id: JobId) -> Option<Reservation> {
        let r = self.take_reservation(id)?;
        self.invalidate_predictions();
        Some(r)
    }

    fn take_reservation(&mut self, id: JobId) -> Option<Reservation> {
        let r = self.forget_reservation(id)?;
        for &(h, _, _) in &r.hosts {
            self.unreserve_host(h, id);
        }
        Some(r)
    }

    /// [`Engine::take_reservation`] leaving the hosts to the caller.
    pub(crate) fn forget_reservation(&mut self, id: JobId) -> Option<Reservation> {
        let r = self.reservations.remove(&id)?;
        // Its loans end with it: the job's next reservation lent nothing.
        if !r.lent.is_empty() {
            for loans in self.loans.values_mut() {
                loans.retain(|l| l.0 != id);
            }
            self.loans.retain(|_, l| !l.is_empty());
        }
        self.charge_reserved(&r.charged, -1);
        self.caches.rsv_freed += 1;
        self.caches.rsv_changes += 1;
        self.rsv_expiry.remove(&(r.expires, id));
        Some(r)
    }

    pub(crate) fn unreserve_host(&mut self, h: u32, id: JobId) {
        self.unreserve_quietly(h, id);
        self.refresh_host(h);
    }

    /// [`Engine::unreserve_host`] leaving the free-slot indexes to the
    /// caller.
    fn unreserve_quietly(&mut self, h: u32, id: JobId) {
        let host = &mut self.hosts[h as usize];
        if let Some(i) = host.rsv.iter().position(|r| r.0 == id) {
            // The last entry without moving any (the usual case: one).
            let (_, s, m) = host.rsv[i];
            if i + 1 == host.rsv.len() {
                host.rsv.pop();
            } else {
                host.rsv.remove(i);
            }
            host.rsv_slots = host.rsv_slots.saturating_sub(s);
            host.rsv_mem = (host.rsv_mem - m).max(0.0);
        }
        if host.rsv.is_empty() {
            self.rsv_hosts.remove(h);
        }
    }

    /// A job that could not start at its turn reserves what it can (module
    /// docs), unless its reservation expired in this pass.
    pub(crate) fn reserve(&mut self, id: JobId, t: Time) {
        let Some(job) = self.jobs.get(&id) else { return };
        if !self.reserves(job) || self.rsv_cooldown.contains(&id) {
            return;
        }
        if let Some(plan) = self.queues[job.queue].spec.plan {
            self.reserve_planned(id, plan, t);
            return;
        }
        let nothing_free = self.free_in(self.queues[job.queue].host_set) == 0;
        let held = self.reservations.get(&id);
        if nothing_free && held.is_none() {
            return;
        }

        // A job placed without requirements that could not start held less
        // than it needs, and takes all it held again: with nothing free,
        // what it holds stays, on hosts that still give it (up, not taken
        // by an exclusive unit, and no per-host limit of its queue in play).
        // A job holding nothing takes the free slots the same way.
        let stays = |r: &Reservation| r.hosts.iter().all(|&(h, _, _)| !self.hosts[h as usize].blocked());
        let simple = !job.constrained() && !self.queues[job.queue].per_host_limits && rusage_mem(job) <= 0.0;
        let slots = job.slots;
        if simple && held.is_none_or(stays) && (nothing_free || self.grow(id, t)) {
            return;
        }
        self.reserve_placed(id, slots, t);
    }

    /// `id` holds what a placement of up to `max` slots over what is free
    /// to it (its own reservation included) gives, in place of what it
    /// held: on each host, the memory its `rusage[mem]` needs there, or all
    /// that is free when less is.
    pub(crate) fn reserve_placed(&mut self, id: JobId, max: u32, t: Time) {
        self.settle();
        let Some(job) = self.jobs.get(&id) else { return };
        let ask = Ask { min: 1, max, view: View::Reserve(id), released: None, taken: None };
        let alloc = self.place(job, t, &ask).unwrap_or_default();
        let mem = rusage_mem(job);
        let hosts: SmallVec<[(u32, u32, f64); 4]> = alloc
            .iter()
            .map(|&(h, n)| {
                if mem <= 0.0 {
                    return (h, n, 0.0);
                }
                let host = &self.hosts[h as usize];
                let want = self.rusage_on_host(mem, n);
                let avail = free_mem(host) + self.reserved_to(host, View::Own(id)).1;
                (h, n, want.min(avail).max(0.0))
            })
            .collect();
        let (queue, user) = (job.queue, job.user);
        if self.reservations.get(&id).is_some_and(|r| r.hosts == hosts) {
            // Nothing more to reserve: nothing changes.
            return;
        }
        // What it held and holds now, per host: slots and MB.
        let holds = self.reservations.contains_key(&id);
        if hosts.is_empty() && !holds {
            return;
        }
        let mut held: SmallVec<[(u32, u32, f64); 16]> =
            self.reservations.get(&id).map_or(SmallVec::new(), |r| r.hosts.iter().copied().collect());
        held.sort_unstable_by_key(|x| x.0);
        let on = |h: u32| held.binary_search_by_key(&h, |x| x.0).map_or((0, 0.0), |i| (held[i].1, held[i].2));
        // Whether it only took more, and how many slots more: slots no
        // longer free to the others, for good.
        let mut now: SmallVec<[(u32, u32); 32]> = hosts.iter().map(|x| (x.0, x.1)).collect();
        now.sort_unstable();
        let grew =
            holds && held.iter().all(|&(h, n, _)| now.binary_search_by_key(&h, |x| x.0).is_ok_and(|i| now[i].1 >= n));
        let taken: u32 = hosts.iter().map(|&(h, n, _)| n.saturating_sub(on(h).0)).sum();
        if grew {
            // In place: only the hosts whose share changed are touched.
            for &(h, n, m) in &hosts {
                let was = on(h);
                if (n, m) != was {
                    self.set_reserved(h, id, (n, m), was);
                    self.refresh_host(h);
                }
            }
            if let Some(r) = self.reservations.get_mut(&id) {
                r.hosts = hosts;
            }
            self.reservation_grew(id, taken, mem > 0.0);
            return;
        }
        // Anything it let go of may bring the others' predictions forward.
        let old = self.take_reservation(id);
        self.make_reservation(id, (queue, user), hosts, old.map(|o| (o.since, o.expires)), t);
    }

    /// `id` (of `queue` and `user`) holds `hosts` (host, slots, MB) from
    /// now on, holding nothing before: since `held` (when it gave up what
    /// it held to reserve anew), else since `t`, with its reservation time
    /// starting now.
    fn make_reservation(
        &mut self,
        id: JobId,
        (queue, user): (usize, u32),
        hosts: SmallVec<[(u32, u32, f64); 4]>,
        held: Option<(Time, Time)>,
        t: Time,
    ) {
        self.settle();
        // It holds nothing: each host gains an entry.
        for &(h, n, m) in &hosts {
            let host = &mut self.hosts[h as usize];
            host.rsv.push((id, n, m));
            host.rsv_slots += n;
            host.rsv_mem = (host.rsv_mem + m).max(0.0);
            self.rsv_hosts.insert(h);
            self.refresh_host(h);
        }
        let (since, expires) = held.unwrap_or_else(|| self.reservation_time(queue, t));
        if held.is_none() {
            self.counters.rsv_made += 1;
        }
        let r = Reservation::new(queue, user, (since, expires), hosts);
        self.record_reservation(id, r);
    }

    /// When a reservation made at `t` in `queue` starts and expires.
    pub(crate) fn reservation_time(&self, queue: usize, t: Time) -> (Time, Time) {
        let cycles = self.queues[queue].spec.reserve.map_or(0, |r| r.cycles);
        (t, t.after(u64::from(cycles) * u64::from(self.config.mbd_sleep_time)))
    }

    /// `id` holds `r` from now on, its hosts holding it already: the
    /// others' predictions are made again, and its slots charged.
    pub(crate) fn record_reservation(&mut self, id: JobId, r: Reservation) {
        self.invalidate_predictions();
        self.rsv_expiry.insert((r.expires, id));
        self.caches.rsv_changes += 1;
        self.reservations.insert(id, r);
        self.recharge_reserved(id);
    }

    /// Charges what `id` holds reserved now to its share accounts (module
    /// docs), in place of what was charged before.
    fn recharge_reserved(&mut self, id: JobId) {
        let Some(r) = self.reservations.get(&id) else { return };
        let old = r.charged.clone();
        let slots = r.slots();
        let new: SmallVec<[(usize, NodeId, u32); 1]> = match self.jobs.get(&id) {
            Some(job) if slots > 0 => {
                self.charged_accounts(job, r.hosts.first().map(|h| h.0)).map(|(p, leaf)| (p, leaf, slots)).collect()
            }
            _ => SmallVec::new(),
        };
        if new == old {
            return;
        }
        self.charge_reserved(&old, -1);
        self.charge_reserved(&new, 1);
        if let Some(r) = self.reservations.get_mut(&id) {
            r.charged = new;
        }
    }

    /// Grows what `id` holds (if anything) by the free slots alone,
    /// looking at no other host: it is placed without requirements or
    /// memory, no per-host limit of its queue is in play, and the hosts it
    /// holds still give it. Having failed to start, it holds less than it
    /// needs with what is free, and placing it afresh under its view (first
    /// fit over what it holds and what is free) would take all of both:
    /// what it holds stays and each free host gives what it can. Returns
    /// false, having changed nothing, where the free slots would make up
    /// its need after all; the caller then places in full.
    fn grow(&mut self, id: JobId, t: Time) -> bool {
        if self.hand_over(id, t) {
            return true;
        }
        self.settle();
        let Some(job) = self.jobs.get(&id) else { return false };
        let r = self.reservations.get(&id);
        let ask = Ask { min: 1, max: job.slots, view: View::Reserve(id), released: None, taken: None };
        let (members, index) = &self.host_sets[self.queues[job.queue].host_set];
        let mut total = r.map_or(0, Reservation::slots);
        let cpus_bound = self.cpus_bound(job);
        // Free hosts that give more, with what each gives in all.
        let mut more: SmallVec<[(u32, u32, u32); 32]> = SmallVec::new();
        let mut next = index.next_free(0);
        while let Some(i) = next {
            let h = members[i];
            let host = &self.hosts[h as usize];
            let have = host.rsv.iter().find(|x| x.0 == id).map_or(0, |x| x.1);
            let cap = plain_cap(host, job, cpus_bound, host.unclaimed() + have);
            debug_assert_eq!(cap, self.host_cap(h, job, t, &ask), "host {h}, job {id}");
            if cap > have {
                more.push((h, have, cap));
                total += cap - have;
                if total >= job.slots {
                    return false;
                }
            }
            next = index.next_free(i + 1);
        }
        #[cfg(debug_assertions)]
        {
            let mut want: Vec<(u32, u32)> = r.iter().flat_map(|r| r.hosts.iter().map(|x| (x.0, x.1))).collect();
            for &(h, _, n) in &more {
                match want.binary_search_by_key(&h, |x| x.0) {
                    Ok(i) => want[i].1 = n,
                    Err(i) => want.insert(i, (h, n)),
                }
            }
            let full = self.place(job, t, &ask).unwrap_or_default();
            debug_assert_eq!(want, full.to_vec(), "growing job {id} in place");
        }
        if more.is_empty() {
            return true;
        }
        if r.is_none() {
            let hosts = more.iter().map(|&(h, _, n)| (h, n, 0.0)).collect();
            let who = (job.queue, job.user);
            self.make_reservation(id, who, hosts, None, t);
            return true;
        }
        let mut taken = 0;
        for &(h, have, n) in &more {
            self.set_reserved(h, id, (n, 0.0), (have, 0.0));
            self.refresh_host(h);
            taken += n - have;
        }
        if let Some(r) = self.reservations.get_mut(&id) {
            for &(h, _, n) in &more {
                match r.hosts.binary_search_by_key(&h, |x| x.0) {
                    Ok(i) => r.hosts[i].1 = n,
                    Err(i) => r.hosts.insert(i, (h, n, 0.0)),
                }
            }
        }
        self.reservation_grew(id, taken, false);
        true
    }

    /// `id` holds `now` (slots, MB) on host `h`, where it held `was`; the
    /// caller brings the free-slot indexes up to date.
    fn set_reserved(&mut self, h: u32, id: JobId, now: (u32, f64), was: (u32, f64)) {
        debug_assert!(self.parked.is_none(), "set_reserved with a parked reservation");
        let host = &mut self.hosts[h as usize];
        match host.rsv.iter_mut().find(|r| r.0 == id) {
            Some(e) => (e.1, e.2) = now,
            None => host.rsv.push((id, now.0, now.1)),
        }
        host.rsv_slots = host.rsv_slots + now.0 - was.0;
        host.rsv_mem = (host.rsv_mem + now.1 - was.1).max(0.0);
        self.rsv_hosts.insert(h);
    }

    /// After `id`'s reservation grew in place by `taken` slots that were
    /// free (and memory, with `mem`): its prediction and charge are made
    /// again, and the others' predictions kept where they still hold
    /// ([`Engine::take_free`]; with memory, none is).
    fn reservation_grew(&mut self, id: JobId, taken: u32, mem: bool) {
        if let Some(r) = self.reservations.get_mut(&id) {
            (r.predicted, r.spare) = (None, None);
        }
        self.caches.rsv_changes += 1;
        self.recharge_reserved(id);
        if mem {
            self.invalidate_predictions();
        } else {
            self.take_free(taken, None);
        }
    }

    /// Adds (`sign` 1) or takes back (-1) reserved slots on share accounts;
    /// the accounts whose priority changed are noted for the pass.
    fn charge_reserved(&mut self, charged: &[(usize, NodeId, u32)], sign: i64) {
        for &(p, leaf, n) in charged {
            self.fairshare.policies[p].tree.add_reserved(leaf, sign * i64::from(n));
            self.caches.share_touched.push((p, leaf));
        }
    }

    /// A backfill job starting on `alloc` takes what it needs beyond the
    /// free slots and memory from the reservations it may use, in job
    /// order.
    pub(crate) fn borrow(&mut self, borrower: JobId, job: &Job, alloc: &[(u32, u32)], until: Time) {
        self.settle();
        let mem = rusage_mem(job);
        let mut from_free = 0;
        // What each lender gave on each host: (lender, host, slots, MB).
        let mut lent: Vec<(JobId, u32, u32, f64)> = Vec::new();
        for &(h, n) in alloc {
            let host = &self.hosts[h as usize];
            let free = host.unclaimed();
            from_free += n.min(free);
            let mut slots = n.saturating_sub(free);
            let want = self.rusage_on_host(mem, n);
            let mut mb = (want - free_mem(host)).max(0.0);
            let mut lenders: SmallVec<[JobId; 4]> =
                host.rsv.iter().map(|r| r.0).filter(|&id| self.may_borrow(id, until)).collect();
            lenders.sort_unstable();
            for id in lenders {
                if slots == 0 && mb <= 0.0 {
                    break;
                }
                let host = &mut self.hosts[h as usize];
                let Some(entry) = host.rsv.iter_mut().find(|r| r.0 == id) else { continue };
                let (s, m) = (slots.min(entry.1), mb.min(entry.2));
                entry.1 -= s;
                entry.2 -= m;
                host.rsv_slots -= s;
                host.rsv_mem = (host.rsv_mem - m).max(0.0);
                slots -= s;
                mb -= m;
                self.caches.rsv_changes += 1;
                if s > 0 || m > 0.0 {
                    lent.push((id, h, s, m));
                }
                if entry.1 == 0 && entry.2 <= 0.0 {
                    self.unreserve_host(h, id);
                }
            }
            self.refresh_host(h);
        }
        // Each lender's own list, once: a large reservation spans
        // thousands of hosts.
        lent.sort_unstable_by_key(|l| (l.0, l.1));
        let mut lenders_all: SmallVec<[JobId; 2]> = SmallVec::new();
        for group in lent.chunk_by(|a, b| a.0 == b.0) {
            let id = group[0].0;
            lenders_all.push(id);
            if let Some(r) = self.reservations.get_mut(&id) {
                for rh in r.hosts.iter_mut() {
                    if let Ok(i) = group.binary_search_by_key(&rh.0, |l| l.1) {
                        rh.1 -= group[i].2;
                        rh.2 = (rh.2 - group[i].3).max(0.0);
                    }
                }
                r.hosts.retain(|x| x.1 > 0 || x.2 > 0.0);
                for &(_, h, s, _) in group.iter().filter(|l| l.2 > 0) {
                    r.lent.push((h, s));
                    self.loans.entry(borrower).or_default().push((id, h, s));
                }
            }
            self.recharge_reserved(id);
        }
        // What it borrows from one lender comes back by the lender's
        // predicted start, which stands; but it comes back free to all,
        // which may bring the others' forward. What it took from the free
        // slots alone may move the others' ([`Engine::take_free`]).
        match lenders_all.as_slice() {
            [] if !job.constrained() => self.take_free(from_free, Some(until)),
            &[lender] if !job.constrained() => {
                let keep = self.reservations.get(&lender).map(|r| (r.predicted, r.spare));
                self.invalidate_predictions();
                if let (Some((p, spare)), Some(r)) = (keep, self.reservations.get_mut(&lender)) {
                    (r.predicted, r.spare) = (p, spare);
                }
            }
            _ => self.invalidate_predictions(),
        }
    }

    /// What pending job `id` holds reserved: host index and slots, and
    /// since when.
    pub fn reservation(&self, id: JobId) -> Option<(Time, Vec<(HostIdx, Slots)>)> {
        let r = self.reservations.get(&id)?;
        let mut hosts: Vec<(HostIdx, Slots)> = r.hosts.iter().map(|h| (HostIdx(h.0), Slots(h.1))).collect();
        // What it lent to backfill jobs is still its own (module docs).
        for &(h, s) in &r.lent {
            match hosts.iter_mut().find(|x| x.0 == HostIdx(h)) {
                Some(x) => x.1 = Slots(x.1.0 + s),
                None => hosts.push((HostIdx(h), Slots(s))),
            }
        }
        Some((r.since, hosts))
    }

    /// MB pending job `id` holds reserved.
    pub fn reserved_memory(&self, id: JobId) -> f64 {
        self.reservations.get(&id).map_or(0.0, |r| r.hosts.iter().map(|h| h.2).sum())
    }

    /// Every pending job holding a reservation, with its slots (those lent
    /// to backfill jobs included), by job id.
    pub fn reservations_held(&self) -> impl Iterator<Item = (JobId, Slots)> + '_ {
        self.reservations.iter().map(|(&id, r)| (id, Slots(r.slots_with_lent()))).filter(|&(_, n)| n.0 > 0)
    }

    /// A backfill job ended (or went back to pending): what it borrowed
    /// is its lenders' no more.
    pub(crate) fn end_loans(&mut self, borrower: JobId) {
        for (lender, h, s) in self.loans.remove(&borrower).unwrap_or_default() {
            if let Some(r) = self.reservations.get_mut(&lender) {
                if let Some(i) = r.lent.iter().position(|l| *l == (h, s)) {
                    r.lent.swap_remove(i);
                }
                self.caches.rsv_changes += 1;
            }
        }
    }

    /// Slots reserved on host `h`.
    pub fn reserved_on_host(&self, h: HostIdx) -> u32 {
        debug_assert!(self.parked.is_none(), "a host query with a parked reservation");
        self.hosts.get(h.0 as usize).map_or(0, |x| x.rsv_slots)
    }

    /// MB of host `h`'s memory that `rusage[mem]` holds: the running
    /// jobs' and the pending jobs' reservations (`bhosts -l`'s Reserved).
    pub fn reserved_memory_on_host(&self, h: HostIdx) -> f64 {
        debug_assert!(self.parked.is_none(), "a host query with a parked reservation");
        self.hosts.get(h.0 as usize).map_or(0.0, |x| x.mem_reserved + x.rsv_mem)
    }
}

/// MB a job's `rusage[mem]` asks, 0 without.
pub(crate) fn rusage_mem(job: &Job) -> f64 {
    job.res.as_ref().and_then(|r| r.rusage_mem).filter(|m| *m > 0.0).unwrap_or(0.0)
}
