//! The engine: a state machine driven by events stamped with a time. The
//! driver (daemon or simulator) submits jobs, reports job ends and host
//! changes, and calls [`Engine::schedule`] for decisions, which it carries
//! out. Nothing here knows which driver it is.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::deps::Dependency;
use crate::dispatch::{Unit, build_units};
pub use crate::event::{Event, Setting};
pub(crate) use crate::groups::{Caches, Counters, Scratch, Switches};
use crate::hosts::HostState;
use crate::jobs::JobTable;
use crate::model::{EngineConfig, QueueSpec};
use crate::pools::Accumulated;
use crate::resreq::ResReq;
use crate::shares::{FairshareSet, JobCharge, NodeId, Scope};
use crate::slots::SlotIndex;
use crate::time::Time;

/// A job's number, given in submission order from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JobId(pub u64);

impl JobId {
    /// The job `k` numbers after this one: element `k` of a job array
    /// whose first element this is.
    pub fn offset(self, k: u64) -> JobId {
        JobId(self.0 + k)
    }
}

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A host's number: its place in the configuration's host list, from 0.
/// What the engine's decisions and host events name a host by; the
/// driver turns it into the host's name ([`Engine::host_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HostIdx(pub u32);

impl std::fmt::Display for HostIdx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A number of job slots, where a bare number would not say so: in an
/// allocation's (host, slots) pairs and the engine's answers that pair a
/// count with something else. (A field named `slots` keeps its `u32`.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Slots(pub u32);

impl std::fmt::Display for Slots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::iter::Sum for Slots {
    fn sum<I: Iterator<Item = Slots>>(iter: I) -> Slots {
        Slots(iter.map(|s| s.0).sum())
    }
}

impl From<Slots> for u64 {
    fn from(s: Slots) -> u64 {
        u64::from(s.0)
    }
}

pub use crate::rejection::Rejection;

/// What the driver must do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Decision {
    /// Start the job on these hosts (host index, slots), first host first.
    Start { job: JobId, alloc: Vec<(HostIdx, Slots)> },
    /// Kill the job; its end is reported back as usual.
    Kill { job: JobId, reason: KillReason },
    /// A resizable job grows by these slots (host index, slots): its
    /// pending resize request was met in part or whole
    /// ([`crate::resize`]). The driver runs its notification command and
    /// reports [`Event::GrowFailed`] if it fails.
    Grow { job: JobId, alloc: Vec<(HostIdx, Slots)> },
    /// Suspend the running job (SSUSP): job `by` preempts it
    /// ([`crate::preempt`]). It keeps its slots, which only jobs that
    /// may preempt it use, until it is resumed.
    Suspend { job: JobId, by: JobId },
    /// Resume a job suspended by preemption: its slots are free again.
    Resume { job: JobId },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum KillReason {
    /// It ran past its run limit (`-W` or RUNLIMIT).
    RunLimit,
    /// Its termination deadline (`bsub -t`) came.
    TermTime,
}

/// What a backfill job borrowed from reservations: (lender, host, slots).
pub(crate) type Loans = SmallVec<[(JobId, u32, u32); 1]>;

/// Where a running job runs, (host index, slots) first host first: most
/// jobs use one or two hosts. Inside the engine, host indexes and slot
/// counts are plain numbers that index `hosts` and add up fast; what
/// leaves it names them [`HostIdx`] and [`Slots`] ([`Decision::Start`]).
pub(crate) type Alloc = SmallVec<[(u32, u32); 2]>;

/// The accounts a running job is charged to: almost always one.
pub(crate) type Charges = SmallVec<[(usize, NodeId, JobCharge); 1]>;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum JobState {
    Pending,
    /// `memory`: MB it holds as last measured ([`Event::Memory`]);
    /// `suspended`, since when and by which job it is preempted, and
    /// `paused`, the seconds it spent so before ([`crate::preempt`]).
    Running {
        start: Time,
        alloc: Alloc,
        charges: Charges,
        cpu_reported: f64,
        memory: f64,
        suspended: Option<crate::preempt::Suspension>,
        paused: u64,
    },
}

/// A job the engine holds: pending or running. Finished jobs leave.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Job {
    pub(crate) user: u32,
    pub(crate) queue: usize,
    /// The fewest slots the job starts on, and the most it takes (after
    /// PROCLIMIT); a running job holds what its allocation says.
    pub(crate) slots: u32,
    pub(crate) max_slots: u32,
    /// `-n` as given (none: the queue's PROCLIMIT default), for when the
    /// queue's PROCLIMIT changes.
    pub(crate) asked: Option<(u32, u32)>,
    /// Pending after a reconfiguration whose PROCLIMIT it no longer meets.
    pub(crate) outside_proclimit: bool,
    /// `-R` as given, and the requirement the job is placed by (combined
    /// with its queue's RES_REQ); shared by a job array's elements.
    pub(crate) own_res: Option<Arc<ResReq>>,
    pub(crate) res: Option<Arc<ResReq>>,
    /// `-m` resolved, and the first execution host candidates.
    pub(crate) picks: Option<Arc<crate::placement::Picks>>,
    pub(crate) run_limit: Option<u64>,
    /// The run limit an interruptible backfill start cut the job's to;
    /// gone when it is pending again ([`Engine::job_limit`]).
    pub(crate) backfill_limit: Option<u64>,
    /// `-We` ([`Engine::job_duration`]).
    pub(crate) run_estimate: Option<u64>,
    /// `-x`: exclusive execution.
    pub(crate) exclusive: bool,
    /// `-t` and `-c` ([`Engine::meets_deadline`]).
    pub(crate) term_time: Option<Time>,
    pub(crate) cpu_limit: Option<u64>,
    /// `-G`: the user group to charge through.
    pub(crate) group: Option<String>,
    /// Its application profile (`-app`), whose PROCLIMIT binds it too.
    pub(crate) app: Option<String>,
    /// `-P`: its project ([`crate::alloc_limits`]).
    #[serde(default)]
    pub(crate) project: Option<String>,
    /// `-g`: its job group's path ([`crate::job_groups`]).
    #[serde(default)]
    pub(crate) job_group: Option<String>,
    /// Whether a resource allocation limit that names hosts covers it:
    /// placement looks at each host's room under it.
    #[serde(default)]
    pub(crate) host_limited: bool,
    /// The queue-level policy account, or the partition accounts, the job
    /// may be charged to.
    pub(crate) accounts: Vec<(usize, NodeId)>,
    pub(crate) state: JobState,
    /// A pending job held by its owner or an administrator.
    pub(crate) held: bool,
    /// `bsub -w`, and whether the job waits for it now.
    pub(crate) depends: Option<Dependency<crate::job_set::JobSet>>,
    pub(crate) waiting: bool,
    /// The user-assigned job priority (`bsub -sp`; MAX_USER_PRIORITY / 2
    /// when not given, 0 when job priorities are not enabled).
    pub(crate) priority: u32,
    /// When it was submitted (the multifactor wait time counts from here).
    pub(crate) submitted: Time,
    /// Its association under a multifactor policy, and the account it
    /// named for it (`-G`, else `-P`).
    pub(crate) assoc: Option<crate::multifactor::AssocId>,
    pub(crate) account: Option<String>,
    /// Its multifactor priority and factors at the last pass.
    pub(crate) mf_priority: Option<(f64, crate::multifactor::priority::Factors)>,
    /// Its QoS level's priority and whether the level lifts run-time and
    /// size limits (standby), and its user factor (multifactor only).
    pub(crate) qos: (u32, bool),
    pub(crate) user_factor: f64,
    /// Resizable (RESIZABLE_JOBS), and how it stands ([`crate::resize`]).
    pub(crate) resize: Option<crate::resize::Resize>,
    /// Times its run was preempted (MAX_JOB_PREEMPT).
    pub(crate) preempted: u32,
    /// `-b`: not dispatched before then.
    pub(crate) begin: Option<Time>,
}

impl Job {
    /// Whether placement needs more than free slots in host order: a
    /// resource requirement, hosts named by `-m` or the queue's HOSTS,
    /// `-x`, or a resource allocation limit on some hosts.
    pub(crate) fn constrained(&self) -> bool {
        self.res.is_some() || self.picks.is_some() || self.exclusive || self.host_limited
    }
}

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct QueueState {
    pub(crate) spec: QueueSpec,
    pub(crate) host_set: usize,
    /// Job slots of all the queue's hosts.
    pub(crate) capacity: u64,
    /// HOSTS' first execution host candidates.
    pub(crate) first_hosts: Vec<u32>,
    /// Partition policies the queue's hosts touch, and whether any of its
    /// hosts is in no partition.
    pub(crate) partitions: Vec<usize>,
    pub(crate) outside_partitions: bool,
    pub(crate) policy: Option<usize>,
    pub(crate) used: u32,
    /// Slots in use per user (by user id) in this queue.
    pub(crate) user_used: Vec<u32>,
    pub(crate) pending: u32,
    /// Held pending jobs: not in `pending`.
    pub(crate) held: u32,
    /// Slots of the queue's pending jobs.
    pub(crate) pending_slots: u64,
    /// The slot pool the queue is in, its accumulated slot usage, and its
    /// entitlement in this pass.
    pub(crate) pool: Option<usize>,
    pub(crate) accumulated: Accumulated,
    pub(crate) entitled: Option<u64>,
    /// The queues of its pool ahead of it in this pass's order.
    pub(crate) pool_ahead: Vec<usize>,
    /// Whether a per-host limit (HJOB_LIMIT, PJOB_LIMIT,
    /// JOB_ACCEPT_INTERVAL) needs the per-host bookkeeping.
    pub(crate) per_host_limits: bool,
    /// The queues whose jobs this queue's may preempt, in preemption
    /// order ([`crate::preempt`]).
    pub(crate) victims: Vec<usize>,
}

impl QueueState {
    /// A pending job of `slots` slots becomes dispatchable (`true`) or
    /// stops being so: it moves between the `held` and `pending` counts.
    pub(crate) fn move_pending(&mut self, slots: u32, dispatchable: bool) {
        if dispatchable {
            self.held = self.held.saturating_sub(1);
            self.pending += 1;
            self.pending_slots += u64::from(slots);
        } else {
            self.pending = self.pending.saturating_sub(1);
            self.pending_slots = self.pending_slots.saturating_sub(u64::from(slots));
            self.held += 1;
        }
    }
}

/// The scheduling engine.
///
/// Its fields, by what they hold: the cluster as configured (hosts,
/// queues, policies), the users and jobs, what is due when, and the
/// reservations; then four groups that decide nothing (see `lib.rs`).
///
/// The whole of it is what a snapshot of the state keeps
/// ([`Engine::snapshot`]), but for a pass's working memory.
#[derive(Clone, Serialize, Deserialize)]
pub struct Engine {
    // The cluster.
    pub(crate) config: EngineConfig,
    pub(crate) hosts: Vec<HostState>,
    /// The distinct host lists of queues, each with its free-slot index;
    /// queues name theirs by position ([`QueueState::host_set`]). Each
    /// list is in host order, so a set's positions follow host indexes
    /// (placement merges walks over both).
    pub(crate) host_sets: Vec<(Vec<u32>, SlotIndex)>,
    /// Compute units ([`crate::cu`]), in configuration order.
    pub(crate) cus: Vec<crate::cu::CuState>,
    pub(crate) queues: Vec<QueueState>,
    /// Dispatch units in dispatch order ([`crate::dispatch`]), and each
    /// queue's unit.
    pub(crate) units: Vec<Unit>,
    pub(crate) queue_unit: Vec<usize>,
    /// Slot pools: name and member queues; how fast their usage decays.
    pub(crate) pools: Vec<(String, Vec<usize>)>,
    pub(crate) pool_lambda: f64,
    pub(crate) fairshare: FairshareSet,
    /// The average memory per slot, what the memory-based fairshare
    /// adjustment weighs a user's memory against ([`Engine::adjustment`]).
    pub(crate) slot_memory: f64,
    /// The multifactor policy's state, when the cluster has one.
    pub(crate) mf: Option<crate::multifactor::live::MfState>,

    // Users and jobs.
    /// Users by number (in order of first submission), numbers by name,
    /// and the slots each uses.
    pub(crate) users: Vec<String>,
    pub(crate) user_ids: BTreeMap<String, u32>,
    pub(crate) user_used: Vec<u32>,
    /// The pending jobs and slots, in all, per user and per queue
    /// ([`crate::pend_limits`]).
    pub(crate) pend: crate::pend_limits::PendCounts,
    /// MB the running jobs hold, as last measured.
    pub(crate) memory_in_use: f64,
    pub(crate) jobs: JobTable<Job>,
    pub(crate) next_id: u64,
    /// The jobs suspended by preemption, and the running jobs with a
    /// pending resize request ([`crate::resize`]).
    pub(crate) suspended: BTreeSet<JobId>,
    pub(crate) growing: BTreeSet<JobId>,
    /// Job arrays by their first element ([`crate::arrays`]).
    pub(crate) arrays: BTreeMap<JobId, crate::arrays::ArrayState>,
    /// Arrays whose next elements the next pass makes ([`crate::array_tail`]).
    #[serde(default)]
    pub(crate) to_make: BTreeSet<JobId>,
    /// Exit codes of the jobs that ended, for dependencies.
    pub(crate) ended: BTreeMap<JobId, i32>,
    /// Real ends of runs heard late ([`crate::run_end`]).
    pub(crate) ran_until: BTreeMap<JobId, Time>,
    /// The jobs whose dependencies name a job.
    pub(crate) dependents: BTreeMap<JobId, BTreeSet<JobId>>,
    /// Jobs that started, ended or came back since dependencies were last
    /// evaluated.
    pub(crate) dep_changed: Vec<JobId>,

    // What is due when.
    /// Run limits and termination times of running jobs.
    pub(crate) deadlines: BTreeSet<(Time, JobId)>,
    /// When each running job is expected to end ([`Engine::expected_end`]):
    /// what predicted starts count on. A job still running past its entry
    /// leaves it, and has no end to count on. With each, the slots it
    /// holds in each host set ([`Engine::slots_by_set`]).
    pub(crate) expected_ends: crate::ends::ExpectedEnds,
    /// Times a pass must run though no event comes.
    pub(crate) wakeups: BTreeSet<Time>,
    /// Whether anything changed since the last pass.
    pub(crate) dirty: bool,

    // Reservations ([`crate::reserve`]).
    /// Pending jobs' reservations, the hosts holding any, and when each
    /// expires.
    pub(crate) reservations: BTreeMap<JobId, crate::reserve::Reservation>,
    pub(crate) rsv_hosts: crate::slots::HostBits,
    pub(crate) rsv_expiry: BTreeSet<(Time, JobId)>,
    /// The jobs whose reservation expired in the last pass, and the cycle
    /// after it, when they may reserve again, while no pass has given
    /// them that chance yet.
    pub(crate) rsv_cooldown: Vec<JobId>,
    /// Per running backfill job, the slots it borrowed from reservations:
    /// (lender, host, slots), each also in the lender's `lent`.
    pub(crate) loans: BTreeMap<JobId, Loans>,
    pub(crate) cooldown_ends: Option<Time>,
    /// A reservation given up whose hosts still hold it, within a pass
    /// or, kept parked, between passes ([`crate::handover`]).
    pub(crate) parked: Option<crate::handover::Parked>,
    /// `lsb.resources`' limits and what each bucket holds.
    pub(crate) alloc_limits: crate::alloc_limits::AllocLimits,
    /// The job groups ([`crate::job_groups`]).
    #[serde(default)]
    pub(crate) job_groups: crate::job_groups::JobGroups,
    /// Site resources' instances and what jobs hold of them.
    pub(crate) resources: crate::shared_res::Instances,

    // What decides nothing.
    pub(crate) caches: Caches,
    pub(crate) counters: Counters,
    pub(crate) switches: Switches,
    #[serde(skip)]
    pub(crate) scratch: Scratch,
    /// Each host's index by its name, for [`Engine::host_index`] (a log's
    /// records name hosts: a restart's replay looks up every host of
    /// every start). Made from `hosts`, never saved.
    #[serde(skip)]
    pub(crate) host_names: std::collections::BTreeMap<Box<str>, HostIdx>,
}

impl Engine {
    pub fn new(mut config: EngineConfig) -> Self {
        let fairshare = std::mem::take(&mut config.fairshare);
        let policies = fairshare.policies.len();
        let mut hosts: Vec<HostState> = config
            .hosts
            .iter()
            .map(|h| HostState {
                name: h.name.clone(),
                slots: h.slots,
                cpus: h.cpus,
                attrs: h.attrs.clone(),
                used: 0,
                mem_reserved: 0.0,
                excl_locks: 0,
                rsv: SmallVec::new(),
                rsv_slots: 0,
                rsv_mem: 0.0,
                suspended: 0,
                up: true,
                in_sets: Vec::new(),
                partition: None,
                per_queue: BTreeMap::new(),
            })
            .collect();
        for (pi, p) in fairshare.policies.iter().enumerate() {
            if let Scope::Hosts(names) = &p.scope {
                for h in hosts.iter_mut().filter(|h| names.contains(&h.name)) {
                    h.partition = Some(pi);
                }
            }
        }
        let mut host_sets: Vec<(Vec<u32>, SlotIndex)> = Vec::new();
        let mut queues = Vec::new();
        for spec in &config.queues {
            let members: Vec<u32> = match &spec.hosts {
                None => (0..hosts.len() as u32).collect(),
                Some(named) => (0..hosts.len() as u32).filter(|&i| named.contains(&hosts[i as usize].name)).collect(),
            };
            let host_set = match host_sets.iter().position(|(m, _)| *m == members) {
                Some(i) => i,
                None => {
                    let free: Vec<u32> = members.iter().map(|&h| hosts[h as usize].slots).collect();
                    for (pos, &h) in members.iter().enumerate() {
                        hosts[h as usize].in_sets.push((host_sets.len(), pos));
                    }
                    host_sets.push((members, SlotIndex::new(&free)));
                    host_sets.len() - 1
                }
            };
            let policy =
                spec.policy.as_ref().and_then(|name| fairshare.policies.iter().position(|p| p.tree.policy() == name));
            let members = &host_sets[host_set].0;
            let capacity = members.iter().map(|&h| u64::from(hosts[h as usize].slots)).sum();
            let partitions: BTreeSet<usize> = members.iter().filter_map(|&h| hosts[h as usize].partition).collect();
            let outside_partitions = members.iter().any(|&h| hosts[h as usize].partition.is_none());
            queues.push(QueueState {
                spec: spec.clone(),
                host_set,
                capacity,
                first_hosts: spec
                    .first_hosts
                    .iter()
                    .filter_map(|n| hosts.iter().position(|h| h.name == *n).map(|i| i as u32))
                    .collect(),
                partitions: partitions.into_iter().collect(),
                outside_partitions,
                policy,
                used: 0,
                user_used: Vec::new(),
                pending: 0,
                held: 0,
                pending_slots: 0,
                pool: None,
                accumulated: Accumulated::default(),
                entitled: None,
                pool_ahead: Vec::new(),
                per_host_limits: spec.limits.hjob.is_some()
                    || spec.limits.pjob.is_some()
                    || spec.accept_interval().is_some(),
                victims: Vec::new(),
            });
        }
        for (q, victims) in queues.iter_mut().zip(crate::preempt::victim_queues(&config.queues)) {
            q.victims = victims;
        }
        let mut pools: Vec<(String, Vec<usize>)> = Vec::new();
        for (qi, q) in queues.iter_mut().enumerate() {
            let Some((name, _)) = &q.spec.slot_pool else { continue };
            let p = match pools.iter().position(|(n, _)| n == name) {
                Some(p) => p,
                None => {
                    pools.push((name.clone(), Vec::new()));
                    pools.len() - 1
                }
            };
            pools[p].1.push(qi);
            q.pool = Some(p);
        }
        let pool_lambda =
            if config.hist_hours > 0.0 { std::f64::consts::LN_10 / (config.hist_hours * 3600.0) } else { 0.0 };
        let (units, queue_unit) = build_units(&queues, &host_sets, &hosts, &fairshare, config.multifactor.is_some());
        let cus = crate::cu::build(&config, &hosts);
        let slots_within_cpus = hosts.iter().all(|h| h.slots <= h.cpus);
        let planned = config.queues.iter().any(|q| q.plan.is_some());
        let slot_memory = crate::shares::priority::ClusterMemory::slot_memory_of(&config.hosts);
        let mf = config.multifactor.as_ref().map(|spec| crate::multifactor::live::MfState::new(&config, spec));
        let alloc_limits = crate::alloc_limits::AllocLimits::new(
            &config.alloc_limits,
            &queues.iter().map(|q| q.spec.name.clone()).collect::<Vec<_>>(),
            &hosts.iter().map(|h| h.name.clone()).collect::<Vec<_>>(),
            &config.host_groups,
        );
        let numbers: Vec<(String, Vec<(String, f64)>)> = config
            .hosts
            .iter()
            .map(|h| {
                let nums = h
                    .attrs
                    .resources
                    .iter()
                    .filter_map(|(n, r)| match r {
                        crate::resreq::Resource::Num(v) => Some((n.clone(), *v)),
                        _ => None,
                    })
                    .collect();
                (h.name.clone(), nums)
            })
            .collect();
        let resources = crate::shared_res::Instances::new(&config.shared_resources, &numbers, &config.not_consumable);
        let host_names = host_names(&hosts);
        Engine {
            host_names,
            hosts,
            host_sets,
            queues,
            units,
            queue_unit,
            pools,
            pool_lambda,
            fairshare,
            slot_memory,
            config,
            users: Vec::new(),
            user_ids: BTreeMap::new(),
            user_used: Vec::new(),
            pend: Default::default(),
            memory_in_use: 0.0,
            jobs: JobTable::new(1),
            next_id: 1,
            suspended: BTreeSet::new(),
            growing: BTreeSet::new(),
            deadlines: BTreeSet::new(),
            expected_ends: Default::default(),
            wakeups: BTreeSet::new(),
            dirty: false,
            counters: Counters::default(),
            ended: BTreeMap::new(),
            ran_until: BTreeMap::new(),
            dependents: BTreeMap::new(),
            dep_changed: Vec::new(),
            arrays: BTreeMap::new(),
            to_make: BTreeSet::new(),
            cus,
            reservations: BTreeMap::new(),
            rsv_hosts: crate::slots::HostBits::default(),
            parked: None,
            alloc_limits,
            job_groups: Default::default(),
            resources,
            switches: Switches::default(),
            rsv_expiry: BTreeSet::new(),
            rsv_cooldown: Vec::new(),
            loans: BTreeMap::new(),
            cooldown_ends: None,
            mf,
            caches: Caches::new(slots_within_cpus, planned),
            scratch: Scratch::new(policies),
        }
    }

    /// Applies an event at `t`. A submission returns the new job's id.
    pub fn apply(&mut self, t: Time, event: &Event) -> Result<Option<JobId>, Rejection> {
        // A job submitted changes no host; anything else may
        // ([`Setting::KeepParked`]).
        if !matches!(event, Event::Submit(_)) {
            self.settle();
        }
        self.make_named(event);
        match event {
            Event::Submit(spec) => self.submit_at(spec, t).map(Some),
            Event::Finish { job, cpu_time, exit } => {
                self.finish(*job, t, *cpu_time, *exit);
                Ok(None)
            }
            Event::Cpu { job, seconds } => {
                self.add_cpu(*job, t, *seconds);
                Ok(None)
            }
            Event::Memory { job, mb } => {
                self.set_memory(*job, *mb);
                self.mf_holds(*job, t, Some(*mb), None);
                Ok(None)
            }
            Event::Gpus { job, count } => {
                self.mf_holds(*job, t, None, Some(*count));
                Ok(None)
            }
            Event::Energy { job, joules } => {
                self.mf_energy(*job, t, *joules);
                Ok(None)
            }
            Event::RanUntil { job, at } => {
                self.ran_until(*job, *at, t);
                Ok(None)
            }
            Event::HostDown(h) => {
                self.set_host_up(h.0, false);
                Ok(None)
            }
            Event::HostUp(h) => {
                self.set_host_up(h.0, true);
                Ok(None)
            }
            Event::Hold(id) => self.set_held(*id, true).map(|()| None),
            Event::Release(id) => self.set_held(*id, false).map(|()| None),
            Event::Modify { job, spec } => self.modify(*job, spec).map(|()| None),
            Event::RunLimit { job, limit } => self.change_run_limit(*job, *limit, t).map(|()| None),
            Event::Switch { job, spec } => self.switch_running(*job, spec, t).map(|()| None),
            Event::Requeue { job, cpu_time, hold } => self.requeue(*job, t, *cpu_time, *hold).map(|()| None),
            Event::Resubmit { job, spec, hold } => self.resubmit(*job, spec, *hold, t).map(|()| None),
            Event::ArrayLimit { array, limit } => self.set_array_limit(*array, *limit).map(|()| None),
            Event::RemoveElements { array, elements } => self.remove_elements(*array, elements, t).map(|()| None),
            Event::HoldElements { array, elements, hold } => self.hold_elements(*array, elements, *hold).map(|()| None),
            Event::Shrink { job, release, cancel } => self.shrink(*job, release, *cancel, t).map(|()| None),
            Event::ResizeCancel(job) => self.cancel_resize(*job).map(|()| None),
            Event::GrowFailed { job, alloc } => self.grow_failed(*job, alloc, t).map(|()| None),
            Event::JobGroup(change) => self.change_job_group(change).map(|()| None).map_err(Rejection::from),
            Event::Started { job, alloc } => self.force_start(*job, alloc, t).map(|()| None),
            Event::Preempted { job, by } => self.force_suspend(*job, *by, t).map(|()| None),
            Event::Resumed(job) => self.force_resume(*job, t).map(|()| None),
            Event::Unstarted(job) => self.unstart(*job, t).map(|()| None),
            Event::SkipIdsTo(id) => {
                self.next_id = self.next_id.max(id.0);
                Ok(None)
            }
            // Let go above, as before any event but a submission.
            Event::LetGoParked => Ok(None),
            Event::Setting(setting) => {
                match *setting {
                    Setting::Handover(on) => self.switches.handover = on,
                    Setting::KeepParked(on) => self.switches.keep_parked = on,
                    Setting::AskIndex(on) => self.switches.ask_index = on,
                }
                Ok(None)
            }
            Event::Reconfigure(config) => {
                self.reconfigure(t, (**config).clone()).map(|()| None).map_err(Rejection::from)
            }
        }
    }

    /// A pending job joins its queue: dispatchable, or held, or waiting
    /// for its dependency or for room under its array's limit.
    pub(crate) fn add_pending(&mut self, id: JobId, job: &Job) {
        for target in job.depends.iter().flat_map(|d| d.targets()).flatten() {
            self.dependents.entry(target).or_default().insert(id);
        }
        self.count_pending(job.user, job.queue, job.slots, true);
        self.array_pending(id, true);
        if job.held || job.waiting || !self.array_admits(id) {
            self.queues[job.queue].held += 1;
        } else {
            self.enqueue(id, job);
            let q = &mut self.queues[job.queue];
            q.pending += 1;
            q.pending_slots += u64::from(job.slots);
        }
        self.dirty = true;
    }

    /// A pending job leaves its queue.
    pub(crate) fn remove_pending(&mut self, id: JobId, job: &Job) {
        self.count_pending(job.user, job.queue, job.slots, false);
        self.array_pending(id, false);
        if job.held || job.waiting {
            let q = &mut self.queues[job.queue];
            q.held = q.held.saturating_sub(1);
        } else {
            let parked = self.array_leaves(id);
            let q = &mut self.queues[job.queue];
            if parked {
                q.held = q.held.saturating_sub(1);
            } else {
                self.dequeue(id, job);
                let q = &mut self.queues[job.queue];
                q.pending = q.pending.saturating_sub(1);
                q.pending_slots = q.pending_slots.saturating_sub(u64::from(job.slots));
            }
        }
        self.dirty = true;
    }

    fn add_cpu(&mut self, id: JobId, t: Time, seconds: f64) {
        let Some(job) = self.jobs.get_mut(&id) else { return };
        if let JobState::Running { charges, cpu_reported, .. } = &mut job.state {
            *cpu_reported += seconds;
            for (p, leaf, _) in charges.iter() {
                self.fairshare.policies[*p].tree.add_cpu(*leaf, t, seconds);
            }
        }
    }

    /// A running job's memory is now `mb`: each account it is charged to
    /// holds the difference.
    pub(crate) fn set_memory(&mut self, id: JobId, mb: f64) {
        let Some(job) = self.jobs.get_mut(&id) else { return };
        let JobState::Running { charges, memory, .. } = &mut job.state else { return };
        let mb = if mb.is_finite() { mb.max(0.0) } else { 0.0 };
        self.memory_in_use = (self.memory_in_use + mb - *memory).max(0.0);
        *memory = mb;
        for (p, leaf, charge) in charges.iter_mut() {
            let delta = mb - charge.memory;
            charge.memory = mb;
            self.fairshare.policies[*p].tree.add_memory(*leaf, delta);
        }
    }
}

/// Each host's index by its name (the first host of a name, should two
/// share one).
pub(crate) fn host_names(hosts: &[HostState]) -> std::collections::BTreeMap<Box<str>, HostIdx> {
    let mut names = std::collections::BTreeMap::new();
    for (i, h) in hosts.iter().enumerate() {
        names.entry(Box::from(h.name.as_str())).or_insert(HostIdx(i as u32));
    }
    names
}
