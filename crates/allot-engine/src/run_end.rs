//! A run's end: a job leaves the engine (a pending job removed, or a
//! running one ended), its slots free up and its usage moves to its share
//! accounts' history.
//!
//! A run's end heard late: its host was cut off, or allotd was down,
//! when the job ended, and the event that ends it comes after the engine
//! has gone on ([`Event::RanUntil`](crate::engine::Event::RanUntil), then
//! the `Finish` or `Requeue`). The log's clock never goes back, so the end
//! is applied at the time it is heard; but the job is charged as having
//! run until it really ended: its run time joins its share account's
//! history at its real end (the history decays exponentially, so adding
//! it at an earlier time is exact: it is what the account would hold had
//! the end been heard then). LSF's mbatchd likewise takes a job's end
//! time from sbatchd's report, not from when the report arrived.
//!
//! Decisions taken meanwhile (the passes that saw the job still running)
//! stand: they were taken on what was known. The multifactor policy's
//! ledger is charged at the time heard: it bills usage as its decay
//! periods pass, which cannot be taken back.

use crate::engine::{Engine, Job, JobId, JobState};
use crate::time::Time;

impl Engine {
    /// Running job `job` ended at `at`, before `t` (when its end is
    /// applied): remembered for [`Engine::charged_until`]. Ignored for a
    /// job not running, or an `at` not before `t`.
    pub(crate) fn ran_until(&mut self, job: JobId, at: Time, t: Time) {
        if at < t && self.is_running(job) {
            self.ran_until.insert(job, at);
        }
    }

    /// Until when job `id`, which started at `start` and whose end is
    /// applied at `t`, is charged: its real end if it was heard late,
    /// never before it started.
    pub(crate) fn charged_until(&mut self, id: JobId, start: Time, t: Time) -> Time {
        self.ran_until.remove(&id).map_or(t, |at| at.max(start).min(t))
    }

    /// A job ends (or a pending job is removed): its slots free up and its
    /// usage moves to history.
    pub(crate) fn finish(&mut self, id: JobId, t: Time, cpu_time: f64, exit: i32) {
        let Some(mut job) = self.jobs.remove(&id) else { return };
        self.dirty = true;
        self.ended.insert(id, exit);
        self.dep_changed.push(id);
        match std::mem::replace(&mut job.state, JobState::Pending) {
            JobState::Pending => self.remove_pending(id, &job),
            running => self.release_running(id, &job, running, t, cpu_time),
        }
    }

    /// A running job's slots free up and its usage moves to history.
    /// `state` is the state the job ran in (taken out of it).
    pub(crate) fn release_running(&mut self, id: JobId, job: &Job, state: JobState, t: Time, cpu_time: f64) {
        let JobState::Running { start, alloc, charges, cpu_reported, memory, suspended, paused } = state else {
            return;
        };
        self.unbook_limits(job, &alloc, suspended.is_some());
        self.release_resources(id);
        if suspended.is_some() {
            self.unbook_suspension(id, job, &alloc);
        }
        self.growing.remove(&id);
        let start = start.after(paused);
        self.dirty = true;
        self.end_loans(id);
        self.memory_in_use = (self.memory_in_use - memory).max(0.0);
        self.mf_ended(id, t);
        self.array_stops(id);
        self.job_group_stops(job);
        let slots: u32 = alloc.iter().map(|a| a.1).sum();
        for &(h, n) in &alloc {
            if let Some(e) = self.hosts[h as usize].per_queue.get_mut(&job.queue) {
                e.0 = e.0.saturating_sub(n);
            }
        }
        self.hold_hosts(job.res.as_deref(), job.exclusive, &alloc, false);
        // Slots free before the end the predictions counted on.
        self.invalidate_predictions();
        let lambda = self.pool_lambda;
        let q = &mut self.queues[job.queue];
        q.accumulated.update(t.0, q.used, lambda);
        q.used = q.used.saturating_sub(slots);
        if let Some(u) = q.user_used.get_mut(job.user as usize) {
            *u = u.saturating_sub(slots);
        }
        self.user_used[job.user as usize] = self.user_used[job.user as usize].saturating_sub(slots);
        if let Some(end) = self.job_end(job, start) {
            self.deadlines.remove(&(end, id));
        }
        if let Some(end) = self.expected_end(job, start) {
            self.expected_ends.remove(&(end, id));
        }
        let extra_cpu = (cpu_time - cpu_reported).max(0.0);
        let until = self.charged_until(id, start, t);
        for (p, leaf, charge) in &charges {
            let tree = &mut self.fairshare.policies[*p].tree;
            if extra_cpu > 0.0 {
                tree.add_cpu(*leaf, t, extra_cpu);
            }
            tree.finish_job(*leaf, charge, until);
        }
    }
}
