//! Late materialization of job arrays in the engine: an array's elements
//! past the first `MADE_AHEAD` become jobs as earlier ones start or leave,
//! in id order, and until then are pending all the same (counted, listed
//! by the queries, named by events).

use allot_engine::{
    ArrayShape, DepKind, Dependency, Engine, EngineConfig, Event, JobId, JobSet, JobSpec, MADE_AHEAD, PendingReason,
    Rejection, Time,
};
use allot_sim::testing::{engine_config_from, started};

fn config(slots: u32, params: &str) -> EngineConfig {
    let hosts = format!("Begin Host\nHOST_NAME MXJ\nh1 {slots}\nEnd Host\n");
    let queues = "Begin Queue\nQUEUE_NAME = q\nPRIORITY = 10\nFAIRSHARE = USER_SHARES[[default, 1]]\nEnd Queue\n";
    let params = format!("Begin Parameters\nMAX_JOB_ARRAY_SIZE = 1000000\n{params}End Parameters\n");
    engine_config_from(&[("lsb.hosts", &hosts), ("lsb.queues", queues), ("lsb.params", &params)])
}

fn array(size: u32, limit: Option<u32>) -> JobSpec {
    JobSpec {
        user: "a".into(),
        queue: Some("q".into()),
        slots: 1,
        array: Some(ArrayShape { size, limit }),
        ..JobSpec::default()
    }
}

fn submit(e: &mut Engine, spec: JobSpec) -> Result<JobId, Rejection> {
    e.apply(Time(0), &Event::Submit(spec)).map(|id| id.expect("an id"))
}

fn end(e: &mut Engine, t: u64, job: u64) {
    e.apply(Time(t), &Event::Finish { job: JobId(job), cpu_time: 0.0, exit: 0 }).expect("ends");
}

/// (dispatchable pending, running slots, pending not dispatchable) of q.
fn load(e: &Engine) -> (u32, u32, u32) {
    e.queues().map(|(_, p, u, h)| (p, u, h)).next().expect("queue")
}

#[test]
fn a_million_elements_are_held_as_a_thousand_and_every_one_is_pending() {
    let mut e = Engine::new(config(4, ""));
    let first = submit(&mut e, array(1_000_000, None)).expect("accepted");
    let next = submit(&mut e, JobSpec { user: "a".into(), queue: Some("q".into()), ..JobSpec::default() });
    assert_eq!(next, Ok(JobId(1_000_001)), "the ids of the elements not made are taken");
    assert_eq!(e.job_count(), MADE_AHEAD as usize + 1, "only the first MADE_AHEAD elements are jobs");
    let (made, ..) = load(&e);
    assert_eq!(load(&e), (made, 0, 1_000_001 - made), "the rest wait, counted");
    assert_eq!(made, MADE_AHEAD + 1);
    let last = JobId(1_000_000);
    assert!(e.is_pending(last));
    assert_eq!(e.job_queue(last), Some("q"));
    assert_eq!(e.job_slots(last), Some((1, 1)));
    assert!(e.pending_reason(last, Time(0)).is_some());
    assert_eq!(e.array_shape(first), Some((1_000_000, None)));
}

#[test]
fn elements_are_made_as_earlier_ones_start_and_run_in_id_order() {
    let mut e = Engine::new(config(1500, ""));
    submit(&mut e, array(3000, None)).expect("accepted");
    let a = started(&e.schedule(Time(0)));
    assert_eq!(a, (1..=u64::from(MADE_AHEAD)).collect::<Vec<_>>(), "a pass starts the elements made");
    let b = started(&e.schedule(Time(1)));
    assert_eq!(b, (1001..=1500).collect::<Vec<_>>(), "the next pass the next ones, made for it");
    for job in 1..=300 {
        end(&mut e, 2, job);
    }
    assert_eq!(started(&e.schedule(Time(2))), (1501..=1800).collect::<Vec<_>>());
    assert_eq!(load(&e).1, 1500);
    assert_eq!(load(&e).0 + load(&e).2, 1200, "every element not started is pending, made or not");
}

#[test]
fn under_a_limit_the_tail_is_made_as_room_comes() {
    let mut e = Engine::new(config(8, ""));
    submit(&mut e, array(5000, Some(3))).expect("accepted");
    assert_eq!(started(&e.schedule(Time(0))), [1, 2, 3]);
    assert_eq!(e.pending_reason(JobId(4000), Time(0)), Some(PendingReason::ArrayLimit));
    let mut t = 1;
    for job in 1..=1200 {
        end(&mut e, t, job);
        t += 1;
        let s = started(&e.schedule(Time(t)));
        assert_eq!(s, [job + 3], "one in, in id order");
    }
}

#[test]
fn an_event_that_names_an_element_not_made_makes_it() {
    let mut e = Engine::new(config(4, ""));
    submit(&mut e, array(10_000, None)).expect("accepted");
    let (p, _, h) = load(&e);
    // bkill 1[9000]: the element leaves, never to run.
    e.apply(Time(1), &Event::Finish { job: JobId(9000), cpu_time: 0.0, exit: 130 }).expect("removed");
    assert!(!e.is_pending(JobId(9000)));
    assert_eq!(load(&e).0 + load(&e).2, p + h - 1);
    // bstop 1[9001]: held as any.
    e.apply(Time(1), &Event::Hold(JobId(9001))).expect("held");
    assert!(e.is_held(JobId(9001)));
    assert_eq!(e.pending_reason(JobId(9001), Time(1)), Some(PendingReason::Held));
    assert!(!e.is_held(JobId(9002)));
}

#[test]
fn an_element_not_made_may_be_depended_on_and_is_counted_against_pending_limits() {
    let mut e = Engine::new(config(4, "MAX_PEND_JOBS = 6000\n"));
    submit(&mut e, array(5000, None)).expect("accepted");
    let dep = Dependency::Cond { kind: DepKind::Done, target: JobSet::from_ids([JobId(4500)]) };
    let waiting = submit(&mut e, JobSpec { user: "a".into(), depends: Some(dep), ..JobSpec::default() });
    let waiting = waiting.expect("an element not made is a job of the cluster");
    assert_eq!(e.pending_reason(waiting, Time(0)), Some(PendingReason::Dependency));
    let refused = submit(&mut e, array(1000, None));
    assert!(matches!(refused, Err(ref r) if r.retry_later()), "5,001 pending and 1,000 more pass 6,000: {refused:?}");
}

#[test]
fn a_reconfiguration_keeps_the_elements_not_made() {
    let mut e = Engine::new(config(1500, ""));
    submit(&mut e, array(3000, None)).expect("accepted");
    assert_eq!(started(&e.schedule(Time(0))).len(), 1000);
    e.apply(Time(1), &Event::Reconfigure(Box::new(config(2000, "")))).expect("reconfigured");
    let (p, u, h) = load(&e);
    assert_eq!((p + h, u), (2000, 1000));
    let s = started(&e.schedule(Time(2)));
    assert_eq!(s, (1001..=2000).collect::<Vec<_>>(), "the tail goes on in id order");
}

#[test]
fn elements_are_removed_at_once_made_or_not_and_count_as_ended() {
    let mut e = Engine::new(config(4, ""));
    submit(&mut e, array(10_000, None)).expect("accepted");
    assert_eq!(started(&e.schedule(Time(0))), [1, 2, 3, 4]);
    let exit = DepKind::Exit(Some((allot_engine::CmpOp::Eq, 130)));
    let dep = Dependency::Cond { kind: exit, target: JobSet::from_ids([JobId(9000)]) };
    let after = submit(&mut e, JobSpec { user: "a".into(), depends: Some(dep), ..JobSpec::default() }).expect("ok");
    // bkill of elements 3 to 9,999: two running (not removed here), 996
    // made, 9,001 not made.
    let elements = JobSet::from_ids((3..=9_999).map(JobId));
    e.apply(Time(1), &Event::RemoveElements { array: JobId(1), elements }).expect("removed");
    assert!(e.is_running(JobId(3)) && e.is_running(JobId(4)), "running ones are killed otherwise");
    assert!(!e.is_pending(JobId(5)) && !e.is_pending(JobId(9000)));
    assert!(e.is_pending(JobId(10_000)), "the last was not named");
    assert_eq!(load(&e), (0, 4, 2), "the last not made yet, the dependent waiting until the pass");
    assert_eq!(e.job_count(), 4 + 1, "four running and the dependent");
    let s = started(&e.schedule(Time(2)));
    assert!(s.is_empty(), "no slot free: {s:?}");
    assert_eq!(load(&e), (2, 4, 0), "the last made, the dependent's condition met");
    assert_eq!(e.job_count(), 4 + 1 + 1);
    end(&mut e, 3, 1);
    end(&mut e, 3, 2);
    assert_eq!(started(&e.schedule(Time(3))), [10_000, after.0], "exit(9000 == 130) holds: it ended with 130");
}

#[test]
fn elements_are_held_and_released_at_once_made_or_not() {
    let mut e = Engine::new(config(4, ""));
    submit(&mut e, array(5_000, None)).expect("accepted");
    let all = JobSet::from_ids((1..=5_000).map(JobId));
    e.apply(Time(0), &Event::HoldElements { array: JobId(1), elements: all.clone(), hold: true }).expect("held");
    assert!(e.is_held(JobId(2)) && e.is_held(JobId(4_000)), "made and not made alike");
    assert_eq!(e.pending_reason(JobId(4_000), Time(0)), Some(PendingReason::Held));
    assert!(started(&e.schedule(Time(0))).is_empty());
    e.apply(Time(1), &Event::HoldElements { array: JobId(1), elements: all, hold: false }).expect("released");
    assert!(!e.is_held(JobId(4_000)));
    assert_eq!(started(&e.schedule(Time(1))), [1, 2, 3, 4]);
    for job in 1..=1_200 {
        end(&mut e, 2, job);
        let s = started(&e.schedule(Time(2)));
        assert_eq!(s, [job + 4], "each released element in turn, made ones and then the tail");
    }
    // Some only named: each is made and held; the rest go on.
    let some = JobSet::from_ids([JobId(4_500), JobId(4_501)]);
    e.apply(Time(3), &Event::HoldElements { array: JobId(1), elements: some, hold: true }).expect("held");
    assert!(e.is_held(JobId(4_500)) && !e.is_held(JobId(4_502)));
}
