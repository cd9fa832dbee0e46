//! User-assigned job priority (`bsub -sp`, MAX_USER_PRIORITY): queue
//! priority first, then job priority, then submission order; in a
//! fairshare queue the share tree picks the user and the job priority
//! orders that user's jobs.

use allot_engine::{Engine, Event, JobId, JobSpec, Rejection, Time};
use allot_sim::testing::{engine_from, started};

const HOSTS: &str = "Begin Host\nHOST_NAME MXJ\nh1 1\nEnd Host\n";
const PARAMS: &str = "Begin Parameters\nMAX_USER_PRIORITY = 100\nEnd Parameters\n";
const QUEUES: &str = "Begin Queue\nQUEUE_NAME = fifo\nPRIORITY = 10\nEnd Queue\n\
                      Begin Queue\nQUEUE_NAME = fair\nPRIORITY = 5\nFAIRSHARE = USER_SHARES[[alice, 2] [bob, 1]]\nEnd Queue\n";

fn engine(params: &str) -> Engine {
    engine_from(&[("lsb.hosts", HOSTS), ("lsb.queues", QUEUES), ("lsb.params", params)])
}

fn spec(user: &str, queue: &str, priority: Option<u32>) -> JobSpec {
    JobSpec { user: user.into(), queue: Some(queue.into()), slots: 1, priority, ..JobSpec::default() }
}

fn submit(e: &mut Engine, s: JobSpec) -> JobId {
    e.apply(Time(0), &Event::Submit(s)).expect("accepted").expect("id")
}

/// Runs passes, ending each started job at once, and gives the start order.
fn order(e: &mut Engine) -> Vec<u64> {
    let mut all = Vec::new();
    for t in 1..20 {
        let s = started(&e.schedule(Time(t)));
        for &id in &s {
            e.apply(Time(t), &Event::Finish { job: JobId(id), cpu_time: 0.0, exit: 0 }).expect("ends");
        }
        all.extend(s);
    }
    all
}

#[test]
fn higher_job_priority_first_then_submission_order() {
    let mut e = engine(PARAMS);
    let a = submit(&mut e, spec("alice", "fifo", None));
    let b = submit(&mut e, spec("bob", "fifo", Some(80)));
    let c = submit(&mut e, spec("alice", "fifo", Some(80)));
    let d = submit(&mut e, spec("bob", "fifo", Some(10)));
    assert_eq!(e.job_priority(a), Some(50), "no -sp: MAX_USER_PRIORITY / 2");
    assert_eq!(order(&mut e), vec![b.0, c.0, a.0, d.0]);
}

#[test]
fn in_a_fairshare_queue_priority_orders_a_users_own_jobs_only() {
    let mut e = engine(PARAMS);
    let a1 = submit(&mut e, spec("alice", "fair", None));
    let a2 = submit(&mut e, spec("alice", "fair", Some(90)));
    let b1 = submit(&mut e, spec("bob", "fair", Some(100)));
    // Alice's 2 shares to Bob's 1 put her first; her -sp 90 job goes before
    // her older one; Bob's -sp 100 does not pass her.
    let first = order(&mut e);
    assert_eq!(first[0], a2.0, "{first:?}");
    assert!(first.iter().position(|&j| j == a2.0) < first.iter().position(|&j| j == a1.0));
    assert_eq!(first.len(), 3);
    assert!(first.contains(&b1.0));
}

#[test]
fn bmod_changes_a_pending_jobs_place() {
    let mut e = engine(PARAMS);
    let a = submit(&mut e, spec("alice", "fifo", None));
    let b = submit(&mut e, spec("alice", "fifo", None));
    e.apply(Time(0), &Event::Modify { job: b, spec: spec("alice", "fifo", Some(99)) }).expect("valid");
    assert_eq!(order(&mut e), vec![b.0, a.0]);
}

#[test]
fn priorities_are_checked() {
    let mut e = engine(PARAMS);
    for p in [0, 101] {
        assert_eq!(
            e.apply(Time(0), &Event::Submit(spec("alice", "fifo", Some(p)))),
            Err(Rejection::BadUserPriority { priority: p, max: 100 })
        );
    }
    let mut off = engine("");
    assert_eq!(
        off.apply(Time(0), &Event::Submit(spec("alice", "fifo", Some(5)))),
        Err(Rejection::UserPriorityDisabled)
    );
    let j = submit(&mut off, spec("alice", "fifo", None));
    assert_eq!(off.job_priority(j), Some(0));
}
