//! Running jobs' expected ends in time order ([`Engine::expected_end`]),
//! with what each gives back in each host set, summed by runs of ends.
//!
//! A predicted start without requirements ([`Engine::predict`]) asks for
//! the first end by which a host set has `need` slots back. Walking every
//! end was a fifth of a year's replay (RICC: 548 k predictions, 774 ends
//! each on average); with the sums of each run of at most [`RUN`] ends the
//! walk steps over whole runs and enters one.
//!
//! Invariants: runs are non-empty, in key order, and each run's `sums`
//! are the sums of its ends' slots per host set.
//!
//! [`Engine::expected_end`]: crate::engine::Engine::expected_end
//! [`Engine::predict`]: crate::engine::Engine

use crate::engine::JobId;
use crate::hosts::SlotsBySet;
use crate::time::Time;

/// An end: when, and whose.
pub(crate) type EndKey = (Time, JobId);

/// Most ends in a run: one that grows past it is split in two.
const RUN: usize = 64;

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct ExpectedEnds {
    runs: Vec<Run>,
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Run {
    ends: Vec<(EndKey, SlotsBySet)>,
    /// Slots over `ends` per host set, indexed by the set.
    sums: Vec<u64>,
}

/// Adds what an end gives back to per-set `sums`.
fn add(sums: &mut Vec<u64>, by_set: &SlotsBySet) {
    for &(set, n) in by_set {
        let set = set as usize;
        if sums.len() <= set {
            sums.resize(set + 1, 0);
        }
        sums[set] += u64::from(n);
    }
}

impl Run {
    fn sub(&mut self, by_set: &SlotsBySet) {
        for &(set, n) in by_set {
            self.sums[set as usize] -= u64::from(n);
        }
    }

    fn of(ends: Vec<(EndKey, SlotsBySet)>) -> Run {
        let mut sums = Vec::new();
        for (_, by_set) in &ends {
            add(&mut sums, by_set);
        }
        Run { ends, sums }
    }

    fn last(&self) -> Option<EndKey> {
        self.ends.last().map(|e| e.0)
    }
}

impl ExpectedEnds {
    /// The run that holds `key`, or would: the first whose last end is not
    /// before it (the last run for a key after every end).
    fn run_of(&self, key: EndKey) -> usize {
        self.runs.partition_point(|r| r.last().is_some_and(|l| l < key)).min(self.runs.len().saturating_sub(1))
    }

    /// Counts on `key`'s end giving back `by_set` (in place of what it
    /// gave, if counted already).
    pub(crate) fn insert(&mut self, key: EndKey, by_set: SlotsBySet) {
        if self.runs.is_empty() {
            self.runs.push(Run::default());
        }
        let i = self.run_of(key);
        let run = &mut self.runs[i];
        add(&mut run.sums, &by_set);
        match run.ends.binary_search_by_key(&key, |e| e.0) {
            Ok(at) => {
                let old = std::mem::replace(&mut run.ends[at].1, by_set);
                run.sub(&old);
            }
            Err(at) => run.ends.insert(at, (key, by_set)),
        }
        if run.ends.len() > RUN {
            let upper = run.ends.split_off(run.ends.len() / 2);
            let lower = std::mem::take(&mut run.ends);
            self.runs[i] = Run::of(lower);
            self.runs.insert(i + 1, Run::of(upper));
        }
    }

    /// Stops counting on `key`'s end; what it gave back, if it was counted.
    pub(crate) fn remove(&mut self, key: &EndKey) -> Option<SlotsBySet> {
        if self.runs.is_empty() {
            return None;
        }
        let i = self.run_of(*key);
        let run = &mut self.runs[i];
        let at = run.ends.binary_search_by_key(key, |e| e.0).ok()?;
        let (_, by_set) = run.ends.remove(at);
        run.sub(&by_set);
        let len = run.ends.len();
        if len == 0 {
            self.runs.remove(i);
        } else if len < RUN / 4 && i + 1 < self.runs.len() && len + self.runs[i + 1].ends.len() <= RUN / 2 {
            // Runs emptied by ends are joined, so that they stay long.
            let next = self.runs.remove(i + 1);
            let mut ends = std::mem::take(&mut self.runs[i].ends);
            ends.extend(next.ends);
            self.runs[i] = Run::of(ends);
        }
        Some(by_set)
    }

    /// The earliest end.
    pub(crate) fn first(&self) -> Option<EndKey> {
        self.runs.first().and_then(|r| r.ends.first()).map(|e| e.0)
    }

    /// Stops counting on the earliest end.
    pub(crate) fn pop_first(&mut self) -> Option<(EndKey, SlotsBySet)> {
        let key = self.first()?;
        self.remove(&key).map(|by_set| (key, by_set))
    }

    /// Every end, earliest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &(EndKey, SlotsBySet)> {
        self.runs.iter().flat_map(|r| &r.ends)
    }

    /// The first end time by which host set `set` has at least `need`
    /// slots back, and how many it has back then (every end at that time
    /// counted); `None` when all the ends do not give that many.
    pub(crate) fn reach(&self, set: usize, need: u64) -> Option<(Time, u64)> {
        let in_set = |by_set: &SlotsBySet| by_set.iter().find(|s| s.0 as usize == set).map_or(0, |s| u64::from(s.1));
        let mut back = 0;
        let mut found: Option<Time> = None;
        for run in &self.runs {
            let sum = run.sums.get(set).copied().unwrap_or(0);
            match found {
                None if back + sum < need => back += sum,
                _ => {
                    for ((end, _), by_set) in &run.ends {
                        if found.is_some_and(|f| *end > f) {
                            return found.map(|f| (f, back));
                        }
                        back += in_set(by_set);
                        if found.is_none() && back >= need {
                            found = Some(*end);
                        }
                    }
                }
            }
        }
        found.map(|f| (f, back))
    }

    #[cfg(test)]
    fn check(&self) {
        let keys: Vec<EndKey> = self.iter().map(|e| e.0).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "ends out of order");
        for run in &self.runs {
            assert!(!run.ends.is_empty() && run.ends.len() <= RUN, "a run of {}", run.ends.len());
            let fresh = Run::of(run.ends.clone());
            let trim = |s: &[u64]| s.iter().rposition(|&n| n != 0).map_or(0, |p| p + 1);
            assert_eq!(run.sums[..trim(&run.sums)], fresh.sums[..trim(&fresh.sums)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    /// What `reach` answers, by walking every end.
    fn walk(model: &BTreeMap<EndKey, SlotsBySet>, set: usize, need: u64) -> Option<(Time, u64)> {
        let mut back = 0;
        let mut found = None;
        for (&(end, _), by_set) in model {
            if found.is_some_and(|f| end > f) {
                break;
            }
            back += by_set.iter().find(|s| s.0 as usize == set).map_or(0, |s| u64::from(s.1));
            if found.is_none() && back >= need {
                found = Some(end);
            }
        }
        found.map(|f| (f, back))
    }

    fn key(t: u64, id: u64) -> EndKey {
        (Time(t), JobId(id))
    }

    #[test]
    fn the_first_end_that_gives_enough_counts_every_end_at_its_time() {
        let mut ends = ExpectedEnds::default();
        ends.insert(key(10, 1), SlotsBySet::from_slice(&[(0, 4), (1, 4)]));
        ends.insert(key(20, 2), SlotsBySet::from_slice(&[(0, 2)]));
        ends.insert(key(20, 3), SlotsBySet::from_slice(&[(0, 3)]));
        ends.insert(key(30, 4), SlotsBySet::from_slice(&[(1, 8)]));
        assert_eq!(ends.reach(0, 4), Some((Time(10), 4)));
        assert_eq!(ends.reach(0, 5), Some((Time(20), 9)));
        assert_eq!(ends.reach(0, 10), None);
        assert_eq!(ends.reach(1, 5), Some((Time(30), 12)));
        assert_eq!(ends.reach(2, 1), None);
        assert_eq!(ends.remove(&key(20, 2)), Some(SlotsBySet::from_slice(&[(0, 2)])));
        assert_eq!(ends.remove(&key(20, 2)), None);
        assert_eq!(ends.reach(0, 5), Some((Time(20), 7)));
        assert_eq!(ends.pop_first().map(|e| e.0), Some(key(10, 1)));
        assert_eq!(ends.first(), Some(key(20, 3)));
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u64, u64, BTreeMap<u32, u32>),
        Remove(usize),
        PopFirst,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..200u64, 0..40u64, prop::collection::btree_map(0..3u32, 1..9u32, 0..3))
                .prop_map(|(t, id, s)| Op::Insert(t, id, s)),
            3 => (0..1000usize).prop_map(Op::Remove),
            1 => Just(Op::PopFirst),
        ]
    }

    proptest! {
        /// Runs split, emptied and joined answer as one ordered map does.
        #[test]
        fn runs_answer_as_a_walk_over_every_end(
            ops in prop::collection::vec(op(), 0..600),
            asks in prop::collection::vec((0..3usize, 0..400u64), 1..20),
        ) {
            let mut ends = ExpectedEnds::default();
            let mut model: BTreeMap<EndKey, SlotsBySet> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(t, id, s) => {
                        let by_set: SlotsBySet = s.into_iter().collect();
                        ends.insert(key(t, id), by_set.clone());
                        model.insert(key(t, id), by_set);
                    }
                    Op::Remove(k) => {
                        let Some(&k) = model.keys().nth(k % model.len().max(1)) else { continue };
                        prop_assert_eq!(ends.remove(&k), model.remove(&k));
                    }
                    Op::PopFirst => prop_assert_eq!(ends.pop_first(), model.pop_first()),
                }
                ends.check();
            }
            prop_assert!(ends.iter().map(|e| e.0).eq(model.keys().copied()));
            for (set, need) in asks {
                prop_assert_eq!(ends.reach(set, need), walk(&model, set, need));
            }
        }
    }
}
