//! Usage per association for the multifactor policies: billed seconds,
//! charged while jobs run, decayed exactly with a half-life and evaluated
//! lazily; nothing is walked periodically.
//!
//! A job running since `s` at a billing rate `r` (billed units per second,
//! [`Billing::rate`]) has, at `t`, charged
//!
//!   r * (t - s)                              without decay (half-life 0)
//!   r * h/ln 2 * (1 - 2^(-(t - s)/h))        with half-life h
//!
//! (the integral of `r * 2^(-(t - u)/h)` over `u` in `[s, t]`), and a
//! settled value `v` recorded at `t0` is worth `v * 2^(-(t - t0)/h)` at `t`.
//! When the job ends its charge joins its association's settled value,
//! with what it reports only at its end (energy).
//!
//! A usage reset period sets every association's usage to 0 at each
//! period's start (UTC midnight; Mondays; the 1st of a month, of January,
//! April, July and October, of January), as Slurm's
//! PriorityUsageResetPeriod does; jobs running then are charged from
//! there on.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::AssocId;
use crate::time::{Time, civil_from_days, days_from_civil};

/// What a second of each resource is billed, per unit (the Flux document's
/// "each chargeable resource"): per slot (CPU), per GB of memory, per GPU,
/// per node; energy, per joule reported at the job's end.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Billing {
    pub cpu: f64,
    pub memory_gb: f64,
    pub gpu: f64,
    pub node: f64,
    pub energy_joule: f64,
}

impl Default for Billing {
    /// CPU-seconds only.
    fn default() -> Self {
        Billing { cpu: 1.0, memory_gb: 0.0, gpu: 0.0, node: 0.0, energy_joule: 0.0 }
    }
}

/// What a running job holds.
#[derive(Clone, Copy, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Held {
    pub slots: u32,
    pub memory_gb: f64,
    pub gpus: u32,
    pub nodes: u32,
}

impl Billing {
    /// Billed units per second of a job holding `h`.
    pub fn rate(&self, h: &Held) -> f64 {
        self.cpu * f64::from(h.slots)
            + self.memory_gb * h.memory_gb
            + self.gpu * f64::from(h.gpus)
            + self.node * f64::from(h.nodes)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ResetPeriod {
    None,
    Daily,
    Weekly,
    Monthly,
    Quarterly,
    Yearly,
}

impl ResetPeriod {
    /// The start of the period `t` is in (`None`: the beginning of time).
    pub fn period_start(self, t: Time) -> Time {
        let day = (t.0 / 86_400) as i64;
        let (y, m, _) = civil_from_days(day);
        let first = |y: i64, m: u32| Time((days_from_civil(y, m, 1) * 86_400).max(0) as u64);
        match self {
            ResetPeriod::None => Time(0),
            ResetPeriod::Daily => Time(day as u64 * 86_400),
            // 1970-01-01 was a Thursday: Monday is 3 days before a
            // multiple of 7 days after it.
            ResetPeriod::Weekly => Time((day - (day + 3).rem_euclid(7)).max(0) as u64 * 86_400),
            ResetPeriod::Monthly => first(y, m),
            ResetPeriod::Quarterly => first(y, (m - 1) / 3 * 3 + 1),
            ResetPeriod::Yearly => first(y, 1),
        }
    }
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Running {
    assoc: AssocId,
    rate: f64,
    since: Time,
}

/// Usage per association of an account tree (indexed by [`AssocId`]).
///
/// Settled usage is kept as its worth at one time `base` for every
/// association (`worth * 2^(-(t - base)/h)` at `t`), so that reading all
/// of it costs one `exp2`; `base` moves up when adding would otherwise
/// scale values past `2^32`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Ledger {
    half_life: u64,
    reset: ResetPeriod,
    base: Time,
    worth: Vec<f64>,
    /// The reset period the settled values belong to.
    period: Time,
    running: BTreeMap<u64, Running>,
}

impl Ledger {
    pub fn new(assocs: usize, half_life: u64, reset: ResetPeriod) -> Ledger {
        Ledger { half_life, reset, base: Time(0), worth: vec![0.0; assocs], period: Time(0), running: BTreeMap::new() }
    }

    /// Room for `assocs` associations (one added: nothing charged yet).
    pub fn grow(&mut self, assocs: usize) {
        if self.worth.len() < assocs {
            self.worth.resize(assocs, 0.0);
        }
    }

    /// `2^(-dt/h)`: what a unit recorded `dt` seconds before is worth
    /// (`dt` may be negative: worth grows back in time).
    fn decay(&self, dt: f64) -> f64 {
        if self.half_life == 0 { 1.0 } else { (-dt / self.half_life as f64).exp2() }
    }

    /// What a job billed at `rate` since `since` has charged by `t`.
    fn accrued(&self, rate: f64, since: Time, t: Time) -> f64 {
        let dt = t.0.saturating_sub(since.0) as f64;
        if self.half_life == 0 {
            rate * dt
        } else {
            let h = self.half_life as f64;
            rate * h / std::f64::consts::LN_2 * (1.0 - (-dt / h).exp2())
        }
    }

    /// Whether `t` is in a later reset period than the settled values.
    fn reset_since(&self, t: Time) -> bool {
        self.reset != ResetPeriod::None && self.reset.period_start(t) > self.period
    }

    /// Brings the settled values to `t`'s reset period and, when far, the
    /// base up to `t`.
    fn roll(&mut self, t: Time) {
        if self.reset_since(t) {
            self.worth.iter_mut().for_each(|w| *w = 0.0);
            self.period = self.reset.period_start(t);
            self.base = t;
        }
        if self.half_life > 0 && t.0.saturating_sub(self.base.0) > 32 * self.half_life {
            let k = self.decay(t.0.saturating_sub(self.base.0) as f64);
            self.worth.iter_mut().for_each(|w| *w *= k);
            self.base = t;
        }
    }

    /// Job `job` of `assoc` starts at `t`, billed `rate` a second.
    pub fn start(&mut self, job: u64, assoc: AssocId, rate: f64, t: Time) {
        self.running.insert(job, Running { assoc, rate: rate.max(0.0), since: t });
    }

    /// Job `job` is billed `rate` a second from `t` on: what it charged
    /// at its old rate is settled first (a running job reports what it
    /// holds, e.g. its memory, as it changes).
    pub fn rerate(&mut self, job: u64, rate: f64, t: Time) {
        let Some(r) = self.running.get(&job) else { return };
        let (assoc, old, since) = (r.assoc, r.rate, r.since);
        let from = since.max(self.reset.period_start(t));
        let charge = self.accrued(old, from, t);
        self.add_settled(assoc, charge, t);
        if let Some(r) = self.running.get_mut(&job) {
            r.rate = rate.max(0.0);
            r.since = r.since.max(t);
        }
    }

    /// Job `job` ends at `t`, with `extra` billed units it reports at its
    /// end (energy times its weight); its charge is settled.
    pub fn finish(&mut self, job: u64, t: Time, extra: f64) {
        let Some(r) = self.running.remove(&job) else { return };
        let from = r.since.max(self.reset.period_start(t));
        let charge = self.accrued(r.rate, from, t) + extra.max(0.0);
        self.add_settled(r.assoc, charge, t);
    }

    /// Every association's settled usage at `t`, without its running jobs'
    /// charges (a reconfiguration moves this; running jobs are taken over
    /// from their own start).
    pub fn settled(&self, t: Time) -> Vec<f64> {
        if self.reset_since(t) {
            return vec![0.0; self.worth.len()];
        }
        let k = self.decay(t.0 as f64 - self.base.0 as f64);
        self.worth.iter().map(|w| w * k).collect()
    }

    /// Adds `v` to `assoc`'s settled usage at `t`.
    pub fn add_settled(&mut self, assoc: AssocId, v: f64, t: Time) {
        self.roll(t);
        let grow = self.decay(self.base.0 as f64 - t.0 as f64);
        if let Some(w) = self.worth.get_mut(assoc.0 as usize) {
            *w += v.max(0.0) * grow;
        }
    }

    /// Every association's usage at `t`: settled, decayed, plus what its
    /// running jobs have charged so far (user associations only; the
    /// account tree sums them up).
    pub fn usage(&self, t: Time) -> Vec<f64> {
        let mut out = self.settled(t);
        let period = self.reset.period_start(t);
        for r in self.running.values() {
            if let Some(u) = out.get_mut(r.assoc.0 as usize) {
                *u += self.accrued(r.rate, r.since.max(period), t);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: u64 = 86_400;

    #[test]
    fn without_decay_usage_is_rate_times_time() {
        let mut l = Ledger::new(2, 0, ResetPeriod::None);
        let billing = Billing { cpu: 1.0, memory_gb: 0.5, ..Billing::default() };
        let rate = billing.rate(&Held { slots: 4, memory_gb: 8.0, ..Held::default() });
        assert_eq!(rate, 8.0);
        l.start(1, AssocId(1), rate, Time(100));
        // Charged while it runs, not only at its end.
        assert_eq!(l.usage(Time(200))[1], 800.0);
        l.finish(1, Time(300), 5.0);
        assert_eq!(l.usage(Time(10_000))[1], 1605.0);
    }

    /// A job billed 4 a second for 100 s, then 10 a second (it reported
    /// more memory) for 50 s: 400 + 500. A rate change of a job that is
    /// not running changes nothing.
    #[test]
    fn a_new_rate_counts_from_when_it_is_reported() {
        let mut l = Ledger::new(2, 0, ResetPeriod::None);
        l.start(1, AssocId(1), 4.0, Time(0));
        l.rerate(1, 10.0, Time(100));
        assert_eq!(l.usage(Time(100))[1], 400.0);
        assert_eq!(l.usage(Time(150))[1], 900.0);
        l.rerate(2, 1e9, Time(150));
        l.finish(1, Time(150), 0.0);
        assert_eq!(l.usage(Time(1_000))[1], 900.0);
        // With decay the two pieces integrate as one job would: a job
        // billed 1 a second throughout, rerated to 1, charges the same.
        let (mut a, mut b) = (Ledger::new(2, DAY, ResetPeriod::None), Ledger::new(2, DAY, ResetPeriod::None));
        a.start(1, AssocId(1), 1.0, Time(0));
        b.start(1, AssocId(1), 1.0, Time(0));
        b.rerate(1, 1.0, Time(DAY / 3));
        assert!((a.usage(Time(DAY))[1] - b.usage(Time(DAY))[1]).abs() < 1e-6);
    }

    /// With a half-life of one day: 100 units settled are worth 50 a day
    /// later and 25 two days later; a job billed 1 a second for one
    /// half-life has charged h/ln 2 * (1 - 1/2) = h / (2 ln 2).
    #[test]
    fn decay_halves_per_half_life_and_running_jobs_integrate_it() {
        let mut l = Ledger::new(2, DAY, ResetPeriod::None);
        l.start(1, AssocId(1), 100.0, Time(0));
        l.finish(1, Time(1), 0.0);
        let at = |l: &Ledger, t: u64| l.usage(Time(t))[1];
        let one = at(&l, 1);
        assert!((one - 100.0 * DAY as f64 / std::f64::consts::LN_2 * (1.0 - (-1.0 / DAY as f64).exp2())).abs() < 1e-9);
        assert!((at(&l, 1 + DAY) - one / 2.0).abs() < 1e-9);
        assert!((at(&l, 1 + 2 * DAY) - one / 4.0).abs() < 1e-9);
        let mut l = Ledger::new(2, DAY, ResetPeriod::None);
        l.start(7, AssocId(1), 1.0, Time(0));
        let expected = DAY as f64 / (2.0 * std::f64::consts::LN_2);
        assert!((at(&l, DAY) - expected).abs() < 1e-6, "{}", at(&l, DAY));
        // Settling changes nothing about the value.
        l.finish(7, Time(DAY), 0.0);
        assert!((at(&l, DAY) - expected).abs() < 1e-6);
    }

    /// Values added far apart in time (here at the daemon's Unix clock, a
    /// thousand half-lives in) stay exact: the common base moves up.
    #[test]
    fn far_times_neither_overflow_nor_lose_values() {
        let mut l = Ledger::new(2, DAY, ResetPeriod::None);
        let far = 1_700_000_000;
        l.add_settled(AssocId(1), 100.0, Time(far));
        assert!((l.usage(Time(far + DAY))[1] - 50.0).abs() < 1e-9);
        l.add_settled(AssocId(1), 10.0, Time(far + 40 * DAY));
        let u = l.usage(Time(far + 41 * DAY))[1];
        assert!((u - (5.0 + 100.0 * (-41f64).exp2())).abs() < 1e-9, "{u}");
    }

    /// Reset periods: the start of each, in UTC. 2026-11-22 (a Sunday).
    #[test]
    fn reset_periods_start_where_the_calendar_says() {
        let t = Time(days_from_civil(2026, 11, 22) as u64 * DAY + 3600);
        let day = |y, m, d| Time(days_from_civil(y, m, d) as u64 * DAY);
        assert_eq!(ResetPeriod::Daily.period_start(t), day(2026, 11, 22));
        assert_eq!(ResetPeriod::Weekly.period_start(t), day(2026, 11, 16), "the Monday before");
        assert_eq!(ResetPeriod::Monthly.period_start(t), day(2026, 11, 1));
        assert_eq!(ResetPeriod::Quarterly.period_start(t), day(2026, 10, 1));
        assert_eq!(ResetPeriod::Yearly.period_start(t), day(2026, 1, 1));
        assert_eq!(ResetPeriod::None.period_start(t), Time(0));
        assert_eq!(ResetPeriod::Weekly.period_start(day(2026, 11, 16)), day(2026, 11, 16), "a Monday starts its week");
    }

    /// A daily reset: settled usage is gone the next day, and a job
    /// running across midnight is charged from midnight on.
    #[test]
    fn a_reset_clears_usage_and_running_jobs_count_from_it() {
        let mut l = Ledger::new(2, 0, ResetPeriod::Daily);
        l.start(1, AssocId(1), 1.0, Time(DAY - 100));
        assert_eq!(l.usage(Time(DAY - 10))[1], 90.0);
        assert_eq!(l.usage(Time(DAY + 50))[1], 50.0, "from midnight on");
        l.finish(1, Time(DAY + 50), 0.0);
        assert_eq!(l.usage(Time(DAY + 60))[1], 50.0);
        assert_eq!(l.usage(Time(2 * DAY + 1))[1], 0.0, "reset the next day");
    }
}
