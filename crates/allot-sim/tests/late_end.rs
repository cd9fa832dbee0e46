//! A run's end heard late (allot_engine's `run_end`): its host was cut
//! off or allotd was down when it ended, so its `Finish` comes after the
//! engine went on. `RanUntil` before it says when the run really ended,
//! and the job's share account is charged until then: what it holds is
//! what it would hold had the end been heard at once.

mod common;

use allot_engine::shares::NodeId;
use allot_engine::{Engine, Event, Time};
use allot_sim::testing::engine_from;
use common::*;

/// One 4-slot host under fairshare that counts historical run time
/// (ENABLE_HIST_RUN_TIME) with a one-hour decay (HIST_HOURS = 1,
/// so that the decay between the real end and the end heard shows).
fn fairshare_engine() -> Engine {
    let q = queue("normal", 30, "FAIRSHARE = USER_SHARES[[default, 1]]");
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 4\nEnd Host\n";
    let params = "Begin Parameters\nHIST_HOURS = 1\nENABLE_HIST_RUN_TIME = Y\nEnd Parameters\n";
    engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &q), ("lsb.params", params)])
}

/// u's historical run time at `at`, after one 2-slot job that started at
/// 0, ran until 100, and whose end was heard at `heard` (with its real
/// end said, or not).
fn charged(heard: u64, said: bool, at: u64) -> f64 {
    let mut e = fairshare_engine();
    let id = submit(&mut e, Time(0), job("normal", 2, None, None));
    assert_eq!(pass(&mut e, Time(0)), [id.0]);
    if said {
        e.apply(Time(heard), &Event::RanUntil { job: id, at: Time(100) }).expect("applied");
    }
    end(&mut e, Time(heard), id);
    let tree = &e.fairshare().policies[0].tree;
    let u = tree.child(NodeId::ROOT, "u").expect("u");
    let usage = tree.usage(u, Time(at));
    assert_eq!((usage.started, usage.run_time), (0, 0.0), "ended: nothing runs");
    usage.hist_run_time
}

#[test]
fn an_end_heard_late_is_charged_until_the_run_really_ended() {
    let at_once = charged(100, false, 5_000);
    // 100 s of run time, decayed over the 4,900 s since.
    assert!(at_once > 0.0 && at_once < 100.0, "{at_once}");
    let late = charged(3_700, true, 5_000);
    assert!((late - at_once).abs() < 1e-9 * at_once.max(1.0), "heard an hour late, said: {late} against {at_once}");
    let unsaid = charged(3_700, false, 5_000);
    assert!(unsaid > 10.0 * at_once, "heard an hour late and not said, charged for the hour: {unsaid}");
}

#[test]
fn a_real_end_is_never_before_the_start_nor_for_a_job_not_running() {
    // Said before it started: charged from its start, nothing.
    let mut e = fairshare_engine();
    let id = submit(&mut e, Time(0), job("normal", 1, None, None));
    assert_eq!(pass(&mut e, Time(50)), [id.0]);
    e.apply(Time(80), &Event::RanUntil { job: id, at: Time(10) }).expect("applied");
    end(&mut e, Time(80), id);
    let tree = &e.fairshare().policies[0].tree;
    let u = tree.child(NodeId::ROOT, "u").expect("u");
    assert_eq!(tree.usage(u, Time(80)).hist_run_time, 0.0);
    // Said of a pending job: forgotten, its next run charged in full.
    let mut e = fairshare_engine();
    let blocker = submit(&mut e, Time(0), job("normal", 4, None, None));
    let waits = submit(&mut e, Time(0), job("normal", 1, None, None));
    assert_eq!(pass(&mut e, Time(0)), [blocker.0]);
    e.apply(Time(10), &Event::RanUntil { job: waits, at: Time(5) }).expect("applied");
    end(&mut e, Time(20), blocker);
    assert_eq!(pass(&mut e, Time(20)), [waits.0]);
    end(&mut e, Time(120), waits);
    let tree = &e.fairshare().policies[0].tree;
    let u = tree.child(NodeId::ROOT, "u").expect("u");
    let whole = tree.usage(u, Time(120)).hist_run_time;
    // Run time counts once per job (its slots weigh in only under
    // LSB_NCPU_ENFORCE): 20 s and 100 s, a little decayed.
    assert!(whole > 115.0 && whole <= 120.0, "both runs in full: {whole}");
}
