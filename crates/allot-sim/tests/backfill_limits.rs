//! Backfill against job slot limits (spec 004, "Job Slot Limits For
//! Parallel Jobs"): "job slots reserved by pending jobs also count against
//! all job slot limits. When backfilling occurs, the job slots used by
//! backfill jobs count against the job slot limits for the queues and
//! users, but not hosts or processors. This means when a pending job and a
//! running job occupy the same physical job slot on a host, both jobs
//! count towards the queue limit, but only the pending job counts towards
//! host limit."

use allot_engine::{Engine, Time};
use allot_sim::testing::engine_from;

mod common;

use common::*;

/// One host of 4 slots; job A (1 slot, 60 minutes) runs, job P (4 slots)
/// reserves the other 3 and is predicted to start when A ends; then two
/// 1-slot jobs of 10 minutes, B and C, each of which could backfill one of
/// P's reserved slots. Returns the engine and how many of B and C started.
fn backfills_under(limit: &str) -> (Engine, usize) {
    let q = queue("normal", 30, &format!("SLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y\n{limit}"));
    let mut e = engine_from(&[("lsb.hosts", FOUR_CPUS), ("lsb.queues", &q)]);
    let t = Time(0);
    let a = submit(&mut e, t, job("normal", 1, Some(60), None));
    assert_eq!(pass(&mut e, t), [a.0]);
    let p = submit(&mut e, t, job("normal", 4, Some(60), None));
    assert!(pass(&mut e, t).is_empty());
    assert_eq!(reserved_slots(&e, p), 3);
    let b = submit(&mut e, t, job("normal", 1, Some(10), None));
    let c = submit(&mut e, t, job("normal", 1, Some(10), None));
    let started = pass(&mut e, t);
    assert!(started.iter().all(|&j| j == b.0 || j == c.0), "{started:?}");
    (e, started.len())
}

#[test]
fn a_backfill_job_counts_against_the_queue_limit_with_the_slot_it_borrows() {
    // QJOB_LIMIT 5: A (1) + P's reserved 3 + B (1) = 5; C would make 6.
    let (_, n) = backfills_under("QJOB_LIMIT = 5");
    assert_eq!(n, 1, "B backfills, C is held by QJOB_LIMIT");
    // QJOB_LIMIT 6 lets both in.
    let (_, n) = backfills_under("QJOB_LIMIT = 6");
    assert_eq!(n, 2);
}

#[test]
fn a_backfill_job_counts_against_the_user_limit() {
    let (_, n) = backfills_under("UJOB_LIMIT = 5");
    assert_eq!(n, 1, "B backfills, C is held by UJOB_LIMIT");
}

#[test]
fn a_backfill_job_does_not_count_against_the_host_limit() {
    // The host's 4 slots are A's and P's reserved 3 ("only the pending job
    // counts towards host limit"): both backfill on P's slots.
    let (_, n) = backfills_under("");
    assert_eq!(n, 2);
}
