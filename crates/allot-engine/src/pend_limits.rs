//! Pending job thresholds: LSF's MAX_PEND_JOBS and MAX_PEND_SLOTS, for
//! the whole cluster (`lsb.params`), per user or user group (`lsb.users`'
//! User section) and per queue (`lsb.queues`).
//!
//! A submission that would take a consumer past its threshold is refused
//! with [`Rejection::PendingThreshold`]; nothing of it is kept. LSF's
//! `bsub` then sends it again every SUB_TRY_INTERVAL seconds (60), up to
//! `LSB_NTRIES` times in all (for ever without it), saying
//! "Pending job threshold reached. Retrying in 60 seconds..."; allotd's
//! `bsub` does the same, and so does the simulator with a workload's
//! jobs (it submits a refused job again SUB_TRY_INTERVAL later).
//!
//! What counts, as LSF counts it:
//! - a pending job is one not running and not ended: held (PSUSP),
//!   waiting on a dependency or on its array's limit, or ready; each
//!   element of an array is a job;
//! - its pending slots are the slots it asks (`-n`; the least of
//!   `-n min,max`);
//! - a user named in the User section has that row's thresholds; a
//!   group's row holds for its members together ("If a user is a member of
//!   multiple user groups, the user's pending jobs are counted towards the
//!   pending job limits of all groups"), and `group@` for each of them
//!   alone; `default` holds for each user named in no row of their own;
//! - a queue's thresholds count the pending jobs of all its users.
//!
//! Jobs that become pending again (requeued) are never refused: the
//! thresholds bound what a submission adds.

use std::collections::BTreeMap;

use crate::engine::{Engine, Job};
use crate::rejection::Rejection;

/// MAX_PEND_JOBS and MAX_PEND_SLOTS of one consumer; `None` is unlimited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PendLimit {
    pub jobs: Option<u64>,
    pub slots: Option<u64>,
}

impl PendLimit {
    pub fn is_none(&self) -> bool {
        self.jobs.is_none() && self.slots.is_none()
    }
}

/// The User section's pending thresholds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UserPendLimits {
    /// Users by name.
    pub users: BTreeMap<String, PendLimit>,
    /// `group@`: each member of the group alone, unless named in a row of
    /// their own.
    pub each_member: Vec<(String, PendLimit)>,
    /// Groups as a whole (a group's name in `USER_NAME`).
    pub groups: Vec<(String, PendLimit)>,
    /// `default`: each user with no row of their own.
    pub default: PendLimit,
}

/// Pending jobs and their slots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Pend {
    pub jobs: u64,
    pub slots: u64,
}

/// What is pending now: in all, per user (by number), per queue and per
/// group of [`UserPendLimits::groups`] (by its place there).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct PendCounts {
    total: Pend,
    users: Vec<Pend>,
    queues: Vec<Pend>,
    groups: Vec<Pend>,
    /// Per user: the groups of [`UserPendLimits::groups`] they belong to,
    /// found at their first pending job.
    member_of: Vec<Option<Vec<usize>>>,
}

fn at(list: &mut Vec<Pend>, i: usize) -> &mut Pend {
    if list.len() <= i {
        list.resize(i + 1, Pend::default());
    }
    &mut list[i]
}

impl Engine {
    /// How long a submission refused by a threshold waits before it is
    /// sent again, seconds: SUB_TRY_INTERVAL, at least 1 (a configuration
    /// built by hand may leave it 0).
    pub fn sub_try_interval(&self) -> u32 {
        self.config.sub_try_interval.max(1)
    }

    /// A job of `user` in `queue` asking `slots` became pending (`up`)
    /// or stopped being pending (it started, ended, or was changed).
    pub(crate) fn count_pending(&mut self, user: u32, queue: usize, slots: u32, up: bool) {
        self.count_pending_n(user, queue, slots, 1, up);
    }

    /// [`Engine::count_pending`] for `n` jobs alike.
    pub(crate) fn count_pending_n(&mut self, user: u32, queue: usize, slots: u32, n: u64, up: bool) {
        let slots = u64::from(slots) * n;
        let change = |p: &mut Pend| {
            if up {
                p.jobs += n;
                p.slots += slots;
            } else {
                p.jobs = p.jobs.saturating_sub(n);
                p.slots = p.slots.saturating_sub(slots);
            }
        };
        let c = &mut self.pend;
        change(&mut c.total);
        change(at(&mut c.users, user as usize));
        change(at(&mut c.queues, queue));
        if c.member_of.len() <= user as usize {
            c.member_of.resize(user as usize + 1, None);
        }
        let config = &self.config;
        let name = &self.users[user as usize];
        let member_of = c.member_of[user as usize].get_or_insert_with(|| pend_groups(config, name).collect());
        for &g in member_of.iter() {
            change(at(&mut c.groups, g));
        }
    }

    /// Whether `jobs` more pending jobs like `job` (an array's elements)
    /// stay within every threshold that holds for them: the first one
    /// they would pass, as LSF names it, if not.
    pub(crate) fn within_pend_limits(&self, job: &Job, jobs: u64) -> Result<(), Rejection> {
        let add = Pend { jobs, slots: jobs * u64::from(job.slots) };
        let c = &self.pend;
        let user = &self.users[job.user as usize];
        let limits = &self.config.user_pend_limits;
        let own =
            limits.users.get(user).copied().or_else(|| {
                limits.each_member.iter().find(|(g, _)| self.config.groups.contains(g, user)).map(|(_, l)| *l)
            });
        let own = own.unwrap_or(limits.default);
        check(own, c.users.get(job.user as usize).copied().unwrap_or_default(), add, || format!("User <{user}>"))?;
        for i in pend_groups(&self.config, user) {
            let (g, limit) = &limits.groups[i];
            check(*limit, c.groups.get(i).copied().unwrap_or_default(), add, || format!("Group <{g}>"))?;
        }
        let queue = &self.queues[job.queue];
        let in_queue = c.queues.get(job.queue).copied().unwrap_or_default();
        check(queue.spec.limits.pend, in_queue, add, || format!("Queue <{}>", queue.spec.name))?;
        check(self.config.pend_limits, c.total, add, String::new)
    }
}

/// The groups of [`UserPendLimits::groups`] `user` belongs to, by their
/// place there.
fn pend_groups<'a>(config: &'a crate::model::EngineConfig, user: &'a str) -> impl Iterator<Item = usize> + 'a {
    let groups = &config.user_pend_limits.groups;
    (0..groups.len()).filter(move |&i| config.groups.contains(&groups[i].0, user))
}

/// Refused when `now + add` passes either of `limit`'s thresholds: for
/// now, or for good when `add` alone passes it (it would never be taken,
/// and a `bsub` would try for ever).
fn check(limit: PendLimit, now: Pend, add: Pend, who: impl Fn() -> String) -> Result<(), Rejection> {
    for (max, now, add, slots) in [(limit.jobs, now.jobs, add.jobs, false), (limit.slots, now.slots, add.slots, true)] {
        let Some(max) = max else { continue };
        if add > max {
            let who = match who() {
                w if w.is_empty() => "the cluster's".to_string(),
                w => format!("{w}'s"),
            };
            return Err(Rejection::AbovePendingThreshold { who, asked: add, max, slots });
        }
        if now + add > max {
            return Err(Rejection::PendingThreshold { who: who(), slots });
        }
    }
    Ok(())
}
