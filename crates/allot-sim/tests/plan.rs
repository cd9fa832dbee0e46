//! Planned reservation (`allot_engine`'s `plan` module): LSF's time-based
//! slot reservation (LSB_TIME_RESERVE_NUMJOBS) and its allocation planner
//! (ALLOCATION_PLANNER, PLAN), driven from configuration text.

use allot_engine::{Engine, Time};
use allot_sim::testing::engine_from;

mod common;

use common::*;

/// Two hosts of 4 slots.
const EIGHT: &str = "Begin Host\nHOST_NAME MXJ\nhostA 4\nhostB 4\nEnd Host\n";

/// The queue `normal` reserving for parallel jobs (MAX_RESERVE_TIME in
/// cycles) and backfilling, planned by LSB_TIME_RESERVE_NUMJOBS=`n`
/// (greedy without).
fn time_based(n: Option<u32>, cycles: u32) -> Engine {
    let q = queue("normal", 30, &format!("SLOT_RESERVE = MAX_RESERVE_TIME[{cycles}]\nBACKFILL = Y"));
    let conf = n.map(|n| format!("LSB_TIME_RESERVE_NUMJOBS={n}\n")).unwrap_or_default();
    engine_from(&[("lsb.hosts", EIGHT), ("lsb.queues", &q), ("lsf.conf", &conf)])
}

/// The queue `normal` under the allocation planner with `plan` as its
/// PLAN (SLOT_RESERVE with one cycle, which the planner ignores).
fn planner(plan: &str) -> Engine {
    let q = queue("normal", 30, &format!("PLAN = {plan}\nSLOT_RESERVE = MAX_RESERVE_TIME[1]\nBACKFILL = Y"));
    let params = "Begin Parameters\nALLOCATION_PLANNER = Y\nEnd Parameters\n";
    engine_from(&[("lsb.hosts", EIGHT), ("lsb.queues", &q), ("lsb.params", params)])
}

/// At 0:00 a job of 4 slots ending by 1:00 fills hostA and a job of 1
/// slot ending by 10:00 runs on hostB: 3 slots are free.
fn running(e: &mut Engine) {
    let a = submit(e, Time(0), job("normal", 4, Some(60), None));
    let b = submit(e, Time(0), job("normal", 1, Some(600), None));
    assert_eq!(pass(e, Time(0)), [a.0, b.0]);
}

/// A job of 6 slots needs the 4 that come back at 1:00 and 2 of the 3
/// free now: its plan holds those 2 and leaves the third free, where a job
/// with no run limit (which may not backfill) starts at once without
/// delaying it. Greedy reservation holds all 3.
#[test]
fn a_plan_holds_only_the_free_slots_its_start_needs() {
    for (n, held) in [(Some(1), 2), (None, 3)] {
        let mut e = time_based(n, 1000);
        running(&mut e);
        let big = submit(&mut e, Time(0), job("normal", 6, None, None));
        assert_eq!(pass(&mut e, Time(0)), Vec::<u64>::new());
        assert_eq!(reserved_slots(&e, big), held, "{n:?}");
        assert_eq!(e.predicted_start(big, Time(0)), Some(hm(1, 0)));

        let long = submit(&mut e, hm(0, 10), job("normal", 1, None, None));
        let started = pass(&mut e, hm(0, 10));
        match n {
            Some(_) => assert_eq!(started, [long.0], "the slot its plan does not need is free to all"),
            None => assert_eq!(started, Vec::<u64>::new(), "greedy reservation holds it"),
        }
        assert_eq!(e.predicted_start(big, hm(0, 10)), Some(hm(1, 0)), "{n:?}: its start stays");
        assert_eq!(reserved_slots(&e, big), held, "{n:?}: the next pass plans the same");
        assert_eq!(pass(&mut e, hm(1, 0))[0], big.0, "{n:?}: it starts when the 4 come back");
    }
}

/// A job waiting for a running job with no run limit has no predicted
/// start, so no plan: it holds nothing, and the free slots stay free.
/// Greedy reservation holds them for nothing.
#[test]
fn no_plan_without_a_predicted_start() {
    for (n, held) in [(Some(1), 0), (None, 3)] {
        let mut e = time_based(n, 1000);
        let a = submit(&mut e, Time(0), job("normal", 5, None, None));
        assert_eq!(pass(&mut e, Time(0)), [a.0]);
        let big = submit(&mut e, Time(0), job("normal", 6, None, None));
        assert_eq!(pass(&mut e, Time(0)), Vec::<u64>::new());
        assert_eq!(e.predicted_start(big, Time(0)), None);
        assert_eq!(reserved_slots(&e, big), held, "{n:?}");
        let small = submit(&mut e, hm(0, 10), job("normal", 2, None, None));
        assert_eq!(pass(&mut e, hm(0, 10)).contains(&small.0), n.is_some(), "{n:?}");
    }
}

/// LSB_TIME_RESERVE_NUMJOBS, the cluster's and a queue's PLAN =
/// MAX_JOBS[n]: at most so many jobs hold a plan. The second job of 5
/// slots needs one more of what is free by 1:00.
#[test]
fn at_most_max_jobs_jobs_plan() {
    let cluster = |n: u32| {
        let q = queue("normal", 30, "PLAN = Y\nBACKFILL = Y");
        let params = format!("Begin Parameters\nALLOCATION_PLANNER = Y\nPLAN = MAX_JOBS[{n}]\nEnd Parameters\n");
        engine_from(&[("lsb.hosts", EIGHT), ("lsb.queues", &q), ("lsb.params", &params)])
    };
    let cases: [(&str, Engine, u32); 6] = [
        ("LSB_TIME_RESERVE_NUMJOBS=1", time_based(Some(1), 1000), 0),
        ("LSB_TIME_RESERVE_NUMJOBS=2", time_based(Some(2), 1000), 1),
        ("queue MAX_JOBS[1]", planner("MAX_JOBS[1]"), 0),
        ("queue MAX_JOBS[2]", planner("MAX_JOBS[2]"), 1),
        ("cluster MAX_JOBS[1]", cluster(1), 0),
        ("cluster MAX_JOBS[2]", cluster(2), 1),
    ];
    for (what, mut e, second) in cases {
        running(&mut e);
        let big = submit(&mut e, Time(0), job("normal", 6, None, None));
        let next = submit(&mut e, Time(0), job("normal", 5, None, None));
        assert_eq!(pass(&mut e, Time(0)), Vec::<u64>::new());
        assert_eq!((reserved_slots(&e, big), reserved_slots(&e, next)), (2, second), "{what}");
        // Once the first starts, the second may plan.
        assert_eq!(pass(&mut e, hm(1, 0)), [big.0], "{what}");
        assert!(e.reservation(next).is_none() || reserved_slots(&e, next) <= 2, "{what}");
    }
}

/// Time-based reservation keeps MAX_RESERVE_TIME: the plan is given up
/// at the first pass after one cycle, and made again at the pass after.
/// Under the planner the queue's SLOT_RESERVE is ignored, and the plan
/// stands until its job starts.
#[test]
fn a_planned_allocation_has_no_reservation_time() {
    let mut timed = time_based(Some(1), 1);
    let mut planned = planner("Y");
    for e in [&mut timed, &mut planned] {
        running(e);
        let big = submit(e, Time(0), job("normal", 6, None, None));
        pass(e, Time(0));
        assert_eq!(reserved_slots(e, big), 2);
    }
    let (t1, t2) = (hm(0, 1), hm(0, 2));
    let big = allot_engine::JobId(3);
    pass(&mut timed, t1);
    assert_eq!(reserved_slots(&timed, big), 0, "MAX_RESERVE_TIME[1] ran out");
    pass(&mut timed, t2);
    assert_eq!(reserved_slots(&timed, big), 2, "planned again after the cycle");
    for t in [t1, t2, hm(0, 30)] {
        pass(&mut planned, t);
        assert_eq!(reserved_slots(&planned, big), 2, "at {t}");
    }
}

/// PLAN = DELAY[minutes]: a job plans once it has waited that long since
/// its submission, and the engine wakes then to let it.
#[test]
fn a_job_plans_after_the_delay() {
    let mut e = planner("DELAY[10]");
    running(&mut e);
    let big = submit(&mut e, hm(0, 5), job("normal", 6, None, None));
    assert_eq!(pass(&mut e, hm(0, 5)), Vec::<u64>::new());
    assert_eq!(reserved_slots(&e, big), 0, "pending 0 of its 10 minutes");
    pass(&mut e, hm(0, 10));
    assert_eq!(reserved_slots(&e, big), 0, "pending 5 of its 10 minutes");
    assert_eq!(e.next_wakeup(), Some(hm(0, 15)), "woken when it may plan");
    pass(&mut e, hm(0, 15));
    assert_eq!(reserved_slots(&e, big), 2);
}

/// Under the planner every job of a PLAN queue plans, sequential ones
/// too: here one waiting for memory, which SLOT_RESERVE would not reserve
/// for.
#[test]
fn the_planner_plans_sequential_jobs() {
    let q = queue("normal", 30, "PLAN = Y\nBACKFILL = Y");
    let params = "Begin Parameters\nALLOCATION_PLANNER = Y\nEnd Parameters\n";
    let mut e = engine_from(&[("lsf.cluster.c", ONE_GB), ("lsb.queues", &q), ("lsb.params", params)]);
    let first = submit(&mut e, Time(0), job("normal", 1, Some(60), Some("rusage[mem=800]")));
    let waits = submit(&mut e, Time(0), job("normal", 1, None, Some("rusage[mem=400]")));
    assert_eq!(pass(&mut e, Time(0)), [first.0]);
    assert!(e.reserved_memory(waits) > 0.0, "it holds the memory that is free");
    assert_eq!(e.predicted_start(waits, Time(0)), Some(hm(1, 0)));
}

/// A running job with a CPU limit and no run limit: where reservations
/// are planned, it is expected to end when its limit is used up on all
/// its processors (4 CPU hours on 4 slots: an hour), so the wide job has
/// a predicted start and plans; greedy reservation predicts none.
#[test]
fn a_cpu_limit_stands_in_for_a_run_limit_where_reservations_are_planned() {
    for (n, predicted) in [(Some(1), Some(hm(1, 0))), (None, None)] {
        let mut e = time_based(n, 1000);
        let spec = allot_engine::JobSpec { cpu_limit: Some(4 * 3600), ..job("normal", 4, None, None) };
        let a = submit(&mut e, Time(0), spec);
        assert_eq!(pass(&mut e, Time(0)), [a.0]);
        let big = submit(&mut e, Time(0), job("normal", 6, None, None));
        pass(&mut e, Time(0));
        assert_eq!(e.predicted_start(big, Time(0)), predicted, "{n:?}");
        // Planned: the 4 come back at 1:00, and 2 of the 4 free slots
        // are what the plan needs now.
        assert_eq!(reserved_slots(&e, big), if n.is_some() { 2 } else { 4 }, "{n:?}");
    }
}
