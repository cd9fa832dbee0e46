//! LSF's job numbers over the engine's ids. LSF gives a submission one
//! number, a whole job array too: `bsub -J "a[1-10]"` is job 5, its
//! elements 5[1] to 5[10], and the next job is 6. The engine gives every
//! element an id of its own (ids 5 to 14, the next job's 15), which is
//! what it schedules and the log's records name; the commands see only
//! numbers, through [`State::job_ref`] and [`State::resolve`].
//!
//! Numbers and ids both grow with each submission, so the map between
//! them is a list of the places where they part: after each array, and
//! where a log written before numbers were kept skips numbers (it gave an
//! array's elements numbers of their own, so an array of ten moved the
//! next number on by ten, as it moved the id; those jobs keep the numbers
//! their users were told, see `allot_store::Record::Submitted`).

use allot_engine::JobId;
use allot_proto::JobRef;

use crate::state::State;

/// The numbers given, as runs: from `(number, id)` on, submission
/// `number + k` has first id `id + k`, until the next run.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Numbers {
    runs: Vec<(u64, JobId)>,
    next: u64,
}

impl Default for Numbers {
    fn default() -> Self {
        Numbers { runs: Vec::new(), next: 1 }
    }
}

/// A job number that was given before: a log out of order.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("job number {number} was given before (the next is {next})")]
pub struct GivenBefore {
    pub number: u64,
    pub next: u64,
}

impl Numbers {
    /// The number the next submission gets.
    pub fn next(&self) -> u64 {
        self.next
    }

    /// Submission `number` was given first id `first`. Numbers only grow:
    /// one given before is refused (a log out of order).
    pub fn give(&mut self, number: u64, first: JobId) -> Result<(), GivenBefore> {
        if number < self.next {
            return Err(GivenBefore { number, next: self.next });
        }
        let same_run =
            self.runs.last().is_some_and(|&(n, id)| first.0.checked_sub(id.0).is_some_and(|k| k == number - n));
        if !same_run {
            self.runs.push((number, first));
        }
        self.next = number + 1;
        Ok(())
    }

    /// The first id submission `number` has, if it was given: a number
    /// skipped by an old log maps to an id of another job, so the caller
    /// checks that the job there has this number.
    pub fn first_id(&self, number: u64) -> Option<JobId> {
        let i = self.runs.partition_point(|&(n, _)| n <= number).checked_sub(1)?;
        let (n, id) = self.runs[i];
        Some(id.offset(number - n))
    }

    /// The jobs before `id` are forgotten: so are the runs only they used.
    pub fn forget_before(&mut self, id: JobId) {
        let keep = self.runs.partition_point(|&(_, first)| first <= id).saturating_sub(1);
        self.runs.drain(..keep);
    }

    /// How many runs are kept (what the map costs).
    #[cfg(test)]
    pub fn runs(&self) -> usize {
        self.runs.len()
    }
}

impl State {
    /// How job `id` is named to its user.
    pub fn job_ref(&self, id: JobId) -> JobRef {
        if let Some(j) = self.jobs.get(&id) {
            return j.job_ref();
        }
        // An element not made yet ([`crate::array_tail`]).
        match (self.job_or_template(id), self.element_index(id)) {
            (Some(j), Some(index)) => JobRef { id: j.number, index },
            _ => JobRef::job(id.0),
        }
    }

    /// The jobs a reference names, by id: a job, every element of an
    /// array, or one element; none if there is no such job. An element's
    /// own id is no name for it: only `array[index]` is.
    pub fn resolve(&self, r: JobRef) -> Vec<JobId> {
        let Some(id) = self.numbers.first_id(r.id) else { return Vec::new() };
        if self.jobs.get(&id).is_none_or(|j| j.number != r.id || j.array.is_some_and(|(first, _)| first != id)) {
            return Vec::new();
        }
        match (r.index, self.arrays.get(&id)) {
            (0, Some(indices)) => (0..indices.len() as u64).map(|k| id.offset(k)).collect(),
            (0, None) => vec![id],
            (i, Some(indices)) => indices.binary_search(&i).map(|k| vec![id.offset(k as u64)]).unwrap_or_default(),
            (_, None) => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs 1 to 4, an array of ten as job 5 (ids 5 to 14), then jobs 6
    /// and 7 (ids 15 and 16): LSF's numbering.
    #[test]
    fn an_array_takes_one_number() {
        let mut n = Numbers::default();
        for k in 1..=5 {
            assert_eq!(n.next(), k);
            n.give(k, JobId(k)).expect("give");
        }
        n.give(6, JobId(15)).expect("give");
        n.give(7, JobId(16)).expect("give");
        assert_eq!(n.runs(), 2);
        let firsts: Vec<_> = (1..=7).map(|k| n.first_id(k).expect("given").0).collect();
        assert_eq!(firsts, [1, 2, 3, 4, 5, 15, 16]);
        assert_eq!(n.next(), 8);
        assert_eq!(n.give(7, JobId(17)), Err(GivenBefore { number: 7, next: 8 }), "a number given before");
        assert_eq!(n.first_id(0), None);
    }

    /// An old log: the array's elements took numbers 5 to 14, the next
    /// job was 15; the numbers skipped map to the elements' ids, which the
    /// caller finds numbered otherwise.
    #[test]
    fn an_old_logs_numbers_skip_with_the_ids() {
        let mut n = Numbers::default();
        n.give(5, JobId(5)).expect("give");
        n.give(15, JobId(15)).expect("give");
        assert_eq!(n.runs(), 1);
        assert_eq!(n.first_id(15), Some(JobId(15)));
        assert_eq!(n.next(), 16);
        n.give(16, JobId(16)).expect("give");
        assert_eq!(n.first_id(16), Some(JobId(16)));
    }

    /// Forgetting keeps the run the first job still known is in.
    #[test]
    fn forgetting_keeps_what_the_known_jobs_need() {
        let mut n = Numbers::default();
        // Arrays of three as jobs 1, 2 and 3: ids 1, 4, 7; job 4 is id 10.
        for (k, id) in [(1, 1), (2, 4), (3, 7), (4, 10)] {
            n.give(k, JobId(id)).expect("give");
        }
        assert_eq!(n.runs(), 4);
        n.forget_before(JobId(8));
        assert_eq!(n.runs(), 2);
        assert_eq!(n.first_id(3), Some(JobId(7)));
        assert_eq!(n.first_id(4), Some(JobId(10)));
        n.forget_before(JobId(100));
        assert_eq!(n.first_id(4), Some(JobId(10)));
        assert_eq!(n.next(), 5);
    }
}

/// Numbers through allotd's submission and its log: LSF's numbering live
/// and after a restart, and a log written before numbers were kept.
#[cfg(test)]
mod log_tests {
    use allot_engine::{JobId, Time};
    use allot_proto::{JobRef, Request, Submit};
    use allot_store::Record;
    use tokio::sync::mpsc;

    use crate::replay_check::{Twin, open};
    use crate::serve::Input;

    fn submit(twin: &mut Twin, name: Option<&str>, t: Time) -> String {
        let s = Submit {
            name: name.map(str::to_string),
            queue: Some("normal".into()),
            command: "true".into(),
            cwd: twin.dir.display().to_string(),
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            ..Submit::default()
        };
        twin.request(Request::Submit(Box::new(s)), t)
    }

    fn ids(twin: &Twin, id: u64, index: u32) -> Vec<u64> {
        twin.state.resolve(JobRef { id, index }).into_iter().map(|j| j.0).collect()
    }

    #[test]
    fn arrays_take_one_number_live_after_a_restart_and_in_an_old_log() {
        let root = std::env::temp_dir().join(format!("allot-numbers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let config = root.join("config");
        std::fs::create_dir_all(&config).expect("config");
        std::fs::write(config.join("allot.toml"), "[[hosts]]\nname = \"hostA\"\nncpus = 2\n").expect("allot.toml");
        std::fs::write(config.join("lsb.queues"), "Begin Queue\nQUEUE_NAME = normal\nEnd Queue\n").expect("queues");
        let (wake, _heard) = mpsc::channel::<Input>(1 << 10);
        let t = Time(1_000_000);
        let start = |name: &str| {
            let dir = root.join(name);
            std::fs::create_dir_all(&dir).expect("state dir");
            Twin { state: open(&dir, &config, t, &wake), dir }
        };

        // Live: job 1 an array of three (ids 1 to 3), job 2 (id 4).
        let mut live = start("live");
        let said = submit(&mut live, Some("a[1-3]"), t);
        assert!(said.contains("job: 1,"), "{said}");
        assert!(submit(&mut live, None, t).contains("job: 2,"));
        assert_eq!(ids(&live, 1, 0), [1, 2, 3]);
        assert_eq!(ids(&live, 1, 3), [3]);
        assert_eq!(ids(&live, 2, 0), [4]);
        assert_eq!(ids(&live, 3, 0), Vec::<u64>::new(), "no job 3 yet");
        assert_eq!(live.state.job_ref(JobId(3)), JobRef { id: 1, index: 3 });
        let log = live.log();
        drop(live);
        let restarted = Twin { state: open(&root.join("live"), &config, t, &wake), dir: root.join("live") };
        assert_eq!(ids(&restarted, 2, 0), [4], "the log keeps the number");
        assert_eq!(restarted.state.numbers.next(), 3);

        // The same log as allotd wrote it before numbers were kept: the
        // second job was job 4, as its user was told.
        let old: Vec<(Time, Record)> = log
            .into_iter()
            .filter_map(|(t, r)| match r {
                Record::Submitted { job, record, typed, .. } => {
                    Some((t, Record::Submitted { job, number: None, record, typed }))
                }
                _ => None,
            })
            .collect();
        drop(start("old"));
        allot_store::Store::open(&root.join("old").join("state.db")).expect("store").append(&old).expect("append");
        let mut old = Twin { state: open(&root.join("old"), &config, t, &wake), dir: root.join("old") };
        assert_eq!(ids(&old, 1, 0), [1, 2, 3]);
        assert_eq!(ids(&old, 1, 2), [2]);
        assert_eq!(ids(&old, 4, 0), [4]);
        assert_eq!(ids(&old, 2, 0), Vec::<u64>::new(), "an element's own id names nothing");
        // New submissions go on from the old numbers, as LSF numbers.
        assert!(submit(&mut old, None, t).contains("job: 5,"));
        assert!(submit(&mut old, Some("b[1-2]"), t).contains("job: 6,"));
        assert!(submit(&mut old, None, t).contains("job: 7,"));
        assert_eq!(ids(&old, 6, 2), [7]);
        assert_eq!(ids(&old, 7, 0), [8]);
        drop(old);
        let old = Twin { state: open(&root.join("old"), &config, t, &wake), dir: root.join("old") };
        assert_eq!((ids(&old, 4, 0), ids(&old, 6, 0), ids(&old, 7, 0)), (vec![4], vec![6, 7], vec![8]));
        assert_eq!(old.state.job_ref(JobId(8)), JobRef::job(7));
        let _ = std::fs::remove_dir_all(&root);
    }
}
