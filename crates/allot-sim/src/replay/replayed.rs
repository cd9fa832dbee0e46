//! What a replay gives: its outcome, and allotd's starts and the replay's
//! side by side.

use std::collections::BTreeMap;

use crate::sim::{JobRecord, Outcome};

/// The starts of a history: each job's `k`th run (from 0), when and where.
pub type Starts = BTreeMap<(u64, u32), (u64, String)>;

/// What a replay gives.
pub struct Replayed {
    /// Runs that ended (in `records`), jobs refused, jobs never started
    /// (with why), passes, requeues, as the simulator reports a workload.
    pub outcome: Outcome,
    /// Runs still going at the history's end, their end the history's.
    pub running: Vec<JobRecord>,
    /// Jobs still pending at the end (their reasons are in
    /// `outcome.never_started`).
    pub waiting: Vec<Waiting>,
    /// What allotd decided, from its log, and what the replay decided.
    pub recorded: Starts,
    pub replayed: Starts,
    /// The first submission's time and the log's last.
    pub first_submit: u64,
    pub horizon: u64,
    /// What the replay left out, and why, once each.
    pub notes: Vec<String>,
    /// The configuration it ran on: its directory, or the embedded
    /// defaults.
    pub config: String,
}

impl Replayed {
    /// How many of allotd's starts the replay made again, at the same
    /// time on the same hosts.
    pub fn made_again(&self) -> usize {
        self.side_by_side().filter(|(_, then, now)| then.is_some() && then == now).count()
    }

    /// The runs whose start differs between the log and the replay: (job,
    /// run), what allotd did, what the replay did.
    #[allow(clippy::type_complexity)]
    pub fn differences(&self) -> Vec<((u64, u32), Option<&(u64, String)>, Option<&(u64, String)>)> {
        self.side_by_side().filter(|(_, then, now)| then != now).collect()
    }

    /// Every run either side has, in order, with what each did: the two
    /// ordered maps walked side by side.
    #[allow(clippy::type_complexity)]
    fn side_by_side(&self) -> impl Iterator<Item = ((u64, u32), Option<&(u64, String)>, Option<&(u64, String)>)> {
        let mut then = self.recorded.iter().peekable();
        let mut now = self.replayed.iter().peekable();
        std::iter::from_fn(move || {
            let k = match (then.peek(), now.peek()) {
                (None, None) => return None,
                (Some((a, _)), None) => **a,
                (None, Some((b, _))) => **b,
                (Some((a, _)), Some((b, _))) => (**a).min(**b),
            };
            let was = then.next_if(|(a, _)| **a == k).map(|(_, v)| v);
            let is = now.next_if(|(b, _)| **b == k).map(|(_, v)| v);
            Some((k, was, is))
        })
    }
}

/// A job still pending at the end.
#[derive(Clone, Debug, PartialEq)]
pub struct Waiting {
    pub id: u64,
    pub index: u32,
    pub user: String,
    pub queue: String,
    pub submit: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(runs: &[((u64, u32), u64, &str)]) -> Starts {
        runs.iter().map(|&(k, t, on)| (k, (t, on.to_string()))).collect()
    }

    /// A start made again counts; one made otherwise, one the replay did
    /// not make and one allotd did not are the differences, in order.
    #[test]
    fn the_two_sides_are_compared_run_by_run() {
        let r = Replayed {
            outcome: Outcome::default(),
            running: Vec::new(),
            waiting: Vec::new(),
            recorded: starts(&[((1, 0), 10, "a*1"), ((2, 0), 20, "b*2"), ((3, 0), 30, "c*1"), ((3, 1), 40, "c*1")]),
            replayed: starts(&[((1, 0), 10, "a*1"), ((2, 0), 21, "b*2"), ((3, 0), 30, "c*1"), ((4, 0), 50, "d*1")]),
            first_submit: 0,
            horizon: 50,
            notes: Vec::new(),
            config: String::new(),
        };
        assert_eq!(r.made_again(), 2);
        let shown = |s: Option<&(u64, String)>| s.map(|(t, on)| format!("{t} {on}"));
        let differences: Vec<_> = r.differences().into_iter().map(|(k, a, b)| (k, shown(a), shown(b))).collect();
        assert_eq!(
            differences,
            [
                ((2, 0), Some("20 b*2".into()), Some("21 b*2".into())),
                ((3, 1), Some("40 c*1".into()), None),
                ((4, 0), None, Some("50 d*1".into())),
            ]
        );
    }
}
