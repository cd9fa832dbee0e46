//! What the drivers and the commands read of the engine: hosts, queues,
//! jobs, and when it next has something to do.

use crate::engine::{Engine, HostIdx, JobId, JobState, Slots};
use crate::model::{EngineConfig, QueueSpec};
use crate::shares::FairshareSet;
use crate::time::Time;

impl Engine {
    /// When the engine next has something to do without any event: a run
    /// limit to enforce, a host's JOB_ACCEPT_INTERVAL ending, a
    /// reservation's time running out, or the cycle after that.
    pub fn next_wakeup(&self) -> Option<Time> {
        let deadline = self.deadlines.first().map(|d| d.0);
        let accept = self.wakeups.first().copied();
        let expiry = self.rsv_expiry.first().map(|e| e.0);
        [deadline, accept, expiry, self.cooldown_ends].into_iter().flatten().min()
    }

    /// How many reservations were made (a job that held none reserving),
    /// how many were given up at their reservation time (MAX_RESERVE_TIME)
    /// before their job could start, and how many stood at the end of
    /// each pass, summed over the passes ([`Engine::passes`]).
    pub fn reservation_counts(&self) -> (u64, u64, u64) {
        (self.counters.rsv_made, self.counters.rsv_expired, self.counters.rsv_standing)
    }

    /// Reserved slots × seconds since the first pass, and of those the
    /// slots of reservations that had no predicted start (which no
    /// backfill job may use): what reservations held idle, as counted at
    /// the end of each pass until the next call of the pass.
    pub fn reserved_slot_seconds(&self) -> (f64, f64) {
        (self.counters.rsv_slot_seconds, self.counters.rsv_unpredicted_slot_seconds)
    }

    /// How many passes considered jobs: those that found nothing changed
    /// since the last one returned at once and are not counted.
    pub fn passes(&self) -> u64 {
        self.counters.passes
    }

    /// How many times passes tried a pending job (to start, backfill or
    /// reserve it): what a pass's work grows with.
    pub fn tries(&self) -> u64 {
        self.counters.tries
    }

    /// The queue a job goes to when it names none (`DEFAULT_QUEUE`).
    pub fn default_queue(&self) -> Option<&str> {
        self.config.default_queues.first().map(String::as_str)
    }

    pub fn host_name(&self, h: HostIdx) -> &str {
        &self.hosts[h.0 as usize].name
    }
    pub fn host_count(&self) -> usize {
        self.hosts.len()
    }
    pub fn total_slots(&self) -> u64 {
        self.hosts.iter().map(|h| u64::from(h.slots)).sum()
    }
    pub fn used_slots(&self) -> u64 {
        self.hosts.iter().map(|h| u64::from(h.used)).sum()
    }
    pub fn queue_names(&self) -> impl Iterator<Item = &str> {
        self.queues.iter().map(|q| q.spec.name.as_str())
    }
    /// A queue's pending jobs (held ones not counted) and slots in use.
    pub fn queue_load(&self, name: &str) -> Option<(u32, Slots)> {
        self.queues.iter().find(|q| q.spec.name == name).map(|q| (q.pending, Slots(q.used)))
    }
    /// Each queue with its pending jobs (held ones not counted), slots in
    /// use and held jobs, in configuration order.
    pub fn queues(&self) -> impl Iterator<Item = (&QueueSpec, u32, u32, u32)> {
        self.queues.iter().map(|q| (&q.spec, q.pending, q.used, q.held))
    }
    /// Each host: name, slots, slots in use, up.
    pub fn hosts(&self) -> impl Iterator<Item = (&str, u32, u32, bool)> {
        self.hosts.iter().map(|h| (h.name.as_str(), h.slots, h.used, h.up))
    }
    pub fn host_index(&self, name: &str) -> Option<HostIdx> {
        self.host_names.get(name).copied()
    }
    /// The fairshare adjustment every priority is computed with, and what
    /// the cluster tells it now: the memory the running jobs hold and the
    /// average memory per slot.
    pub fn adjustment(&self) -> crate::shares::priority::Adjustment {
        crate::shares::priority::Adjustment {
            memory: self.config.memory_adjustment.map(|threshold| crate::shares::MemoryAdjustment { threshold }),
            cluster: crate::shares::priority::ClusterMemory {
                in_use: self.memory_in_use,
                slot_memory: self.slot_memory,
            },
        }
    }

    /// The configuration the engine runs on (its fairshare policies are
    /// in [`Engine::fairshare`], with their usage).
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }
    pub fn fairshare(&self) -> &FairshareSet {
        &self.fairshare
    }
    pub fn is_pending(&self, id: JobId) -> bool {
        self.job_or_template(id).is_some_and(|j| matches!(j.state, JobState::Pending))
    }
    /// A pending or running job's user-assigned priority (`bsub -sp`).
    pub fn job_priority(&self, id: JobId) -> Option<u32> {
        self.job_or_template(id).map(|j| j.priority)
    }
    /// The slots a pending or running job asks for: its `-n` minimum and
    /// maximum after PROCLIMIT (a running job holds its allocation).
    pub fn job_slots(&self, id: JobId) -> Option<(u32, u32)> {
        self.job_or_template(id).map(|j| (j.slots, j.max_slots))
    }
    /// The run limit a job has, in seconds: what an interruptible backfill
    /// start cut it to, else its own or its queue's (see `Engine::job_limit`).
    pub fn job_run_limit(&self, id: JobId) -> Option<u64> {
        self.job_or_template(id).and_then(|j| self.job_limit(j))
    }
    /// The run limit an interruptible backfill start cut a running job's
    /// to, seconds (`None`: it was not cut).
    pub fn backfill_limit(&self, id: JobId) -> Option<u64> {
        self.jobs.get(&id).and_then(|j| j.backfill_limit)
    }
    /// Whether a running job ending with `exit` goes back to pending by
    /// its queue's REQUEUE_EXIT_VALUES (automatic job requeue; a code in
    /// EXCLUDE(...) requeues too, the job not kept off the host it ran on).
    pub fn requeues_on_exit(&self, id: JobId, exit: i32) -> bool {
        self.jobs.get(&id).is_some_and(|j| self.queues[j.queue].spec.requeue_exit.binary_search(&exit).is_ok())
    }
    /// A pending job held by `bstop`.
    pub fn is_held(&self, id: JobId) -> bool {
        self.job_or_template(id).is_some_and(|j| j.held)
    }
    /// The id the next submission gets (an array's first element's).
    pub fn next_job_id(&self) -> JobId {
        JobId(self.next_id)
    }
    /// Where a running job runs now (each host once, first host first):
    /// what it started on, as resizes changed it.
    pub fn job_alloc(&self, id: JobId) -> Option<Vec<(HostIdx, Slots)>> {
        match &self.jobs.get(&id)?.state {
            JobState::Running { alloc, .. } => {
                Some(crate::compound::merged(alloc).into_iter().map(|(h, n)| (HostIdx(h), Slots(n))).collect())
            }
            JobState::Pending => None,
        }
    }

    pub fn is_running(&self, id: JobId) -> bool {
        self.jobs.get(&id).is_some_and(|j| matches!(j.state, JobState::Running { .. }))
    }
    /// The queue a job (pending or running) is in.
    /// The resource requirement a job in the engine is placed by (its
    /// own with its queue's), as written.
    pub fn job_res_text(&self, id: JobId) -> Option<String> {
        self.job_or_template(id)?.res.as_ref().map(|r| r.text.clone())
    }

    pub fn job_queue(&self, id: JobId) -> Option<&str> {
        self.job_or_template(id).map(|j| self.queues[j.queue].spec.name.as_str())
    }
    /// Jobs pending or running.
    pub fn job_count(&self) -> usize {
        self.jobs.len()
    }
    pub fn pending_jobs(&self) -> impl Iterator<Item = JobId> + '_ {
        self.jobs.iter().filter(|(_, j)| matches!(j.state, JobState::Pending)).map(|(id, _)| id)
    }
}
