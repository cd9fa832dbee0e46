//! What the event log holds: each change of state as a [`Record`], and
//! the job as submitted ([`JobRecord`]) with what few jobs have
//! ([`JobExtras`]).

use allot_engine::{JobId, JobSpec};
use serde::{Deserialize, Serialize};

/// Why a job was killed: LSF's termination reasons (the keywords `bjobs
/// -l`, `bhist -l` and `bacct` show).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Term {
    Owner,
    Admin,
    RunLimit,
    Deadline,
    MemLimit,
}

impl Term {
    /// Killed because someone asked (`bkill` by its owner or an
    /// administrator), not by allotd at a limit: a replay kills such a job
    /// at its time whenever it runs, and decides a limit's kill again.
    pub fn by_request(self) -> bool {
        matches!(self, Term::Owner | Term::Admin)
    }

    /// `TERM_RUNLIMIT: job killed after reaching LSF run time limit`, as
    /// LSF words it.
    pub fn describe(self) -> &'static str {
        match self {
            Term::Owner => "TERM_OWNER: job killed by owner",
            Term::Admin => "TERM_ADMIN: job killed by root or LSF administrator",
            Term::RunLimit => "TERM_RUNLIMIT: job killed after reaching LSF run time limit",
            Term::Deadline => "TERM_DEADLINE: job killed after deadline expires",
            Term::MemLimit => "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit",
        }
    }
}

/// A submission environment. Shared: allotd keeps one copy for every job
/// submitted with the same one (most of a user's jobs).
pub type Env = std::sync::Arc<[(String, String)]>;

/// A job as submitted: what the engine schedules and what running it needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub spec: JobSpec,
    pub name: String,
    pub command: String,
    pub cwd: String,
    pub output: Option<(String, bool)>,
    pub error: Option<(String, bool)>,
    pub env: Env,
    pub from_host: String,
    /// `-P`.
    #[serde(default)]
    pub project: Option<String>,
    /// `-We`, seconds.
    #[serde(default)]
    pub estimated_run_time: Option<u64>,
    /// A job array's index list as written (`1-10:2,15`); its elements
    /// take the ids from the record's job on, one per index in ascending
    /// order. `name` is then the array's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<String>,
    /// What few jobs have, kept apart so that a backlog of plain jobs
    /// does not pay for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extras: Option<Box<JobExtras>>,
}

/// The parts of a submission most jobs do not have.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobExtras {
    /// The submission's request id, if its client sent one (see
    /// `allot_proto::Submit::request`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// `-M`: the memory limit, KB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_limit_kb: Option<u64>,
    /// `-wa`/`-wt`: the warning signal, and seconds before the run limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<(String, u64)>,
    /// `-r` (true) or `-rn` (false): whether it goes back to pending when
    /// lost with its host (else its queue's RERUNNABLE says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerunnable: Option<bool>,
    /// `-rnc`: the resize notification command (over its application
    /// profile's RESIZE_NOTIFY_CMD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resize_notify: Option<String>,
    /// `-C -D -F -S -v`: the soft resource limits its processes start with.
    #[serde(default, skip_serializing_if = "allot_proto::ProcessLimits::is_empty")]
    pub limits: allot_proto::ProcessLimits,
    /// `-B`, `-N`, `-u`: its mail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail: Option<allot_proto::MailAsked>,
    /// `-E`: the pre-execution command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_exec: Option<String>,
    /// `-Ep`: the post-execution command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_exec: Option<String>,
    /// `-I`, `-Ip`, `-Is`: where its `bsub` waits with the terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interactive: Option<allot_proto::Interactive>,
    /// `-i`: its standard input, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Its submitter's umask, when not 022 (what a job whose submission
    /// did not say runs with, `allot_exec::inherit::DEFAULT_UMASK`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub umask: Option<u32>,
    /// `-Jd`: its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `-L`: the login shell its command runs under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login_shell: Option<String>,
    /// `-hl`: `mem_limit_kb` is each host's part's, not the job's in all.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub host_mem_limit: bool,
}

impl JobRecord {
    /// Its extras, or none.
    pub fn extras(&self) -> &JobExtras {
        static NONE: JobExtras = JobExtras {
            request: None,
            mem_limit_kb: None,
            warning: None,
            rerunnable: None,
            resize_notify: None,
            limits: allot_proto::ProcessLimits::NONE,
            mail: None,
            pre_exec: None,
            post_exec: None,
            interactive: None,
            input: None,
            umask: None,
            description: None,
            login_shell: None,
            host_mem_limit: false,
        };
        self.extras.as_deref().unwrap_or(&NONE)
    }
}

/// One change of state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Record {
    /// A job was accepted with this id. `typed`: what its user submitted,
    /// as typed (the options that decide scheduling), from which a replay
    /// under another configuration submits it again (`allot sim --from`);
    /// logs written before it was kept have none.
    ///
    /// `number`: the job number its user was told (LSF's: one per
    /// submission, a whole job array one), when it is not `job`. Absent,
    /// it is `job`: logs written when allotd gave every array element a
    /// number of its own read as they did (their arrays kept the numbers
    /// their users saw), and a log without arrays needs none.
    Submitted {
        job: JobId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        number: Option<u64>,
        record: Box<JobRecord>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        typed: Option<Box<allot_config::submission::Submission>>,
    },
    /// A job started on these hosts (name, slots); an interruptible
    /// backfill start, with the run limit it cut the job's to (seconds),
    /// for `bhist`.
    Started {
        job: JobId,
        alloc: Vec<(String, u32)>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        backfill_limit: Option<u64>,
    },
    /// A job ended with an exit code, having used this much CPU (s).
    Finished {
        job: JobId,
        exit: i32,
        cpu_time: f64,
        /// The largest resident set of its processes, KB.
        #[serde(default, skip_serializing_if = "is_zero")]
        max_mem_kb: u64,
        /// Why it ended without running its command, when it could not
        /// (an output file its owner may not write, an owner gone): such
        /// an end is never requeued by its exit code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// Its pre-execution command (`-E`) failed, and what allotd made
        /// of it as it collected the end (so a replay does the same).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pre_exec: Option<PreExecEnd>,
        /// When it really ended, where that is before this record: its
        /// end was heard late (its host cut off, allotd down), and it is
        /// charged until then (see `allot_engine`'s `run_end`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ran_until: Option<u64>,
    },
    /// A pending job was removed (`bkill` before it started).
    Removed { job: JobId },
    /// The pending ones of these elements of the job array `array` were
    /// removed at once (`bkill` of a large array; each element kept by
    /// allotd has a [`Record::Removed`] of its own before it).
    RemovedElements { array: JobId, elements: allot_engine::JobSet },
    /// An administrator closed (`up: false`, `badmin hclose`) or opened a
    /// host: a closed host takes no new jobs; its running jobs go on.
    HostChanged { host: String, up: bool },
    /// An administrator closed (`badmin qclose`) or opened a queue: a
    /// closed queue takes no submissions; its pending jobs still run.
    QueueChanged { queue: String, open: bool },
    /// The configuration from here on: the files of `config_dir` with
    /// their texts, or (no `config_dir`) the embedded defaults.
    Reconfigured { config_dir: Option<String>, files: Vec<(String, String)> },
    /// `bstop` (`stop`) or `bresume` of a job, asked by user `by`: a
    /// pending job is held or released, a running one stopped or continued.
    Suspended { job: JobId, stop: bool, by: String },
    /// [`Record::Suspended`] of the pending ones of these elements of the
    /// job array `array` at once (`bstop` or `bresume` of a large array:
    /// every element allotd has not made yet; each it has made has a
    /// record of its own before it).
    SuspendedElements { array: JobId, elements: allot_engine::JobSet, stop: bool, by: String },
    /// A running job was suspended (SSUSP), preempted by job `by`; a
    /// replay's pass suspends it again.
    Preempted { job: JobId, by: JobId },
    /// A job suspended by preemption was resumed by the pass.
    Resumed { job: JobId },
    /// An autoresizable job grew by these slots (the pass's; a replay's
    /// pass grows it again).
    Grown { job: JobId, alloc: Vec<(String, u32)> },
    /// A grow's notification command failed: its slots went back.
    GrowFailed { job: JobId, alloc: Vec<(String, u32)> },
    /// `bresize release`: slots released on these hosts (`None`: all of
    /// them there), its pending resize request cancelled first (`cancel`).
    Shrunk { job: JobId, release: Vec<(String, Option<u32>)>, cancel: bool },
    /// `bresize cancel`.
    ResizeCancelled { job: JobId },
    /// `bmod` or `bswitch` of a pending job: its record from now on.
    Modified { job: JobId, record: Box<JobRecord> },
    /// `brequeue`: a finished job is pending again from now; a running one
    /// will be when its end is collected (it is being killed). `hold`:
    /// held (PSUSP).
    Requeued { job: JobId, hold: bool },
    /// A job array's running element limit changed (`bmod -J "%n"`);
    /// `job` is its first element, `None` lifts the limit.
    ArrayLimit { job: JobId, limit: Option<u32> },
    /// A job group was added, changed or deleted (`bgadd`, `bgmod`,
    /// `bgdel`).
    JobGroup(allot_engine::job_groups::JobGroupChange),
    /// What a running job uses, as last measured: CPU seconds in all and
    /// resident memory, KB.
    Usage { job: JobId, cpu_time: f64, mem_kb: u64 },
    /// A running job is being killed, and why: `bkill` by its owner or an
    /// administrator, or allotd at a limit. Its end shows the reason, and
    /// after a `bkill` is not requeued by its queue's REQUEUE_EXIT_VALUES
    /// ([`crate::effects::end_event`]).
    Killed { job: JobId, term: Term },
    /// A dispatch pass ran at this record's time and did something: it
    /// considered the jobs (`full`), or decided a kill. A replay runs the
    /// same pass at the same time, so reservations, predictions and every
    /// decision come back as they were; a pass that did nothing is not
    /// recorded.
    Scheduled { full: bool },
    /// A host's agent was heard from again (`Ok`), or has been silent
    /// long enough to be `Unreach` (no new work, its jobs left running)
    /// or `Unavail` (its jobs given up). In the log because the dispatch
    /// passes after it depend on it: a replay sees the hosts as they were.
    HostReach { host: String, reach: Reach },
}

/// What comes of a job whose pre-execution command failed (with another
/// code than 99, which ends the job, as LSF ends it): it goes back to
/// pending and is dispatched again, as LSF retries it, until it has
/// failed MAX_PREEXEC_RETRY times; then it is held (PSUSP), LSF's
/// LOCAL_MAX_PREEXEC_RETRY_ACTION=SUSPEND, for its user to release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PreExecEnd {
    Retry,
    Hold,
}

/// Whether a host's agent is heard from: the host states of `bhosts`
/// that come from the agent, as LSF names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reach {
    Ok,
    Unreach,
    Unavail,
}

impl Reach {
    /// As `bhosts` shows it.
    pub fn name(self) -> &'static str {
        match self {
            Reach::Ok => "ok",
            Reach::Unreach => "unreach",
            Reach::Unavail => "unavail",
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Record {
    /// What kind of record it is, and of which job: `Started of job 4`.
    pub fn kind(&self) -> String {
        let name = self.name();
        match self.job() {
            Some(job) => format!("{name} of job {job}"),
            None => name.to_string(),
        }
    }

    /// Its kind's name, as the log writes it (`{"Started":...}`).
    pub fn name(&self) -> &'static str {
        match self {
            Record::Submitted { .. } => "Submitted",
            Record::Started { .. } => "Started",
            Record::Finished { .. } => "Finished",
            Record::Removed { .. } => "Removed",
            Record::RemovedElements { .. } => "RemovedElements",
            Record::HostChanged { .. } => "HostChanged",
            Record::HostReach { .. } => "HostReach",
            Record::QueueChanged { .. } => "QueueChanged",
            Record::Reconfigured { .. } => "Reconfigured",
            Record::Suspended { .. } => "Suspended",
            Record::SuspendedElements { .. } => "SuspendedElements",
            Record::Preempted { .. } => "Preempted",
            Record::Resumed { .. } => "Resumed",
            Record::Grown { .. } => "Grown",
            Record::GrowFailed { .. } => "GrowFailed",
            Record::Shrunk { .. } => "Shrunk",
            Record::ResizeCancelled { .. } => "ResizeCancelled",
            Record::Modified { .. } => "Modified",
            Record::Requeued { .. } => "Requeued",
            Record::ArrayLimit { .. } => "ArrayLimit",
            Record::JobGroup(_) => "JobGroup",
            Record::Usage { .. } => "Usage",
            Record::Killed { .. } => "Killed",
            Record::Scheduled { .. } => "Scheduled",
        }
    }

    /// A submission's job number (see [`Record::Submitted`]).
    pub fn job_number(&self) -> Option<u64> {
        match self {
            Record::Submitted { job, number, .. } => Some(number.unwrap_or(job.0)),
            _ => None,
        }
    }

    /// The job the record is about, if any.
    pub fn job(&self) -> Option<JobId> {
        match self {
            Record::Submitted { job, .. }
            | Record::Started { job, .. }
            | Record::Finished { job, .. }
            | Record::Removed { job }
            | Record::RemovedElements { array: job, .. }
            | Record::Suspended { job, .. }
            | Record::SuspendedElements { array: job, .. }
            | Record::Preempted { job, .. }
            | Record::Resumed { job }
            | Record::Grown { job, .. }
            | Record::GrowFailed { job, .. }
            | Record::Shrunk { job, .. }
            | Record::ResizeCancelled { job }
            | Record::Modified { job, .. }
            | Record::Requeued { job, .. }
            | Record::ArrayLimit { job, .. }
            | Record::Usage { job, .. }
            | Record::Killed { job, .. } => Some(*job),
            Record::HostChanged { .. }
            | Record::HostReach { .. }
            | Record::QueueChanged { .. }
            | Record::Reconfigured { .. }
            | Record::JobGroup(_)
            | Record::Scheduled { .. } => None,
        }
    }
}
