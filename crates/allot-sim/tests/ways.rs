//! spec 000, "Ways to Configure Fairshare", and the remaining rules of the
//! dispatch pass, through configuration text.

use allot_engine::{Decision, Engine, Event, JobId, JobSpec, PendingReason, Time};
use allot_sim::testing::engine_from;

fn job(user: &str, queue: &str) -> JobSpec {
    JobSpec { user: user.into(), queue: Some(queue.into()), slots: 1, ..JobSpec::default() }
}

fn submit(e: &mut Engine, user: &str, queue: &str) -> JobId {
    e.apply(Time(0), &Event::Submit(job(user, queue))).expect("accepted").expect("id")
}

fn users_started(e: &mut Engine, t: u64, ids: &[(JobId, &str)]) -> Vec<String> {
    e.schedule(Time(t))
        .iter()
        .filter_map(|d| match d {
            Decision::Start { job, .. } => ids.iter().find(|(i, _)| i == job).map(|(_, u)| u.to_string()),
            _ => None,
        })
        .collect()
}

const USERS: &str = "Begin UserGroup\nGROUP_NAME GROUP_MEMBER\neng_users (user6 user4)\nacct_users (user2 user5)\nkey_users (boss)\nEnd UserGroup\n";

/// Runs `per_user` one-slot jobs for each user on `slots` slots, one
/// dispatch pass per finished job (each job runs 100 s); returns how many
/// of the first `count` starts each user got.
fn first_starts(files: &[(&str, &str)], queue: &str, users: &[&str], count: usize) -> Vec<usize> {
    let mut e = engine_from(files);
    let mut ids = Vec::new();
    for _ in 0..count {
        for u in users {
            ids.push((submit(&mut e, u, queue), *u));
        }
    }
    let mut order: Vec<String> = Vec::new();
    let mut running: Vec<(u64, JobId)> = Vec::new();
    let mut t = 0;
    while order.len() < count {
        running.retain(|&(end, id)| {
            if end <= t {
                e.apply(Time(t), &Event::Finish { job: id, cpu_time: 50.0, exit: 0 }).expect("finish");
                false
            } else {
                true
            }
        });
        for d in e.schedule(Time(t)) {
            if let Decision::Start { job, .. } = d {
                running.push((t + 100, job));
                order.push(ids.iter().find(|(i, _)| *i == job).map(|(_, u)| u.to_string()).unwrap_or_default());
            }
        }
        t += 10;
    }
    users.iter().map(|u| order.iter().take(count).filter(|o| o == u).count()).collect()
}

#[test]
fn global_fairshare_one_partition_of_all_hosts() {
    // Usage in one queue lowers the user's priority in another.
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 1\nh2 1\nEnd Host\n\
                 Begin HostPartition\nHPART_NAME = GlobalPartition\nHOSTS = all\nUSER_SHARES = [default, 1]\nEnd HostPartition\n";
    let queues = "Begin Queue\nQUEUE_NAME = a\nPRIORITY = 20\nEnd Queue\nBegin Queue\nQUEUE_NAME = b\nPRIORITY = 10\nEnd Queue\n";
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", queues)]);
    let x = submit(&mut e, "u1", "a");
    e.schedule(Time(0));
    let y = submit(&mut e, "u1", "b");
    let z = submit(&mut e, "u2", "b");
    assert_eq!(users_started(&mut e, 60, &[(y, "u1"), (z, "u2")]), ["u2"], "u1's job in queue a counts in b");
    assert!(e.is_running(x));
}

#[test]
fn chargeback_seventy_thirty() {
    // spec 000: eng_users 7 shares, acct_users 3: engineering gets about 70%.
    let hosts = "Begin Host\nHOST_NAME MXJ\nhostH 4\nEnd Host\n\
                 Begin HostPartition\nHPART_NAME = big_servers\nHOSTS = hostH\nUSER_SHARES = [eng_users, 7] [acct_users, 3]\nEnd HostPartition\n";
    let queues = "Begin Queue\nQUEUE_NAME = q\nEnd Queue\n";
    let got = first_starts(
        &[("lsb.users", USERS), ("lsb.hosts", hosts), ("lsb.queues", queues)],
        "q",
        &["user6", "user2"],
        200,
    );
    assert!((130..=150).contains(&got[0]), "engineering got {} of 200", got[0]);
}

#[test]
fn equal_share_splits_evenly() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nh 3\nEnd Host\n\
                 Begin HostPartition\nHPART_NAME = equal_share_partition\nHOSTS = all\nUSER_SHARES = [default, 1]\nEnd HostPartition\n";
    let queues = "Begin Queue\nQUEUE_NAME = q\nEnd Queue\n";
    let got = first_starts(&[("lsb.hosts", hosts), ("lsb.queues", queues)], "q", &["a", "b", "c"], 150);
    for g in &got {
        assert!((45..=55).contains(g), "{got:?}");
    }
}

#[test]
fn priority_users_always_go_first() {
    // spec 000: [key_users@, 2000] [others, 1]: the key user goes first as
    // long as they have jobs waiting, whatever they have used.
    let hosts = "Begin Host\nHOST_NAME MXJ\nh 2\nEnd Host\n";
    let queues =
        "Begin Queue\nQUEUE_NAME = production\nFAIRSHARE = USER_SHARES[[key_users@, 2000] [others, 1]]\nEnd Queue\n";
    let got = first_starts(
        &[("lsb.users", USERS), ("lsb.hosts", hosts), ("lsb.queues", queues)],
        "production",
        &["boss", "user2"],
        60,
    );
    assert_eq!(got, [60, 0]);
}

#[test]
fn static_priority_ignores_usage() {
    // spec 000: every factor 0: the user with more shares always goes first.
    let params = "Begin Parameters\nCPU_TIME_FACTOR = 0\nRUN_TIME_FACTOR = 0\nRUN_JOB_FACTOR = 0\n\
                  COMMITTED_RUN_TIME_FACTOR = 0\nFAIRSHARE_ADJUSTMENT_FACTOR = 0\nEnd Parameters\n";
    let hosts = "Begin Host\nHOST_NAME MXJ\nh 2\nEnd Host\n";
    let queues = "Begin Queue\nQUEUE_NAME = q\nFAIRSHARE = USER_SHARES[[high, 3] [low, 2]]\nEnd Queue\n";
    let got = first_starts(
        &[("lsb.params", params), ("lsb.hosts", hosts), ("lsb.queues", queues)],
        "q",
        &["high", "low"],
        40,
    );
    assert_eq!(got, [40, 0]);
    // With the default factors, usage counts and `low` gets its turns.
    let got = first_starts(&[("lsb.hosts", hosts), ("lsb.queues", queues)], "q", &["high", "low"], 40);
    assert!(got[1] >= 10, "{got:?}");
}

#[test]
fn job_accept_interval_spaces_starts_on_a_host() {
    // JOB_ACCEPT_INTERVAL = 1: a host takes one job of the queue per
    // MBD_SLEEP_TIME (20 s here).
    let params = "Begin Parameters\nMBD_SLEEP_TIME = 20\nEnd Parameters\n";
    let hosts = "Begin Host\nHOST_NAME MXJ\nh 4\nEnd Host\n";
    let queues = "Begin Queue\nQUEUE_NAME = q\nJOB_ACCEPT_INTERVAL = 1\nEnd Queue\n";
    let mut e = engine_from(&[("lsb.params", params), ("lsb.hosts", hosts), ("lsb.queues", queues)]);
    for _ in 0..3 {
        submit(&mut e, "u", "q");
    }
    assert_eq!(e.schedule(Time(0)).len(), 1);
    assert_eq!(e.next_wakeup(), Some(Time(20)));
    assert!(e.schedule(Time(10)).is_empty());
    assert_eq!(e.schedule(Time(20)).len(), 1);
    assert_eq!(e.schedule(Time(40)).len(), 1);
}

#[test]
fn historical_run_time_lets_priority_recover_gradually() {
    // spec 000 (CPU_TIME_FACTOR=0 RUN_JOB_FACTOR=0 RUN_TIME_FACTOR=1): with
    // ENABLE_HIST_RUN_TIME=Y a finished job's run time keeps counting,
    // decaying; without it the priority jumps back at once.
    let priority_after = |hist: &str| {
        let params = format!(
            "Begin Parameters\nCPU_TIME_FACTOR = 0\nRUN_JOB_FACTOR = 0\nRUN_TIME_FACTOR = 1\nENABLE_HIST_RUN_TIME = {hist}\nEnd Parameters\n"
        );
        let hosts = "Begin Host\nHOST_NAME MXJ\nh 1\nEnd Host\n";
        let queues = "Begin Queue\nQUEUE_NAME = q\nFAIRSHARE = USER_SHARES[[u, 1]]\nEnd Queue\n";
        let mut e = engine_from(&[("lsb.params", &params), ("lsb.hosts", hosts), ("lsb.queues", queues)]);
        let j = submit(&mut e, "u", "q");
        e.schedule(Time(0));
        e.apply(Time(3600), &Event::Finish { job: j, cpu_time: 0.0, exit: 0 }).expect("finish");
        let tree = &e.fairshare().policies[0].tree;
        let u = tree.child(allot_engine::shares::NodeId::ROOT, "u").expect("u");
        let inputs = allot_engine::shares::priority::PriorityInputs::default();
        (tree.priority(u, Time(3600), &inputs), tree.priority(u, Time(3600 + 5 * 3600), &inputs))
    };
    assert_eq!(priority_after("N"), (100.0, 100.0), "no usage left: 1 share / 0.01");
    let (just_after, later) = priority_after("Y");
    assert!((just_after - 1.0).abs() < 1e-9, "1 share / 1 hour: {just_after}");
    assert!((later - 10.0).abs() < 1e-6, "one hour decays to 0.1 after HIST_HOURS: {later}");
}

#[test]
fn committed_run_time_drops_priority_at_dispatch() {
    let params = "Begin Parameters\nCPU_TIME_FACTOR = 0\nRUN_JOB_FACTOR = 0\nRUN_TIME_FACTOR = 1\nCOMMITTED_RUN_TIME_FACTOR = 1\nEnd Parameters\n";
    let hosts = "Begin Host\nHOST_NAME MXJ\nh 1\nEnd Host\n";
    let queues = "Begin Queue\nQUEUE_NAME = q\nFAIRSHARE = USER_SHARES[[u, 1]]\nRUNLIMIT = 120\nEnd Queue\n";
    let mut e = engine_from(&[("lsb.params", params), ("lsb.hosts", hosts), ("lsb.queues", queues)]);
    submit(&mut e, "u", "q");
    e.schedule(Time(0));
    let tree = &e.fairshare().policies[0].tree;
    let u = tree.child(allot_engine::shares::NodeId::ROOT, "u").expect("u");
    let inputs = allot_engine::shares::priority::PriorityInputs::default();
    // RUNLIMIT 2 hours committed at once: 1 / 2 from the first second on.
    assert!((tree.priority(u, Time(0), &inputs) - 0.5).abs() < 1e-9);
    assert!((tree.priority(u, Time(3600), &inputs) - 0.5).abs() < 1e-9);
}

#[test]
fn pending_reason_names_the_user_ahead() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nh 1\nEnd Host\n";
    let queues = "Begin Queue\nQUEUE_NAME = q\nFAIRSHARE = USER_SHARES[[a, 10] [b, 1]]\nEnd Queue\n";
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", queues)]);
    let b = submit(&mut e, "b", "q");
    let _a = submit(&mut e, "a", "q");
    // Nothing dispatched yet: b's job waits behind a's higher priority.
    assert_eq!(e.pending_reason(b, Time(0)), Some(PendingReason::LowerPriority { than: "a".into() }));
    assert_eq!(
        PendingReason::LowerPriority { than: "a".into() }.to_string(),
        "A user with a higher fairshare priority goes first (a)"
    );
}

#[test]
fn a_host_that_goes_down_takes_no_jobs() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 1\nh2 1\nEnd Host\n";
    let queues = "Begin Queue\nQUEUE_NAME = q\nEnd Queue\n";
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", queues)]);
    e.apply(Time(0), &Event::HostDown(allot_engine::HostIdx(0))).expect("down");
    let a = submit(&mut e, "u", "q");
    let b = submit(&mut e, "u", "q");
    let d = e.schedule(Time(0));
    assert_eq!(d, [Decision::Start { job: a, alloc: vec![(allot_engine::HostIdx(1), allot_engine::Slots(1))] }]);
    assert_eq!(e.pending_reason(b, Time(0)), Some(PendingReason::NotEnoughSlots { need: 1, free: 0 }));
    e.apply(Time(5), &Event::HostUp(allot_engine::HostIdx(0))).expect("up");
    assert_eq!(
        e.schedule(Time(5)),
        [Decision::Start { job: b, alloc: vec![(allot_engine::HostIdx(0), allot_engine::Slots(1))] }]
    );
}

#[test]
fn job_accept_interval_of_lsb_params_and_a_parallel_jobs_hosts() {
    // spec 004: "The JOB_ACCEPT_INTERVAL parameter in lsb.params or
    // lsb.queues ... applies to all allocated hosts of a parallel job".
    // lsb.params sets 1 (one MBD_SLEEP_TIME, 20 s); queue `now` sets its
    // own 0 and is not spaced.
    let params = "Begin Parameters\nMBD_SLEEP_TIME = 20\nJOB_ACCEPT_INTERVAL = 1\nEnd Parameters\n";
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 4\nh2 4\nEnd Host\n";
    let queues = "Begin Queue\nQUEUE_NAME = q\nEnd Queue\n\
                  Begin Queue\nQUEUE_NAME = now\nJOB_ACCEPT_INTERVAL = 0\nEnd Queue\n";
    let mut e = engine_from(&[("lsb.params", params), ("lsb.hosts", hosts), ("lsb.queues", queues)]);
    // A parallel job over both hosts (4 on h1, 2 on h2), then two single
    // jobs for h2's 2 free slots: h2 waits out the interval too, and then
    // takes one job per interval.
    let spec = JobSpec { user: "u".into(), queue: Some("q".into()), slots: 6, ..JobSpec::default() };
    e.apply(Time(0), &Event::Submit(spec)).expect("accepted");
    assert_eq!(e.schedule(Time(0)).len(), 1);
    submit(&mut e, "u", "q");
    submit(&mut e, "u", "q");
    assert!(e.schedule(Time(10)).is_empty(), "h2, the parallel job's second host, took it 10 s ago");
    assert_eq!(e.schedule(Time(20)).len(), 1, "one once the interval is over");
    assert!(e.schedule(Time(30)).is_empty());
    assert_eq!(e.schedule(Time(40)).len(), 1);
    // The queue with its own 0 is not spaced.
    let mut e = engine_from(&[("lsb.params", params), ("lsb.hosts", hosts), ("lsb.queues", queues)]);
    for _ in 0..3 {
        submit(&mut e, "u", "now");
    }
    assert_eq!(e.schedule(Time(0)).len(), 3);
}
