//! Pending job thresholds (MAX_PEND_JOBS, MAX_PEND_SLOTS) as LSF
//! documents them: per user (`lsb.users`, a user's own row, `group@`,
//! `default`), per user group as a whole, per queue (`lsb.queues`) and
//! for the whole cluster (`lsb.params`); what counts as pending; and the
//! simulator sending a refused job again SUB_TRY_INTERVAL later, as bsub
//! does.

use allot_engine::{Engine, Event, JobId, JobSpec, Time};
use allot_sim::sim::{SimOptions, run};
use allot_sim::testing::engine_from;

const HOSTS: &str = "Begin Host\nHOST_NAME MXJ\nhostA 8\nEnd Host\n";

const USERS: &str = "Begin UserGroup\nGROUP_NAME GROUP_MEMBER\nteam (ann bob)\nlab (cy dee)\nEnd UserGroup\n\n\
                     Begin User\nUSER_NAME MAX_PEND_JOBS MAX_PEND_SLOTS\nann 3 -\nteam 4 -\nlab@ 1 -\n\
                     default 2 5\nEnd User\n";

fn engine(params: &str, queue_extra: &str) -> Engine {
    engine_on(HOSTS, params, queue_extra)
}

fn engine_on(hosts: &str, params: &str, queue_extra: &str) -> Engine {
    let queues = format!("Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\n{queue_extra}\nEnd Queue\n");
    engine_from(&[("lsb.hosts", hosts), ("lsb.users", USERS), ("lsb.queues", &queues), ("lsb.params", params)])
}

fn spec(user: &str, slots: u32) -> JobSpec {
    JobSpec { user: user.into(), queue: Some("normal".into()), slots, hold: true, ..JobSpec::default() }
}

fn submit(e: &mut Engine, s: &JobSpec) -> Result<JobId, String> {
    e.apply(Time(0), &Event::Submit(s.clone())).map(|id| id.expect("an id")).map_err(|r| {
        assert!(r.retry_later(), "{r}: a threshold is for later");
        r.to_string()
    })
}

/// A submission that alone passes a threshold is refused for good.
#[test]
fn a_submission_above_a_threshold_by_itself_is_refused_for_good() {
    let mut e = engine("", "");
    let refused = e.apply(Time(0), &Event::Submit(spec("eve", 6))).expect_err("6 slots over 5");
    assert!(!refused.retry_later());
    assert_eq!(
        refused.to_string(),
        "6 job slots are more than User <eve>'s pending threshold (MAX_PEND_SLOTS 5): it would never be taken"
    );
    let mut array = spec("eve", 1);
    array.array = Some(allot_engine::model::ArrayShape { size: 3, limit: None });
    let refused = e.apply(Time(0), &Event::Submit(array)).expect_err("3 elements over 2");
    assert!(!refused.retry_later());
}

#[test]
fn a_users_own_row_their_groups_and_default_bound_their_pending_jobs() {
    let mut e = engine("", "");
    // ann's own row: 3; with bob, team's 4 in all.
    for _ in 0..3 {
        submit(&mut e, &spec("ann", 1)).expect("within ann's 3");
    }
    assert_eq!(submit(&mut e, &spec("ann", 1)), Err("User <ann>: Pending job threshold reached".into()));
    submit(&mut e, &spec("bob", 1)).expect("team's fourth");
    assert_eq!(submit(&mut e, &spec("bob", 1)), Err("Group <team>: Pending job threshold reached".into()));
    // lab@: each member alone, 1.
    submit(&mut e, &spec("cy", 1)).expect("cy's first");
    assert_eq!(submit(&mut e, &spec("cy", 1)), Err("User <cy>: Pending job threshold reached".into()));
    submit(&mut e, &spec("dee", 1)).expect("dee has her own 1");
    // default: 2 jobs and 5 slots for each user named nowhere.
    submit(&mut e, &spec("eve", 4)).expect("4 slots");
    assert_eq!(submit(&mut e, &spec("eve", 2)), Err("User <eve>: Pending job slot threshold reached".into()));
    submit(&mut e, &spec("eve", 1)).expect("5 slots, 2 jobs");
    assert_eq!(submit(&mut e, &spec("eve", 0)), Err("User <eve>: Pending job threshold reached".into()));
    submit(&mut e, &spec("fay", 1)).expect("another user is not bound by eve's jobs");
}

#[test]
fn an_arrays_elements_each_count_and_a_refused_submission_keeps_nothing() {
    let mut e = engine("", "");
    submit(&mut e, &spec("eve", 1)).expect("one");
    let mut array = spec("eve", 1);
    array.array = Some(allot_engine::model::ArrayShape { size: 2, limit: None });
    assert_eq!(submit(&mut e, &array), Err("User <eve>: Pending job threshold reached".into()));
    e.apply(Time(1), &Event::Finish { job: JobId(1), cpu_time: 0.0, exit: 130 }).expect("killed");
    let first = submit(&mut e, &array).expect("2 elements");
    // The refused array took no id.
    assert_eq!(first, JobId(2));
}

#[test]
fn jobs_stop_counting_as_they_start_or_end_and_held_jobs_count() {
    let mut e = engine("", "");
    let held = submit(&mut e, &spec("eve", 1)).expect("held");
    let ready = submit(&mut e, &JobSpec { hold: false, ..spec("eve", 1) }).expect("ready");
    assert!(submit(&mut e, &spec("eve", 1)).is_err(), "a held job is pending too");
    let started = allot_sim::testing::started(&e.schedule(Time(1)));
    assert_eq!(started, [ready.0]);
    submit(&mut e, &spec("eve", 1)).expect("the started job no longer counts");
    assert!(submit(&mut e, &spec("eve", 1)).is_err());
    e.apply(Time(2), &Event::Finish { job: held, cpu_time: 0.0, exit: 130 }).expect("killed while pending");
    submit(&mut e, &spec("eve", 1)).expect("the killed job no longer counts");
}

#[test]
fn a_queues_and_the_clusters_thresholds_count_every_users_jobs() {
    let mut e = engine("Begin Parameters\nMAX_PEND_JOBS = 5\nEnd Parameters\n", "MAX_PEND_SLOTS = 3");
    submit(&mut e, &spec("ann", 2)).expect("2 of the queue's 3 slots");
    assert_eq!(submit(&mut e, &spec("bob", 2)), Err("Queue <normal>: Pending job slot threshold reached".into()));
    submit(&mut e, &spec("bob", 1)).expect("3 slots");
    let mut e = engine("Begin Parameters\nMAX_PEND_JOBS = 3\nEnd Parameters\n", "");
    for user in ["eve", "fay", "gus"] {
        submit(&mut e, &spec(user, 1)).expect("within 3 in all");
    }
    assert_eq!(submit(&mut e, &spec("hal", 1)), Err("Pending job threshold reached".into()));
}

#[test]
fn a_reconfiguration_counts_the_pending_jobs_again() {
    let mut e = engine("", "");
    submit(&mut e, &spec("eve", 1)).expect("one");
    let again = allot_sim::testing::engine_config_from(&[
        ("lsb.hosts", HOSTS),
        ("lsb.users", USERS),
        ("lsb.queues", "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n"),
    ]);
    e.apply(Time(5), &Event::Reconfigure(Box::new(again))).expect("reconfigured");
    submit(&mut e, &spec("eve", 1)).expect("two");
    assert!(submit(&mut e, &spec("eve", 1)).is_err(), "the job from before counts");
}

/// A workload job refused by a threshold is sent again every
/// SUB_TRY_INTERVAL until taken: nothing is rejected for good, and it
/// starts later than it would have.
#[test]
fn the_simulator_sends_a_refused_job_again_as_bsub_does() {
    let two = "Begin Host\nHOST_NAME MXJ\nhostA 2\nEnd Host\n";
    let mut e = engine_on(two, "Begin Parameters\nSUB_TRY_INTERVAL = 30\nEnd Parameters\n", "");
    let lines = [
        r#"{"submit": 0, "user": "eve", "runtime": 100, "bsub": "-n 2"}"#,
        r#"{"submit": 0, "user": "eve", "runtime": 100, "bsub": "-n 2"}"#,
        r#"{"submit": 0, "user": "eve", "runtime": 100, "bsub": "-n 2"}"#,
        r#"{"submit": 10, "user": "eve", "runtime": 100, "bsub": "-n 2"}"#,
    ];
    let w = allot_sim::jsonl::read(&lines.join("\n"));
    assert!(w.skipped.is_empty(), "{:?}", w.skipped);
    let out = run(&mut e, &w, &SimOptions::default(), &|_, _| serde_json::Value::Null, &mut |_| {});
    assert!(out.rejected.is_empty(), "{:?}", out.rejected);
    let mut ran: Vec<(u64, u64)> = out.records.iter().map(|r| (r.id, r.start)).collect();
    ran.sort();
    // One job runs at a time; eve may have 2 pending (default). At 0
    // jobs 1 and 2 are taken, job 1 starts, job 3 is refused; at 10 job 4
    // is taken (only job 2 pends); job 3 is refused again at 30, 60 and
    // 90, and taken at 120, after job 2 started at 100: so job 4, taken
    // first, runs before it.
    assert_eq!(ran, [(1, 0), (2, 100), (3, 300), (4, 200)]);
    assert_eq!(out.retried, 4, "job 3 at 0, 30, 60 and 90");
}
