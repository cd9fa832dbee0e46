//! The configuration as allot uses it, after reading and validation.

use allot_engine::shares::{GroupTable, LsfFactors, ShareAssignment};
use std::collections::BTreeMap;

use crate::diag::Location;
pub use crate::lsf::values::{Exclusive, Preemption, RequeueExitValues, RunLimitValue};

/// `lsb.params` (and LSB_NCPU_ENFORCE from `lsf.conf`), with the spec's
/// defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub factors: LsfFactors,
    /// MBD_SLEEP_TIME (60 s): the scheduling interval that reservation
    /// times count in.
    pub mbd_sleep_time: u32,
    /// CLEAN_PERIOD (3600 s): how long finished jobs stay in the system
    /// (`bjobs -a`) after they end.
    pub clean_period: u64,
    /// JOB_TERMINATE_INTERVAL (10 s): between the SIGINT, SIGTERM and
    /// SIGKILL that end a job at a limit.
    pub job_terminate_interval: u64,
    /// MAX_JOB_NUM (1000, LSF's where lsb.params does not set it; the
    /// tree `allot start` writes sets LSF's installed 10000): the finished
    /// jobs the event log holds before allotd archives what a snapshot of
    /// the state holds (`allot_store`'s `archive`), as LSF switches
    /// `lsb.events`. 0: never archived.
    pub max_job_num: u64,
    /// MAX_PREEXEC_RETRY (5): how many times a job's pre-execution
    /// command (`bsub -E`) is tried before the job is held. 5 is LSF 9's
    /// default; LSF 10's is unlimited, with which a command that always
    /// fails would have the job dispatched, and logged, for ever.
    pub max_preexec_retry: u32,
    pub default_queue: Vec<String>,
    pub parallel_sched_by_slot: bool,
    pub resource_reserve_per_slot: bool,
    pub preempt_for: Vec<String>,
    /// COMPUTE_UNIT_TYPES, finest first.
    pub compute_unit_types: Vec<String>,
    /// The default compute unit type (the one marked `!`, else the first).
    pub default_compute_unit_type: Option<String>,
    /// LSB_NCPU_ENFORCE=1: parallel fairshare for queue-level fairshare.
    pub ncpu_enforce: bool,
    /// ALLOCATION_PLANNER=Y: reservations are planned, the queues'
    /// SLOT_RESERVE and RESOURCE_RESERVE ignored, and PLAN applies.
    pub allocation_planner: bool,
    /// PLAN of `lsb.params`: the cluster's, for queues without their own.
    pub plan: Option<crate::lsf::values::PlanValue>,
    /// LSB_TIME_RESERVE_NUMJOBS of `lsf.conf`: time-based slot
    /// reservation for so many jobs at most.
    pub time_reserve_numjobs: Option<u32>,
    /// MAX_JOB_ARRAY_SIZE (1000): the most elements of a job array, and
    /// its largest index.
    pub max_job_array_size: u32,
    /// MAX_USER_PRIORITY: enables `bsub -sp` with priorities 1 to this.
    pub max_user_priority: Option<u32>,
    /// MAX_PEND_JOBS and MAX_PEND_SLOTS: the whole cluster's pending jobs
    /// and their slots; SUB_TRY_INTERVAL (60 s): how long `bsub` waits
    /// before sending again a submission refused by a pending threshold.
    pub max_pend_jobs: Option<u32>,
    pub max_pend_slots: Option<u32>,
    pub sub_try_interval: u32,
    /// JOB_ACCEPT_INTERVAL of lsb.params: the queues' that set none
    /// (spec 004: "in lsb.params or lsb.queues"; a queue's own wins, as
    /// LSF's queue parameters override the cluster's).
    pub job_accept_interval: Option<u32>,
    /// MAX_JOB_PREEMPT, NO_PREEMPT_RUN_TIME, NO_PREEMPT_FINISH_TIME and
    /// PREEMPT_JOBTYPE's BACKFILL.
    pub max_job_preempt: Option<u32>,
    pub no_preempt_run_time: Option<allot_engine::model::PreemptTime>,
    pub no_preempt_finish_time: Option<allot_engine::model::PreemptTime>,
    pub preempt_backfill: bool,
    /// Where each parameter was set.
    pub keys: BTreeMap<String, Location>,
}

/// MAX_PREEXEC_RETRY when lsb.params does not set it.
pub const DEFAULT_MAX_PREEXEC_RETRY: u32 = 5;

impl Params {
    /// Where `key` is set in `lsb.params`, else the file's start (a
    /// parameter left at its default).
    pub fn loc_of(&self, key: &str) -> Location {
        self.keys.get(key).cloned().unwrap_or(Location { file: "lsb.params".into(), line: 1, col: 1 })
    }
}

impl Default for Params {
    fn default() -> Self {
        Params {
            factors: LsfFactors::default(),
            mbd_sleep_time: 60,
            clean_period: 3600,
            job_terminate_interval: 10,
            max_job_num: DEFAULT_MAX_JOB_NUM,
            max_preexec_retry: DEFAULT_MAX_PREEXEC_RETRY,
            default_queue: Vec::new(),
            parallel_sched_by_slot: false,
            resource_reserve_per_slot: false,
            preempt_for: Vec::new(),
            compute_unit_types: Vec::new(),
            default_compute_unit_type: None,
            ncpu_enforce: false,
            allocation_planner: false,
            plan: None,
            time_reserve_numjobs: None,
            max_job_array_size: crate::array::DEFAULT_MAX_ARRAY_SIZE,
            max_user_priority: None,
            max_pend_jobs: None,
            max_pend_slots: None,
            sub_try_interval: 60,
            job_accept_interval: None,
            max_job_preempt: None,
            no_preempt_run_time: None,
            no_preempt_finish_time: None,
            preempt_backfill: false,
            keys: BTreeMap::new(),
        }
    }
}

/// One entry of a HOSTS list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostRef {
    /// A host, a host group, `all`, or `others`.
    pub name: String,
    pub exclude: bool,
    /// `name!`: a first execution host candidate.
    pub first_exec: bool,
    pub preference: Option<u32>,
}

/// PROCLIMIT = [minimum [default]] maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcLimit {
    pub min: u32,
    pub default: u32,
    pub max: u32,
}

/// RUNLIMIT = [default] maximum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLimit {
    pub default: Option<RunLimitValue>,
    pub max: RunLimitValue,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Queue {
    pub name: String,
    pub loc: Location,
    pub priority: i32,
    /// NICE: the scheduling priority its jobs run at (`nice` value).
    pub nice: i32,
    /// JOB_STARTER, as written: the command its jobs run under, the job's
    /// own at `%USRCMD` or after it.
    pub job_starter: Option<String>,
    pub description: String,
    /// USERS: user and group names; empty means all users.
    pub users: Vec<String>,
    /// HOSTS: empty means all hosts.
    pub hosts: Vec<HostRef>,
    pub fairshare: Option<Vec<ShareAssignment>>,
    pub fairshare_queues: Vec<String>,
    /// DISPATCH_ORDER=QUEUE.
    pub dispatch_order_queue: bool,
    pub slot_pool: Option<String>,
    pub slot_share: Option<u32>,
    pub proclimit: Option<ProcLimit>,
    pub runlimit: Option<RunLimit>,
    pub backfill: bool,
    /// SLOT_RESERVE = MAX_RESERVE_TIME[n], in MBD_SLEEP_TIME cycles.
    pub slot_reserve: Option<u32>,
    pub resource_reserve: Option<u32>,
    /// PLAN of the queue (over `lsb.params`' under ALLOCATION_PLANNER).
    pub plan: Option<crate::lsf::values::PlanValue>,
    pub interruptible_backfill: Option<u32>,
    pub res_req: Option<allot_engine::ResReq>,
    pub exclusive: Exclusive,
    pub ujob_limit: Option<u32>,
    pub pjob_limit: Option<f64>,
    pub qjob_limit: Option<u32>,
    pub hjob_limit: Option<u32>,
    /// MAX_PEND_JOBS and MAX_PEND_SLOTS: the queue's pending jobs and
    /// their slots, all users' together.
    pub max_pend_jobs: Option<u32>,
    pub max_pend_slots: Option<u32>,
    pub preemption: Preemption,
    pub requeue_exit_values: RequeueExitValues,
    pub job_accept_interval: Option<u32>,
    /// JOB_WARNING_ACTION (a signal's name) and JOB_ACTION_WARNING_TIME
    /// (seconds): the warning a job gets before its run limit unless it
    /// asked for its own (`bsub -wa -wt`).
    pub job_warning_action: Option<String>,
    pub job_action_warning_time: Option<u64>,
    /// RERUNNABLE: its jobs lost with their host go back to pending
    /// (unless submitted with `bsub -rn`).
    pub rerunnable: bool,
    /// MAX_JOB_PREEMPT (over lsb.params').
    pub max_job_preempt: Option<u32>,
    /// Where each parameter was set, for later cross-file checks.
    pub keys: BTreeMap<String, Location>,
}

impl Queue {
    pub fn new(name: String, loc: Location) -> Self {
        Queue {
            name,
            loc,
            priority: 1,
            nice: 0,
            job_starter: None,
            description: String::new(),
            users: Vec::new(),
            hosts: Vec::new(),
            fairshare: None,
            fairshare_queues: Vec::new(),
            dispatch_order_queue: false,
            slot_pool: None,
            slot_share: None,
            proclimit: None,
            runlimit: None,
            backfill: false,
            slot_reserve: None,
            resource_reserve: None,
            plan: None,
            interruptible_backfill: None,
            res_req: None,
            exclusive: Exclusive::No,
            ujob_limit: None,
            pjob_limit: None,
            qjob_limit: None,
            hjob_limit: None,
            max_pend_jobs: None,
            max_pend_slots: None,
            preemption: Preemption::default(),
            requeue_exit_values: RequeueExitValues::default(),
            job_accept_interval: None,
            job_warning_action: None,
            rerunnable: false,
            max_job_preempt: None,
            job_action_warning_time: None,
            keys: BTreeMap::new(),
        }
    }

    /// Where parameter `key` was set, or the queue's own location.
    pub fn loc_of(&self, key: &str) -> Location {
        self.keys.get(key).cloned().unwrap_or_else(|| self.loc.clone())
    }
}

/// An application profile of `lsb.applications`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Application {
    pub name: String,
    pub description: String,
    /// RUNLIMIT, seconds: the run limit of its jobs without `-W`.
    pub runlimit: Option<u64>,
    /// RUNTIME, seconds: the run time estimate of its jobs without `-We`.
    pub runtime: Option<u64>,
    /// PROCLIMIT: binds its jobs within their queue's.
    pub proclimit: Option<ProcLimit>,
    /// RESIZABLE_JOBS = Y | auto (N: `None`).
    pub resizable: Option<allot_engine::model::Resizable>,
    /// RESIZE_NOTIFY_CMD: run on a resized job's first execution host
    /// (`bsub -rnc` overrides it).
    pub resize_notify_cmd: Option<String>,
}

/// `lsb.users` User section row.
#[derive(Clone, Debug, PartialEq)]
pub struct UserLimits {
    pub name: String,
    pub max_jobs: Option<u32>,
    pub jl_p: Option<f64>,
    /// MAX_PEND_JOBS and MAX_PEND_SLOTS.
    pub max_pend_jobs: Option<u32>,
    pub max_pend_slots: Option<u32>,
}

/// A host: from `lsb.hosts`, `lsf.cluster.<name>` or `allot.toml`.
#[derive(Clone, Debug, PartialEq)]
pub struct Host {
    pub name: String,
    pub loc: Location,
    /// CPUs; when no file gives them, the host's MXJ.
    pub ncpus: Option<u32>,
    /// MXJ; `None` when unlimited or not given.
    pub mxj: Option<u32>,
    /// Maximum memory, MB.
    pub maxmem: Option<u64>,
    pub host_type: Option<String>,
    pub model: Option<String>,
    pub booleans: Vec<String>,
    pub numbers: BTreeMap<String, f64>,
    pub strings: BTreeMap<String, String>,
}

impl Host {
    pub fn new(name: String, loc: Location) -> Self {
        Host {
            name,
            loc,
            ncpus: None,
            mxj: None,
            maxmem: None,
            host_type: None,
            model: None,
            booleans: Vec::new(),
            numbers: BTreeMap::new(),
            strings: BTreeMap::new(),
        }
    }

    /// CPUs as allot counts them: the `ncpus` given, otherwise MXJ,
    /// otherwise 1.
    pub fn cpus(&self) -> u32 {
        self.ncpus.or(self.mxj).unwrap_or(1)
    }

    /// Job slots: MXJ, otherwise the CPU count.
    pub fn slots(&self) -> u32 {
        self.mxj.unwrap_or_else(|| self.cpus())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct HostGroup {
    pub name: String,
    pub loc: Location,
    /// Members as written (hosts, groups, `~excluded`, `all`), ranges expanded.
    pub members: Vec<HostRef>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HostPartition {
    pub name: String,
    pub loc: Location,
    pub hosts: Vec<HostRef>,
    pub shares: Vec<ShareAssignment>,
    /// Where USER_SHARES was set (the partition's location without it).
    pub shares_loc: Location,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ComputeUnit {
    pub name: String,
    pub loc: Location,
    pub members: Vec<String>,
    pub cu_type: String,
    pub condensed: bool,
}

/// allot's own settings (`allot.toml`).
#[derive(Clone, Debug, PartialEq)]
pub struct AllotSettings {
    /// The priority policy: `lsf` (the default), `slurm-classic`,
    /// `slurm-fairtree`, `slurm-tickets` or `flux-accounting`.
    pub policy: String,
    /// Where `[priority] policy` was set.
    pub policy_loc: Option<Location>,
    /// `[priority] accounts`: a `sacctmgr dump` file, as written, and where.
    pub accounts: Option<(String, Location)>,
    /// `[priority] dampening`: slurm-classic's FairShareDampeningFactor.
    pub dampening: f64,
    /// `[priority] half_life`, seconds (0: usage does not decay); one week
    /// unless given, as the Flux document found best.
    pub half_life: u64,
    /// `[priority] reset`: when usage starts again from 0.
    pub usage_reset: allot_engine::multifactor::ledger::ResetPeriod,
    /// `[priority.billing]`: what each resource is billed a second.
    pub billing: allot_engine::multifactor::ledger::Billing,
    /// The job priority's weights, maximum wait, job size direction and
    /// QoS levels.
    pub priority: allot_engine::multifactor::priority::PriorityParams,
    /// Where state lives; `None`: the default state directory.
    pub state_dir: Option<String>,
    /// The fairshare adjustment: none, or the memory-based example.
    pub memory_adjustment_threshold: Option<f64>,
    /// `[daemon] admins`: users who may act on any job and run `badmin`
    /// (besides root and the user allotd runs as).
    pub admins: Vec<String>,
    /// `[daemon] metrics`: where to serve Prometheus metrics.
    pub metrics: Option<std::net::SocketAddr>,
    /// `[daemon] usage_interval`: seconds between measurements of running
    /// jobs' CPU time and memory (10 when not given).
    pub usage_interval: Option<u64>,
    /// `[cluster]`: an agent on every host (see [`crate::cluster`]).
    pub cluster: Option<crate::cluster::ClusterSettings>,
}

impl Default for AllotSettings {
    fn default() -> Self {
        AllotSettings {
            policy: "lsf".into(),
            policy_loc: None,
            accounts: None,
            dampening: 1.0,
            half_life: 7 * 86_400,
            usage_reset: allot_engine::multifactor::ledger::ResetPeriod::None,
            billing: Default::default(),
            priority: Default::default(),
            state_dir: None,
            memory_adjustment_threshold: None,
            admins: Vec::new(),
            metrics: None,
            usage_interval: None,
            cluster: None,
        }
    }
}

/// A whole configuration directory, read and validated.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Config {
    pub params: Params,
    pub queues: Vec<Queue>,
    /// `lsb.applications`: the profiles `bsub -app` names.
    pub applications: Vec<Application>,
    pub groups: GroupTable,
    pub user_limits: Vec<UserLimits>,
    pub hosts: Vec<Host>,
    pub host_groups: Vec<HostGroup>,
    pub partitions: Vec<HostPartition>,
    pub compute_units: Vec<ComputeUnit>,
    /// `lsb.resources`' Limit sections.
    pub resource_limits: Vec<allot_engine::alloc_limits::LimitSpec>,
    /// Numeric resources several hosts share (the cluster file's
    /// ResourceMap), and `lsf.shared`'s resources that are not consumable.
    pub shared_resources: Vec<allot_engine::shared_res::SharedSpec>,
    pub not_consumable: Vec<String>,
    pub settings: AllotSettings,
    /// The associations of `[priority] accounts`, when named.
    pub accounts: Option<allot_engine::multifactor::AccountTree>,
    /// `lsf.conf`'s LSB_MAILPROG: the program jobs' mail goes through.
    pub mail_prog: Option<String>,
    /// The cluster's name, as LSF's `lsf.cluster.<name>` file gives it
    /// (the first, by name, when there are several); `None` without one.
    pub cluster_name: Option<String>,
    /// The hosts whose CPUs (and so job slots) the files do not give:
    /// their agents' count stands (`crate::detected`).
    pub cpus_found_for: Vec<String>,
}

impl Config {
    /// The name the cluster goes by (job reports, `lsid`): its
    /// `lsf.cluster.<name>`'s, else `allot`.
    pub fn cluster_name(&self) -> &str {
        self.cluster_name.as_deref().unwrap_or(DEFAULT_CLUSTER_NAME)
    }
}

/// The name of a cluster whose configuration has no `lsf.cluster.<name>`.
pub const DEFAULT_CLUSTER_NAME: &str = "allot";

/// MAX_JOB_NUM where lsb.params does not set it: LSF's.
pub const DEFAULT_MAX_JOB_NUM: u64 = 1000;
