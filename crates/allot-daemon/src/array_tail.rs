//! The elements of a large job array not made yet (`allot_store`'s
//! `Tail`), as the commands see them: an element shows its array's
//! template with its own index, and a command's targets are split into
//! the elements made and those of the tail.

use std::borrow::Cow;
use std::collections::BTreeMap;

use allot_engine::{JobId, Time};
use allot_proto::{ArrayCount, JobInfoRef, JobQuery, JobRef};
use allot_store::{BookJob, Tail};

use crate::state::State;

impl State {
    /// [`State::info_ref`] of a job as [`allot_store::Book::each_job`] gives it: an
    /// element not made yet shows its template's, with its own index and
    /// name.
    pub fn info_of<'a>(&'a self, id: JobId, j: &'a BookJob, t: Time, q: &JobQuery) -> JobInfoRef<'a> {
        let mut info = self.info_ref(id, j, t, q);
        if !self.book.jobs.contains_key(&id) {
            if let Some(index) = self.book.element_index(id) {
                info.index = index;
                info.name = Cow::Owned(format!("{}[{index}]", j.record.name));
            }
        }
        info
    }
}

/// A command's targets in large arrays' tails, by array: those not made
/// yet, and those removed before they were made.
pub(crate) type TailTargets = BTreeMap<JobId, (Vec<JobId>, Vec<JobId>)>;

/// Splits a command's targets ([`crate::control`]) into the elements of
/// large arrays' tails and the rest, each to be acted on alone.
pub(crate) fn split_tails(
    state: &State,
    targets: Vec<(JobRef, Option<JobId>)>,
) -> (TailTargets, Vec<(JobRef, Option<JobId>)>) {
    let mut tails = TailTargets::new();
    let mut rest = Vec::with_capacity(targets.len().min(1 << 16));
    for (shown, id) in targets {
        let tail = id.filter(|id| !state.book.jobs.contains_key(id)).and_then(|id| {
            let (&first, t) = state.book.tails.range(..=id).next_back()?;
            Some((first, id, t.unmade.contains(id)))
        });
        match tail {
            Some((first, id, true)) => tails.entry(first).or_default().0.push(id),
            Some((first, id, false)) => tails.entry(first).or_default().1.push(id),
            None => rest.push((shown, id)),
        }
    }
    (tails, rest)
}

/// `bjobs -A`: each array's elements by state, of the arrays `q` lists
/// (its jobs, or its user's and queue's), counted without a look at each
/// element not made yet.
pub fn array_counts(state: &State, caller_user: &str, q: &JobQuery) -> Vec<ArrayCount> {
    // An array by its number: its first element (not a list of them all).
    let named: Option<std::collections::BTreeSet<JobId>> = (!q.jobs.is_empty()).then(|| {
        let first =
            |n: u64| state.book.numbers.first_id(n).filter(|id| state.book.job(*id).is_some_and(|j| j.number == n));
        q.jobs.iter().filter_map(|r| first(r.id)).collect()
    });
    let user = q.user.as_deref().unwrap_or(caller_user);
    let mut out = Vec::new();
    for (&first, indices) in &state.book.arrays {
        if named.as_ref().is_some_and(|n| !n.contains(&first)) {
            continue;
        }
        let Some(head) = state.book.job(first) else { continue };
        if named.is_none() && user != "all" && head.record.spec.user != user {
            continue;
        }
        let last = first.offset(indices.len() as u64 - 1);
        let mut counts = [0u32; 7];
        let in_queue = |j: &BookJob| q.queue.as_ref().is_none_or(|qq| j.record.spec.queue.as_deref() == Some(qq));
        for (_, j) in state.book.jobs.range(first..=last).filter(|(_, j)| in_queue(j)) {
            counts[ArrayCount::column(j.status)] += 1;
        }
        for (set, j) in state.book.tails.get(&first).into_iter().flat_map(Tail::parts).filter(|(_, j)| in_queue(j)) {
            counts[ArrayCount::column(j.status)] += set.len() as u32;
        }
        let r = &head.record;
        out.push(ArrayCount {
            id: head.number,
            spec: format!("{}[{}]", r.name, r.array.as_deref().unwrap_or_default()),
            user: r.spec.user.clone(),
            counts,
        });
    }
    out
}
