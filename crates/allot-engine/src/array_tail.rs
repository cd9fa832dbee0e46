//! Late materialization of job arrays (HTCondor's): an array's elements
//! become jobs of the engine, in their queue, as they come near their
//! turn, not all at submission. At most [`MADE_AHEAD`] of an array's
//! elements are made and pending at once; the others are its tail, kept as
//! one job (the array's template, from which every element is made) and a
//! run of ids ([`ArrayState::unmade`]). A million-element array costs the
//! engine what a thousand-element one does.
//!
//! - When made elements start or leave pending, the next ones are made at
//!   the next pass, before it decides anything (so a restart's replay of
//!   the same passes makes the same ones); an event that names an unmade
//!   element (`bkill 5[999999]`, a replayed start) makes it first.
//! - Elements of one array have the same queue, user, size and priority,
//!   so a queue tries them in id order: the unmade ones would come after
//!   every made one anyway. A pass starts at most `MADE_AHEAD` elements of
//!   one array; the next pass, at once, the next ones.
//! - An unmade element is pending: it counts towards the pending
//!   thresholds (MAX_PEND_JOBS, MAX_PEND_SLOTS) from submission, and in its
//!   queue's pending jobs not yet dispatchable, as the elements parked under
//!   an array's running element limit do. It is made with the template's
//!   state as it is then (a dependency is evaluated then).
//! - The queries answer for an unmade element from the template
//!   ([`Engine::job_or_template`]).
//!
//! Arrays of at most `MADE_AHEAD` elements (every array under LSF's
//! default MAX_JOB_ARRAY_SIZE of 1,000) are made whole at submission.

use crate::engine::{Engine, Job, JobId, JobState};

/// How many of an array's elements are made and pending at most.
pub const MADE_AHEAD: u32 = 1000;

impl Engine {
    /// A pending or running job, or for an element not made yet its
    /// array's template: what the queries answer from.
    pub(crate) fn job_or_template(&self, id: JobId) -> Option<&Job> {
        if let Some(job) = self.jobs.get(&id) {
            return Some(job);
        }
        let a = self.arrays.get(&self.array_of(id)?)?;
        a.template.as_deref().filter(|_| a.unmade.contains(id))
    }

    /// Holds back the elements of the array starting at `first` past the
    /// first [`MADE_AHEAD`], `job` being what each is made from. Called at
    /// submission with the array in `arrays` and its made elements added.
    pub(crate) fn keep_tail(&mut self, first: JobId, size: u32, job: &Job) {
        if size <= MADE_AHEAD {
            return;
        }
        let tail = crate::job_set::JobSet::run(first.offset(u64::from(MADE_AHEAD)), first.offset(u64::from(size) - 1));
        self.count_tail(job, tail.len() as u64, true);
        if let Some(a) = self.arrays.get_mut(&first) {
            a.unmade = tail;
            a.template = Some(Box::new(Job { state: JobState::Pending, ..job.clone() }));
        }
    }

    /// `n` unmade elements like `job` come (`up`) or go: pending, in their
    /// queue's count of pending jobs not dispatchable.
    pub(crate) fn count_tail(&mut self, job: &Job, n: u64, up: bool) {
        self.count_pending_n(job.user, job.queue, job.slots, n, up);
        let q = &mut self.queues[job.queue];
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        q.held = if up { q.held.saturating_add(n) } else { q.held.saturating_sub(n) };
    }

    /// Makes element `id` if it is not made yet: it joins the engine as a
    /// pending job like any, its dependency evaluated now. Whether it was
    /// made.
    pub(crate) fn make_element(&mut self, id: JobId) -> bool {
        let Some(first) = self.array_of(id) else { return false };
        let Some(a) = self.arrays.get_mut(&first) else { return false };
        if !a.unmade.remove(id) {
            return false;
        }
        let Some(mut job) = a.template.as_deref().cloned() else { return false };
        if a.unmade.is_empty() {
            a.template = None;
        }
        self.count_tail(&job, 1, false);
        job.waiting = job.depends.as_ref().is_some_and(|d| !self.satisfied(d));
        self.add_pending(id, &job);
        self.jobs.insert(id, job);
        true
    }

    /// A made element becomes pending (`up`) or leaves pending: once
    /// fewer than [`MADE_AHEAD`] are, the next pass makes more.
    pub(crate) fn array_pending(&mut self, id: JobId, up: bool) {
        let Some(first) = self.array_of(id) else { return };
        let Some(a) = self.arrays.get_mut(&first) else { return };
        a.made_pending = if up { a.made_pending + 1 } else { a.made_pending.saturating_sub(1) };
        if a.made_pending < MADE_AHEAD && !a.unmade.is_empty() {
            self.to_make.insert(first);
        }
    }

    /// Before a pass: each array short of made pending elements has its
    /// next ones made, in id order, arrays in id order.
    pub(crate) fn make_due(&mut self) {
        while let Some(first) = self.to_make.pop_first() {
            let next = |e: &Engine| {
                e.arrays.get(&first)?.unmade.first().filter(|_| e.arrays[&first].made_pending < MADE_AHEAD)
            };
            while let Some(id) = next(self) {
                self.make_element(id);
            }
        }
    }

    /// `elements` of the array `first` that are pending leave (`bkill` of
    /// a whole array, or a range of it): each made one as a removed job
    /// does, those not made at once, remembered as ended with 130 (for
    /// dependencies), never made.
    pub(crate) fn remove_elements(
        &mut self,
        first: JobId,
        elements: &crate::job_set::JobSet,
        t: crate::time::Time,
    ) -> Result<(), crate::Rejection> {
        let (made, last) = self.made_among(first, elements, |_| true)?;
        for id in made {
            self.finish(id, t, 0.0, 130);
        }
        let Some(a) = self.arrays.get_mut(&first) else { return Ok(()) };
        let gone = a.unmade.take(elements);
        if gone.is_empty() {
            return Ok(());
        }
        let removed = a.removed.each_run().chain(gone.each_run()).collect();
        a.removed = crate::job_set::JobSet::from_runs(removed);
        // Uncounted through the template, which stays while elements do.
        if let Some(job) = a.template.take() {
            self.count_tail(&job, gone.len() as u64, false);
            if let Some(a) = self.arrays.get_mut(&first).filter(|a| !a.unmade.is_empty()) {
                a.template = Some(job);
            }
        }
        // Their dependents are looked at again.
        let waiting: Vec<JobId> = self.dependents.range(first..=last).map(|(&id, _)| id).collect();
        self.dep_changed.extend(waiting.into_iter().filter(|&id| gone.contains(id)));
        self.dirty = true;
        Ok(())
    }

    /// The made pending elements of the array `first` among `elements`
    /// that `take` takes, in id order, and the array's last element.
    fn made_among(
        &self,
        first: JobId,
        elements: &crate::job_set::JobSet,
        take: impl Fn(&Job) -> bool,
    ) -> Result<(Vec<JobId>, JobId), crate::Rejection> {
        let a = self.arrays.get(&first).ok_or(crate::Rejection::NotAnArray(first))?;
        let last = first.offset(u64::from(a.size) - 1);
        let made = elements
            .each_run()
            .flat_map(|(from, to)| (from.max(first).0..=to.min(last).0).map(JobId))
            .filter(|id| self.jobs.get(id).is_some_and(|j| matches!(j.state, JobState::Pending) && take(j)))
            .collect();
        Ok((made, last))
    }

    /// `elements` of the array `first` that are pending are held (`hold`)
    /// or released: each made one as [`Engine::set_held`] does, those not
    /// made through the template they are made from, where `elements` holds
    /// every one of them (as allotd names them: it makes an element only
    /// when a record names it, so what it has not made the engine has
    /// not either); otherwise they are made, then held, one by one.
    pub(crate) fn hold_elements(
        &mut self,
        first: JobId,
        elements: &crate::job_set::JobSet,
        hold: bool,
    ) -> Result<(), crate::Rejection> {
        let a = self.arrays.get_mut(&first).ok_or(crate::Rejection::NotAnArray(first))?;
        let mut left = a.unmade.clone();
        let named = left.take(elements);
        if left.is_empty() {
            if let Some(t) = a.template.as_mut() {
                t.held = hold;
            }
        } else {
            for id in named.iter() {
                self.make_element(id);
            }
        }
        let (made, _) = self.made_among(first, elements, |j| j.held != hold)?;
        for id in made {
            self.set_held(id, hold)?;
        }
        self.dirty = true;
        Ok(())
    }

    /// An event that names an element not made yet makes it first.
    pub(crate) fn make_named(&mut self, event: &crate::engine::Event) {
        use crate::engine::Event;
        if let Event::Finish { job, .. }
        | Event::Hold(job)
        | Event::Release(job)
        | Event::Modify { job, .. }
        | Event::RunLimit { job, .. }
        | Event::Switch { job, .. }
        | Event::Requeue { job, .. }
        | Event::Resubmit { job, .. } = event
        {
            self.make_element(*job);
        }
    }
}
