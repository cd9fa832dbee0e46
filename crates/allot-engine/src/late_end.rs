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

use crate::engine::{Engine, JobId};
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
}
