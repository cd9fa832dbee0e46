//! Site-defined numeric resources: licenses, scratch space, anything a
//! site counts (LSF's `lsf.shared` Resource section, given values by the
//! cluster file's ResourceMap or a host's RESOURCES).
//!
//! A resource has instances, each a total and the hosts that see it: a
//! ResourceMap `value@[hostA hostB]` or `value@[all]` is one instance the
//! hosts share (a license server's count); `value@[default]`,
//! `value@[hostA]` and a host's `name=value` are a host's own.
//!
//! - `select[licA>0]` and `order[licA]` read on a host what its instance
//!   has left: its total less what running jobs hold now.
//! - `rusage[licA=n]`: a job starts only where each instance it would
//!   take from has enough left. A shared instance gives a job n once,
//!   however many of its hosts the job runs on (a license is the job's);
//!   a host's own gives n on each host, or on each slot with
//!   RESOURCE_RESERVE_PER_SLOT=y, as `rusage[mem]` does. A compound
//!   requirement's terms each take theirs on the hosts of their slots.
//! - `duration=d`: held that long from the start, then given back (a pass
//!   is due then); with `decay=1` what is held falls linearly to nothing
//!   over the duration, as every pass sees it, and a pass is due every
//!   MBD_SLEEP_TIME meanwhile (every hundredth of the duration at the
//!   most often), as LSF looks again each cycle.
//! - Held until the job ends, suspended or not (a license a suspended job
//!   checked out stays checked out); reservations do not hold them.
//! - A job asking for a resource no host has, or for one the site made
//!   not consumable, is refused at submission.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::{Engine, Job, JobId, JobState, Rejection};
use crate::reasons::PendingReason;
use crate::resreq::{ResReq, ResUse};
use crate::time::Time;

/// An instance shared by several hosts (`None`: every host).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SharedSpec {
    pub name: String,
    pub total: f64,
    pub hosts: Option<Vec<String>>,
}

/// What one job holds of an instance.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Hold {
    amount: f64,
    start: Time,
    duration: Option<u64>,
    decay: bool,
}

impl Hold {
    fn at(&self, t: Time) -> f64 {
        let Some(d) = self.duration else { return self.amount };
        let gone = t.0.saturating_sub(self.start.0);
        if gone >= d {
            0.0
        } else if self.decay {
            self.amount * (1.0 - gone as f64 / d as f64)
        } else {
            self.amount
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Instance {
    name: String,
    total: f64,
    shared: bool,
    hosts: Vec<u32>,
    holds: BTreeMap<JobId, Hold>,
}

impl Instance {
    fn held(&self, t: Time) -> f64 {
        self.holds.values().map(|h| h.at(t)).sum()
    }
}

/// Every instance, and per host the instance of each resource it sees.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Instances {
    insts: Vec<Instance>,
    by_host: Vec<BTreeMap<String, u32>>,
    /// The clock of the last pass or start: what `select` sees held.
    now: Time,
    /// Site resources a job may not ask in `rusage`.
    not_consumable: Vec<String>,
    /// The jobs that hold any.
    holders: std::collections::BTreeSet<JobId>,
}

/// One resource a job would take from one instance.
type Need = (u32, f64, ResUse);

/// Amounts of a limit's RESOURCE names, in its order.
pub(crate) type Amounts = smallvec::SmallVec<[f64; 2]>;

impl Instances {
    /// The instances of `shared` and of every host's own numeric
    /// resources (`hosts`: names and their numeric values).
    pub(crate) fn new(
        shared: &[SharedSpec],
        hosts: &[(String, Vec<(String, f64)>)],
        not_consumable: &[String],
    ) -> Self {
        let mut out = Instances {
            by_host: vec![BTreeMap::new(); hosts.len()],
            not_consumable: not_consumable.to_vec(),
            ..Instances::default()
        };
        for s in shared {
            let members: Vec<u32> = (0..hosts.len() as u32)
                .filter(|&h| s.hosts.as_ref().is_none_or(|hs| hs.contains(&hosts[h as usize].0)))
                .collect();
            let i = out.insts.len() as u32;
            for &h in &members {
                out.by_host[h as usize].insert(s.name.clone(), i);
            }
            out.insts.push(Instance {
                name: s.name.clone(),
                total: s.total,
                shared: true,
                hosts: members,
                holds: BTreeMap::new(),
            });
        }
        for (h, (_, values)) in hosts.iter().enumerate() {
            for (name, v) in values {
                if out.by_host[h].contains_key(name) {
                    continue;
                }
                let i = out.insts.len() as u32;
                out.by_host[h].insert(name.clone(), i);
                out.insts.push(Instance {
                    name: name.clone(),
                    total: *v,
                    shared: false,
                    hosts: vec![h as u32],
                    holds: BTreeMap::new(),
                });
            }
        }
        out
    }
}

/// One instance as `bhosts -s` and `lsload -s` show it.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedUsage {
    pub name: String,
    pub total: f64,
    pub reserved: f64,
    pub hosts: Vec<String>,
}

impl Engine {
    /// What host `h`'s instance of `name` has left now, if it has one.
    pub(crate) fn resource_left(&self, h: u32, name: &str) -> Option<f64> {
        let r = &self.resources;
        let i = *r.by_host.get(h as usize)?.get(name)?;
        let inst = &r.insts[i as usize];
        Some((inst.total - inst.held(r.now)).max(0.0))
    }

    /// Refuses a requirement whose `rusage` names a resource no host has,
    /// or one not consumable.
    pub(crate) fn check_rusage(&self, r: &ResReq) -> Result<(), Rejection> {
        for u in r.rusage.iter().chain(r.terms.iter().flat_map(|t| t.res.rusage.iter())) {
            if self.resources.not_consumable.contains(&u.name) {
                return Err(Rejection::BadResReq(format!("rusage[{}]: the resource is not consumable", u.name)));
            }
            if !self.resources.insts.iter().any(|i| i.name == u.name) {
                return Err(Rejection::BadResReq(format!("rusage[{}]: no host has this resource", u.name)));
            }
        }
        Ok(())
    }

    /// What each entry of `alloc` takes under `res` (each entry its
    /// term's), by instance; `None` when a host lacks a resource asked.
    fn needs(&self, res: Option<&ResReq>, alloc: &[(u32, u32)]) -> Option<Vec<Need>> {
        let Some(res) = res.filter(|r| asks_site(r)) else { return Some(Vec::new()) };
        let terms = crate::compound::entry_terms(res, alloc);
        let mut out: Vec<Need> = Vec::new();
        for (&(h, n), r) in alloc.iter().zip(terms) {
            for u in &r.rusage {
                let i = *self.resources.by_host[h as usize].get(&u.name)?;
                let inst = &self.resources.insts[i as usize];
                let amount = if inst.shared { u.amount } else { self.rusage_on_host(u.amount, n) };
                match out.iter_mut().find(|x| x.0 == i) {
                    // A shared instance gives a job its amount once.
                    Some(x) if inst.shared => x.1 = x.1.max(amount),
                    Some(x) => x.1 += amount,
                    None => out.push((i, amount, u.clone())),
                }
            }
        }
        Some(out)
    }

    /// Per entry of `alloc`, what `job` holds there of each of `names`
    /// under its `rusage` (a shared instance's amount on the first entry
    /// that reaches it): what a limit's RESOURCE counts.
    pub(crate) fn site_amounts(&self, job: &Job, alloc: &[(u32, u32)], names: &[(String, f64)]) -> Vec<Amounts> {
        let Some(res) = job.res.as_deref() else { return vec![Amounts::from_elem(0.0, names.len()); alloc.len()] };
        let mut seen: Vec<u32> = Vec::new();
        let mut out = Vec::with_capacity(alloc.len());
        for (&(h, n), r) in alloc.iter().zip(crate::compound::entry_terms(res, alloc)) {
            let mut row = Amounts::new();
            for (name, _) in names {
                let u = r.rusage.iter().find(|u| &u.name == name);
                let i = self.resources.by_host[h as usize].get(name).copied();
                row.push(match (u, i) {
                    (Some(u), Some(i)) if self.resources.insts[i as usize].shared => {
                        if seen.contains(&i) {
                            0.0
                        } else {
                            seen.push(i);
                            u.amount
                        }
                    }
                    (Some(u), Some(_)) => self.rusage_on_host(u.amount, n),
                    _ => 0.0,
                });
            }
            out.push(row);
        }
        out
    }

    /// What host `h` would take of `name` for `job` holding one slot
    /// there: its `rusage` amount (shared or the host's own), 0 without.
    pub(crate) fn site_amount_on(&self, h: u32, job: &Job, name: &str) -> (f64, bool) {
        let amount = rusage_amount(job, name);
        if amount <= 0.0 {
            return (0.0, false);
        }
        let shared =
            self.resources.by_host[h as usize].get(name).is_some_and(|&i| self.resources.insts[i as usize].shared);
        (amount, shared)
    }

    /// How many slots host `h` may give `job` under its `rusage` of site
    /// resources at `t` (`cap` at most).
    pub(crate) fn resource_cap(&self, h: u32, job: &Job, t: Time, cap: u32) -> u32 {
        let Some(res) = job.res.as_deref() else { return cap };
        let mut cap = cap;
        for u in &res.rusage {
            let Some(&i) = self.resources.by_host[h as usize].get(&u.name) else { return 0 };
            let inst = &self.resources.insts[i as usize];
            let left = inst.total - inst.held(t) + 1e-9;
            let per_slot = !inst.shared && self.config.resource_reserve_per_slot;
            cap = crate::placement::cap_by_amount(cap, left, u.amount, per_slot);
        }
        cap
    }

    /// Whether `job` on `alloc` finds enough of every resource it asks at
    /// `t`; the reason, if not.
    pub(crate) fn alloc_within_resources(&self, job: &Job, alloc: &[(u32, u32)], t: Time) -> Result<(), PendingReason> {
        if self.resources.insts.is_empty() {
            return Ok(());
        }
        let Some(needs) = self.needs(job.res.as_deref(), alloc) else { return Err(PendingReason::ResReq) };
        for (i, amount, _) in needs {
            let inst = &self.resources.insts[i as usize];
            if inst.total - inst.held(t) + 1e-9 < amount {
                return Err(PendingReason::ResReq);
            }
        }
        Ok(())
    }

    /// Whether running job `job`, now on `alloc`, finds what more of the
    /// site's resources it would take on `grown`.
    pub(crate) fn grows_within_resources(&self, job: &Job, alloc: &[(u32, u32)], grown: &[(u32, u32)]) -> bool {
        let (Some(before), Some(after)) =
            (self.needs(job.res.as_deref(), alloc), self.needs(job.res.as_deref(), grown))
        else {
            return false;
        };
        let now = self.resources.now;
        after.iter().all(|(i, amount, _)| {
            let had = before.iter().find(|b| b.0 == *i).map_or(0.0, |b| b.1);
            let inst = &self.resources.insts[*i as usize];
            inst.total - inst.held(now) + 1e-9 >= amount - had
        })
    }

    /// A started job takes what it asks of the site's resources; a pass is
    /// due when a duration ends.
    pub(crate) fn hold_resources(&mut self, id: JobId, t: Time) {
        self.release_resources(id);
        if self.resources.insts.is_empty() {
            return;
        }
        let Some(job) = self.jobs.get(&id) else { return };
        let JobState::Running { alloc, .. } = &job.state else { return };
        let Some(needs) = self.needs(job.res.as_deref(), alloc) else { return };
        self.resources.now = self.resources.now.max(t);
        if !needs.is_empty() {
            self.resources.holders.insert(id);
        }
        for (i, amount, u) in needs {
            let hold = Hold { amount, start: t, duration: u.duration, decay: u.decay };
            self.resources.insts[i as usize].holds.insert(id, hold);
            if let Some(d) = u.duration {
                self.wakeups.insert(t.after(d));
                if u.decay {
                    let step = u64::from(self.config.mbd_sleep_time.max(1)).max(d / 100).max(1);
                    self.wakeups.extend((1..d.div_ceil(step)).map(|k| t.after(k * step)));
                }
            }
        }
    }

    /// A job that ends gives back what it holds.
    pub(crate) fn release_resources(&mut self, id: JobId) {
        // Most jobs hold none: no instance to look at.
        if !self.resources.holders.remove(&id) {
            return;
        }
        for inst in &mut self.resources.insts {
            inst.holds.remove(&id);
        }
    }

    /// The clock moves on to `t` (a pass): what `select` sees held.
    pub(crate) fn resource_clock(&mut self, t: Time) {
        self.resources.now = self.resources.now.max(t);
    }

    /// Every shared instance with what running jobs hold of it now: what
    /// `bhosts -s` and `lsload -s` show.
    pub fn shared_usage(&self) -> Vec<SharedUsage> {
        let r = &self.resources;
        r.insts
            .iter()
            .filter(|i| i.shared)
            .map(|i| SharedUsage {
                name: i.name.clone(),
                total: i.total,
                reserved: i.held(r.now),
                hosts: i.hosts.iter().map(|&h| self.hosts[h as usize].name.clone()).collect(),
            })
            .collect()
    }

    /// Holds every running job's resources anew, from its start (after a
    /// reconfiguration took the jobs over).
    pub(crate) fn rehold_resources(&mut self) {
        let running: Vec<(JobId, Time)> = self
            .jobs
            .iter()
            .filter_map(|(id, j)| match &j.state {
                JobState::Running { start, .. } => Some((id, *start)),
                _ => None,
            })
            .collect();
        for (id, start) in running {
            self.hold_resources(id, start);
        }
    }
}

/// The amount of site resource `name` a job's `rusage` asks (the least it
/// takes: once, on one host); 0 without.
pub(crate) fn rusage_amount(job: &Job, name: &str) -> f64 {
    job.res.as_deref().and_then(|r| r.rusage.iter().find(|u| u.name == name)).map_or(0.0, |u| u.amount)
}

/// Whether a requirement asks for any site resource (in a term too).
fn asks_site(r: &ResReq) -> bool {
    !r.rusage.is_empty() || r.terms.iter().any(|t| !t.res.rusage.is_empty())
}
