//! Resource allocation limits: the Limit sections of LSF's
//! `lsb.resources`, as LSF documents them ("Resource allocation limits").
//!
//! A limit says how much of a resource (SLOTS, SLOTS_PER_PROCESSOR, MEM,
//! JOBS) the jobs of some consumers may hold at once. Its consumers are
//! named per kind: users, queues, hosts, projects and application
//! profiles. For each kind:
//! - not named: every consumer of the kind, counted together;
//! - `USERS`, `QUEUES`, `HOSTS`, `PROJECTS`, `APPS`: the consumers named
//!   (`all`, names, user or host groups, `~name` left out), counted
//!   together ("the limit is enforced on all of them as a whole");
//! - `PER_USER`, `PER_QUEUE`, `PER_HOST`, `PER_PROJECT`, `PER_APP`: each
//!   consumer named counted alone (a user group named there stands for
//!   each of its members).
//!
//! A job is counted against a limit when each of its user, queue, project
//! and profile is among the limit's consumers; what counts is what it
//! holds on the limit's hosts. So a running job is charged to one bucket
//! per limit (one per host under `PER_HOST`):
//! - SLOTS: its slots there; SLOTS_PER_PROCESSOR bounds them to that
//!   many per CPU of the bucket's hosts (of each host under PER_HOST);
//!   with both, the lower bound holds;
//! - MEM: the memory its `rusage[mem]` holds there, MB (a percentage is
//!   of each host's memory, and LSF takes one only with PER_HOST);
//! - JOBS: 1 if it holds anything there, "running and suspended (RUN,
//!   SSUSP, USUSP)" jobs alike;
//! - RESOURCE (`[licA,2] ...`): what its `rusage` holds there of each
//!   site resource named ([`crate::shared_res`]; an instance the hosts
//!   share counted once, on the job's first host that reaches it), held
//!   while suspended as the resource itself is.
//!
//! Choices where LSF's documents are silent, as its users would expect:
//! - A job suspended by preemption holds no SLOTS and no MEM under a
//!   limit (its slots went to the job that preempted it), but still
//!   counts under JOBS, as LSF's JOBS says; it resumes only when it fits
//!   its limits again.
//! - A job with no project is in project `default` (LSF's default
//!   project); a job with no application profile is in no profile, so
//!   `APPS` and `PER_APP` never cover it.
//! - A job asking a range (`-n min,max`) takes no more than every limit
//!   whose hosts it may use leaves room for.
//! - Placement gives a host no more than each limit on it leaves, then
//!   the whole allocation is checked against every limit: a parallel job
//!   whose slots on one limit's several hosts would pass it together does
//!   not start (LSF warns of the same kind of false failure for
//!   HOSTLIMIT_PER_JOB).
//! - Reservations are not counted: a limit bounds what runs.
//! - A job a limit stops does not preempt to get past it: preemption
//!   frees slots on hosts, not room under a limit. A pass starts pending
//!   jobs before it resumes suspended ones, under limits as on hosts.
//!
//! Where several limits hold, each applies: "the most restrictive limit
//! is used". A job a limit stops pends with LSF's reason for the kind of
//! consumer the limit names, the first of users, queues, projects,
//! profiles, hosts, else the cluster ([`LimitReason`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::engine::{Engine, Job, JobId, JobState};
use crate::placement::cap_by_amount;
use crate::reasons::PendingReason;
use crate::shared_res::Amounts;

/// Which consumers of one kind a limit covers, and how it counts them
/// (module docs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Scope {
    #[default]
    Any,
    Together(Members),
    Each(Members),
}

/// Consumers named: `all`, names (for users, user groups too; for hosts,
/// host names, groups already expanded), and `~name`s left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Members {
    pub all: bool,
    pub names: Vec<String>,
    pub except: Vec<String>,
}

impl Members {
    fn has(&self, name: &str, member: impl Fn(&str) -> bool) -> bool {
        let named = |n: &String| n == name || member(n);
        (self.all || self.names.iter().any(named)) && !self.except.iter().any(named)
    }
}

impl Scope {
    fn members(&self) -> Option<&Members> {
        match self {
            Scope::Any => None,
            Scope::Together(m) | Scope::Each(m) => Some(m),
        }
    }

    /// Whether `name` is covered, and its bucket: `ALL` unless counted
    /// alone, then `own`.
    fn bucket<T>(&self, name: &str, member: impl Fn(&str) -> bool, own: impl FnOnce() -> T, all: T) -> Option<T> {
        match self {
            Scope::Any => Some(all),
            Scope::Together(m) => m.has(name, member).then_some(all),
            Scope::Each(m) => m.has(name, member).then(own),
        }
    }
}

/// MEM: MB, or a percentage of the memory of the bucket's hosts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Amount {
    Mb(f64),
    Percent(f64),
}

/// One Limit section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LimitSpec {
    pub name: String,
    pub users: Scope,
    pub queues: Scope,
    pub hosts: Scope,
    pub projects: Scope,
    pub apps: Scope,
    pub slots: Option<u32>,
    pub slots_per_processor: Option<f64>,
    pub mem: Option<Amount>,
    pub jobs: Option<u32>,
    /// RESOURCE: site resources and the most the consumers may hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<(String, f64)>,
}

/// A bucket's "every consumer together".
const ALL: u32 = u32::MAX;

/// One bucket of one limit: the consumers counted together.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Key {
    rule: u32,
    user: u32,
    queue: u32,
    host: u32,
    project: Option<String>,
    app: Option<String>,
}

/// What a bucket holds, or what a job adds to one: with `res`, the
/// amounts of its limit's RESOURCE names, in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Use {
    pub slots: u32,
    pub mem: f64,
    pub jobs: u32,
    #[serde(default, skip_serializing_if = "SmallVec::is_empty")]
    pub res: Amounts,
}

impl Use {
    fn add(&mut self, o: &Use, sign: bool) {
        if self.res.len() < o.res.len() {
            self.res.resize(o.res.len(), 0.0);
        }
        if sign {
            self.slots += o.slots;
            self.mem += o.mem;
            self.jobs += o.jobs;
        } else {
            self.slots = self.slots.saturating_sub(o.slots);
            self.mem = (self.mem - o.mem).max(0.0);
            self.jobs = self.jobs.saturating_sub(o.jobs);
        }
        for (a, b) in self.res.iter_mut().zip(&o.res) {
            *a = if sign { *a + b } else { (*a - b).max(0.0) };
        }
    }

    fn is_empty(&self) -> bool {
        self.slots == 0 && self.jobs == 0 && self.mem < MEM_EPSILON && self.res.iter().all(|x| *x < MEM_EPSILON)
    }

    /// `self` less `o`, none below 0.
    fn less(&self, o: &Use) -> Use {
        let mut res = self.res.clone();
        for (a, b) in res.iter_mut().zip(&o.res) {
            *a = (*a - b).max(0.0);
        }
        Use {
            slots: self.slots.saturating_sub(o.slots),
            mem: (self.mem - o.mem).max(0.0),
            jobs: self.jobs.saturating_sub(o.jobs),
            res,
        }
    }
}

/// Below this, MB held is none (sums of floats added and taken away).
const MEM_EPSILON: f64 = 1e-6;

/// A limit with what the configuration resolves of it once: the queues
/// (by index) and hosts it covers.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Rule {
    pub(crate) spec: LimitSpec,
    queues: Vec<bool>,
    hosts: Vec<bool>,
}

/// The limits and what each bucket holds now.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct AllocLimits {
    pub(crate) rules: Vec<Rule>,
    #[serde(with = "crate::snapshot::pairs")]
    used: BTreeMap<Key, Use>,
}

/// The kind of consumer a limit's pending reason names (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitReason {
    User,
    Queue,
    Project,
    App,
    Host,
    Cluster,
}

/// Which resource of a limit stops a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LimitResource {
    Slots,
    Mem,
    Jobs,
    Resource(String),
}

/// One bucket as `blimits` shows it: its limit's name, its consumers
/// (`None`: not named; a name for a bucket counted alone, else what the
/// limit names), what it holds and its bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct LimitUsage {
    pub name: String,
    pub users: Option<String>,
    pub queues: Option<String>,
    pub hosts: Option<String>,
    pub projects: Option<String>,
    pub apps: Option<String>,
    pub used: Use,
    pub slots: Option<u32>,
    pub mem: Option<f64>,
    pub jobs: Option<u32>,
    /// RESOURCE: each name with what is held and the bound.
    pub resources: Vec<(String, f64, f64)>,
}

impl AllocLimits {
    /// The limits of `specs`, resolved against the queues and hosts (by
    /// name, in the engine's order) and the host groups (with their
    /// hosts).
    pub(crate) fn new(
        specs: &[LimitSpec],
        queues: &[String],
        hosts: &[String],
        host_groups: &BTreeMap<String, Vec<String>>,
    ) -> Self {
        let covers = |scope: &Scope, names: &[String], group: &dyn Fn(&str, &str) -> bool| -> Vec<bool> {
            names.iter().map(|n| scope.members().is_none_or(|m| m.has(n, |g| group(g, n)))).collect()
        };
        let in_group = |g: &str, h: &str| host_groups.get(g).is_some_and(|hs| hs.iter().any(|x| x == h));
        let rules = specs
            .iter()
            .map(|s| Rule {
                spec: s.clone(),
                queues: covers(&s.queues, queues, &|_, _| false),
                hosts: covers(&s.hosts, hosts, &in_group),
            })
            .collect();
        AllocLimits { rules, used: BTreeMap::new() }
    }
}

/// What one job adds to each of its buckets.
type Uses = SmallVec<[(Key, Use); 2]>;

impl Engine {
    /// The bucket of rule `r` that `job` is counted in, but for its host;
    /// `None` when the limit does not cover it.
    fn bucket_of(&self, r: usize, job: &Job) -> Option<Key> {
        let rule = &self.alloc_limits.rules[r];
        let spec = &rule.spec;
        let user_name = &self.users[job.user as usize];
        let groups = &self.config.groups;
        let user = spec.users.bucket(user_name, |g| groups.contains(g, user_name), || job.user, ALL)?;
        let queue = if rule.queues[job.queue] {
            if matches!(spec.queues, Scope::Each(_)) { job.queue as u32 } else { ALL }
        } else {
            return None;
        };
        let project_name = job.project.as_deref().unwrap_or("default");
        let project = spec.projects.bucket(project_name, |_| false, || Some(project_name.to_string()), None)?;
        let app = match (&spec.apps, &job.app) {
            (Scope::Any, _) => None,
            (_, None) => return None,
            (scope, Some(a)) => scope.bucket(a, |_| false, || Some(a.clone()), None)?,
        };
        Some(Key { rule: r as u32, user, queue, host: ALL, project, app })
    }

    /// Whether a limit that names hosts covers `job`: placement then
    /// looks at what each of its hosts leaves it.
    pub(crate) fn host_limited(&self, job: &Job) -> bool {
        (0..self.alloc_limits.rules.len())
            .any(|r| self.alloc_limits.rules[r].spec.hosts != Scope::Any && self.bucket_of(r, job).is_some())
    }

    /// What `job` holding `alloc` adds to each bucket it is counted in
    /// (module docs); `suspended` by preemption, JOBS only.
    fn uses_of(&self, job: &Job, alloc: &[(u32, u32)], suspended: bool) -> Uses {
        let mut out = Uses::new();
        if self.alloc_limits.rules.is_empty() {
            return out;
        }
        let mems = self.rusage_by_entry(job.res.as_deref(), alloc);
        // Site resources stay held while suspended; slots and memory not.
        let held = |n: u32, mem: f64, res: Amounts| {
            if suspended { Use { slots: 0, mem: 0.0, jobs: 1, res } } else { Use { slots: n, mem, jobs: 1, res } }
        };
        for r in 0..self.alloc_limits.rules.len() {
            let Some(key) = self.bucket_of(r, job) else { continue };
            let rule = &self.alloc_limits.rules[r];
            let names = &rule.spec.resources;
            let site =
                if names.is_empty() { vec![Amounts::new(); alloc.len()] } else { self.site_amounts(job, alloc, names) };
            let on = alloc.iter().zip(&mems).zip(site).filter(|(((h, _), _), _)| rule.hosts[*h as usize]);
            if matches!(rule.spec.hosts, Scope::Each(_)) {
                for ((&(h, n), &mem), res) in on {
                    out.push((Key { host: h, ..key.clone() }, held(n, mem, res)));
                }
            } else {
                let (mut n, mut mem, mut res, mut any) = (0, 0.0, Amounts::from_elem(0.0, names.len()), false);
                for ((&(_, k), &m), site) in on {
                    (n, mem, any) = (n + k, mem + m, true);
                    for (a, b) in res.iter_mut().zip(&site) {
                        *a += b;
                    }
                }
                if any {
                    out.push((key, held(n, mem, res)));
                }
            }
        }
        out
    }

    /// A running job's charges under the limits, from its state now: added
    /// (`add`) or taken away. Around every change of what it holds.
    pub(crate) fn book_limits(&mut self, id: JobId, add: bool) {
        if self.alloc_limits.rules.is_empty() {
            return;
        }
        let Some(job) = self.jobs.get(&id) else { return };
        let JobState::Running { alloc, suspended, .. } = &job.state else { return };
        let uses = self.uses_of(job, alloc, suspended.is_some());
        self.book_uses(uses, add);
    }

    /// [`Engine::book_limits`] for a job whose state was taken out of it.
    pub(crate) fn unbook_limits(&mut self, job: &Job, alloc: &[(u32, u32)], suspended: bool) {
        if self.alloc_limits.rules.is_empty() {
            return;
        }
        let uses = self.uses_of(job, alloc, suspended);
        self.book_uses(uses, false);
    }

    fn book_uses(&mut self, uses: Uses, add: bool) {
        for (key, u) in uses {
            let e = self.alloc_limits.used.entry(key.clone()).or_default();
            e.add(&u, add);
            if e.is_empty() {
                self.alloc_limits.used.remove(&key);
            }
        }
    }

    /// The bounds of bucket `key`: slots, MB, jobs.
    fn bounds(&self, key: &Key) -> (Option<u32>, Option<f64>, Option<u32>) {
        let rule = &self.alloc_limits.rules[key.rule as usize];
        let hosts: SmallVec<[u32; 1]> = if key.host == ALL {
            (0..self.hosts.len() as u32).filter(|&h| rule.hosts[h as usize]).collect()
        } else {
            SmallVec::from_elem(key.host, 1)
        };
        let spec = &rule.spec;
        let per_cpu = spec.slots_per_processor.map(|p| {
            let cpus: u64 = hosts.iter().map(|&h| u64::from(self.hosts[h as usize].cpus)).sum();
            (p * cpus as f64 + 1e-9).floor().min(f64::from(u32::MAX)) as u32
        });
        let slots = match (spec.slots, per_cpu) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let mem = spec.mem.map(|m| match m {
            Amount::Mb(mb) => mb,
            Amount::Percent(p) => {
                let total: u64 = hosts.iter().filter_map(|&h| self.hosts[h as usize].attrs.maxmem).sum();
                p / 100.0 * total as f64
            }
        });
        (slots, mem, spec.jobs)
    }

    /// The first resource of bucket `key` that `add` more would pass.
    fn limit_passed(&self, key: &Key, add: &Use) -> Option<LimitResource> {
        let zero = Use::default();
        let now = self.alloc_limits.used.get(key).unwrap_or(&zero);
        let (slots, mem, jobs) = self.bounds(key);
        if slots.is_some_and(|s| add.slots > 0 && now.slots + add.slots > s) {
            return Some(LimitResource::Slots);
        }
        if mem.is_some_and(|m| add.mem > 0.0 && now.mem + add.mem > m + MEM_EPSILON) {
            return Some(LimitResource::Mem);
        }
        if jobs.is_some_and(|j| add.jobs > 0 && now.jobs + add.jobs > j) {
            return Some(LimitResource::Jobs);
        }
        let names = &self.alloc_limits.rules[key.rule as usize].spec.resources;
        for (i, (name, bound)) in names.iter().enumerate() {
            let (more, held) = (add.res.get(i).copied().unwrap_or(0.0), now.res.get(i).copied().unwrap_or(0.0));
            if more > 0.0 && held + more > bound + MEM_EPSILON {
                return Some(LimitResource::Resource(name.clone()));
            }
        }
        None
    }

    /// The reason for a limit passed, as LSF gives it.
    fn limit_pending(&self, key: &Key, what: LimitResource) -> PendingReason {
        let spec = &self.alloc_limits.rules[key.rule as usize].spec;
        let kind = if spec.users != Scope::Any {
            LimitReason::User
        } else if spec.queues != Scope::Any {
            LimitReason::Queue
        } else if spec.projects != Scope::Any {
            LimitReason::Project
        } else if spec.apps != Scope::Any {
            LimitReason::App
        } else if spec.hosts != Scope::Any {
            LimitReason::Host
        } else {
            LimitReason::Cluster
        };
        PendingReason::AllocLimit { name: spec.name.clone(), kind, resource: what }
    }

    /// Whether `job` on `alloc` stays within every limit; the first it
    /// would pass, if not.
    pub(crate) fn alloc_within_limits(&self, job: &Job, alloc: &[(u32, u32)]) -> Result<(), PendingReason> {
        if self.alloc_limits.rules.is_empty() {
            return Ok(());
        }
        for (key, u) in self.uses_of(job, alloc, false) {
            if let Some(what) = self.limit_passed(&key, &u) {
                return Err(self.limit_pending(&key, what));
            }
        }
        Ok(())
    }

    /// Whether `job` may start on `alloc` at `t`: within every limit, and
    /// with enough of every site resource it asks.
    pub(crate) fn may_start_on(&self, job: &Job, alloc: &[(u32, u32)], t: crate::time::Time) -> bool {
        self.alloc_within_limits(job, alloc).is_ok() && self.alloc_within_resources(job, alloc, t).is_ok()
    }

    /// Whether running job `job` stays within every limit when it grows
    /// by `added` (a resize request).
    pub(crate) fn grows_within_limits(&self, job: &Job, added: &[(u32, u32)]) -> bool {
        let JobState::Running { alloc, .. } = &job.state else { return true };
        let mut grown: SmallVec<[(u32, u32); 8]> = alloc.iter().copied().collect();
        for &(h, n) in added {
            match grown.iter_mut().find(|e| e.0 == h) {
                Some(e) => e.1 += n,
                None => grown.push((h, n)),
            }
        }
        if !self.grows_within_resources(job, alloc, &grown) {
            return false;
        }
        let before = self.uses_of(job, alloc, false);
        self.uses_of(job, &grown, false).into_iter().all(|(key, u)| {
            let had = before.iter().find(|(k, _)| *k == key).map_or(Use::default(), |x| x.1.clone());
            self.limit_passed(&key, &u.less(&had)).is_none()
        })
    }

    /// Whether a suspended job fits its limits again (to be resumed).
    pub(crate) fn resume_within_limits(&self, id: JobId) -> bool {
        let Some(job) = self.jobs.get(&id) else { return false };
        let JobState::Running { alloc, .. } = &job.state else { return false };
        let full = self.uses_of(job, alloc, false);
        // What it holds suspended is counted already: the JOBS and the
        // site resources.
        full.iter().all(|(key, u)| {
            let more = Use { jobs: 0, res: Amounts::from_elem(0.0, u.res.len()), ..u.clone() };
            self.limit_passed(key, &more).is_none()
        })
    }

    /// The limits that name no hosts and already stop `job` wherever it
    /// runs: the least it asks passes them (module docs).
    pub(crate) fn alloc_limits_over(&self, job: &Job, out: &mut Vec<PendingReason>, first_only: bool) {
        let mem = crate::reserve::rusage_mem(job);
        let least_mem = if self.config.resource_reserve_per_slot { mem * f64::from(job.slots) } else { mem };
        for r in 0..self.alloc_limits.rules.len() {
            if self.alloc_limits.rules[r].spec.hosts != Scope::Any {
                continue;
            }
            let Some(key) = self.bucket_of(r, job) else { continue };
            let res = self.alloc_limits.rules[r]
                .spec
                .resources
                .iter()
                .map(|(n, _)| crate::shared_res::rusage_amount(job, n))
                .collect();
            let least = Use { slots: job.slots, mem: least_mem, jobs: 1, res };
            if let Some(what) = self.limit_passed(&key, &least) {
                out.push(self.limit_pending(&key, what));
                if first_only {
                    return;
                }
            }
        }
    }

    /// How many more slots `job` may take under the limits that cover it
    /// (module docs: a range takes no more than each leaves room for).
    pub(crate) fn alloc_limits_room(&self, job: &Job) -> u32 {
        let mut room = u32::MAX;
        for r in 0..self.alloc_limits.rules.len() {
            if matches!(self.alloc_limits.rules[r].spec.hosts, Scope::Each(_)) {
                continue;
            }
            let Some(key) = self.bucket_of(r, job) else { continue };
            if let (Some(max), _, _) = self.bounds(&key) {
                let now = self.alloc_limits.used.get(&key).map_or(0, |u| u.slots);
                room = room.min(max.saturating_sub(now));
            }
        }
        room
    }

    /// The limits that name host `h` and cover `job`, each with the
    /// bucket the job would be counted in there.
    fn host_buckets<'a>(&'a self, h: u32, job: &'a Job) -> impl Iterator<Item = (&'a Rule, Key)> + 'a {
        (0..self.alloc_limits.rules.len()).filter_map(move |r| {
            let rule = &self.alloc_limits.rules[r];
            if rule.spec.hosts == Scope::Any || !rule.hosts[h as usize] {
                return None;
            }
            let mut key = self.bucket_of(r, job)?;
            if matches!(rule.spec.hosts, Scope::Each(_)) {
                key.host = h;
            }
            Some((rule, key))
        })
    }

    /// How many slots host `h` may give `job` under the limits that name
    /// hosts (`cap` at most); 0 when one of them has no room there.
    pub(crate) fn host_limit_cap(&self, h: u32, job: &Job, mut cap: u32) -> u32 {
        let mem = crate::reserve::rusage_mem(job);
        for (rule, key) in self.host_buckets(h, job) {
            let zero = Use::default();
            let now = self.alloc_limits.used.get(&key).unwrap_or(&zero);
            let (slots, mb, jobs) = self.bounds(&key);
            if jobs.is_some_and(|j| now.jobs >= j) {
                return 0;
            }
            for (i, (name, bound)) in rule.spec.resources.iter().enumerate() {
                let (amount, shared) = self.site_amount_on(h, job, name);
                if amount <= 0.0 {
                    continue;
                }
                let left = (bound - now.res.get(i).copied().unwrap_or(0.0) + MEM_EPSILON).max(0.0);
                cap = cap_by_amount(cap, left, amount, !shared && self.config.resource_reserve_per_slot);
            }
            if let Some(s) = slots {
                cap = cap.min(s.saturating_sub(now.slots));
            }
            if let (Some(m), true) = (mb, mem > 0.0) {
                let left = (m - now.mem + MEM_EPSILON).max(0.0);
                cap = cap_by_amount(cap, left, mem, self.config.resource_reserve_per_slot);
            }
        }
        cap
    }

    /// The reason a limit that names hosts gives for `job`, when on every
    /// host it may use (of its queue, and of its `-m`) one of them leaves
    /// it nothing.
    pub(crate) fn host_limits_reason(&self, job: &Job) -> Option<PendingReason> {
        let allowed = job.picks.as_ref().and_then(|p| p.allowed.as_ref());
        let members: Vec<u32> = self.host_sets[self.queues[job.queue].host_set]
            .0
            .iter()
            .copied()
            .filter(|&h| allowed.is_none_or(|a| a.binary_search_by_key(&h, |x| x.0).is_ok()))
            .collect();
        if members.is_empty() || members.iter().any(|&h| self.host_limit_cap(h, job, u32::MAX) > 0) {
            return None;
        }
        let h = members[0];
        let mem = crate::reserve::rusage_mem(job);
        for (rule, key) in self.host_buckets(h, job) {
            let res = rule.spec.resources.iter().map(|(n, _)| self.site_amount_on(h, job, n).0).collect();
            let what = self.limit_passed(&key, &Use { slots: 1, mem: mem.max(0.0), jobs: 1, res });
            if let Some(what) = what {
                return Some(self.limit_pending(&key, what));
            }
        }
        None
    }

    /// Every bucket in use (and with `all`, every limit with nothing in
    /// use), in limit order then bucket order: what `blimits` shows.
    pub fn limit_usage(&self, all: bool) -> Vec<LimitUsage> {
        let mut out = Vec::new();
        for (r, rule) in self.alloc_limits.rules.iter().enumerate() {
            let r = r as u32;
            let mut any = false;
            for (key, used) in self.alloc_limits.used.range(first_key(r)..first_key(r + 1)) {
                any = true;
                out.push(self.usage_row(rule, Some(key), used.clone()));
            }
            if all && !any {
                out.push(self.usage_row(rule, None, Use::default()));
            }
        }
        out
    }

    fn usage_row(&self, rule: &Rule, key: Option<&Key>, used: Use) -> LimitUsage {
        let spec = &rule.spec;
        let shown = |scope: &Scope, own: Option<String>| -> Option<String> {
            match scope {
                Scope::Any => None,
                Scope::Each(_) if own.is_some() => own,
                Scope::Together(m) | Scope::Each(m) => Some(members_text(m)),
            }
        };
        let own = |v: u32, name: &dyn Fn(u32) -> String| (v != ALL).then(|| name(v));
        let k = key.cloned();
        let (slots, mem, jobs) = match &k {
            Some(key) => self.bounds(key),
            None => (spec.slots, spec.mem.and_then(|m| if let Amount::Mb(x) = m { Some(x) } else { None }), spec.jobs),
        };
        let resources = spec
            .resources
            .iter()
            .enumerate()
            .map(|(i, (n, bound))| (n.clone(), used.res.get(i).copied().unwrap_or(0.0), *bound))
            .collect();
        LimitUsage {
            resources,
            name: spec.name.clone(),
            users: shown(&spec.users, k.as_ref().and_then(|k| own(k.user, &|u| self.users[u as usize].clone()))),
            queues: shown(
                &spec.queues,
                k.as_ref().and_then(|k| own(k.queue, &|q| self.queues[q as usize].spec.name.clone())),
            ),
            hosts: shown(&spec.hosts, k.as_ref().and_then(|k| own(k.host, &|h| self.hosts[h as usize].name.clone()))),
            projects: shown(&spec.projects, k.as_ref().and_then(|k| k.project.clone())),
            apps: shown(&spec.apps, k.as_ref().and_then(|k| k.app.clone())),
            used,
            slots,
            mem,
            jobs,
        }
    }

    /// Books every running job under the limits anew (after the limits or
    /// the jobs were taken over whole).
    pub(crate) fn rebook_limits(&mut self) {
        self.alloc_limits.used.clear();
        let running: Vec<JobId> =
            self.jobs.iter().filter(|(_, j)| matches!(j.state, JobState::Running { .. })).map(|(id, _)| id).collect();
        for id in running {
            self.book_limits(id, true);
        }
    }
}

/// The first key of rule `r` in key order.
fn first_key(r: u32) -> Key {
    Key { rule: r, user: 0, queue: 0, host: 0, project: None, app: None }
}

/// Members as a limit names them: `all`, names, `~name`s.
fn members_text(m: &Members) -> String {
    let mut parts: Vec<String> = Vec::new();
    if m.all {
        parts.push("all".into());
    }
    parts.extend(m.names.iter().cloned());
    parts.extend(m.except.iter().map(|e| format!("~{e}")));
    parts.join(" ")
}
