//! What the engine is configured with and what a submission asks for:
//! plain data, built by `allot-config` from the configuration files.

use std::collections::BTreeMap;

use crate::resreq::{ResReq, Resource};
use crate::shares::{FairshareSet, GroupTable};

/// A host: its job slots (MXJ, or its CPUs), CPUs, and what resource
/// requirements read of it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostSpec {
    pub name: String,
    pub slots: u32,
    pub cpus: u32,
    pub attrs: HostAttrs,
}

impl HostSpec {
    /// A host with no type, model, memory or resources given.
    pub fn new(name: impl Into<String>, slots: u32, cpus: u32) -> Self {
        HostSpec { name: name.into(), slots, cpus, attrs: HostAttrs::default() }
    }
}

/// What `select`, `order`, `same` and `rusage` read of a host
/// ([`crate::resreq`]).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostAttrs {
    pub host_type: Option<String>,
    pub model: Option<String>,
    /// Memory, MB; `None` when not known (such a host satisfies no
    /// `rusage[mem=...]` and no comparison on `mem` or `maxmem`).
    pub maxmem: Option<u64>,
    /// Boolean, numeric and string resources, by name.
    pub resources: BTreeMap<String, Resource>,
}

/// PROCLIMIT = [minimum [default]] maximum (spec 004, "Limiting the Number
/// of Processors Allocated"), already checked: 1 <= min <= default <= max.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcLimit {
    pub min: u32,
    pub default: u32,
    pub max: u32,
}

/// Per-queue job slot limits (spec 000/`lsb.queues`): UJOB_LIMIT per user,
/// PJOB_LIMIT per processor of each host, QJOB_LIMIT for the queue,
/// HJOB_LIMIT per host.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QueueLimits {
    pub ujob: Option<u32>,
    pub pjob: Option<f64>,
    pub qjob: Option<u32>,
    pub hjob: Option<u32>,
    /// MAX_PEND_JOBS and MAX_PEND_SLOTS of the queue, all its users'
    /// pending jobs together ([`crate::pend_limits`]).
    pub pend: crate::pend_limits::PendLimit,
}

/// RUNLIMIT = [default] maximum, in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunLimitSpec {
    pub default: Option<u64>,
    pub max: u64,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QueueSpec {
    pub name: String,
    pub priority: i32,
    /// USERS: user and group names; `None` is all users.
    pub users: Option<Vec<String>>,
    /// HOSTS, resolved to host names; `None` is all hosts (an empty list
    /// is none: `HOSTS = none`, or only names this cluster lacks).
    pub hosts: Option<Vec<String>>,
    /// The queue-level fairshare policy this queue belongs to (its own, or
    /// its cross-queue set's), by policy name.
    pub policy: Option<String>,
    /// DISPATCH_ORDER=QUEUE in the queue's cross-queue set.
    pub dispatch_order_queue: bool,
    pub limits: QueueLimits,
    pub run_limit: Option<RunLimitSpec>,
    /// JOB_ACCEPT_INTERVAL, in MBD_SLEEP_TIME intervals.
    pub job_accept_interval: Option<u32>,
    /// SLOT_POOL and SLOT_SHARE (percent).
    pub slot_pool: Option<(String, u32)>,
    pub proclimit: Option<ProcLimit>,
    /// RES_REQ.
    pub res_req: Option<ResReq>,
    /// EXCLUSIVE=CU[type]: jobs may ask `cu[excl]` for compute units of
    /// this type or a finer one.
    pub exclusive_cu: Option<String>,
    /// The `name!` entries of HOSTS, as hosts: first execution host
    /// candidates for every job of the queue that names none itself.
    pub first_hosts: Vec<String>,
    /// SLOT_RESERVE or RESOURCE_RESERVE = MAX_RESERVE_TIME[n]: how a
    /// pending job of this queue reserves what it needs ([`crate::reserve`]).
    pub reserve: Option<Reserve>,
    /// How the queue's reservations are planned: time-based slot
    /// reservation (`LSB_TIME_RESERVE_NUMJOBS`) or the allocation
    /// planner's PLAN ([`crate::plan`]); `None`, greedy reservation.
    #[serde(default)]
    pub plan: Option<Plan>,
    /// BACKFILL=Y: jobs of this queue with a run limit may use slots and
    /// memory reserved by others until the reservation needs them.
    pub backfill: bool,
    /// INTERRUPTIBLE_BACKFILL=seconds, in a queue with BACKFILL and a
    /// RUNLIMIT (without them it is disabled, and this is `None`): the
    /// shortest time a reserved resource must stay unneeded for a job of
    /// this queue to backfill it, its run limit then cut to end before the
    /// reservation needs it (spec 004, "Using interruptible backfill").
    pub interruptible: Option<u64>,
    /// REQUEUE_EXIT_VALUES, with the EXCLUDE(...) codes: a job of this
    /// queue that ends with one of these goes back to pending.
    pub requeue_exit: Vec<i32>,
    /// EXCLUSIVE=Y (or CU[...]): the queue takes `bsub -x` jobs.
    pub exclusive: bool,
    /// PREEMPTION ([`crate::preempt`]).
    pub preemption: PreemptionSpec,
    /// MAX_JOB_PREEMPT of the queue (over lsb.params').
    pub max_job_preempt: Option<u32>,
}

/// A queue's PREEMPTION: `PREEMPTIVE[q[+pref] ...]`, `PREEMPTABLE[q ...]`;
/// `None`, not said; an empty list, every queue of lower (higher)
/// priority.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PreemptionSpec {
    pub preemptive: Option<Vec<(String, Option<u32>)>>,
    pub preemptable: Option<Vec<String>>,
}

/// A time as NO_PREEMPT_RUN_TIME and NO_PREEMPT_FINISH_TIME give it:
/// seconds, or a share of the job's run time estimate (else run limit).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum PreemptTime {
    Seconds(u64),
    Percent(f64),
}

/// PREEMPT_FOR and the other preemption parameters of `lsb.params`: how
/// the jobs to preempt are chosen ([`crate::preempt`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PreemptFor {
    /// MAX_JOB_PREEMPT: a job preempted so many times is not preempted
    /// again (a queue's own wins).
    pub max_job_preempt: Option<u32>,
    /// NO_PREEMPT_RUN_TIME: a job that has run this long is not preempted.
    pub no_preempt_run_time: Option<PreemptTime>,
    /// NO_PREEMPT_FINISH_TIME: nor one that ends within this.
    pub no_preempt_finish_time: Option<PreemptTime>,
    /// PREEMPT_JOBTYPE = BACKFILL: jobs that backfilled reserved slots may
    /// be preempted.
    pub backfill_jobs: bool,
    /// MINI_JOB: a preempted job's slots count in full, so no more jobs
    /// are preempted than it takes.
    pub mini_job: bool,
    /// OPTIMAL_MINI_JOB: as MINI_JOB, the jobs freeing most slots where
    /// they are needed first: the fewest jobs preempted.
    pub optimal_mini_job: bool,
    /// LEAST_RUN_TIME: the job that has run the shortest time first.
    pub least_run_time: bool,
}

/// A queue's reservation policy (spec 004, "Reserving Processors",
/// "Reserving Memory for Pending Parallel Jobs").
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reserve {
    /// MAX_RESERVE_TIME[n]: n MBD_SLEEP_TIME cycles.
    pub cycles: u32,
    /// RESOURCE_RESERVE (memory and slots, for sequential and parallel
    /// jobs), not SLOT_RESERVE (slots, for parallel jobs).
    pub memory: bool,
}

/// A queue's planned reservation ([`crate::plan`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Plan {
    /// PLAN = DELAY[minutes], in seconds: how long after its submission a
    /// job waits before it may plan.
    pub delay: u64,
    /// PLAN = MAX_JOBS[n] of the queue: at most this many of its jobs hold
    /// a plan at once (the cluster's own is
    /// [`EngineConfig::plan_max_jobs`]).
    pub max_jobs: Option<u32>,
    /// Every job may plan (the planner's PLAN replaces SLOT_RESERVE and
    /// RESOURCE_RESERVE), not only those the queue's reservation policy
    /// reserves for (time-based slot reservation).
    pub every_job: bool,
}

impl Reserve {
    /// MAX_RESERVE_TIME of a planner's queue: a plan lives until its job
    /// starts (LSF ignores the old reservation parameters under
    /// ALLOCATION_PLANNER).
    pub const NEVER: u32 = u32::MAX;
}

impl QueueSpec {
    /// Whether sequential jobs of the queue plan too ([`Plan::every_job`]).
    pub fn plans_every_job(&self) -> bool {
        self.plan.is_some_and(|p| p.every_job)
    }

    /// JOB_ACCEPT_INTERVAL when it holds hosts back: set and not 0.
    pub fn accept_interval(&self) -> Option<u32> {
        self.job_accept_interval.filter(|&n| n > 0)
    }

    /// An FCFS queue over all hosts, with no limits.
    pub fn new(name: impl Into<String>, priority: i32) -> Self {
        QueueSpec {
            name: name.into(),
            priority,
            users: None,
            hosts: None,
            policy: None,
            dispatch_order_queue: false,
            limits: QueueLimits::default(),
            run_limit: None,
            job_accept_interval: None,
            slot_pool: None,
            proclimit: None,
            res_req: None,
            exclusive_cu: None,
            first_hosts: Vec::new(),
            reserve: None,
            plan: None,
            backfill: false,
            interruptible: None,
            requeue_exit: Vec::new(),
            exclusive: false,
            preemption: PreemptionSpec::default(),
            max_job_preempt: None,
        }
    }
}

/// Everything the engine schedules with.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct EngineConfig {
    pub hosts: Vec<HostSpec>,
    /// Queues in configuration order.
    pub queues: Vec<QueueSpec>,
    pub fairshare: FairshareSet,
    pub groups: GroupTable,
    /// MBD_SLEEP_TIME, seconds.
    pub mbd_sleep_time: u32,
    /// LSB_TIME_RESERVE_NUMJOBS, or the cluster's PLAN = MAX_JOBS[n]: at
    /// most this many jobs hold a plan at once ([`crate::plan`]).
    #[serde(default)]
    pub plan_max_jobs: Option<u32>,
    /// HIST_HOURS: how fast slot pools forget a queue's slot usage (1 hour
    /// of use is worth 0.1 hour after HIST_HOURS).
    pub hist_hours: f64,
    /// DEFAULT_QUEUE: where a job that names no queue goes (the first).
    pub default_queues: Vec<String>,
    /// MAX_JOBS of `lsb.users`: job slots a user may hold at once.
    pub user_max_jobs: BTreeMap<String, u32>,
    /// MAX_PEND_JOBS and MAX_PEND_SLOTS of `lsb.users`' User section and
    /// of `lsb.params` (the whole cluster's), and SUB_TRY_INTERVAL: how
    /// long a submission refused by one waits to be sent again
    /// ([`crate::pend_limits`]).
    pub user_pend_limits: crate::pend_limits::UserPendLimits,
    pub pend_limits: crate::pend_limits::PendLimit,
    pub sub_try_interval: u32,
    /// MAX_JOB_ARRAY_SIZE: the most elements a job array may have (1000).
    pub max_job_array_size: u32,
    /// MAX_USER_PRIORITY: user-assigned job priorities (`bsub -sp`) from 1
    /// to this; none, not enabled.
    pub max_user_priority: Option<u32>,
    /// PARALLEL_SCHED_BY_SLOT=Y: a parallel job may take as many slots on a
    /// host as it has free, not only as many as it has CPUs.
    pub parallel_sched_by_slot: bool,
    /// RESOURCE_RESERVE_PER_SLOT=y: `rusage[mem=n]` is per slot, not per
    /// host.
    pub resource_reserve_per_slot: bool,
    /// COMPUTE_UNIT_TYPES, finest first, and the default type (the one
    /// marked `!`, else the first).
    pub compute_unit_types: Vec<String>,
    pub default_compute_unit_type: Option<String>,
    /// The ComputeUnit section, in its order.
    pub compute_units: Vec<ComputeUnitSpec>,
    /// Host groups, each with its hosts (for `bsub -m`).
    pub host_groups: BTreeMap<String, Vec<String>>,
    /// Application profiles (`lsb.applications`, `bsub -app`): RUNLIMIT
    /// and RUNTIME, seconds, for jobs that give no `-W` or `-We`.
    pub applications: BTreeMap<String, AppSpec>,
    /// A multifactor priority policy (`[priority] policy` other than
    /// `lsf`): every queue's jobs in one order, by spec 002's weighted
    /// factors ([`crate::multifactor`]).
    pub multifactor: Option<MultifactorSpec>,
    /// The fairshare adjustment (spec 000, "Fairshare adjustment plugin"):
    /// the memory-based example's THRESHOLD, from `[fairshare] adjustment
    /// = "memory"` and `memory_threshold` in `allot.toml`; `None`, the
    /// adjustment recorded with the usage. Weighted by each tree's
    /// FAIRSHARE_ADJUSTMENT_FACTOR.
    pub memory_adjustment: Option<f64>,
    pub preempt_for: PreemptFor,
    /// `lsb.resources`' Limit sections ([`crate::alloc_limits`]).
    pub alloc_limits: Vec<crate::alloc_limits::LimitSpec>,
    /// Site resources shared by several hosts, and the resources a job may
    /// not ask in `rusage` ([`crate::shared_res`]).
    pub shared_resources: Vec<crate::shared_res::SharedSpec>,
    pub not_consumable: Vec<String>,
}

/// What the multifactor policies schedule with.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MultifactorSpec {
    pub policy: crate::multifactor::FairsharePolicy,
    pub tree: crate::multifactor::AccountTree,
    pub params: crate::multifactor::priority::PriorityParams,
    /// Seconds; 0: usage does not decay.
    pub half_life: u64,
    pub reset: crate::multifactor::ledger::ResetPeriod,
    pub billing: crate::multifactor::ledger::Billing,
    /// The LSF fairshare policy whose share tree the associations were
    /// made from (no `[priority] accounts` file): a user it places by
    /// `default` at their first submission gets an association then
    /// ([`crate::Engine`]'s `mf_place`). `None`: the account file's
    /// associations are all there are.
    pub from_policy: Option<String>,
}

/// What allot takes from an application profile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AppSpec {
    pub run_limit: Option<u64>,
    pub runtime: Option<u64>,
    /// PROCLIMIT of the profile: it binds the profile's jobs as a queue's
    /// does, within their queue's ([`crate::Engine`]'s admission).
    pub proclimit: Option<ProcLimit>,
    /// RESIZABLE_JOBS: its jobs' allocations may shrink (`Yes`), and grow
    /// by themselves (`Auto`, or `Yes` with `bsub -ar`).
    pub resizable: Option<Resizable>,
}

/// RESIZABLE_JOBS = Y | auto.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Resizable {
    Yes,
    Auto,
}

/// A compute unit: its type and its hosts (a coarser unit's are those of
/// the units it contains), in the order the configuration lists them.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ComputeUnitSpec {
    pub name: String,
    pub cu_type: String,
    pub hosts: Vec<String>,
    /// CONDENSED = Y: `bhosts` shows the unit as one row, not its hosts.
    pub condensed: bool,
}

impl EngineConfig {
    /// One queue `normal` over `hosts`, FCFS or with
    /// `FAIRSHARE = USER_SHARES[[default, 1]]`, and the defaults of
    /// `lsb.params`: what allot runs on when given no configuration.
    pub fn one_queue(hosts: Vec<HostSpec>, fairshare: bool) -> Self {
        use crate::shares::{LsfFactors, PolicyState, Scope, ShareAssignment, ShareTarget, ShareTree};
        let mut queue = QueueSpec::new("normal", 30);
        let mut set = FairshareSet::default();
        if fairshare {
            queue.policy = Some("normal".into());
            let top = [ShareAssignment::new(ShareTarget::Default, 1)];
            let tree =
                ShareTree::new("normal", &top, GroupTable::default(), LsfFactors::default(), Vec::<String>::new());
            set.policies.push(PolicyState { scope: Scope::Queues(vec!["normal".into()]), tree });
        }
        let factors = LsfFactors::default();
        EngineConfig {
            hosts,
            queues: vec![queue],
            fairshare: set,
            groups: GroupTable::default(),
            mbd_sleep_time: 60,
            plan_max_jobs: None,
            hist_hours: factors.hist_hours,
            default_queues: vec!["normal".into()],
            user_max_jobs: BTreeMap::new(),
            user_pend_limits: Default::default(),
            pend_limits: Default::default(),
            sub_try_interval: 60,
            max_job_array_size: 1000,
            max_user_priority: None,
            parallel_sched_by_slot: false,
            resource_reserve_per_slot: false,
            compute_unit_types: Vec::new(),
            default_compute_unit_type: None,
            compute_units: Vec::new(),
            host_groups: BTreeMap::new(),
            applications: BTreeMap::new(),
            multifactor: None,
            memory_adjustment: None,
            preempt_for: PreemptFor::default(),
            alloc_limits: Vec::new(),
            shared_resources: Vec::new(),
            not_consumable: Vec::new(),
        }
    }
}

/// A submission as the engine sees it (after the command's options are
/// parsed).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JobSpec {
    pub user: String,
    /// `-q`; `None`: the first DEFAULT_QUEUE that takes the job.
    pub queue: Option<String>,
    /// `-n min`; 0 when `-n` is not given: the queue's PROCLIMIT default
    /// (its minimum when it has no default), else 1.
    pub slots: u32,
    /// `-n min,max`: the most slots the job takes when more are free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_slots: Option<u32>,
    /// `-R`, parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub res_req: Option<ResReq>,
    /// `-m`: the hosts the job may run on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostPick>,
    /// `-W`, seconds.
    pub run_limit: Option<u64>,
    /// `-We`: the estimated run time, seconds (LSF's RUNTIME): what
    /// scheduling counts on, never enforced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_estimate: Option<u64>,
    /// `-G`: the user group to charge through.
    pub group: Option<String>,
    /// `-w`, its job names resolved to the jobs of that name.
    #[serde(default)]
    pub depends: Option<crate::deps::Dependency<crate::job_set::JobSet>>,
    /// `-J "name[...]%limit"`: the submission is a job array of this shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<ArrayShape>,
    /// `-sp`: the user-assigned job priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// `-t`: the termination deadline, seconds on the engine's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term_time: Option<u64>,
    /// `-c`: the CPU limit, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_limit: Option<u64>,
    /// `-app`: the application profile whose RUNLIMIT and RUNTIME apply
    /// where `-W` and `-We` are not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// `-x`: exclusive execution: the job starts only on hosts where
    /// nothing runs, and nothing else starts on them while it runs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclusive: bool,
    /// `-qos`: the QoS level under a multifactor policy (`normal` when
    /// not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos: Option<String>,
    /// `-uf`: the user factor of the multifactor priority, 0 to 1 (1 when
    /// not given): the owner lowers their job's priority with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_factor: Option<f64>,
    /// `-P`: the project; under a multifactor policy it names the account
    /// to charge when `-G` does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// `-g`: the job group (a path from `/`; [`crate::job_groups`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_group: Option<String>,
    /// `-ar`: autoresizable (its application profile must be resizable;
    /// [`crate::resize`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_resize: bool,
    /// `-H`: submitted held (PSUSP) until released (`bresume`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hold: bool,
    /// `-b`: not dispatched before this time (seconds since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub begin_time: Option<u64>,
}

/// A job array as the engine sees it: how many elements (they take
/// consecutive job ids, in index order) and how many may run at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArrayShape {
    pub size: u32,
    pub limit: Option<u32>,
}

/// One entry of `bsub -m`: a host, host group or compute unit; `name!`
/// makes its hosts first execution host candidates, `name+n` gives them
/// preference `n` (higher first).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostPick {
    pub name: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preference: Option<u32>,
}
