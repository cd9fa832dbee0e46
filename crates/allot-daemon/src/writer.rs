//! The event log's writer: commits (an fsync each) run on a thread of their
//! own, so a slow disk stalls no request. The dispatcher applies records
//! as before and hands them, in order, to the writer with what waits for
//! them: the answers of a batch (a submission is acknowledged only once it
//! is durable), or a tick's job ends and starts (a job's files go, and a
//! job starts, only once its record is durable). The writer commits and
//! sends the work back ([`Input::Committed`]); the dispatcher then does
//! what waited, in commit order.
//!
//! A commit that fails (a full disk) fails every one queued behind it of
//! the same epoch, whose state the dispatcher then takes up again from the
//! log (see `degraded`); the new state's writes are a new epoch and are
//! tried again.

use std::path::Path;

use allot_engine::{JobId, Time};
use allot_proto::Response;
use allot_store::{Record, Store, StoreError};

use crate::snapshot::{Saved, write_out};
use tokio::sync::{mpsc, oneshot};

use crate::serve::{Answer, Input};
use crate::state::State;

/// What waits for a write.
pub(crate) enum After {
    /// A batch's answers, each with whether its request wrote (and was a
    /// submission): such an answer becomes a refusal if the write failed.
    Replies(Vec<(oneshot::Sender<Answer>, Answer, Option<bool>)>),
    /// A tick's jobs that ended (their files go) and that start, at `t`.
    Tick { ended: Vec<JobId>, starts: Vec<(JobId, Vec<(String, u32)>)>, t: Time },
    /// Nothing.
    Nothing,
    /// Told when everything before it is written.
    Drained(std::sync::mpsc::Sender<()>),
}

struct Job {
    epoch: u64,
    records: Vec<(Time, Record)>,
    after: After,
    /// A snapshot of the state after the first `n` of `records`, to write
    /// out here.
    snapshot: Option<(usize, Box<Saved>)>,
}

/// A write done: its epoch, how it went, and what waited for it.
pub(crate) struct Done {
    epoch: u64,
    result: Result<(), String>,
    after: After,
}

pub(crate) struct Writer {
    tx: std::sync::mpsc::Sender<Job>,
    /// The dispatcher's state's epoch: one more each time it is taken up
    /// again from the log.
    pub(crate) epoch: u64,
}

impl Writer {
    /// The writer thread, with a connection of its own to the log.
    pub(crate) fn start(path: &Path, wake: mpsc::Sender<Input>) -> Result<Writer, StoreError> {
        let mut store = Store::open(path)?;
        let log = path.to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let delay = test_delay();
        let spawned = std::thread::Builder::new().name("log writer".into()).spawn(move || {
            let mut failed: Option<(u64, String)> = None;
            // The last record still to archive (`snapshot::archive_step`),
            // from before a restart too.
            let mut archiving: Option<i64> = store.archive_target().ok().flatten();
            while let Ok(first) = rx.recv() {
                // Every job waiting now, in one commit (one fsync): what
                // the dispatcher handed over while the last one was
                // written.
                let mut jobs = vec![first];
                while let Ok(more) = rx.try_recv() {
                    jobs.push(more);
                    if jobs.len() >= 1024 {
                        break;
                    }
                }
                let (doomed, fresh): (Vec<Job>, Vec<Job>) =
                    jobs.into_iter().partition(|j| failed.as_ref().is_some_and(|(epoch, _)| j.epoch <= *epoch));
                let mut done: Vec<Done> = doomed
                    .into_iter()
                    .map(|j| Done { epoch: j.epoch, result: Err(failed_why(&failed)), after: j.after })
                    .collect();
                let mut fresh = fresh;
                // The last snapshot among them, placed after its job's
                // records (and those of the jobs before): written out once
                // the records are committed and answered.
                let mut snapshot = None;
                let mut archive = false;
                let mut records: Vec<(Time, Record)> = Vec::new();
                for j in &mut fresh {
                    let before = records.len();
                    records.append(&mut j.records);
                    if let Some((n, s)) = j.snapshot.take() {
                        archive |= s.archive;
                        snapshot = Some((before + n, s));
                    }
                }
                let result = if records.is_empty() {
                    store.last_seq().map_err(|e| e.why_not_written())
                } else {
                    if let Some(d) = delay {
                        std::thread::sleep(d);
                    }
                    store.append(&records).map(|last| last as i64).map_err(|e| e.why_not_written())
                };
                // The record the snapshot follows.
                let snapshot = match &result {
                    Ok(last) => snapshot.map(|(n, s)| (last - (records.len() - n) as i64, s)),
                    Err(_) => None,
                };
                let result = result.map(|_| ());
                if let (Err(why), Some(last)) = (&result, fresh.last()) {
                    failed = Some((last.epoch, why.clone()));
                }
                // The snapshot (and a step of archiving) once what waited
                // is answered, so that the answers do not wait for it; but
                // before allotd's stop is told everything is written.
                let stopping = fresh.iter().any(|j| matches!(j.after, After::Drained(_)));
                let snapshot = if stopping {
                    write_out(&mut store, snapshot, archive, &mut archiving);
                    None
                } else {
                    snapshot
                };
                done.extend(fresh.into_iter().map(|j| Done { epoch: j.epoch, result: result.clone(), after: j.after }));
                for d in done {
                    if wake.blocking_send(Input::Committed(Box::new(d))).is_err() {
                        return;
                    }
                }
                if !stopping {
                    write_out(&mut store, snapshot, archive, &mut archiving);
                }
                crate::snapshot::archive_step(&mut archiving, &mut store, &log);
            }
        });
        spawned.map_err(|e| StoreError::File {
            path: path.display().to_string(),
            what: "cannot start its writer",
            source: e,
        })?;
        Ok(Writer { tx, epoch: 0 })
    }

    fn send(&self, records: Vec<(Time, Record)>, after: After, snapshot: Option<(usize, Box<Saved>)>) {
        // The writer ends only with allotd.
        let _ = self.tx.send(Job { epoch: self.epoch, records, after, snapshot });
    }
}

fn failed_why(failed: &Option<(u64, String)>) -> String {
    failed.as_ref().map_or_else(String::new, |(_, why)| why.clone())
}

/// A slow disk for the tests that show no request waits on a commit
/// (`ALLOT_TEST_COMMIT_DELAY_MS`, debug builds only).
fn test_delay() -> Option<std::time::Duration> {
    if !cfg!(debug_assertions) {
        return None;
    }
    let ms = std::env::var("ALLOT_TEST_COMMIT_DELAY_MS").ok()?.parse::<u64>().ok()?;
    Some(std::time::Duration::from_millis(ms))
}

/// Hands records (already applied, after the deferred ones) to the writer
/// with what waits for them; without a writer (the tests that drive the
/// dispatcher, and a daemon starting), writes them here and does it now.
/// `Some(why)`: the write failed here, and the state must be taken up again.
pub(crate) fn write(
    state: &mut State,
    stamped: Vec<(Time, Record)>,
    after: After,
    wake: &mpsc::Sender<Input>,
) -> Option<String> {
    if state.writer.is_none() {
        let result = state.record_stamped(stamped).map_err(|e| e.why_not_written());
        // Without a writer there is one epoch.
        return finish(state, Done { epoch: 0, result, after }, wake);
    }
    let mut all = std::mem::take(&mut state.deferred);
    all.extend(stamped);
    let snapshot = crate::snapshot::due(state, all.len()).then(|| (all.len(), crate::snapshot::take(state)));
    if let Some(w) = &state.writer {
        w.send(all, after, snapshot);
    }
    None
}

/// Does what waited for a write. `Some(why)`: a write of the state as it
/// is failed, and the state must be taken up again from the log.
pub(crate) fn finish(state: &mut State, done: Done, wake: &mpsc::Sender<Input>) -> Option<String> {
    let current = done.epoch == state.writer.as_ref().map_or(0, |w| w.epoch);
    match (&done.result, done.after) {
        (result, After::Replies(replies)) => {
            for (reply, answer, wrote) in replies {
                let answer = match (result, wrote) {
                    (Err(why), Some(submission)) => {
                        Answer::Response(Response::Error(crate::degraded::refusal(submission, why)))
                    }
                    _ => answer,
                };
                let _ = reply.send(answer);
            }
        }
        (Ok(()), After::Tick { ended, starts, t }) if current => {
            if let Some(why) = crate::tick::after_written(state, ended, starts, t, wake) {
                return Some(why);
            }
        }
        (_, After::Tick { .. } | After::Nothing) => {}
        (_, After::Drained(told)) => {
            let _ = told.send(());
        }
    }
    match done.result {
        Err(why) if current => Some(why),
        _ => None,
    }
}
