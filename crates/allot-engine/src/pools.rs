//! Queue-based fairshare: slot pools (spec 000, "Queue-based Fairshare").
//!
//! A pool's total is the slots its queues use plus the free slots of its
//! hosts. Each pass divides it among the pool's queues that have pending
//! work, in rounds, as the spec tells its 15-slot example: in a round each
//! queue gets `ceil(SLOT_SHARE% x what the round divides)`, capped at what
//! is left and at what the queue can use. The first round divides the
//! total: the 50/30/20 of 12 slots is 6, 4, 2; of 15, 8, 5, 2; of 21, 11,
//! 7, 3; ten queues of 10% of 21 slots get 3 each until the slots run out.
//! Later rounds divide what is left, the shares of queues with no pending
//! work (or of queues that cannot use theirs: QJOB_LIMIT, too few pending
//! jobs): with Verona done, Roma and Genova get 8 and 3 of 15, then 2 and
//! 1 of the 4 left, then the last slot goes "to queue Roma again": 11 and
//! 4.
//!
//! The first round takes the queues by share, largest first ("LSF orders
//! the queues within each pool based on the shares the queues are
//! entitled to"); among equal shares, by accumulated slot usage, decayed
//! over time, least first ("the accumulation of slots in use by the queue
//! is used in ordering the queues"); then higher priority, then
//! configuration order. So queues of different shares keep the spec's
//! rounding (8, 5, 2 of 15; 11, 7, 3 of 21) as jobs come and go, where
//! ordering them by usage per share would make the one the rounding cut
//! short look least served and trade a slot round (8/4/3, 7/5/3); and
//! queues of equal shares take turns as they accumulate usage (the spec's
//! round-robin example). Later rounds take them the same way: the spec
//! gives the last slot of its second phase to Roma "again", and so that
//! phase settles at 11 and 4.
//!
//! "The total number of slots in each pool is constant": the job slots of
//! its hosts, whatever queues out of any pool hold of them. A queue ahead
//! in the first round's order keeps the free slots it is still entitled
//! to from the pool's other queues, but not from one dispatched before a
//! queue out of the pool on its hosts that is itself dispatched before
//! the holder (dispatch order: higher priority, then configuration
//! order): that queue would take them first ("LSF dispatches as many
//! jobs from the non-pool queues as it can"), so keeping them would only
//! give them away. So in the spec's two-pool example Pisa, above Milano
//! and Parma, keeps its 5 while their jobs come out of Venezia's and
//! Bologna's, below them, which still keep their shares from each other:
//! 5, 3, 3, 2, 2.

/// One queue of a pool as the division sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoolQueue {
    /// SLOT_SHARE, percent.
    pub share: u32,
    /// The most slots the queue can use now (its running slots plus its
    /// pending jobs' slots, within QJOB_LIMIT); 0 if it has no pending work.
    pub cap: u64,
}

/// Divides `total` slots among `queues`, given in the first round's order
/// (module docs); a queue with no pending work (`cap` 0) gets nothing.
/// Returns each queue's entitlement.
pub fn entitlements(total: u64, queues: &[PoolQueue]) -> Vec<u64> {
    let mut out = vec![0u64; queues.len()];
    let mut later: Vec<usize> = (0..queues.len()).filter(|&i| queues[i].cap > 0 && queues[i].share > 0).collect();
    let mut order: Vec<usize> = later.clone();
    later.sort_by_key(|&i| std::cmp::Reverse(queues[i].share));
    let mut left = total;
    while left > 0 && !order.is_empty() {
        let divided = left;
        for &i in &order {
            let q = &queues[i];
            let give = (u64::from(q.share) * divided).div_ceil(100).min(left).min(q.cap - out[i]);
            out[i] += give;
            left -= give;
        }
        // A queue that has all it can use is done; each round gives at
        // least a slot while any other is not (a share is at least 1%).
        order = later.iter().copied().filter(|&i| out[i] < queues[i].cap).collect();
    }
    out
}

/// Slot usage accumulated with exponential decay: `d acc / dt = slots -
/// lambda acc`, brought up to date at each change of the queue's slots.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Accumulated {
    value: f64,
    at: u64,
}

impl Accumulated {
    /// The value at `t` when `slots` were in use since the last update.
    pub fn at(&self, t: u64, slots: u32, lambda: f64) -> f64 {
        let dt = t.saturating_sub(self.at) as f64;
        let s = f64::from(slots);
        if lambda == 0.0 {
            return self.value + s * dt;
        }
        let keep = (-lambda * dt).exp();
        self.value * keep + s * (1.0 - keep) / lambda
    }

    pub fn update(&mut self, t: u64, slots: u32, lambda: f64) {
        self.value = self.at(t, slots, lambda);
        self.at = t;
    }
}

impl crate::engine::Engine {
    /// Whether a queue out of any pool that shares pool queue `holder`'s
    /// hosts is dispatched after queue `q` and before `holder` (module
    /// docs).
    pub(crate) fn outsider_between(&self, q: usize, holder: usize) -> bool {
        let rank = |i: usize| (std::cmp::Reverse(self.queues[i].spec.priority), i);
        let (from, to) = (rank(q), rank(holder));
        let me = &self.queues[holder];
        let mine = &self.host_sets[me.host_set].0;
        self.queues.iter().enumerate().any(|(o, other)| {
            other.pool.is_none()
                && from < rank(o)
                && rank(o) < to
                && (other.host_set == me.host_set
                    || self.host_sets[other.host_set].0.iter().any(|h| mine.binary_search(h).is_ok()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(share: u32) -> PoolQueue {
        PoolQueue { share, cap: u64::MAX }
    }

    #[test]
    fn the_specs_roundings() {
        // spec 000: 50/30/20 of 12 -> 6, 4, 2; of 15 -> 8, 5, 2; of 21 -> 11, 7, 3.
        let three = [q(50), q(30), q(20)];
        assert_eq!(entitlements(12, &three), [6, 4, 2]);
        assert_eq!(entitlements(15, &three), [8, 5, 2]);
        assert_eq!(entitlements(21, &three), [11, 7, 3]);
    }

    #[test]
    fn ten_queues_of_ten_percent_of_21() {
        // spec 000: the first 7 queues take 3 each; the last 3 get none.
        let ten = [q(10); 10];
        assert_eq!(entitlements(21, &ten), [3, 3, 3, 3, 3, 3, 3, 0, 0, 0]);
    }

    #[test]
    fn queues_without_pending_work_give_their_slots_to_the_others() {
        // spec 000 phase 2: Verona done; Roma and Genova share 15 as 11 and 4
        // (8 and 3, then 2 and 1 of 4, then the last to Roma "again"),
        // whichever of the two comes first by usage.
        let roma_genova = [q(50), PoolQueue { share: 30, cap: 0 }, q(20)];
        assert_eq!(entitlements(15, &roma_genova), [11, 0, 4]);
        let genova_first = [q(20), PoolQueue { share: 30, cap: 0 }, q(50)];
        assert_eq!(entitlements(15, &genova_first), [4, 0, 11]);
        // Phase 3: Genova alone takes all 15.
        let genova = [PoolQueue { share: 50, cap: 0 }, PoolQueue { share: 30, cap: 0 }, q(20)];
        assert_eq!(entitlements(15, &genova), [0, 0, 15]);
    }

    #[test]
    fn slots_a_queue_cannot_use_go_to_the_others() {
        // spec 000: "if LSF determines that a queue is eligible to run 50
        // jobs, but the queue has a job limit of 40 jobs, ... the remaining
        // 10 job slots are redistributed".
        let limited = [PoolQueue { share: 50, cap: 40 }, q(50)];
        assert_eq!(entitlements(100, &limited), [40, 60]);
    }

    #[test]
    fn the_order_decides_who_is_cut() {
        // The table after the queues have run: Genova, then Verona, then
        // Roma in the order: 5, 7, and Roma what is left, 9.
        let by_usage = [q(20), q(30), q(50)];
        assert_eq!(entitlements(21, &by_usage), [5, 7, 9]);
    }

    #[test]
    fn accumulated_usage_decays() {
        let lambda = std::f64::consts::LN_10 / 3600.0;
        let mut a = Accumulated::default();
        a.update(0, 0, lambda);
        // 2 slots for an hour: the integral of 2 e^{-lambda (T - s)} ds.
        let v = a.at(3600, 2, lambda);
        assert!((v - 2.0 * 0.9 / lambda).abs() < 1e-6, "{v}");
        assert_eq!(Accumulated::default().at(100, 3, 0.0), 300.0);
    }
}
