//! A multifactor policy in the engine: every queue's pending jobs form one
//! dispatch unit, ordered at each pass by spec 002's priority (highest
//! first; equal priorities in the unit's own order: `bsub -sp`, then
//! submission). The fair-share factor is the cluster's policy's, computed
//! at each pass from the usage ledger (running jobs charged so far) and the
//! pending jobs of each association (which the ticket policy needs), so
//! "priorities [are] recomputed ... at every scheduling pass".
//!
//! A job is charged to one association: `-G` (else `-P`) names its
//! account; without either, the user's first association (its default
//! account, first in the account file). A user with no association, or
//! none in the account named, is refused at submission.
//!
//! A job's QoS level (`-qos`, `normal` by default) must be one the user
//! may use; `standby` (any level marked exempt) lifts the queue's
//! RUNLIMIT and PROCLIMIT maximum. Its user factor (`-uf`, 1 by default)
//! is from 0 to 1.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap};

use super::ledger::{Held, Ledger};
use super::priority::{Factors, JobInputs, Maxima, QosRefusal, valid_user_factor};
use super::{AssocId, compute};
use crate::dispatch::{Place, Unit};
use crate::engine::{Engine, JobId, Rejection};
use crate::model::MultifactorSpec;
use crate::time::Time;

/// A pending job's multifactor priority, for `sprio`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PendingPriority<'a> {
    pub id: JobId,
    pub user: &'a str,
    pub account: &'a str,
    pub priority: f64,
    pub factors: Factors,
}

/// A pending job in a pass's order: the highest priority first, then the
/// unit's own order ([`Place`]).
struct Ranked {
    priority: f64,
    place: Place,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority.total_cmp(&other.priority).then(other.place.cmp(&self.place))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct MfState {
    pub(crate) spec: MultifactorSpec,
    /// What the queue and job size factors divide by (the configuration's
    /// queues and hosts: fixed until a reconfiguration makes a new engine).
    pub(crate) max: Maxima,
    pub(crate) ledger: Ledger,
    /// The periodic recomputation's next wake-up.
    pub(crate) next_calc: Option<Time>,
    /// What each running job is billed for.
    pub(crate) held: BTreeMap<JobId, Held>,
}

impl MfState {
    pub(crate) fn new(config: &crate::model::EngineConfig, spec: &MultifactorSpec) -> MfState {
        MfState {
            ledger: Ledger::new(spec.tree.len(), spec.half_life, spec.reset),
            max: Maxima::of(config),
            spec: spec.clone(),
            next_calc: None,
            held: BTreeMap::new(),
        }
    }
}

impl Engine {
    /// A user without an association, where the associations were made
    /// from an LSF share tree (no `[priority] accounts` file): the user is
    /// placed in that tree as `default` places them (`USER_SHARES[[default,
    /// 1]]` covers every user), and gets a user association under the
    /// account of the group they are placed in (the root account at the
    /// top), with the shares `default` gives, as the tree's named users
    /// have. A user the tree does not place, or places in a group charged
    /// collectively, gets none (and is refused, as before).
    pub(crate) fn mf_place(&mut self, user: &str) {
        use crate::shares::{NodeId, NodeKind};
        let Some(policy) = self.mf.as_ref().and_then(|mf| mf.spec.from_policy.clone()) else { return };
        if self.mf.as_ref().is_some_and(|mf| !mf.spec.tree.user_assocs(user).is_empty()) {
            return;
        }
        let Some(p) = self.fairshare.policies.iter_mut().find(|p| p.tree.policy() == policy) else { return };
        let mut adds: Vec<(Option<String>, u32)> = Vec::new();
        for leaf in p.tree.place(user) {
            if !matches!(p.tree.kind(leaf), NodeKind::User(n) if n == user) {
                continue;
            }
            let account = match p.tree.parent(leaf).filter(|&up| up != NodeId::ROOT) {
                None => None,
                Some(up) => match p.tree.kind(up) {
                    NodeKind::Group { name, subtree: true } => Some(name.clone()),
                    _ => continue,
                },
            };
            adds.push((account, p.tree.shares(leaf)));
        }
        let Some(mf) = self.mf.as_mut() else { return };
        for (account, shares) in adds {
            let into = match &account {
                Some(name) => mf.spec.tree.account(name),
                None => Some(AssocId::ROOT),
            };
            let added = into.map(|a| mf.spec.tree.add_user(a, user, super::RawShares::Count(shares)));
            if let Some(Ok(_)) = added {
                mf.ledger.grow(mf.spec.tree.len());
            }
        }
    }

    /// The association a job of `user` is charged to (module docs);
    /// `None` without a multifactor policy.
    pub(crate) fn mf_assoc(&self, user: &str, account: Option<&str>) -> Result<Option<AssocId>, Rejection> {
        let Some(mf) = &self.mf else { return Ok(None) };
        let tree = &mf.spec.tree;
        let found = match account {
            Some(a) => tree.assoc(a, user),
            None => tree.user_assocs(user).first().copied(),
        };
        found
            .map(Some)
            .ok_or_else(|| Rejection::NoAssociation { user: user.to_string(), account: account.map(str::to_string) })
    }

    /// A job's QoS level (priority, and whether it is exempt from limits)
    /// and user factor: `normal` and 1 unless the job names others, which
    /// only a multifactor policy takes. The user factor only lowers: it is
    /// from 0 to 1, at submission and at `bmod` alike.
    pub(crate) fn mf_qos(&self, spec: &crate::model::JobSpec) -> Result<((u32, bool), f64), Rejection> {
        let Some(mf) = &self.mf else {
            if spec.qos.is_some() {
                return Err(Rejection::NotMultifactor("-qos"));
            }
            if spec.user_factor.is_some() {
                return Err(Rejection::NotMultifactor("-uf"));
            }
            return Ok(((0, false), 1.0));
        };
        let name = || spec.qos.clone().unwrap_or_else(|| "normal".into());
        let qos = mf.spec.params.job_qos(spec.qos.as_deref(), &spec.user).map_err(|r| match r {
            QosRefusal::NotAllowed => Rejection::QosNotAllowed { qos: name(), user: spec.user.clone() },
            QosRefusal::Unknown => Rejection::NoSuchQos(name()),
        })?;
        let factor = spec.user_factor.unwrap_or(1.0);
        if !valid_user_factor(factor) {
            return Err(Rejection::BadUserFactor(factor.to_string()));
        }
        Ok((qos, factor))
    }

    /// A job starts (or is taken over running, from its own start):
    /// its association is billed for what it holds from `t` on: its slots,
    /// its hosts (nodes) and the memory its `rusage[mem]` reserves on them.
    pub(crate) fn mf_started(&mut self, id: JobId, alloc: &[(u32, u32)], t: Time) {
        let Some(assoc) = self.jobs.get(&id).and_then(|j| j.assoc) else { return };
        let held = Held {
            slots: alloc.iter().map(|a| a.1).sum(),
            nodes: alloc.len() as u32,
            memory_gb: self.reserved_gb(id, alloc),
            ..Held::default()
        };
        let Some(mf) = &mut self.mf else { return };
        mf.ledger.start(id.0, assoc, mf.spec.billing.rate(&held), t);
        mf.held.insert(id, held);
    }

    /// GB that job `id`'s `rusage[mem]` reserves on the hosts of `alloc`.
    fn reserved_gb(&self, id: JobId, alloc: &[(u32, u32)]) -> f64 {
        let mem = self.jobs.get(&id).map_or(0.0, crate::reserve::rusage_mem);
        alloc.iter().map(|&(_, n)| self.rusage_on_host(mem, n)).sum::<f64>() / 1024.0
    }

    /// A running job reports what it holds now: its memory (MB) or its
    /// GPUs. It is billed for them from `t` on. Memory is billed as the
    /// larger of what it uses and what its `rusage[mem]` reserved: a job
    /// holds what it reserved, and more when it uses more.
    pub(crate) fn mf_holds(&mut self, id: JobId, t: Time, memory_mb: Option<f64>, gpus: Option<u32>) {
        let reserved_gb = match self.jobs.get(&id).map(|j| &j.state) {
            Some(crate::engine::JobState::Running { alloc, .. }) => self.reserved_gb(id, alloc),
            _ => return,
        };
        let Some(mf) = &mut self.mf else { return };
        let Some(held) = mf.held.get_mut(&id) else { return };
        if let Some(mb) = memory_mb.filter(|m| m.is_finite()) {
            held.memory_gb = (mb.max(0.0) / 1024.0).max(reserved_gb);
        }
        if let Some(g) = gpus {
            held.gpus = g;
        }
        let rate = mf.spec.billing.rate(held);
        mf.ledger.rerate(id.0, rate, t);
    }

    /// A job reports energy it used (joules, at its end or along the
    /// way): its association is charged its billing weight per joule at
    /// once.
    pub(crate) fn mf_energy(&mut self, id: JobId, t: Time, joules: f64) {
        let Some(assoc) = self.jobs.get(&id).and_then(|j| j.assoc) else { return };
        let Some(mf) = &mut self.mf else { return };
        if joules.is_finite() && joules > 0.0 {
            mf.ledger.add_settled(assoc, joules * mf.spec.billing.energy_joule, t);
        }
    }

    /// A job stops running at `t` (ended, killed or requeued).
    pub(crate) fn mf_ended(&mut self, id: JobId, t: Time) {
        if let Some(mf) = &mut self.mf {
            mf.ledger.finish(id.0, t, 0.0);
            mf.held.remove(&id);
        }
    }

    /// The pending jobs of `unit` in this pass's order (module docs),
    /// taken one by one: a pass that stops early sorts no more than it
    /// took. Each job keeps its priority for [`Engine::multifactor_priority`].
    pub(crate) fn mf_order(&mut self, unit: &Unit, t: Time) -> impl Iterator<Item = Place> + use<> {
        let mut heap = self.mf_ranked(unit, t);
        std::iter::from_fn(move || heap.pop().map(|r| r.place))
    }

    /// Pending jobs per association, of the jobs at `places`.
    fn mf_pending<'a>(&self, places: impl Iterator<Item = &'a Place>) -> Vec<u32> {
        let mut pending = vec![0u32; self.mf.as_ref().map_or(0, |m| m.spec.tree.len())];
        for place in places {
            if let Some(a) = self.jobs.get(&place.id).and_then(|j| j.assoc) {
                pending[a.0 as usize] += 1;
            }
        }
        pending
    }

    /// Every pending job of `unit` with its priority, in a heap. (The unit
    /// is out of `self.units` during its pass: its jobs are counted from
    /// it.)
    fn mf_ranked(&mut self, unit: &Unit, t: Time) -> BinaryHeap<Ranked> {
        let Some(mf) = self.mf.as_ref().filter(|_| !unit.fcfs.is_empty()) else { return BinaryHeap::new() };
        let pending = self.mf_pending(unit.fcfs.iter());
        let rows = compute(mf.spec.policy, &mf.spec.tree, &mf.ledger.usage(t), &pending);
        // The policy, the queues and the jobs are separate fields: read
        // in place, nothing copied per pass.
        let (params, max) = (&mf.spec.params, mf.max);
        let mut ranked = Vec::with_capacity(unit.fcfs.len());
        for &place in &unit.fcfs {
            let Some(job) = self.jobs.get_mut(&place.id) else { continue };
            let inputs = JobInputs {
                waited: t.0.saturating_sub(job.submitted.0),
                fair_share: job.assoc.and_then(|a| rows[a.0 as usize].factor).unwrap_or(0.0),
                qos_priority: job.qos.0,
                queue_priority: i64::from(self.queues[job.queue].spec.priority),
                slots: job.slots,
                nodes: max.nodes(job.slots, job.res.as_ref().and_then(|r| r.span.as_ref())),
                user_factor: job.user_factor,
            };
            let factors = params.factors(&inputs, &max);
            let priority = factors.priority(&params.weights);
            job.mf_priority = Some((priority, factors));
            ranked.push(Ranked { priority, place });
        }
        BinaryHeap::from(ranked)
    }

    /// A pending job's multifactor priority and its factors at the last
    /// pass; `None` without a multifactor policy or before its first pass.
    pub fn multifactor_priority(&self, id: JobId) -> Option<(f64, Factors)> {
        self.jobs.get(&id)?.mf_priority
    }

    /// Each user's entitled share of the cluster under a multifactor
    /// policy: the normalized shares (`S`, the product down the tree) of
    /// their associations, summed.
    pub fn multifactor_entitlements(&self) -> Option<BTreeMap<String, f64>> {
        let tree = &self.mf.as_ref()?.spec.tree;
        let rows = compute(super::FairsharePolicy::Classic { dampening: 1.0 }, tree, &[], &[]);
        let mut out: BTreeMap<String, f64> = BTreeMap::new();
        for (i, r) in rows.iter().enumerate() {
            if let Some(user) = &tree.get(AssocId(i as u32)).user {
                *out.entry(user.clone()).or_default() += r.norm_shares;
            }
        }
        Some(out)
    }

    /// The multifactor policy's inputs at `t`: the policy, its
    /// associations, each association's usage (its running jobs' charges
    /// so far included) and its dispatchable pending jobs: what
    /// [`super::compute`] takes, for `sshare` on the live state.
    pub fn multifactor_inputs(
        &self,
        t: Time,
    ) -> Option<(super::FairsharePolicy, &super::AccountTree, Vec<f64>, Vec<u32>)> {
        let mf = self.mf.as_ref()?;
        let pending = self.mf_pending(self.units.iter().flat_map(|u| &u.fcfs));
        Some((mf.spec.policy, &mf.spec.tree, mf.ledger.usage(t), pending))
    }

    /// The pending jobs that have a multifactor priority (from the last
    /// pass), in job id order, and the weights.
    pub fn multifactor_pending(&self) -> Option<(super::priority::Weights, Vec<PendingPriority<'_>>)> {
        let mf = self.mf.as_ref()?;
        let mut jobs = Vec::new();
        for unit in &self.units {
            for place in &unit.fcfs {
                let Some(job) = self.jobs.get(&place.id) else { continue };
                let (Some((priority, factors)), Some(assoc)) = (job.mf_priority, job.assoc) else { continue };
                let account = mf.spec.tree.get(assoc).account.as_str();
                let user = self.users[job.user as usize].as_str();
                jobs.push(PendingPriority { id: place.id, user, account, priority, factors });
            }
        }
        jobs.sort_by_key(|j| j.id);
        Some((mf.spec.params.weights, jobs))
    }

    /// The multifactor policy's name, when the cluster has one.
    pub fn multifactor_policy(&self) -> Option<&'static str> {
        self.mf.as_ref().map(|m| m.spec.policy.name())
    }
}
