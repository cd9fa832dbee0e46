//! The elements of a large job array not made yet: what the commands
//! see of them, and how each is made when a record names it.
//!
//! As the engine does (`allot_engine`'s `array_tail`), the book holds an
//! array's first `MADE_AHEAD` elements from submission; the others are
//! its tail, one [`BookJob`] (the template, pending or held as submitted)
//! and the ids not made. An element is made (given its own entry, as
//! every element had before) when a record names it: its start, a kill,
//! a hold, a change. Until then the commands see it as its template with
//! its own index ([`Book::job`]), `bjobs` lists it, and `bjobs -A` counts
//! it pending without a look at each ([`Book::jobs_counted`]). So a
//! million-element array costs what a thousand-element one does until
//! its elements run.

use std::borrow::Cow;

use allot_engine::{Engine, Event, JobId, JobSet, Time};
use allot_proto::JobStatus;

use super::{ApplyError, Book, BookJob};

/// How many of an array's elements the job table holds from submission.
pub const MADE_AHEAD: usize = allot_engine::MADE_AHEAD as usize;

/// An array's elements not made yet, and what each is made from (its
/// `array` is the array's, with index 0); and those removed before they
/// were made (`bkill`), each batch with what it shows (ended with 130, at
/// its removal).
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Tail {
    pub template: BookJob,
    pub unmade: JobSet,
    #[serde(default)]
    pub removed: Vec<(JobSet, BookJob)>,
}

impl Tail {
    /// Its elements as sets, each with what its elements show: the ones
    /// not made, then each batch removed.
    pub fn parts(&self) -> impl Iterator<Item = (&JobSet, &BookJob)> {
        std::iter::once((&self.unmade, &self.template)).chain(self.removed.iter().map(|(set, j)| (set, j)))
    }

    /// What element `id` shows, if the tail holds it.
    fn holding(&self, id: JobId) -> Option<&BookJob> {
        self.parts().find(|(set, _)| set.contains(id)).map(|(_, j)| j)
    }

    /// Its elements in id order, each with what it shows.
    fn each(&self) -> impl Iterator<Item = (JobId, &BookJob)> {
        let mut runs: Vec<(JobId, JobId, &BookJob)> =
            self.parts().flat_map(|(set, j)| set.each_run().map(move |(a, b)| (a, b, j))).collect();
        runs.sort_unstable_by_key(|r| r.0);
        runs.into_iter().flat_map(|(a, b, j)| (a.0..=b.0).map(move |id| (JobId(id), j)))
    }
}

impl Book {
    /// Job `id` as the commands see it: from the job table, or, for an
    /// element not made yet, its array's template with its own index.
    pub fn job(&self, id: JobId) -> Option<Cow<'_, BookJob>> {
        if let Some(j) = self.jobs.get(&id) {
            return Some(Cow::Borrowed(j));
        }
        let (&first, tail) = self.tails.range(..=id).next_back()?;
        let mut j = tail.holding(id)?.clone();
        j.array = Some((first, self.element_index(id)?));
        Some(Cow::Owned(j))
    }

    /// The index of element `id` of an array.
    pub fn element_index(&self, id: JobId) -> Option<u32> {
        let (first, indices) = self.arrays.range(..=id).next_back()?;
        indices.get((id.0 - first.0) as usize).copied()
    }

    /// Makes element `id` if it is not made yet: it gets its own entry in
    /// the job table, as its template says.
    pub fn make(&mut self, id: JobId) {
        if self.jobs.contains_key(&id) {
            return;
        }
        let index = self.element_index(id).unwrap_or_default();
        let Some((&first, tail)) = self.tails.range_mut(..=id).next_back() else { return };
        if !tail.unmade.remove(id) {
            return;
        }
        let mut j = tail.template.clone();
        if tail.unmade.is_empty() && tail.removed.is_empty() {
            self.tails.remove(&first);
        }
        j.array = Some((first, index));
        self.names.insert(&j.record.spec.user, &j.record.name, id);
        self.jobs.insert(id, Box::new(j));
    }

    /// Holds back the elements of an array past the first [`MADE_AHEAD`]
    /// (called as it is registered, with its first elements made).
    pub fn keep_tail(&mut self, first: JobId, size: usize, template: BookJob) {
        if size <= MADE_AHEAD {
            return;
        }
        let unmade = JobSet::run(first.offset(MADE_AHEAD as u64), first.offset(size as u64 - 1));
        self.tails.insert(first, Tail { template, unmade, removed: Vec::new() });
    }

    /// A job of the table, or for an element not made yet its array's
    /// template (whose index is 0): what filters look at.
    pub fn job_or_template(&self, id: JobId) -> Option<&BookJob> {
        if let Some(j) = self.jobs.get(&id) {
            return Some(j);
        }
        self.tails.range(..=id).next_back()?.1.holding(id)
    }

    /// Every job of the table and every element not made yet (as its
    /// template, [`Book::job_or_template`]), in id order.
    pub fn each_job(&self) -> impl Iterator<Item = (JobId, &BookJob)> + '_ {
        let mut made = self.jobs.iter().peekable();
        let mut unmade = self.tails.values().flat_map(Tail::each).peekable();
        std::iter::from_fn(move || {
            let take_made = match (made.peek(), unmade.peek()) {
                (None, None) => return None,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((m, _)), Some((u, _))) => *m < u,
            };
            if take_made { made.next().map(|(&id, j)| (id, &**j)) } else { unmade.next() }
        })
    }

    /// The job table's jobs, each once, then each part of each array's
    /// tail as one entry: an id of it, what its elements show, and how
    /// many. What counts by state add up from, without a look at each.
    pub fn jobs_counted(&self) -> impl Iterator<Item = (JobId, &BookJob, u32)> + '_ {
        let made = self.jobs.iter().map(|(&id, j)| (id, &**j, 1));
        let tails = self.tails.values().flat_map(Tail::parts);
        let unmade = tails.filter_map(|(set, j)| Some((set.first()?, j, u32::try_from(set.len()).unwrap_or(u32::MAX))));
        made.chain(unmade)
    }

    /// The pending ones of `elements` of the array `first` are removed
    /// ([`Record::RemovedElements`]): each kept in the table as a removed
    /// job is, the tail's at once, as one batch.
    pub fn remove_elements(
        &mut self,
        engine: &mut Engine,
        t: Time,
        first: JobId,
        elements: &JobSet,
    ) -> Result<(), ApplyError> {
        let ev = Event::RemoveElements { array: first, elements: elements.clone() };
        engine.apply(t, &ev).map_err(|e| ApplyError::Job { job: first, reason: e.to_string() })?;
        let pending = |j: &BookJob| matches!(j.status, JobStatus::Pend | JobStatus::Psusp);
        let made: Vec<JobId> = self
            .jobs
            .range(first..=self.array_last(first))
            .filter(|(id, j)| elements.contains(**id) && pending(j))
            .map(|(&id, _)| id)
            .collect();
        for id in made {
            if let Some(j) = self.jobs.get_mut(&id) {
                (j.status, j.end_time, j.exit) = (JobStatus::Exit, Some(t.0), Some(130));
                self.finished.insert((t.0, id));
            }
        }
        let Some(tail) = self.tails.get_mut(&first) else { return Ok(()) };
        let gone = tail.unmade.take(elements);
        let Some(at) = gone.first() else { return Ok(()) };
        let mut shown = tail.template.clone();
        (shown.status, shown.end_time, shown.exit) = (JobStatus::Exit, Some(t.0), Some(130));
        tail.removed.push((gone, shown));
        self.finished.insert((t.0, at));
        Ok(())
    }

    /// The pending ones of `elements` of the array `first` are held
    /// (`stop`) or released ([`Record::SuspendedElements`]): each kept in
    /// the table as [`Record::Suspended`] does it; the tail's through its
    /// template where `elements` holds all of it (as `bstop` names them),
    /// else each made first.
    pub fn hold_elements(
        &mut self,
        engine: &mut Engine,
        t: Time,
        first: JobId,
        elements: &JobSet,
        stop: bool,
    ) -> Result<(), ApplyError> {
        let ev = Event::HoldElements { array: first, elements: elements.clone(), hold: stop };
        engine.apply(t, &ev).map_err(|e| ApplyError::Job { job: first, reason: e.to_string() })?;
        // Those of the tail it names; all of it, or only some (each made).
        let (named, whole) = match self.tails.get(&first) {
            Some(tail) => {
                let mut left = tail.unmade.clone();
                (left.take(elements), left.is_empty())
            }
            None => (JobSet::default(), false),
        };
        if !whole {
            for id in named.iter() {
                self.make(id);
            }
        }
        let (from, to) = if stop { (JobStatus::Pend, JobStatus::Psusp) } else { (JobStatus::Psusp, JobStatus::Pend) };
        let last = self.array_last(first);
        for (&id, j) in self.jobs.range_mut(first..=last) {
            if j.status == from && elements.contains(id) {
                j.status = to;
            }
        }
        if let Some(tail) = self.tails.get_mut(&first).filter(|_| whole) {
            if tail.template.status == from {
                tail.template.status = to;
            }
        }
        Ok(())
    }

    /// The last element of the array `first` (`first` itself where there
    /// is no such array).
    fn array_last(&self, first: JobId) -> JobId {
        first.offset(self.arrays.get(&first).map_or(1, |ix| ix.len() as u64).max(1) - 1)
    }

    /// Whether every element of the array `first` ended CLEAN_PERIOD or
    /// more before `now` (`gone`), those of its tail too.
    pub fn array_gone(&self, first: JobId, gone: &dyn Fn(&BookJob) -> bool) -> bool {
        let size = self.arrays.get(&first).map_or(0, |ix| ix.len() as u64);
        let tail_gone =
            self.tails.get(&first).is_none_or(|t| t.unmade.is_empty() && t.removed.iter().all(|(_, j)| gone(j)));
        // The last elements end last: looked at first, the look stops at
        // once while the array runs.
        tail_gone && (0..size).rev().all(|k| self.jobs.get(&first.offset(k)).is_none_or(|j| gone(j)))
    }
}
