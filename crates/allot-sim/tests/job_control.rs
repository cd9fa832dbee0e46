//! Job control in the engine: holding and releasing pending jobs (`bstop`,
//! `bresume`), modifying and switching them (`bmod`, `bswitch`), and
//! requeuing running and finished jobs (`brequeue`).

use allot_engine::shares::NodeId;
use allot_engine::{Decision, Engine, Event, JobId, JobSpec, PendingReason, Rejection, Time};
use allot_sim::testing::{engine_config_from, engine_from, started};

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
    e.apply(Time(2), &Event::Finish { job: second, cpu_time: 0.0, exit: 0 }).expect("ends");
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
    e.apply(Time(2), &Event::Finish { job, cpu_time: 0.0, exit: 0 }).expect("removed");
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
    e.apply(Time(4), &Event::Finish { job: blocker, cpu_time: 0.0, exit: 0 }).expect("ends");
    let starts = e.schedule(Time(4));
    assert_eq!(
        starts,
        vec![Decision::Start { job, alloc: vec![(allot_engine::HostIdx(0), allot_engine::Slots(2))] }],
        "it runs with its new -n"
    );
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
    e.apply(Time(1), &Event::Finish { job: old, cpu_time: 0.0, exit: 0 }).expect("ends");
    e.apply(Time(1), &Event::Finish { job: newer, cpu_time: 0.0, exit: 0 }).expect("ends");
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
    e.apply(
        Time(2),
        &Event::Reconfigure(Box::new(engine_config_from(&[("lsb.hosts", HOSTS), ("lsb.queues", QUEUES)]))),
    )
    .expect("valid");
    assert!(e.is_held(job));
    assert_eq!(load(&e, "q"), (0, 0, 1));
    assert_eq!(started(&e.schedule(Time(2))), Vec::<u64>::new());
}

use allot_engine::{CmpOp, DepKind, Dependency, JobSet};

fn on(kind: DepKind, jobs: &[JobId]) -> Dependency<JobSet> {
    Dependency::Cond { kind, target: JobSet::from_ids(jobs.iter().copied()) }
}

fn submit_after(e: &mut Engine, t: u64, dep: Dependency<JobSet>) -> Result<JobId, Rejection> {
    let spec = JobSpec { depends: Some(dep), ..spec("a", "q", 1) };
    e.apply(Time(t), &Event::Submit(spec)).map(|id| id.expect("id"))
}

fn finish(e: &mut Engine, t: u64, job: JobId, exit: i32) {
    e.apply(Time(t), &Event::Finish { job, cpu_time: 0.0, exit }).expect("ends");
}

#[test]
fn done_waits_for_a_zero_exit_and_exit_for_another() {
    let mut e = engine();
    let a = submit(&mut e, "a", 1);
    let after_done = submit_after(&mut e, 0, on(DepKind::Done, &[a])).expect("a exists");
    let after_exit = submit_after(&mut e, 0, on(DepKind::Exit(None), &[a])).expect("a exists");
    assert_eq!(started(&e.schedule(Time(0))), vec![a.0], "both wait although a slot is free");
    assert_eq!(e.pending_reason(after_done, Time(0)), Some(PendingReason::Dependency));
    assert_eq!(load(&e, "q"), (0, 1, 2), "waiting jobs are not dispatchable");
    finish(&mut e, 5, a, 0);
    assert_eq!(started(&e.schedule(Time(5))), vec![after_done.0]);
    assert_eq!(e.pending_reason(after_exit, Time(5)), Some(PendingReason::DependencyNever), "a is DONE for good");
}

#[test]
fn exit_codes_compare_and_started_releases_at_the_next_pass() {
    let mut e = engine();
    let a = submit(&mut e, "a", 1);
    let when_started = submit_after(&mut e, 0, on(DepKind::Started, &[a])).expect("ok");
    let above_two = submit_after(&mut e, 0, on(DepKind::Exit(Some((CmpOp::Gt, 2))), &[a])).expect("ok");
    assert_eq!(started(&e.schedule(Time(0))), vec![a.0]);
    assert_eq!(started(&e.schedule(Time(1))), vec![when_started.0], "a has started");
    finish(&mut e, 2, a, 3);
    assert_eq!(started(&e.schedule(Time(2))), vec![above_two.0], "3 > 2");
}

#[test]
fn not_and_or_and_every_job_of_a_name() {
    let mut e = engine();
    let a = submit(&mut e, "a", 1);
    let b = submit(&mut e, "a", 1);
    e.apply(Time(0), &Event::Hold(a)).expect("pending");
    e.apply(Time(0), &Event::Hold(b)).expect("pending");
    let not_done = submit_after(&mut e, 0, Dependency::Not(Box::new(on(DepKind::Done, &[a])))).expect("ok");
    let both = submit_after(&mut e, 0, on(DepKind::Ended, &[a, b])).expect("ok");
    let either = submit_after(
        &mut e,
        0,
        Dependency::Or(vec![on(DepKind::Ended, &[a]), Dependency::And(vec![on(DepKind::Ended, &[b])])]),
    )
    .expect("ok");
    assert_eq!(started(&e.schedule(Time(0))), vec![not_done.0], "a is not done");
    finish(&mut e, 1, a, 1);
    assert_eq!(started(&e.schedule(Time(1))), vec![either.0], "one of two names ended: not `both` yet");
    assert_eq!(e.pending_reason(both, Time(1)), Some(PendingReason::Dependency));
    finish(&mut e, 2, b, 0);
    finish(&mut e, 2, not_done, 0);
    finish(&mut e, 2, either, 0);
    assert_eq!(started(&e.schedule(Time(2))), vec![both.0]);
}

#[test]
fn a_job_the_cluster_never_had_is_refused() {
    let mut e = engine();
    let a = submit(&mut e, "a", 1);
    assert_eq!(submit_after(&mut e, 0, on(DepKind::Done, &[JobId(99)])), Err(Rejection::UnknownDependency(JobId(99))));
    assert_eq!(
        submit_after(&mut e, 0, Dependency::And(vec![on(DepKind::Done, &[a]), on(DepKind::Done, &[JobId(0)])])),
        Err(Rejection::UnknownDependency(JobId(0)))
    );
    assert_eq!(e.job_count(), 1, "nothing was added");
}

#[test]
fn a_requeued_job_makes_its_dependents_wait_again() {
    let mut e = engine();
    let a = submit(&mut e, "a", 1);
    e.schedule(Time(0));
    finish(&mut e, 1, a, 1);
    let after = submit_after(&mut e, 1, on(DepKind::Done, &[a])).expect("a ended, still known");
    assert_eq!(e.pending_reason(after, Time(1)), Some(PendingReason::DependencyNever));
    e.apply(Time(2), &Event::Resubmit { job: a, spec: spec("a", "q", 1), hold: false }).expect("finished");
    assert_eq!(started(&e.schedule(Time(2))), vec![a.0]);
    assert_eq!(e.pending_reason(after, Time(2)), Some(PendingReason::Dependency), "a may still end DONE");
    finish(&mut e, 3, a, 0);
    assert_eq!(started(&e.schedule(Time(3))), vec![after.0]);
}

#[test]
fn running_jobs_report_cpu_and_memory_as_they_go() {
    let mut e = engine();
    let a1 = submit(&mut e, "a", 1);
    let a2 = submit(&mut e, "a", 1);
    assert_eq!(started(&e.schedule(Time(0))), vec![a1.0, a2.0]);
    e.apply(Time(10), &Event::Memory { job: a1, mb: 300.0 }).expect("applies");
    e.apply(Time(10), &Event::Memory { job: a2, mb: 100.0 }).expect("applies");
    e.apply(Time(10), &Event::Cpu { job: a1, seconds: 8.0 }).expect("applies");
    let usage = |e: &Engine, t| {
        let tree = &e.fairshare().policies[0].tree;
        let a = tree.child(NodeId::ROOT, "a").expect("a");
        tree.usage(a, Time(t))
    };
    assert_eq!(usage(&e, 10).memory, 400.0, "the account holds both jobs' memory");
    assert!((usage(&e, 10).cpu_time - 8.0).abs() < 1e-6, "CPU charged while running");
    e.apply(Time(20), &Event::Memory { job: a1, mb: 200.0 }).expect("applies");
    e.apply(Time(20), &Event::Memory { job: a2, mb: f64::NAN }).expect("a bad sample counts as none");
    assert_eq!(usage(&e, 20).memory, 200.0, "a new sample replaces the job's old one");
    e.apply(Time(30), &Event::Finish { job: a1, cpu_time: 10.0, exit: 0 }).expect("ends");
    assert_eq!(usage(&e, 30).memory, 0.0, "an ended job holds none");
    // 8 s reported at 10 decay a little by 30 (HIST_HOURS 5): 9.98 in all.
    assert!((usage(&e, 30).cpu_time - 9.98).abs() < 0.005, "only the unreported 2 s are added at the end");
    e.apply(Time(30), &Event::Memory { job: a2, mb: 75.0 }).expect("applies");
    let same = engine_config_from(&[("lsb.hosts", HOSTS), ("lsb.queues", QUEUES)]);
    e.apply(Time(31), &Event::Reconfigure(Box::new(same))).expect("same configuration");
    assert_eq!(usage(&e, 31).memory, 75.0, "a running job's memory is kept across a reconfiguration");
    e.apply(Time(32), &Event::Memory { job: a2, mb: 50.0 }).expect("applies");
    assert_eq!(usage(&e, 32).memory, 50.0);
}

/// `bsub -b`: not dispatched before its begin time; a pass comes then.
#[test]
fn a_job_waits_for_its_begin_time() {
    let mut e = engine();
    let job = e
        .apply(Time(0), &Event::Submit(JobSpec { begin_time: Some(100), ..spec("a", "q", 1) }))
        .expect("accepted")
        .expect("id");
    assert_eq!(started(&e.schedule(Time(0))), Vec::<u64>::new());
    assert_eq!(e.pending_reason(job, Time(50)), Some(PendingReason::BeginTime));
    assert_eq!(
        e.pending_reason(job, Time(50)).map(|r| r.to_string()).as_deref(),
        Some("The job has a specified start time")
    );
    // Another job takes the slots meanwhile.
    let other = submit(&mut e, "b", 2);
    assert_eq!(started(&e.schedule(Time(1))), vec![other.0]);
    e.apply(Time(60), &Event::Finish { job: other, cpu_time: 0.0, exit: 0 }).expect("ends");
    assert_eq!(started(&e.schedule(Time(60))), Vec::<u64>::new(), "free, but not yet");
    assert_eq!(e.next_wakeup(), Some(Time(100)));
    assert_eq!(started(&e.schedule(Time(100))), vec![job.0]);
}
