//! What allotd knows of a job beyond the engine ([`DaemonJob`]): its
//! record as submitted, what the commands show of it, and its names,
//! directory and files as its patterns (`%J`, `%I`, ...) expand.

use std::borrow::Cow;
use std::path::PathBuf;

use allot_engine::JobId;
use allot_proto::{JobRef, JobStatus};
use allot_store::JobRecord;

/// What the daemon knows of a job beyond the engine.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct DaemonJob {
    /// As submitted; its environment is shared with every job submitted
    /// with the same one (see [`crate::state::State::envs`]).
    pub record: JobRecord,
    pub status: JobStatus,
    pub submit_time: u64,
    pub start_time: Option<u64>,
    pub end_time: Option<u64>,
    pub exit: Option<i32>,
    pub cpu_time: Option<f64>,
    pub alloc: Vec<(String, u32)>,
    /// `brequeue` of the running job: when its end is collected it goes
    /// back to pending, held if `true`.
    pub requeue: Option<bool>,
    /// Why it is being killed, when it is: `bkill`, or a limit. Its end
    /// shows the reason (a [`allot_store::Record::Killed`], so a restart
    /// knows it too), and after a `bkill` is not requeued by its queue's
    /// REQUEUE_EXIT_VALUES (`allot_store::effects::end_event`).
    pub killed: Option<allot_store::Term>,
    /// A job array's element: its array's id (its first element's) and its
    /// index.
    pub array: Option<(JobId, u32)>,
    /// Its job number, as its user was told it (an array's elements share
    /// it; [`crate::numbers`]).
    pub number: u64,
    /// What it uses while it runs, as last measured: CPU seconds (all of
    /// them charged to fairshare by now) and resident memory, KB.
    pub usage: Option<(f64, u64)>,
    /// The largest resident memory seen, KB.
    pub max_mem_kb: u64,
    /// Why it ended without running its command, when it could not start.
    pub exit_reason: Option<Box<str>>,
    /// How many times it was started: its current (or last) run's number,
    /// by which an agent tells its runs apart.
    pub attempt: u32,
    /// How many times its pre-execution command (`-E`) failed.
    pub pre_exec_failures: u32,
    /// When it was UNKWN, if ever (`crate::unknown`).
    pub unknown: Option<Box<crate::unknown::Spans>>,
}

impl DaemonJob {
    /// The job as the commands name it: `123`, or `123[4]`.
    pub fn job_ref(&self) -> JobRef {
        JobRef { id: self.number, index: self.array.map_or(0, |a| a.1) }
    }

    /// The directory it runs in: `-cwd` (or where it was submitted from)
    /// with its dynamic patterns (`%J`, `%I`, `%U`, `%P`, `%G`, `%H`)
    /// expanded.
    pub fn cwd(&self) -> PathBuf {
        let JobRef { id: job, index } = self.job_ref();
        let r = &self.record;
        let patterns = allot_exec::Patterns {
            job,
            index,
            user: &r.spec.user,
            project: r.project.as_deref().unwrap_or("default"),
            group: r.spec.group.as_deref().unwrap_or(""),
            host: self.alloc.first().map_or("", |(h, _)| h.as_str()),
        };
        PathBuf::from(allot_exec::expand_patterns(&r.cwd, &patterns))
    }

    /// A file its submission names (`-o`, `-e`, `-i`): `%J` and `%I`
    /// expanded, relative to its working directory ([`DaemonJob::cwd`]).
    pub fn named_file(&self, name: &str) -> PathBuf {
        let JobRef { id, index } = self.job_ref();
        let p = PathBuf::from(allot_exec::expand_name(name, id, index));
        if p.is_absolute() { p } else { self.cwd().join(p) }
    }

    /// Its name as `bjobs` shows it: an element's is `name[index]`.
    pub fn display_name(&self) -> Cow<'_, str> {
        match self.array {
            Some((_, index)) => Cow::Owned(format!("{}[{index}]", self.record.name)),
            None => Cow::Borrowed(&self.record.name),
        }
    }
}

impl DaemonJob {
    /// Pending again after a requeue, with nothing of its last run shown.
    pub(crate) fn back_to_pending(&mut self, hold: bool) {
        self.status = if hold { JobStatus::Psusp } else { JobStatus::Pend };
        self.start_time = None;
        self.end_time = None;
        self.exit = None;
        self.cpu_time = None;
        self.alloc.clear();
        self.usage = None;
        self.max_mem_kb = 0;
        self.killed = None;
        self.exit_reason = None;
    }
}
