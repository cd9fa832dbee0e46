//! The fairshare adjustment (spec 000, "Fairshare adjustment plugin"):
//! the memory-based example weighs what a user's started jobs hold against
//! the cluster's memory per slot, and the dispatch pass, `bjobs -p`'s
//! priorities and the share tables all see it.

use allot_engine::{Engine, Event, JobId, JobSpec, Time};
use allot_sim::testing::{engine_from, started};

/// One host of 3 slots and 3,072 MB: 1,024 MB per slot.
const CLUSTER: &str = "Begin Host\nHOSTNAME model type server RESOURCES ncpus maxmem\n\
    hostA ! LINUX 1 () 3 3072\nEnd Host\n";

/// Only started jobs and the adjustment count: priority = shares /
/// ((1 + started) * 1 + adjustment * 1).
const PARAMS: &str = "Begin Parameters\nCPU_TIME_FACTOR = 0\nRUN_TIME_FACTOR = 0\nRUN_JOB_FACTOR = 1\n\
    FAIRSHARE_ADJUSTMENT_FACTOR = 1\nEnd Parameters\n";

const QUEUES: &str = "Begin Queue\nQUEUE_NAME = q\nFAIRSHARE = USER_SHARES[[alice, 1] [bob, 1]]\nEnd Queue\n";

const MEMORY: &str = "[fairshare]\nadjustment = \"memory\"\nmemory_threshold = 0.5\n";

fn engine(adjust: bool) -> Engine {
    let mut files = vec![("lsf.cluster.c", CLUSTER), ("lsb.params", PARAMS), ("lsb.queues", QUEUES)];
    if adjust {
        files.push(("allot.toml", MEMORY));
    }
    engine_from(&files)
}

fn submit(e: &mut Engine, user: &str, t: u64) -> JobId {
    let spec = JobSpec { user: user.into(), queue: Some("q".into()), slots: 1, ..JobSpec::default() };
    e.apply(Time(t), &Event::Submit(spec)).expect("submitted").expect("a job")
}

/// Alice and Bob each run one job, Alice's measured at 315 MB and Bob's
/// at 10 MB; then each submits one more (Alice first) for the one slot
/// left. Returns the engine and who got it.
fn second_jobs(adjust: bool) -> (Engine, &'static str) {
    let mut e = engine(adjust);
    let a1 = submit(&mut e, "alice", 0);
    let b1 = submit(&mut e, "bob", 0);
    assert_eq!(started(&e.schedule(Time(0))), [a1.0, b1.0]);
    e.apply(Time(5), &Event::Memory { job: a1, mb: 315.0 }).expect("measured");
    e.apply(Time(5), &Event::Memory { job: b1, mb: 10.0 }).expect("measured");
    let a2 = submit(&mut e, "alice", 10);
    let b2 = submit(&mut e, "bob", 10);
    let got = started(&e.schedule(Time(10)));
    let who = match got.as_slice() {
        [j] if *j == a2.0 => "alice",
        [j] if *j == b2.0 => "bob",
        other => panic!("one job starts, not {other:?}"),
    };
    (e, who)
}

fn row(e: &Engine, user: &str) -> allot_engine::shares::ShareRow {
    let adjustment = e.adjustment();
    let tables = e.fairshare().policies[0].tree.share_tables(Time(10), &adjustment.inputs());
    tables.into_iter().flat_map(|t| t.rows).find(|r| r.name == user).expect("a row")
}

#[test]
fn the_memory_adjustment_follows_the_plugin_formula() {
    let (e, _) = second_jobs(true);
    // slot_memory = 3072 / 3 = 1024 MB; THRESHOLD 0.5.
    assert_eq!(e.adjustment().cluster.slot_memory, 1024.0);
    assert_eq!(e.adjustment().cluster.in_use, 315.0 + 10.0, "what the running jobs hold");
    // (1 + slots) * ((total_memory / slots) / (slot_memory * THRESHOLD))
    let alice = row(&e, "alice");
    let expected = 2.0 * ((315.0 / 1.0) / (1024.0 * 0.5));
    assert!((alice.adjust - expected).abs() < 1e-9, "{} != {expected}", alice.adjust);
    assert!((alice.adjust - 1.230).abs() < 0.001);
    // priority = 1 / ((1 + 1) * 1 + 1.2305 * 1)
    assert!((alice.priority - 1.0 / (2.0 + expected)).abs() < 1e-9, "{}", alice.priority);
    // Bob got the last slot: two started jobs holding 10 MB in all.
    let bob = row(&e, "bob");
    assert!((bob.adjust - 3.0 * ((10.0 / 2.0) / 512.0)).abs() < 1e-9, "{}", bob.adjust);
}

#[test]
fn memory_held_lowers_a_users_place_in_dispatch() {
    // Without the adjustment both users stand at 1 / 2: the tie goes to
    // the job submitted first, Alice's.
    let (plain, who) = second_jobs(false);
    assert_eq!(who, "alice");
    assert_eq!(row(&plain, "alice").adjust, 0.0);
    // With it, Alice's 315 MB weigh against her: Bob's job goes first.
    let (_, who) = second_jobs(true);
    assert_eq!(who, "bob");
}

#[test]
fn an_ended_job_no_longer_holds_memory() {
    let mut e = engine(true);
    let a1 = submit(&mut e, "alice", 0);
    e.schedule(Time(0));
    e.apply(Time(5), &Event::Memory { job: a1, mb: 315.0 }).expect("measured");
    assert_eq!(e.adjustment().cluster.in_use, 315.0);
    e.apply(Time(6), &Event::Finish { job: a1, cpu_time: 1.0, exit: 0 }).expect("ended");
    assert_eq!(e.adjustment().cluster.in_use, 0.0);
    assert_eq!(row(&e, "alice").adjust, 0.0, "no started job: no adjustment");
}
