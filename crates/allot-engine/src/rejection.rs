//! Why a submission (or a change to a job) is refused: each names what
//! and, where it can, the option.

use crate::engine::JobId;
use crate::shares::ShareError;

/// Why a submission is refused.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum Rejection {
    #[error("queue `{0}` does not exist")]
    NoSuchQueue(String),
    #[error("no queue named and no default queue")]
    NoDefaultQueue,
    #[error("user `{user}` cannot use queue `{queue}` (USERS)")]
    UserNotAllowed { user: String, queue: String },
    #[error(transparent)]
    Shares(#[from] ShareError),
    #[error("-g: {0}")]
    JobGroup(#[from] crate::job_groups::JobGroupError),
    #[error("-n {min},{max}: the minimum exceeds the maximum")]
    BadSlotRange { min: u32, max: u32 },
    #[error("-n {slots}: queue `{queue}` has {available} job slots on its hosts")]
    TooManySlots { slots: u32, queue: String, available: u64 },
    /// `of`: whose PROCLIMIT, "queue `normal`" or "application profile
    /// `fluent`".
    #[error("-n {asked}: fewer processors than the minimum PROCLIMIT of {of} ({min})")]
    BelowProcLimit { asked: String, min: u32, of: String },
    #[error("-n {asked}: more processors than the maximum PROCLIMIT of {of} ({max})")]
    AboveProcLimit { asked: String, max: u32, of: String },
    /// `from`: where the default queues come from (DEFAULT_QUEUE, or the
    /// submitter's LSB_DEFAULTQUEUE).
    #[error("-n {asked}: no default queue takes this job ({from}: {queues})")]
    NoDefaultQueueFits { asked: String, queues: String, from: &'static str },
    #[error("-R: {0}")]
    BadResReq(String),
    #[error("-m: {0}")]
    BadHosts(String),
    #[error("-app {0}: no such application profile (lsb.applications)")]
    NoSuchApplication(String),
    #[error("user `{user}` has no association{}", account.as_ref().map(|a| format!(" in account `{a}`")).unwrap_or_default())]
    NoAssociation { user: String, account: Option<String> },
    #[error("-qos {0}: no such QoS level")]
    NoSuchQos(String),
    #[error("-qos {qos}: user `{user}` may not use this QoS level")]
    QosNotAllowed { qos: String, user: String },
    /// The factor as given (a float: kept as its text).
    #[error("-uf {0}: the user factor is a number from 0 to 1")]
    BadUserFactor(String),
    #[error("{0}: the cluster's priority policy is lsf, which has no QoS or user factor")]
    NotMultifactor(&'static str),
    #[error("-x: queue `{0}` does not accept exclusive jobs (EXCLUSIVE)")]
    NotExclusiveQueue(String),
    #[error("-W {limit}: more than the RUNLIMIT of queue `{queue}` ({max} s)")]
    RunLimitTooLong { limit: u64, max: u64, queue: String },
    #[error("job {0} is not in the system")]
    NoSuchJob(JobId),
    #[error("job {0} is not pending")]
    NotPending(JobId),
    #[error("job {0} is not running")]
    NotRunning(JobId),
    #[error("job {0} is not pending, or is held or waiting for its dependency")]
    NotDispatchable(JobId),
    #[error("job {job}: host {host} of its allocation is not configured")]
    UnknownHost { job: JobId, host: u32 },
    #[error("job {0} is suspended already")]
    Suspended(JobId),
    #[error("job {0} is not suspended by preemption")]
    NotPreempted(JobId),
    #[error(transparent)]
    Reconfig(#[from] crate::reconfig::ReconfigError),
    #[error("it runs on host `{host}`, which queue `{queue}` does not use")]
    HostNotInQueue { host: String, queue: String },
    #[error("job {0} is still pending or running")]
    NotFinished(JobId),
    #[error("-w: job <{0}> is not a job of this cluster")]
    UnknownDependency(JobId),
    #[error("-J: a job array needs at least one element")]
    EmptyArray,
    #[error("-J: {size} elements are more than MAX_JOB_ARRAY_SIZE ({max})")]
    ArrayTooLarge { size: u32, max: u32 },
    #[error("-J: a running element limit is at least 1")]
    ZeroArrayLimit,
    #[error("job {0} is not a job array")]
    NotAnArray(JobId),
    #[error("-sp: user-assigned job priority is not enabled (MAX_USER_PRIORITY in lsb.params)")]
    UserPriorityDisabled,
    #[error("-sp {priority}: a job priority is from 1 to MAX_USER_PRIORITY ({max})")]
    BadUserPriority { priority: u32, max: u32 },
    #[error("-ar: {0}")]
    NotAutoResizable(String),
    #[error("resizable jobs cannot have {0}")]
    ResizableWith(&'static str),
    #[error("job {0} is not resizable (RESIZABLE_JOBS of its application profile)")]
    NotResizable(JobId),
    #[error("job {0} has a pending resize request: cancel it first (bresize release -c)")]
    ResizePending(JobId),
    #[error("job {0} has no pending resize request")]
    NoResizeRequest(JobId),
    #[error("job {job} holds {have} slot(s) on host `{host}`: not that many to release")]
    BadRelease { job: JobId, host: String, have: u32 },
    #[error("job {job}: its first execution host `{host}` cannot be released")]
    FirstHostRelease { job: JobId, host: String },
    /// A pending threshold (MAX_PEND_JOBS, MAX_PEND_SLOTS) of `who`
    /// ("User <u>", "Group <g>", "Queue <q>"; empty: the cluster's) is
    /// reached: [`crate::pend_limits`]. LSF's words.
    #[error("{}Pending job{} threshold reached", if who.is_empty() { String::new() } else { format!("{who}: ") }, if *slots { " slot" } else { "" })]
    PendingThreshold { who: String, slots: bool },
    /// The submission alone asks more than a pending threshold allows.
    #[error("{asked} {} are more than {who} pending threshold ({} {max}): it would never be taken", if *slots { "job slots" } else { "jobs" }, if *slots { "MAX_PEND_SLOTS" } else { "MAX_PEND_JOBS" })]
    AbovePendingThreshold { who: String, asked: u64, max: u64, slots: bool },
}

impl Rejection {
    /// Whether the same submission may be taken later, unchanged: LSF's
    /// `bsub` sends it again (SUB_TRY_INTERVAL).
    pub fn retry_later(&self) -> bool {
        matches!(self, Rejection::PendingThreshold { .. })
    }
}
