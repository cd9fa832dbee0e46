//! Taking up the state at start: the event log replayed, under the
//! configuration it starts with, through the same [`State::apply`] as
//! live changes; then the configuration allotd was started on, applied as
//! `badmin reconfig` would.

use std::collections::BTreeMap;
use std::path::Path;

use allot_engine::{Engine, Time};
use allot_exec::JobFiles;
use allot_store::{Record, RecordStream, Store};
use anyhow::{Context, anyhow};

use crate::config::{Loaded, Source};
use crate::state::State;
use allot_agent::supervisors::Supervisors;

/// How much later than CLEAN_PERIOD a restart's replay forgets a finished
/// job. The live daemon forgets one at its next tick past CLEAN_PERIOD,
/// and a later record names only jobs it still had; the first tick after
/// the replay forgets the rest.
const REPLAY_CLEAN_LAG: u64 = 86_400;

/// The state in `state_dir`, its log replayed, running on `current` (its
/// `loaded` form) from `t`.
pub(crate) fn open_state(
    state_dir: &Path,
    current: Source,
    current_loaded: Loaded,
    supervisors: Supervisors,
    t: Time,
) -> anyhow::Result<State> {
    let store = Store::open(&state_dir.join("state.db"))?;
    let files = JobFiles::new(state_dir)?;
    // The latest snapshot, and the configuration it was taken on; one this
    // allotd cannot take up is passed over for the whole log.
    let snapshot = store.last_snapshot()?.and_then(|s| match crate::snapshot::read(&s) {
        Ok(saved) => Some((s.seq, saved)),
        Err(why) => {
            eprintln!(
                "allotd: the snapshot of the state at record {} is not taken up ({why}): the whole log is replayed",
                s.seq
            );
            None
        }
    });
    // The log is read as it is replayed, decoded on a thread of its own a
    // batch ahead: what allotd holds of it is a few batches, not the whole
    // history.
    let after = snapshot.as_ref().map_or(0, |(seq, _)| *seq);
    let mut stream = RecordStream::open_range(&state_dir.join("state.db"), after, i64::MAX)?;
    let mut batch = stream.next().transpose()?.unwrap_or_default();
    // The log replays under the configuration it starts with (or the
    // snapshot was taken on).
    let initial = match (&snapshot, batch.first().map(|(_, r)| r)) {
        (Some((_, saved)), _) => saved.source.clone(),
        (None, Some(Record::Reconfigured { config_dir, files })) => {
            Source { dir: config_dir.clone(), files: files.clone() }
        }
        _ => current.clone(),
    };
    let loaded = if initial == current {
        current_loaded
    } else {
        initial.load().map_err(|e| {
            anyhow!("the configuration the event log starts with ({}) no longer loads:\n{e}", initial.describe())
        })?
    };
    let (usage_interval, clean_period, terminate_interval) =
        (loaded.usage_interval, loaded.clean_period, loaded.terminate_interval);
    let queue_warnings = loaded.queue_warnings.clone();
    let rerunnable_queues = loaded.rerunnable_queues.clone();
    let queue_extras = loaded.queue_extras.clone();
    let resize_notify = loaded.resize_notify.clone();
    let cluster = loaded.cluster.clone();
    let cpus_found_for = loaded.cpus_found_for.clone();
    let mut state = State {
        engine: Engine::new(loaded.engine),
        source: initial,
        admins: loaded.admins.into_iter().collect(),
        cluster_name: loaded.cluster_name.clone(),
        conf_dirs: loaded.conf_dirs.clone(),
        book: allot_store::Book::new(cluster.is_some()),
        store,
        files,
        state_dir: state_dir.to_path_buf(),
        host: allot_config::defaults::this_host(),
        supervisors,
        cgroups: allot_exec::cgroup::Cgroups::detect(&allot_exec::cgroup::tag_of(state_dir)),
        pending_kills: BTreeMap::new(),
        passes: Default::default(),
        usage_interval,
        last_usage: None,
        clean_period,
        terminate_interval,
        max_preexec_retry: loaded.max_preexec_retry,
        params: loaded.params.clone(),
        mail_prog: loaded.mail_prog.clone(),
        started_at: allot_exec::now_secs(),
        configured_at: t.0,
        acct_scans: Default::default(),
        terminating: Default::default(),
        warnings: Default::default(),
        queue_warnings,
        rerunnable_queues,
        queue_extras,
        resize_notify,
        notifying: Vec::new(),
        clock: Time(0),
        now: std::time::Instant::now(),
        supervisors_ended: Default::default(),
        last_sweep: None,
        last_exit_look: None,
        decisions: Vec::new(),
        pass_was_full: false,
        unconfirmed: Default::default(),
        deferred: Vec::new(),
        measured: None,
        accounts: Default::default(),
        cluster: None,
        write_failure: None,
        writer: None,
        snapshots: crate::snapshot::Due::with_max_job_num(loaded.max_job_num),
    };
    let hosts: Vec<String> = state.engine.hosts().map(|h| h.0.to_string()).collect();
    state.cluster = cluster.map(|c| crate::cluster::Cluster::new(c, hosts.into_iter()));
    if let Some(c) = &mut state.cluster {
        c.cpus_open = cpus_found_for;
    }
    let from_snapshot = snapshot.as_ref().map(|(seq, _)| *seq);
    match snapshot {
        Some((seq, saved)) => {
            crate::snapshot::restore(&mut state, saved).map_err(|why| {
                anyhow!(
                    "the snapshot of the state at record {} in {} does not read: {why}. Report this with the log; \
                     to start from the whole log instead, delete the snapshot with \
                     sqlite3 {} 'DELETE FROM snapshots'",
                    seq,
                    state_dir.join("state.db").display(),
                    state_dir.join("state.db").display(),
                )
            })?;
        }
        // Hosts with agents take no work until their agent says hello.
        None => state.book.sync_hosts(&mut state.engine, batch.first().map_or(t, |(t0, _)| *t0)),
    }
    let mut replayed = 0u64;
    let mut cleaned = 0u64;
    while !batch.is_empty() {
        for (t, r) in &batch {
            replayed += 1;
            // The jobs that ended long before go as the replay passes
            // them, as the live daemon forgot them, but a day later than
            // it did: what a record names was known when it was written.
            if t.0 >= cleaned + 3600 {
                state.book.clean(t.0.saturating_sub(REPLAY_CLEAN_LAG), state.clean_period);
                cleaned = t.0;
            }
            state.apply(*t, r).map_err(|e| {
                anyhow!(
                    "replaying the event log {}: record {replayed} ({}): {e}. This allotd cannot take up this log; \
                     the log is left as it is: report this with the log, or move it aside to start with no jobs",
                    state_dir.join("state.db").display(),
                    r.kind(),
                )
            })?;
        }
        // Let go of on the reading thread.
        stream.done_with(batch);
        batch = stream.next().transpose()?.unwrap_or_default();
    }
    drop(stream);
    // The last pass's decisions that the log does not have never happened.
    state.undo_unconfirmed();
    match from_snapshot {
        Some(seq) => eprintln!(
            "allotd: the snapshot of the state at record {seq} taken up, {replayed} records after it replayed, {} jobs",
            state.book.jobs.len()
        ),
        None => eprintln!("allotd: {replayed} records replayed, {} jobs", state.book.jobs.len()),
    }
    crate::cluster::started(&mut state);
    match &state.cgroups {
        Some(c) => eprintln!("allotd: jobs run and are measured in cgroup v2, under {}", c.base().display()),
        None => eprintln!(
            "allotd: no writable cgroup v2: jobs are measured from /proc and getrusage, and what a job leaves \
             behind is killed by its session only (a process that makes a session of its own outlives its job)"
        ),
    }
    // Made again at the next job's start.
    if let Some(c) = state.cgroups.as_ref().filter(|_| state.book.running.is_empty()) {
        c.release();
    }
    // The CPUs the agents found stay (the files read again have none).
    let current = current.keeping_found(&state.source);
    // Started on another configuration than the log's last: it applies as
    // `badmin reconfig` would, or allotd does not start.
    if (replayed == 0 && from_snapshot.is_none()) || state.source != current {
        if state.source != current {
            let warnings = state
                .reconfigure(t, current.clone())
                .map_err(|e| anyhow!("cannot run on {} with the jobs in the event log: {e}", current.describe()))?;
            eprint!("{warnings}");
        }
        let record = Record::Reconfigured { config_dir: current.dir.clone(), files: current.files.clone() };
        // Written here, with no snapshot (nor archive) taken: those wait
        // for the writer thread's first write.
        state.store.append(&[(t, record)]).context("cannot write the event log")?;
    }
    Ok(state)
}
