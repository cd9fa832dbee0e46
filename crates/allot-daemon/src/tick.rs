//! The dispatcher's tick: collect the jobs that ended, measure running
//! jobs when due, run a dispatch pass, and start what it decided. Every
//! change goes through [`State::apply`], in the order it is logged, so a
//! restart's replay makes the same state.

use allot_engine::{Decision, JobId, Time};
use allot_store::Record;
use tokio::sync::mpsc;

use crate::running::{enforce_memory, measure, orphans, start_job, start_terminating, terminate, warn};
use crate::serve::Input;
use crate::state::State;
use crate::writer::After;

/// Whether a tick's records were written.
pub(crate) enum Logged {
    Yes,
    /// Not written, for this reason: the state must be taken up again
    /// from the log (see `degraded`).
    Failed(String),
}

/// One tick at `t`. A job that cannot start, or a record the state
/// refuses, is that job's problem, said in the daemon's log, and allotd
/// goes on; a log that cannot be written is said in the answer. While the
/// log cannot be written, nothing is collected or started.
pub(crate) fn tick_once(state: &mut State, wake: &mpsc::Sender<Input>, t: Time) -> Logged {
    match crate::degraded::check(state, wake, t) {
        crate::degraded::Check::Writable => {}
        crate::degraded::Check::Failing => return Logged::Yes,
        crate::degraded::Check::Failed(why) => return Logged::Failed(why),
    }
    state.book.clean(t.0, state.clean_period);
    let mut stamped: Vec<(Time, Record)> = Vec::new();
    // Each end at the time its supervisor saw it (a job that ended while
    // allotd was down is charged until then, not until now), never before
    // what the state has already seen, in time order.
    // Looked for where a supervisor was heard to end, and for every
    // running job once a second (supervisors of an allotd before a
    // restart are not heard): not every job at every tick.
    let heard = std::mem::take(&mut state.supervisors_ended);
    let every = state
        .last_exit_look
        .is_none_or(|at| state.now.saturating_duration_since(at) >= std::time::Duration::from_secs(1));
    let look: Vec<JobId> = if every {
        state.last_exit_look = Some(state.now);
        state.book.running.iter().copied().collect()
    } else {
        heard.iter().copied().filter(|id| state.book.running.contains(id)).collect()
    };
    let mut ends: Vec<(Time, Record)> = crate::cluster::collect(state, t);
    let mut heard = heard;
    for id in look.into_iter().filter(|_| state.cluster.is_none()) {
        if let Some(report) = state.files.read_exit(id.0) {
            let ended = report.ended_at;
            crate::running::ended(state, id, report, ended, t, &mut ends);
            // Reported: no orphan (its files need no second look).
            heard.remove(&id);
        }
    }
    ends.extend(orphans(state, heard).into_iter().map(|r| (t.max(state.clock), r)));
    ends.sort_by_key(|(at, r)| (*at, r.job()));
    let ended: Vec<JobId> = ends.iter().filter_map(|(_, r)| r.job()).collect();
    apply_all(state, ends, &mut stamped);
    let mut measured = Vec::new();
    // Measures and the pass make records of now: none while ends from
    // before a restart may still come (see `cluster::recovering`).
    let recovering = crate::cluster::recovering(state);
    if !recovering {
        measure(state, wake, &mut measured);
    }
    apply_all(state, measured.into_iter().map(|r| (t, r)).collect(), &mut stamped);
    // Resize notification commands that ended.
    let resized = crate::resize::poll(state);
    apply_all(state, resized.into_iter().map(|r| (t, r)).collect(), &mut stamped);
    let mut limits = Vec::new();
    enforce_memory(state, &mut limits);
    apply_all(state, limits.into_iter().map(|r| (t, r)).collect(), &mut stamped);
    // Kills that waited for their job's command to start.
    let waiting: Vec<(JobId, nix::sys::signal::Signal)> =
        state.pending_kills.iter().map(|(&id, &sig)| (id, sig)).collect();
    for (id, sig) in waiting {
        if !matches!(crate::running::send_signal(state, id, sig), Ok(false)) {
            state.pending_kills.remove(&id);
        }
    }
    // The pass, as a replay runs it, recorded if it did anything: with
    // whether it considered the jobs, which the replay's pass then does.
    let pass = std::time::Instant::now();
    match recovering {
        // No pass, and nothing of the last one replayed (its decisions
        // were the log's, and are done).
        true => state.decisions.clear(),
        false => match state.apply(t, &Record::Scheduled { full: false }) {
            Ok(()) if state.pass_was_full || !state.decisions.is_empty() => {
                stamped.push((t, Record::Scheduled { full: state.pass_was_full }));
            }
            Ok(()) => {}
            Err(e) => eprintln!("allotd: the dispatch pass at {t}: {e}"),
        },
    }
    state.passes.record(pass.elapsed());
    if let Some(c) = state.cluster.as_mut().filter(|_| !state.decisions.is_empty()) {
        c.decided_us = Some(allot_agent::simulate::now_us());
    }
    let mut starts = Vec::new();
    for d in std::mem::take(&mut state.decisions) {
        match d {
            Decision::Start { job, alloc } => {
                let alloc: Vec<(String, u32)> =
                    alloc.iter().map(|&(h, n)| (state.engine.host_name(h).to_string(), n.0)).collect();
                starts.push((job, alloc.clone()));
                let backfill_limit = state.engine.backfill_limit(job);
                apply_all(state, vec![(t, Record::Started { job, alloc, backfill_limit })], &mut stamped);
            }
            Decision::Kill { job, reason } => {
                let term = match reason {
                    allot_engine::KillReason::RunLimit => allot_store::Term::RunLimit,
                    allot_engine::KillReason::TermTime => allot_store::Term::Deadline,
                };
                let mut killed = Vec::new();
                start_terminating(state, job, term, &mut killed);
                apply_all(state, killed.into_iter().map(|r| (t, r)).collect(), &mut stamped);
            }
            Decision::Grow { job, alloc } => {
                let alloc: Vec<(String, u32)> =
                    alloc.iter().map(|&(h, n)| (state.engine.host_name(h).to_string(), n.0)).collect();
                apply_all(state, vec![(t, Record::Grown { job, alloc: alloc.clone() })], &mut stamped);
                crate::resize::notify(state, job, crate::resize::Change::Grow(alloc), None);
            }
            // LSF's default SUSPEND and RESUME actions for a preempted
            // job: SIGSTOP and SIGCONT. A job its user or an
            // administrator stopped (USUSP) stays as they left it.
            Decision::Suspend { job, by } => {
                if state.book.jobs.get(&job).is_some_and(|j| j.status == allot_proto::JobStatus::Run) {
                    system_signal(state, job, nix::sys::signal::Signal::SIGSTOP);
                }
                apply_all(state, vec![(t, Record::Preempted { job, by })], &mut stamped);
            }
            Decision::Resume { job } => {
                if state.book.jobs.get(&job).is_some_and(|j| j.status == allot_proto::JobStatus::Ssusp) {
                    system_signal(state, job, nix::sys::signal::Signal::SIGCONT);
                }
                apply_all(state, vec![(t, Record::Resumed { job })], &mut stamped);
            }
        }
    }
    terminate(state);
    warn(state, t);
    // One commit for the ends and the starts they made room for. The
    // starts are durable before any job runs (no job runs twice), and the
    // ends before their jobs' files go (a restart never mistakes an ended
    // job for one that never started). A pass that decided nothing to act
    // on waits for the next commit.
    if stamped.iter().all(|(_, r)| matches!(r, Record::Scheduled { .. })) {
        state.defer(stamped);
        return Logged::Yes;
    }
    match crate::writer::write(state, stamped, After::Tick { ended, starts, t }, wake) {
        None => Logged::Yes,
        Some(why) => Logged::Failed(why),
    }
}

/// Once a tick's records are durable: the ended jobs' files go, and the
/// started jobs are launched (one that cannot be ends, recorded).
pub(crate) fn after_written(
    state: &mut State,
    ended: Vec<JobId>,
    starts: Vec<(JobId, Vec<(String, u32)>)>,
    t: Time,
    wake: &mpsc::Sender<Input>,
) -> Option<String> {
    let idle = !ended.is_empty() && state.book.running.is_empty() && starts.is_empty();
    crate::cluster::acknowledge(state, &ended);
    for id in ended {
        state.files.clean_alone(id.0);
        allot_agent::tasks::remove_hostfile(&state.state_dir, id.0);
    }
    if let Some(c) = state.cgroups.as_ref().filter(|_| idle) {
        c.release();
    }
    let mut unrun = Vec::new();
    let t = t.max(state.clock);
    for (job, alloc) in starts {
        if let Some(end) = start_job(state, job, &alloc, wake) {
            apply_all(state, vec![(t, end)], &mut unrun);
        }
    }
    if unrun.is_empty() {
        return None;
    }
    crate::writer::write(state, unrun, After::Nothing, wake)
}

/// Signals a job for the system (preemption); a job whose command has
/// not started yet gets it when it does.
fn system_signal(state: &mut State, job: JobId, sig: nix::sys::signal::Signal) {
    match crate::running::send_signal(state, job, sig) {
        Ok(true) => {}
        // Not over a kill waiting for the command.
        Ok(false) => {
            let waiting = state.pending_kills.get(&job).copied();
            if waiting
                .is_none_or(|w| matches!(w, nix::sys::signal::Signal::SIGSTOP | nix::sys::signal::Signal::SIGCONT))
            {
                state.pending_kills.insert(job, sig);
            }
        }
        Err(e) => eprintln!("allotd: job {job}: {sig}: {e}"),
    }
}

/// Applies each record at its time and keeps those applied, in order, for
/// the log; one the state refuses is said and left out.
fn apply_all(state: &mut State, records: Vec<(Time, Record)>, kept: &mut Vec<(Time, Record)>) {
    for (at, record) in records {
        match state.apply(at, &record) {
            Ok(()) => kept.push((at, record)),
            Err(e) => eprintln!("allotd: {} not applied, not logged: {e}", record.kind()),
        }
    }
}
