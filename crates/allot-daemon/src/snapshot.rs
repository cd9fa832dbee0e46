//! Snapshots of allotd's state ([`allot_store::Snapshot`]): the engine and
//! what the daemon keeps that records build (the job table, arrays, job
//! numbers, closed hosts and queues, the hosts' reach as logged, the last
//! pass's decisions), copied on the dispatcher and written out, after the
//! records they include, on the log's writer thread ([`write_out`]).
//! A restart takes up the latest and replays only the records after it,
//! so its time follows the state's size, not the history's.
//!
//! What a snapshot leaves out is what a replay does not build either: the
//! configuration's derived settings (loaded again from the snapshot's
//! configuration, as a replay loads its log's), and what lives only while
//! allotd runs (connections, supervisors, timers of signals being sent).
//! The `-w` index of names is built again from the jobs.
//!
//! When: [`EVERY_RECORDS`] records after the last one, or, if the last one
//! held more jobs than that, as many records as it held jobs (a snapshot's
//! cost grows with the jobs, and is so spread over as many records); and
//! when allotd stops. A restart after a kill -9 so replays at most that
//! many records after the snapshot.

use std::collections::{BTreeMap, BTreeSet};

use allot_engine::{Decision, Engine, JobId, Time};
use allot_store::{Env, Reach, Snapshot};
use serde::{Deserialize, Serialize};

use crate::config::Source;
use crate::confirm::Unconfirmed;
use crate::state::{BookJob, State};
use allot_store::Numbers;

/// How a snapshot's body is written: JSON of [`Saved`]. A release that
/// changes what it holds takes a new number; a restart on a snapshot of
/// another number replays the whole log instead. Format 2: the engine
/// holds the resource allocation limits and what they count.
pub(crate) const FORMAT: i64 = 2;

/// Records after which a snapshot is taken, at the least.
pub(crate) const EVERY_RECORDS: u64 = 20_000;

/// A snapshot: the state's parts it keeps, as taken (a copy, written out
/// on the log's writer thread, [`encode`]) and as read.
#[derive(Serialize, Deserialize)]
pub(crate) struct Saved {
    engine: Engine,
    pub(crate) source: Source,
    configured_at: u64,
    closed_queues: BTreeSet<String>,
    closed_hosts: BTreeSet<String>,
    /// The jobs' environments, once each; a job names its by position.
    envs: Vec<Env>,
    jobs: Vec<(JobId, u32, Box<BookJob>)>,
    arrays: BTreeMap<JobId, Vec<u32>>,
    /// The arrays' elements not made yet, each template's environment by
    /// position as a job's.
    #[serde(default)]
    tails: Vec<(JobId, u32, allot_store::Tail)>,
    numbers: Numbers,
    running: BTreeSet<JobId>,
    pending_kills: Vec<(JobId, i32)>,
    warnings: BTreeMap<JobId, (u64, String)>,
    finished: BTreeSet<(u64, JobId)>,
    clock: Time,
    decisions: Vec<Decision>,
    pass_was_full: bool,
    unconfirmed: Unconfirmed,
    requests: BTreeMap<String, JobId>,
    reach: Vec<(String, Option<Reach>)>,
    /// How long the dispatcher took to copy it, ms.
    #[serde(skip)]
    copied_in: f64,
    /// Whether the log is archived once it is written.
    #[serde(skip)]
    pub(crate) archive: bool,
}

/// When the next snapshot is due: records counted since the last one,
/// and how many make it due; finished jobs counted since the log was last
/// archived, and how many (MAX_JOB_NUM, 0: never) make a snapshot due
/// after which it is archived again (`allot_store`'s `archive`). The
/// count starts again at a restart: the log is archived after at least
/// MAX_JOB_NUM jobs.
#[derive(Debug)]
pub struct Due {
    since: u64,
    at: u64,
    finished: u64,
    pub(crate) max_job_num: u64,
}

impl Due {
    pub(crate) fn with_max_job_num(max_job_num: u64) -> Due {
        Due { since: 0, at: EVERY_RECORDS, finished: 0, max_job_num }
    }
}

/// Counts a job finished (its record applied).
pub(crate) fn finished(state: &mut State) {
    state.snapshots.finished += 1;
}

/// Whether the log is due to be archived after the next snapshot.
fn archive_due(d: &Due) -> bool {
    d.max_job_num > 0 && d.finished >= d.max_job_num
}

/// Counts `n` records handed to the log; whether a snapshot is due with
/// them.
pub(crate) fn due(state: &mut State, n: usize) -> bool {
    let d = &mut state.snapshots;
    d.since = d.since.saturating_add(n as u64);
    d.since >= d.at || archive_due(d)
}

/// The next write takes a snapshot (allotd stops).
pub(crate) fn force(state: &mut State) {
    state.snapshots.at = 0;
}

/// Whether the next write takes a snapshot though it writes no record.
pub(crate) fn forced(state: &State) -> bool {
    state.snapshots.at == 0
}

/// The state's snapshot, with every record applied so far: a copy of its
/// parts, which the log's writer writes out ([`encode`]) so that the
/// dispatcher spends only the copy's time on it.
pub(crate) fn take(state: &mut State) -> Box<Saved> {
    let archive = archive_due(&state.snapshots);
    let finished = if archive { 0 } else { state.snapshots.finished };
    // The next after as many records as this one holds jobs, at least:
    // its cost, which grows with the jobs, spread over them.
    let at = EVERY_RECORDS.max(state.book.jobs.len() as u64);
    state.snapshots = Due { since: 0, at, finished, max_job_num: state.snapshots.max_job_num };
    let began = std::time::Instant::now();
    let reach = state.book.reaches().map(|(h, r)| (h.to_string(), Some(r))).collect();
    let mut saved = Box::new(Saved {
        engine: state.engine.clone(),
        source: state.source.clone(),
        configured_at: state.configured_at,
        closed_queues: state.book.closed_queues.clone(),
        closed_hosts: state.book.closed_hosts.clone(),
        envs: Vec::new(),
        jobs: state.book.jobs.iter().map(|(&id, j)| (id, 0, j.clone())).collect(),
        arrays: state.book.arrays.clone(),
        tails: state.book.tails.iter().map(|(&id, t)| (id, 0, t.clone())).collect(),
        numbers: state.book.numbers.clone(),
        running: state.book.running.clone(),
        pending_kills: state.pending_kills.iter().map(|(&id, &s)| (id, s as i32)).collect(),
        warnings: state.warnings.clone(),
        finished: state.book.finished.clone(),
        clock: state.clock,
        decisions: state.decisions.clone(),
        pass_was_full: state.pass_was_full,
        unconfirmed: state.unconfirmed.clone(),
        requests: state.book.requests.clone(),
        reach,
        copied_in: 0.0,
        archive,
    });
    saved.copied_in = began.elapsed().as_secs_f64() * 1000.0;
    saved
}

/// A snapshot taken, written out; `None` (said on stderr) if it cannot be,
/// and the log goes on without.
pub(crate) fn encode(mut saved: Box<Saved>) -> Option<Snapshot> {
    let began = std::time::Instant::now();
    // Each job's environment is shared with its like (`Book::envs`):
    // written once, by position.
    let none: Env = Env::from(Vec::new());
    let mut position: BTreeMap<usize, u32> = BTreeMap::new();
    let mut envs = Vec::new();
    let Saved { jobs, tails, .. } = &mut *saved;
    // A tail's removed batches show its template's environment.
    for (_, _, t) in tails.iter_mut() {
        for (_, j) in &mut t.removed {
            j.record.env = none.clone();
        }
    }
    let templates = tails.iter_mut().map(|(_, at, t)| (at, &mut t.template));
    for (at, j) in jobs.iter_mut().map(|(_, at, j)| (at, &mut **j)).chain(templates) {
        let env = std::mem::replace(&mut j.record.env, none.clone());
        *at = *position.entry(std::sync::Arc::as_ptr(&env) as *const () as usize).or_insert_with(|| {
            envs.push(env);
            (envs.len() - 1) as u32
        });
    }
    saved.envs = envs;
    match serde_json::to_vec(&*saved) {
        Ok(body) => {
            let took = began.elapsed().as_secs_f64() * 1000.0;
            let mib = body.len() as f64 / f64::from(1 << 20);
            eprintln!(
                "allotd: a snapshot of the state ({} jobs, {mib:.1} MiB): copied in {:.0} ms, written out in {took:.0} ms",
                saved.jobs.len(),
                saved.copied_in
            );
            Some(Snapshot { seq: 0, time: saved.clock, format: FORMAT, body })
        }
        Err(e) => {
            eprintln!("allotd: no snapshot of the state taken: {e}");
            None
        }
    }
}

/// Writes out a snapshot taken at record `seq` (once that record is
/// committed), and, if it was due to be archived (`archive`), starts
/// archiving up to it (`archiving`; kept in the log, so that a restart goes
/// on with it). Said on stderr if it cannot: the records are durable all
/// the same, and the next snapshot is tried as due.
pub(crate) fn write_out(
    store: &mut allot_store::Store,
    snapshot: Option<(i64, Box<Saved>)>,
    archive: bool,
    archiving: &mut Option<i64>,
) {
    let Some((seq, saved)) = snapshot else { return };
    let Some(s) = encode(saved) else { return };
    if let Err(e) = store.write_snapshot(seq, &s) {
        eprintln!(
            "allotd: a snapshot of the state was not written ({}): the records with it were, and a restart \
             replays them after the snapshot before",
            e.why_not_written()
        );
        return;
    }
    if archive {
        match store.set_archive_target(seq) {
            Ok(()) => *archiving = Some(seq),
            Err(e) => eprintln!("allotd: the event log was not archived: {e}"),
        }
    }
}

/// A step of the log's archiving, after a write (`Store::archive_step`):
/// `None` once nothing is left to archive. Said on stderr; a failure
/// archives nothing more and loses nothing, and the next archiving tries
/// again.
pub(crate) fn archive_step(target: &mut Option<i64>, store: &mut allot_store::Store, log: &std::path::Path) {
    let Some(upto) = *target else { return };
    match store.archive_step(upto, log) {
        Ok((made, done)) => {
            if let Some(path) = made {
                eprintln!(
                    "allotd: the event log's first records, up to {upto} at most, archived in {}",
                    path.display()
                );
            }
            if done {
                *target = None;
            }
        }
        Err(e) => {
            eprintln!("allotd: the event log was not archived: {e}");
            *target = None;
        }
    }
}

/// Why a snapshot is not taken up (allotd then replays the whole log).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SnapshotError {
    #[error("it is written in format {0}, this allotd reads {FORMAT}")]
    Format(i64),
    #[error("{0}")]
    Unreadable(#[from] serde_json::Error),
    #[error("its configuration is not the one it names")]
    OtherConfiguration,
    /// A job, or an array's elements not made yet, name an environment
    /// the snapshot does not hold.
    #[error("{what} {job}: no environment {env}")]
    NoEnvironment { what: &'static str, job: JobId, env: u32 },
    #[error("job {job}: signal {signal}: {why}")]
    BadSignal { job: JobId, signal: i32, why: nix::Error },
}

/// A snapshot read, to take up once a state is made on its configuration
/// (`source`); `Err` if this allotd cannot read it.
pub(crate) fn read(snapshot: &Snapshot) -> Result<Saved, SnapshotError> {
    if snapshot.format != FORMAT {
        return Err(SnapshotError::Format(snapshot.format));
    }
    Ok(serde_json::from_slice(&snapshot.body)?)
}

/// Takes up a snapshot into `state`, made on the snapshot's configuration
/// with no jobs.
pub(crate) fn restore(state: &mut State, saved: Saved) -> Result<(), SnapshotError> {
    if saved.source != state.source {
        return Err(SnapshotError::OtherConfiguration);
    }
    state.engine = saved.engine.restored();
    state.configured_at = saved.configured_at;
    state.book.closed_queues = saved.closed_queues;
    state.book.closed_hosts = saved.closed_hosts;
    let shared: Vec<Env> = saved.envs.iter().map(|e| state.book.intern(e)).collect();
    for (id, env, mut job) in saved.jobs {
        let missing = SnapshotError::NoEnvironment { what: "job", job: id, env };
        job.record.env = shared.get(env as usize).cloned().ok_or(missing)?;
        state.book.names.insert(&job.record.spec.user, &job.record.name, id);
        state.book.jobs.insert(id, job);
    }
    state.book.arrays = saved.arrays;
    for (id, env, mut tail) in saved.tails {
        let shared = shared.get(env as usize).cloned();
        tail.template.record.env = shared.ok_or(SnapshotError::NoEnvironment { what: "job array", job: id, env })?;
        for (_, j) in &mut tail.removed {
            j.record.env = tail.template.record.env.clone();
        }
        state.book.tails.insert(id, tail);
    }
    state.book.numbers = saved.numbers;
    state.book.running = saved.running;
    for (id, s) in saved.pending_kills {
        let signal = nix::sys::signal::Signal::try_from(s).map_err(|why| SnapshotError::BadSignal {
            job: id,
            signal: s,
            why,
        })?;
        state.pending_kills.insert(id, signal);
    }
    state.warnings = saved.warnings;
    state.book.finished = saved.finished;
    state.clock = saved.clock;
    state.decisions = saved.decisions;
    state.pass_was_full = saved.pass_was_full;
    state.unconfirmed = saved.unconfirmed;
    state.book.requests = saved.requests;
    for (host, reach) in saved.reach {
        if let Some(reach) = reach.filter(|_| state.engine.host_index(&host).is_some()) {
            state.book.restore_reach(host, reach);
        }
    }
    Ok(())
}
