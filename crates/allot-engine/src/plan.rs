//! Planned reservation: LSF's time-based slot reservation
//! (`LSB_TIME_RESERVE_NUMJOBS` in `lsf.conf`) and its allocation planner
//! (`ALLOCATION_PLANNER = Y` with `PLAN` in `lsb.params`, `lsb.queues`),
//! in place of greedy reservation ([`crate::reserve`]).
//!
//! Greedy reservation has a job that cannot start hold every free slot it
//! could use, up to its size, whatever its start is. Under fairshare the
//! job at the top changes from pass to pass, and each reservation holds
//! idle slots until MAX_RESERVE_TIME gives them to the next, none reaching
//! its size; a reservation waiting on a job with no expected end holds
//! slots that no backfill job may use. On RICC's year (`allot sim
//! --backfill`) 27.5% of the machine's slot time was held so, a third of
//! it by reservations with no predicted start.
//!
//! A planned job instead gets a future allocation: the start it is
//! predicted to have when the running jobs end as expected
//! ([`crate::predict`]), and the slots it will run on then. It holds now
//! only the free slots that allocation needs beyond what the running jobs
//! release by then ("LSF will try to reserve as few resources as possible
//! in order to enact the plan"); the other free slots stay free to every
//! job, since taking them cannot delay that start. Backfill jobs may use
//! what it holds until its predicted start, as under greedy reservation.
//!
//! The rules, each a choice where LSF's documents are silent:
//! - A job with no predicted start (it waits for a running job with no
//!   run limit or estimate, or one past it) has no future allocation and
//!   holds nothing: "a set of pending jobs gets future allocation and an
//!   estimated start time so that the system can reserve a place for each
//!   job". It plans again at its next turn.
//! - A job placed without requirements, in a queue whose hosts all give
//!   what is free ([`Engine::sums_tell`]), holds as few free slots as its
//!   allocation needs: its size less what the running jobs release by its
//!   predicted start. Any other (requirements, memory, host limits) holds
//!   what greedy reservation would, while it has a predicted start.
//! - A job holding as many slots as its allocation needs keeps the hosts
//!   it holds them on while they stay up ("the planned allocation becomes
//!   sticky ... once it starts reserving"); only a change in how many it
//!   needs places it again, first fit.
//! - At most `LSB_TIME_RESERVE_NUMJOBS` (or the cluster's PLAN =
//!   MAX_JOBS[n]) jobs hold a plan at once, and at most the queue's
//!   MAX_JOBS of one queue. As under greedy reservation, jobs holding a
//!   plan are tried first in their unit ([`Engine::dispatch_holders`]), so
//!   a plan is kept by its job ("the planned allocation becomes sticky")
//!   until it starts, cannot be predicted, or its reservation time runs
//!   out; a job that holds none plans at its turn while fewer are held.
//! - A running job with neither a run limit nor an estimate is expected
//!   to end when its CPU limit is used up on all its slots, as LSF's
//!   time-based reservation documents ([`Engine::expected_end`]).
//! - PLAN = DELAY[minutes]: a job plans only once it has been pending that
//!   long since its submission; the engine wakes at that time.
//! - Time-based reservation keeps the queue's MAX_RESERVE_TIME; under the
//!   planner SLOT_RESERVE and RESOURCE_RESERVE are ignored, every job of a
//!   PLAN = Y queue may plan, and a plan has no reservation time.
//! - The plans are made from the running jobs only (as LSF's time-based
//!   reservation documents): a second plan may count on slots the first
//!   will take, and its start is then too early; it is made again at each
//!   pass.

use crate::engine::{Engine, Job, JobId};
use crate::model::Plan;
use crate::reserve::rusage_mem;
use crate::time::Time;

/// What a planned job holds of what is free now.
enum Hold {
    /// Nothing: it has no predicted start.
    Nothing,
    /// As many slots, placed first fit.
    Slots(u32),
    /// What greedy reservation would, while it has a predicted start.
    Greedy,
}

impl Engine {
    /// A job of a planned queue that could not start at its turn plans
    /// (module docs).
    pub(crate) fn reserve_planned(&mut self, id: JobId, plan: Plan, t: Time) {
        let Some(job) = self.jobs.get(&id) else { return };
        if !self.reservations.contains_key(&id) && !self.may_plan(job, plan, t) {
            return;
        }
        self.settle();
        let Some(job) = self.jobs.get(&id) else { return };
        let slots = job.slots;
        match self.plan_hold(id, job) {
            Hold::Nothing | Hold::Slots(0) => {
                self.drop_reservation(id);
            }
            // Holding just that on hosts that still give it, it keeps
            // them (as greedy reservation keeps what it holds).
            Hold::Slots(n) if self.holds_in_place(id, n) => {}
            Hold::Slots(n) => self.reserve_placed(id, n, t),
            Hold::Greedy => {
                self.reserve_placed(id, slots, t);
                if self.reservations.contains_key(&id) && self.predicted_start(id, t).is_none() {
                    self.drop_reservation(id);
                }
            }
        }
    }

    /// Whether `job`, holding no plan, may make one now: pending since
    /// its queue's DELAY, and fewer plans held than the cluster's and its
    /// queue's MAX_JOBS. Every reservation is a plan where plans are
    /// configured (the planner ignores the old reservation parameters;
    /// `LSB_TIME_RESERVE_NUMJOBS` makes every reserving queue planned).
    fn may_plan(&self, job: &Job, plan: Plan, t: Time) -> bool {
        let under = |max: Option<u32>, held: usize| max.is_none_or(|n| held < n as usize);
        t >= job.submitted.after(plan.delay)
            && under(self.config.plan_max_jobs, self.reservations.len())
            && under(plan.max_jobs, self.reservations.values().filter(|r| r.queue == job.queue).count())
    }

    /// What `job` (`id`) holds of what is free now (module docs).
    fn plan_hold(&self, id: JobId, job: &Job) -> Hold {
        if job.constrained() || rusage_mem(job) > 0.0 || !self.sums_tell(job) {
            return Hold::Greedy;
        }
        let set = self.queues[job.queue].host_set;
        let need = u64::from(job.slots);
        let held = self.reservations.get(&id).map_or(0, |r| u64::from(r.slots()));
        let now = self.free_in(set) + held;
        if now >= need {
            // Slots are not what stops it: it holds what it could use.
            return Hold::Greedy;
        }
        match self.expected_ends.reach(set, need - now) {
            // What is released by its predicted start comes to it then.
            Some((_, back)) => Hold::Slots(u32::try_from(need.saturating_sub(back)).unwrap_or(u32::MAX)),
            None => Hold::Nothing,
        }
    }

    /// Whether `id` holds `n` slots, all on hosts that are up and take
    /// work (it holds no memory: it is placed without requirements).
    fn holds_in_place(&self, id: JobId, n: u32) -> bool {
        self.reservations
            .get(&id)
            .is_some_and(|r| r.slots() == n && r.hosts.iter().all(|&(h, _, _)| !self.hosts[h as usize].blocked()))
    }

    /// At a job's entry into the queue: a queue's PLAN = DELAY wakes the
    /// engine when the job may plan.
    pub(crate) fn plan_wakeup(&mut self, job: &Job) {
        if let Some(delay) = self.queues[job.queue].spec.plan.map(|p| p.delay).filter(|&d| d > 0) {
            self.wakeups.insert(job.submitted.after(delay));
        }
    }
}
