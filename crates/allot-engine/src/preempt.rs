//! Preemptive scheduling: LSF's queue-based preemption (`PREEMPTION` of
//! `lsb.queues`, `PREEMPT_FOR` of `lsb.params`; spec 004, "Optimized
//! Preemption of Parallel Jobs").
//!
//! Which queues: a job of queue A may preempt a running job of queue B
//! when A's PRIORITY is higher than B's, A is PREEMPTIVE or B is
//! PREEMPTABLE, and neither names a list that leaves the other out
//! (`PREEMPTIVE[q ...]` preempts only those queues, `PREEMPTABLE[q ...]` is
//! preempted only by those). Queues with a preference level
//! (`PREEMPTIVE[low+2]`) are preempted first, the higher level first; then
//! the others; among equals the lower-priority queue first, then the one
//! configured first.
//!
//! When: a pending job of a queue that may preempt, which can start on
//! neither free slots nor as a backfill job, is placed as any start is
//! (its resource requirement, span and host order), counting as free the
//! slots of the jobs it may preempt. Then, on each host of that placement
//! that lacks free slots, jobs are preempted in order: their queue's
//! order above, then, within a queue, the job submitted last first (the
//! last in first-come first-served order), or with LEAST_RUN_TIME the job
//! that has run the shortest time (its time running, not suspended).
//! How many (the spec: by default "LSF can over-preempt parallel jobs"):
//! - by default one job for each slot lacking, as if each freed one slot;
//!   a parallel job preempting parallel jobs suspends more than it needs;
//! - MINI_JOB: each job's slots count in full, so no more jobs are
//!   preempted than it takes to free enough ("preempting only enough
//!   parallel jobs to start the high-priority parallel job");
//! - OPTIMAL_MINI_JOB: the fewest jobs over the whole placement ("based on
//!   the least number of jobs that will be suspended"): again and again
//!   the job that frees the most of what its hosts still lack, all its
//!   hosts counted (a parallel job over two hosts that lack slots may
//!   free both at once), the first in order among equals.
//!
//! Slots freed on other hosts by a job preempted for one count there. A
//! job preempted (SSUSP) keeps its slots: other jobs see them in use, the
//! jobs that may preempt it see them free (it need not be preempted
//! again). Queue limits count it (LSF: "always enforced for both running
//! and suspended jobs"); a user's MAX_JOBS does not ("suspended jobs never
//! count against the total job slot limit for individual users"). It is
//! charged no run time and no slots while suspended, and its run limit
//! counts the time it runs (LSF's run limit is "the accumulated time the
//! job has spent in the RUN state"). Exclusive jobs (`-x`) neither preempt
//! nor are preempted; backfill jobs that borrowed reserved slots are not
//! preempted unless PREEMPT_JOBTYPE has BACKFILL. Nor is a job preempted
//! MAX_JOB_PREEMPT times already (its queue's, else lsb.params'), one that
//! has run NO_PREEMPT_RUN_TIME, or one that ends within
//! NO_PREEMPT_FINISH_TIME (minutes, or a percentage of its run time
//! estimate, else run limit; a percentage binds no job without either).
//!
//! Resumed: at the end of each pass, each suspended job whose hosts are up
//! and have room for it again among the running jobs (no job that
//! preempted it, or took its slots since, is still on them), the
//! highest-priority queue's first, then the one suspended first. At the
//! end, so that a pending job that may preempt it takes its slots first
//! rather than resuming it to suspend it again. A job preempted in this
//! very pass (one over-preempted) is resumed a cycle later
//! (MBD_SLEEP_TIME), as LSF's over-preempted jobs stay suspended until
//! the next time it looks.

use std::collections::BTreeMap;

use crate::Rejection;
use crate::engine::{Alloc, Decision, Engine, Job, JobId, JobState};
use crate::model::QueueSpec;
use crate::reserve::{Ask, Released};
use crate::time::Time;

/// Since when, and by which job, a running job is preempted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Suspension {
    pub(crate) since: Time,
    pub(crate) by: JobId,
}

/// The queues each queue's jobs may preempt, in the order their jobs are
/// preempted (module docs).
pub(crate) fn victim_queues(queues: &[QueueSpec]) -> Vec<Vec<usize>> {
    queues
        .iter()
        .map(|a| {
            let mut victims: Vec<(std::cmp::Reverse<Option<u32>>, i32, usize)> = queues
                .iter()
                .enumerate()
                .filter_map(|(bi, b)| preference(a, b).map(|pref| (std::cmp::Reverse(pref), b.priority, bi)))
                .collect();
            victims.sort_unstable();
            victims.into_iter().map(|v| v.2).collect()
        })
        .collect()
}

/// Whether jobs of `a` may preempt jobs of `b`, and with which preference
/// level (module docs).
fn preference(a: &QueueSpec, b: &QueueSpec) -> Option<Option<u32>> {
    if a.priority <= b.priority {
        return None;
    }
    let (by_a, of_b) = (&a.preemption.preemptive, &b.preemption.preemptable);
    if by_a.is_none() && of_b.is_none() {
        return None;
    }
    let named = by_a.as_ref().filter(|l| !l.is_empty()).map(|l| l.iter().find(|(q, _)| *q == b.name));
    if of_b.as_ref().is_some_and(|l| !l.is_empty() && !l.contains(&a.name)) {
        return None;
    }
    match named {
        Some(None) => None,
        Some(Some((_, pref))) => Some(*pref),
        None => Some(None),
    }
}

/// A job that may be preempted: its place in the order, where it runs,
/// and whether it is suspended already.
struct Candidate {
    key: (usize, u64, std::cmp::Reverse<JobId>),
    id: JobId,
    alloc: Alloc,
    suspended: bool,
}

impl Engine {
    /// Whether a job of `queue` may preempt any job now: its queue may
    /// preempt one whose jobs hold slots.
    pub(crate) fn may_preempt(&self, queue: usize) -> bool {
        self.queues[queue].victims.iter().any(|&v| self.queues[v].used > 0)
    }

    /// The jobs job `id` (of queue `queue`) may preempt, in order.
    fn candidates_for(&self, queue: usize, t: Time) -> Vec<Candidate> {
        let victims = &self.queues[queue].victims;
        let least_run_time = self.config.preempt_for.least_run_time;
        let mut out: Vec<Candidate> = Vec::new();
        for (id, j) in self.jobs.iter() {
            let JobState::Running { start, alloc, suspended, paused, .. } = &j.state else { continue };
            let Some(rank) = victims.iter().position(|&v| v == j.queue) else { continue };
            if j.exclusive || (self.loans.contains_key(&id) && !self.config.preempt_for.backfill_jobs) {
                continue;
            }
            let ran_for = t.0.saturating_sub(start.0).saturating_sub(*paused);
            if !self.preemptable_now(j, ran_for) {
                continue;
            }
            // Within a queue: the shortest run time first, or the last
            // submitted.
            let ran = if least_run_time { ran_for } else { 0 };
            out.push(Candidate {
                key: (rank, ran, std::cmp::Reverse(id)),
                id,
                alloc: alloc.clone(),
                suspended: suspended.is_some(),
            });
        }
        out.sort_unstable_by_key(|c| c.key);
        out
    }

    /// Whether a running job that has run `ran` seconds may be preempted
    /// under MAX_JOB_PREEMPT, NO_PREEMPT_RUN_TIME and
    /// NO_PREEMPT_FINISH_TIME (module docs).
    fn preemptable_now(&self, job: &Job, ran: u64) -> bool {
        use crate::model::PreemptTime;
        let pf = &self.config.preempt_for;
        let max = self.queues[job.queue].spec.max_job_preempt.or(pf.max_job_preempt);
        if max.is_some_and(|m| job.preempted >= m) {
            return false;
        }
        let duration = self.job_duration(job);
        let secs = |p: PreemptTime| match p {
            PreemptTime::Seconds(s) => Some(s),
            PreemptTime::Percent(pc) => duration.map(|d| (d as f64 * pc / 100.0).ceil() as u64),
        };
        if pf.no_preempt_run_time.and_then(secs).is_some_and(|s| ran >= s) {
            return false;
        }
        let left = duration.map(|d| d.saturating_sub(ran));
        if let (Some(s), Some(left)) = (pf.no_preempt_finish_time.and_then(secs), left) {
            if left <= s {
                return false;
            }
        }
        true
    }

    /// Starts pending job `id` by preempting jobs (module docs), the
    /// suspensions pushed to `out`; `None`, and nothing changed, when
    /// even that leaves it too few slots.
    pub(crate) fn try_preempt(&mut self, id: JobId, t: Time, out: &mut Vec<Decision>) -> Option<Decision> {
        let job = self.jobs.get(&id)?;
        if job.exclusive || !self.may_preempt(job.queue) {
            return None;
        }
        // Not even every slot of the queues it may preempt would do.
        let set = self.queues[job.queue].host_set;
        let preemptable: u64 = self.queues[job.queue].victims.iter().map(|&v| u64::from(self.queues[v].used)).sum();
        if self.free_in(set) + preemptable < u64::from(job.slots) {
            return None;
        }
        let candidates = self.candidates_for(job.queue, t);
        // Per host: the slots of the jobs it may preempt, and of those
        // already suspended (free to it as they are).
        let mut held: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
        for c in &candidates {
            for &(h, n) in &c.alloc {
                let e = held.entry(h).or_default();
                e.0 += n;
                if c.suspended {
                    e.1 += n;
                }
            }
        }
        let free_without = |h: u32, gone: u32| self.hosts[h as usize].unclaimed_without(gone);
        let mut released = Released::default();
        for (&h, &(all, _)) in &held {
            let more = free_without(h, all) - self.hosts[h as usize].unclaimed();
            if more > 0 {
                released.insert(h, (more, 0.0));
            }
        }
        if released.is_empty() {
            return None;
        }
        let alloc = self.place(job, t, &Ask { released: Some(&released), ..self.start_ask(job) })?;
        if !self.may_start_on(job, &alloc, t) {
            return None;
        }
        let chosen = self.choose_victims(&alloc, &candidates, &held, free_without)?;
        for &v in &chosen {
            self.suspend(v, id, t);
            out.push(Decision::Suspend { job: v, by: id });
        }
        self.invalidate_predictions();
        Some(self.start(id, alloc, t, false))
    }

    /// The jobs to preempt so that `alloc` has its slots (module docs).
    fn choose_victims(
        &self,
        alloc: &[(u32, u32)],
        candidates: &[Candidate],
        held: &BTreeMap<u32, (u32, u32)>,
        free_without: impl Fn(u32, u32) -> u32,
    ) -> Option<Vec<JobId>> {
        let pf = self.config.preempt_for;
        if pf.optimal_mini_job {
            return fewest_victims(alloc, candidates, held, free_without);
        }
        let mut chosen: Vec<usize> = Vec::new();
        let mut freed: BTreeMap<u32, u32> = BTreeMap::new();
        for &(h, n) in alloc {
            let suspended = held.get(&h).map_or(0, |x| x.1);
            let have = free_without(h, suspended) + freed.get(&h).copied().unwrap_or(0);
            let mut lacking = n.saturating_sub(have);
            if lacking == 0 {
                continue;
            }
            let on = |c: &Candidate| c.alloc.iter().filter(|a| a.0 == h).map(|a| a.1).sum::<u32>();
            let here: Vec<usize> = (0..candidates.len())
                .filter(|&i| !candidates[i].suspended && !chosen.contains(&i) && on(&candidates[i]) > 0)
                .collect();
            for i in here {
                if lacking == 0 {
                    break;
                }
                let c = &candidates[i];
                chosen.push(i);
                // Without MINI_JOB each preempted job counts as one slot.
                lacking = if pf.mini_job { lacking.saturating_sub(on(c)) } else { lacking - 1 };
                for &(h2, n2) in &c.alloc {
                    *freed.entry(h2).or_default() += n2;
                }
            }
            let have = free_without(h, suspended) + freed.get(&h).copied().unwrap_or(0);
            if have < n {
                return None;
            }
        }
        Some(chosen.into_iter().map(|i| candidates[i].id).collect())
    }

    /// Suspends running job `id`, preempted by `by`: it keeps its slots,
    /// leaves its deadlines and its charges until it is resumed.
    fn suspend(&mut self, id: JobId, by: JobId, t: Time) {
        let Some(job) = self.jobs.get(&id) else { return };
        let JobState::Running { start, alloc, paused, .. } = &job.state else { return };
        let origin = start.after(*paused);
        let (alloc, user) = (alloc.clone(), job.user);
        self.uncount_ends(id, origin);
        self.book_limits(id, false);
        self.book_suspension(id, &alloc, user);
        self.mf_ended(id, t);
        let Some(job) = self.jobs.get_mut(&id) else { return };
        job.preempted += 1;
        let JobState::Running { charges, suspended, .. } = &mut job.state else { return };
        *suspended = Some(Suspension { since: t, by });
        for (p, leaf, charge) in std::mem::take(charges) {
            self.fairshare.policies[p].tree.finish_job(leaf, &charge, t);
        }
        self.book_limits(id, true);
        self.growing.remove(&id);
        self.dirty = true;
    }

    /// Resumes the suspended jobs that have room again (module docs).
    pub(crate) fn resume_suspended(&mut self, t: Time, out: &mut Vec<Decision>) {
        if self.suspended.is_empty() {
            return;
        }
        let mut order: Vec<(std::cmp::Reverse<i32>, Time, JobId)> = Vec::new();
        for &id in &self.suspended {
            let Some(j) = self.jobs.get(&id) else { continue };
            let JobState::Running { suspended: Some(s), .. } = &j.state else { continue };
            order.push((std::cmp::Reverse(self.queues[j.queue].spec.priority), s.since, id));
        }
        order.sort_unstable();
        for (_, since, id) in order {
            let Some(JobState::Running { alloc, .. }) = self.jobs.get(&id).map(|j| &j.state) else { continue };
            let room = alloc.iter().all(|&(h, n)| {
                let host = &self.hosts[h as usize];
                host.up && host.used - host.suspended + n <= host.slots
            }) && self.resume_within_limits(id);
            if room && since == t {
                // Preempted in this very pass, one too many: resumed at
                // the next.
                self.wakeups.insert(t.after(u64::from(self.config.mbd_sleep_time.max(1))));
            } else if room {
                self.resume(id, t);
                out.push(Decision::Resume { job: id });
            }
        }
    }

    /// Resumes suspended job `id` at `t`: its run limit moves on by the
    /// time it was suspended, and it is charged again from `t`.
    fn resume(&mut self, id: JobId, t: Time) {
        self.book_limits(id, false);
        let Some(job) = self.jobs.get_mut(&id) else { return };
        let JobState::Running { start, alloc, suspended, paused, memory, .. } = &mut job.state else { return };
        let Some(s) = suspended.take() else { return };
        *paused += t.0.saturating_sub(s.since.0);
        let (origin, alloc, memory, user) = (start.after(*paused), alloc.clone(), *memory, job.user);
        self.unbook(id, &alloc, user);
        self.book_limits(id, true);
        let Some(job) = self.jobs.get(&id) else { return };
        let limit = self.job_limit(job).map(|l| l.saturating_sub(t.0 - origin.0));
        if let (_, Some(e)) = self.count_ends(id, origin) {
            self.wakeups.insert(e);
        }
        let charges = self.charge_start(id, &alloc, t, limit);
        if let Some(JobState::Running { charges: c, memory: m, .. }) = self.jobs.get_mut(&id).map(|j| &mut j.state) {
            *c = charges;
            // Its memory is held again by the accounts now charged.
            *m = 0.0;
        }
        self.memory_in_use = (self.memory_in_use - memory).max(0.0);
        self.set_memory(id, memory);
        self.invalidate_predictions();
        self.track_growth(id);
        self.dirty = true;
    }

    /// What a suspension changes on the hosts and in its user's count.
    pub(crate) fn book_suspension(&mut self, id: JobId, alloc: &[(u32, u32)], user: u32) {
        for &(h, n) in alloc {
            self.hosts[h as usize].suspended += n;
        }
        let slots: u32 = alloc.iter().map(|a| a.1).sum();
        self.user_used[user as usize] = self.user_used[user as usize].saturating_sub(slots);
        self.suspended.insert(id);
    }

    /// A suspended job that ends leaves its suspension first.
    pub(crate) fn unbook_suspension(&mut self, id: JobId, job: &Job, alloc: &[(u32, u32)]) {
        self.unbook(id, alloc, job.user);
    }

    fn unbook(&mut self, id: JobId, alloc: &[(u32, u32)], user: u32) {
        for &(h, n) in alloc {
            let host = &mut self.hosts[h as usize];
            host.suspended = host.suspended.saturating_sub(n);
        }
        self.user_used[user as usize] += alloc.iter().map(|a| a.1).sum::<u32>();
        self.suspended.remove(&id);
    }

    /// Suspends a running job as a replayed log says the pass did, where
    /// this engine's pass did not ([`crate::Event::Preempted`]): the same
    /// booking. Refused if it is not running or is suspended already.
    pub(crate) fn force_suspend(&mut self, id: JobId, by: JobId, t: Time) -> Result<(), Rejection> {
        match self.jobs.get(&id).map(|j| &j.state) {
            Some(JobState::Running { suspended: None, .. }) => {
                self.suspend(id, by, t);
                Ok(())
            }
            Some(JobState::Running { .. }) => Err(Rejection::Suspended(id)),
            _ => Err(Rejection::NotRunning(id)),
        }
    }

    /// Resumes a suspended job as a replayed log says the pass did
    /// ([`crate::Event::Resumed`]).
    pub(crate) fn force_resume(&mut self, id: JobId, t: Time) -> Result<(), Rejection> {
        if self.preempted_by(id).is_none() {
            return Err(Rejection::NotPreempted(id));
        }
        self.resume(id, t);
        Ok(())
    }

    /// Every job suspended by preemption, with the job that preempted it.
    pub fn preempted_jobs(&self) -> Vec<(JobId, JobId)> {
        self.suspended.iter().filter_map(|&id| Some((id, self.preempted_by(id)?))).collect()
    }

    /// The job that preempted a suspended job, if `id` is one.
    pub fn preempted_by(&self, id: JobId) -> Option<JobId> {
        match self.jobs.get(&id).map(|j| &j.state) {
            Some(JobState::Running { suspended: Some(s), .. }) => Some(s.by),
            _ => None,
        }
    }
}

/// OPTIMAL_MINI_JOB's choice (module docs): what each host of `alloc`
/// lacks, then the candidates that free the most of it, all hosts
/// counted, until nothing is lacking; `None` when they cannot.
fn fewest_victims(
    alloc: &[(u32, u32)],
    candidates: &[Candidate],
    held: &BTreeMap<u32, (u32, u32)>,
    free_without: impl Fn(u32, u32) -> u32,
) -> Option<Vec<JobId>> {
    let mut lacking: BTreeMap<u32, u32> = alloc
        .iter()
        .map(|&(h, n)| (h, n.saturating_sub(free_without(h, held.get(&h).map_or(0, |x| x.1)))))
        .filter(|&(_, l)| l > 0)
        .collect();
    let frees = |c: &Candidate, lacking: &BTreeMap<u32, u32>| -> u32 {
        c.alloc.iter().map(|&(h, n)| lacking.get(&h).map_or(0, |&l| l.min(n))).sum()
    };
    let mut chosen: Vec<JobId> = Vec::new();
    let mut left: Vec<&Candidate> = candidates.iter().filter(|c| !c.suspended).collect();
    while !lacking.is_empty() {
        // The first in order among those that free the most.
        let (best, most) = left
            .iter()
            .enumerate()
            .map(|(i, c)| (i, frees(c, &lacking)))
            .fold((0, 0), |(bi, bm), (i, m)| if m > bm { (i, m) } else { (bi, bm) });
        if most == 0 {
            return None;
        }
        let c = left.remove(best);
        for &(h, n) in &c.alloc {
            if let Some(l) = lacking.get_mut(&h) {
                *l = l.saturating_sub(n);
                if *l == 0 {
                    lacking.remove(&h);
                }
            }
        }
        chosen.push(c.id);
    }
    Some(chosen)
}
