//! LSF's dynamic user priority (spec 000, "Dynamic User Priority").

use super::usage::Usage;

/// The weighting factors of `lsb.params`, with the spec's defaults.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LsfFactors {
    /// CPU_TIME_FACTOR (0.7).
    pub cpu_time_factor: f64,
    /// RUN_TIME_FACTOR (0.7).
    pub run_time_factor: f64,
    /// RUN_JOB_FACTOR (3).
    pub run_job_factor: f64,
    /// FAIRSHARE_ADJUSTMENT_FACTOR (0).
    pub fairshare_adjustment_factor: f64,
    /// COMMITTED_RUN_TIME_FACTOR (0).
    pub committed_run_time_factor: f64,
    /// HIST_HOURS (5): after this many hours, 1 hour of use is worth 0.1
    /// hour. 0 means no decay.
    pub hist_hours: f64,
    /// ENABLE_HIST_RUN_TIME (N).
    pub enable_hist_run_time: bool,
}

impl Default for LsfFactors {
    fn default() -> Self {
        LsfFactors {
            cpu_time_factor: 0.7,
            run_time_factor: 0.7,
            run_job_factor: 3.0,
            fairshare_adjustment_factor: 0.0,
            committed_run_time_factor: 0.0,
            hist_hours: 5.0,
            enable_hist_run_time: false,
        }
    }
}

/// The spec's floor on the denominator: priority is at most 100 x shares.
pub const MIN_DENOMINATOR: f64 = 0.01;

impl LsfFactors {
    /// Decay rate per second such that `exp(-lambda * HIST_HOURS h) = 0.1`.
    pub fn decay_lambda(&self) -> f64 {
        if self.hist_hours > 0.0 { std::f64::consts::LN_10 / (self.hist_hours * 3600.0) } else { 0.0 }
    }

    /// The denominator of the dynamic priority, in hours (spec 000, with
    /// historical and committed run time):
    ///
    /// ```text
    ///   cpu_time * CPU_TIME_FACTOR
    /// + (historical_run_time + run_time) * RUN_TIME_FACTOR
    /// + (committed_run_time - run_time) * COMMITTED_RUN_TIME_FACTOR
    /// + (1 + job_slots) * RUN_JOB_FACTOR
    /// + fairshare_adjustment * FAIRSHARE_ADJUSTMENT_FACTOR
    /// ```
    ///
    /// Historical run time counts only with ENABLE_HIST_RUN_TIME=Y.
    /// `job_slots` is slots in use plus slots reserved. The committed term
    /// is [`Usage::committed_run_time`], already the per-job difference.
    pub fn denominator(&self, u: &Usage, adjustment: f64) -> f64 {
        const H: f64 = 3600.0;
        let hist = if self.enable_hist_run_time { u.hist_run_time } else { 0.0 };
        let job_slots = f64::from(u.started) + f64::from(u.reserved);
        u.cpu_time / H * self.cpu_time_factor
            + (hist + u.run_time) / H * self.run_time_factor
            + u.committed_run_time / H * self.committed_run_time_factor
            + (1.0 + job_slots) * self.run_job_factor
            + adjustment * self.fairshare_adjustment_factor
    }

    /// `shares / max(denominator, 0.01)`: with every factor 0 this is the
    /// static priority `shares / 0.01` (spec 000, "static priority
    /// fairshare"). A denominator that is not a finite number (a broken
    /// adjustment) is taken as the floor, so no NaN reaches an ordering.
    pub fn dynamic_priority(&self, shares: u32, u: &Usage, adjustment: f64) -> f64 {
        let d = self.denominator(u, adjustment);
        let d = if d.is_finite() { d.max(MIN_DENOMINATOR) } else { MIN_DENOMINATOR };
        f64::from(shares) / d
    }
}

/// What the cluster tells a fairshare adjustment besides a node's usage
/// (spec 000: "current memory use over the entire cluster and the average
/// memory allocated to a slot in the cluster").
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClusterMemory {
    /// Memory in use over the cluster (MB).
    pub in_use: f64,
    /// Average memory per slot (MB).
    pub slot_memory: f64,
}

/// The fairshare adjustment hook (LSF's `libfairshareadjust`): a value added
/// to the denominator, weighted by FAIRSHARE_ADJUSTMENT_FACTOR.
pub trait FairshareAdjustment {
    fn adjustment(&self, usage: &Usage, cluster: &ClusterMemory) -> f64;
}

/// The adjustment recorded with the usage (an imported usage file), or 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecordedAdjustment;

impl FairshareAdjustment for RecordedAdjustment {
    fn adjustment(&self, usage: &Usage, _: &ClusterMemory) -> f64 {
        usage.adjustment
    }
}

/// The memory-based adjustment of LSF's example plugin (spec 000):
/// `(1 + slots) * ((total_memory / slots) / (slot_memory * THRESHOLD))`,
/// where `slots` and `total_memory` are the node's started jobs' slots and
/// memory. With no slots in use (or no slot memory) it is 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryAdjustment {
    pub threshold: f64,
}

impl FairshareAdjustment for MemoryAdjustment {
    fn adjustment(&self, usage: &Usage, cluster: &ClusterMemory) -> f64 {
        let slots = f64::from(usage.started);
        let per_slot_budget = cluster.slot_memory * self.threshold;
        if slots == 0.0 || per_slot_budget <= 0.0 {
            return 0.0;
        }
        (1.0 + slots) * ((usage.memory / slots) / per_slot_budget)
    }
}

/// The fairshare adjustment a cluster applies, with what the cluster tells
/// it: handed by value to whatever computes priorities (the dispatch pass,
/// `bjobs -p`, `bhpart`, `allot shares`), so all see the same.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Adjustment {
    /// The memory-based example (`[fairshare] adjustment = "memory"`);
    /// `None`: the adjustment recorded with the usage (0 but for an
    /// imported usage file).
    pub memory: Option<MemoryAdjustment>,
    pub cluster: ClusterMemory,
}

impl Adjustment {
    pub fn inputs(&self) -> PriorityInputs<'_> {
        let adjustment: &dyn FairshareAdjustment = match &self.memory {
            Some(m) => m,
            None => &RecordedAdjustment,
        };
        PriorityInputs { adjustment, cluster: self.cluster }
    }
}

impl ClusterMemory {
    /// The average memory per slot (spec 000's `slot_memory`): the memory
    /// of the hosts whose memory is known over their slots (a host of
    /// unknown memory would only dilute it); 0 when none is known.
    pub fn slot_memory_of(hosts: &[crate::model::HostSpec]) -> f64 {
        let (mb, slots) = hosts
            .iter()
            .filter_map(|h| h.attrs.maxmem.map(|m| (m as f64, u64::from(h.slots))))
            .fold((0.0, 0u64), |a, (m, s)| (a.0 + m, a.1 + s));
        if slots == 0 { 0.0 } else { mb / slots as f64 }
    }
}

/// What a priority needs besides the tree: the adjustment and its inputs.
pub struct PriorityInputs<'a> {
    pub adjustment: &'a dyn FairshareAdjustment,
    pub cluster: ClusterMemory,
}

impl Default for PriorityInputs<'_> {
    fn default() -> Self {
        PriorityInputs { adjustment: &RecordedAdjustment, cluster: ClusterMemory::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(started: u32, cpu: f64, run: f64) -> Usage {
        Usage { started, cpu_time: cpu, run_time: run, ..Usage::default() }
    }

    #[test]
    fn default_formula_with_the_specs_defaults() {
        // shares / (cpu_h*0.7 + run_h*0.7 + (1+slots)*3): 10 shares, 1 hour
        // of CPU, 2 hours of run time, 1 slot: 10 / (0.7 + 1.4 + 6) = 1.2345...
        let p = LsfFactors::default().dynamic_priority(10, &usage(1, 3600.0, 7200.0), 0.0);
        assert!((p - 10.0 / 8.1).abs() < 1e-12, "{p}");
    }

    #[test]
    fn reserved_slots_count_as_job_slots() {
        let f = LsfFactors::default();
        let u = Usage { reserved: 2, ..Usage::default() };
        assert!((f.dynamic_priority(9, &u, 0.0) - 1.0).abs() < 1e-12, "9 / ((1+2)*3)");
    }

    #[test]
    fn static_priority_is_shares_over_a_hundredth() {
        // spec 000: all factors 0 -> dynamic priority = number_shares / 0.01
        let f = LsfFactors {
            cpu_time_factor: 0.0,
            run_time_factor: 0.0,
            run_job_factor: 0.0,
            fairshare_adjustment_factor: 0.0,
            committed_run_time_factor: 0.0,
            ..LsfFactors::default()
        };
        let busy = usage(50, 1e6, 1e6);
        assert_eq!(f.dynamic_priority(7, &busy, 0.0), 700.0);
        assert!(f.dynamic_priority(8, &busy, 0.0) > f.dynamic_priority(7, &Usage::default(), 0.0));
    }

    #[test]
    fn priority_never_exceeds_a_hundred_times_the_shares() {
        let f = LsfFactors { run_job_factor: 0.001, ..LsfFactors::default() };
        assert_eq!(f.dynamic_priority(3, &Usage::default(), 0.0), 300.0);
    }

    #[test]
    fn historical_run_time_counts_only_when_enabled() {
        // spec 000 example: CPU_TIME_FACTOR=0 RUN_JOB_FACTOR=0 RUN_TIME_FACTOR=1
        // -> shares / ((historical_run_time + run_time) * RUN_TIME_FACTOR)
        let base =
            LsfFactors { cpu_time_factor: 0.0, run_job_factor: 0.0, run_time_factor: 1.0, ..LsfFactors::default() };
        let u = Usage { run_time: 3600.0, hist_run_time: 3600.0, ..Usage::default() };
        assert_eq!(base.dynamic_priority(10, &u, 0.0), 10.0);
        let with_hist = LsfFactors { enable_hist_run_time: true, ..base };
        assert_eq!(with_hist.dynamic_priority(10, &u, 0.0), 5.0);
    }

    #[test]
    fn committed_run_time_holds_the_priority_at_its_lowest() {
        // spec 000: RUN_TIME_FACTOR=1, COMMITTED_RUN_TIME_FACTOR=1: priority
        // drops at dispatch to its lowest and stays there while the job runs.
        let f = LsfFactors {
            cpu_time_factor: 0.0,
            run_job_factor: 0.0,
            run_time_factor: 1.0,
            committed_run_time_factor: 1.0,
            ..LsfFactors::default()
        };
        let limit = 4.0 * 3600.0;
        let at = |ran: f64| Usage { run_time: ran, committed_run_time: limit - ran, ..Usage::default() };
        let p0 = f.dynamic_priority(8, &at(0.0), 0.0);
        let p1 = f.dynamic_priority(8, &at(3600.0), 0.0);
        assert_eq!(p0, 2.0);
        assert_eq!(p0, p1);
    }

    #[test]
    fn adjustment_is_weighted_by_its_factor() {
        let f = LsfFactors { fairshare_adjustment_factor: 0.5, ..LsfFactors::default() };
        // (1+0)*3 + 4*0.5 = 5
        assert_eq!(f.dynamic_priority(10, &Usage::default(), 4.0), 2.0);
        assert_eq!(f.dynamic_priority(10, &Usage::default(), f64::NAN), 1000.0);
    }

    #[test]
    fn memory_adjustment_follows_the_plugin_formula() {
        // (1 + slots) * ((total_memory / slots) / (slot_memory * THRESHOLD))
        // 4 slots using 8000 MB, 1000 MB per slot, threshold 0.5:
        // 5 * (2000 / 500) = 20
        let adj = MemoryAdjustment { threshold: 0.5 };
        let u = Usage { started: 4, memory: 8000.0, ..Usage::default() };
        let c = ClusterMemory { in_use: 20_000.0, slot_memory: 1000.0 };
        assert_eq!(adj.adjustment(&u, &c), 20.0);
        assert_eq!(adj.adjustment(&Usage::default(), &c), 0.0);
        assert_eq!(RecordedAdjustment.adjustment(&Usage { adjustment: 1.5, ..u }, &c), 1.5);
    }
}
