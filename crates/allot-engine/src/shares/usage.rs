//! Usage per share-tree node, kept so that reading it at any time `t` is
//! O(1) and nothing has to be walked periodically.
//!
//! - CPU time and historical run time decay exponentially: LSF's HIST_HOURS
//!   is the time after which 1 hour of use is worth 0.1 hour, so
//!   `lambda = ln(10) / HIST_HOURS` (spec 000, "cpu_time"). A decaying sum
//!   is stored as a value and the time it was last brought up to date;
//!   sums of decaying values with one `lambda` decay together, so a group's
//!   aggregate is exact.
//! - Run time of running jobs grows linearly: `sum_j w_j * (t - start_j)` is
//!   stored as `rate * t + base`, so starting and finishing a job are O(1).
//! - Committed run time left, `sum_j w_j * (limit_j - (t - start_j))`, is
//!   linear in `t` the same way.

use crate::time::Time;

/// A usage snapshot of one node at one time, in seconds and slots.
///
/// This is what the priority formula and the share tables read, and also
/// what an imported usage file gives per user (already decayed).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    /// Job slots in use by started jobs.
    pub started: u32,
    /// Job slots reserved for pending jobs.
    pub reserved: u32,
    /// Cumulative CPU time, decayed (seconds).
    pub cpu_time: f64,
    /// Run time of running jobs (seconds; times the job's CPUs under
    /// parallel fairshare).
    pub run_time: f64,
    /// Run time of finished jobs, decayed (seconds).
    pub hist_run_time: f64,
    /// Committed run time not yet used by running jobs (seconds): the spec's
    /// `committed_run_time - run_time`, summed per job, so a job without a
    /// run limit adds nothing to it.
    pub committed_run_time: f64,
    /// Memory in use by started jobs (MB), for the memory adjustment.
    pub memory: f64,
    /// An adjustment recorded from outside (a usage file).
    pub adjustment: f64,
}

impl Usage {
    /// Run time as `bhpart` and `bqueues` show it: actual plus historical,
    /// without the committed run time (spec 000, "Run time displayed").
    pub fn displayed_run_time(&self) -> f64 {
        self.run_time + self.hist_run_time
    }
}

/// A sum of values that each decay as `exp(-lambda * age)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Decaying {
    value: f64,
    at: f64,
}

impl Decaying {
    fn at(&self, t: f64, lambda: f64) -> f64 {
        if lambda == 0.0 || self.value == 0.0 { self.value } else { self.value * (-lambda * (t - self.at)).exp() }
    }

    fn add(&mut self, t: f64, lambda: f64, x: f64) {
        self.value = self.at(t, lambda) + x;
        self.at = t;
    }
}

/// `rate * t + base`.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Linear {
    rate: f64,
    base: f64,
}

impl Linear {
    fn at(&self, t: f64) -> f64 {
        self.rate * t + self.base
    }
}

/// What a running job charges to its share account.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JobCharge {
    /// Slots the job holds.
    pub slots: u32,
    /// Weight of its run time: 1, or its CPU count under parallel fairshare
    /// (LSB_NCPU_ENFORCE=1, and always for host partitions; spec 004,
    /// "Parallel Fairshare").
    pub run_weight: u32,
    /// Its committed run time (`-W` or RUNLIMIT) in seconds, if any and if
    /// COMMITTED_RUN_TIME_FACTOR is in use.
    pub committed: Option<u64>,
    /// Memory it holds (MB).
    pub memory: f64,
    /// When it started.
    pub start: Time,
    /// Seconds its run-time clock moved when it was resized (its run time
    /// so far kept at its new weight): run time counts from `start +
    /// shift`.
    pub shift: f64,
}

/// Usage accumulated at one node; see the module docs for the encoding.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct NodeUsage {
    started: u32,
    reserved: u32,
    cpu: Decaying,
    hist_run: Decaying,
    run: Linear,
    committed: Linear,
    memory: f64,
    adjustment: f64,
}

impl NodeUsage {
    pub(crate) fn at(&self, t: Time, lambda: f64) -> Usage {
        let t = t.as_secs_f64();
        Usage {
            started: self.started,
            reserved: self.reserved,
            cpu_time: self.cpu.at(t, lambda),
            run_time: self.run.at(t).max(0.0),
            hist_run_time: self.hist_run.at(t, lambda),
            committed_run_time: self.committed.at(t).max(0.0),
            memory: self.memory,
            adjustment: self.adjustment,
        }
    }

    /// A job starts: its slots are in use and its run time starts to count.
    pub(crate) fn start(&mut self, job: &JobCharge) {
        let w = f64::from(job.run_weight);
        let s = job.start.as_secs_f64() + job.shift;
        self.started += job.slots;
        self.run.rate += w;
        self.run.base -= w * s;
        if let Some(limit) = job.committed {
            self.committed.rate -= w;
            self.committed.base += w * (limit as f64 + job.start.as_secs_f64());
        }
        self.memory += job.memory;
    }

    /// A job ends at `t`: its slots and run time stop counting; its run time
    /// joins the historical run time when `keep_history` (ENABLE_HIST_RUN_TIME).
    pub(crate) fn finish(&mut self, job: &JobCharge, t: Time, lambda: f64, keep_history: bool) {
        let w = f64::from(job.run_weight);
        let s = job.start.as_secs_f64() + job.shift;
        self.started = self.started.saturating_sub(job.slots);
        self.run.rate -= w;
        self.run.base += w * s;
        if let Some(limit) = job.committed {
            self.committed.rate += w;
            self.committed.base -= w * (limit as f64 + job.start.as_secs_f64());
        }
        self.memory = (self.memory - job.memory).max(0.0);
        if keep_history {
            let ran = (t.as_secs_f64() - s).max(0.0) * w;
            self.hist_run.add(t.as_secs_f64(), lambda, ran);
        }
    }

    /// A running job's charge at `t` becomes one of `slots` slots and run
    /// weight `weight`: its slots in use change at once; the run time it
    /// accrued so far stays (its clock moves so that, at the new weight,
    /// it has run as long), and it accrues at the new weight from `t`;
    /// its committed run time left is the new weight's.
    pub(crate) fn resize(&mut self, job: &JobCharge, slots: u32, weight: u32, t: Time) -> JobCharge {
        let (w, w2) = (f64::from(job.run_weight), f64::from(weight));
        let t_s = t.as_secs_f64();
        let s = job.start.as_secs_f64() + job.shift;
        let ran = (t_s - s).max(0.0) * w;
        let s2 = if w2 > 0.0 { t_s - ran / w2 } else { t_s };
        self.started = self.started.saturating_sub(job.slots) + slots;
        self.run.rate += w2 - w;
        self.run.base += w * s - w2 * s2;
        if let Some(limit) = job.committed {
            self.committed.rate -= w2 - w;
            self.committed.base += (w2 - w) * (limit as f64 + job.start.as_secs_f64());
        }
        JobCharge { slots, run_weight: weight, shift: s2 - job.start.as_secs_f64(), ..*job }
    }

    pub(crate) fn add_cpu(&mut self, t: Time, lambda: f64, seconds: f64) {
        self.cpu.add(t.as_secs_f64(), lambda, seconds);
    }

    /// A running job's memory changed by `delta` MB.
    pub(crate) fn add_memory(&mut self, delta: f64) {
        self.memory = (self.memory + delta).max(0.0);
    }

    pub(crate) fn add_reserved(&mut self, slots: i64) {
        self.reserved = (i64::from(self.reserved) + slots).clamp(0, i64::from(u32::MAX)) as u32;
    }

    /// Adds an imported snapshot, taken as valid at `t`: counts add, decaying
    /// values join at `t`, run time and committed run time become constants.
    pub(crate) fn add_snapshot(&mut self, u: &Usage, t: Time, lambda: f64) {
        let ts = t.as_secs_f64();
        self.started += u.started;
        self.reserved += u.reserved;
        self.cpu.add(ts, lambda, u.cpu_time);
        self.hist_run.add(ts, lambda, u.hist_run_time);
        self.run.base += u.run_time;
        self.committed.base += u.committed_run_time;
        self.memory += u.memory;
        self.adjustment += u.adjustment;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lambda_for_hist_hours(h: f64) -> f64 {
        std::f64::consts::LN_10 / (h * 3600.0)
    }

    #[test]
    fn one_hour_decays_to_a_tenth_after_hist_hours() {
        // spec 000: "1 hour of recently-used CPU time decays to 0.1 hours
        // after an interval of time specified by HIST_HOURS (5 by default)".
        let lambda = lambda_for_hist_hours(5.0);
        let mut u = NodeUsage::default();
        u.add_cpu(Time(1000), lambda, 3600.0);
        let later = u.at(Time(1000 + 5 * 3600), lambda);
        assert!((later.cpu_time - 360.0).abs() < 1e-6, "{}", later.cpu_time);
    }

    #[test]
    fn decaying_sums_aggregate_exactly() {
        // Two values added at different times, read later, equal the sum of
        // each decayed on its own: what lets a group keep one aggregate.
        let lambda = lambda_for_hist_hours(5.0);
        let mut agg = NodeUsage::default();
        agg.add_cpu(Time(0), lambda, 100.0);
        agg.add_cpu(Time(7200), lambda, 50.0);
        let t = 20_000.0;
        let expect = 100.0 * (-lambda * t).exp() + 50.0 * (-lambda * (t - 7200.0)).exp();
        assert!((agg.at(Time(20_000), lambda).cpu_time - expect).abs() < 1e-9);
    }

    #[test]
    fn run_time_grows_while_running_and_history_takes_it_at_the_end() {
        let lambda = lambda_for_hist_hours(5.0);
        let job = JobCharge { slots: 2, run_weight: 2, committed: None, memory: 0.0, start: Time(100), shift: 0.0 };
        let mut u = NodeUsage::default();
        u.start(&job);
        let mid = u.at(Time(400), lambda);
        assert_eq!(mid.started, 2);
        assert_eq!(mid.run_time, 600.0, "300 s on 2 CPUs");
        u.finish(&job, Time(400), lambda, true);
        let end = u.at(Time(400), lambda);
        assert_eq!((end.started, end.run_time, end.hist_run_time), (0, 0.0, 600.0));
    }

    /// Spec 000, "Resizable jobs and fairshare": "Resize add requests
    /// increase number of slots in use ... Resize release requests
    /// decrease number of slots in use". The run time so far is kept; it
    /// accrues at the new weight (parallel fairshare) from the resize, and
    /// the committed run time left is the new weight's.
    #[test]
    fn a_resized_job_keeps_its_run_time_and_accrues_at_its_new_size() {
        let lambda = lambda_for_hist_hours(5.0);
        let job =
            JobCharge { slots: 2, run_weight: 2, committed: Some(1000), memory: 0.0, start: Time(100), shift: 0.0 };
        let mut u = NodeUsage::default();
        u.start(&job);
        let grown = u.resize(&job, 4, 4, Time(200));
        let at = u.at(Time(200), lambda);
        assert_eq!((at.started, at.run_time, at.committed_run_time), (4, 200.0, 3600.0));
        let at = u.at(Time(250), lambda);
        assert_eq!((at.run_time, at.committed_run_time), (400.0, 3400.0), "4 CPUs for 50 s more; 4 x (1000 - 150)");
        let shrunk = u.resize(&grown, 1, 1, Time(250));
        let at = u.at(Time(260), lambda);
        assert_eq!((at.started, at.run_time, at.committed_run_time), (1, 410.0, 840.0));
        u.finish(&shrunk, Time(260), lambda, true);
        let end = u.at(Time(260), lambda);
        assert_eq!((end.started, end.run_time, end.committed_run_time, end.hist_run_time), (0, 0.0, 0.0, 410.0));
    }

    #[test]
    fn history_is_kept_only_when_enabled() {
        let lambda = lambda_for_hist_hours(5.0);
        let job = JobCharge { slots: 1, run_weight: 1, committed: None, memory: 0.0, start: Time(0), shift: 0.0 };
        let mut u = NodeUsage::default();
        u.start(&job);
        u.finish(&job, Time(50), lambda, false);
        assert_eq!(u.at(Time(50), lambda).hist_run_time, 0.0);
    }

    #[test]
    fn committed_run_time_left_shrinks_as_the_job_runs() {
        // spec 000: "While the job is running, the actual run time is
        // subtracted from the committed run time."
        let job =
            JobCharge { slots: 1, run_weight: 1, committed: Some(3600), memory: 0.0, start: Time(10), shift: 0.0 };
        let mut u = NodeUsage::default();
        u.start(&job);
        assert_eq!(u.at(Time(10), 0.0).committed_run_time, 3600.0);
        assert_eq!(u.at(Time(610), 0.0).committed_run_time, 3000.0);
        u.finish(&job, Time(610), 0.0, false);
        assert_eq!(u.at(Time(610), 0.0).committed_run_time, 0.0);
    }

    #[test]
    fn no_decay_when_lambda_is_zero() {
        let mut u = NodeUsage::default();
        u.add_cpu(Time(0), 0.0, 42.0);
        assert_eq!(u.at(Time(1_000_000), 0.0).cpu_time, 42.0);
    }
}
