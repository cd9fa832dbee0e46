//! Predicted starts of the jobs holding reservations (spec 004,
//! "Backfill Scheduling"), and what the pass asks of them again and again.
//!
//! A job holding a reservation is predicted to start at the first time its
//! placement succeeds when the running jobs end when they are expected to
//! ([`Engine::expected_end`]: their run time estimates, else their run
//! limits): on what is free to it now (its own reservation included) plus
//! what those jobs release. A running job with neither never releases, nor
//! does one already past its estimate, so a job that waits for one has no
//! predicted start.
//!
//! Predictions are cached on each reservation and kept until something
//! they depend on changes ([`Engine::take_free`],
//! [`Engine::invalidate_predictions`]); debug builds check every cached
//! one against a fresh computation.

use crate::engine::{Engine, JobId, JobState};
use crate::reserve::{Ask, Released, View, rusage_mem};
use crate::time::Time;

/// Sums over all reservations that a pass asks for again and again, kept
/// until what they hold (`rsv_changes`) or their predictions (`rsv_epoch`)
/// change.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct RsvIndex {
    /// `rsv_changes` when `total` was summed.
    total_at: Option<u64>,
    total: u64,
    /// (`rsv_epoch`, `rsv_changes`) when every reservation last had a
    /// predicted start.
    complete_at: Option<(u64, u64)>,
    /// (`rsv_epoch`, `rsv_changes`) when `by_start` was built.
    by_start_at: Option<(u64, u64)>,
    /// Predicted starts, latest first, with the slots of the reservations
    /// predicted to start then or later.
    by_start: Vec<(Time, u64)>,
}

impl Engine {
    /// Slots a backfill job ending at `until` may borrow, at most: those
    /// of reservations predicted to start no earlier. Predicts what is not
    /// predicted yet.
    pub(crate) fn borrowable(&mut self, until: Time, t: Time) -> u64 {
        self.predict_reservations(t);
        let key = Some((self.caches.rsv_epoch, self.caches.rsv_changes));
        if self.caches.rsv_index.by_start_at != key {
            // In the memory of the last.
            let mut starts = std::mem::take(&mut self.caches.rsv_index.by_start);
            starts.clear();
            starts.extend(
                self.reservations.values().filter_map(|r| r.predicted.flatten().map(|p| (p, u64::from(r.slots())))),
            );
            starts.sort_unstable_by(|a, b| b.cmp(a));
            let mut sum = 0;
            for s in &mut starts {
                sum += s.1;
                s.1 = sum;
            }
            self.caches.rsv_index.by_start = starts;
            self.caches.rsv_index.by_start_at = key;
        }
        let by_start = &self.caches.rsv_index.by_start;
        // The last entry predicted at or after `until` holds the sum.
        let n = by_start.partition_point(|&(p, _)| p >= until);
        if n == 0 { 0 } else { by_start[n - 1].1 }
    }

    /// Slots all reservations hold.
    pub(crate) fn reserved_total(&mut self) -> u64 {
        if self.caches.rsv_index.total_at != Some(self.caches.rsv_changes) {
            self.caches.rsv_index.total = self.reservations.values().map(|r| u64::from(r.slots())).sum();
            self.caches.rsv_index.total_at = Some(self.caches.rsv_changes);
        }
        self.caches.rsv_index.total
    }

    /// At a call of the pass: the slots the last pass left reserved are
    /// counted for the time since ([`Engine::reserved_slot_seconds`]).
    pub(crate) fn count_reserved_time(&mut self, t: Time) {
        let c = &mut self.counters;
        if let Some((at, slots, unpredicted)) = c.rsv_last.filter(|l| l.0 < t) {
            let secs = (t.0 - at.0) as f64;
            c.rsv_slot_seconds += slots as f64 * secs;
            c.rsv_unpredicted_slot_seconds += unpredicted as f64 * secs;
            c.rsv_last = Some((t, slots, unpredicted));
        }
    }

    /// At the end of a pass: what it leaves reserved, and how much of it
    /// is known to have no predicted start (predictions are made only as
    /// backfill asks for them; one not made is not counted).
    pub(crate) fn note_reserved(&mut self, t: Time) {
        let slots = self.reserved_total();
        let unpredicted =
            self.reservations.values().filter(|r| r.predicted == Some(None)).map(|r| u64::from(r.slots())).sum();
        self.counters.rsv_last = Some((t, slots, unpredicted));
    }

    /// `taken` slots that were free to all are taken until `end` (`None`:
    /// for good) by a job placed without requirements. A cached predicted
    /// start stays where they come back by then, or where the hosts could
    /// give that many slots more than the job needs then: each slot taken
    /// lowers what a host can give by at most one (with no requirement,
    /// exclusive unit or accept interval in play). Any other is computed
    /// again.
    pub(crate) fn take_free(&mut self, taken: u32, end: Option<Time>) {
        if taken == 0 {
            return;
        }
        let mut changed = false;
        for r in self.reservations.values_mut() {
            let Some(Some(p)) = r.predicted else { continue };
            if end.is_some_and(|e| e <= p) {
                continue;
            }
            match r.spare {
                Some(s) if s >= taken => r.spare = Some(s - taken),
                _ => {
                    r.predicted = None;
                    changed = true;
                }
            }
        }
        if changed {
            self.caches.rsv_epoch += 1;
        }
    }

    /// Something started or a reservation changed: predicted starts are
    /// computed again when next needed.
    pub(crate) fn invalidate_predictions(&mut self) {
        self.caches.rsv_epoch += 1;
        for r in self.reservations.values_mut() {
            r.predicted = None;
        }
    }

    /// A new pass: predictions that depend on the time, through a queue's
    /// JOB_ACCEPT_INTERVAL, are computed again. The others stand until
    /// something changes: a start, an end, a host going up or down, a
    /// reservation made, grown or given up, a run limit passed.
    pub(crate) fn invalidate_timed_predictions(&mut self) {
        let mut changed = false;
        for r in self.reservations.values_mut() {
            if r.predicted.is_some() && self.queues[r.queue].spec.accept_interval().is_some() {
                r.predicted = None;
                changed = true;
            }
        }
        if changed {
            self.caches.rsv_epoch += 1;
        }
    }

    /// Computes the predicted start of every reservation that lacks one.
    pub(crate) fn predict_reservations(&mut self, t: Time) {
        #[cfg(debug_assertions)]
        for (&id, r) in &self.reservations {
            if let Some(p) = r.predicted {
                let (fresh, spare) = self.predict(id, t);
                debug_assert_eq!(p, fresh, "job {id}: a predicted start was kept past a change");
                if let (Some(kept), Some(p)) = (r.spare, p) {
                    debug_assert!(
                        spare.is_some_and(|s| s >= kept),
                        "job {id}: {kept} spare slots at {p:?} kept, {spare:?} now"
                    );
                }
            }
        }
        let key = Some((self.caches.rsv_epoch, self.caches.rsv_changes));
        if self.caches.rsv_index.complete_at == key {
            return;
        }
        // Each in job order, found after the last (no list to allocate).
        let mut after = std::ops::Bound::Unbounded;
        while let Some(id) = self
            .reservations
            .range((after, std::ops::Bound::Unbounded))
            .find(|(_, r)| r.predicted.is_none())
            .map(|(&id, _)| id)
        {
            after = std::ops::Bound::Excluded(id);
            let (p, spare) = self.predict(id, t);
            // A spare count is no bound where the time decides what hosts give.
            let timed =
                self.reservations.get(&id).is_some_and(|r| self.queues[r.queue].spec.accept_interval().is_some());
            let spare = spare.filter(|_| !timed);
            if let Some(r) = self.reservations.get_mut(&id) {
                (r.predicted, r.spare) = (Some(p), spare);
            }
        }
        self.caches.rsv_index.complete_at = key;
    }

    /// When pending job `id` is predicted to start, from now `t`, if the
    /// running jobs end when they are expected to (their estimates or run
    /// limits, module docs); `None` when it waits for a job with neither,
    /// or one past its estimate, or is not pending.
    pub fn predicted_start(&self, id: JobId, t: Time) -> Option<Time> {
        debug_assert!(self.parked.is_none(), "a host query with a parked reservation");
        self.predict(id, t).0
    }

    /// [`Engine::predicted_start`], and for a job placed without
    /// requirements the slots the hosts can give it then beyond its
    /// minimum (at least).
    fn predict(&self, id: JobId, t: Time) -> (Option<Time>, Option<u32>) {
        let Some(job) = self.jobs.get(&id).filter(|j| matches!(j.state, JobState::Pending)) else {
            return (None, None);
        };
        if job.constrained() {
            return (self.search_start(id, t), None);
        }
        let spare = |total: u64| Some(u32::try_from(total - u64::from(job.slots)).unwrap_or(u32::MAX));
        let q = &self.queues[job.queue];
        let in_set = |h: u32| self.hosts[h as usize].in_sets.iter().any(|s| s.0 == q.host_set);
        let sums = self.sums_tell(job);
        // First fit takes what each host can give: the job fits once the
        // hosts can give its minimum in all.
        let own = Ask { min: job.slots, max: job.slots, view: View::Own(id), released: None, taken: None };
        let mut total: u64 = if sums {
            self.free_in(q.host_set) + self.reservations.get(&id).map_or(0, |r| u64::from(r.slots()))
        } else {
            self.candidates(job, t, &own, |_| true).iter().map(|c| u64::from(c.1)).sum()
        };
        let need = u64::from(job.slots);
        if total >= need {
            return (Some(t), spare(total));
        }
        if sums {
            // Every host gives all it frees: the slots in the set tell.
            return match self.expected_ends.reach(q.host_set, need - total) {
                Some((p, back)) => (Some(p.max(t)), spare(total + back)),
                None => (None, None),
            };
        }
        // Otherwise what a host can give is min(a + released, b): `a` with
        // nothing released, `b` with all it runs released; and `a` is what
        // is free to the job there, within `b`. Per host reached: a, b, and
        // what is released so far.
        let mut index = vec![u32::MAX; self.hosts.len()];
        let mut reached: Vec<(u32, u32, u32)> = Vec::new();
        let mut gain = |h: u32, n: u32| -> u64 {
            let i = match index[h as usize] {
                u32::MAX => {
                    let host = &self.hosts[h as usize];
                    let b = self.host_cap_released(h, job, t, &own, (host.used, 0.0));
                    let a = (host.unclaimed() + self.reserved_to(host, own.view).0).min(b);
                    index[h as usize] = reached.len() as u32;
                    reached.push((a, b, 0));
                    reached.len() - 1
                }
                i => i as usize,
            };
            let (a, b, released) = &mut reached[i];
            let before = (*a + *released).min(*b);
            *released += n;
            u64::from((*a + *released).min(*b) - before)
        };
        // The first end after which it fits; the spare slots count every
        // end at that time.
        let mut fits: Option<Time> = None;
        for &((end, jid), _) in self.expected_ends.iter() {
            if let Some(p) = fits.filter(|&p| end > p) {
                return (Some(p.max(t)), spare(total));
            }
            let Some(JobState::Running { alloc, .. }) = self.jobs.get(&jid).map(|j| &j.state) else { continue };
            for &(h, n) in alloc.iter().filter(|a| in_set(a.0)) {
                total += gain(h, n);
            }
            if total >= need && fits.is_none() {
                fits = Some(end);
            }
        }
        match fits {
            Some(p) => (Some(p.max(t)), spare(total)),
            None => (None, None),
        }
    }

    /// Whether every host of `job`'s queue gives a job placed without
    /// requirements what is free there, its own reservation and what is
    /// released: then sums over the queue's hosts tell when it fits.
    pub(crate) fn sums_tell(&self, job: &crate::engine::Job) -> bool {
        let q = &self.queues[job.queue];
        self.caches.hosts_blocked == 0
            && !q.per_host_limits
            && q.partitions.is_empty()
            && (!self.cpus_bound(job) || self.caches.slots_within_cpus)
    }

    /// [`Engine::predicted_start`] by placing the job on what is free and
    /// what the first ends release: doubling the number of end times until
    /// it fits, then halving back to the first that does.
    pub(crate) fn search_start(&self, id: JobId, t: Time) -> Option<Time> {
        let job = self.jobs.get(&id).filter(|j| matches!(j.state, JobState::Pending))?;
        let fits = |released: Option<&Released>| {
            let ask = Ask { min: job.slots, max: job.slots, view: View::Own(id), released, taken: None };
            self.place(job, t, &ask).is_some()
        };
        if fits(None) {
            return Some(t);
        }
        let ends: Vec<(Time, JobId)> = self.expected_ends.iter().map(|e| e.0).collect();
        // The numbers of ends released at each distinct end time.
        let cuts: Vec<usize> = (1..=ends.len()).filter(|&m| m == ends.len() || ends[m].0 != ends[m - 1].0).collect();
        let fits_after = |c: usize| {
            let mut released = Released::default();
            for (h, n, m) in ends[..cuts[c]].iter().filter_map(|&(_, jid)| self.release_of(jid)).flatten() {
                let e = released.entry(h).or_default();
                e.0 += n;
                e.1 += m;
            }
            fits(Some(&released))
        };
        // Doubling, then halving between the last miss and the first fit
        // (cut indices; `miss` is one past the last cut known to miss).
        let (mut miss, mut hit) = (0usize, None);
        let mut step = 1;
        while miss < cuts.len() {
            let c = (miss + step - 1).min(cuts.len() - 1);
            if fits_after(c) {
                hit = Some(c);
                break;
            }
            miss = c + 1;
            step *= 2;
        }
        let mut hit = hit?;
        while miss < hit {
            let mid = miss + (hit - miss) / 2;
            if fits_after(mid) {
                hit = mid;
            } else {
                miss = mid + 1;
            }
        }
        Some(ends[cuts[hit] - 1].0.max(t))
    }

    /// What running job `id` gives back when it ends: host, slots, MB.
    fn release_of(&self, id: JobId) -> Option<impl Iterator<Item = (u32, u32, f64)> + '_> {
        let j = self.jobs.get(&id)?;
        let JobState::Running { alloc, .. } = &j.state else { return None };
        let mem = rusage_mem(j);
        Some(alloc.iter().map(move |&(h, n)| (h, n, self.rusage_on_host(mem, n))))
    }
}
