//! Queue-based fairshare: slot pools (spec 000, "Queue-based Fairshare").
//!
//! A pool's total is the slots its queues use plus the free slots of its
//! hosts. Each pass divides it among the pool's queues that have pending
//! work, in order, each getting `ceil(share / sum of shares x total)`
//! capped at what is left: the 50/30/20 of 12 slots is 6, 4, 2; of 15,
//! 8, 5, 2; of 21, 11, 7, 3; ten queues of 10% of 21 slots get 3 each
//! until the slots run out. Normalizing over the queues with pending work
//! is how the slots of queues with none are redistributed (Roma and Genova
//! alone share 15 as 11 and 4). A queue that cannot use its entitlement
//! (QJOB_LIMIT, or not enough pending work) keeps what it can use, and the
//! rest is divided again among the others.
//!
//! The order is that of accumulated slot usage, decayed over time, per
//! unit of share: the queue that used least for its share first, then
//! higher priority, then configuration order. At first that is priority
//! order; as queues run, the ones that have not get their turn (the
//! spec's round-robin example).

/// One queue of a pool as the division sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoolQueue {
    /// SLOT_SHARE, percent.
    pub share: u32,
    /// The most slots the queue can use now (its running slots plus its
    /// pending jobs' slots, within QJOB_LIMIT); 0 if it has no pending work.
    pub cap: u64,
}

/// Divides `total` slots among `queues`, taken in the order given; a queue
/// with no pending work (`cap` 0) gets nothing. Returns each queue's
/// entitlement.
pub fn entitlements(total: u64, queues: &[PoolQueue]) -> Vec<u64> {
    let mut out = vec![0u64; queues.len()];
    let mut fixed = vec![false; queues.len()];
    for (i, q) in queues.iter().enumerate() {
        if q.cap == 0 || q.share == 0 {
            fixed[i] = true;
        }
    }
    let mut left = total;
    loop {
        let share_sum: u64 = queues.iter().zip(&fixed).filter(|(_, f)| !**f).map(|(q, _)| u64::from(q.share)).sum();
        if share_sum == 0 {
            return out;
        }
        let mut remaining = left;
        let mut over_cap = false;
        for (i, q) in queues.iter().enumerate() {
            if fixed[i] {
                continue;
            }
            let want = (u64::from(q.share) * left).div_ceil(share_sum);
            out[i] = want.min(remaining);
            remaining -= out[i];
            over_cap |= out[i] > q.cap;
        }
        if !over_cap {
            return out;
        }
        // Queues that cannot use their entitlement keep what they can use;
        // the rest is divided again among the others.
        for (i, q) in queues.iter().enumerate() {
            if !fixed[i] && out[i] > q.cap {
                out[i] = q.cap;
                fixed[i] = true;
                left -= q.cap;
            }
        }
    }
}

/// Slot usage accumulated with exponential decay: `d acc / dt = slots -
/// lambda acc`, brought up to date at each change of the queue's slots.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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
        // spec 000 phase 2: Verona done; Roma and Genova share 15 as 11 and 4.
        let roma_genova = [q(50), PoolQueue { share: 30, cap: 0 }, q(20)];
        assert_eq!(entitlements(15, &roma_genova), [11, 0, 4]);
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
