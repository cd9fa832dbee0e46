//! A set of job ids kept as runs of consecutive ids: what one term of a
//! dependency names once resolved (`done(sim*)`: every job of that name,
//! often thousands made in one loop, or an array's elements). In memory
//! and in the event log it costs a pair of numbers per run, not a number
//! per job.
//!
//! In the log a set is a list whose items are either an id (one job) or
//! a pair `[first, last]` (every id from first to last). A plain list of
//! ids, as earlier releases wrote, reads as the same set.

use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::JobId;

/// Job ids, sorted, each once, as inclusive runs `(first, last)` with a
/// gap of at least one id between runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobSet {
    runs: Vec<(JobId, JobId)>,
}

impl JobSet {
    /// The set of `ids`, in any order, repeated or not.
    pub fn from_ids(ids: impl IntoIterator<Item = JobId>) -> Self {
        Self::from_runs(ids.into_iter().map(|id| (id, id)).collect())
    }

    /// The set of the runs `first..=last`, in any order, overlapping,
    /// touching or not: sorted, and merged where they meet.
    pub(crate) fn from_runs(mut runs: Vec<(JobId, JobId)>) -> Self {
        runs.sort_unstable();
        let mut set = JobSet::default();
        for (first, last) in runs {
            match set.runs.last_mut() {
                Some((_, end)) if end.0.saturating_add(1) >= first.0 => *end = (*end).max(last),
                _ => set.runs.push((first, last)),
            }
        }
        set
    }

    /// How many jobs.
    pub fn len(&self) -> usize {
        self.runs.iter().map(|(a, b)| (b.0 - a.0 + 1) as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// How many runs: what the set costs to keep.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Every id, in order.
    pub fn iter(&self) -> impl Iterator<Item = JobId> + '_ {
        self.runs.iter().flat_map(|&(a, b)| (a.0..=b.0).map(JobId))
    }

    /// The ids `first..=last` (none when `last < first`).
    pub fn run(first: JobId, last: JobId) -> Self {
        JobSet { runs: if last < first { Vec::new() } else { vec![(first, last)] } }
    }

    pub fn contains(&self, id: JobId) -> bool {
        let i = self.runs.partition_point(|&(_, last)| last < id);
        self.runs.get(i).is_some_and(|&(first, _)| first <= id)
    }

    pub fn first(&self) -> Option<JobId> {
        self.runs.first().map(|r| r.0)
    }

    /// The runs, `(first, last)` each, in order.
    pub fn each_run(&self) -> impl Iterator<Item = (JobId, JobId)> + '_ {
        self.runs.iter().copied()
    }

    /// Takes out the ids `other` holds too, and returns them.
    pub fn take(&mut self, other: &JobSet) -> JobSet {
        let (mut kept, mut taken) = (Vec::new(), Vec::new());
        let mut cut = other.runs.iter().peekable();
        for &(first, last) in &self.runs {
            let mut from = first;
            while let Some(&&(a, b)) = cut.peek() {
                if b < from {
                    cut.next();
                    continue;
                }
                if a > last {
                    break;
                }
                if a > from {
                    kept.push((from, JobId(a.0 - 1)));
                }
                let end = b.min(last);
                taken.push((a.max(from), end));
                if end == last {
                    from = last.offset(1);
                    break;
                }
                from = end.offset(1);
                cut.next();
            }
            if from <= last {
                kept.push((from, last));
            }
        }
        self.runs = kept;
        JobSet { runs: taken }
    }

    /// Takes `id` out: whether it was in (a run it splits becomes two).
    pub fn remove(&mut self, id: JobId) -> bool {
        let i = self.runs.partition_point(|&(_, last)| last < id);
        let Some(&(first, last)) = self.runs.get(i).filter(|r| r.0 <= id) else { return false };
        match (first == id, last == id) {
            (true, true) => {
                self.runs.remove(i);
            }
            (true, false) => self.runs[i].0 = id.offset(1),
            (false, true) => self.runs[i].1 = JobId(id.0 - 1),
            (false, false) => {
                self.runs[i].1 = JobId(id.0 - 1);
                self.runs.insert(i + 1, (id.offset(1), last));
            }
        }
        true
    }
}

impl<'a> IntoIterator for &'a JobSet {
    type Item = JobId;
    type IntoIter = Box<dyn Iterator<Item = JobId> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl Serialize for JobSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.runs.len()))?;
        for &(a, b) in &self.runs {
            match b.0 - a.0 {
                0 => seq.serialize_element(&a.0)?,
                // Two ids are no longer as a pair than as themselves.
                1 => {
                    seq.serialize_element(&a.0)?;
                    seq.serialize_element(&b.0)?;
                }
                _ => seq.serialize_element(&[a.0, b.0])?,
            }
        }
        seq.end()
    }
}

/// One item of a set in the log: an id, or a run `[first, last]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Item {
    One(u64),
    Run([u64; 2]),
}

impl<'de> Deserialize<'de> for JobSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Items;
        impl<'de> Visitor<'de> for Items {
            type Value = JobSet;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of job ids and [first, last] runs")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JobSet, A::Error> {
                let mut runs = Vec::new();
                while let Some(item) = seq.next_element::<Item>()? {
                    runs.push(match item {
                        Item::One(id) => (JobId(id), JobId(id)),
                        Item::Run([a, b]) if a <= b => (JobId(a), JobId(b)),
                        Item::Run([a, b]) => {
                            return Err(serde::de::Error::custom(format!("a run of job ids from {a} down to {b}")));
                        }
                    });
                }
                // [1, 2, 3] as one run; a plain list in any order too.
                Ok(JobSet::from_runs(runs))
            }
        }
        deserializer.deserialize_seq(Items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u64]) -> JobSet {
        JobSet::from_ids(v.iter().map(|&i| JobId(i)))
    }

    #[test]
    fn consecutive_ids_are_one_run_in_memory_and_in_the_log() {
        let set = JobSet::from_ids((1..=10_000).rev().map(JobId));
        assert_eq!((set.len(), set.runs()), (10_000, 1));
        assert_eq!(serde_json::to_string(&set).expect("json"), "[[1,10000]]");
        let mixed = ids(&[9, 3, 4, 5, 6, 1, 7, 12, 13]);
        assert_eq!(serde_json::to_string(&mixed).expect("json"), "[1,[3,7],9,12,13]");
        assert_eq!(mixed.iter().map(|j| j.0).collect::<Vec<_>>(), [1, 3, 4, 5, 6, 7, 9, 12, 13]);
        let back: JobSet = serde_json::from_str("[1,[3,7],9,12,13]").expect("json");
        assert_eq!(back, mixed);
    }

    #[test]
    fn a_plain_list_of_ids_as_earlier_releases_wrote_reads_as_the_same_set() {
        let old: JobSet = serde_json::from_str("[4,5,6,7,2]").expect("json");
        assert_eq!(old, ids(&[2, 4, 5, 6, 7]));
        assert_eq!(old.runs(), 2);
        let ordered: JobSet = serde_json::from_str("[1,2,3]").expect("json");
        assert_eq!(ordered.runs(), 1);
        assert!(serde_json::from_str::<JobSet>("[[9,3]]").is_err(), "a run that goes down is refused");
        let overlapping: JobSet = serde_json::from_str("[[5,9],[1,6],12,[10,11]]").expect("json");
        assert_eq!(serde_json::to_string(&overlapping).expect("json"), "[[1,12]]");
    }

    #[test]
    fn ids_are_taken_out_of_a_run_one_at_a_time_and_counted_within_bounds() {
        let mut set = JobSet::run(JobId(10), JobId(1_000_009));
        assert_eq!((set.len(), set.runs(), set.first()), (1_000_000, 1, Some(JobId(10))));
        assert!(set.contains(JobId(500)) && !set.contains(JobId(9)) && !set.contains(JobId(1_000_010)));
        assert!(set.remove(JobId(10)), "the first");
        assert!(set.remove(JobId(500)), "one inside splits the run");
        assert!(set.remove(JobId(1_000_009)), "the last");
        assert!(!set.remove(JobId(500)), "once only");
        assert_eq!(serde_json::to_string(&set).expect("json"), "[[11,499],[501,1000008]]");
        assert_eq!((set.len(), set.first()), (999_997, Some(JobId(11))));
        assert!(JobSet::run(JobId(5), JobId(4)).is_empty());
    }

    #[test]
    fn taking_a_set_out_keeps_the_rest_and_returns_what_both_held() {
        let mut set = JobSet::from_runs(vec![(JobId(1), JobId(10)), (JobId(20), JobId(30)), (JobId(40), JobId(40))]);
        let other = JobSet::from_runs(vec![(JobId(5), JobId(22)), (JobId(25), JobId(25)), (JobId(29), JobId(45))]);
        let taken = set.take(&other);
        assert_eq!(serde_json::to_string(&taken).expect("json"), "[[5,10],[20,22],25,29,30,40]");
        assert_eq!(serde_json::to_string(&set).expect("json"), "[[1,4],23,24,[26,28]]");
        assert_eq!(set.take(&JobSet::default()), JobSet::default());
        let mut all = JobSet::run(JobId(1), JobId(1_000_000));
        assert_eq!(all.take(&JobSet::run(JobId(0), JobId(2_000_000))).len(), 1_000_000);
        assert!(all.is_empty());
    }
}
