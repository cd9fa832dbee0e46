//! Job arrays (`bsub -J "name[1-100]%5"`): an array's elements are jobs of
//! their own, with consecutive ids in index order, scheduled like any job,
//! except that at most `limit` of them run at once (LSF's job array job
//! slot limit; a stopped running element still counts, as a stopped job
//! keeps its slots).
//!
//! The limit costs nothing per dispatch pass: of an array's pending
//! elements that could be dispatched, only as many as the limit leaves room
//! for are in their queue ("admitted"); the others are parked, in id order,
//! and the first of them joins the queue when an element stops running or
//! an admitted one leaves the queue without starting. Elements of one array
//! have the same queue, user and size, so the first parked element is the
//! one the queue would have tried next anyway: the order is the one a scan
//! of every element would give.

use std::collections::BTreeSet;

use crate::engine::{Engine, JobId, JobState};

/// What the engine keeps of one array.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct ArrayState {
    pub(crate) size: u32,
    pub(crate) limit: Option<u32>,
    /// Elements running (or stopped while running).
    pub(crate) running: u32,
    /// Dispatchable pending elements in their queue.
    pub(crate) admitted: u32,
    /// Dispatchable pending elements waiting for room under the limit.
    pub(crate) parked: BTreeSet<JobId>,
    /// Late materialization ([`crate::array_tail`]): the elements not made
    /// yet, what each is made from, and how many made ones are pending.
    #[serde(default)]
    pub(crate) unmade: crate::job_set::JobSet,
    #[serde(default)]
    pub(crate) template: Option<Box<crate::engine::Job>>,
    #[serde(default)]
    pub(crate) made_pending: u32,
    /// Elements removed before they were made (ended with 130).
    #[serde(default)]
    pub(crate) removed: crate::job_set::JobSet,
}

impl ArrayState {
    pub(crate) fn new(size: u32, limit: Option<u32>) -> Self {
        ArrayState {
            size,
            limit,
            running: 0,
            admitted: 0,
            parked: BTreeSet::new(),
            unmade: crate::job_set::JobSet::default(),
            template: None,
            made_pending: 0,
            removed: crate::job_set::JobSet::default(),
        }
    }

    fn has_room(&self) -> bool {
        self.limit.is_none_or(|l| self.running + self.admitted < l)
    }
}

impl Engine {
    /// The array job `id` is an element of (its first element's id).
    pub(crate) fn array_of(&self, id: JobId) -> Option<JobId> {
        let (&first, a) = self.arrays.range(..=id).next_back()?;
        (id.0 < first.0 + u64::from(a.size)).then_some(first)
    }

    /// A dispatchable pending job is about to join its queue: whether it
    /// may (it is no element, or its array has room); if not, it is parked.
    pub(crate) fn array_admits(&mut self, id: JobId) -> bool {
        let Some(first) = self.array_of(id) else { return true };
        let Some(a) = self.arrays.get_mut(&first) else { return true };
        if a.has_room() {
            a.admitted += 1;
            true
        } else {
            a.parked.insert(id);
            false
        }
    }

    /// A dispatchable pending job leaves pending without starting: whether
    /// it was parked (so not in its queue). An admitted element's room goes
    /// to the first parked one.
    pub(crate) fn array_leaves(&mut self, id: JobId) -> bool {
        let Some(first) = self.array_of(id) else { return false };
        let Some(a) = self.arrays.get_mut(&first) else { return false };
        if a.parked.remove(&id) {
            return true;
        }
        a.admitted = a.admitted.saturating_sub(1);
        self.admit_parked(first);
        false
    }

    /// An admitted element starts running.
    pub(crate) fn array_starts(&mut self, id: JobId) {
        self.array_pending(id, false);
        if let Some(a) = self.array_of(id).and_then(|f| self.arrays.get_mut(&f)) {
            a.admitted = a.admitted.saturating_sub(1);
            a.running += 1;
        }
    }

    /// An element that ran (and may still be running, after a
    /// reconfiguration) is counted as running.
    pub(crate) fn array_runs(&mut self, id: JobId) {
        if let Some(a) = self.array_of(id).and_then(|f| self.arrays.get_mut(&f)) {
            a.running += 1;
        }
    }

    /// A running element stops running (it ended or was requeued).
    pub(crate) fn array_stops(&mut self, id: JobId) {
        let Some(first) = self.array_of(id) else { return };
        if let Some(a) = self.arrays.get_mut(&first) {
            a.running = a.running.saturating_sub(1);
        }
        self.admit_parked(first);
    }

    /// A parked element is started by the log's say-so (a replayed start):
    /// it is counted as admitted and in its queue's pending count, as a
    /// start expects.
    pub(crate) fn array_unpark_for_start(&mut self, id: JobId) {
        let Some(first) = self.array_of(id) else { return };
        let Some(a) = self.arrays.get_mut(&first) else { return };
        if !a.parked.remove(&id) {
            return;
        }
        a.admitted += 1;
        if let Some(job) = self.jobs.get(&id) {
            self.queues[job.queue].move_pending(job.slots, true);
        }
    }

    /// Parked elements join their queue while the array has room.
    fn admit_parked(&mut self, first: JobId) {
        loop {
            let Some(a) = self.arrays.get_mut(&first) else { return };
            if !a.has_room() {
                return;
            }
            let Some(id) = a.parked.pop_first() else { return };
            a.admitted += 1;
            let Some(job) = self.jobs.get(&id).cloned() else {
                a.admitted -= 1;
                continue;
            };
            self.enqueue(id, &job);
            self.queues[job.queue].move_pending(job.slots, true);
            self.dirty = true;
        }
    }

    /// Sets an array's running element limit (`bmod -J "%n"`; `None`
    /// lifts it): its admitted elements are parked again and as many as
    /// the new limit leaves room for are admitted, in id order.
    pub(crate) fn set_array_limit(&mut self, first: JobId, limit: Option<u32>) -> Result<(), crate::Rejection> {
        let size = match self.arrays.get(&first) {
            Some(a) => a.size,
            None => return Err(crate::Rejection::NotAnArray(first)),
        };
        if limit == Some(0) {
            return Err(crate::Rejection::ZeroArrayLimit);
        }
        for id in (first.0..first.0 + u64::from(size)).map(JobId) {
            let Some(job) = self.jobs.get(&id) else { continue };
            let dispatchable = matches!(job.state, JobState::Pending) && !job.held && !job.waiting;
            if !dispatchable || self.arrays[&first].parked.contains(&id) {
                continue;
            }
            let job = job.clone();
            self.dequeue(id, &job);
            self.queues[job.queue].move_pending(job.slots, false);
            if let Some(a) = self.arrays.get_mut(&first) {
                a.parked.insert(id);
            }
        }
        if let Some(a) = self.arrays.get_mut(&first) {
            a.admitted = 0;
            a.limit = limit;
        }
        self.admit_parked(first);
        self.dirty = true;
        Ok(())
    }

    /// Whether pending job `id` waits for room under its array's limit.
    pub(crate) fn is_parked(&self, id: JobId) -> bool {
        self.array_of(id).is_some_and(|f| self.arrays[&f].parked.contains(&id))
    }

    /// Whether the array of element `id` has no room under its running
    /// element limit.
    pub(crate) fn array_at_limit(&self, id: JobId) -> bool {
        self.array_of(id).and_then(|f| self.arrays.get(&f)).is_some_and(|a| !a.has_room() || !a.parked.is_empty())
    }

    /// An array's size and running element limit, by its first element.
    pub fn array_shape(&self, first: JobId) -> Option<(u32, Option<u32>)> {
        self.arrays.get(&first).map(|a| (a.size, a.limit))
    }
}
