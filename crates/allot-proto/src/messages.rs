//! Requests and responses.

use serde::{Deserialize, Serialize};

use crate::job_info::JobInfo;
use crate::shares::{LiveAssociations, LivePriorities, PolicyShares};

/// A job submission, as `bsub` sends it: what the scheduler is asked (the
/// typed options, one value from the parser on), and what running the
/// job needs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Submit {
    /// The scheduling options as typed (`allot_config::submission::from_bsub`),
    /// with `-t` and `-b` resolved on the submitter's clock and its
    /// LSB_DEFAULTQUEUE. Its `user` is not read: allotd takes the owner
    /// from the connection's credentials.
    pub submission: crate::Submission,
    /// The command line, or the job script.
    pub command: String,
    /// The working directory (`-cwd`, or where `bsub` ran).
    pub cwd: String,
    /// `-o`/`-oo` (overwrite) and `-e`/`-eo`.
    pub output: Option<(String, bool)>,
    pub error: Option<(String, bool)>,
    /// The submission environment, passed on to the job.
    pub env: Vec<(String, String)>,
    /// Names this submission: sent again after an answer was lost, it
    /// gets the job the first one made, not a second one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// `-M`: the memory limit, KB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_limit_kb: Option<u64>,
    /// `-hl`: the memory limit is each host's, not the job's in all.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub host_mem_limit: bool,
    /// `-B`, `-N`, `-u`: mail about the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail: Option<crate::limits::MailAsked>,
    /// `-E`: the pre-execution command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_exec: Option<String>,
    /// `-Ep`: the post-execution command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_exec: Option<String>,
    /// `-Jd`: the job's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `-L`: the login shell the job's command runs under (an absolute
    /// path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login_shell: Option<String>,
    /// `-C -D -F -S -v`: the per-process limits.
    #[serde(default, skip_serializing_if = "crate::ProcessLimits::is_empty")]
    pub limits: crate::ProcessLimits,
    /// `-wa` and `-wt`: the signal sent, and how many seconds before the
    /// run limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<(String, u64)>,
    /// `-r` (true) or `-rn` (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerunnable: Option<bool>,
    /// `-I`, `-Ip`, `-Is`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interactive: Option<crate::Interactive>,
    /// `-i`: the job's standard input, as written (`%J`, `%I` expanded
    /// when it starts; relative to its working directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The submitter's umask, which the job runs with (LSF passes it);
    /// absent, the job runs with 022.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub umask: Option<u32>,
}

/// A job as a command names it: `123`, or one element of a job array,
/// `123[4]`, by the job number allotd answered its submission with (a
/// whole array has one). Index 0 names the job itself: a whole array, or
/// a job that is no array. Id 0 (with index 0) is every job of the caller, where a
/// command allows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct JobRef {
    pub id: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub index: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl JobRef {
    pub fn job(id: u64) -> Self {
        JobRef { id, index: 0 }
    }
}

impl std::fmt::Display for JobRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            0 => write!(f, "{}", self.id),
            i => write!(f, "{}[{i}]", self.id),
        }
    }
}

/// Which jobs `bjobs` asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobQuery {
    /// A user, or `all`; `None` is the caller.
    pub user: Option<String>,
    pub queue: Option<String>,
    /// Finished jobs too (`-a`).
    pub finished: bool,
    /// These jobs only.
    pub jobs: Vec<JobRef>,
    /// With pending reasons (they cost a look at the engine per job).
    #[serde(default)]
    pub reasons: bool,
    /// With each array element's array spec (`bjobs -A`).
    #[serde(default)]
    pub arrays: bool,
    /// Without what `bjobs`'s default list does not show (command,
    /// working directory, project, limits): a list of 100,000 jobs is that
    /// much less to copy and send.
    #[serde(default)]
    pub brief: bool,
    /// With each job's submission options ([`crate::JobDetail`]: `bjobs
    /// -o`'s fields beyond the lists').
    #[serde(default)]
    pub detail: bool,
    /// `-g`: jobs of this job group and its subgroups only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_group: Option<String>,
    /// `bjobs -A`: each array's elements counted by state
    /// ([`Response::Arrays`]), not listed.
    #[serde(default)]
    pub summary: bool,
}

/// How allotd's refusal of terminal input typed faster than it passes it
/// on begins (`Request::TermInput`): the input is to be sent again.
pub const TYPING_TOO_FAST: &str = "typed faster than the terminal is passed on";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Request {
    Submit(Box<Submit>),
    Jobs(JobQuery),
    /// `bkill`: jobs (0 is every job of the caller), signal name.
    Kill {
        jobs: Vec<JobRef>,
        signal: Option<String>,
        /// `-g`: only jobs of this job group (not of its subgroups).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job_group: Option<String>,
    },
    Queues,
    Hosts,
    /// `lshosts` and `lsload`: what each host has and how loaded it is.
    HostLoads,
    /// `bslots`: the backfill windows, on hosts where `select` (a
    /// `select[...]` requirement) holds.
    Slots {
        select: Option<String>,
    },
    /// `badmin reconfig`.
    Reconfig,
    /// `badmin qclose` (`open: false`) and `qopen`.
    QueueControl {
        queue: String,
        open: bool,
    },
    /// `badmin hclose` (`open: false`) and `hopen`.
    HostControl {
        host: String,
        open: bool,
    },
    Shutdown,
    /// `bstop` (`stop: true`) and `bresume`: jobs, 0 for all the caller's.
    Suspend {
        jobs: Vec<JobRef>,
        stop: bool,
        /// `-g`: only jobs of this job group (not of its subgroups).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job_group: Option<String>,
    },
    /// `bresize release` and `bresize cancel` of a running resizable job.
    Resize {
        job: JobRef,
        action: ResizeAction,
    },
    /// `bswitch`: pending jobs to another queue.
    Switch {
        jobs: Vec<JobRef>,
        queue: String,
    },
    /// `bmod`: changes to a pending job.
    Modify {
        job: JobRef,
        changes: Box<Changes>,
    },
    /// `brequeue`: running jobs are killed and go back to pending, finished
    /// ones come back; 0 is all the caller's jobs in the states asked for.
    Requeue {
        jobs: Vec<JobRef>,
        states: RequeueStates,
        /// `-H`: requeued held (PSUSP).
        hold: bool,
    },
    /// `bpeek`: the output so far of a running job (`None`: the caller's
    /// last running job).
    Peek {
        job: Option<JobRef>,
    },
    /// `bhist`: the history of these jobs from the event log; without
    /// ids, the jobs of `user` (the caller if none, or `all`), finished
    /// ones too when `finished`.
    History {
        jobs: Vec<JobRef>,
        user: Option<String>,
        finished: bool,
    },
    /// `bhpart`, `bqueues -l`, `allot shares --live`: every fairshare
    /// policy with its share tables now.
    Shares,
    /// `allot sshare --live`: the multifactor policy's associations with
    /// their usage and pending jobs now.
    Associations,
    /// `allot sprio --live`: the pending jobs' multifactor priorities.
    Priorities,
    /// `bugroup`: the user groups of `lsb.users`.
    Groups,
    /// `busers`: job slots of these users (none: the caller; `all`:
    /// every user with jobs or a MAX_JOBS).
    Users {
        users: Vec<String>,
    },
    /// `blimits`: what each resource allocation limit's buckets hold
    /// (`all`: every limit, those with nothing in use too).
    Limits {
        all: bool,
    },
    /// `bhosts -s`, `lsload -s`: the numeric resources hosts share.
    SharedResources,
    /// `bgadd`, `bgmod`, `bgdel`, `bjgroup`.
    JobGroup(crate::job_groups::JobGroupRequest),
    /// `bjobs -p -l`, `allot explain`: everything that holds a pending job.
    Explain {
        job: JobRef,
    },
    /// `lsid`, `lsclusters`, `bparams`, `badmin showconf`/`showstatus`.
    Cluster,
    /// `bacct`: the finished jobs the query names, from the event log.
    Acct(Box<crate::acct::AcctQuery>),
    /// `bsub -I`: the job's terminal, where an agent relays it (a job on
    /// another host than bsub's): answered by a stream of `TermStarted`,
    /// `TermOutput` and, last, `TermClosed`. Its owner's only.
    Attach {
        job: u64,
    },
    /// What is typed at the job's terminal, for the agent that relays it;
    /// `eof`: its input ended (after `data`).
    TermInput {
        job: u64,
        data: Vec<u8>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        eof: bool,
    },
    /// The terminal's new size (`-Ip`, `-Is`).
    TermResize {
        job: u64,
        rows: u16,
        cols: u16,
    },
}

/// The states `brequeue` acts on: `-d` DONE, `-e` EXIT, `-r` running and
/// suspended; `-a` all three, also the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequeueStates {
    pub done: bool,
    pub exit: bool,
    pub running: bool,
}

/// A field that is there, even as `null`: `Some(None)` crosses the wire
/// as `null`, which would otherwise come back as `None`.
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// What `bmod` changes; `None` leaves a field as it is, `Some(None)`
/// (from `-Wn`, `-Pn`, ...) clears it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Changes {
    pub queue: Option<String>,
    pub slots: Option<u32>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub run_limit: Option<Option<u64>>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub estimated_run_time: Option<Option<u64>>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub group: Option<Option<String>>,
    pub name: Option<String>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub project: Option<Option<String>>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub output: Option<Option<(String, bool)>>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub error: Option<Option<(String, bool)>>,
    pub cwd: Option<String>,
    /// `-Z`: a new command line.
    pub command: Option<String>,
    /// `-J "%n"`: a job array's running element limit.
    #[serde(default)]
    pub array_limit: Option<u32>,
    /// `-sp n`; `-spn` (`Some(None)`) goes back to the default.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub priority: Option<Option<u32>>,
    /// `-qos`: another QoS level (multifactor policies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos: Option<String>,
    /// `-uf`: another user factor, 0 to 1 (multifactor policies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_factor: Option<f64>,
    /// `-g`: another job group; `-gn` (`Some(None)`): none.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub job_group: Option<Option<String>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobStatus {
    Pend,
    Run,
    Done,
    Exit,
    /// Pending and held (`bstop`).
    Psusp,
    /// Running and stopped (`bstop`).
    Ususp,
    /// Running and suspended by the system: preempted by a job of a
    /// higher-priority queue.
    Ssusp,
    /// Running, on a host whose agent allotd cannot hear (`unreach`): how
    /// it is doing is not known. As shown only; allotd's own record of the
    /// job says it runs.
    Unkwn,
}

impl JobStatus {
    /// As `bjobs` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pend => "PEND",
            JobStatus::Run => "RUN",
            JobStatus::Done => "DONE",
            JobStatus::Exit => "EXIT",
            JobStatus::Psusp => "PSUSP",
            JobStatus::Ususp => "USUSP",
            JobStatus::Ssusp => "SSUSP",
            JobStatus::Unkwn => "UNKWN",
        }
    }

    /// Neither done nor exited.
    pub fn unfinished(self) -> bool {
        !matches!(self, JobStatus::Done | JobStatus::Exit)
    }
}

/// What `bresize` asks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ResizeAction {
    /// `release [-c] [-rnc command | -rncn] "1*hostA 2*hostB hostC"`:
    /// slots on each host (`None`: all of the job's there); `cancel`: its
    /// pending resize request first; `notify`: run a notification command
    /// (not with `-rncn`): `command` (`-rnc`) for this release, else the
    /// job's own.
    Release {
        hosts: Vec<(String, Option<u32>)>,
        cancel: bool,
        notify: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
    },
    /// `cancel`: its pending resize request.
    Cancel,
}

/// One job's history: what it is now, and each event with its time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobHistory {
    pub job: JobInfo,
    pub events: Vec<(u64, HistoryEvent)>,
}

/// What `bhist` shows of one event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum HistoryEvent {
    Submitted {
        queue: String,
        from_host: String,
        cwd: String,
        /// `-W`, seconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run_limit: Option<u64>,
    },
    Started {
        hosts: Vec<(String, u32)>,
        /// An interruptible backfill start: the run limit it was cut to,
        /// seconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        backfill_limit: Option<u64>,
    },
    Finished {
        exit: i32,
        cpu_time: f64,
        /// Why it ended without running, when it could not start.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// Why it was killed, as LSF words it (`TERM_RUNLIMIT: ...`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        term: Option<String>,
    },
    Removed,
    /// By this user.
    Suspended {
        by: String,
    },
    Resumed {
        by: String,
    },
    /// Suspended by the system (SSUSP): preempted by this job.
    Preempted {
        by: JobRef,
    },
    /// Resumed by the system once its slots were free again.
    ResumedBySystem,
    /// Its allocation grew by these slots (an autoresizable job).
    Grown {
        hosts: Vec<(String, u32)>,
    },
    /// A grow its notification command refused: given back.
    GrowFailed {
        hosts: Vec<(String, u32)>,
    },
    /// `bresize release`: these slots (`None`: all on the host) released.
    Released {
        hosts: Vec<(String, Option<u32>)>,
    },
    /// `bresize cancel` (or `release -c`): its pending resize request
    /// cancelled.
    ResizeCancelled,
    Modified {
        queue: String,
    },
    /// `brequeue`: a finished job is pending again at once, a running
    /// one once it ends; `hold`: held.
    Requeued {
        hold: bool,
    },
    /// Its job array's running element limit changed (`None`: lifted).
    ArrayLimit {
        limit: Option<u32>,
    },
    /// A host of the running job could no longer be reached (UNKWN).
    Unknown,
    /// Its hosts are reached again: running.
    Reached,
}

/// A queue: its limits and job slots by state (PSUSP jobs count as
/// pending, as in LSF), and what `bqueues -l` shows of its configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueInfo {
    pub name: String,
    pub priority: i32,
    pub status: String,
    pub max: Option<u32>,
    pub jl_u: Option<u32>,
    pub jl_p: Option<f64>,
    pub jl_h: Option<u32>,
    pub njobs: u32,
    pub pend: u32,
    pub run: u32,
    /// Suspended: stopped (USUSP) and preempted (SSUSP), and of them the
    /// preempted.
    pub susp: u32,
    #[serde(default)]
    pub ssusp: u32,
    /// USERS; `None` is all users.
    pub users: Option<Vec<String>>,
    /// HOSTS; empty is all hosts.
    pub hosts: Vec<String>,
    /// The fairshare policy the queue is in, by name.
    pub policy: Option<String>,
    /// RUNLIMIT: default and maximum, seconds.
    pub run_limit: Option<(Option<u64>, u64)>,
    /// SLOT_POOL and SLOT_SHARE.
    pub slot_pool: Option<(String, u32)>,
    /// Slots its pending jobs hold reserved (RSV; they count in PEND too).
    #[serde(default)]
    pub rsv: u32,
    /// DESCRIPTION.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// NICE and JOB_STARTER.
    #[serde(default)]
    pub nice: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_starter: Option<String>,
    /// DISPATCH_ORDER = QUEUE, of its cross-queue set.
    #[serde(default)]
    pub dispatch_order_queue: bool,
}

/// A user group of `lsb.users`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupInfo {
    pub name: String,
    /// Users, and subgroups with a trailing `/`; `all` for everyone.
    pub members: Vec<String>,
    /// Its share assignment, `[user1, 10] [others, 1]`; empty if none.
    pub shares: String,
}

/// One bucket of a resource allocation limit (`lsb.resources`), as
/// `blimits` shows it: the limit's name; its consumers of each kind
/// (`None`: the limit names none of that kind; the one consumer the
/// bucket counts alone, else what the limit names); what is in use and
/// the bound of each resource it limits (MEM in MB).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LimitInfo {
    pub name: String,
    pub users: Option<String>,
    pub queues: Option<String>,
    pub hosts: Option<String>,
    pub projects: Option<String>,
    pub apps: Option<String>,
    pub slots: (u32, Option<u32>),
    pub mem: (f64, Option<f64>),
    pub jobs: (u32, Option<u32>),
    /// RESOURCE: each site resource with what is held and the bound.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<(String, f64, f64)>,
}

/// A numeric resource several hosts share (a license count): its total,
/// what running jobs hold of it now, and its hosts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SharedResourceInfo {
    pub name: String,
    pub total: f64,
    pub reserved: f64,
    pub hosts: Vec<String>,
}

/// A user's job slots by state, and MAX_JOBS.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    pub name: String,
    pub max: Option<u32>,
    pub pend: u32,
    pub run: u32,
    pub ususp: u32,
    #[serde(default)]
    pub ssusp: u32,
    /// Slots its pending jobs hold reserved (RSV; they count in PEND too).
    #[serde(default)]
    pub rsv: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub name: String,
    pub status: String,
    pub max: u32,
    /// Slots of the jobs here: all of them (reserved ones included, as
    /// LSF counts them), running, stopped (`bstop`), reserved by pending
    /// jobs.
    pub njobs: u32,
    pub run: u32,
    #[serde(default)]
    pub ususp: u32,
    /// Slots of preempted jobs (SSUSP): in `njobs`, not in `run`.
    #[serde(default)]
    pub ssusp: u32,
    #[serde(default)]
    pub rsv: u32,
    /// MB of its memory that jobs' `rusage[mem]` holds, running or
    /// reserved (`bhosts -l`'s Reserved `mem`).
    #[serde(default)]
    pub mem_reserved: u64,
    /// A condensed compute unit's row (CONDENSED = Y): its hosts, whose
    /// figures it sums; empty for a host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
}

/// A backfill window (`bslots`): `slots` slots for a job of at most
/// `runtime` seconds (`None`: unlimited), on these hosts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotWindow {
    pub slots: u32,
    pub runtime: Option<u64>,
    pub hosts: Vec<(String, u32)>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Response {
    Submitted {
        job: u64,
        queue: String,
        /// What the submitter should know of the job as accepted (a mail
        /// that cannot be sent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        warning: Option<String>,
    },
    Jobs(Vec<JobInfo>),
    /// `bjobs -A`: the arrays a [`JobQuery`] with `summary` lists.
    Arrays(Vec<crate::ArrayCount>),
    /// Part of a long job list: more frames follow, the last a `Jobs`.
    /// [`crate::Client::call`] joins them, so callers see one `Jobs`.
    JobsPart(Vec<JobInfo>),
    /// Per job: `Ok(())` or why not.
    Each(Vec<(JobRef, Result<(), String>)>),
    Queues(Vec<QueueInfo>),
    Hosts(Vec<HostInfo>),
    HostLoads(Vec<crate::hosts::HostLoad>),
    Slots(Vec<SlotWindow>),
    /// The new configuration is running; its warnings, one per line.
    Reconfigured {
        warnings: String,
    },
    /// `bpeek`: the job and its output so far.
    Peek {
        job: JobRef,
        output: String,
    },
    /// `bhist`: each job's events, oldest first.
    History(Vec<JobHistory>),
    Shares(Vec<PolicyShares>),
    Associations(LiveAssociations),
    Priorities(LivePriorities),
    Groups(Vec<GroupInfo>),
    Users(Vec<UserInfo>),
    Limits(Vec<LimitInfo>),
    /// `bjgroup`'s groups, or the groups `bgdel` deleted.
    JobGroups(Vec<crate::job_groups::JobGroupInfo>),
    SharedResources(Vec<SharedResourceInfo>),
    /// `Explain`: the engine's explanation (`allot_engine::explain::
    /// Explanation`), as JSON: the engine's type does not cross the wire.
    Explained(serde_json::Value),
    Cluster(Box<crate::cluster::ClusterInfo>),
    Acct(Box<crate::acct::AcctAnswer>),
    /// `Attach`: the job's terminal is relayed from now on (`pty`: on a
    /// pseudo-terminal of its host).
    TermStarted {
        pty: bool,
    },
    /// `Attach`: what the job wrote (to its standard error when `stderr`).
    TermOutput {
        stderr: bool,
        data: Vec<u8>,
    },
    /// `Attach`: the relay is over (the job's terminal closed, or the job
    /// ended); the last frame.
    TermClosed,
    Done,
    /// The request was refused; the message says why, and nothing changed.
    Error(String),
    /// A submission refused for now, nothing of it kept: a pending
    /// threshold is reached (MAX_PEND_JOBS, MAX_PEND_SLOTS). `bsub` sends
    /// it again after `retry_after` seconds (SUB_TRY_INTERVAL), as LSF's
    /// does.
    Later {
        why: String,
        retry_after: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Envelope;

    #[test]
    fn messages_round_trip_as_json() {
        let req = Envelope {
            version: 1,
            body: Request::Submit(Box::new(Submit {
                submission: crate::Submission { slots: 4, queue: Some("normal".into()), ..Default::default() },
                command: "sleep 1".into(),
                cwd: "/tmp".into(),
                ..Submit::default()
            })),
        };
        let text = serde_json::to_string(&req).expect("json");
        let back: Envelope<Request> = serde_json::from_str(&text).expect("parse");
        assert_eq!(back, req);
        let changes = Changes { run_limit: Some(None), project: Some(Some("p".into())), ..Changes::default() };
        let back: Changes = serde_json::from_str(&serde_json::to_string(&changes).expect("json")).expect("parse");
        assert_eq!(back, changes, "`Some(None)` (bmod -Wn) survives the wire");
        let resp = Response::Each(vec![
            (JobRef::job(3), Ok(())),
            (JobRef { id: 4, index: 2 }, Err("Job <4[2]>: Not owner".into())),
        ]);
        let back: Response = serde_json::from_str(&serde_json::to_string(&resp).expect("json")).expect("parse");
        assert_eq!(back, resp);
    }

    #[test]
    fn unknown_requests_are_errors_not_panics() {
        assert!(serde_json::from_str::<Envelope<Request>>(r#"{"version":1,"body":{"Explode":{}}}"#).is_err());
        assert!(serde_json::from_str::<Envelope<Request>>(r#"{"version":1}"#).is_err());
    }
}
