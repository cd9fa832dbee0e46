//! A pass visits only the jobs whose ask may still succeed, in an FCFS
//! queue and in a fairshare account's turn (the engine's
//! `Engine::next_live`): it decides what trying every job in turn
//! decides, with reservation and backfill or without, and tries far fewer
//! jobs when many wait behind one that cannot start.

mod common;

use common::*;

use allot_engine::{Engine, Event, Setting, Time};
use allot_sim::machine::{BACKFILL_RESERVE_CYCLES, Policy, default_engine, reserve};
use allot_sim::sim::{Outcome, SimOptions, run};
use allot_sim::workload::{Machine, Workload, WorkloadJob};
use proptest::prelude::*;

/// How the queue is configured (`allot sim` and its `--reserve` or
/// `--backfill`).
#[derive(Clone, Copy, Debug)]
enum Queue {
    Greedy,
    Reserve,
    Backfill,
}

/// Replays `w` under `policy`, visiting only the asks that may succeed
/// (`index`) or every job; returns what happened and the jobs tried.
fn replay(w: &Workload, policy: Policy, queue: Queue, kill_at_limit: bool, index: bool) -> (Outcome, u64) {
    let mut config = default_engine(w, policy);
    match queue {
        Queue::Greedy => {}
        Queue::Reserve => reserve(&mut config, false, BACKFILL_RESERVE_CYCLES),
        Queue::Backfill => reserve(&mut config, true, BACKFILL_RESERVE_CYCLES),
    }
    let mut e = Engine::new(config);
    e.apply(Time(0), &Event::Setting(Setting::AskIndex(index))).expect("set");
    let opts = SimOptions { kill_at_limit, ..SimOptions::default() };
    let out = run(&mut e, w, &opts, &|_, _| serde_json::Value::Null, &mut |_| {});
    (out, e.tries())
}

fn machine(jobs: Vec<WorkloadJob>, nodes: u64, per_node: u64) -> Workload {
    let procs = nodes * per_node;
    Workload {
        jobs,
        skipped: Vec::new(),
        actions: Vec::new(),
        machine: Machine { max_procs: Some(procs), max_nodes: Some(nodes), ..Machine::default() },
    }
}

/// Four one-slot hosts: a long job holds one, a 4-slot job reserves the
/// other three until the long job's limit, and 200 4-slot jobs with no
/// run limit wait behind it (none can start, reserve or backfill).
/// One-slot jobs with a short limit, submitted every 5 minutes behind
/// them by the same user, each backfill at once: trying every job in turn
/// tries the 200 first each time, while visiting the asks that may
/// succeed tries the reserving job and the short one. Under FCFS, and
/// under fairshare, where the 200 and the short jobs are one account's.
#[test]
fn short_jobs_behind_two_hundred_backfill_without_trying_them() {
    let mut jobs = vec![wjob(1, "long", 0, 1, 10_000, Some(10_000)), wjob(2, "wide", 10, 4, 100, Some(100))];
    jobs.extend((3..203).map(|n| wjob(n, "many", 20, 4, 100, None)));
    jobs.extend((0..20).map(|k| wjob(203 + k, "many", 30 + 300 * k, 1, 60, Some(120))));
    let w = machine(jobs, 4, 1);
    for policy in [Policy::Fcfs, Policy::Fairshare] {
        let (walked, tries) = replay(&w, policy, Queue::Backfill, false, true);
        let (every, all_tries) = replay(&w, policy, Queue::Backfill, false, false);
        assert_eq!(walked.records, every.records);
        assert_eq!(walked.passes, every.passes);
        for k in 0..20 {
            let short = walked.records.iter().find(|r| r.id == 203 + k).expect("a short job ran");
            assert_eq!(short.start, 30 + 300 * k, "{policy:?}: backfilled at its submission");
        }
        // The holders are tried in every pass, in both (passes at each
        // expiry, submission and end).
        assert!(all_tries > 20 * 200, "{policy:?}: {all_tries}");
        assert!(tries * 10 < all_tries, "{policy:?}: {tries} of {all_tries}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any workload decides the same, under FCFS or fairshare, whether a
    /// pass visits only the asks that may succeed or every job; jobs with
    /// a run time estimate (which a failure of another tells nothing of)
    /// among them.
    #[test]
    fn visiting_the_asks_that_may_succeed_decides_as_visiting_every_job(
        nodes in 1u64..7,
        per_node in 1u64..3,
        // User, submission, slots (a share of the machine), run time,
        // run limit (none, or the run time times 1 to 3), an estimate.
        specs in prop::collection::vec(
            (0u8..3, 0u64..4_000, 0.0f64..1.0, 30u64..2_000, 0u8..4, any::<bool>()),
            1..40,
        ),
        queue in prop_oneof![Just(Queue::Greedy), Just(Queue::Reserve), Just(Queue::Backfill)],
        fairshare in any::<bool>(),
        kill_at_limit in any::<bool>(),
    ) {
        let procs = nodes * per_node;
        let mut jobs: Vec<WorkloadJob> = specs
            .iter()
            .enumerate()
            .map(|(i, &(u, at, share, runtime, limit, estimate))| {
                let slots = ((procs as f64 * share).ceil() as u32).max(1);
                let limit = (limit > 0).then(|| runtime * u64::from(limit));
                let mut j = wjob(i as u64 + 1, ["u0", "u1", "u2"][usize::from(u)], at, slots, runtime, limit);
                j.submission.estimated_run_time = estimate.then_some(runtime);
                j
            })
            .collect();
        jobs.sort_by_key(|j| (j.submit, j.id));
        let w = machine(jobs, nodes, per_node);
        let policy = if fairshare { Policy::Fairshare } else { Policy::Fcfs };
        let (walked, tries) = replay(&w, policy, queue, kill_at_limit, true);
        let (every, all_tries) = replay(&w, policy, queue, kill_at_limit, false);
        prop_assert_eq!(&walked.records, &every.records);
        prop_assert_eq!(&walked.never_started, &every.never_started);
        prop_assert_eq!(walked.passes, every.passes);
        prop_assert!(tries <= all_tries, "{} > {}", tries, all_tries);
    }
}
