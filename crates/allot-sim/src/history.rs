//! allotd's history as a workload: the event log of a state directory,
//! read as it was written (`allot sim --from STATE_DIR`), with each job's
//! runs as allotd recorded them (when each started and on which hosts,
//! how long it ran, how it ended, what it used as it ran).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use allot_engine::Time;
use allot_engine::model::EngineConfig;
use allot_store::{Record, Store, Term};

/// The log of a state directory, read.
pub struct History {
    /// The log's file, for messages.
    pub path: PathBuf,
    /// Every record in the log's order, with its time.
    pub records: Vec<(Time, Record)>,
    /// Each job's runs as allotd recorded them, in order.
    pub runs: BTreeMap<u64, Vec<RecordedRun>>,
    /// The times at which allotd recorded a dispatch pass.
    pub pass_times: BTreeSet<u64>,
    /// The time of the log's last record.
    pub horizon: u64,
}

/// One run of a job as allotd recorded it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordedRun {
    pub start: u64,
    /// `host*slots ...`, as `jobs.csv` writes them.
    pub hosts: String,
    /// When it ended, if it did before the log's end.
    pub end: Option<u64>,
    pub exit: i32,
    pub cpu_time: f64,
    /// It ended without running its command.
    pub unrun: bool,
    /// Its pre-execution command failed, and what allotd made of it.
    pub pre_exec: Option<allot_store::PreExecEnd>,
    /// Killed (`bkill`, a limit): when, and why.
    pub killed: Option<(u64, Term)>,
    /// Its measures: seconds after its start, CPU seconds in all,
    /// resident memory (KB).
    pub usage: Vec<(u64, f64, u64)>,
    /// When it was suspended by preemption, and resumed (if it was).
    pub suspended: Vec<(u64, Option<u64>)>,
}

impl RecordedRun {
    /// How long it ran, if it ended: from start to end, less the time it
    /// was suspended by preemption.
    pub fn length(&self) -> Option<u64> {
        let end = self.end?;
        let paused: u64 = self.suspended.iter().map(|&(at, until)| until.unwrap_or(end).saturating_sub(at)).sum();
        Some(end.saturating_sub(self.start).saturating_sub(paused))
    }

    /// How long it took to end once killed (0 if it was not, or has not
    /// ended).
    pub fn kill_latency(&self) -> u64 {
        self.end.zip(self.killed).map_or(0, |(end, (at, _))| end.saturating_sub(at))
    }
}

/// A log that cannot be replayed, and why.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("{0}")]
    Store(#[from] allot_store::StoreError),
    #[error("{path}: the event log is empty: allotd has recorded nothing there yet")]
    Empty { path: String },
    #[error("{path}: the event log does not start with allotd's configuration (its first record is {first})")]
    NoConfig { path: String, first: String },
    #[error("{0}")]
    Config(String),
}

/// `host*slots host*slots`, in allocation order.
pub fn hosts_text<'a>(alloc: impl IntoIterator<Item = (&'a str, u32)>) -> String {
    let mut out = String::new();
    for (h, n) in alloc {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(h);
        out.push('*');
        crate::report::push_decimal(&mut out, u64::from(n));
    }
    out
}

impl History {
    /// Reads `state_dir/state.db` (or the file itself, when given one)
    /// without changing it; allotd may be running.
    pub fn read(state_dir: &Path) -> Result<History, HistoryError> {
        let path = if state_dir.is_dir() { state_dir.join("state.db") } else { state_dir.to_path_buf() };
        let records = Store::open_read_only(&path)?.read_all()?;
        History::from_records(path, records)
    }

    /// A history of records already read.
    pub fn from_records(path: PathBuf, records: Vec<(Time, Record)>) -> Result<History, HistoryError> {
        let shown = path.display().to_string();
        match records.first() {
            None => return Err(HistoryError::Empty { path: shown }),
            Some((_, Record::Reconfigured { .. })) => {}
            Some((_, r)) => return Err(HistoryError::NoConfig { path: shown, first: r.kind() }),
        }
        let mut runs: BTreeMap<u64, Vec<RecordedRun>> = BTreeMap::new();
        let mut pass_times = BTreeSet::new();
        for (t, r) in &records {
            let t = t.0;
            match r {
                Record::Started { job, alloc } => runs.entry(job.0).or_default().push(RecordedRun {
                    start: t,
                    hosts: hosts_text(alloc.iter().map(|(h, n)| (h.as_str(), *n))),
                    ..RecordedRun::default()
                }),
                Record::Finished { job, exit, cpu_time, reason, pre_exec, .. } => {
                    if let Some(run) = runs.get_mut(&job.0).and_then(|r| r.last_mut()).filter(|r| r.end.is_none()) {
                        run.end = Some(t);
                        run.exit = *exit;
                        run.cpu_time = *cpu_time;
                        run.unrun = reason.is_some();
                        run.pre_exec = *pre_exec;
                    }
                }
                Record::Killed { job, term } => {
                    if let Some(run) = runs.get_mut(&job.0).and_then(|r| r.last_mut()).filter(|r| r.end.is_none()) {
                        run.killed.get_or_insert((t, *term));
                    }
                }
                Record::Usage { job, cpu_time, mem_kb } => {
                    if let Some(run) = runs.get_mut(&job.0).and_then(|r| r.last_mut()).filter(|r| r.end.is_none()) {
                        run.usage.push((t.saturating_sub(run.start), *cpu_time, *mem_kb));
                    }
                }
                Record::Scheduled { .. } => {
                    pass_times.insert(t);
                }
                Record::Preempted { job, .. } => {
                    if let Some(run) = runs.get_mut(&job.0).and_then(|r| r.last_mut()).filter(|r| r.end.is_none()) {
                        run.suspended.push((t, None));
                    }
                }
                Record::Resumed { job } => {
                    let run = runs.get_mut(&job.0).and_then(|r| r.last_mut()).filter(|r| r.end.is_none());
                    if let Some(last) = run.and_then(|r| r.suspended.last_mut()).filter(|s| s.1.is_none()) {
                        last.1 = Some(t);
                    }
                }
                _ => {}
            }
        }
        let horizon = records.iter().map(|(t, _)| t.0).max().unwrap_or(0);
        Ok(History { path, records, runs, pass_times, horizon })
    }

    /// The configuration the log starts with: its files' texts, or the
    /// embedded defaults (this machine as its one host: a log of allotd on
    /// its defaults replays as it ran on the machine it ran on).
    pub fn initial_config(&self) -> Result<Recorded, HistoryError> {
        match self.records.first() {
            Some((_, Record::Reconfigured { config_dir, files })) => Recorded::load(config_dir.as_deref(), files),
            _ => Err(HistoryError::NoConfig { path: self.path.display().to_string(), first: "none".into() }),
        }
    }
}

/// A configuration as the log recorded it, loaded.
pub struct Recorded {
    pub engine: EngineConfig,
    /// Its hosts run agents (`[cluster]`): each takes work once its agent
    /// is heard (`HostReach`).
    pub agents: bool,
    /// What it is: its directory, or the embedded defaults.
    pub describe: String,
}

impl Recorded {
    /// Loads a configuration from its files' texts (`dir` `None`: the
    /// embedded defaults), as allotd loaded it.
    pub fn load(dir: Option<&str>, files: &[(String, String)]) -> Result<Recorded, HistoryError> {
        let Some(dir) = dir else {
            return Ok(Recorded {
                engine: allot_config::defaults::engine_config(),
                agents: false,
                describe: "the embedded defaults".into(),
            });
        };
        Recorded::from_texts(dir, files, &|d| format!("the configuration the log recorded ({dir}) does not load:\n{d}"))
    }

    /// A configuration directory, as `--config` names it.
    pub fn from_dir(dir: &Path) -> Result<Recorded, HistoryError> {
        let files = allot_config::load::read_dir(dir).map_err(|d| HistoryError::Config(d.to_string()))?;
        let shown = dir.display().to_string();
        Recorded::from_texts(&shown, &files, &|d| format!("{shown}: invalid configuration:\n{d}"))
    }

    /// The configuration `files` say, as allotd loads it; `why` words
    /// what does not load.
    fn from_texts(
        describe: &str,
        files: &[(String, String)],
        why: &dyn Fn(&allot_config::diag::Diagnostics) -> String,
    ) -> Result<Recorded, HistoryError> {
        let (config, _) = allot_config::load::load_texts(files).map_err(|d| HistoryError::Config(why(&d)))?;
        Ok(Recorded {
            engine: config.engine_config(),
            agents: config.settings.cluster.is_some(),
            describe: describe.to_string(),
        })
    }
}

/// Whether a kill is a user's (`bkill` by its owner or an administrator),
/// which happens at its time whenever the job runs, or allotd's own at a
/// limit, which a replay decides again.
pub fn by_user(term: Term) -> bool {
    matches!(term, Term::Owner | Term::Admin)
}
