//! What limits a job: the run limit it runs under and what scheduling
//! counts on (its estimate), its termination deadline (spec 004, "How
//! Deadline Constraint Scheduling Works For Parallel Jobs"), the limit an
//! interruptible backfill start cuts (spec 004, "Using interruptible
//! backfill"), and the queue, user and slot pool limits that keep a
//! pending job waiting.

use crate::engine::{Engine, Job, JobId, Rejection};
use crate::reasons::PendingReason;
use crate::time::Time;

impl Engine {
    /// The run limit a job runs under: its `-W`, else the queue's RUNLIMIT
    /// default, else its maximum.
    pub(crate) fn effective_run_limit(&self, queue: usize, own: Option<u64>) -> Option<u64> {
        own.or_else(|| self.queues[queue].spec.run_limit.map(|r| r.default.unwrap_or(r.max)))
    }

    /// A job's run limit: the one an interruptible backfill start gave it,
    /// else its own (`-W`), else its queue's. In an interruptible backfill
    /// queue the job's own is not used (spec 004: "The job runtime
    /// requirement is ignored"; "The queue runtime limit is applied to the
    /// regularly scheduled job").
    pub(crate) fn job_limit(&self, job: &Job) -> Option<u64> {
        if job.backfill_limit.is_some() {
            return job.backfill_limit;
        }
        let own = job.run_limit.filter(|_| self.queues[job.queue].spec.interruptible.is_none());
        // A standby job is exempt from the queue's run-time limit.
        if job.qos.1 {
            return own;
        }
        self.effective_run_limit(job.queue, own)
    }

    /// How long scheduling counts on a job running: its estimate (`-We`,
    /// LSF's RUNTIME: "LSF uses the RUNTIME estimate for scheduling
    /// purposes only, and does not terminate jobs that exceed the RUNTIME
    /// duration") within its run limit, else its run limit. An
    /// interruptible backfill queue ignores the job's own, estimate too.
    pub(crate) fn job_duration(&self, job: &Job) -> Option<u64> {
        let limit = self.job_limit(job);
        let estimate = job.run_estimate.filter(|_| self.queues[job.queue].spec.interruptible.is_none());
        match (limit, estimate) {
            (Some(l), Some(e)) => Some(l.min(e)),
            (l, e) => l.or(e),
        }
    }

    /// When a job started at `start` is expected to end: after its
    /// [`Engine::job_duration`], or at its termination deadline if sooner.
    /// Where reservations are planned ([`crate::plan`]), a job with
    /// neither a run limit nor an estimate is expected to end when its CPU
    /// limit would be used up on all its processors (LSF: "If a run limit
    /// or a run time estimate is not defined, the scheduler will try to use
    /// CPU limit instead"; the CPU limit over its slots, as for a deadline,
    /// [`Engine::meets_deadline`]). A job may run longer than that, idle;
    /// past it, its end is no longer counted on, as for an estimate.
    pub(crate) fn expected_end(&self, job: &Job, start: Time) -> Option<Time> {
        let duration = self.job_duration(job).or_else(|| {
            job.cpu_limit.filter(|_| self.caches.planned).map(|cpu| cpu.div_ceil(u64::from(job.slots.max(1))))
        });
        ends_by(start, duration, job.term_time)
    }

    /// A job's own run limit (`-W`) within its queue's RUNLIMIT maximum, as
    /// at submission and `bmod -W`: an interruptible backfill queue ignores
    /// the job's (spec 004's `bsub -q lazy -W 3:0` goes in under
    /// RUNLIMIT=60), and a standby job is exempt.
    pub(crate) fn check_run_limit(&self, queue: usize, limit: Option<u64>, standby: bool) -> Result<(), Rejection> {
        let q = &self.queues[queue].spec;
        if let (Some(limit), Some(rl), None, false) = (limit, q.run_limit, q.interruptible, standby) {
            if limit > rl.max {
                return Err(Rejection::RunLimitTooLong { limit, max: rl.max, queue: q.name.clone() });
            }
        }
        Ok(())
    }

    /// Stops counting on a running job's ends, its deadline and expected
    /// end from `origin` (its start, moved on by the time it was
    /// suspended): it is suspended, or its limit changes.
    pub(crate) fn uncount_ends(&mut self, id: JobId, origin: Time) {
        let Some(job) = self.jobs.get(&id) else { return };
        let (end, expected) = (self.job_end(job, origin), self.expected_end(job, origin));
        if let Some(end) = end {
            self.deadlines.remove(&(end, id));
        }
        if let Some(e) = expected {
            self.expected_ends.remove(&(e, id));
        }
    }

    /// Counts on a running job's ends from `origin` again (see
    /// [`Engine::uncount_ends`]): its deadline and expected end, returned
    /// for the caller's wake-ups.
    pub(crate) fn count_ends(&mut self, id: JobId, origin: Time) -> (Option<Time>, Option<Time>) {
        let Some(job) = self.jobs.get(&id) else { return (None, None) };
        let crate::engine::JobState::Running { alloc, .. } = &job.state else { return (None, None) };
        let end = self.job_end(job, origin);
        let expected = self.expected_end(job, origin).map(|e| (e, self.slots_by_set(&alloc[..])));
        if let Some(end) = end {
            self.deadlines.insert((end, id));
        }
        let expected = expected.map(|(e, by_set)| {
            self.expected_ends.insert((e, id), by_set);
            e
        });
        (end, expected)
    }

    /// When a job started at `start` is killed: at its run limit, or at
    /// its termination deadline when that comes first.
    pub(crate) fn job_end(&self, job: &Job, start: Time) -> Option<Time> {
        ends_by(start, self.job_limit(job), job.term_time)
    }

    /// Deadline constraint scheduling (spec 004, "How Deadline Constraint
    /// Scheduling Works For Parallel Jobs"): a job with a termination
    /// deadline (`bsub -t`) starts only if it can finish by then. With a
    /// run limit, `deadline - now > run limit`; with a CPU limit and no
    /// run limit, `deadline - now > CPU limit / minimum processors` (all
    /// hosts run at CPU factor 1, so the limit on a candidate host is the
    /// limit given). With neither, only before the deadline. The strict
    /// `>` of the spec's formula holds for run limits too: a job that
    /// would end exactly at its deadline does not start.
    pub(crate) fn meets_deadline(&self, job: &Job, t: Time) -> bool {
        let Some(deadline) = job.term_time else { return true };
        if t >= deadline {
            return false;
        }
        let left = deadline.0 - t.0;
        match (self.job_limit(job), job.cpu_limit) {
            (Some(limit), _) => left > limit,
            (None, Some(cpu)) => left as f64 > cpu as f64 / f64::from(job.slots.max(1)),
            (None, None) => true,
        }
    }

    /// The run limit of an interruptible backfill job placed on `alloc`
    /// (spec 004: "The job runtime limit is set in such way, that the job
    /// releases the resource before it is needed by the slot reserving
    /// job"): until the earliest predicted start of a reservation it may
    /// borrow from on those hosts, and no longer than the queue's limit
    /// (RUNLIMIT "corresponds to a maximum time slice for backfill").
    pub(crate) fn interrupt_limit(&self, alloc: &[(u32, u32)], until: Time, t: Time, queue_limit: u64) -> u64 {
        alloc
            .iter()
            .flat_map(|&(h, _)| self.hosts[h as usize].rsv.iter())
            .filter_map(|r| self.reservations.get(&r.0).and_then(|x| x.predicted.flatten()))
            .filter(|&p| p >= until)
            .map(|p| p.0 - t.0)
            .fold(queue_limit, u64::min)
    }

    /// How many more slots `job` may hold under its queue's and its user's
    /// limits (a pending job's start takes no more either).
    pub(crate) fn slot_room(&self, job: &Job) -> u32 {
        let q = &self.queues[job.queue];
        let l = &q.spec.limits;
        let mut room = u32::MAX;
        if let Some(max) = l.qjob {
            room = room.min(max.saturating_sub(q.used));
        }
        if let Some(max) = l.ujob {
            room = room.min(max.saturating_sub(q.user_used.get(job.user as usize).copied().unwrap_or(0)));
        }
        if let Some(e) = q.entitled.filter(|_| q.pool.is_some()) {
            room = room.min(u32::try_from(e.saturating_sub(u64::from(q.used))).unwrap_or(u32::MAX));
        }
        let user = &self.users[job.user as usize];
        if let Some(&max) = self.config.user_max_jobs.get(user).or_else(|| self.config.user_max_jobs.get("default")) {
            room = room.min(max.saturating_sub(self.user_used[job.user as usize]));
        }
        room.min(self.alloc_limits_room(job))
    }

    /// What a start of `job` asks for: `-n min,max` taking no more than
    /// its limits leave room for ([`Engine::slot_room`]), whether it
    /// starts on free slots, as a backfill job or by preempting.
    pub(crate) fn start_ask(&self, job: &Job) -> crate::reserve::Ask<'static> {
        let room = if job.max_slots > job.slots { self.slot_room(job) } else { job.max_slots };
        crate::reserve::Ask::start_within(job, room)
    }

    /// Why a pending job cannot start now because of a limit, if one
    /// stops it.
    pub(crate) fn limit_reason(&self, id: JobId, job: &Job) -> Option<PendingReason> {
        self.limits_over(id, job, true).pop()
    }

    /// Every limit that stops a pending job now (`allot explain`).
    pub(crate) fn limit_reasons(&self, id: JobId, job: &Job) -> Vec<PendingReason> {
        self.limits_over(id, job, false)
    }

    /// The limits that stop a pending job now, in the order they are
    /// checked; only the first with `first_only`.
    fn limits_over(&self, id: JobId, job: &Job, first_only: bool) -> Vec<PendingReason> {
        let mut out = Vec::new();
        macro_rules! over {
            ($r:expr) => {{
                out.push($r);
                if first_only {
                    return out;
                }
            }};
        }
        if job.outside_proclimit {
            over!(PendingReason::ProcLimit);
        }
        // Admission keeps an array's queued elements within its limit; this
        // holds the limit even where a replayed log started more.
        if let Some(a) = self.array_of(id).map(|f| &self.arrays[&f]) {
            if a.limit.is_some_and(|l| a.running >= l) {
                over!(PendingReason::ArrayLimit);
            }
        }
        if let Some(group) = self.job_group_full(job) {
            over!(PendingReason::JobGroupLimit { group });
        }
        let q = &self.queues[job.queue];
        let l = &q.spec.limits;
        // Other jobs' reservations count as slots in use.
        let reserved = |counts: &dyn Fn(usize, u32) -> bool| {
            if self.reservations.is_empty() { 0 } else { self.reserved_slots(id, counts) }
        };
        if let Some(max) = l.qjob {
            if q.used + reserved(&|rq, _| rq == job.queue) + job.slots > max {
                over!(PendingReason::QueueLimit { queue: q.spec.name.clone(), limit: max });
            }
        }
        if let Some(max) = l.ujob {
            let used = q.user_used.get(job.user as usize).copied().unwrap_or(0)
                + reserved(&|rq, ru| rq == job.queue && ru == job.user);
            if used + job.slots > max {
                over!(PendingReason::UserQueueLimit { queue: q.spec.name.clone(), limit: max });
            }
        }
        if let (Some(e), Some(p)) = (q.entitled, q.pool) {
            if u64::from(q.used + job.slots) > e {
                over!(PendingReason::SlotPool { pool: self.pools[p].0.clone(), entitled: e });
            }
        }
        if q.pool.is_some() {
            // Queues ahead in the pool's order keep the free slots they are
            // still entitled to ("LSF orders the queues within each pool
            // based on the shares the queues are entitled to").
            let free = self.free_in(q.host_set);
            let held: u64 = q
                .pool_ahead
                .iter()
                .map(|&a| {
                    let qa = &self.queues[a];
                    qa.entitled.unwrap_or(0).saturating_sub(u64::from(qa.used)).min(qa.pending_slots)
                })
                .sum();
            if u64::from(job.slots) + held > free {
                let pool = q.pool.map(|p| self.pools[p].0.clone()).unwrap_or_default();
                over!(PendingReason::SlotPool { pool, entitled: q.entitled.unwrap_or(0) });
            }
        }
        let user = &self.users[job.user as usize];
        if let Some(&max) = self.config.user_max_jobs.get(user).or_else(|| self.config.user_max_jobs.get("default")) {
            if self.user_used[job.user as usize] + reserved(&|_, ru| ru == job.user) + job.slots > max {
                over!(PendingReason::UserLimit { limit: max });
            }
        }
        self.alloc_limits_over(job, &mut out, first_only);
        out
    }
}

/// After `seconds` from `start`, or at the termination deadline `term` when
/// that comes first; `None` with neither.
pub(crate) fn ends_by(start: Time, seconds: Option<u64>, term: Option<Time>) -> Option<Time> {
    let by_time = seconds.map(|d| start.after(d));
    match (by_time, term) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
