//! The daemon's state: the engine, the event log, and what the commands
//! show of each job. A [`Record`] changes it the same way live and on
//! restart ([`State::apply`]), so there is one code path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use allot_engine::{Engine, Event, JobId, Time};
use allot_exec::JobFiles;
use allot_store::{Record, Store};

use crate::config::Source;

pub use allot_store::BookJob;

/// Why [`State::apply`] refused a record: it then changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The book, or the engine under it, refused it.
    #[error(transparent)]
    Book(#[from] allot_store::ApplyError),
    /// The configuration a record names does not load, or does not fit
    /// the jobs.
    #[error(transparent)]
    Config(#[from] ReconfigureError),
}

/// Why allotd does not take another configuration: it changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum ReconfigureError {
    /// It does not load: errors located in its files.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// It does not fit the jobs: a queue that holds jobs would be gone.
    #[error(transparent)]
    Jobs(#[from] allot_engine::Rejection),
}

impl ApplyError {
    /// What was refused, without the job's id (for its own user).
    pub fn reason(&self) -> String {
        match self {
            ApplyError::Book(e) => e.reason(),
            ApplyError::Config(e) => e.to_string(),
        }
    }

    /// Whether the same request may be taken later, unchanged.
    pub fn retry_later(&self) -> bool {
        matches!(self, ApplyError::Book(allot_store::ApplyError::Later { .. }))
    }
}

pub struct State {
    pub engine: Engine,
    /// The configuration the engine runs on.
    pub source: Source,
    /// `[daemon] admins` of that configuration.
    pub admins: BTreeSet<String>,
    /// The cluster's name, as its configuration gives it.
    pub cluster_name: String,
    /// Where the configuration is, by LSF's names (`Loaded::conf_dirs`).
    pub conf_dirs: Vec<(String, String)>,
    /// The jobs, hosts and queues as the log leaves them (see
    /// `allot_store::apply`).
    pub book: allot_store::Book,
    pub store: Store,
    pub files: JobFiles,
    pub state_dir: PathBuf,
    /// This machine's name, where every job is submitted from.
    pub host: String,
    /// What starts the supervisor that holds each job.
    pub supervisors: allot_agent::supervisors::Supervisors,
    /// Where jobs get their cgroups, when this machine has cgroup v2 and
    /// allotd may write it (detected at start); `None`: /proc and rusage.
    pub cgroups: Option<allot_exec::cgroup::Cgroups>,
    /// Signals for running jobs whose command has not started yet: sent
    /// as soon as their process group exists.
    pub pending_kills: BTreeMap<JobId, nix::sys::signal::Signal>,
    /// How long scheduling passes take, for the metrics.
    pub passes: PassTimes,
    /// Seconds between measurements of running jobs, and the last one.
    pub usage_interval: u64,
    pub last_usage: Option<std::time::Instant>,
    /// CLEAN_PERIOD: finished jobs are forgotten this many seconds after
    /// they end ([`allot_store::Book::clean`]).
    pub clean_period: u64,
    /// JOB_TERMINATE_INTERVAL: seconds between the signals that end a job
    /// at a limit, and the jobs being ended so, each with its next signal
    /// and when (see `running::terminate`).
    pub terminate_interval: u64,
    /// MAX_PREEXEC_RETRY.
    pub max_preexec_retry: u32,
    /// `lsb.params` in force, by name (`bparams -a`).
    pub params: Vec<(String, String)>,
    /// The mail program, if there is one ([`crate::config::Loaded`]).
    pub mail_prog: Option<String>,
    /// When allotd started, and when its configuration was last read
    /// (seconds since the epoch).
    pub started_at: u64,
    pub configured_at: u64,
    /// `bacct` scans running now ([`crate::acct`]).
    pub acct_scans: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// Jobs' warning actions still to send (`-wa`/`-wt`): when (seconds
    /// since the epoch) and the signal's name.
    pub warnings: BTreeMap<JobId, (u64, String)>,
    /// Each queue's JOB_WARNING_ACTION and JOB_ACTION_WARNING_TIME.
    pub queue_warnings: BTreeMap<String, (String, u64)>,
    /// The queues with RERUNNABLE = Y.
    pub rerunnable_queues: BTreeSet<String>,
    /// What each queue's configuration says beyond the engine's: NICE,
    /// JOB_STARTER, DESCRIPTION, HOSTS as written (queues that set none of
    /// them are not here).
    pub queue_extras: BTreeMap<String, crate::config::QueueExtras>,
    /// Each application profile's RESIZE_NOTIFY_CMD, and the resize
    /// notification commands running now ([`crate::resize`]).
    pub resize_notify: BTreeMap<String, String>,
    pub notifying: Vec<crate::resize::Notifying>,
    pub terminating: BTreeMap<JobId, (usize, std::time::Instant)>,
    /// The latest time a record was applied at: nothing is applied before
    /// it, live or on replay.
    pub clock: Time,
    /// The dispatcher's monotonic clock, as of the input or tick it
    /// handles now (set by the dispatcher loop with the time it gives
    /// `apply`): what allotd's timers read (a kill's next signal, the
    /// next measure, an agent's silence, the next probe of a full disk, a
    /// notification command's time-out, the sweeps for ended jobs), so
    /// that the tests that drive the dispatcher move them as they move the
    /// time, and no decision reads the wall clock on its own. The wall
    /// clock is still read to measure (a pass's, a snapshot's time), to
    /// rate what agents log and what a user types into an interactive job,
    /// and by the wait for the state directory's lock at a start.
    pub now: std::time::Instant,
    /// Jobs whose supervisor ended since the last tick: each has an exit
    /// report, or its supervisor died (see `running::orphans`).
    pub supervisors_ended: BTreeSet<JobId>,
    /// When every running job's supervisor was last looked for, and its
    /// exit report.
    pub last_sweep: Option<std::time::Instant>,
    pub last_exit_look: Option<std::time::Instant>,
    /// What the last [`Record::Scheduled`] decided (the live daemon acts
    /// on it; a replay leaves it), and whether that pass considered jobs.
    pub decisions: Vec<allot_engine::Decision>,
    pub pass_was_full: bool,
    /// What the last pass decided that the log has not recorded yet
    /// (`confirm`).
    pub unconfirmed: crate::confirm::Unconfirmed,
    /// Running jobs' measures taken off the dispatcher, to record at the
    /// next tick (see `running::measure`).
    pub measured: Option<Vec<allot_agent::measure::Sample>>,
    /// Applied records waiting for the next commit ([`State::defer`]).
    pub deferred: Vec<(Time, Record)>,
    /// Job owners' accounts, as launches look them up.
    pub accounts: allot_agent::accounts::Accounts,
    /// With `[cluster]`: the hosts as their agents are heard (see
    /// `cluster`); `None`: every job runs on this machine.
    pub cluster: Option<crate::cluster::Cluster>,
    /// Set while the log cannot be written (see `degraded`).
    pub write_failure: Option<crate::degraded::WriteFailure>,
    /// The log's writer thread (see `writer`); `None` writes in place.
    pub writer: Option<crate::writer::Writer>,
    /// When the next snapshot of the state is due ([`crate::snapshot`]).
    pub snapshots: crate::snapshot::Due,
}

/// Scheduling pass times: how many passes, their total and the last.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassTimes {
    pub count: u64,
    pub total: f64,
    pub last: f64,
}

impl PassTimes {
    pub fn record(&mut self, took: std::time::Duration) {
        self.count += 1;
        self.last = took.as_secs_f64();
        self.total += self.last;
    }
}

impl State {
    /// Applies a record to the engine and the job table. Errors mean the
    /// log and the engine disagree (a replay of a different configuration).
    pub fn apply(&mut self, t: Time, record: &Record) -> Result<(), ApplyError> {
        self.confirm(record);
        self.apply_record(t, record)?;
        if matches!(record, Record::Finished { .. } | Record::Removed { .. } | Record::RemovedElements { .. }) {
            crate::snapshot::finished(self);
        }
        self.clock = self.clock.max(t);
        Ok(())
    }

    /// The record through the book ([`allot_store::apply`]), and what is
    /// allotd's own: its configuration read again, a pass decided, and
    /// the timers of the jobs the record changed.
    fn apply_record(&mut self, t: Time, record: &Record) -> Result<(), ApplyError> {
        match record {
            Record::Reconfigured { config_dir, files } => {
                let source = Source { dir: config_dir.clone(), files: files.clone() };
                if source != self.source {
                    self.reconfigure(t, source)?;
                }
            }
            // Live, `full` is what the pass turns out to be (see tick.rs);
            // replayed, it makes the pass the live one was.
            Record::Scheduled { full } => {
                let passes = self.engine.passes();
                self.before_pass(t);
                self.decisions = if *full { self.engine.schedule_full(t) } else { self.engine.schedule(t) };
                self.pass_was_full = self.engine.passes() > passes;
                self.after_pass();
            }
            _ => {
                let effects = allot_store::apply(&mut self.engine, &mut self.book, t, record)?;
                if let Some(job) = effects.run_over {
                    self.pending_kills.remove(&job);
                }
                if let Some((job, start)) = effects.limit_from {
                    self.warn_before_limit(job, start);
                }
            }
        }
        Ok(())
    }

    /// Runs on another configuration from `t`, keeping every job and all
    /// usage, or changes nothing and says why (located configuration
    /// errors, or a queue that holds jobs and would be gone). Closed hosts
    /// and queues that are still there stay closed. Returns the warnings.
    pub fn reconfigure(&mut self, t: Time, source: Source) -> Result<String, ReconfigureError> {
        // The same files read from another directory (the configuration
        // moved, or a restart from another checkout): the same
        // configuration, so nothing the engine holds (reservations, its
        // timers) is rebuilt; only the directory named changes.
        if source.dir.is_some() && self.source.dir.is_some() && source.files == self.source.files {
            self.conf_dirs = source.conf_dirs();
            self.source = source;
            return Ok(String::new());
        }
        let loaded = source.load()?;
        self.engine.apply(t, &Event::Reconfigure(Box::new(loaded.engine)))?;
        let hosts: Vec<String> = self.engine.hosts().map(|h| h.0.to_string()).collect();
        self.cluster = match (self.cluster.take(), loaded.cluster) {
            (_, None) => None,
            (Some(c), Some(settings)) => Some(c.reconfigured(settings, hosts.iter().cloned())),
            (None, Some(settings)) => Some(crate::cluster::Cluster::new(settings, hosts.iter().cloned())),
        };
        if let Some(c) = &mut self.cluster {
            c.cpus_open = loaded.cpus_found_for.clone();
        }
        self.book.reconfigured(&mut self.engine, self.cluster.is_some(), t);
        self.admins = loaded.admins.into_iter().collect();
        self.cluster_name = loaded.cluster_name;
        self.conf_dirs = loaded.conf_dirs;
        self.usage_interval = loaded.usage_interval;
        self.clean_period = loaded.clean_period;
        self.terminate_interval = loaded.terminate_interval;
        self.max_preexec_retry = loaded.max_preexec_retry;
        self.snapshots.max_job_num = loaded.max_job_num;
        self.params = loaded.params;
        self.mail_prog = loaded.mail_prog;
        self.configured_at = t.0;
        self.queue_warnings = loaded.queue_warnings;
        self.rerunnable_queues = loaded.rerunnable_queues;
        self.queue_extras = loaded.queue_extras;
        self.resize_notify = loaded.resize_notify;
        self.source = source;
        Ok(loaded.warnings)
    }

    /// Whether a job lost with its host goes back to pending: `bsub -r`
    /// or `-rn`, else its queue's RERUNNABLE.
    pub fn rerunnable(&self, job: JobId) -> bool {
        let Some(j) = self.book.jobs.get(&job) else { return false };
        j.record
            .extras()
            .rerunnable
            .unwrap_or_else(|| self.engine.job_queue(job).is_some_and(|q| self.rerunnable_queues.contains(q)))
    }

    /// `-wa`/`-wt` (or its queue's JOB_WARNING_ACTION and
    /// JOB_ACTION_WARNING_TIME): the warning of a job started at `start`
    /// goes that long before the run limit in force (the job's, or its
    /// queue's RUNLIMIT).
    fn warn_before_limit(&mut self, job: JobId, start: u64) {
        let Some(j) = self.book.jobs.get(&job) else { return };
        let limit = self.engine.job_run_limit(job);
        let queue = self.engine.job_queue(job).unwrap_or_default();
        let warning = j.record.extras().warning.as_ref().or_else(|| self.queue_warnings.get(queue));
        match (warning, limit) {
            (Some((signal, before)), Some(limit)) => {
                let at = start.saturating_add(limit.saturating_sub(*before));
                self.warnings.insert(job, (at, signal.clone()));
            }
            _ => {
                self.warnings.remove(&job);
            }
        }
    }

    /// How a job runs by its queue (its queue now: `bswitch` may have
    /// moved it): NICE and JOB_STARTER.
    pub fn exec_of(&self, id: JobId, j: &BookJob) -> crate::config::QueueExtras {
        let queue = self.engine.job_queue(id).or(j.record.spec.queue.as_deref());
        queue.and_then(|q| self.queue_extras.get(q)).cloned().unwrap_or_default()
    }
}
