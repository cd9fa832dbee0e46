//! allotd's history as a workload: the event log of a state directory,
//! read as it was written (`allot sim --from STATE_DIR`), with each job's
//! runs as allotd recorded them (when each started and on which hosts,
//! how long it ran, how it ended, what it used as it ran).
//!
//! A log is read twice: a first look folds its runs (passing over the
//! submissions and passes, the most and the longest of its records, but
//! for their times), and a replay then takes its records in order from a
//! thread that decodes them as it goes ([`History::records`]). A year's
//! log is never in memory at once, and the decoding of its submissions
//! runs beside the replay on a second core (RICC's 1.9 M records:
//! `allot sim --from` 1.0 GB smaller and about 1 s faster).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use allot_engine::model::EngineConfig;
use allot_engine::{JobId, JobTable, Time};
use allot_store::{Glance, Record, RecordStream, Store, Term};

/// The log of a state directory, read.
pub struct History {
    /// The log's file, for messages.
    pub path: PathBuf,
    /// The log's first record, the configuration allotd started with, and
    /// its time.
    pub first: (Time, Record),
    /// When the first job was submitted (0 when none was).
    pub first_submit: u64,
    /// Each job's runs as allotd recorded them, in order.
    pub runs: JobTable<Vec<RecordedRun>>,
    /// The times at which allotd recorded a dispatch pass.
    pub pass_times: BTreeSet<u64>,
    /// The time of the log's last record.
    pub horizon: u64,
    /// Its records, where a replay takes them from.
    source: Source,
}

/// Where a history's records are.
enum Source {
    /// Held in memory (a history made of records already read).
    Held(Vec<(Time, Record)>),
    /// In the log, up to this sequence number (allotd may be appending),
    /// so many of them.
    Log { last: i64, count: usize },
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
    /// Seconds before `end` that it really ended, its end heard late
    /// (`Record::Finished`'s `ran_until`): the replay holds its slots
    /// until `end`, as allotd did, and charges it until its real end.
    pub unheard: u64,
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
    #[error("{path}: the event log changed while it was read ({counted} records, then {read}): read it again")]
    Changed { path: String, counted: usize, read: usize },
}

/// `host*slots host*slots`, in allocation order.
pub fn hosts_text<'a>(alloc: impl IntoIterator<Item = (&'a str, u32)> + Clone) -> String {
    // Sized once: a year's log has a start for each job.
    let mut out = String::with_capacity(alloc.clone().into_iter().map(|(h, _)| h.len() + 12).sum());
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
    /// without changing it; allotd may be running. Only the first look:
    /// the records come as a replay takes them.
    pub fn read(state_dir: &Path) -> Result<History, HistoryError> {
        let path = if state_dir.is_dir() { state_dir.join("state.db") } else { state_dir.to_path_buf() };
        let mut fold = Fold::default();
        let mut last = 0;
        // The log's archives too, first (`allot_store::history_dir`).
        Store::scan_all(&path, &["Submitted", "Scheduled"], |seq, t, glance| {
            last = seq;
            match glance {
                Glance::Record(r) => fold.add(t, r.name(), Some(&r)),
                Glance::Kind(kind) => fold.add(t, kind, None),
            }
        })?;
        let count = fold.count;
        fold.into_history(path, Source::Log { last, count })
    }

    /// A history of records already read.
    pub fn from_records(path: PathBuf, records: Vec<(Time, Record)>) -> Result<History, HistoryError> {
        let mut fold = Fold::default();
        for (t, r) in &records {
            fold.add(*t, r.name(), Some(r));
        }
        fold.into_history(path, Source::Held(records))
    }

    /// Its records in order, as a replay takes them: from memory, or from
    /// the log, decoded on a thread of its own a few batches ahead.
    pub fn records(&self) -> Result<Records<'_>, HistoryError> {
        let from = match &self.source {
            Source::Held(records) => From::Held(records),
            Source::Log { last, count } => {
                From::Log { stream: RecordStream::open(&self.path, *last)?, count: *count, read: 0 }
            }
        };
        Ok(Records { from, batch: Vec::new(), next: 0, path: &self.path })
    }

    /// The job's `k`th run (from 0) as allotd recorded it.
    pub fn run(&self, job: u64, k: usize) -> Option<&RecordedRun> {
        self.runs.get(&JobId(job))?.get(k)
    }

    /// The configuration the log starts with: its files' texts, or the
    /// embedded defaults (this machine as its one host: a log of allotd on
    /// its defaults replays as it ran on the machine it ran on).
    pub fn initial_config(&self) -> Result<Recorded, HistoryError> {
        match &self.first.1 {
            Record::Reconfigured { config_dir, files } => Recorded::load(config_dir.as_deref(), files),
            r => Err(HistoryError::NoConfig { path: self.path.display().to_string(), first: r.kind() }),
        }
    }
}

/// What a first look at a log gathers, record by record.
#[derive(Default)]
struct Fold {
    first: Option<(Time, Result<Record, &'static str>)>,
    first_submit: Option<u64>,
    runs: JobTable<Vec<RecordedRun>>,
    pass_times: BTreeSet<u64>,
    horizon: u64,
    count: usize,
}

impl Fold {
    /// The next record, of kind `kind` (as [`Record::name`] says): decoded
    /// (`record`), or passed over (submissions and passes are, but for
    /// their times).
    fn add(&mut self, t: Time, kind: &'static str, record: Option<&Record>) {
        self.count += 1;
        self.horizon = self.horizon.max(t.0);
        if self.first.is_none() {
            self.first = Some((t, record.cloned().ok_or(kind)));
        }
        match kind {
            "Submitted" => {
                self.first_submit.get_or_insert(t.0);
            }
            "Scheduled" => {
                self.pass_times.insert(t.0);
            }
            _ => {}
        }
        if let Some(r) = record {
            self.run_record(t.0, r);
        }
    }

    /// What a record says of a job's run.
    fn run_record(&mut self, t: u64, r: &Record) {
        /// The job's run that has not ended, if one has started.
        fn open(runs: &mut JobTable<Vec<RecordedRun>>, job: JobId) -> Option<&mut RecordedRun> {
            runs.get_mut(&job).and_then(|r| r.last_mut()).filter(|r| r.end.is_none())
        }
        match r {
            Record::Started { job, alloc, .. } => {
                let run = RecordedRun {
                    start: t,
                    hosts: hosts_text(alloc.iter().map(|(h, n)| (h.as_str(), *n))),
                    ..RecordedRun::default()
                };
                match self.runs.get_mut(job) {
                    Some(runs) => runs.push(run),
                    // Most jobs run once: room for one.
                    None => self.runs.insert(*job, vec![run]),
                }
            }
            Record::Finished { job, exit, cpu_time, reason, pre_exec, ran_until, .. } => {
                if let Some(run) = open(&mut self.runs, *job) {
                    run.end = Some(t);
                    run.unheard = ran_until.map_or(0, |e| t.saturating_sub(e));
                    run.exit = *exit;
                    run.cpu_time = *cpu_time;
                    run.unrun = reason.is_some();
                    run.pre_exec = *pre_exec;
                }
            }
            Record::Killed { job, term } => {
                if let Some(run) = open(&mut self.runs, *job) {
                    run.killed.get_or_insert((t, *term));
                }
            }
            Record::Usage { job, cpu_time, mem_kb } => {
                if let Some(run) = open(&mut self.runs, *job) {
                    run.usage.push((t.saturating_sub(run.start), *cpu_time, *mem_kb));
                }
            }
            Record::Preempted { job, .. } => {
                if let Some(run) = open(&mut self.runs, *job) {
                    run.suspended.push((t, None));
                }
            }
            Record::Resumed { job } => {
                let last = open(&mut self.runs, *job).and_then(|r| r.suspended.last_mut());
                if let Some(last) = last.filter(|s| s.1.is_none()) {
                    last.1 = Some(t);
                }
            }
            _ => {}
        }
    }

    /// The history, once every record is in: one whose log does not
    /// begin with a configuration is refused.
    fn into_history(self, path: PathBuf, source: Source) -> Result<History, HistoryError> {
        let shown = path.display().to_string();
        let first = match self.first {
            None => return Err(HistoryError::Empty { path: shown }),
            Some((t, Ok(r @ Record::Reconfigured { .. }))) => (t, r),
            Some((_, Ok(r))) => return Err(HistoryError::NoConfig { path: shown, first: r.kind() }),
            Some((_, Err(kind))) => return Err(HistoryError::NoConfig { path: shown, first: kind.into() }),
        };
        Ok(History {
            path,
            first,
            first_submit: self.first_submit.unwrap_or(0),
            runs: self.runs,
            pass_times: self.pass_times,
            horizon: self.horizon,
            source,
        })
    }
}

/// A history's records in order, as a replay takes them.
pub struct Records<'h> {
    from: From<'h>,
    /// The batch taken from the log, and the next record in it.
    batch: Vec<(Time, Record)>,
    next: usize,
    path: &'h Path,
}

enum From<'h> {
    Held(&'h [(Time, Record)]),
    Log { stream: RecordStream, count: usize, read: usize },
}

impl Records<'_> {
    /// The next record, not taken yet; `None` after the last.
    pub fn peek(&mut self) -> Result<Option<&(Time, Record)>, HistoryError> {
        match &mut self.from {
            From::Held(records) => Ok(records.get(self.next)),
            From::Log { stream, count, read } => {
                while self.next == self.batch.len() {
                    match stream.next() {
                        Some(batch) => {
                            stream.done_with(std::mem::replace(&mut self.batch, batch?));
                            self.next = 0;
                            *read += self.batch.len();
                        }
                        None if *read == *count => return Ok(None),
                        None => {
                            let path = self.path.display().to_string();
                            return Err(HistoryError::Changed { path, counted: *count, read: *read });
                        }
                    }
                }
                Ok(self.batch.get(self.next))
            }
        }
    }

    /// Takes the record [`Records::peek`] gave.
    pub fn advance(&mut self) {
        self.next += 1;
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
