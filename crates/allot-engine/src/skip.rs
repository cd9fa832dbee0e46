//! What a pass learns from the jobs it tried, and the jobs it need not
//! try: they would fail as those did, and change nothing that decides.
//!
//! - [`Failed`]: what failed in this pass, per queue, for jobs placed on
//!   what is free to all (a job asking as many slots could not start; one
//!   asking as many for as long could not backfill).
//! - [`Backlog`]: what an account of a unit has pending, in sum and by
//!   ask, so that [`Engine::hopeless`] passes over all its jobs at once.
//! - A pass visits, in order, only the jobs of an FCFS unit, or of an
//!   account after one of its jobs failed in its turn, that may do
//!   something: those whose ask (queue, slots, run limit) may still start,
//!   reserve or backfill ([`Engine::may_succeed`]), and those a failure of
//!   another tells nothing of ([`Engine::next_live`]).
//! - Answers drawn from these stand while a [`HopeKey`] does: what they
//!   read that trying a job can change.

use std::collections::BTreeSet;
use std::ops::Bound;

use crate::dispatch::{Place, Unit};
use crate::engine::{Engine, Job, JobId};
use crate::shares::NodeId;
use crate::time::Time;

/// The first place of all.
const PLACE_MIN: Place = Place { priority: std::cmp::Reverse(u32::MAX), id: JobId(0) };

/// What an account of a fairshare unit (or the jobs of an FCFS unit) has
/// pending, in sum: enough to see that every one of its jobs would fail
/// as jobs already tried in the pass did ([`Failed`]), so that the pass
/// passes over all of them at once instead of trying each. Jobs with
/// requirements, host lists or partition hosts are only counted: a
/// failure of theirs tells nothing of the others.
///
/// In FCFS and fairshare units it holds the jobs too, those a failure of
/// another tells about by what they ask ([`ask_of`]), the others
/// apart, in [`Place`] order, so that a pass visits only the jobs whose
/// ask may still succeed ([`Engine::next_live`]).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Backlog {
    other: u32,
    /// The other jobs, per queue, slots asked and own run limit (`None`:
    /// the queue's), with how many ask it, in key order. (A sorted vector:
    /// an account's distinct asks are few, and the pass reads them often.)
    asks: Vec<(Demand, u32)>,
    by_ask: BTreeSet<(Demand, Place)>,
    unasked: BTreeSet<Place>,
}

/// Queue, slots asked, own run limit.
type Demand = (usize, u32, Option<u64>);

fn demand(job: &Job) -> Demand {
    (job.queue, job.slots, job.run_limit)
}

impl Backlog {
    pub(crate) fn change(&mut self, place: Place, job: &Job, plain: bool, indexed: bool, add: bool) {
        if indexed {
            match (ask_of(job, plain), add) {
                (Some(d), true) => self.by_ask.insert((d, place)),
                (Some(d), false) => self.by_ask.remove(&(d, place)),
                (None, true) => self.unasked.insert(place),
                (None, false) => self.unasked.remove(&place),
            };
        }
        if plain {
            let key = demand(job);
            match self.asks.binary_search_by_key(&key, |a| a.0) {
                Ok(i) if add => self.asks[i].1 += 1,
                Ok(i) => {
                    self.asks[i].1 -= 1;
                    if self.asks[i].1 == 0 {
                        self.asks.remove(i);
                    }
                }
                Err(i) if add => self.asks.insert(i, (key, 1)),
                Err(_) => {}
            }
        } else if add {
            self.other += 1;
        } else {
            self.other = self.other.saturating_sub(1);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.other == 0 && self.asks.is_empty() && self.by_ask.is_empty() && self.unasked.is_empty()
    }
}

/// What a pending job asks, when a failure of another job asking as
/// much tells of it: placed on what is free to all, with the run limit
/// its key gives ([`Engine::may_succeed`]; a standby job has none from
/// its queue).
fn ask_of(job: &Job, plain: bool) -> Option<Demand> {
    (plain && !job.qos.1 && job.backfill_limit.is_none()).then(|| demand(job))
}

/// What failed in this pass, per queue, for jobs placed on what is free
/// to all: no job of as many slots can start on free slots (requirements
/// and host lists only narrow), and no job of as many slots running as
/// long can backfill. Each holds while nothing is freed: the first until a
/// reservation is given up, the second until predicted starts change.
#[derive(Default)]
pub(crate) struct Failed {
    freed: u64,
    pub(crate) start: Vec<u32>,
    predicted: u64,
    /// Per queue, the backfill failures no other one implies (fewer or as
    /// many slots, ending no later): slots ascending, ends descending, so
    /// that whether one implies a job's failure is a binary search.
    backfill: Vec<Vec<(u32, Time)>>,
    /// Counts changes of what is recorded: an answer drawn from it stands
    /// while this and what else it read stay the same.
    changes: u64,
}

impl Failed {
    /// Nothing failed yet, for `queues` queues (in the memory of an
    /// earlier pass's).
    pub(crate) fn reset(&mut self, queues: usize) {
        (self.freed, self.predicted) = (0, 0);
        self.start.clear();
        self.start.resize(queues, u32::MAX);
        self.backfill.iter_mut().for_each(Vec::clear);
        self.backfill.resize_with(queues, Vec::new);
        self.changes += 1;
    }

    /// Forgets what no longer holds after the engine's changes.
    pub(crate) fn sync(&mut self, freed: u64, predicted: u64) {
        if freed != self.freed {
            self.freed = freed;
            self.start.iter_mut().for_each(|s| *s = u32::MAX);
            self.changes += 1;
        }
        if predicted != self.predicted {
            self.predicted = predicted;
            self.backfill.iter_mut().for_each(Vec::clear);
            self.changes += 1;
        }
    }

    /// A job of `queue` asking `slots` could not start on free slots.
    pub(crate) fn no_start(&mut self, queue: usize, slots: u32) {
        if slots < self.start[queue] {
            self.start[queue] = slots;
            self.changes += 1;
        }
    }

    /// Whether a job of `queue` asking `slots` until `until` would fail to
    /// backfill as one that failed did: as many slots or more, as late or
    /// later. The entry with the most slots within `slots` ends earliest
    /// of those within it.
    pub(crate) fn implies_backfill(&self, queue: usize, slots: u32, until: Time) -> bool {
        let b = &self.backfill[queue];
        let i = b.partition_point(|&(s, _)| s <= slots);
        i > 0 && b[i - 1].1 <= until
    }

    /// A job of `queue` asking `slots` until `until` could not backfill:
    /// kept unless implied, and the entries it implies go.
    pub(crate) fn no_backfill(&mut self, queue: usize, slots: u32, until: Time) {
        if self.implies_backfill(queue, slots, until) {
            return;
        }
        let b = &mut self.backfill[queue];
        // Those before `from` ask fewer slots and end later; from there,
        // the ones ending no earlier (a prefix: ends descend) are implied.
        let from = b.partition_point(|&(s, _)| s < slots);
        let to = from + b[from..].partition_point(|&(_, u)| u >= until);
        b.splice(from..to, [(slots, until)]);
        self.changes += 1;
    }
}

/// What [`Engine::hopeless`] and [`Engine::may_succeed`] read that
/// trying a job can change: while none of it changed, their answers
/// stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HopeKey {
    failed: u64,
    decisions: usize,
    reservations: (u64, u64, u64),
    parked: bool,
    free: u64,
}

/// The asks of `account` that may succeed ([`Engine::may_succeed`]), as
/// of `seen` (kept in the engine for its memory).
#[derive(Default)]
pub(crate) struct Verdicts {
    seen: Option<HopeKey>,
    account: Option<Option<NodeId>>,
    live: Vec<Demand>,
}

impl Verdicts {
    pub(crate) fn reset(&mut self) {
        (self.seen, self.account) = (None, None);
        self.live.clear();
    }
}

impl Engine {
    /// Whether every job of `b` without a reservation of its own would
    /// fail now, as the jobs tried in this pass did: none can start on
    /// free slots (more slots than are free, or than a failed job asked),
    /// none may reserve (nothing free, or only sequential jobs), and none
    /// can backfill: no run limit, more slots than are free or borrowable
    /// until its end, or as many slots and as long a limit as a job that
    /// failed to. For backfill only the jobs that no other job asks fewer
    /// slots and a shorter limit than need looking at.
    pub(crate) fn hopeless(&mut self, b: &Backlog, failed: &mut Failed, t: Time) -> bool {
        if b.other > 0 {
            return false;
        }
        failed.sync(self.caches.rsv_freed, self.caches.rsv_epoch);
        let mut rest = &b.asks[..];
        while let Some(&((q, least, _), _)) = rest.first() {
            let len = rest.partition_point(|a| a.0.0 == q);
            let (asks, after) = rest.split_at(len);
            rest = after;
            let most = asks[len - 1].0.1;
            let spec = &self.queues[q].spec;
            let free = self.free_in(self.queues[q].host_set);
            let no_start = u64::from(least) > free || least >= failed.start[q];
            let no_reserve = spec.reserve.is_none() || free == 0 || (most <= 1 && !spec.plans_every_job());
            if !(no_start && no_reserve) {
                return false;
            }
            if spec.backfill && self.holds_reserved_hosts() {
                let queue_default = self.effective_run_limit(q, None);
                let mut shortest = u64::MAX;
                // The asks in key order: by slots, then the queue's limit
                // (`None`) before own limits, shortest first.
                let mut asks = asks.iter().map(|(k, _)| (k.1, k.2)).peekable();
                while let Some((n, first)) = asks.next() {
                    let own = match first {
                        Some(l) => Some(l),
                        None => asks.peek().filter(|a| a.0 == n).and_then(|a| a.1),
                    };
                    while asks.next_if(|a| a.0 == n).is_some() {}
                    let with_default = first.is_none().then_some(queue_default).flatten();
                    let limit = own.into_iter().chain(with_default).min();
                    if let Some(limit) = limit.filter(|&l| l < shortest) {
                        shortest = limit;
                        let until = t.after(limit);
                        if failed.implies_backfill(q, n, until) {
                            continue;
                        }
                        // Predicted starts only when the failures tell nothing.
                        if u64::from(n) > free + self.reserved_total() {
                            continue;
                        }
                        if u64::from(n) <= free + self.borrowable(until, t) {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }

    /// What [`Engine::hopeless`] reads for `unit` that a try can change,
    /// with `decisions` made in the pass so far.
    pub(crate) fn hope_key(&self, unit: &Unit, failed: &Failed, decisions: usize) -> HopeKey {
        HopeKey {
            failed: failed.changes,
            decisions,
            reservations: (self.caches.rsv_changes, self.caches.rsv_epoch, self.caches.rsv_freed),
            parked: self.parked.is_some(),
            free: unit.queues.iter().map(|&q| self.free_in(self.queues[q].host_set)).sum(),
        }
    }

    /// The first pending job of `account` in `unit` after `after` that
    /// may do something at its try: one a failure of another tells
    /// nothing of, or one whose ask [`Engine::may_succeed`]. The account's
    /// asks that may succeed are kept while what they read stays the same
    /// (`decisions`: made in the pass so far).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn next_live(
        &mut self,
        unit: &Unit,
        account: Option<NodeId>,
        after: Bound<Place>,
        v: &mut Verdicts,
        failed: &mut Failed,
        decisions: usize,
        t: Time,
    ) -> Option<Place> {
        let b = unit.backlogs.get(&account)?;
        failed.sync(self.caches.rsv_freed, self.caches.rsv_epoch);
        let now = self.hope_key(unit, failed, decisions);
        let mut live = std::mem::take(&mut v.live);
        match v.seen {
            Some(k) if k == now && v.account == Some(account) => {}
            // Only more failures: an ask that could not succeed still
            // cannot; the others are asked again.
            Some(k) if HopeKey { failed: now.failed, ..k } == now && v.account == Some(account) => {
                live.retain(|&d| self.may_succeed(d, failed, t));
            }
            _ => {
                live.clear();
                live.extend(b.asks.iter().map(|a| a.0).filter(|&d| self.may_succeed(d, failed, t)));
            }
        }
        (v.seen, v.account) = (Some(now), Some(account));
        let mut next = b.unasked.range((after, Bound::Unbounded)).next().copied();
        for &d in &live {
            let from = match after {
                Bound::Excluded(p) => Bound::Excluded((d, p)),
                _ => Bound::Included((d, PLACE_MIN)),
            };
            let first = b.by_ask.range((from, Bound::Unbounded)).next();
            if let Some(&(_, p)) = first.filter(|f| f.0 == d) {
                if next.is_none_or(|n| p < n) {
                    next = Some(p);
                }
            }
        }
        v.live = live;
        debug_assert_eq!(v.seen, Some(self.hope_key(unit, failed, decisions)), "a verdict changed what it read");
        next
    }

    /// Whether a job asking `(queue, slots, own run limit)`
    /// ([`ask_of`]), holding no reservation, may do anything
    /// at its try now ([`Engine::try_start`]): start on free slots (fewer
    /// slots than a job that could not, and no more than are free),
    /// reserve (a parallel job of a reserving queue, something free; such
    /// a job asks no memory), or backfill (a run limit, reserved hosts to
    /// borrow, no failure implying its own, enough free and borrowable).
    /// `failed` is in step with the engine.
    pub(crate) fn may_succeed(&mut self, (q, slots, own): Demand, failed: &Failed, t: Time) -> bool {
        let free = self.free_in(self.queues[q].host_set);
        if slots < failed.start[q] && u64::from(slots) <= free {
            return true;
        }
        let spec = &self.queues[q].spec;
        if free > 0 && spec.reserve.is_some() && (slots > 1 || spec.plans_every_job()) {
            return true;
        }
        let backfills = spec.backfill && self.holds_reserved_hosts();
        let Some(limit) = self.effective_run_limit(q, own).filter(|_| backfills) else { return false };
        let until = t.after(limit);
        !failed.implies_backfill(q, slots, until) && u64::from(slots) <= free + self.borrowable(until, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the staircase replaces: every failure kept, each looked at.
    fn implied_by_any(noted: &[(u32, Time)], slots: u32, until: Time) -> bool {
        noted.iter().any(|&(s, u)| s <= slots && u <= until)
    }

    #[test]
    fn a_backfill_failure_implies_those_asking_more_for_longer() {
        let mut f = Failed::default();
        f.reset(1);
        f.no_backfill(0, 4, Time(100));
        assert!(f.implies_backfill(0, 4, Time(100)));
        assert!(f.implies_backfill(0, 8, Time(200)));
        assert!(!f.implies_backfill(0, 3, Time(200)), "fewer slots");
        assert!(!f.implies_backfill(0, 8, Time(99)), "ending sooner");
        // (2, 300) and (6, 50) stand beside (4, 100); (2, 50) implies all three.
        f.no_backfill(0, 2, Time(300));
        f.no_backfill(0, 6, Time(50));
        assert_eq!(f.backfill[0], [(2, Time(300)), (4, Time(100)), (6, Time(50))]);
        let changes = f.changes;
        f.no_backfill(0, 5, Time(100));
        assert_eq!(f.changes, changes, "implied: nothing recorded");
        f.no_backfill(0, 2, Time(50));
        assert_eq!(f.backfill[0], [(2, Time(50))]);
    }

    proptest! {
        /// The staircase answers as the list of every failure does.
        #[test]
        fn the_staircase_answers_as_every_failure_would(
            noted in prop::collection::vec((1u32..12, 0u64..40), 0..40),
            asked in prop::collection::vec((1u32..12, 0u64..40), 1..20),
        ) {
            let mut f = Failed::default();
            f.reset(1);
            let mut all = Vec::new();
            for &(s, u) in &noted {
                f.no_backfill(0, s, Time(u));
                all.push((s, Time(u)));
                let b = &f.backfill[0];
                prop_assert!(b.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 > w[1].1), "{b:?}");
            }
            for &(s, u) in asked.iter().chain(&noted) {
                prop_assert_eq!(f.implies_backfill(0, s, Time(u)), implied_by_any(&all, s, Time(u)));
            }
        }
    }
}
