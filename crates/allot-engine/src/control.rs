//! Job control on the engine's side: a pending job held and released
//! (`bstop`, `bresume`), changed (`bmod`, `bswitch`), a running job back
//! to pending (`brequeue`), a finished one back again.

use crate::engine::{Engine, Job, JobId, JobState, Rejection};
use crate::model::JobSpec;
use crate::time::Time;

impl Engine {
    /// The pending job `id`, taken out of its queue.
    pub(crate) fn take_pending(&mut self, id: JobId) -> Result<Job, Rejection> {
        let job = self.jobs.get(&id).ok_or(Rejection::NoSuchJob(id))?;
        if !matches!(job.state, JobState::Pending) {
            return Err(Rejection::NotPending(id));
        }
        let job = job.clone();
        self.remove_pending(id, &job);
        Ok(job)
    }

    /// Holds or releases a pending job; holding a held job (or releasing a
    /// dispatchable one) changes nothing.
    pub(crate) fn set_held(&mut self, id: JobId, held: bool) -> Result<(), Rejection> {
        let mut job = self.take_pending(id)?;
        job.held = held;
        self.add_pending(id, &job);
        if let Some(j) = self.jobs.get_mut(&id) {
            j.held = held;
        }
        Ok(())
    }

    /// Replaces a pending job's spec, or changes nothing and says why.
    /// The new spec is admitted before the job is touched: a refused
    /// change leaves the job where it was in every queue and the engine
    /// as it was (a replay, which never sees the refusal, agrees).
    pub(crate) fn modify(&mut self, id: JobId, spec: &JobSpec) -> Result<(), Rejection> {
        let old = self.jobs.get(&id).ok_or(Rejection::NoSuchJob(id))?;
        if !matches!(old.state, JobState::Pending) {
            return Err(Rejection::NotPending(id));
        }
        let mut job = self.admit(spec)?;
        self.join_job_group(&job);
        let old = self.take_pending(id)?;
        job.held = old.held;
        job.submitted = old.submitted;
        self.add_pending(id, &job);
        if let Some(j) = self.jobs.get_mut(&id) {
            *j = job;
        }
        Ok(())
    }

    /// A running job's run limit becomes `limit` (`bmod -W`; `None`: its
    /// queue's): within its queue's RUNLIMIT maximum, as at submission. Its
    /// deadline and expected end move with it (a suspended job's are set
    /// again as it resumes); a limit it has already run past ends it at
    /// the next pass, as LSF's does.
    pub(crate) fn change_run_limit(&mut self, id: JobId, limit: Option<u64>, t: Time) -> Result<(), Rejection> {
        let job = self.jobs.get(&id).ok_or(Rejection::NoSuchJob(id))?;
        let JobState::Running { start, paused, suspended, .. } = &job.state else {
            return Err(Rejection::NotRunning(id));
        };
        self.check_run_limit(job.queue, limit, job.qos.1)?;
        // A suspended job's ends are counted again as it resumes.
        let (origin, counted) = (start.after(*paused), suspended.is_none());
        if counted {
            self.uncount_ends(id, origin);
        }
        if let Some(job) = self.jobs.get_mut(&id) {
            job.run_limit = limit;
        }
        if counted {
            self.recount_ends(id, origin, t);
        }
        self.invalidate_predictions();
        self.dirty = true;
        Ok(())
    }

    /// A running job's deadline and expected end counted again after a
    /// change (of its limit, its queue), with a pass at each: as they are
    /// computed, so its end removes them; one already past is met by the
    /// next pass.
    pub(crate) fn recount_ends(&mut self, id: JobId, origin: Time, t: Time) {
        let (end, expected) = self.count_ends(id, origin);
        for at in end.into_iter().chain(expected) {
            self.wakeups.insert(at.max(t));
        }
    }

    /// A running job goes back to pending (see [`Event::Requeue`]).
    pub(crate) fn requeue(&mut self, id: JobId, t: Time, cpu_time: f64, hold: bool) -> Result<(), Rejection> {
        let job = self.jobs.get_mut(&id).ok_or(Rejection::NoSuchJob(id))?;
        if !matches!(job.state, JobState::Running { .. }) {
            return Err(Rejection::NotRunning(id));
        }
        self.dep_changed.push(id);
        let state = std::mem::replace(&mut job.state, JobState::Pending);
        job.held = hold;
        let job = job.clone();
        self.release_running(id, &job, state, t, cpu_time);
        self.add_pending(id, &job);
        if let Some(j) = self.jobs.get_mut(&id) {
            j.backfill_limit = None;
            j.preempted = 0;
            // It starts again from its original request.
            if let Some(r) = j.resize.as_mut() {
                *r = crate::resize::Resize { auto: r.auto, ..Default::default() };
            }
        }
        Ok(())
    }

    /// A finished job comes back (see [`Event::Resubmit`]).
    pub(crate) fn resubmit(&mut self, id: JobId, spec: &JobSpec, hold: bool, t: Time) -> Result<(), Rejection> {
        if id.0 == 0 || id.0 >= self.next_id {
            return Err(Rejection::NoSuchJob(id));
        }
        if self.jobs.get(&id).is_some() {
            return Err(Rejection::NotFinished(id));
        }
        let mut job = self.admit(spec)?;
        self.join_job_group(&job);
        job.held = hold;
        job.submitted = t;
        self.ended.remove(&id);
        self.dep_changed.push(id);
        self.add_pending(id, &job);
        self.jobs.insert(id, job);
        Ok(())
    }
}
