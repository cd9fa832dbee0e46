//! Why a job waits, all of it (`bjobs -p -l`, `allot explain`): its
//! pending reason, every limit that holds it, each host of its queue that
//! cannot take it and why (grouped by kind, with counts, as LSF's pending
//! reasons are), its place in its share tree at each level (its priority
//! and the sibling that goes first, with both numbers), the reservations
//! other jobs hold on its hosts with their predicted starts, what it
//! holds reserved itself, and its predicted start.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::dispatch::UnitKind;
use crate::engine::{Engine, JobId, JobState};
use crate::reserve::Ask;
use crate::time::Time;

/// Everything that holds a pending job now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// The job, as its driver names it to its user ([`Engine::explain_named`]).
    pub job: String,
    pub user: String,
    pub queue: String,
    /// `-n` as it stands: (min, max).
    pub slots: (u32, u32),
    /// The reason `bjobs -p` gives: the first that holds it.
    pub reason: String,
    /// Every limit it is over now (queue, user, pool, array, PROCLIMIT).
    pub limits: Vec<String>,
    /// The queue's hosts that cannot give it a slot now, by why.
    pub hosts: Vec<HostsWhy>,
    /// The queue's hosts that can, with how many slots each.
    pub usable: Vec<(String, u32)>,
    /// Its account in the share tree from the top level down, under
    /// fairshare.
    pub shares: Vec<ShareLevel>,
    /// Reservations other pending jobs hold on its queue's hosts: they
    /// have first claim on those slots.
    pub reservations: Vec<Reserving>,
    /// What it holds reserved itself: host, slots.
    pub reserved: Vec<(String, u32)>,
    /// When it is predicted to start, for a job that holds a reservation
    /// (as `bjobs -l` shows it): the prediction counts the running jobs'
    /// ends, not the jobs ahead of it, so for one that does not reserve it
    /// would say too early (the reserving jobs have first claim).
    pub predicted_start: Option<u64>,
}

/// Hosts that cannot take the job for one reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostsWhy {
    pub why: String,
    pub hosts: Vec<String>,
}

/// One level of a job's path in its share tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShareLevel {
    pub node: String,
    pub priority: f64,
    /// The sibling with pending jobs and the highest priority, when it
    /// is higher than this node's: it goes first.
    pub ahead: Option<(String, f64)>,
}

/// A reservation another job holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reserving {
    /// The job that holds it, named as [`Explanation::job`] is.
    pub job: String,
    pub slots: u32,
    pub hosts: Vec<String>,
    pub predicted_start: Option<u64>,
}

impl Engine {
    /// Everything that holds pending job `id` at `t`; `None` when it is
    /// not pending.
    pub fn explain(&self, id: JobId, t: Time) -> Option<Explanation> {
        self.explain_named(id, t, &|id| id.to_string())
    }

    /// [`Engine::explain`], the jobs named by `name` (allotd names them by
    /// their job numbers, `5[3]`; a simulation by its workload's).
    pub fn explain_named(&self, id: JobId, t: Time, name: &dyn Fn(JobId) -> String) -> Option<Explanation> {
        let job = self.job_or_template(id)?;
        if !matches!(job.state, JobState::Pending) {
            return None;
        }
        let reason = self.pending_reason(id, t)?.to_string();
        let q = &self.queues[job.queue];
        let mut limits: Vec<String> = self.limit_reasons(id, job).iter().map(ToString::to_string).collect();
        limits.dedup();
        // Each host of the queue, in host order: why it gives no slot.
        let (members, _) = &self.host_sets[q.host_set];
        let allowed = job.picks.as_ref().and_then(|p| p.allowed.as_ref());
        let select = job.res.as_ref().and_then(|r| r.select.as_ref());
        let mem = job.res.as_ref().and_then(|r| r.rusage_mem).unwrap_or(0.0);
        let mut by_why: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
        let mut order: Vec<&'static str> = Vec::new();
        let mut usable = Vec::new();
        let ask = Ask::start(job);
        for &h in members {
            let host = &self.hosts[h as usize];
            let why = if !host.up {
                Some("Closed or unreachable: takes no new jobs")
            } else if host.excl_locks > 0 {
                Some("Held by an exclusive job (bsub -x, cu[excl])")
            } else if !host.takes_user(job) {
                Some("The user has no shares in the host's partition")
            } else if allowed.is_some_and(|a| a.binary_search_by_key(&h, |x| x.0).is_err()) {
                Some("Not specified in job submission (-m)")
            } else if select.is_some_and(|s| !s.holds(&|n| self.host_value(h, n))) {
                Some("Job's resource requirements not satisfied (select)")
            } else if job.exclusive && host.used > 0 {
                Some("Not empty: the job is exclusive (bsub -x)")
            } else if host.used >= host.slots {
                Some("Job slot limit reached: every slot in use")
            } else if host.unclaimed() == 0 {
                Some("Its free slots are reserved for other pending jobs")
            } else if mem > 0.0 && crate::placement::free_mem(host) < self.rusage_on_host(mem, 1) {
                Some("Not enough memory to reserve (rusage[mem])")
            } else {
                match self.host_cap(h, job, t, &ask) {
                    0 => Some("The queue's per-host limits (HJOB_LIMIT, PJOB_LIMIT, JOB_ACCEPT_INTERVAL)"),
                    cap => {
                        usable.push((host.name.clone(), cap));
                        None
                    }
                }
            };
            if let Some(why) = why {
                if !by_why.contains_key(why) {
                    order.push(why);
                }
                by_why.entry(why).or_default().push(host.name.clone());
            }
        }
        let hosts =
            order.into_iter().map(|why| HostsWhy { why: why.to_string(), hosts: by_why[why].clone() }).collect();
        let reservations = self
            .reservations
            .iter()
            .filter(|&(&other, _)| other != id)
            .filter(|(_, r)| r.hosts.iter().any(|&(h, ..)| members.contains(&h)))
            .map(|(&other, r)| Reserving {
                job: name(other),
                slots: r.slots(),
                hosts: r.hosts.iter().map(|&(h, n, _)| format!("{}*{n}", self.hosts[h as usize].name)).collect(),
                predicted_start: self.predicted_start(other, t).map(|p| p.0),
            })
            .collect();
        let reserved = self.reservations.get(&id).map_or_else(Vec::new, |r| {
            r.hosts.iter().map(|&(h, n, _)| (self.hosts[h as usize].name.clone(), n)).collect()
        });
        Some(Explanation {
            job: name(id),
            user: self.users[job.user as usize].clone(),
            queue: q.spec.name.clone(),
            slots: (job.slots, job.max_slots),
            reason,
            limits,
            hosts,
            usable,
            shares: self.share_levels(id, t),
            reservations,
            reserved,
            predicted_start: self
                .reservations
                .contains_key(&id)
                .then(|| self.predicted_start(id, t))
                .flatten()
                .map(|p| p.0),
        })
    }

    /// The job's account and its ancestors, top level first, each with its
    /// dynamic priority and the sibling with pending jobs that goes first.
    fn share_levels(&self, id: JobId, t: Time) -> Vec<ShareLevel> {
        let Some(job) = self.job_or_template(id) else { return Vec::new() };
        let unit = &self.units[self.queue_unit[job.queue]];
        let UnitKind::Fairshare { policy } = unit.kind else { return Vec::new() };
        let tree = &self.fairshare.policies[policy].tree;
        let Some(&(_, mine)) = job.accounts.iter().find(|a| a.0 == policy) else { return Vec::new() };
        // The nodes with pending jobs under them.
        let waiting: BTreeSet<_> = unit.by_account.keys().flat_map(|&a| tree.path(a)).collect();
        let adjustment = self.adjustment();
        let inputs = adjustment.inputs();
        let mut path: Vec<_> = tree.path(mine).collect();
        path.reverse();
        path.into_iter()
            .map(|node| {
                let priority = tree.priority(node, t, &inputs);
                let parent = tree.parent(node).unwrap_or(crate::shares::NodeId::ROOT);
                let ahead = tree
                    .children(parent)
                    .iter()
                    .filter(|&&s| s != node && waiting.contains(&s))
                    .map(|&s| (tree.name(s).to_string(), tree.priority(s, t, &inputs)))
                    .filter(|(_, p)| p.total_cmp(&priority).is_gt())
                    .max_by(|x, y| x.1.total_cmp(&y.1).then(y.0.cmp(&x.0)));
                ShareLevel { node: tree.name(node).to_string(), priority, ahead }
            })
            .collect()
    }
}

impl std::fmt::Display for Explanation {
    /// [`Explanation::render`] with times as the engine's seconds.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(&|t| t.to_string()))
    }
}

impl Explanation {
    /// As `bjobs -p -l` shows it under a job, times as `time` writes them.
    pub fn render(&self, time: &dyn Fn(u64) -> String) -> String {
        let mut out = String::new();
        let _ = self.write(&mut out, time);
        out
    }

    fn write(&self, f: &mut String, time: &dyn Fn(u64) -> String) -> std::fmt::Result {
        use std::fmt::Write as _;
        writeln!(f, " PENDING REASONS:")?;
        writeln!(f, " {};", self.reason)?;
        for l in self.limits.iter().filter(|l| **l != self.reason) {
            writeln!(f, " {l};")?;
        }
        for h in &self.hosts {
            let n = h.hosts.len();
            writeln!(f, " {}: {n} host{} ({});", h.why, if n == 1 { "" } else { "s" }, h.hosts.join(" "))?;
        }
        if !self.usable.is_empty() {
            let total: u32 = self.usable.iter().map(|u| u.1).sum();
            let list: Vec<String> = self.usable.iter().map(|(h, n)| format!("{h}*{n}")).collect();
            writeln!(f, " Slots it could have now: {total} of {} needed ({});", self.slots.0, list.join(" "))?;
        }
        if !self.shares.is_empty() {
            writeln!(f, "\n SHARE TREE (from the top):")?;
            for l in &self.shares {
                match &l.ahead {
                    Some((s, p)) => {
                        writeln!(f, " {}: priority {:.3}; {s} goes first, priority {p:.3}", l.node, l.priority)?
                    }
                    None => writeln!(
                        f,
                        " {}: priority {:.3}; first among its siblings with pending jobs",
                        l.node, l.priority
                    )?,
                }
            }
        }
        if !self.reservations.is_empty() {
            writeln!(f, "\n RESERVED FOR OTHER JOBS:")?;
            for r in &self.reservations {
                let when = r
                    .predicted_start
                    .map_or_else(|| "not predicted".to_string(), |t| format!("predicted to start at {}", time(t)));
                writeln!(f, " job {}: {} slots on {}; {when}", r.job, r.slots, r.hosts.join(" "))?;
            }
        }
        if !self.reserved.is_empty() {
            let list: Vec<String> = self.reserved.iter().map(|(h, n)| format!("{h}*{n}")).collect();
            writeln!(f, "\n RESERVED FOR IT: {}", list.join(" "))?;
        }
        match self.predicted_start {
            Some(t) => writeln!(f, "\n PREDICTED START: {}", time(t)),
            None if self.reserved.is_empty() => {
                writeln!(f, "\n PREDICTED START: none predicted: it holds no reservation")
            }
            None => writeln!(f, "\n PREDICTED START: none can be predicted"),
        }
    }
}
