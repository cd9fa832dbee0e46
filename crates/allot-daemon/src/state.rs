//! The daemon's state: the engine, the event log, and what the commands
//! show of each job. A [`Record`] changes it the same way live and on
//! restart ([`State::apply`]), so there is one code path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use allot_engine::{Engine, Event, HostIdx, JobId, Slots, Time};
use allot_exec::JobFiles;
use allot_proto::JobStatus;
use allot_store::{Env, JobRecord, Record, Store};

use crate::config::Source;

pub use crate::daemon_job::DaemonJob;

/// Why [`State::apply`] refused a record: it then changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The engine, or the job table, refused a change to one job.
    #[error("job {job}: {reason}")]
    Job { job: JobId, reason: String },
    /// A submission refused for now: a pending threshold is reached
    /// (`allot_engine::pend_limits`); the same may be taken later.
    #[error("job {job}: {reason}")]
    Later { job: JobId, reason: String },
    /// The configuration a record names does not load, or does not fit
    /// the jobs.
    #[error(transparent)]
    Config(#[from] ReconfigureError),
    /// The engine refused a change to the job groups.
    #[error("{0}")]
    Group(allot_engine::Rejection),
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
            ApplyError::Job { reason, .. } | ApplyError::Later { reason, .. } => reason.clone(),
            ApplyError::Config(e) => e.to_string(),
            ApplyError::Group(e) => e.to_string(),
        }
    }

    /// Whether the same request may be taken later, unchanged.
    pub fn retry_later(&self) -> bool {
        matches!(self, ApplyError::Later { .. })
    }
}

fn refused(job: JobId, reason: impl std::fmt::Display) -> ApplyError {
    ApplyError::Job { job, reason: reason.to_string() }
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
    /// Hosts and queues as the log leaves them: closed by an
    /// administrator, agents heard (the history replay keeps the same).
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
    pub jobs: BTreeMap<JobId, DaemonJob>,
    /// Job arrays by id (their first element's): their indices in
    /// ascending order, element `k` having id `id + k`.
    pub arrays: BTreeMap<JobId, Vec<u32>>,
    /// The elements of large arrays not made yet ([`crate::array_tail`]),
    /// by array.
    pub tails: BTreeMap<JobId, crate::array_tail::Tail>,
    /// The job numbers given, to the engine's ids.
    pub numbers: crate::numbers::Numbers,
    /// The jobs running now, so a pass need not walk every job ever run.
    pub running: BTreeSet<JobId>,
    /// Signals for running jobs whose command has not started yet: sent
    /// as soon as their process group exists.
    pub pending_kills: BTreeMap<JobId, nix::sys::signal::Signal>,
    /// The distinct environments of the jobs, one copy each: a backlog of
    /// 100,000 jobs holds a handful.
    pub envs: BTreeSet<Env>,
    /// How long scheduling passes take, for the metrics.
    pub passes: PassTimes,
    /// Seconds between measurements of running jobs, and the last one.
    pub usage_interval: u64,
    pub last_usage: Option<std::time::Instant>,
    /// CLEAN_PERIOD: finished jobs are forgotten this many seconds after
    /// they end ([`State::clean`]).
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
    /// Finished jobs by end time, for [`State::clean`]; an entry whose job
    /// ran again since is passed over.
    pub finished: BTreeSet<(u64, JobId)>,
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
    /// Submissions' request ids and the jobs they made, for as long as the
    /// jobs are known (see [`State::clean`]).
    pub requests: BTreeMap<String, JobId>,
    /// The job table's jobs by owner and name, for `-w`'s names.
    pub names: crate::names::Names,
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

    fn apply_record(&mut self, t: Time, record: &Record) -> Result<(), ApplyError> {
        let whole = matches!(
            record,
            Record::Submitted { .. } | Record::RemovedElements { .. } | Record::SuspendedElements { .. }
        );
        if let Some(job) = record.job().filter(|_| !whole) {
            self.make(job);
        }
        match record {
            Record::Submitted { job, number, record, .. } => {
                let indices = match &record.array {
                    Some(spec) => {
                        let ix = allot_config::array::indices_of(spec)
                            .map_err(|e| refused(*job, format!("[{spec}]: {}", e.message)))?;
                        let size = record.spec.array.map_or(0, |a| a.size);
                        if ix.len() != size as usize {
                            return Err(refused(*job, format!("[{spec}] has {} indices, its spec {size}", ix.len())));
                        }
                        Some(ix)
                    }
                    None => None,
                };
                let number = number.unwrap_or(job.0);
                if number < self.numbers.next() {
                    return Err(refused(*job, format!("job number {number} was given before")));
                }
                let submitted = self.engine.apply(t, &Event::Submit(record.spec.clone()));
                let id = submitted.map_err(|e| match e.retry_later() {
                    true => ApplyError::Later { job: *job, reason: e.to_string() },
                    false => refused(*job, e),
                })?;
                if let Some(id) = id.filter(|id| id != job) {
                    return Err(refused(*job, format!("replayed as job {id}")));
                }
                self.register(*job, number, record, t, indices);
            }
            Record::ArrayLimit { job, limit } => {
                self.engine
                    .apply(t, &Event::ArrayLimit { array: *job, limit: *limit })
                    .map_err(|e| refused(*job, e))?;
            }
            Record::JobGroup(change) => {
                self.engine.apply(t, &Event::JobGroup(change.clone())).map_err(ApplyError::Group)?;
            }
            Record::Started { job, alloc, .. } => {
                let idx: Option<Vec<(HostIdx, Slots)>> =
                    alloc.iter().map(|(h, n)| self.engine.host_index(h).map(|i| (i, Slots(*n)))).collect();
                let idx = idx.ok_or_else(|| refused(*job, "a host of its allocation is not configured"))?;
                if !self.engine.is_running(*job) {
                    self.engine.apply(t, &Event::Started { job: *job, alloc: idx }).map_err(|e| refused(*job, e))?;
                }
                self.mark_running(*job, t, alloc);
            }
            Record::Usage { job, cpu_time, mem_kb } => {
                let Some(j) = self.jobs.get_mut(job) else { return Ok(()) };
                if !matches!(j.status, JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp) {
                    return Ok(());
                }
                let charged = j.usage.map_or(0.0, |u| u.0);
                let (events, charged) = allot_store::effects::usage_events(*job, charged, *cpu_time, *mem_kb);
                for ev in &events {
                    let _ = self.engine.apply(t, ev);
                }
                j.usage = Some((charged, *mem_kb));
                j.max_mem_kb = j.max_mem_kb.max(*mem_kb);
            }
            Record::Finished { job, exit, cpu_time, max_mem_kb, reason, pre_exec, ran_until } => {
                self.running.remove(job);
                self.pending_kills.remove(job);
                let Some(j) = self.jobs.get_mut(job) else { return Ok(()) };
                j.max_mem_kb = j.max_mem_kb.max(*max_mem_kb);
                j.usage = None;
                let end = allot_store::effects::RunEnd {
                    exit: *exit,
                    cpu_time: *cpu_time,
                    killed: j.killed,
                    unrun: reason.is_some(),
                    requeue: j.requeue.take(),
                    pre_exec: *pre_exec,
                    unheard: ran_until.map_or(0, |e| t.0.saturating_sub(e)),
                };
                j.pre_exec_failures += u32::from(pre_exec.is_some());
                let ends = allot_store::effects::end_event(&self.engine, *job, end, t);
                for event in ends.events() {
                    let _ = self.engine.apply(t, event);
                }
                if let Some(hold) = ends.requeued {
                    j.back_to_pending(hold);
                    // Why it is pending again, for `bjobs -l`.
                    if pre_exec.is_some() {
                        j.exit_reason = reason.as_deref().map(Box::from);
                    }
                    return Ok(());
                }
                j.status = if *exit == 0 { JobStatus::Done } else { JobStatus::Exit };
                // When it ended, heard late or not.
                j.end_time = Some(ran_until.map_or(t.0, |e| e.min(t.0)));
                j.exit = Some(*exit);
                j.cpu_time = Some(*cpu_time);
                j.exit_reason = reason.as_deref().map(Box::from);
                self.finished.insert((t.0, *job));
            }
            Record::Removed { job } => {
                let _ = self.engine.apply(t, &allot_store::effects::removed_event(*job));
                if let Some(j) = self.jobs.get_mut(job) {
                    j.status = JobStatus::Exit;
                    j.end_time = Some(t.0);
                    j.exit = Some(130);
                    self.finished.insert((t.0, *job));
                }
            }
            Record::RemovedElements { array, elements } => self.remove_elements(t, *array, elements)?,
            Record::SuspendedElements { array, elements, stop, .. } => {
                self.hold_elements(t, *array, elements, *stop)?;
            }
            Record::HostChanged { .. } | Record::QueueChanged { .. } => {
                self.book.apply(&mut self.engine, t, record);
            }
            Record::HostReach { host, .. } => {
                self.book.apply(&mut self.engine, t, record);
                crate::unknown::host_changed(self, t, host);
            }
            Record::Reconfigured { config_dir, files } => {
                let source = Source { dir: config_dir.clone(), files: files.clone() };
                if source != self.source {
                    self.reconfigure(t, source)?;
                }
            }
            Record::Suspended { job, stop, .. } => {
                let Some(j) = self.jobs.get_mut(job) else { return Ok(()) };
                j.status = match (j.status, stop) {
                    (JobStatus::Pend | JobStatus::Psusp, true) => JobStatus::Psusp,
                    (JobStatus::Pend | JobStatus::Psusp, false) => JobStatus::Pend,
                    (JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp, true) => JobStatus::Ususp,
                    (JobStatus::Run | JobStatus::Ususp, false) => JobStatus::Run,
                    (finished, _) => finished,
                };
                if matches!(j.status, JobStatus::Pend | JobStatus::Psusp) {
                    let ev = if *stop { Event::Hold(*job) } else { Event::Release(*job) };
                    self.engine.apply(t, &ev).map_err(|e| refused(*job, e))?;
                }
            }
            // The pass suspended or resumed the job (a replay's pass did
            // again); a log whose pass did not is carried out here.
            Record::Preempted { job, by } => {
                if self.engine.preempted_by(*job).is_none() {
                    self.engine.apply(t, &Event::Preempted { job: *job, by: *by }).map_err(|e| refused(*job, e))?;
                }
                if let Some(j) = self.jobs.get_mut(job).filter(|j| j.status == JobStatus::Run) {
                    j.status = JobStatus::Ssusp;
                }
            }
            Record::Resumed { job } => {
                if self.engine.preempted_by(*job).is_some() {
                    self.engine.apply(t, &Event::Resumed(*job)).map_err(|e| refused(*job, e))?;
                }
                if let Some(j) = self.jobs.get_mut(job).filter(|j| j.status == JobStatus::Ssusp) {
                    j.status = JobStatus::Run;
                }
            }
            Record::Grown { job, .. } => self.refresh_alloc(*job),
            Record::GrowFailed { job, alloc } => {
                let alloc = self.host_slots(*job, alloc)?;
                self.engine.apply(t, &Event::GrowFailed { job: *job, alloc }).map_err(|e| refused(*job, e))?;
                self.refresh_alloc(*job);
            }
            Record::Shrunk { job, release, cancel } => {
                let names: Vec<(String, u32)> = release.iter().map(|(h, n)| (h.clone(), n.unwrap_or(0))).collect();
                let hosts = self.host_slots(*job, &names)?;
                let release = hosts.iter().zip(release).map(|(&(h, _), (_, n))| (h, n.map(Slots))).collect();
                let ev = Event::Shrink { job: *job, release, cancel: *cancel };
                self.engine.apply(t, &ev).map_err(|e| refused(*job, e))?;
                self.refresh_alloc(*job);
            }
            Record::ResizeCancelled { job } => {
                self.engine.apply(t, &Event::ResizeCancel(*job)).map_err(|e| refused(*job, e))?;
            }
            Record::Modified { job, record } => {
                self.engine
                    .apply(t, &allot_store::effects::modified_event(&self.engine, *job, &record.spec))
                    .map_err(|e| refused(*job, e))?;
                let env = self.intern(&record.env);
                if let Some(j) = self.jobs.get_mut(job) {
                    self.names.remove(&j.record.spec.user, &j.record.name, *job);
                    j.record = JobRecord { env, ..(**record).clone() };
                    self.names.insert(&j.record.spec.user, &j.record.name, *job);
                }
                // A running job's warning goes before its new run limit.
                if let Some(start) =
                    self.jobs.get(job).filter(|_| self.running.contains(job)).and_then(|j| j.start_time)
                {
                    self.warn_before_limit(*job, start);
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
            Record::Killed { job, term } => {
                if let Some(j) = self
                    .jobs
                    .get_mut(job)
                    .filter(|j| matches!(j.status, JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp))
                {
                    j.killed = Some(*term);
                }
            }
            Record::Requeued { job, hold } => {
                let Some(j) = self.jobs.get_mut(job) else { return Ok(()) };
                if j.status.unfinished() {
                    j.requeue = Some(*hold);
                } else {
                    let ev = Event::Resubmit { job: *job, spec: j.record.spec.clone(), hold: *hold };
                    self.engine.apply(t, &ev).map_err(|e| refused(*job, e))?;
                    j.back_to_pending(*hold);
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
        let Some(j) = self.jobs.get(&job) else { return false };
        j.record
            .extras()
            .rerunnable
            .unwrap_or_else(|| self.engine.job_queue(job).is_some_and(|q| self.rerunnable_queues.contains(q)))
    }

    /// Whether a running job's hosts include one whose agent allotd cannot
    /// hear (`unreach`): LSF shows such a job UNKWN.
    pub(crate) fn unheard(&self, alloc: &[(String, u32)]) -> bool {
        self.book.agents && alloc.iter().any(|(h, _)| self.book.reach(h) == allot_store::Reach::Unreach)
    }

    /// A job the engine started, as the commands see it.
    pub fn mark_running(&mut self, job: JobId, t: Time, alloc: &[(String, u32)]) {
        if let Some(j) = self.jobs.get_mut(&job) {
            j.status = JobStatus::Run;
            j.attempt += 1;
            j.start_time = Some(t.0);
            j.alloc = alloc.to_vec();
            // A reason a try before this one gave is no longer why.
            j.exit_reason = None;
            self.running.insert(job);
        }
        self.warn_before_limit(job, t.0);
    }

    /// `-wa`/`-wt` (or its queue's JOB_WARNING_ACTION and
    /// JOB_ACTION_WARNING_TIME): the warning of a job started at `start`
    /// goes that long before the run limit in force (the job's, or its
    /// queue's RUNLIMIT).
    fn warn_before_limit(&mut self, job: JobId, start: u64) {
        let Some(j) = self.jobs.get(&job) else { return };
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

    /// A submitted job, or each element of a job array (its `indices`,
    /// one per element the engine made), joins the job table.
    pub fn register(&mut self, job: JobId, number: u64, record: &JobRecord, t: Time, indices: Option<Vec<u32>>) {
        let env = self.intern(&record.env);
        let elements: Vec<(JobId, Option<(JobId, u32)>)> = match &indices {
            Some(ix) => ix
                .iter()
                .take(crate::array_tail::MADE_AHEAD)
                .enumerate()
                .map(|(k, &i)| (job.offset(k as u64), Some((job, i))))
                .collect(),
            None => vec![(job, None)],
        };
        let mut template = None;
        for (id, array) in elements {
            let info = DaemonJob {
                record: JobRecord { env: env.clone(), ..record.clone() },
                // `bsub -H`: held from the start.
                status: if record.spec.hold { JobStatus::Psusp } else { JobStatus::Pend },
                submit_time: t.0,
                start_time: None,
                end_time: None,
                exit: None,
                cpu_time: None,
                alloc: Vec::new(),
                requeue: None,
                killed: None,
                array,
                number,
                usage: None,
                max_mem_kb: 0,
                exit_reason: None,
                attempt: 0,
                pre_exec_failures: 0,
                unknown: None,
            };
            self.names.insert(&record.spec.user, &record.name, id);
            template.get_or_insert_with(|| DaemonJob { array: Some((job, 0)), ..info.clone() });
            self.jobs.insert(id, info);
        }
        if let Some(indices) = indices {
            if let Some(t) = template {
                self.keep_tail(job, indices.len(), t);
            }
            self.arrays.insert(job, indices);
        }
        // Checked by `apply` before the engine took the job.
        let _ = self.numbers.give(number, job);
        if let Some(request) = &record.extras().request {
            self.requests.insert(request.clone(), job);
        }
    }

    /// Job `id` leaves the job table (and the names' index).
    fn forget(&mut self, id: JobId) {
        if let Some(j) = self.jobs.remove(&id) {
            self.names.remove(&j.record.spec.user, &j.record.name, id);
        }
    }

    /// Forgets the jobs that ended CLEAN_PERIOD or more before `now`, as
    /// LSF does: `bjobs -a` and `bhist` no longer find them (the log keeps
    /// their records). A job array goes when all its elements have; the
    /// environments no job holds any more go too.
    pub fn clean(&mut self, now: u64) {
        let mut forgot = false;
        let period = self.clean_period;
        // Ended that long ago (a job that ran again since has a later end).
        let gone =
            |j: &DaemonJob| !j.status.unfinished() && j.end_time.is_some_and(|e| e.saturating_add(period) <= now);
        while let Some(&(end, id)) = self.finished.first() {
            if end.saturating_add(period) > now {
                break;
            }
            self.finished.pop_first();
            // A job of the table, or an element removed before it was made.
            let array = match self.jobs.get(&id) {
                Some(j) if gone(j) => j.array.map(|a| a.0),
                Some(_) => continue,
                None => match self
                    .tails
                    .range(..=id)
                    .next_back()
                    .filter(|(_, t)| t.removed.iter().any(|r| r.0.contains(id)))
                {
                    Some((&first, _)) => Some(first),
                    None => continue,
                },
            };
            match array {
                None => {
                    self.forget(id);
                    forgot = true;
                }
                Some(first) if self.array_gone(first, &gone) => {
                    let size = self.arrays.get(&first).map_or(0, |ix| ix.len() as u64);
                    for k in 0..size {
                        self.forget(first.offset(k));
                    }
                    self.arrays.remove(&first);
                    self.tails.remove(&first);
                    forgot = true;
                }
                Some(_) => {}
            }
        }
        if forgot {
            self.envs.retain(|e| std::sync::Arc::strong_count(e) > 1);
            let jobs = &self.jobs;
            self.requests.retain(|_, job| jobs.contains_key(job));
            if let Some(&first) = self.jobs.keys().next() {
                self.numbers.forget_before(first);
            }
        }
    }

    /// How a job runs by its queue (its queue now: `bswitch` may have
    /// moved it): NICE and JOB_STARTER.
    pub fn exec_of(&self, id: JobId, j: &DaemonJob) -> crate::config::QueueExtras {
        let queue = self.engine.job_queue(id).or(j.record.spec.queue.as_deref());
        queue.and_then(|q| self.queue_extras.get(q)).cloned().unwrap_or_default()
    }

    /// The one shared copy of an environment (see [`State::envs`]).
    pub(crate) fn intern(&mut self, env: &Env) -> Env {
        match self.envs.get(env) {
            Some(shared) => shared.clone(),
            None => {
                self.envs.insert(env.clone());
                env.clone()
            }
        }
    }
}
