//! The machine and queue a workload runs on when no configuration is
//! given: from the SWF header, MaxNodes hosts sharing MaxProcs slots (the
//! remainder going one each to the first hosts, so the total is exact), or
//! MaxProcs one-slot hosts when MaxNodes is missing or not a number; one
//! queue `normal`, FCFS or `FAIRSHARE = USER_SHARES[[default, 1]]`, or a
//! multifactor policy over the same shares (every user of the workload an
//! association of one share under `root`) with the weights of issue 6's
//! example ([`multifactor`]). With no MaxProcs either, one host as large
//! as the largest job.

use allot_engine::model::{EngineConfig, HostSpec, MultifactorSpec, Plan, Reserve};
use allot_engine::multifactor::ledger::{Billing, ResetPeriod};
use allot_engine::multifactor::priority::{PriorityParams, Weights};
use allot_engine::multifactor::{AccountTree, AssocId, FairsharePolicy, RawShares};

use crate::workload::Workload;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Policy {
    Fcfs,
    Fairshare,
    Multifactor(FairsharePolicy),
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Fcfs => "fcfs",
            Policy::Fairshare => "fairshare",
            Policy::Multifactor(p) => p.name(),
        }
    }
}

/// The multifactor policies over the workload's users, one share each:
/// weights wait time 1000 (7 days to the full factor) and fair share
/// 100000, the others 0; usage is CPU-seconds with a half-life of 7 days.
pub fn multifactor(w: &Workload, policy: FairsharePolicy) -> MultifactorSpec {
    let mut tree = AccountTree::new();
    for u in w.users() {
        // Users are distinct: a tree of users under root cannot refuse one.
        let _ = tree.add_user(AssocId::ROOT, u, RawShares::Count(1));
    }
    let params = PriorityParams {
        weights: Weights { wait_time: 1000.0, fair_share: 100_000.0, ..Weights::default() },
        ..PriorityParams::default()
    };
    MultifactorSpec {
        policy,
        tree,
        params,
        half_life: 7 * 86_400,
        reset: ResetPeriod::None,
        billing: Billing::default(),
        from_policy: None,
    }
}

pub fn default_engine(w: &Workload, policy: Policy) -> EngineConfig {
    let largest = w.jobs.iter().map(|j| u64::from(j.submission.slots)).max().unwrap_or(1);
    let procs = w.machine.max_procs.filter(|&p| p > 0).unwrap_or(largest);
    let nodes = w.machine.max_nodes.filter(|&n| n > 0 && n <= procs).unwrap_or(procs);
    // A header past what allot simulates is refused before this (see
    // `Machine::check`); kept within it all the same.
    let (procs, nodes) = (procs.min(crate::workload::MAX_PROCS), nodes.min(crate::workload::MAX_HOSTS));
    let nodes = nodes.min(procs);
    let width = nodes.to_string().len();
    let hosts = (0..nodes)
        .map(|i| {
            let slots = (procs / nodes + u64::from(i < procs % nodes)) as u32;
            HostSpec::new(format!("node{:0width$}", i + 1), slots, slots)
        })
        .collect();
    let mut config = EngineConfig::one_queue(hosts, policy == Policy::Fairshare);
    if let Policy::Multifactor(p) = policy {
        config.multifactor = Some(multifactor(w, p));
    }
    config
}

/// Reservation time of [`backfill`]: the spec's example,
/// MAX_RESERVE_TIME[5] (5 minutes at the default 60 s MBD_SLEEP_TIME).
/// On CTC-SP2 under fairshare with `--kill-at-limit` the mean wait does
/// not follow it in one direction: 67,778 s at 5 cycles, 77,190 s at 60,
/// 86,601 s at 720 and 36,132 s at 1,440 (a day, where no reservation
/// expires); about one reservation stands per pass whatever the time
/// (0.89 to 0.92 in `summary.json`'s `reservations.mean_standing`).
pub const BACKFILL_RESERVE_CYCLES: u32 = 5;

/// `allot sim --backfill` (`backfill`) and `--reserve`: the default queue
/// reserves slots for parallel jobs (SLOT_RESERVE =
/// MAX_RESERVE_TIME[cycles]: [`BACKFILL_RESERVE_CYCLES`] unless
/// `--max-reserve-time` says), and backfills (BACKFILL=Y) or not, as the
/// spec's examples configure a queue.
pub fn reserve(config: &mut EngineConfig, backfill: bool, cycles: u32) {
    let default = config.default_queues.first().cloned();
    for q in config.queues.iter_mut().filter(|q| Some(&q.name) == default.as_ref()) {
        q.reserve = Some(Reserve { cycles, memory: false });
        q.backfill = backfill;
    }
}

/// `allot sim --time-reserve N`: LSB_TIME_RESERVE_NUMJOBS=N, the queues
/// that reserve (`--backfill`, `--reserve`) planning their reservations
/// for N jobs at most, as the configuration has it
/// (`allot_config::plan::time_based`).
pub fn time_reserve(config: &mut EngineConfig, n: u32) {
    config.plan_max_jobs = Some(n);
    for q in &mut config.queues {
        q.plan = allot_config::plan::time_based(q.reserve);
    }
}

/// `allot sim --plan PLAN`: the default queue's reservation and plan as
/// the allocation planner has them (`allot_config::plan::planner_queue`),
/// backfilling or not.
pub fn plan(config: &mut EngineConfig, (reserve, plan): (Option<Reserve>, Option<Plan>), backfill: bool) {
    let default = config.default_queues.first().cloned();
    for q in config.queues.iter_mut().filter(|q| Some(&q.name) == default.as_ref()) {
        (q.reserve, q.plan, q.backfill) = (reserve, plan, backfill);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Machine;

    fn machine(max_procs: Option<u64>, max_nodes: Option<u64>) -> Workload {
        Workload { machine: Machine { max_procs, max_nodes, ..Machine::default() }, ..Workload::default() }
    }

    #[test]
    fn backfill_makes_the_default_queue_reserve_and_backfill() {
        let mut c = default_engine(&machine(Some(4), None), Policy::Fairshare);
        assert_eq!((c.queues[0].reserve, c.queues[0].backfill), (None, false));
        reserve(&mut c, true, BACKFILL_RESERVE_CYCLES);
        assert_eq!(c.queues[0].reserve, Some(Reserve { cycles: 5, memory: false }));
        assert!(c.queues[0].backfill);
        reserve(&mut c, false, BACKFILL_RESERVE_CYCLES);
        assert!(!c.queues[0].backfill);
    }

    #[test]
    fn hosts_from_the_header() {
        let c = default_engine(&machine(Some(240), Some(120)), Policy::Fcfs);
        assert_eq!((c.hosts.len(), c.hosts[0].slots, c.hosts[0].name.as_str()), (120, 2, "node001"));
        let c = default_engine(&machine(Some(338), None), Policy::Fairshare);
        assert_eq!((c.hosts.len(), c.hosts[0].slots), (338, 1));
        assert_eq!(c.queues[0].policy.as_deref(), Some("normal"));
        // Curie: 93,312 processors over 5,544 nodes is not a whole number.
        let c = default_engine(&machine(Some(93_312), Some(5_544)), Policy::Fcfs);
        assert_eq!(c.hosts.iter().map(|h| u64::from(h.slots)).sum::<u64>(), 93_312);
        assert_eq!((c.hosts[0].slots, c.hosts[5_543].slots), (17, 16));
    }
}
