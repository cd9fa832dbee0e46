//! Resizable jobs (spec 004, "Job Allocations that Grow and Shrink";
//! spec 000, "Resizable jobs and fairshare").
//!
//! A job of an application profile with RESIZABLE_JOBS = Y may release
//! slots while it runs (`bresize release`); with RESIZABLE_JOBS = auto,
//! or Y and `bsub -ar`, it is autoresizable: it starts on its minimum
//! (`-n min,max`, cut to PROCLIMIT: `-n 1,4` under `PROCLIMIT = 2 2 3`
//! grows to 3) and, while it has fewer than its maximum, holds a pending
//! resize request for the rest.
//!
//! Growing: in each pass, before a dispatch unit's pending jobs ("a
//! pending resize request is scheduled along with pending jobs in the same
//! queue, except they are given a higher priority"), the unit's resize
//! requests are tried, the higher queue priority first, then the higher
//! job priority, then the earlier job ("first-come, first-served ...
//! according to the submission time of the original job"); in a fairshare
//! queue too (the requests' users' priorities fall as they grow, through
//! the charges below, which orders their regular jobs). A request takes
//! free slots, as many as it can up to the maximum, on the job's own
//! hosts too (spec 004: a job of `-n 1,4` on one 2-CPU, 4-slot host
//! "eventually will use up to 4 slots"), but never on its first execution
//! host when one was named with `!` (`-m "hostA!"`, or the queue's
//! HOSTS: "When a first execution host is specified ... LSF does not
//! include the first execution host ... in a job resize allocation
//! request"), within the job's queue and user limits (QJOB,
//! UJOB and PJOB/HJOB limits, MAX_JOBS, a slot pool's entitlement: "Slots
//! are only added ... if the job does not violate any resource limits");
//! each host gives it no more than its CPUs unless PARALLEL_SCHED_BY_SLOT
//! (spec 004's note: "individual allocation requests are constrained by
//! the number of CPUs", the whole allocation not). A grow whose
//! notification command fails is given back ([`Engine::grow_failed`]);
//! the request is tried again a cycle (MBD_SLEEP_TIME) later.
//!
//! Shrinking (`bresize release`): slots on the job's hosts, not all of
//! its first execution host's; refused while a resize request is pending
//! unless it is cancelled with it (`-c`); once released, an
//! autoresizable job does not grow again in this run (its request is
//! cancelled). `bresize cancel` cancels the pending request.
//!
//! Either way the job is booked as it now is: slots on its hosts and in
//! its queue and user counts, `rusage[mem]` (per slot, or per host for
//! the hosts it gains or leaves: "its resource reservation ... changes
//! proportionately"), its charges ("Resize add requests increase number
//! of slots in use ... release requests decrease"; its run time so far
//! kept) and its multifactor billing. A requeued job starts again from
//! its original request. Resizable jobs cannot have compound resource
//! requirements or compute unit requirements.

use std::collections::BTreeMap;

use crate::engine::{Alloc, Decision, Engine, HostIdx, Job, JobId, JobState, Rejection, Slots};
use crate::reserve::{Ask, View};
use crate::time::Time;

/// A resizable job's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Resize {
    /// Autoresizable: it grows by itself up to its maximum.
    pub(crate) auto: bool,
    /// Its pending resize request was cancelled (`bresize cancel`, a
    /// release): it grows no more in this run.
    pub(crate) cancelled: bool,
    /// After a grow given back: not tried again before then.
    pub(crate) retry_at: Option<Time>,
}

impl Engine {
    /// Whether `id` has a pending resize request now.
    pub(crate) fn wants_to_grow(&self, id: JobId, job: &Job) -> bool {
        if !job.resize.is_some_and(|r| r.auto && !r.cancelled) {
            return false;
        }
        matches!(&job.state, JobState::Running { alloc, .. } if alloc.iter().map(|a| a.1).sum::<u32>() < job.max_slots)
            && !self.suspended.contains(&id)
    }

    /// How many more slots a running job's pending resize request asks
    /// (`None`: it has none).
    pub fn resize_request(&self, id: JobId) -> Option<u32> {
        if !self.growing.contains(&id) {
            return None;
        }
        let job = self.jobs.get(&id)?;
        let JobState::Running { alloc, .. } = &job.state else { return None };
        Some(job.max_slots.saturating_sub(alloc.iter().map(|a| a.1).sum()))
    }

    /// Keeps `growing` true for `id` after a change.
    pub(crate) fn track_growth(&mut self, id: JobId) {
        let wants = self.jobs.get(&id).is_some_and(|j| self.wants_to_grow(id, j));
        if wants {
            self.growing.insert(id);
        } else {
            self.growing.remove(&id);
        }
    }

    /// Tries the resize requests of the jobs of `queues` (module docs),
    /// each grow pushed to `out`.
    pub(crate) fn grow_requests(&mut self, queues: &[usize], t: Time, out: &mut Vec<Decision>) {
        if self.growing.is_empty() {
            return;
        }
        let mut order: Vec<(std::cmp::Reverse<i32>, std::cmp::Reverse<u32>, JobId)> = self
            .growing
            .iter()
            .filter_map(|&id| {
                let j = self.jobs.get(&id)?;
                queues
                    .contains(&j.queue)
                    .then(|| (std::cmp::Reverse(self.queues[j.queue].spec.priority), std::cmp::Reverse(j.priority), id))
            })
            .collect();
        order.sort_unstable();
        for (_, _, id) in order {
            if let Some(d) = self.try_grow(id, t) {
                out.push(d);
            }
        }
    }

    /// One resize request: the slots it can have now, booked.
    fn try_grow(&mut self, id: JobId, t: Time) -> Option<Decision> {
        let job = self.jobs.get(&id)?;
        if job.resize.and_then(|r| r.retry_at).is_some_and(|r| r > t) {
            return None;
        }
        let JobState::Running { alloc, .. } = &job.state else { return None };
        let held: u32 = alloc.iter().map(|a| a.1).sum();
        let want = job.max_slots.saturating_sub(held).min(self.slot_room(job));
        if want == 0 {
            return None;
        }
        // Its first execution host is kept out when one was named (module
        // docs).
        let named =
            job.picks.as_ref().is_some_and(|p| !p.first.is_empty()) || !self.queues[job.queue].first_hosts.is_empty();
        let taken: BTreeMap<u32, u32> =
            alloc.first().filter(|_| named).map(|&(h, _)| (h, u32::MAX)).into_iter().collect();
        let mut part = job.clone();
        part.slots = 1;
        // What it adds is no first execution host: its candidates do not
        // bind the grow, only its other `-m` hosts.
        if let Some(p) = part.picks.as_ref().filter(|p| !p.first.is_empty()) {
            let picks = crate::placement::Picks { first: Vec::new(), ..(**p).clone() };
            part.picks = Some(std::sync::Arc::new(picks));
        }
        let ask = Ask { min: 1, max: want, view: View::Free, released: None, taken: Some(&taken) };
        self.settle();
        let added = match self.place(&part, t, &ask).filter(|a| self.grows_within_limits(&part, a)) {
            Some(a) => a,
            None => self.grow_by_backfill(id, &part, &taken, want, t)?,
        };
        self.book_resize(id, &added, true, t);
        self.track_growth(id);
        Some(Decision::Grow { job: id, alloc: added.iter().map(|&(h, n)| (HostIdx(h), Slots(n))).collect() })
    }

    /// A resize request backfilled (spec 004: "Pending job resize
    /// allocation requests are supported by backfill policies. However,
    /// the run time of pending resize request is equal to the remaining
    /// run time of the running resizable job"): in a BACKFILL queue, slots
    /// reserved for others that stay unneeded until the job's run limit
    /// ends, borrowed as a backfill job borrows them.
    fn grow_by_backfill(
        &mut self,
        id: JobId,
        part: &Job,
        taken: &BTreeMap<u32, u32>,
        want: u32,
        t: Time,
    ) -> Option<Alloc> {
        if !self.queues[part.queue].spec.backfill || !self.holds_reserved_hosts() {
            return None;
        }
        let JobState::Running { start, paused, .. } = &part.state else { return None };
        let until = self.job_end(part, start.after(*paused)).filter(|&end| end > t)?;
        self.predict_reservations(t);
        let ask = Ask { min: 1, max: want, view: View::Backfill { until }, released: None, taken: Some(taken) };
        let added = self.place(part, t, &ask).filter(|a| self.grows_within_limits(part, a))?;
        self.borrow(id, part, &added, until);
        Some(added)
    }

    /// A grow the driver could not carry out (its notification command
    /// failed): the slots go back, the request stays and is tried again a
    /// cycle later.
    pub(crate) fn grow_failed(&mut self, id: JobId, alloc: &[(HostIdx, Slots)], t: Time) -> Result<(), Rejection> {
        let given: Alloc = alloc.iter().map(|&(h, n)| (h.0, n.0)).collect();
        self.check_release(id, &given, false)?;
        self.book_resize(id, &given, false, t);
        let retry = t.after(u64::from(self.config.mbd_sleep_time.max(1)));
        if let Some(r) = self.jobs.get_mut(&id).and_then(|j| j.resize.as_mut()) {
            r.retry_at = Some(retry);
        }
        self.wakeups.insert(retry);
        self.track_growth(id);
        Ok(())
    }

    /// `bresize release` (module docs): `release` names hosts, each with
    /// the slots to release there (`None`: all of them); `cancel` cancels
    /// a pending resize request first (`-c`).
    pub(crate) fn shrink(
        &mut self,
        id: JobId,
        release: &[(HostIdx, Option<Slots>)],
        cancel: bool,
        t: Time,
    ) -> Result<(), Rejection> {
        let given = self.check_shrink(id, release, cancel)?;
        if let Some(r) = self.jobs.get_mut(&id).and_then(|j| j.resize.as_mut()) {
            r.cancelled = true;
        }
        self.book_resize(id, &given, false, t);
        self.track_growth(id);
        Ok(())
    }

    /// Whether `bresize release` of `release` from job `id` would be
    /// taken ([`Event::Shrink`](crate::Event::Shrink)), and the slots it
    /// would release; what a driver asks before it runs the job's
    /// notification command.
    pub fn check_shrink(
        &self,
        id: JobId,
        release: &[(HostIdx, Option<Slots>)],
        cancel: bool,
    ) -> Result<Alloc, Rejection> {
        let job = self.jobs.get(&id).ok_or(Rejection::NoSuchJob(id))?;
        let JobState::Running { alloc, .. } = &job.state else { return Err(Rejection::NotRunning(id)) };
        if job.resize.is_none() {
            return Err(Rejection::NotResizable(id));
        }
        if self.growing.contains(&id) && !cancel {
            return Err(Rejection::ResizePending(id));
        }
        let on = |h: u32| alloc.iter().filter(|a| a.0 == h).map(|a| a.1).sum::<u32>();
        let mut given = Alloc::new();
        for &(h, n) in release {
            let have = on(h.0);
            let n = n.map_or(have, |s| s.0);
            if have == 0 || n > have || n == 0 {
                let host = self.hosts.get(h.0 as usize).map_or("?", |x| x.name.as_str()).to_string();
                return Err(Rejection::BadRelease { job: id, host, have });
            }
            given.push((h.0, n));
        }
        self.check_release(id, &given, true)?;
        Ok(given)
    }

    /// `bresize cancel`: the pending resize request goes.
    pub(crate) fn cancel_resize(&mut self, id: JobId) -> Result<(), Rejection> {
        let job = self.jobs.get(&id).ok_or(Rejection::NoSuchJob(id))?;
        if job.resize.is_none() {
            return Err(Rejection::NotResizable(id));
        }
        if !self.growing.contains(&id) {
            return Err(Rejection::NoResizeRequest(id));
        }
        if let Some(r) = self.jobs.get_mut(&id).and_then(|j| j.resize.as_mut()) {
            r.cancelled = true;
        }
        self.track_growth(id);
        Ok(())
    }

    /// Whether `given` can leave job `id`: slots it holds there, and
    /// (`keep_first`) not all of its first execution host's.
    fn check_release(&self, id: JobId, given: &[(u32, u32)], keep_first: bool) -> Result<(), Rejection> {
        let job = self.jobs.get(&id).ok_or(Rejection::NoSuchJob(id))?;
        let JobState::Running { alloc, .. } = &job.state else { return Err(Rejection::NotRunning(id)) };
        let on = |h: u32| alloc.iter().filter(|a| a.0 == h).map(|a| a.1).sum::<u32>();
        let mut total: BTreeMap<u32, u32> = BTreeMap::new();
        for &(h, n) in given {
            *total.entry(h).or_default() += n;
        }
        for (&h, &n) in &total {
            if n > on(h) {
                let host = self.hosts.get(h as usize).map_or("?", |x| x.name.as_str()).to_string();
                return Err(Rejection::BadRelease { job: id, host, have: on(h) });
            }
        }
        let first = alloc.first().map(|a| a.0);
        if keep_first && first.is_some_and(|f| total.get(&f).is_some_and(|&n| n >= on(f))) {
            let host = first.map(|f| self.hosts[f as usize].name.clone()).unwrap_or_default();
            return Err(Rejection::FirstHostRelease { job: id, host });
        }
        Ok(())
    }

    /// Books `delta` added to (`grow`) or taken from job `id`'s allocation
    /// at `t` (module docs).
    fn book_resize(&mut self, id: JobId, delta: &[(u32, u32)], grow: bool, t: Time) {
        let Some(job) = self.jobs.get(&id) else { return };
        let JobState::Running { alloc, start, paused, .. } = &job.state else { return };
        let (queue, user, exclusive) = (job.queue, job.user, job.exclusive);
        let mem = job.res.as_ref().and_then(|r| r.rusage_mem).unwrap_or(0.0);
        let origin = start.after(*paused);
        let expected = self.expected_end(job, origin);
        let old = alloc.clone();
        let mut new = old.clone();
        for &(h, n) in delta {
            match new.iter_mut().find(|e| e.0 == h) {
                Some(e) if grow => e.1 += n,
                Some(e) => e.1 = e.1.saturating_sub(n),
                None if grow => new.push((h, n)),
                None => {}
            }
        }
        new.retain(|e| e.1 > 0);
        self.book_limits(id, false);
        let holds = |a: &Alloc, h: u32| a.iter().any(|e| e.0 == h);
        // Hosts it gains, or leaves.
        let changed: Vec<u32> =
            delta.iter().map(|d| d.0).filter(|&h| if grow { !holds(&old, h) } else { !holds(&new, h) }).collect();
        for &(h, n) in delta {
            let per_host = if self.config.resource_reserve_per_slot {
                mem * f64::from(n)
            } else if changed.contains(&h) {
                mem
            } else {
                0.0
            };
            self.hosts[h as usize].hold(n, per_host, grow);
            if self.queues[queue].per_host_limits {
                let e = self.hosts[h as usize].per_queue.entry(queue).or_insert((0, t));
                if grow {
                    e.0 += n;
                    // JOB_ACCEPT_INTERVAL "applies to newly allocated hosts".
                    e.1 = t;
                } else {
                    e.0 = e.0.saturating_sub(n);
                }
            }
        }
        if exclusive {
            self.lock_hosts(&changed, grow);
        }
        let hosts: Vec<u32> = delta.iter().map(|d| d.0).collect();
        self.refresh_hosts(&hosts);
        let n: u32 = delta.iter().map(|d| d.1).sum();
        let lambda = self.pool_lambda;
        let q = &mut self.queues[queue];
        q.accumulated.update(t.0, q.used, lambda);
        let counts = [&mut q.used, &mut q.user_used[user as usize], &mut self.user_used[user as usize]];
        for c in counts {
            *c = if grow { *c + n } else { c.saturating_sub(n) };
        }
        if let Some(e) = expected {
            let by_set = self.slots_by_set(&new);
            self.expected_ends.insert((e, id), by_set);
        }
        let slots: u32 = new.iter().map(|a| a.1).sum();
        let mut charges = match self.jobs.get_mut(&id).map(|j| &mut j.state) {
            Some(JobState::Running { charges, .. }) => std::mem::take(charges),
            _ => return,
        };
        for (p, leaf, charge) in charges.iter_mut() {
            *charge = self.fairshare.policies[*p].tree.resize_job(*leaf, charge, slots, t);
        }
        if let Some(JobState::Running { charges: c, alloc, .. }) = self.jobs.get_mut(&id).map(|j| &mut j.state) {
            *c = charges;
            *alloc = new.clone();
        }
        self.book_limits(id, true);
        if let Some(JobState::Running { start, .. }) = self.jobs.get(&id).map(|j| &j.state) {
            // Its resources as its allocation now asks, held from its start.
            let start = *start;
            self.hold_resources(id, start);
        }
        self.mf_ended(id, t);
        self.mf_started(id, &new, t);
        self.invalidate_predictions();
        self.dirty = true;
    }
}
