//! The log's decisions are authoritative. A `Scheduled` record runs the
//! engine's pass again, live and on replay alike, and what that pass
//! decided is followed in the log by a record of each decision allotd
//! acted on (`Started`, `Preempted`, `Resumed`), at the same time, before
//! any other kind of record. A restart on a later release, whose pass
//! decides otherwise, must not believe what never happened:
//!
//! - a start, suspension or resumption the log records that this pass did
//!   not make is forced on the engine where its record is applied
//!   (the engine's `Event::Started`, `Preempted`, `Resumed` in `state.rs`);
//! - one this pass made that the log does not record is undone as soon as
//!   a record of another kind comes (or the replay ends): the job is
//!   pending again, or running again, as the log has it.
//!
//! An autoresizable job's growth (`Grown`) is not undone: the engine has
//! no way back from a grant but the job's own release; a pass of another
//! release that grows a job the log did not is said in allotd's log.

use allot_engine::{Decision, Event, JobId, Time};
use allot_store::Record;

use crate::state::State;

/// What the last pass decided that the log has not yet confirmed.
#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Unconfirmed {
    at: Time,
    decisions: Vec<Decision>,
    /// The jobs suspended by preemption before the pass, with the job
    /// that preempted each: what an unconfirmed resumption goes back to.
    suspended_before: Vec<(JobId, JobId)>,
}

impl State {
    /// Before the pass of a `Scheduled` record at `t`: what a resumption
    /// would be undone to.
    pub(crate) fn before_pass(&mut self, t: Time) {
        self.unconfirmed = Unconfirmed { at: t, decisions: Vec::new(), suspended_before: self.engine.preempted_jobs() };
    }

    /// After it: its decisions wait for their records.
    pub(crate) fn after_pass(&mut self) {
        self.unconfirmed.decisions =
            self.decisions.iter().filter(|d| !matches!(d, Decision::Kill { .. })).cloned().collect();
    }

    /// A record comes: it confirms one of the last pass's decisions, or
    /// (any other kind) the decisions still unconfirmed are undone first.
    pub(crate) fn confirm(&mut self, record: &Record) {
        if self.unconfirmed.decisions.is_empty() {
            return;
        }
        let confirmed = |d: &Decision| match (record, d) {
            (Record::Started { job, .. }, Decision::Start { job: j, .. })
            | (Record::Preempted { job, .. }, Decision::Suspend { job: j, .. })
            | (Record::Resumed { job }, Decision::Resume { job: j })
            | (Record::Grown { job, .. }, Decision::Grow { job: j, .. }) => job == j,
            _ => false,
        };
        match record {
            Record::Started { .. } | Record::Preempted { .. } | Record::Resumed { .. } | Record::Grown { .. } => {
                self.unconfirmed.decisions.retain(|d| !confirmed(d));
            }
            // What a pass's kills make, between its starts.
            Record::Killed { .. } => {}
            _ => self.undo_unconfirmed(),
        }
    }

    /// Undoes what the last pass decided and the log never recorded.
    pub(crate) fn undo_unconfirmed(&mut self) {
        let Unconfirmed { at, decisions, suspended_before } = std::mem::take(&mut self.unconfirmed);
        for d in decisions {
            let undo = match d {
                Decision::Start { job, .. } => Ok(Some(Event::Unstarted(job))),
                Decision::Suspend { job, .. } => Ok(Some(Event::Resumed(job))),
                Decision::Resume { job } => match suspended_before.iter().find(|(j, _)| *j == job) {
                    Some(&(_, by)) => Ok(Some(Event::Preempted { job, by })),
                    None => Err(format!("job {job} was not suspended before the pass")),
                },
                Decision::Grow { job, .. } => Err(format!("job {job} grew in the pass, not in the log")),
                Decision::Kill { .. } => Ok(None),
            };
            let undone = undo.and_then(|event| match event {
                Some(event) => self.engine.apply(at, &event).map(|_| ()).map_err(|e| e.to_string()),
                None => Ok(()),
            });
            match undone {
                Ok(()) => eprintln!("allotd: the pass at {at} decided {d:?}, which the log does not say: undone"),
                Err(e) => eprintln!("allotd: the pass at {at} decided {d:?}, which the log does not say: {e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use allot_engine::{JobId, Time};
    use allot_proto::{JobStatus, Request, Submit};
    use allot_store::Record;
    use tokio::sync::mpsc;

    use crate::replay_check::{Twin, open};
    use crate::serve::Input;

    /// A log as another release would have written it: `keep` decides
    /// which of `twin`'s records it has.
    fn rewritten(twin: &mut Twin, to: &std::path::Path, keep: impl Fn(&Record) -> bool) {
        twin.state.flush().expect("flushed");
        std::fs::create_dir_all(to).expect("state dir");
        let mut store = allot_store::Store::open(&to.join("state.db")).expect("log");
        let records: Vec<(Time, Record)> = twin.log().into_iter().filter(|(_, r)| keep(r)).collect();
        store.append(&records).expect("written");
    }

    fn status(twin: &Twin, job: u64) -> JobStatus {
        twin.state.book.jobs.get(&JobId(job)).expect("job").status
    }

    /// Two jobs start in one pass. A log in which only the first started
    /// (the pass of the release that wrote it started one) is taken up
    /// with only the first running, in the engine as in `bjobs`, and the
    /// next pass starts the second, recorded; a log with a start and no
    /// pass before it (the pass of the release that wrote it started a
    /// job this one's would not) is taken up with that job running.
    #[test]
    fn the_logs_starts_are_what_a_restart_believes_in_both_directions() {
        let (root, config) = crate::replay_check::one_host("confirm", 2);
        let (wake, _heard) = mpsc::channel::<Input>(1 << 10);
        let t = Time(1_000_000);
        let dir = root.join("live");
        std::fs::create_dir_all(&dir).expect("state dir");
        let mut live = Twin { state: open(&dir, &config, t, &wake), dir };
        for _ in 0..2 {
            let submit = Submit { command: "true".into(), cwd: root.display().to_string(), ..Submit::default() };
            live.request(Request::Submit(Box::new(submit)), t);
        }
        live.tick(Time(t.0 + 1), &wake);
        assert_eq!((status(&live, 1), status(&live, 2)), (JobStatus::Run, JobStatus::Run));

        let one = root.join("one");
        rewritten(&mut live, &one, |r| !matches!(r, Record::Started { job: JobId(2), .. }));
        let mut back = Twin { state: open(&one, &config, Time(t.0 + 2), &wake), dir: one };
        assert_eq!((status(&back, 1), status(&back, 2)), (JobStatus::Run, JobStatus::Pend));
        assert!(back.state.engine.is_running(JobId(1)) && !back.state.engine.is_running(JobId(2)));
        back.tick(Time(t.0 + 3), &wake);
        assert_eq!(status(&back, 2), JobStatus::Run, "the next pass starts it");
        back.state.flush().expect("flushed");
        assert!(back.log().iter().any(|(at, r)| at.0 == t.0 + 3 && matches!(r, Record::Started { job: JobId(2), .. })));

        let unplanned = root.join("unplanned");
        rewritten(&mut live, &unplanned, |r| {
            !matches!(r, Record::Scheduled { .. } | Record::Started { job: JobId(1), .. })
        });
        let back = Twin { state: open(&unplanned, &config, Time(t.0 + 2), &wake), dir: unplanned };
        assert_eq!((status(&back, 1), status(&back, 2)), (JobStatus::Pend, JobStatus::Run));
        assert!(!back.state.engine.is_running(JobId(1)) && back.state.engine.is_running(JobId(2)));
        let _ = std::fs::remove_dir_all(&root);
    }
}
