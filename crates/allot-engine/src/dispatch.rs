//! The dispatch pass (spec 000, "How Fairshare Affects Job Dispatch Order").
//!
//! Queues are grouped into dispatch units, considered in order:
//! - higher PRIORITY first;
//! - within a priority, in configuration order, each fairshare queue is a
//!   unit of its own, whose jobs are all considered before the next unit;
//! - the FCFS queues of one priority form one unit, at the place of the
//!   first of them, and their jobs merge in submission order; the queues
//!   of slot pools form their own, after the other queues of their
//!   priority (spec 000's "2 pools, 30 job slots, and 2 queues out of any
//!   pool": the spec gives Milano and Parma, out of any pool, "the same
//!   priority" as poolB's Venezia and Bologna and yet "their higher
//!   priority reduces the share of slots free and in use by Venezia and
//!   Bologna", and its table has them take freed slots while Venezia's
//!   and Bologna's older jobs wait; a pool's queues are ordered among
//!   themselves by the pool, "an alternative to absolute queue
//!   priorities", so they come after the queues that go by priority);
//! - a cross-queue set is one unit, at the place of its highest-priority
//!   queue ("equivalent to having one queue with one fairshare tree");
//!   with DISPATCH_ORDER=QUEUE each of its queues is a unit of its own, by
//!   queue priority, all sharing the set's tree and usage;
//! - a queue whose hosts all lie in one host partition is ordered by that
//!   partition's tree; a queue over hosts of several partitions, or of none,
//!   is FCFS, and its jobs run only on hosts of partitions where their user
//!   has shares, or of none.
//!
//! In every unit the jobs holding reservations are tried first, oldest
//! reservation first ([`Engine::dispatch_holders`] says why).
//!
//! A pass passes over the jobs that would fail as others tried before
//! them did ([`crate::skip`]).
//!
//! Within a fairshare unit the next job is the first pending job of the
//! account the share tree chooses ([`Selector`]); a job that cannot start
//! now is passed over for this pass and the same account's next job is
//! tried.
//!
//! Pending jobs are in [`Place`] order: the higher user-assigned job
//! priority (`bsub -sp`) first, then submission order ("queue priority,
//! then job priority, then first-come first-served"). In a fairshare unit
//! the share tree chooses the account first, so a job's priority orders it
//! only among its own account's jobs: it never lets a user pass another.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use crate::engine::{Decision, Engine, Job, JobId, JobState, KillReason, QueueState, Scratch};
use crate::hosts::HostState;
use crate::pools::{PoolQueue, entitlements};
use crate::reserve::{Ask, View};
use crate::shares::{FairshareSet, NodeId, Scope, Selector};
use crate::skip::{Backlog, Failed, HopeKey};
use crate::slots::SlotIndex;
use crate::time::Time;

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum UnitKind {
    Fcfs,
    Fairshare {
        policy: usize,
    },
    /// Every queue, ordered by the multifactor priority
    /// ([`crate::multifactor::live`]).
    Multifactor,
}

/// A pending job's place in its unit (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub(crate) struct Place {
    pub(crate) priority: std::cmp::Reverse<u32>,
    pub(crate) id: JobId,
}

impl Place {
    pub(crate) fn of(id: JobId, job: &Job) -> Self {
        Place { priority: std::cmp::Reverse(job.priority), id }
    }
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Unit {
    pub(crate) queues: Vec<usize>,
    pub(crate) kind: UnitKind,
    /// FCFS units: pending jobs in [`Place`] order.
    pub(crate) fcfs: BTreeSet<Place>,
    /// Fairshare units: pending jobs per account, in [`Place`] order.
    pub(crate) by_account: BTreeMap<NodeId, BTreeSet<Place>>,
    /// What each account (`None`: the FCFS jobs) has pending, in sum.
    #[serde(with = "crate::snapshot::pairs")]
    pub(crate) backlogs: BTreeMap<Option<NodeId>, Backlog>,
}

impl Unit {
    /// A job leaves the unit's pending jobs (started or gone).
    fn forget(&mut self, account: Option<NodeId>, place: Place, job: &Job, plain: bool) {
        let was = match account {
            Some(a) => match self.by_account.get_mut(&a) {
                Some(set) => {
                    let was = set.remove(&place);
                    if set.is_empty() {
                        self.by_account.remove(&a);
                    }
                    was
                }
                None => false,
            },
            None => self.fcfs.remove(&place),
        };
        if was {
            let indexed = self.indexed();
            if let Some(b) = self.backlogs.get_mut(&account) {
                b.change(place, job, plain, indexed, false);
                if b.is_empty() {
                    self.backlogs.remove(&account);
                }
            }
        }
    }

    /// Whether the unit keeps its jobs by ask: FCFS and fairshare units
    /// (a multifactor unit orders all its jobs each pass).
    fn indexed(&self) -> bool {
        matches!(self.kind, UnitKind::Fcfs | UnitKind::Fairshare { .. })
    }

    /// What stands in a unit's place while it is dispatched: allocates
    /// nothing.
    fn placeholder() -> Self {
        Unit {
            queues: Vec::new(),
            kind: UnitKind::Fcfs,
            fcfs: BTreeSet::new(),
            by_account: BTreeMap::new(),
            backlogs: BTreeMap::new(),
        }
    }

    fn new(kind: UnitKind, queue: usize) -> Self {
        Unit {
            queues: vec![queue],
            kind,
            fcfs: BTreeSet::new(),
            by_account: BTreeMap::new(),
            backlogs: BTreeMap::new(),
        }
    }
}

/// The partition policy a queue is ordered by: the one partition that holds
/// all of its hosts.
fn single_partition(q: &QueueState, sets: &[(Vec<u32>, SlotIndex)], hosts: &[HostState]) -> Option<usize> {
    let members = &sets[q.host_set].0;
    let first = hosts.get(*members.first()? as usize)?.partition?;
    members.iter().all(|&h| hosts[h as usize].partition == Some(first)).then_some(first)
}

/// Groups the queues into dispatch units, in dispatch order (module docs).
pub(crate) fn build_units(
    queues: &[QueueState],
    sets: &[(Vec<u32>, SlotIndex)],
    hosts: &[HostState],
    fairshare: &FairshareSet,
    multifactor: bool,
) -> (Vec<Unit>, Vec<usize>) {
    let mut order: Vec<usize> = (0..queues.len()).collect();
    // Stable: equal priorities keep configuration order, the queues of
    // slot pools after the others of their priority (module docs).
    order.sort_by_key(|&q| (std::cmp::Reverse(queues[q].spec.priority), queues[q].pool.is_some()));
    if multifactor {
        let mut unit = Unit::new(UnitKind::Multifactor, order.first().copied().unwrap_or(0));
        unit.queues = order;
        return (vec![unit], vec![0; queues.len()]);
    }
    let mut units: Vec<Unit> = Vec::new();
    let mut queue_unit = vec![0; queues.len()];
    let mut set_unit: BTreeMap<usize, usize> = BTreeMap::new();
    let mut fcfs_unit_of_level: BTreeMap<(i32, bool), usize> = BTreeMap::new();
    for q in order {
        let qs = &queues[q];
        let unit = if let Some(p) = qs.policy.filter(|&p| matches!(fairshare.policies[p].scope, Scope::Queues(_))) {
            match set_unit.get(&p) {
                Some(&u) if !qs.spec.dispatch_order_queue => u,
                _ => {
                    units.push(Unit::new(UnitKind::Fairshare { policy: p }, q));
                    set_unit.insert(p, units.len() - 1);
                    queue_unit[q] = units.len() - 1;
                    continue;
                }
            }
        } else if let Some(p) = single_partition(qs, sets, hosts) {
            units.push(Unit::new(UnitKind::Fairshare { policy: p }, q));
            queue_unit[q] = units.len() - 1;
            continue;
        } else {
            let level = (qs.spec.priority, qs.pool.is_some());
            match fcfs_unit_of_level.get(&level) {
                Some(&u) => u,
                None => {
                    units.push(Unit::new(UnitKind::Fcfs, q));
                    fcfs_unit_of_level.insert(level, units.len() - 1);
                    queue_unit[q] = units.len() - 1;
                    continue;
                }
            }
        };
        units[unit].queues.push(q);
        queue_unit[q] = unit;
    }
    (units, queue_unit)
}

impl Engine {
    /// The account a pending job waits under in its unit.
    fn unit_account(&self, job: &Job) -> Option<NodeId> {
        Self::account_in(&self.units[self.queue_unit[job.queue]].kind, job)
    }

    /// The account `job` waits under in a unit of `kind` (`None`: FCFS).
    /// During a pass the unit being dispatched is out of `self.units`:
    /// ask with its kind.
    fn account_in(kind: &UnitKind, job: &Job) -> Option<NodeId> {
        match *kind {
            UnitKind::Fairshare { policy } => job.accounts.iter().find(|a| a.0 == policy).map(|a| a.1),
            UnitKind::Fcfs | UnitKind::Multifactor => None,
        }
    }

    pub(crate) fn enqueue(&mut self, id: JobId, job: &Job) {
        self.plan_wakeup(job);
        let account = self.unit_account(job);
        let place = Place::of(id, job);
        let plain = self.is_plain(job);
        let unit = &mut self.units[self.queue_unit[job.queue]];
        let new = match account {
            Some(a) => unit.by_account.entry(a).or_default().insert(place),
            None => unit.fcfs.insert(place),
        };
        if new {
            let indexed = unit.indexed();
            unit.backlogs.entry(account).or_default().change(place, job, plain, indexed, true);
        }
    }

    /// Whether a failure of `job` (without a reservation of its own) tells
    /// of every job of its queue asking as many slots or more: no
    /// requirement, host list or `-x`, no partition hosts (which differ by
    /// user), and a run limit that is the one backfill counts on (no
    /// estimate, no interruptible backfill queue).
    fn is_plain(&self, job: &Job) -> bool {
        let q = &self.queues[job.queue];
        !job.constrained()
            && q.partitions.is_empty()
            && q.spec.interruptible.is_none()
            && job.run_estimate.is_none()
            && job.begin.is_none()
    }

    pub(crate) fn dequeue(&mut self, id: JobId, job: &Job) {
        self.drop_reservation(id);
        let account = self.unit_account(job);
        let place = Place::of(id, job);
        let plain = self.is_plain(job);
        let unit = &mut self.units[self.queue_unit[job.queue]];
        unit.forget(account, place, job, plain);
    }

    /// One dispatch pass at `t`: jobs past their run limit are killed, then
    /// every unit in order starts what it can. A pass after which nothing
    /// changed (no event, no limit due) returns at once.
    /// [`Engine::schedule`] that considers the jobs whatever changed: what
    /// a replay runs where the live engine's pass considered them (so the
    /// replay does whatever made it do so, seen or not).
    pub fn schedule_full(&mut self, t: Time) -> Vec<Decision> {
        self.dirty = true;
        self.schedule(t)
    }

    pub fn schedule(&mut self, t: Time) -> Vec<Decision> {
        self.count_reserved_time(t);
        let mut out = Vec::new();
        while let Some(&(deadline, id)) = self.deadlines.first() {
            if deadline > t {
                break;
            }
            self.deadlines.pop_first();
            let term = self.jobs.get(&id).is_some_and(|j| j.term_time == Some(deadline));
            let reason = if term { KillReason::TermTime } else { KillReason::RunLimit };
            out.push(Decision::Kill { job: id, reason });
        }
        // Jobs past their expected end (killed just now, or running past
        // their estimate) have no end to count on until theirs is heard.
        let mut overran = !out.is_empty();
        while self.expected_ends.first().is_some_and(|e| e.0 <= t) {
            self.expected_ends.pop_first();
            overran = true;
        }
        if overran {
            self.invalidate_predictions();
        }
        while self.wakeups.first().is_some_and(|&w| w <= t) {
            self.wakeups.pop_first();
            self.dirty = true;
        }
        self.make_due();
        self.refresh_dependents();
        self.resource_clock(t);
        let expired = self.expire_reservations(t);
        if !expired.is_empty() {
            self.dirty = true;
        }
        // The cycle after an expiry needs a pass only if none ran since
        // and it could change something.
        if self.cooldown_ends.is_some_and(|c| c <= t) {
            self.cooldown_ends = None;
            if self.cooldown_matters() {
                self.dirty = true;
            }
        }
        if !self.dirty {
            if !self.switches.keep_parked {
                self.settle();
            }
            return out;
        }
        self.dirty = false;
        self.counters.passes += 1;
        self.cooldown_ends = (!expired.is_empty()).then(|| t.after(u64::from(self.config.mbd_sleep_time.max(1))));
        self.rsv_cooldown = expired;
        self.invalidate_timed_predictions();
        self.divide_pools(t);
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.failed.reset(self.queues.len());
        // Each unit's selector computes priorities afresh.
        self.caches.share_touched.clear();
        for u in 0..self.units.len() {
            let mut unit = std::mem::replace(&mut self.units[u], Unit::placeholder());
            // Resize requests before the unit's pending jobs.
            if !self.growing.is_empty() {
                let queues = unit.queues.clone();
                self.grow_requests(&queues, t, &mut out);
            }
            match unit.kind {
                UnitKind::Fcfs => self.dispatch_fcfs(&mut unit, t, &mut scratch, &mut out),
                UnitKind::Fairshare { policy } => self.dispatch_fairshare(&mut unit, policy, t, &mut scratch, &mut out),
                UnitKind::Multifactor => self.dispatch_multifactor(&mut unit, t, &mut scratch.failed, &mut out),
            }
            self.units[u] = unit;
        }
        self.scratch = scratch;
        self.resume_suspended(t, &mut out);
        self.counters.rsv_standing += self.reservations.len() as u64;
        self.note_reserved(t);
        if !self.switches.keep_parked {
            self.settle();
        }
        // Jobs that wait for one started in this pass may go in the next.
        self.refresh_dependents();
        out
    }

    fn unit_full(&self, unit: &Unit) -> bool {
        self.reservations.is_empty()
            && unit.queues.iter().all(|&q| self.free_in(self.queues[q].host_set) == 0)
            && !self.unit_preempts(unit)
    }

    /// Whether a job of `unit` may preempt now ([`crate::preempt`]): then
    /// every job is tried in order, none passed over for want of free
    /// slots.
    fn unit_preempts(&self, unit: &Unit) -> bool {
        unit.queues.iter().any(|&q| self.may_preempt(q))
    }

    fn dispatch_fcfs(&mut self, unit: &mut Unit, t: Time, scratch: &mut Scratch, out: &mut Vec<Decision>) {
        let holders = self.dispatch_holders(unit, t, &mut scratch.failed, out);
        let started = match self.switches.ask_index && !self.unit_preempts(unit) {
            true => self.try_fcfs(unit, &holders, t, scratch, out),
            false => self.try_in_order(unit, unit.fcfs.iter().copied(), &holders, t, &mut scratch.failed, out),
        };
        self.forget_started(unit, started);
    }

    /// Tries the jobs of an FCFS unit in [`Place`] order, as
    /// [`Engine::try_in_order`] would, but visits only those that may do
    /// something ([`Engine::next_live`]). A job passed over would fail and
    /// change nothing that decides (what it would add to `failed` only
    /// saves work), so the same jobs start, reserve and backfill; with many
    /// jobs waiting behind one that cannot start, a pass looks at a few
    /// asks instead of every job.
    fn try_fcfs(
        &mut self,
        unit: &Unit,
        holders: &[JobId],
        t: Time,
        scratch: &mut Scratch,
        out: &mut Vec<Decision>,
    ) -> Vec<Place> {
        let mut started = Vec::new();
        let Scratch { verdicts, failed, .. } = scratch;
        verdicts.reset();
        let mut after = Bound::Unbounded;
        while !self.unit_full(unit) {
            let Some(place) = self.next_live(unit, None, after, verdicts, failed, out.len(), t) else { break };
            after = Bound::Excluded(place);
            if holders.binary_search(&place.id).is_ok() {
                continue;
            }
            if self.try_start(place.id, t, failed, out).is_ok() {
                started.push(place);
            }
        }
        started
    }

    /// The multifactor unit: its jobs in this pass's priority order
    /// (computed even when nothing can start, for the queries).
    fn dispatch_multifactor(&mut self, unit: &mut Unit, t: Time, failed: &mut Failed, out: &mut Vec<Decision>) {
        let order = self.mf_order(unit, t);
        // Waiting changes the priorities: a pass again a period after the
        // last periodic one (one chain of wake-ups, not one per pass).
        if let Some(mf) = self.mf.as_mut().filter(|m| m.spec.params.calc_period > 0 && !unit.fcfs.is_empty()) {
            if mf.next_calc.is_none_or(|due| due <= t) {
                let next = t.after(mf.spec.params.calc_period);
                mf.next_calc = Some(next);
                self.wakeups.insert(next);
            }
        }
        let holders = self.dispatch_holders(unit, t, failed, out);
        let started = self.try_in_order(unit, order.into_iter(), &holders, t, failed, out);
        self.forget_started(unit, started);
    }

    /// Tries the jobs of an FCFS or multifactor unit in `order`, until the
    /// unit is full or no job left could start; returns those started.
    fn try_in_order(
        &mut self,
        unit: &Unit,
        order: impl Iterator<Item = Place>,
        holders: &[JobId],
        t: Time,
        failed: &mut Failed,
        out: &mut Vec<Decision>,
    ) -> Vec<Place> {
        let mut started = Vec::new();
        // The key when the backlog was last found not hopeless: while it
        // stands, so does that answer (jobs that failed without changing
        // anything are many when one far down the order can backfill).
        let mut live: Option<HopeKey> = None;
        let preempts = self.unit_preempts(unit);
        for place in order {
            if self.unit_full(unit) {
                break;
            }
            if holders.binary_search(&place.id).is_ok() {
                continue;
            }
            // In step first: `hopeless` then changes nothing the key reads.
            failed.sync(self.caches.rsv_freed, self.caches.rsv_epoch);
            let now = self.hope_key(unit, failed, out.len());
            if live != Some(now) && !preempts {
                if unit.backlogs.get(&None).is_some_and(|b| self.hopeless(b, failed, t)) {
                    break;
                }
                live = Some(now);
            }
            if self.try_start(place.id, t, failed, out).is_ok() {
                started.push(place);
            }
        }
        started
    }

    fn forget_started(&self, unit: &mut Unit, started: Vec<Place>) {
        for place in started {
            let Some(job) = self.jobs.get(&place.id) else { continue };
            unit.forget(None, place, job, self.is_plain(job));
        }
    }

    /// The jobs of `unit` that hold reservations go first, oldest
    /// reservation first (then lower job ID); returns them, tried.
    ///
    /// The spec (004, "About processor reservation") has reservation take
    /// "job slots as they become available, until there are enough
    /// reserved job slots to run the parallel job"; it does not say how a
    /// holder ranks against the jobs of the unit's order. We give it first
    /// claim on what frees up. Tried in share order instead, a holder whose
    /// reserved slots lowered its user's priority (spec 000's job_slots,
    /// "reserved and in use") would see each freed slot go to whichever
    /// user holds least: no reservation accumulates, and once every slot is
    /// reserved and nothing runs, the jobs hand the slots round as their
    /// reservations expire, forever (the first 2,000 jobs of KTH-SP2 under
    /// fairshare did just that). The oldest first, because its time runs
    /// out first.
    fn dispatch_holders(
        &mut self,
        unit: &mut Unit,
        t: Time,
        failed: &mut Failed,
        out: &mut Vec<Decision>,
    ) -> Vec<JobId> {
        let mut holders: Vec<(Time, JobId)> = self
            .reservations
            .iter()
            .filter(|(_, r)| unit.queues.contains(&r.queue))
            .map(|(&id, r)| (r.since, id))
            .collect();
        holders.sort_unstable();
        // In job order (few: a binary search tells whether one was tried).
        let mut tried = Vec::with_capacity(holders.len());
        for (_, id) in holders {
            if self.unit_full(unit) {
                break;
            }
            tried.push(id);
            if self.try_start(id, t, failed, out).is_ok() {
                if let Some(job) = self.jobs.get(&id) {
                    unit.forget(Self::account_in(&unit.kind, job), Place::of(id, job), job, self.is_plain(job));
                }
            }
        }
        tried.sort_unstable();
        tried
    }

    fn dispatch_fairshare(
        &mut self,
        unit: &mut Unit,
        policy: usize,
        t: Time,
        scratch: &mut Scratch,
        out: &mut Vec<Decision>,
    ) {
        if unit.by_account.is_empty() || self.unit_full(unit) {
            return;
        }
        let holders = self.dispatch_holders(unit, t, &mut scratch.failed, out);
        if self.unit_full(unit) {
            return;
        }
        let Scratch { selectors, live_accounts: live, cursors, turn, verdicts, failed } = scratch;
        // An account hopeless now stays so for the pass (the loop below
        // passes over it for good at its turn), so the selector need not
        // know it: its turn would change nothing. With none left, no
        // priority is computed.
        live.clear();
        let preempts = self.unit_preempts(unit);
        for (&a, jobs) in &unit.by_account {
            if preempts || !unit.backlogs.get(&Some(a)).is_some_and(|b| self.hopeless(b, failed, t)) {
                live.push((a, jobs.len() as u64));
            }
        }
        if live.is_empty() {
            return;
        }
        // The selector below sees what the holders changed.
        self.caches.share_touched.clear();
        let adjustment = self.adjustment();
        let inputs = adjustment.inputs();
        let tree = &self.fairshare.policies[policy].tree;
        let accounts = live.iter().copied();
        let mut sel = match selectors[policy].take() {
            Some(s) => s.reuse(tree, t, &inputs, accounts),
            None => Selector::for_accounts(tree, t, &inputs, accounts),
        };
        cursors.resize(tree.len(), None);
        *turn += 1;
        let turn = *turn;
        // Until a job is tried, every account the selector offers passed
        // the check above with nothing changed since.
        let mut checked = true;
        verdicts.reset();
        while let Some(leaf) = sel.choose() {
            let tried = cursors[leaf.0 as usize].filter(|c| c.0 == turn).map(|c| c.1);
            if !std::mem::take(&mut checked)
                && !preempts
                && unit.backlogs.get(&Some(leaf)).is_some_and(|b| self.hopeless(b, failed, t))
            {
                sel.set_pending(&self.fairshare.policies[policy].tree, leaf, 0);
                continue;
            }
            // The account's first job in this turn as it comes; after one
            // that did not start, the next that may do something (those
            // passed over would fail and change nothing, not even the
            // account's priority).
            let next = match tried {
                None => unit.by_account.get(&leaf).and_then(|s| s.first().copied()),
                Some(c) if self.switches.ask_index && !preempts => {
                    self.next_live(unit, Some(leaf), Bound::Excluded(c), verdicts, failed, out.len(), t)
                }
                Some(c) => unit
                    .by_account
                    .get(&leaf)
                    .and_then(|s| s.range((Bound::Excluded(c), Bound::Unbounded)).next().copied()),
            };
            let Some(place) = next else {
                sel.set_pending(&self.fairshare.policies[policy].tree, leaf, 0);
                continue;
            };
            cursors[leaf.0 as usize] = Some((turn, place));
            let started = if holders.binary_search(&place.id).is_ok() {
                Err(())
            } else {
                self.try_start(place.id, t, failed, out)
            };
            // Reserved slots changed these accounts' priorities.
            // (A start refreshes its own account below.)
            let touched = &mut self.caches.share_touched;
            touched.sort_unstable();
            touched.dedup();
            for &(p, account) in touched.iter() {
                if p == policy && (account != leaf || started.is_err()) {
                    sel.refresh_path(&self.fairshare.policies[policy].tree, account, &inputs);
                }
            }
            touched.clear();
            if started.is_ok() {
                if let Some(job) = self.jobs.get(&place.id) {
                    unit.forget(Some(leaf), place, job, self.is_plain(job));
                }
                sel.refresh_path(&self.fairshare.policies[policy].tree, leaf, &inputs);
                if self.unit_full(unit) {
                    break;
                }
            }
            let more = unit
                .by_account
                .get(&leaf)
                .is_some_and(|s| s.range((Bound::Excluded(place), Bound::Unbounded)).next().is_some());
            sel.set_pending(&self.fairshare.policies[policy].tree, leaf, u64::from(more));
        }
        selectors[policy] = Some(sel);
    }

    /// Each slot pool's division for this pass ([`crate::pools`]).
    fn divide_pools(&mut self, t: Time) {
        for (_, members) in &self.pools {
            // "The total number of slots in each pool is constant": its
            // hosts' job slots, whatever queues out of the pool hold of
            // them (spec 000).
            let total = self.queues[members[0]].capacity;
            let usage = |q: usize| {
                let qs = &self.queues[q];
                let share = qs.spec.slot_pool.as_ref().map_or(1, |p| p.1.max(1));
                qs.accumulated.at(t.0, qs.used, self.pool_lambda) / f64::from(share)
            };
            let mut order = members.clone();
            let share = |q: usize| self.queues[q].spec.slot_pool.as_ref().map_or(0, |p| p.1);
            order.sort_by(|&a, &b| {
                share(b)
                    .cmp(&share(a))
                    .then(usage(a).total_cmp(&usage(b)))
                    .then(self.queues[b].spec.priority.cmp(&self.queues[a].spec.priority))
                    .then(a.cmp(&b))
            });
            let queues: Vec<PoolQueue> = order
                .iter()
                .map(|&q| {
                    let qs = &self.queues[q];
                    let want = u64::from(qs.used) + qs.pending_slots;
                    let cap =
                        if qs.pending == 0 { 0 } else { qs.spec.limits.qjob.map_or(want, |l| want.min(u64::from(l))) };
                    PoolQueue { share: qs.spec.slot_pool.as_ref().map_or(0, |p| p.1), cap }
                })
                .collect();
            let ents = entitlements(total, &queues);
            for (i, (&q, e)) in order.iter().zip(ents).enumerate() {
                self.queues[q].entitled = Some(e);
                self.queues[q].pool_ahead =
                    order[..i].iter().copied().filter(|&a| !self.outsider_between(q, a)).collect();
            }
        }
    }

    /// Starts `id` now if its limits and the free slots allow: on free
    /// slots (and its own reservation), else as a backfill job; a job that
    /// does neither reserves if its queue says so ([`crate::reserve`]).
    fn try_start(&mut self, id: JobId, t: Time, failed: &mut Failed, out: &mut Vec<Decision>) -> Result<(), ()> {
        self.counters.tries += 1;
        failed.sync(self.caches.rsv_freed, self.caches.rsv_epoch);
        let job = self.jobs.get(&id).filter(|j| matches!(j.state, JobState::Pending)).ok_or(())?;
        // Where placement would look at the hosts, a parked reservation's
        // let go first ([`crate::handover`]).
        if self.parked.is_some()
            && (self.reservations.contains_key(&id)
                || u64::from(job.slots) <= self.free_in(self.queues[job.queue].host_set))
        {
            self.settle();
        }
        let job = self.jobs.get(&id).ok_or(())?;
        if self.limit_reason(id, job).is_some() || !self.meets_deadline(job, t) || job.begin.is_some_and(|b| b > t) {
            self.drop_reservation(id);
            return Err(());
        }
        let own = self.reservations.get(&id).map(|r| r.slots());
        // Whether a failure tells about every job of the queue asking as
        // much: no requirement, host list or reservation of its own, and
        // no partition hosts, which differ by user.
        let plain = own.is_none() && self.is_plain(job);
        // A host gives a job placed without requirements no more than is
        // free there and its own: fewer in all than it needs, no start.
        let free = self.free_in(self.queues[job.queue].host_set);
        let too_few = !job.constrained() && own.is_some_and(|n| free + u64::from(n) < u64::from(job.slots));
        let own = own.is_some();
        if (own && !too_few) || (!own && job.slots < failed.start[job.queue]) {
            let ask = Ask { view: if own { View::Own(id) } else { View::Free }, ..self.start_ask(job) };
            match self.place(job, t, &ask).filter(|a| self.may_start_on(job, a, t)) {
                Some(alloc) => {
                    out.push(self.start(id, alloc, t, false));
                    return Ok(());
                }
                None if plain => failed.no_start(job.queue, job.slots),
                None => {}
            }
        }
        // Backfill counts on the job's estimate, else its run limit.
        let limit = self.job_duration(job);
        if let Some(limit) = limit.filter(|_| self.queues[job.queue].spec.backfill && self.holds_reserved_hosts()) {
            let interruptible = self.queues[job.queue].spec.interruptible;
            // An interruptible backfill job may use what stays unneeded for
            // longer than the queue's time slice.
            let until = t.after(interruptible.map_or(limit, |slice| slice + 1));
            let (queue, slots) = (job.queue, job.slots);
            let tried = plain && failed.implies_backfill(queue, slots, until);
            // Any job needs that many slots free or borrowable (its own
            // reservation among them, when it may use that).
            let hopeless = tried || u64::from(slots) > free + self.borrowable(until, t);
            if !hopeless {
                self.predict_reservations(t);
                let job = self.jobs.get(&id).ok_or(())?;
                let ask = Ask { view: View::Backfill { until }, ..self.start_ask(job) };
                if let Some(alloc) = self.place(job, t, &ask).filter(|a| self.may_start_on(job, a, t)) {
                    let job = job.clone();
                    let mut until = until;
                    if interruptible.is_some() {
                        let cut = self.interrupt_limit(&alloc, until, t, limit);
                        until = t.after(cut);
                        if let Some(j) = self.jobs.get_mut(&id) {
                            j.backfill_limit = Some(cut);
                        }
                    }
                    self.borrow(id, &job, &alloc, until);
                    out.push(self.start(id, alloc, t, true));
                    return Ok(());
                }
                if plain {
                    failed.no_backfill(queue, slots, until);
                }
            }
        }
        if let Some(d) = self.try_preempt(id, t, out) {
            out.push(d);
            return Ok(());
        }
        self.reserve(id, t);
        Err(())
    }
}
