//! Job control in the engine: holding and releasing pending jobs (`bstop`,
//! `bresume`), modifying and switching them (`bmod`, `bswitch`), and
//! requeuing running and finished jobs (`brequeue`).

use allot_engine::shares::NodeId;
use allot_engine::{Decision, Engine, Event, JobId, JobSpec, PendingReason, Rejection, Time};
use allot_sim::testing::{engine_config_from, engine_from};

const HOSTS: &str = "Begin Host\nHOST_NAME MXJ\nh1 2\nEnd Host\n";
const QUEUES: &str = "Begin Queue\nQUEUE_NAME = q\nPRIORITY = 10\nFAIRSHARE = USER_SHARES[[default, 1]]\nEnd Queue\n\
                      Begin Queue\nQUEUE_NAME = other\nPRIORITY = 5\nUSERS = a\nEnd Queue\n";

fn engine() -> Engine {
    engine_from(&[("lsb.hosts", HOSTS), ("lsb.queues", QUEUES)])
}

fn spec(user: &str, queue: &str, slots: u32) -> JobSpec {
    JobSpec { user: user.into(), queue: Some(queue.into()), slots, ..JobSpec::default() }
}

fn submit(e: &mut Engine, user: &str, slots: u32) -> JobId {
    e.apply(Time(0), &Event::Submit(spec(user, "q", slots))).expect("accepted").expect("id")
}

fn started(decisions: &[Decision]) -> Vec<u64> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Start { job, .. } => Some(job.0),
            Decision::Kill { .. } => None,
        })
        .collect()
}

/// (pending, running slots, held) of queue `q`.
fn load(e: &Engine, name: &str) -> (u32, u32, u32) {
    e.queues().find(|q| q.0.name == name).map(|(_, p, u, h)| (p, u, h)).expect("queue")
}

#[test]
fn a_held_job_waits_until_released_and_others_go_ahead() {
    let mut e = engine();
    let first = submit(&mut e, "a", 2);
    let second = submit(&mut e, "a", 2);
    e.apply(Time(1), &Event::Hold(first)).expect("pending");
    assert_eq!(load(&e, "q"), (1, 0, 1));
    assert_eq!(e.pending_reason(first, Time(1)), Some(PendingReason::Held));
    assert!(e.is_held(first));
    assert_eq!(started(&e.schedule(Time(1))), vec![second.0], "the held job is passed over");
    e.apply(Time(2), &Event::Finish { job: second, cpu_time: 0.0 }).expect("ends");
    assert_eq!(started(&e.schedule(Time(2))), Vec::<u64>::new(), "still held with every slot free");
    e.apply(Time(3), &Event::Release(first)).expect("held");
    assert!(!e.is_held(first));
    assert_eq!(load(&e, "q"), (1, 0, 0));
    assert_eq!(started(&e.schedule(Time(3))), vec![first.0]);
}

#[test]
fn only_pending_jobs_are_held() {
    let mut e = engine();
    let job = submit(&mut e, "a", 1);
    e.schedule(Time(0));
    assert_eq!(e.apply(Time(1), &Event::Hold(job)), Err(Rejection::NotPending(job)));
    assert_eq!(e.apply(Time(1), &Event::Hold(JobId(99))), Err(Rejection::NoSuchJob(JobId(99))));
    assert!(e.is_running(job));
}

#[test]
fn a_held_job_removed_leaves_no_count_behind() {
    let mut e = engine();
    let job = submit(&mut e, "a", 1);
    e.apply(Time(1), &Event::Hold(job)).expect("pending");
    e.apply(Time(2), &Event::Finish { job, cpu_time: 0.0 }).expect("removed");
    assert_eq!(load(&e, "q"), (0, 0, 0));
    assert_eq!(e.job_count(), 0);
}

#[test]
fn modify_changes_a_pending_job_and_keeps_its_id_and_hold() {
    let mut e = engine();
    let blocker = submit(&mut e, "a", 2);
    e.schedule(Time(0));
    let job = submit(&mut e, "a", 1);
    e.apply(Time(1), &Event::Hold(job)).expect("pending");
    e.apply(Time(2), &Event::Modify { job, spec: spec("a", "other", 2) }).expect("valid");
    assert_eq!(e.job_queue(job), Some("other"));
    assert!(e.is_held(job), "bmod keeps the hold");
    assert_eq!(load(&e, "q"), (0, 2, 0));
    assert_eq!(load(&e, "other"), (0, 0, 1));
    e.apply(Time(3), &Event::Release(job)).expect("held");
    e.apply(Time(4), &Event::Finish { job: blocker, cpu_time: 0.0 }).expect("ends");
    let starts = e.schedule(Time(4));
    assert_eq!(starts, vec![Decision::Start { job, alloc: vec![(0, 2)] }], "it runs with its new -n");
}

#[test]
fn a_refused_modification_changes_nothing() {
    let mut e = engine();
    let job = submit(&mut e, "b", 1);
    // `other` admits only user a.
    let refused = e.apply(Time(1), &Event::Modify { job, spec: spec("b", "other", 1) });
    assert!(matches!(refused, Err(Rejection::UserNotAllowed { .. })), "{refused:?}");
    assert_eq!(
        e.apply(Time(1), &Event::Modify { job, spec: spec("b", "q", 3) }),
        Err(Rejection::TooManySlots { slots: 3, queue: "q".into(), available: 2 })
    );
    assert_eq!(e.job_queue(job), Some("q"));
    assert_eq!(load(&e, "q"), (1, 0, 0));
    assert_eq!(started(&e.schedule(Time(2))), vec![job.0], "still dispatched as before");
    assert_eq!(
        e.apply(Time(3), &Event::Modify { job, spec: spec("b", "q", 2) }),
        Err(Rejection::NotPending(job)),
        "a running job is not modified"
    );
}

#[test]
fn requeue_frees_the_slots_charges_the_run_and_keeps_the_jobs_place() {
    let mut e = engine();
    let first = submit(&mut e, "a", 2);
    assert_eq!(started(&e.schedule(Time(0))), vec![first.0]);
    let later = submit(&mut e, "a", 2);
    e.apply(Time(100), &Event::Requeue { job: first, cpu_time: 50.0, hold: false }).expect("running");
    assert!(e.is_pending(first));
    assert_eq!(load(&e, "q"), (2, 0, 0));
    let tree = &e.fairshare().policies[0].tree;
    let a = tree.child(NodeId::ROOT, "a").expect("a");
    let u = tree.usage(a, Time(100));
    assert_eq!(u.started, 0, "the run ended");
    assert!((u.cpu_time - 50.0).abs() < 1e-9 && u.run_time == 0.0, "its CPU time is charged, its run over: {u:?}");
    assert_eq!(started(&e.schedule(Time(100))), vec![first.0], "it goes ahead of the later job");
    assert!(e.is_pending(later));
}

#[test]
fn requeue_held_and_of_jobs_not_running() {
    let mut e = engine();
    let job = submit(&mut e, "a", 1);
    assert_eq!(e.apply(Time(0), &Event::Requeue { job, cpu_time: 0.0, hold: false }), Err(Rejection::NotRunning(job)));
    e.schedule(Time(0));
    e.apply(Time(5), &Event::Requeue { job, cpu_time: 0.0, hold: true }).expect("running");
    assert!(e.is_held(job));
    assert_eq!(started(&e.schedule(Time(5))), Vec::<u64>::new());
}

#[test]
fn resubmit_brings_a_finished_job_back_with_its_id() {
    let mut e = engine();
    let old = submit(&mut e, "a", 1);
    let newer = submit(&mut e, "a", 1);
    e.schedule(Time(0));
    e.apply(Time(1), &Event::Finish { job: old, cpu_time: 0.0 }).expect("ends");
    e.apply(Time(1), &Event::Finish { job: newer, cpu_time: 0.0 }).expect("ends");
    assert_eq!(e.job_count(), 0);
    e.apply(Time(2), &Event::Resubmit { job: old, spec: spec("a", "q", 1), hold: false }).expect("finished");
    assert!(e.is_pending(old));
    assert_eq!(
        e.apply(Time(2), &Event::Resubmit { job: old, spec: spec("a", "q", 1), hold: false }),
        Err(Rejection::NotFinished(old))
    );
    assert_eq!(
        e.apply(Time(2), &Event::Resubmit { job: JobId(3), spec: spec("a", "q", 1), hold: false }),
        Err(Rejection::NoSuchJob(JobId(3))),
        "an id never given"
    );
    let next = submit(&mut e, "a", 1);
    assert_eq!(next, JobId(3), "ids go on from the last one given");
    assert_eq!(started(&e.schedule(Time(2))), vec![old.0, next.0]);
}

#[test]
fn a_hold_survives_a_reconfiguration() {
    let mut e = engine();
    let job = submit(&mut e, "a", 1);
    e.apply(Time(1), &Event::Hold(job)).expect("pending");
    e.reconfigure(Time(2), engine_config_from(&[("lsb.hosts", HOSTS), ("lsb.queues", QUEUES)])).expect("valid");
    assert!(e.is_held(job));
    assert_eq!(load(&e, "q"), (0, 0, 1));
    assert_eq!(started(&e.schedule(Time(2))), Vec::<u64>::new());
}
