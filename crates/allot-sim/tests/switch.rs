//! `bswitch` of a running job (LSF's bswitch: "acceptable to the new
//! queue as if it were submitted to it, and ... if the host can be used by
//! the new queue"; "the decayed run time is switched"; "its nice value and
//! resource limits remain the same"), through the engine's events.

use allot_engine::shares::priority::PriorityInputs;
use allot_engine::shares::{Scope, ShareRow};
use allot_engine::{Engine, Event, JobId, JobSpec, Rejection, Time};
use allot_sim::testing::{engine_from, started};

const HOSTS: &str = "Begin Host\nHOST_NAME MXJ\nhostA 8\nhostB 8\nEnd Host\n";

fn queue(name: &str, extra: &str) -> String {
    format!(
        "Begin Queue\nQUEUE_NAME = {name}\nPRIORITY = 10\nFAIRSHARE = USER_SHARES[[default, 1]]\n{extra}\nEnd Queue\n"
    )
}

fn engine() -> Engine {
    let queues = queue("old", "RUNLIMIT = 30 60\nHOSTS = hostA")
        + &queue("new", "RUNLIMIT = 10 20")
        + &queue("far", "HOSTS = hostB");
    engine_from(&[("lsb.hosts", HOSTS), ("lsb.queues", &queues)])
}

fn job(queue: &str, slots: u32) -> JobSpec {
    JobSpec { user: "u1".into(), queue: Some(queue.into()), slots, ..JobSpec::default() }
}

/// u1's row in the share table of `queue`'s policy at `t`.
fn row(e: &Engine, queue: &str, t: u64) -> ShareRow {
    let policy = e
        .fairshare()
        .policies
        .iter()
        .find(|p| matches!(&p.scope, Scope::Queues(q) if q.iter().any(|n| n == queue)))
        .expect("the queue's policy");
    let tables = policy.tree.share_tables(Time(t), &PriorityInputs::default());
    tables.into_iter().flat_map(|t| t.rows).find(|r| r.name == "u1").expect("u1's row")
}

fn switch(e: &mut Engine, id: JobId, spec: &JobSpec, queue: &str, t: u64) -> Result<(), Rejection> {
    let spec = JobSpec { queue: Some(queue.into()), ..spec.clone() };
    e.apply(Time(t), &Event::Switch { job: id, spec }).map(|_| ())
}

#[test]
fn a_running_job_takes_its_slots_and_run_time_to_the_new_queue() {
    let mut e = engine();
    let spec = job("old", 2);
    let id = e.apply(Time(0), &Event::Submit(spec.clone())).expect("accepted").expect("an id");
    assert_eq!(started(&e.schedule(Time(0))), [id.0]);
    // Run time counts once per job (no RUN_TIME weighting by slots).
    assert_eq!((row(&e, "old", 600).started, row(&e, "old", 600).run_time), (2, 600.0));
    switch(&mut e, id, &spec, "new", 600).expect("switched");
    assert_eq!(e.job_queue(id), Some("new"));
    let (old, new) = (row(&e, "old", 900), row(&e, "new", 900));
    assert_eq!((old.started, old.run_time), (0, 0.0), "nothing of it stays in the old tree");
    assert_eq!((new.started, new.run_time), (2, 900.0), "its run from its start, in the new tree");
    assert_eq!(e.queue_load("old").map(|l| l.1.0), Some(0));
    assert_eq!(e.queue_load("new").map(|l| l.1.0), Some(2));
    // Its limit stays the old queue's default, 30 minutes (the new one's
    // is 10): killed at 1800 s, not 600.
    assert_eq!(e.job_run_limit(id), Some(1800));
    assert!(e.schedule(Time(1000)).is_empty());
    assert_eq!(
        e.schedule(Time(1800)),
        [allot_engine::Decision::Kill { job: id, reason: allot_engine::KillReason::RunLimit }]
    );
    // It ends in the new queue: its run time goes to the new tree's history.
    e.apply(Time(1800), &Event::Finish { job: id, cpu_time: 0.0, exit: 0 }).expect("ends");
    assert_eq!(row(&e, "new", 1800).started, 0);
    assert_eq!(e.queue_load("new").map(|l| l.1.0), Some(0));
}

#[test]
fn a_switch_the_new_queue_would_not_take_changes_nothing() {
    let mut e = engine();
    let spec = job("old", 1);
    let id = e.apply(Time(0), &Event::Submit(spec.clone())).expect("accepted").expect("an id");
    assert_eq!(started(&e.schedule(Time(0))), [id.0]);
    // hostA is not `far`'s.
    let err = switch(&mut e, id, &spec, "far", 10).expect_err("refused");
    assert_eq!(err.to_string(), "it runs on host `hostA`, which queue `far` does not use");
    // -W 40 minutes is over `new`'s RUNLIMIT maximum of 20.
    let long = JobSpec { run_limit: Some(2400), ..spec.clone() };
    let id2 = e.apply(Time(0), &Event::Submit(long.clone())).expect("accepted").expect("an id");
    assert_eq!(started(&e.schedule(Time(1))), [id2.0]);
    assert!(matches!(switch(&mut e, id2, &long, "new", 10), Err(Rejection::RunLimitTooLong { .. })));
    assert!(matches!(switch(&mut e, id, &spec, "nosuch", 10), Err(Rejection::NoSuchQueue(_))));
    // Where it was, as it was.
    assert_eq!(e.job_queue(id), Some("old"));
    assert_eq!((row(&e, "old", 60).started, e.queue_load("old").map(|l| l.1.0)), (2, Some(2)));
}
