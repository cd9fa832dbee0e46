//! The engine's dispatch pass against spec 000, driven from configuration
//! text.

use allot_engine::{Decision, Engine, Event, JobId, JobSpec, KillReason, PendingReason, Rejection, Time};
use allot_sim::testing::{engine_from, started};

const ONE_BIG_HOST: &str = "Begin Host\nHOST_NAME MXJ\nhostA 100\nEnd Host\n";

fn queue(name: &str, priority: i32, extra: &str) -> String {
    format!("Begin Queue\nQUEUE_NAME = {name}\nPRIORITY = {priority}\n{extra}\nEnd Queue\n")
}

fn fairshare_queue(name: &str, priority: i32) -> String {
    queue(name, priority, "FAIRSHARE = USER_SHARES[[default, 1]]")
}

fn job(user: &str, queue: &str, slots: u32) -> JobSpec {
    JobSpec { user: user.into(), queue: Some(queue.into()), slots, ..JobSpec::default() }
}

fn submit(e: &mut Engine, spec: JobSpec) -> JobId {
    e.apply(Time(0), &Event::Submit(spec)).expect("accepted").expect("a job id")
}

/// spec 000: queues A, B, C configured in that order with equal priority;
/// jobs submitted to C B A B A; returns the order they are dispatched in,
/// as queue names.
fn cbaba(a_fs: bool, b_fs: bool, c_fs: bool) -> String {
    let q = |name, fs| if fs { fairshare_queue(name, 10) } else { queue(name, 10, "") };
    let queues = q("A", a_fs) + &q("B", b_fs) + &q("C", c_fs);
    let mut e = engine_from(&[("lsb.hosts", ONE_BIG_HOST), ("lsb.queues", &queues)]);
    let names = ["C", "B", "A", "B", "A"];
    for n in names {
        submit(&mut e, job("u1", n, 1));
    }
    started(&e.schedule(Time(0))).iter().map(|&id| names[id as usize - 1]).collect::<Vec<_>>().join(" ")
}

#[test]
fn cbaba_all_fcfs() {
    assert_eq!(cbaba(false, false, false), "C B A B A");
}

#[test]
fn cbaba_all_fairshare() {
    assert_eq!(cbaba(true, true, true), "A A B B C");
}

#[test]
fn cbaba_a_and_c_fairshare_b_fcfs() {
    assert_eq!(cbaba(true, false, true), "A A B B C");
}

#[test]
fn cbaba_a_and_c_fcfs_b_fairshare() {
    assert_eq!(cbaba(false, true, false), "C A A B B");
}

#[test]
fn higher_priority_queues_go_first() {
    let queues = queue("low", 10, "") + &queue("high", 50, "");
    let mut e = engine_from(&[("lsb.hosts", ONE_BIG_HOST), ("lsb.queues", &queues)]);
    submit(&mut e, job("u", "low", 1));
    submit(&mut e, job("u", "high", 1));
    assert_eq!(started(&e.schedule(Time(0))), [2, 1]);
}

#[test]
fn fairshare_serves_the_user_with_the_highest_dynamic_priority() {
    // One slot at a time: u1 already runs a job, so u2 (submitted after u1's
    // second job) goes next; then u1 again, since u2 now has a job too and
    // both have equal shares and usage... u1 first in configuration order.
    let hosts = "Begin Host\nHOST_NAME MXJ\nh 2\nEnd Host\n";
    let queues = queue("q", 10, "FAIRSHARE = USER_SHARES[[u1, 1] [u2, 1]]");
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    let a1 = submit(&mut e, job("u1", "q", 1));
    assert_eq!(started(&e.schedule(Time(0))), [a1.0]);
    let a2 = submit(&mut e, job("u1", "q", 1));
    let b1 = submit(&mut e, job("u2", "q", 1));
    assert_eq!(started(&e.schedule(Time(10))), [b1.0], "u1 holds a slot: u2 has the higher priority");
    assert!(e.is_pending(a2));
    assert_eq!(e.pending_reason(a2, Time(10)), Some(PendingReason::NotEnoughSlots { need: 1, free: 0 }));
}

#[test]
fn a_user_without_shares_cannot_submit_to_a_fairshare_queue() {
    let queues = queue("q", 10, "FAIRSHARE = USER_SHARES[[alice, 1]]");
    let mut e = engine_from(&[("lsb.hosts", ONE_BIG_HOST), ("lsb.queues", &queues)]);
    let err = e.apply(Time(0), &Event::Submit(job("root", "q", 1))).expect_err("no shares");
    assert_eq!(err.to_string(), "user `root` has no share assignment in `q`");
}

#[test]
fn users_restricts_who_may_submit() {
    let users = "Begin UserGroup\nGROUP_NAME GROUP_MEMBER\nstaff (ann bob)\nEnd UserGroup\n";
    let queues = queue("q", 10, "USERS = staff carl");
    let mut e = engine_from(&[("lsb.hosts", ONE_BIG_HOST), ("lsb.users", users), ("lsb.queues", &queues)]);
    assert!(e.submit(&job("bob", "q", 1)).is_ok());
    assert!(e.submit(&job("carl", "q", 1)).is_ok());
    assert_eq!(e.submit(&job("dan", "q", 1)), Err(Rejection::UserNotAllowed { user: "dan".into(), queue: "q".into() }));
    assert!(matches!(e.submit(&job("bob", "nosuch", 1)), Err(Rejection::NoSuchQueue(_))));
    assert!(matches!(e.submit(&job("bob", "q", 101)), Err(Rejection::TooManySlots { .. })));
}

#[test]
fn queue_user_host_and_processor_limits() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 4\nh2 4\nEnd Host\n";
    let cluster = "Begin Host\nHOSTNAME model type server RESOURCES ncpus\nh1 ! ! 1 () 2\nh2 ! ! 1 () 2\nEnd Host\n";
    // QJOB_LIMIT 5 for the queue, UJOB_LIMIT 3 per user, HJOB_LIMIT 3 per
    // host; PJOB_LIMIT 1 per CPU (2 CPUs) in `p`.
    let queues = queue("q", 10, "QJOB_LIMIT = 5\nUJOB_LIMIT = 3\nHJOB_LIMIT = 3") + &queue("p", 5, "PJOB_LIMIT = 1");
    let mut e = engine_from(&[("lsf.cluster.c", cluster), ("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    let ids: Vec<JobId> = (0..4).map(|_| submit(&mut e, job("u1", "q", 1))).collect();
    let v0 = submit(&mut e, job("u2", "q", 1));
    let d1 = e.schedule(Time(0));
    assert_eq!(started(&d1), [ids[0].0, ids[1].0, ids[2].0, v0.0], "UJOB_LIMIT 3 for u1");
    assert_eq!(e.pending_reason(ids[3], Time(0)), Some(PendingReason::UserQueueLimit { queue: "q".into(), limit: 3 }));
    let v1 = submit(&mut e, job("u2", "q", 1));
    let v2 = submit(&mut e, job("u2", "q", 1));
    let d2 = e.schedule(Time(0));
    assert_eq!(started(&d2), [v1.0], "QJOB_LIMIT 5 for the queue");
    assert_eq!(e.pending_reason(v2, Time(0)), Some(PendingReason::QueueLimit { queue: "q".into(), limit: 5 }));
    let hosts_of = |d: &[Decision]| -> Vec<Vec<(u32, u32)>> {
        d.iter()
            .filter_map(|x| {
                if let Decision::Start { alloc, .. } = x {
                    Some(alloc.iter().map(|&(h, n)| (h.0, n.0)).collect())
                } else {
                    None
                }
            })
            .collect()
    };
    let d: Vec<Decision> = d1.into_iter().chain(d2).collect();
    assert_eq!(hosts_of(&d), [vec![(0, 1)], vec![(0, 1)], vec![(0, 1)], vec![(1, 1)], vec![(1, 1)]], "HJOB 3 on h1");
    // `p`: 2 CPUs per host at 1 job slot per CPU; h1 has 1 slot left (MXJ
    // 4, 3 used), h2 2 (4, 2 used): p gets 1 on h1 and 2 on h2.
    let p: Vec<JobId> = (0..4).map(|_| submit(&mut e, job("u3", "p", 1))).collect();
    let d = e.schedule(Time(1));
    assert_eq!(started(&d), [p[0].0, p[1].0, p[2].0]);
    assert_eq!(hosts_of(&d), [vec![(0, 1)], vec![(1, 1)], vec![(1, 1)]]);
}

#[test]
fn user_max_jobs_caps_slots_across_queues() {
    let users = "Begin User\nUSER_NAME MAX_JOBS\nu1 2\ndefault 10\nEnd User\n";
    let queues = queue("a", 20, "") + &queue("b", 10, "");
    let mut e = engine_from(&[("lsb.hosts", ONE_BIG_HOST), ("lsb.users", users), ("lsb.queues", &queues)]);
    let x = submit(&mut e, job("u1", "a", 1));
    let y = submit(&mut e, job("u1", "b", 1));
    let z = submit(&mut e, job("u1", "b", 1));
    assert_eq!(started(&e.schedule(Time(0))), [x.0, y.0]);
    assert_eq!(e.pending_reason(z, Time(0)), Some(PendingReason::UserLimit { limit: 2 }));
}

#[test]
fn run_limits_kill_at_the_deadline() {
    let queues = queue("q", 10, "RUNLIMIT = 10 60");
    let mut e = engine_from(&[("lsb.hosts", ONE_BIG_HOST), ("lsb.queues", &queues)]);
    let own = submit(&mut e, JobSpec { run_limit: Some(120), ..job("u", "q", 1) });
    let default = submit(&mut e, job("u", "q", 1));
    let too_long = e.submit(&JobSpec { run_limit: Some(3601), ..job("u", "q", 1) });
    assert!(matches!(too_long, Err(Rejection::RunLimitTooLong { max: 3600, .. })));
    assert_eq!(started(&e.schedule(Time(0))), [own.0, default.0]);
    assert_eq!(e.next_wakeup(), Some(Time(120)), "-W 2 minutes");
    assert!(e.schedule(Time(119)).is_empty());
    assert_eq!(e.schedule(Time(120)), [Decision::Kill { job: own, reason: KillReason::RunLimit }]);
    assert_eq!(e.next_wakeup(), Some(Time(600)), "the RUNLIMIT default, 10 minutes");
    e.apply(Time(120), &Event::Finish { job: own, cpu_time: 0.0, exit: 0 }).expect("finish");
    assert_eq!(e.schedule(Time(600)), [Decision::Kill { job: default, reason: KillReason::RunLimit }]);
}

/// `bmod -W` of a running job: it ends at the new limit, counted from
/// its start; one it has run past ends it at the next pass; the queue's
/// RUNLIMIT maximum holds as at submission.
#[test]
fn a_running_jobs_run_limit_changes_where_it_ends() {
    let queues = queue("q", 10, "RUNLIMIT = 10 60");
    let mut e = engine_from(&[("lsb.hosts", ONE_BIG_HOST), ("lsb.queues", &queues)]);
    let longer = submit(&mut e, JobSpec { run_limit: Some(120), ..job("u", "q", 1) });
    let shorter = submit(&mut e, JobSpec { run_limit: Some(1200), ..job("u", "q", 1) });
    assert_eq!(started(&e.schedule(Time(0))), [longer.0, shorter.0]);
    let modify = |e: &mut Engine, id, limit, t| e.apply(Time(t), &Event::RunLimit { job: id, limit });
    modify(&mut e, longer, Some(300), 100).expect("longer");
    assert!(e.schedule(Time(120)).is_empty(), "not at the old limit");
    modify(&mut e, shorter, Some(60), 200).expect("already past it");
    assert_eq!(e.schedule(Time(200)), [Decision::Kill { job: shorter, reason: KillReason::RunLimit }]);
    assert_eq!(e.schedule(Time(300)), [Decision::Kill { job: longer, reason: KillReason::RunLimit }]);
    let refused = modify(&mut e, longer, Some(3601), 300);
    assert!(matches!(refused, Err(Rejection::RunLimitTooLong { max: 3600, .. })), "{refused:?}");
    let waiting = submit(&mut e, JobSpec { slots: 100, ..job("u", "q", 1) });
    assert_eq!(
        modify(&mut e, waiting, Some(60), 300),
        Err(Rejection::NotRunning(waiting)),
        "a pending job's is bmod's"
    );
}

#[test]
fn a_pass_with_nothing_new_decides_nothing() {
    let queues = fairshare_queue("q", 10);
    let hosts = "Begin Host\nHOST_NAME MXJ\nh 1\nEnd Host\n";
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    let a = submit(&mut e, job("u", "q", 1));
    let b = submit(&mut e, job("u", "q", 1));
    assert_eq!(started(&e.schedule(Time(0))), [a.0]);
    assert!(e.schedule(Time(5)).is_empty());
    e.apply(Time(9), &Event::Finish { job: a, cpu_time: 9.0, exit: 0 }).expect("finish");
    assert_eq!(started(&e.schedule(Time(9))), [b.0]);
}

#[test]
fn cross_queue_fairshare_charges_one_tree_and_dispatch_order_queue_orders_by_queue() {
    // u1 has run in `short`; in the set's one tree that lowers u1 in
    // `normal` too. Without DISPATCH_ORDER=QUEUE the set is one unit: u2's
    // job in the low queue goes before u1's in the high one.
    let hosts = "Begin Host\nHOST_NAME MXJ\nh 3\nEnd Host\n";
    let set = |order: &str| {
        queue("normal", 30, &format!("FAIRSHARE = USER_SHARES[[default, 1]]\nFAIRSHARE_QUEUES = short{order}"))
            + &queue("short", 40, "")
    };
    for (order, expect) in [("", vec![3, 2]), ("\nDISPATCH_ORDER = QUEUE", vec![2, 3])] {
        let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &set(order))]);
        let first = submit(&mut e, job("u1", "short", 1));
        assert_eq!(started(&e.schedule(Time(0))), [first.0]);
        submit(&mut e, job("u1", "short", 1));
        submit(&mut e, job("u2", "normal", 1));
        assert_eq!(started(&e.schedule(Time(100))), expect, "DISPATCH_ORDER `{order}`");
    }
}

#[test]
fn host_partition_usage_is_shared_by_every_queue_on_its_hosts() {
    // spec 000: a user's priority is the same in every queue that uses the
    // partition's hosts; hosts in no partition are FCFS.
    let hosts = "Begin Host\nHOST_NAME MXJ\np1 2\nfree 1\nEnd Host\n\
                 Begin HostPartition\nHPART_NAME = part\nHOSTS = p1\nUSER_SHARES = [u1, 1] [u2, 1]\nEnd HostPartition\n";
    let queues = queue("a", 20, "HOSTS = p1") + &queue("b", 10, "HOSTS = p1") + &queue("c", 5, "HOSTS = free");
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    let x = submit(&mut e, job("u1", "a", 1));
    assert_eq!(started(&e.schedule(Time(0))), [x.0]);
    // In queue b, u2's job goes before u1's older one: u1's usage in queue
    // a counts in the partition.
    let y = submit(&mut e, job("u1", "b", 1));
    let z = submit(&mut e, job("u2", "b", 1));
    assert_eq!(started(&e.schedule(Time(60))), [z.0]);
    assert!(e.is_pending(y));
    // Anyone may use the FCFS host.
    let w = submit(&mut e, job("u9", "c", 1));
    assert_eq!(started(&e.schedule(Time(61))), [w.0]);
    let err = e.submit(&job("u9", "a", 1)).expect_err("u9 has no shares in the partition");
    assert!(matches!(err, Rejection::Shares(_)), "{err}");
}

#[test]
fn priority_drops_while_running_and_recovers_after() {
    let queues = queue("q", 10, "FAIRSHARE = USER_SHARES[[u1, 1] [u2, 1]]");
    let hosts = "Begin Host\nHOST_NAME MXJ\nh 1\nEnd Host\n";
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    let a = submit(&mut e, job("u1", "q", 1));
    e.schedule(Time(0));
    let tree = |e: &Engine| e.fairshare().policies[0].tree.clone();
    let inputs = allot_engine::shares::priority::PriorityInputs::default();
    let u1 = |e: &Engine, t| {
        let t2 = tree(e);
        t2.priority(t2.child(allot_engine::shares::NodeId::ROOT, "u1").expect("u1"), Time(t), &inputs)
    };
    let p_start = u1(&e, 0);
    let p_later = u1(&e, 3600);
    assert!(p_later < p_start, "run time counts: {p_later} < {p_start}");
    e.apply(Time(3600), &Event::Finish { job: a, cpu_time: 3600.0, exit: 0 }).expect("finish");
    let p_after = u1(&e, 3600);
    let p_much_later = u1(&e, 3600 * 20);
    assert!(p_after > p_later, "slots and run time free up");
    assert!(p_much_later > p_after, "CPU time decays");
    assert!((p_much_later - 1.0 / 3.0).abs() < 1e-3, "back to shares / RUN_JOB_FACTOR: {p_much_later}");
}

#[test]
fn the_same_events_give_the_same_decisions() {
    let run = || {
        let queues = fairshare_queue("fs", 20) + &queue("fcfs", 10, "");
        let hosts = "Begin Host\nHOST_NAME MXJ\nh1 3\nh2 5\nEnd Host\n";
        let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
        let mut log = Vec::new();
        let mut running: Vec<(u64, JobId)> = Vec::new();
        for step in 0..400u64 {
            let t = step * 7;
            let user = format!("u{}", (step * 31) % 7);
            let q = if step % 3 == 0 { "fcfs" } else { "fs" };
            let _ = e.submit(&job(&user, q, 1 + (step % 4) as u32));
            running.retain(|&(end, id)| {
                if end <= t {
                    e.apply(Time(t), &Event::Finish { job: id, cpu_time: 1.0, exit: 0 }).expect("finish");
                    false
                } else {
                    true
                }
            });
            for d in e.schedule(Time(t)) {
                if let Decision::Start { job, .. } = &d {
                    running.push((t + 10 + (job.0 * 13) % 50, *job));
                }
                log.push(format!("{t} {d:?}"));
            }
        }
        log
    };
    let first = run();
    assert!(first.len() > 200, "the workload ran: {}", first.len());
    assert_eq!(first, run());
}

#[test]
fn a_replayed_start_books_the_job_as_a_decided_one() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 2\nh2 2\nEnd Host\n";
    let queues = fairshare_queue("q", 10);
    let mut live = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    let mut replay = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    for e in [&mut live, &mut replay] {
        submit(e, job("u1", "q", 3));
        submit(e, job("u2", "q", 2));
    }
    let decisions = live.schedule(Time(5));
    for d in &decisions {
        if let Decision::Start { job, alloc } = d {
            replay.apply(Time(5), &Event::Started { job: *job, alloc: alloc.clone() }).expect("pending");
        }
    }
    let one = |h: u32| vec![(allot_engine::HostIdx(h), allot_engine::Slots(1))];
    assert_eq!(
        replay.apply(Time(5), &Event::Started { job: JobId(1), alloc: one(0) }),
        Err(Rejection::NotDispatchable(JobId(1))),
        "already running"
    );
    // What a log says that this engine cannot do is refused, naming why.
    let third = submit(&mut replay, job("u1", "q", 1));
    assert_eq!(
        replay.apply(Time(5), &Event::Started { job: third, alloc: one(7) }),
        Err(Rejection::UnknownHost { job: third, host: 7 })
    );
    assert_eq!(
        replay.apply(Time(5), &Event::Preempted { job: third, by: JobId(1) }),
        Err(Rejection::NotRunning(third))
    );
    assert_eq!(replay.apply(Time(5), &Event::Resumed(JobId(1))), Err(Rejection::NotPreempted(JobId(1))));
    assert_eq!(replay.apply(Time(5), &Event::Unstarted(third)), Err(Rejection::NotRunning(third)));
    assert_eq!(replay.apply(Time(5), &Event::Finish { job: third, cpu_time: 0.0, exit: 130 }), Ok(None));
    assert_eq!(live.queue_load("q"), replay.queue_load("q"));
    assert_eq!(live.used_slots(), replay.used_slots());
    let tree = |e: &Engine| format!("{:?}", e.fairshare().policies[0].tree.share_tables(Time(9), &Default::default()));
    assert_eq!(tree(&live), tree(&replay), "the same usage charged");
    assert_eq!(live.schedule(Time(9)), replay.schedule(Time(9)));
}
