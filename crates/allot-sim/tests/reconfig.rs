//! Reconfiguration keeps every job and the usage history.

use allot_engine::shares::NodeId;
use allot_engine::shares::priority::PriorityInputs;
use allot_engine::{Decision, Engine, Event, JobId, JobSpec, PendingReason, ReconfigError, Rejection, Slots, Time};
use allot_sim::testing::{engine_config_from, engine_from};

const HOSTS: &str = "Begin Host\nHOST_NAME MXJ\nh1 1\nh2 1\nEnd Host\n";

fn queues(shares: &str, extra_queue: &str) -> String {
    format!("Begin Queue\nQUEUE_NAME = q\nPRIORITY = 10\nFAIRSHARE = USER_SHARES[{shares}]\nEnd Queue\n{extra_queue}")
}

fn submit(e: &mut Engine, user: &str) -> JobId {
    let spec = JobSpec { user: user.into(), queue: Some("q".into()), slots: 1, ..JobSpec::default() };
    e.apply(Time(0), &Event::Submit(spec)).expect("accepted").expect("id")
}

#[test]
fn jobs_and_usage_survive_a_reconfiguration() {
    let q1 = queues("[a, 1] [b, 1]", "");
    let mut e = engine_from(&[("lsb.hosts", HOSTS), ("lsb.queues", &q1)]);
    let a1 = submit(&mut e, "a");
    let b1 = submit(&mut e, "b");
    let a2 = submit(&mut e, "a");
    e.schedule(Time(0));
    e.apply(Time(10), &Event::Cpu { job: a1, seconds: 3600.0 }).expect("cpu");
    // A new queue, and b gets more shares.
    let q2 = queues("[a, 1] [b, 5]", "Begin Queue\nQUEUE_NAME = other\nPRIORITY = 5\nEnd Queue\n");
    e.apply(Time(100), &Event::Reconfigure(Box::new(engine_config_from(&[("lsb.hosts", HOSTS), ("lsb.queues", &q2)]))))
        .expect("valid");
    assert!(e.is_running(a1) && e.is_running(b1) && e.is_pending(a2));
    assert_eq!(e.queue_load("q"), Some((1, Slots(2))));
    assert_eq!(e.queue_load("other"), Some((0, Slots(0))));
    let tree = &e.fairshare().policies[0].tree;
    let a = tree.child(NodeId::ROOT, "a").expect("a");
    let u = tree.usage(a, Time(100));
    assert_eq!(u.started, 1, "a's running job is charged again");
    assert!((u.run_time - 100.0).abs() < 1e-9, "from its own start: {}", u.run_time);
    assert!(u.cpu_time > 3500.0, "CPU history carried over: {}", u.cpu_time);
    let b = tree.child(NodeId::ROOT, "b").expect("b");
    assert_eq!(tree.shares(b), 5);
    // The jobs end as usual, and the pending one starts.
    e.apply(Time(200), &Event::Finish { job: a1, cpu_time: 3600.0, exit: 0 }).expect("finish");
    assert_eq!(
        e.schedule(Time(200)),
        [Decision::Start { job: a2, alloc: vec![(allot_engine::HostIdx(0), allot_engine::Slots(1))] }]
    );
    let inputs = PriorityInputs::default();
    assert!(e.fairshare().policies[0].tree.priority(a, Time(200), &inputs).is_finite());
}

#[test]
fn removing_a_queue_that_holds_jobs_is_refused_and_changes_nothing() {
    let q1 = queues("[a, 1]", "Begin Queue\nQUEUE_NAME = other\nEnd Queue\n");
    let mut e = engine_from(&[("lsb.hosts", HOSTS), ("lsb.queues", &q1)]);
    let spec = JobSpec { user: "a".into(), queue: Some("other".into()), slots: 1, ..JobSpec::default() };
    let j = e.submit(&spec).expect("accepted");
    let without = queues("[a, 1]", "");
    let err = e.apply(
        Time(1),
        &Event::Reconfigure(Box::new(engine_config_from(&[("lsb.hosts", HOSTS), ("lsb.queues", &without)]))),
    );
    assert_eq!(err, Err(Rejection::Reconfig(ReconfigError::QueueInUse { queue: "other".into(), jobs: 1 })));
    assert!(e.is_pending(j));
    assert_eq!(e.queue_load("other"), Some((1, Slots(0))));
}

#[test]
fn a_user_who_loses_their_shares_keeps_their_pending_job() {
    let q1 = queues("[a, 1] [b, 1]", "");
    let mut e = engine_from(&[("lsb.hosts", HOSTS), ("lsb.queues", &q1)]);
    let b = submit(&mut e, "b");
    let q2 = queues("[a, 1]", "");
    e.apply(Time(1), &Event::Reconfigure(Box::new(engine_config_from(&[("lsb.hosts", HOSTS), ("lsb.queues", &q2)]))))
        .expect("valid");
    assert!(e.schedule(Time(1)).is_empty());
    assert_eq!(e.pending_reason(b, Time(1)), Some(PendingReason::NoShares));
    e.apply(Time(2), &Event::Reconfigure(Box::new(engine_config_from(&[("lsb.hosts", HOSTS), ("lsb.queues", &q1)]))))
        .expect("valid");
    assert_eq!(e.schedule(Time(2)).len(), 1, "shares back: the job starts");
}

/// What the engine waits for carries over a reconfiguration: a job that
/// may begin at 100 (`bsub -b`) still gets a pass then, and starts.
#[test]
fn a_begin_time_still_wakes_the_engine_after_a_reconfiguration() {
    let q = queues("[a, 1]", "");
    let mut e = engine_from(&[("lsb.hosts", HOSTS), ("lsb.queues", &q)]);
    let spec =
        JobSpec { user: "a".into(), queue: Some("q".into()), slots: 1, begin_time: Some(100), ..JobSpec::default() };
    let job = e.apply(Time(0), &Event::Submit(spec)).expect("accepted").expect("id");
    assert!(e.schedule(Time(0)).is_empty(), "not before its begin time");
    e.apply(Time(10), &Event::Reconfigure(Box::new(engine_config_from(&[("lsb.hosts", HOSTS), ("lsb.queues", &q)]))))
        .expect("valid");
    e.schedule(Time(10));
    assert_eq!(e.next_wakeup(), Some(Time(100)), "its begin time is still due");
    assert!(matches!(e.schedule(Time(100))[..], [Decision::Start { job: j, .. }] if j == job));
}
