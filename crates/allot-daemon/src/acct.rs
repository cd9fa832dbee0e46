//! `bacct`: the finished jobs of the event log, accounted on a thread of
//! its own with a read-only connection (the log may be a year long; the
//! dispatcher goes on meanwhile), at most [`MAX_SCANS`] at once.
//!
//! Every end of a run is accounted, as LSF writes a record to lsb.acct for
//! each: a job requeued and run again is accounted for each run, and a job
//! killed while pending is an exited job that never ran. What a scan keeps
//! is what it needs of the jobs that match the users and job ids asked
//! (their submission and current run), so its memory is that of the log's
//! matching jobs, not of the log.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use allot_engine::JobId;
use allot_proto::acct::{AcctAnswer, AcctQuery, AcctRun};
use allot_proto::{JobRef, Response};
use allot_store::{Record, Store};

use crate::serve::{Answer, Caller};
use crate::state::State;

/// Scans that may run at once: more are refused, so many `bacct`s cannot
/// take a thread and a connection each.
pub const MAX_SCANS: usize = 2;

/// The most runs `bacct -l` lists in one answer.
pub const MAX_LISTED: usize = 20_000;

/// Answers `query` for `caller` on a thread, through `reply`.
pub(crate) fn acct(state: &State, caller: &Caller, query: AcctQuery, reply: tokio::sync::oneshot::Sender<Answer>) {
    let path = state.state_dir.join("state.db");
    let user = caller.user.clone();
    let busy = format!("bacct: {MAX_SCANS} accountings are being made; try again when they are done");
    on_thread(("bacct", MAX_SCANS, busy), state.acct_scans.clone(), reply, move || {
        scan(&path, &user, &query).unwrap_or_else(Response::Error)
    });
}

/// Answers `reply` with what `work` makes, on a thread `name` of its own
/// (off the dispatcher), at most `max` at once as counted by `running`;
/// one more is answered `busy` at once, so that many requests cannot take
/// a thread and a connection to the log each.
pub(crate) fn on_thread(
    (name, max, busy): (&str, usize, String),
    running: Arc<AtomicUsize>,
    reply: tokio::sync::oneshot::Sender<Answer>,
    work: impl FnOnce() -> Response + Send + 'static,
) {
    if running.fetch_add(1, Ordering::SeqCst) >= max {
        running.fetch_sub(1, Ordering::SeqCst);
        let _ = reply.send(Answer::Response(Response::Error(busy)));
        return;
    }
    let spawned = std::thread::Builder::new().name(name.into()).spawn({
        let running = running.clone();
        move || {
            let answer = work();
            running.fetch_sub(1, Ordering::SeqCst);
            let _ = reply.send(Answer::Response(answer));
        }
    });
    if let Err(e) = spawned {
        running.fetch_sub(1, Ordering::SeqCst);
        eprintln!("allotd: {name}: cannot start its thread: {e}");
    }
}

fn within(window: Option<(u64, u64)>, t: Option<u64>) -> bool {
    window.is_none_or(|(from, to)| t.is_some_and(|t| from <= t && t <= to))
}

fn scan(path: &std::path::Path, caller: &str, q: &AcctQuery) -> Result<Response, String> {
    let users: Vec<&str> = if q.users.is_empty() { vec![caller] } else { q.users.iter().map(String::as_str).collect() };
    let all_users = users.contains(&"all");
    let mut live: BTreeMap<JobId, AcctRun> = BTreeMap::new();
    let mut answer = AcctAnswer::default();
    let mut too_many = false;
    let mut account = |run: &AcctRun, answer: &mut AcctAnswer| {
        let wanted = (q.queues.is_empty() || q.queues.contains(&run.queue))
            && within(q.submitted, Some(run.submitted))
            && within(q.dispatched, run.started.as_ref().map(|s| s.0))
            && within(q.completed, Some(run.ended));
        if !wanted {
            return;
        }
        answer.summary.add(run);
        if q.long {
            if answer.runs.len() < MAX_LISTED {
                answer.runs.push(run.clone());
            } else {
                too_many = true;
            }
        }
    };
    // The log's archives too (`allot_store::history_dir`).
    Store::scan_all(path, &[], |_, t, glance| {
        let allot_store::Glance::Record(record) = glance else { return };
        match record {
            Record::Submitted { job, number, record, .. } => {
                let number = number.unwrap_or(job.0);
                if !all_users && !users.contains(&record.spec.user.as_str()) {
                    return;
                }
                let indices = record.array.as_deref().and_then(|a| allot_config::array::indices_of(a).ok());
                let elements: Vec<u32> = indices.unwrap_or_else(|| vec![0]);
                for (k, index) in elements.into_iter().enumerate() {
                    let shown = JobRef { id: number, index };
                    let named = q.jobs.is_empty()
                        || q.jobs.iter().any(|r| r.id == number && (r.index == 0 || r.index == index));
                    if !named {
                        continue;
                    }
                    let run = AcctRun {
                        job: shown,
                        user: record.spec.user.clone(),
                        queue: record.spec.queue.clone().unwrap_or_default(),
                        project: record.project.clone(),
                        command: record.command.clone(),
                        from_host: record.from_host.clone(),
                        cwd: record.cwd.clone(),
                        submitted: t.0,
                        ..AcctRun::default()
                    };
                    live.insert(job.offset(k as u64), run);
                }
            }
            Record::Modified { job, record } => {
                if let Some(l) = live.get_mut(&job) {
                    l.queue = record.spec.queue.clone().unwrap_or_default();
                }
            }
            Record::Started { job, alloc, .. } => {
                if let Some(l) = live.get_mut(&job) {
                    l.started = Some((t.0, alloc));
                }
            }
            Record::Requeued { job, .. } => {
                if let Some(l) = live.get_mut(&job) {
                    l.started = None;
                }
            }
            Record::Finished { job, exit, cpu_time, max_mem_kb, ran_until, .. } => {
                if let Some(l) = live.get_mut(&job) {
                    // When it ended, heard late or not.
                    let ended = ran_until.map_or(t.0, |e| e.min(t.0));
                    let run = AcctRun { ended, exit, cpu_time, max_mem_kb, ..l.clone() };
                    account(&run, &mut answer);
                    l.started = None;
                }
            }
            Record::Removed { job } => {
                if let Some(l) = live.remove(&job) {
                    account(&removed(l, t), &mut answer);
                }
            }
            // A large array's elements removed at once, as each alone.
            Record::RemovedElements { elements, .. } => {
                for job in elements.iter() {
                    if let Some(l) = live.remove(&job) {
                        account(&removed(l, t), &mut answer);
                    }
                }
            }
            _ => {}
        }
    })
    .map_err(|e| format!("bacct: {e}"))?;
    if too_many {
        return Err(format!(
            "bacct -l: more than {MAX_LISTED} jobs; name fewer (-u, -q, -S, -D, -C or job ids), or ask for the summary"
        ));
    }
    Ok(Response::Acct(Box::new(answer)))
}

/// A pending job's run as its removal (`bkill`) ends it: never started,
/// exit 130.
fn removed(run: AcctRun, t: allot_engine::Time) -> AcctRun {
    AcctRun { ended: t.0, exit: 130, started: None, ..run }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past MAX_SCANS running, a `bacct` is refused at once, and the
    /// count is not changed by the refusal.
    #[test]
    fn scans_beyond_the_bound_are_refused() {
        let (root, config) = crate::replay_check::one_host("acct", 1);
        let (wake, _heard) = tokio::sync::mpsc::channel(16);
        let dir = root.join("state");
        std::fs::create_dir_all(&dir).expect("state");
        let state = crate::replay_check::open(&dir, &config, allot_engine::Time(1_000_000), &wake);
        state.acct_scans.store(MAX_SCANS, Ordering::SeqCst);
        let (reply, answer) = tokio::sync::oneshot::channel();
        acct(&state, &crate::replay_check::caller(), AcctQuery::default(), reply);
        let Ok(Answer::Response(Response::Error(e))) = answer.blocking_recv() else { panic!("refused") };
        assert!(e.contains("accountings are being made"), "{e}");
        assert_eq!(state.acct_scans.load(Ordering::SeqCst), MAX_SCANS);
        // With room, it answers (nothing to account yet) and gives it back.
        state.acct_scans.store(0, Ordering::SeqCst);
        let (reply, answer) = tokio::sync::oneshot::channel();
        acct(&state, &crate::replay_check::caller(), AcctQuery::default(), reply);
        assert!(matches!(answer.blocking_recv(), Ok(Answer::Response(Response::Acct(_)))));
        assert_eq!(state.acct_scans.load(Ordering::SeqCst), 0);
        let _ = std::fs::remove_dir_all(&root);
    }
}
