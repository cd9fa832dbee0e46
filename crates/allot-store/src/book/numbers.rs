//! LSF's job numbers over the engine's ids. LSF gives a submission one
//! number, a whole job array too: `bsub -J "a[1-10]"` is job 5, its
//! elements 5[1] to 5[10], and the next job is 6. The engine gives every
//! element an id of its own (ids 5 to 14, the next job's 15), which is
//! what it schedules and the log's records name; the commands see only
//! numbers, through [`super::Book::job_ref`] and [`super::Book::resolve`].
//!
//! Numbers and ids both grow with each submission, so the map between
//! them is a list of the places where they part: after each array, and
//! where a log written before numbers were kept skips numbers (it gave an
//! array's elements numbers of their own, so an array of ten moved the
//! next number on by ten, as it moved the id; those jobs keep the numbers
//! their users were told, see [`crate::Record::Submitted`]).

use allot_engine::JobId;

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
