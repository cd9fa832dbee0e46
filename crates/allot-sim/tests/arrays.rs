//! Job arrays in the engine: elements are jobs with consecutive ids,
//! dispatched in index order, at most `%limit` of them running at once.

use allot_engine::{ArrayShape, Engine, EngineConfig, Event, HostIdx, JobId, JobSpec, PendingReason, Rejection, Time};
use allot_sim::testing::{engine_config_from, started};

const HOSTS: &str = "Begin Host\nHOST_NAME MXJ\nh1 4\nEnd Host\n";
const QUEUES: &str = "Begin Queue\nQUEUE_NAME = q\nPRIORITY = 10\nFAIRSHARE = USER_SHARES[[default, 1]]\nEnd Queue\n\
                      Begin Queue\nQUEUE_NAME = fifo\nPRIORITY = 5\nEnd Queue\n";

fn config() -> EngineConfig {
    engine_config_from(&[("lsb.hosts", HOSTS), ("lsb.queues", QUEUES)])
}

fn array(user: &str, queue: &str, size: u32, limit: Option<u32>) -> JobSpec {
    JobSpec {
        user: user.into(),
        queue: Some(queue.into()),
        slots: 1,
        array: Some(ArrayShape { size, limit }),
        ..JobSpec::default()
    }
}

fn submit(e: &mut Engine, spec: JobSpec) -> JobId {
    e.apply(Time(0), &Event::Submit(spec)).expect("accepted").expect("id")
}

fn end(e: &mut Engine, t: u64, job: u64) {
    e.apply(Time(t), &Event::Finish { job: JobId(job), cpu_time: 0.0, exit: 0 }).expect("ends");
}

/// (pending, running slots, not dispatchable) of a queue.
fn load(e: &Engine, name: &str) -> (u32, u32, u32) {
    e.queues().find(|q| q.0.name == name).map(|(_, p, u, h)| (p, u, h)).expect("queue")
}

#[test]
fn elements_take_consecutive_ids_and_run_in_index_order() {
    let mut e = Engine::new(config());
    let first = submit(&mut e, array("a", "q", 6, None));
    let next = submit(&mut e, JobSpec { user: "a".into(), queue: Some("q".into()), slots: 1, ..JobSpec::default() });
    assert_eq!((first, next), (JobId(1), JobId(7)));
    assert_eq!(e.job_count(), 7);
    assert_eq!(started(&e.schedule(Time(0))), vec![1, 2, 3, 4], "4 slots");
    end(&mut e, 1, 2);
    assert_eq!(started(&e.schedule(Time(1))), vec![5]);
    assert_eq!(e.array_shape(first), Some((6, None)));
    assert_eq!(e.array_shape(JobId(2)), None, "arrays are named by their first element");
}

#[test]
fn at_most_limit_elements_run_and_the_rest_say_why() {
    let mut e = Engine::new(config());
    let first = submit(&mut e, array("a", "q", 5, Some(2)));
    assert_eq!(load(&e, "q"), (2, 0, 3), "two may go, three wait for room");
    assert_eq!(e.pending_reason(JobId(3), Time(0)), Some(PendingReason::ArrayLimit));
    assert_eq!(
        PendingReason::ArrayLimit.to_string(),
        "The job array has reached its running element limit",
        "LSF's wording"
    );
    assert_eq!(started(&e.schedule(Time(0))), vec![1, 2], "2 of 4 free slots: the limit, not the hosts");
    // Another user's job takes a free slot meanwhile.
    let other = submit(&mut e, JobSpec { user: "b".into(), queue: Some("q".into()), slots: 1, ..JobSpec::default() });
    assert_eq!(started(&e.schedule(Time(1))), vec![other.0]);
    end(&mut e, 2, 1);
    assert_eq!(started(&e.schedule(Time(2))), vec![3], "one ends, the next index goes");
    assert_eq!(e.pending_reason(JobId(4), Time(2)), Some(PendingReason::ArrayLimit));
    end(&mut e, 3, 2);
    end(&mut e, 3, 3);
    assert_eq!(started(&e.schedule(Time(3))), vec![4, 5]);
    assert_eq!(e.array_shape(first), Some((5, Some(2))));
    assert_eq!(load(&e, "q"), (0, 3, 0));
}

#[test]
fn held_killed_and_requeued_elements_give_their_room_back() {
    let mut e = Engine::new(config());
    submit(&mut e, array("a", "fifo", 4, Some(1)));
    // The admitted element is held: the next one takes its room.
    e.apply(Time(0), &Event::Hold(JobId(1))).expect("pending");
    assert_eq!(e.pending_reason(JobId(1), Time(0)), Some(PendingReason::Held));
    assert_eq!(started(&e.schedule(Time(0))), vec![2]);
    // Released while another element runs: it waits for room.
    e.apply(Time(1), &Event::Release(JobId(1))).expect("held");
    assert_eq!(e.pending_reason(JobId(1), Time(1)), Some(PendingReason::ArrayLimit));
    // A running element is requeued: it is pending again, and the lowest
    // id waiting goes first.
    e.apply(Time(2), &Event::Requeue { job: JobId(2), cpu_time: 0.0, hold: false }).expect("running");
    assert_eq!(started(&e.schedule(Time(2))), vec![1]);
    // A parked element is removed (bkill): nothing else changes.
    e.apply(Time(3), &Event::Finish { job: JobId(3), cpu_time: 0.0, exit: 130 }).expect("removed");
    assert_eq!(load(&e, "fifo"), (0, 1, 2));
    end(&mut e, 4, 1);
    assert_eq!(started(&e.schedule(Time(4))), vec![2]);
    end(&mut e, 5, 2);
    assert_eq!(started(&e.schedule(Time(5))), vec![4]);
    end(&mut e, 6, 4);
    assert_eq!(load(&e, "fifo"), (0, 0, 0));
    assert_eq!(e.job_count(), 0);
}

#[test]
fn the_limit_can_change_and_be_lifted() {
    let mut e = Engine::new(config());
    let first = submit(&mut e, array("a", "fifo", 6, Some(1)));
    assert_eq!(started(&e.schedule(Time(0))), vec![1]);
    e.apply(Time(1), &Event::ArrayLimit { array: first, limit: Some(3) }).expect("an array");
    assert_eq!(started(&e.schedule(Time(1))), vec![2, 3]);
    e.apply(Time(2), &Event::ArrayLimit { array: first, limit: Some(1) }).expect("an array");
    end(&mut e, 3, 1);
    assert!(started(&e.schedule(Time(3))).is_empty(), "two still run: over the new limit");
    end(&mut e, 4, 2);
    end(&mut e, 4, 3);
    assert_eq!(started(&e.schedule(Time(4))), vec![4]);
    e.apply(Time(5), &Event::ArrayLimit { array: first, limit: None }).expect("an array");
    assert_eq!(started(&e.schedule(Time(5))), vec![5, 6]);
    assert_eq!(
        e.apply(Time(6), &Event::ArrayLimit { array: JobId(2), limit: Some(1) }),
        Err(Rejection::NotAnArray(JobId(2)))
    );
    assert_eq!(e.apply(Time(6), &Event::ArrayLimit { array: first, limit: Some(0) }), Err(Rejection::ZeroArrayLimit));
}

#[test]
fn sizes_are_checked_against_max_job_array_size() {
    let mut config = config();
    config.max_job_array_size = 10;
    let mut e = Engine::new(config);
    assert_eq!(
        e.apply(Time(0), &Event::Submit(array("a", "q", 11, None))),
        Err(Rejection::ArrayTooLarge { size: 11, max: 10 })
    );
    assert_eq!(e.apply(Time(0), &Event::Submit(array("a", "q", 0, None))), Err(Rejection::EmptyArray));
    assert_eq!(e.apply(Time(0), &Event::Submit(array("a", "q", 2, Some(0)))), Err(Rejection::ZeroArrayLimit));
    assert_eq!(e.apply(Time(0), &Event::Submit(array("a", "q", 10, None))), Ok(Some(JobId(1))));
    assert_eq!(e.job_count(), 10);
}

#[test]
fn reconfiguration_keeps_the_limit_and_the_running_elements() {
    let mut e = Engine::new(config());
    submit(&mut e, array("a", "q", 5, Some(2)));
    assert_eq!(started(&e.schedule(Time(0))), vec![1, 2]);
    e.apply(Time(1), &Event::Reconfigure(Box::new(config()))).expect("same queues");
    assert!(started(&e.schedule(Time(1))).is_empty(), "two run: the limit holds across a reconfiguration");
    assert_eq!(load(&e, "q"), (0, 2, 3));
    end(&mut e, 2, 2);
    assert_eq!(started(&e.schedule(Time(2))), vec![3]);
}

#[test]
fn a_replayed_start_of_a_waiting_element_is_honoured() {
    // A log written under another limit may start an element this engine
    // would have parked: the log is the truth, and the counts stay right.
    let mut e = Engine::new(config());
    submit(&mut e, array("a", "q", 3, Some(1)));
    e.apply(Time(0), &Event::Started { job: JobId(3), alloc: vec![(HostIdx(0), allot_engine::Slots(1))] })
        .expect("pending");
    assert_eq!(load(&e, "q"), (1, 1, 1));
    assert!(started(&e.schedule(Time(0))).is_empty(), "one runs: the limit is reached");
    end(&mut e, 1, 3);
    assert_eq!(started(&e.schedule(Time(1))), vec![1]);
}
