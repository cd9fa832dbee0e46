//! Job groups in the engine (`bsub -g`, `bgadd -L`, `bgmod`, `bgdel`): a
//! group's job limit caps the jobs started under it and its subgroups,
//! per job, as LSF documents.

use allot_engine::job_groups::{JobGroupChange, JobGroupError};
use allot_engine::{Engine, EngineConfig, Event, JobId, JobSpec, PendingReason, Rejection, Time};
use allot_sim::testing::{engine_config_from, started};

const HOSTS: &str = "Begin Host\nHOST_NAME MXJ\nh1 16\nEnd Host\n";
const QUEUES: &str = "Begin Queue\nQUEUE_NAME = q\nPRIORITY = 10\nEnd Queue\n";

fn config() -> EngineConfig {
    engine_config_from(&[("lsb.hosts", HOSTS), ("lsb.queues", QUEUES)])
}

fn job(group: &str, slots: u32) -> JobSpec {
    JobSpec {
        user: "userA".into(),
        queue: Some("q".into()),
        slots,
        job_group: Some(group.into()),
        ..JobSpec::default()
    }
}

fn submit(e: &mut Engine, spec: JobSpec) -> JobId {
    e.apply(Time(0), &Event::Submit(spec)).expect("accepted").expect("id")
}

fn group(e: &mut Engine, change: JobGroupChange) -> Result<(), Rejection> {
    e.apply(Time(0), &Event::JobGroup(change)).map(|_| ())
}

fn add(path: &str, limit: Option<u32>) -> JobGroupChange {
    JobGroupChange::Add { path: path.into(), owner: "userA".into(), limit }
}

fn set_limit(path: &str, limit: Option<u32>) -> JobGroupChange {
    JobGroupChange::Modify { path: path.into(), limit: Some(limit), owner: None }
}

fn end(e: &mut Engine, t: u64, job: u64) {
    e.apply(Time(t), &Event::Finish { job: JobId(job), cpu_time: 0.0, exit: 0 }).expect("ends");
}

/// IBM's example: `bgadd /user1`, `bgmod -L 10 /user1`, 11 jobs: 10 run.
#[test]
fn a_group_runs_no_more_jobs_than_its_limit() {
    let mut e = Engine::new(config());
    group(&mut e, add("/user1", None)).expect("added");
    group(&mut e, set_limit("/user1", Some(10))).expect("modified");
    for _ in 0..11 {
        submit(&mut e, job("/user1", 1));
    }
    assert_eq!(started(&e.schedule(Time(0))).len(), 10);
    let reason = e.pending_reason(JobId(11), Time(0)).expect("pending");
    assert_eq!(reason, PendingReason::JobGroupLimit { group: "/user1".into() });
    assert_eq!(reason.to_string(), "The specified job group has reached its job limit (job group </user1>)");
    assert_eq!(e.job_group("/user1").map(|g| (g.started, g.limit)), Some((10, Some(10))));
    end(&mut e, 5, 1);
    assert_eq!(started(&e.schedule(Time(5))), vec![11]);
}

#[test]
fn a_parallel_job_counts_once_and_a_limit_of_zero_runs_nothing() {
    let mut e = Engine::new(config());
    group(&mut e, add("/par", Some(2))).expect("added");
    group(&mut e, add("/none", Some(0))).expect("added");
    for _ in 0..3 {
        submit(&mut e, job("/par", 4));
    }
    submit(&mut e, job("/none", 1));
    assert_eq!(started(&e.schedule(Time(0))), vec![1, 2], "two jobs of 4 slots: 8 of 16 slots, the limit is 2 jobs");
}

/// Jobs in subgroups count against the groups above; a subgroup without a
/// limit of its own is bound by its parent's.
#[test]
fn limits_above_bind_the_groups_below() {
    let mut e = Engine::new(config());
    group(&mut e, add("/A", Some(3))).expect("added");
    group(&mut e, add("/A/C", Some(2))).expect("added");
    for _ in 0..3 {
        submit(&mut e, job("/A/C", 1));
    }
    for _ in 0..3 {
        submit(&mut e, job("/A/B", 1));
    }
    assert_eq!(started(&e.schedule(Time(0))), vec![1, 2, 4], "2 of /A/C, then /A's third");
    assert_eq!(e.pending_reason(JobId(3), Time(0)), Some(PendingReason::JobGroupLimit { group: "/A/C".into() }));
    assert_eq!(e.pending_reason(JobId(5), Time(0)), Some(PendingReason::JobGroupLimit { group: "/A".into() }));
    let b = e.job_group("/A/B").expect("made by bsub -g");
    assert_eq!((b.owner.as_str(), b.limit, b.started), ("userA", None, 1));
    group(&mut e, set_limit("/A", Some(5))).expect("raised");
    assert_eq!(started(&e.schedule(Time(1))), vec![5, 6]);
}

#[test]
fn a_limit_stays_between_those_above_and_below() {
    let mut e = Engine::new(config());
    group(&mut e, add("/A", Some(10))).expect("added");
    group(&mut e, add("/A/B", Some(5))).expect("added");
    let above = JobGroupError::AboveParent { limit: 20, above: "/A".into(), above_limit: 10 };
    assert_eq!(group(&mut e, add("/A/C", Some(20))), Err(Rejection::JobGroup(above)));
    let below = JobGroupError::BelowChild { limit: 4, below: "/A/B".into(), below_limit: 5 };
    assert_eq!(group(&mut e, set_limit("/A", Some(4))), Err(Rejection::JobGroup(below)));
    assert_eq!(group(&mut e, add("/A", None)), Err(Rejection::JobGroup(JobGroupError::Exists("/A".into()))));
    assert_eq!(group(&mut e, set_limit("/", Some(1))), Err(Rejection::JobGroup(JobGroupError::Root)));
    let missing = JobGroupError::NoSuchGroup("/Z".into());
    assert_eq!(group(&mut e, set_limit("/Z", Some(1))), Err(Rejection::JobGroup(missing)));
    assert!(matches!(
        e.apply(Time(0), &Event::Submit(job("bad name", 1))),
        Err(Rejection::JobGroup(JobGroupError::BadPath { .. }))
    ));
    // -Ln: the limit goes, the one above binds.
    group(&mut e, set_limit("/A/B", None)).expect("removed");
    assert_eq!(e.job_group("/A/B").and_then(|g| g.limit), None);
}

#[test]
fn a_group_with_unfinished_jobs_is_not_deleted() {
    let mut e = Engine::new(config());
    submit(&mut e, job("/X/Y", 1));
    let delete = |p: &str| JobGroupChange::Delete { path: p.into() };
    let not_empty = JobGroupError::NotEmpty { path: "/X".into(), jobs: 1 };
    assert_eq!(group(&mut e, delete("/X")), Err(Rejection::JobGroup(not_empty)));
    assert_eq!(started(&e.schedule(Time(0))), vec![1]);
    end(&mut e, 1, 1);
    group(&mut e, delete("/X")).expect("deleted with its subgroup");
    assert!(e.job_groups().is_empty());
}

/// A reconfiguration adopts every job anew: the counts are made again.
#[test]
fn a_reconfiguration_keeps_groups_and_their_counts() {
    let mut e = Engine::new(config());
    group(&mut e, add("/G", Some(2))).expect("added");
    for _ in 0..3 {
        submit(&mut e, job("/G", 1));
    }
    assert_eq!(started(&e.schedule(Time(0))).len(), 2);
    e.apply(Time(1), &Event::Reconfigure(Box::new(config()))).expect("same configuration");
    assert_eq!(e.job_group("/G").map(|g| (g.started, g.limit)), Some((2, Some(2))));
    assert!(started(&e.schedule(Time(1))).is_empty());
    let snapshot = serde_json::to_string(&e).expect("serialized");
    let back: Engine = serde_json::from_str::<Engine>(&snapshot).expect("deserialized").restored();
    assert_eq!(back.job_groups(), e.job_groups());
}
