//! Why a pending job is not running (for `bjobs -p`).

use crate::alloc_limits::{LimitReason, LimitResource};
use crate::dispatch::UnitKind;
use crate::engine::{Engine, JobId, JobState};
use crate::time::Time;

#[derive(Clone, Debug, PartialEq)]
pub enum PendingReason {
    /// QJOB_LIMIT reached.
    QueueLimit { queue: String, limit: u32 },
    /// UJOB_LIMIT reached.
    UserQueueLimit { queue: String, limit: u32 },
    /// The queue runs as many slots as its slot pool entitles it to.
    SlotPool { pool: String, entitled: u64 },
    /// MAX_JOBS of `lsb.users` reached.
    UserLimit { limit: u32 },
    /// Fewer free slots on the queue's hosts (that the job may use) than it
    /// needs.
    NotEnoughSlots { need: u32, free: u64 },
    /// The job's user has no share assignment in its queue's fairshare
    /// policy any more (after a reconfiguration).
    NoShares,
    /// A user with a higher fairshare priority goes first.
    LowerPriority { than: String },
    /// Nothing stops it: it waits for the next dispatch pass.
    NextPass,
    /// Held by `bstop`.
    Held,
    /// Its `bsub -w` condition does not hold yet.
    Dependency,
    /// Its `bsub -w` condition does not hold, and every job it names has
    /// ended.
    DependencyNever,
    /// As many elements of its job array run as its `%limit` allows.
    ArrayLimit,
    /// As many jobs run under its job group (or a group above it) as the
    /// group's job limit allows (`bgadd -L`).
    JobGroupLimit { group: String },
    /// The queue's PROCLIMIT changed and the job's `-n` is outside it.
    ProcLimit,
    /// Enough slots are free, but not on hosts its resource requirements
    /// (select, span, same, rusage) accept.
    ResReq,
    /// It could not finish before its termination deadline (`bsub -t`).
    Deadline,
    /// Its begin time (`bsub -b`) has not come.
    BeginTime,
    /// A resource allocation limit of `lsb.resources` is reached
    /// ([`crate::alloc_limits`]): its name, the kind of consumer it
    /// names, and the resource.
    AllocLimit { name: String, kind: LimitReason, resource: LimitResource },
}

impl std::fmt::Display for PendingReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PendingReason::QueueLimit { queue, limit } => {
                write!(f, "The queue's job slot limit is reached (QJOB_LIMIT {limit} in queue {queue})")
            }
            PendingReason::UserQueueLimit { queue, limit } => {
                write!(
                    f,
                    "The user has reached the per-user job slot limit of the queue (UJOB_LIMIT {limit} in queue {queue})"
                )
            }
            PendingReason::SlotPool { pool, entitled } => {
                write!(f, "The queue uses its share of slot pool {pool} ({entitled} slots)")
            }
            PendingReason::UserLimit { limit } => {
                write!(f, "The user has reached their job slot limit (MAX_JOBS {limit})")
            }
            PendingReason::NotEnoughSlots { need, free } => {
                write!(f, "Not enough job slots: {need} needed, {free} free on the queue's hosts")
            }
            PendingReason::NoShares => write!(f, "The user has no share assignment in the queue's fairshare policy"),
            PendingReason::LowerPriority { than } => {
                write!(f, "A user with a higher fairshare priority goes first ({than})")
            }
            PendingReason::NextPass => write!(f, "Waiting for the next dispatch pass"),
            PendingReason::Held => write!(f, "The job was suspended by the user while pending"),
            PendingReason::Dependency => write!(f, "Job dependency condition not satisfied"),
            PendingReason::DependencyNever => write!(f, "Dependency condition invalid or never satisfied"),
            PendingReason::ArrayLimit => write!(f, "The job array has reached its running element limit"),
            PendingReason::JobGroupLimit { group } => {
                write!(f, "The specified job group has reached its job limit (job group <{group}>)")
            }
            PendingReason::ProcLimit => write!(f, "Job no longer satisfies PROCLIMIT configuration"),
            PendingReason::ResReq => write!(f, "Not enough hosts meet the job's resource requirements"),
            PendingReason::Deadline => write!(f, "The job cannot finish before its termination deadline"),
            PendingReason::BeginTime => write!(f, "The job has a specified start time"),
            PendingReason::AllocLimit { name, kind, resource } => {
                let on = match kind {
                    LimitReason::User => "user or user group",
                    LimitReason::Queue => "queue",
                    LimitReason::Project => "project",
                    LimitReason::App => "application profile",
                    LimitReason::Host => "host and/or host group",
                    LimitReason::Cluster => "",
                };
                let what = match resource {
                    LimitResource::Slots => "slot",
                    LimitResource::Mem => "mem",
                    LimitResource::Resource(name) => name.as_str(),
                    LimitResource::Jobs => "",
                };
                // LSF's words: "JOBS limit defined for the queue has been
                // reached", "Resource (slot) limit defined on queue has
                // been reached", "... cluster wide ...".
                match (resource, kind) {
                    (LimitResource::Jobs, LimitReason::Cluster) => write!(f, "JOBS limit defined cluster-wide"),
                    (LimitResource::Jobs, LimitReason::Host) => write!(f, "JOBS limit defined on host or host group"),
                    (LimitResource::Jobs, LimitReason::User) => {
                        write!(f, "JOBS limit defined for the user or user group")
                    }
                    (LimitResource::Jobs, _) => write!(f, "JOBS limit defined for the {on}"),
                    (_, LimitReason::Cluster) => write!(f, "Resource ({what}) limit defined cluster wide"),
                    (_, _) => write!(f, "Resource ({what}) limit defined on {on}"),
                }?;
                write!(f, " has been reached (Limit {name})")
            }
        }
    }
}

impl Engine {
    /// Why pending job `id` is not running now; `None` if it is not pending.
    pub fn pending_reason(&self, id: JobId, t: Time) -> Option<PendingReason> {
        // An element not made yet has its array's template's reasons, its
        // dependency as it stands now ([`crate::array_tail`]).
        let job = self.job_or_template(id)?;
        let unmade = self.jobs.get(&id).is_none();
        if !matches!(job.state, JobState::Pending) {
            return None;
        }
        if job.held {
            return Some(PendingReason::Held);
        }
        let waiting = if unmade { job.depends.as_ref().is_some_and(|d| !self.satisfied(d)) } else { job.waiting };
        if let (true, Some(d)) = (waiting, &job.depends) {
            let never = self.never_satisfied(d);
            return Some(if never { PendingReason::DependencyNever } else { PendingReason::Dependency });
        }
        if self.is_parked(id) || (unmade && self.array_at_limit(id)) {
            return Some(PendingReason::ArrayLimit);
        }
        if job.begin.is_some_and(|b| b > t) {
            return Some(PendingReason::BeginTime);
        }
        if let Some(r) = self.limit_reason(id, job) {
            return Some(r);
        }
        if !self.meets_deadline(job, t) {
            return Some(PendingReason::Deadline);
        }
        let (members, index) = &self.host_sets[self.queues[job.queue].host_set];
        let usable: u64 = members
            .iter()
            .enumerate()
            .filter(|&(_, &h)| self.hosts[h as usize].takes_user(job))
            .map(|(pos, _)| u64::from(index.get(pos)))
            .sum();
        if usable < u64::from(job.slots) {
            return Some(PendingReason::NotEnoughSlots { need: job.slots, free: usable });
        }
        if job.constrained() && self.place(job, t, &crate::reserve::Ask::start(job)).is_none() {
            return Some(self.host_limits_reason(job).unwrap_or(PendingReason::ResReq));
        }
        let unit = &self.units[self.queue_unit[job.queue]];
        if let UnitKind::Fairshare { policy } = unit.kind {
            let tree = &self.fairshare.policies[policy].tree;
            let Some(&(_, mine)) = job.accounts.iter().find(|a| a.0 == policy) else {
                return Some(PendingReason::NoShares);
            };
            let adjustment = self.adjustment();
            let inputs = adjustment.inputs();
            let my_priority = tree.priority(mine, t, &inputs);
            let better = unit
                .by_account
                .keys()
                .filter(|&&a| a != mine)
                .map(|&a| (tree.priority(a, t, &inputs), a))
                .filter(|(p, _)| p.total_cmp(&my_priority).is_gt())
                .max_by(|x, y| x.0.total_cmp(&y.0).then(y.1.cmp(&x.1)));
            if let Some((_, a)) = better {
                return Some(PendingReason::LowerPriority { than: tree.name(a).to_string() });
            }
        }
        Some(PendingReason::NextPass)
    }
}
