//! Handing over (spec 004, "Reserving Processors", with the module docs of
//! the engine's `handover`): a reservation given up at its
//! MAX_RESERVE_TIME and taken again where it is by the next job decides
//! what letting go at once decides, whether it is kept parked between
//! passes (as a replay does) or lets go at the end of each.

mod common;

use common::*;

use allot_engine::{Engine, Event, HostIdx, Setting, Time};
use allot_sim::machine::{BACKFILL_RESERVE_CYCLES, Policy, default_engine, reserve};
use allot_sim::sim::{Outcome, SimOptions, run};
use allot_sim::testing::engine_from;
use allot_sim::workload::{Machine, Workload, WorkloadJob};
use proptest::prelude::*;

/// How a replay treats a reservation given up at its expiry.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expiry {
    /// Lets go at once.
    LetGo,
    /// Handed over where it is, letting go by the end of the pass.
    HandOver,
    /// Handed over where it is, kept parked between passes (as `allot
    /// sim` does).
    Keep,
}

/// Replays `w` as `allot sim --reserve` (or `--backfill`) does; returns
/// what happened and how many reservations were handed over.
fn replay(w: &Workload, policy: Policy, backfill: bool, expiry: Expiry) -> (Outcome, u64) {
    let mut config = default_engine(w, policy);
    reserve(&mut config, backfill, BACKFILL_RESERVE_CYCLES);
    let mut e = Engine::new(config);
    e.apply(Time(0), &Event::Setting(Setting::Handover(expiry != Expiry::LetGo))).expect("set");
    let opts = SimOptions { let_go_each_pass: expiry != Expiry::Keep, ..SimOptions::default() };
    let out = run(&mut e, w, &opts, &|_, _| serde_json::Value::Null, &mut |_| {});
    (out, e.handovers())
}

/// `jobs` on four one-slot hosts.
fn four_hosts(jobs: Vec<WorkloadJob>) -> Workload {
    Workload {
        jobs,
        skipped: Vec::new(),
        actions: Vec::new(),
        machine: Machine { max_procs: Some(4), max_nodes: Some(4), ..Machine::default() },
    }
}

fn same(a: &Outcome, b: &Outcome) -> Result<(), TestCaseError> {
    prop_assert_eq!(&a.records, &b.records);
    prop_assert_eq!(&a.never_started, &b.never_started);
    prop_assert_eq!(a.passes, b.passes);
    Ok(())
}

/// Four one-slot hosts, one held by a long job: two 4-slot jobs take
/// turns holding the other three, each for MAX_RESERVE_TIME[5] (300
/// s), handed over from one to the other at each expiry, until the
/// long job ends. The replay is the one where each lets go at once.
#[test]
fn two_jobs_take_turns_holding_the_same_hosts() {
    let w = four_hosts(vec![
        wjob(1, "long", 0, 1, 10_000, Some(10_000)),
        wjob(2, "alice", 10, 4, 100, Some(100)),
        wjob(3, "bob", 10, 4, 100, Some(100)),
    ]);
    let (with, handovers) = replay(&w, Policy::Fairshare, true, Expiry::HandOver);
    let (kept, kept_handovers) = replay(&w, Policy::Fairshare, true, Expiry::Keep);
    let (without, none) = replay(&w, Policy::Fairshare, true, Expiry::LetGo);
    assert_eq!(none, 0);
    // Expiries at 310, 610, ..., 9,910: 33, each taken by the other.
    assert_eq!((handovers, kept_handovers), (33, 33));
    same(&with, &without).expect("the same replay");
    same(&kept, &without).expect("the same replay");
    let starts: Vec<(u64, u64)> = with.records.iter().map(|r| (r.id, r.start)).collect();
    assert_eq!(starts.iter().filter(|s| s.0 > 1).map(|s| s.1).collect::<Vec<_>>(), [10_000, 10_100]);
}

/// Four one-slot hosts, one held by a long job: alice's 4-slot job alone
/// reserves the other three, and at each expiry gives them up for the
/// pass. Kept parked, the hosts stay as they are until her next turn,
/// and she takes them back where they are: a hand-over each time (the
/// replay letting go at the pass's end hands over none). Bob's 1-slot
/// job submitted after the first expiry (at 330) starts at once all the
/// same, as a backfill on what she took back.
#[test]
fn a_reservation_kept_parked_is_taken_back_where_it_is() {
    let w = four_hosts(vec![
        wjob(1, "long", 0, 1, 2_000, Some(2_000)),
        wjob(2, "alice", 10, 4, 100, Some(100)),
        wjob(3, "bob", 330, 1, 20, Some(20)),
    ]);
    let (kept, kept_handovers) = replay(&w, Policy::Fairshare, true, Expiry::Keep);
    let (each, handovers) = replay(&w, Policy::Fairshare, true, Expiry::HandOver);
    let (without, _) = replay(&w, Policy::Fairshare, true, Expiry::LetGo);
    same(&kept, &without).expect("the same replay");
    same(&each, &without).expect("the same replay");
    let starts: Vec<(u64, u64)> = kept.records.iter().map(|r| (r.id, r.start)).collect();
    assert!(starts.contains(&(3, 330)), "{starts:?}");
    assert!(starts.contains(&(2, 2_000)), "{starts:?}");
    // Expiries at 310 (taken back at 330, bob's pass), 630, 990, 1,350
    // and 1,710 (each taken back at the cycle after).
    assert_eq!((handovers, kept_handovers), (0, 5));
    assert_eq!(kept.records.iter().find(|r| r.id == 3).map(|r| r.hosts.as_str()), Some("node2*1"));
}

/// A host the next job may not use (another partition's) is not
/// handed over: alice's job holds h2 to h4; at its expiry bob's job,
/// whose partition has h1 and h2 only, holds h2 alone, as it would had
/// alice's let go at once.
#[test]
fn a_host_the_next_job_may_not_use_stays_free() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 1\nh2 1\nh3 1\nh4 1\nEnd Host\n\
                 Begin HostPartition\nHPART_NAME = pb\nHOSTS = h1 h2\nUSER_SHARES = [alice, 1] [bob, 1]\nEnd HostPartition\n\
                 Begin HostPartition\nHPART_NAME = pa\nHOSTS = h3 h4\nUSER_SHARES = [alice, 1]\nEnd HostPartition\n";
    let queues = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[5]\nBACKFILL = Y");
    for handover in [true, false] {
        let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
        e.apply(Time(0), &Event::Setting(Setting::Handover(handover))).expect("set");
        let as_user = |user: &str, slots: u32, minutes: Option<u64>| allot_engine::JobSpec {
            user: user.into(),
            ..job("normal", slots, minutes, None)
        };
        let long = submit(&mut e, Time(0), as_user("bob", 1, Some(100)));
        assert_eq!(pass(&mut e, Time(0)), [long.0]);
        let a = submit(&mut e, Time(0), as_user("alice", 4, Some(10)));
        let b = submit(&mut e, Time(0), as_user("bob", 4, Some(10)));
        assert_eq!(pass(&mut e, Time(0)), Vec::<u64>::new());
        assert_eq!(
            e.reservation(a).map(|r| r.1),
            Some(vec![
                (HostIdx(1), allot_engine::Slots(1)),
                (HostIdx(2), allot_engine::Slots(1)),
                (HostIdx(3), allot_engine::Slots(1))
            ])
        );
        assert_eq!(pass(&mut e, Time(300)), Vec::<u64>::new());
        assert_eq!(e.reservation(a), None, "alice's job gave up all it held");
        assert_eq!(
            e.reservation(b).map(|r| r.1),
            Some(vec![(HostIdx(1), allot_engine::Slots(1))]),
            "bob's job holds h2 only"
        );
        assert_eq!(e.handovers(), 0);
    }
}

/// Kept parked between passes, a reservation lets go at the next event
/// that may change its hosts: h3 going down after alice's reservation of
/// h2 to h4 expired leaves her h2 and h4 to reserve at the next cycle,
/// kept or not. (Were the hosts still holding it, the free count would
/// count h3's slot: a debug assertion says so.)
#[test]
fn a_host_event_lets_a_kept_reservation_go() {
    let queues = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[5]");
    for keep in [true, false] {
        let mut e = engine_from(&[
            ("lsb.hosts", "Begin Host\nHOST_NAME MXJ\nh1 1\nh2 1\nh3 1\nh4 1\nEnd Host\n"),
            ("lsb.queues", &queues),
        ]);
        e.apply(Time(0), &Event::Setting(Setting::KeepParked(keep))).expect("set");
        let as_user = |user: &str, slots: u32| allot_engine::JobSpec {
            user: user.into(),
            ..job("normal", slots, Some(100), None)
        };
        let long = submit(&mut e, Time(0), as_user("bob", 1));
        assert_eq!(pass(&mut e, Time(0)), [long.0]);
        let a = submit(&mut e, Time(0), as_user("alice", 4));
        assert_eq!(pass(&mut e, Time(0)), Vec::<u64>::new());
        assert_eq!(
            e.reservation(a).map(|r| r.1),
            Some(vec![
                (HostIdx(1), allot_engine::Slots(1)),
                (HostIdx(2), allot_engine::Slots(1)),
                (HostIdx(3), allot_engine::Slots(1))
            ])
        );
        assert_eq!(pass(&mut e, Time(300)), Vec::<u64>::new());
        assert_eq!(e.reservation(a), None, "alice's job gave up all it held");
        e.apply(Time(330), &allot_engine::Event::HostDown(allot_engine::HostIdx(2))).expect("h3 goes down");
        assert_eq!(pass(&mut e, Time(360)), Vec::<u64>::new());
        assert_eq!(
            e.reservation(a).map(|r| r.1),
            Some(vec![(HostIdx(1), allot_engine::Slots(1)), (HostIdx(3), allot_engine::Slots(1))]),
            "keep {keep}"
        );
    }
}

/// Handed over, hosts are held in the order the next job would have
/// reserved them: alice's job reserved h4, h3, h2 (`order[maxmem]`);
/// bob's, placed without requirements, holds h2, h3, h4.
#[test]
fn the_next_job_holds_the_hosts_in_its_own_order() {
    let cluster = "Begin Host\nHOSTNAME model type server RESOURCES ncpus maxmem\n\
                   h1 ! LINUX 1 () 1 100\nh2 ! LINUX 1 () 1 200\nh3 ! LINUX 1 () 1 300\nh4 ! LINUX 1 () 1 400\nEnd Host\n";
    let queues = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[5]\nBACKFILL = Y");
    for handover in [true, false] {
        let mut e = engine_from(&[("lsf.cluster.c", cluster), ("lsb.queues", &queues)]);
        e.apply(Time(0), &Event::Setting(Setting::Handover(handover))).expect("set");
        let as_user = |user: &str, slots: u32, r: Option<&str>| allot_engine::JobSpec {
            user: user.into(),
            ..job("normal", slots, Some(10), r)
        };
        let long = submit(&mut e, Time(0), as_user("bob", 1, None));
        assert_eq!(pass(&mut e, Time(0)), [long.0]);
        let a = submit(&mut e, Time(0), as_user("alice", 4, Some("order[maxmem]")));
        let b = submit(&mut e, Time(0), as_user("bob", 4, None));
        assert_eq!(pass(&mut e, Time(0)), Vec::<u64>::new());
        assert_eq!(
            e.reservation(a).map(|r| r.1),
            Some(vec![
                (HostIdx(3), allot_engine::Slots(1)),
                (HostIdx(2), allot_engine::Slots(1)),
                (HostIdx(1), allot_engine::Slots(1))
            ])
        );
        assert_eq!(pass(&mut e, Time(300)), Vec::<u64>::new());
        assert_eq!(
            e.reservation(b).map(|r| r.1),
            Some(vec![
                (HostIdx(1), allot_engine::Slots(1)),
                (HostIdx(2), allot_engine::Slots(1)),
                (HostIdx(3), allot_engine::Slots(1))
            ])
        );
        assert_eq!(e.handovers(), 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any workload decides the same with reservations handed over as
    /// with every reservation letting go at once.
    #[test]
    fn handing_over_decides_as_letting_go(
        nodes in 1u64..7,
        per_node in 1u64..3,
        // User, submission, slots (a share of the machine), run time,
        // run limit (none, or the run time times 1 to 3).
        specs in prop::collection::vec((0u8..3, 0u64..4_000, 0.0f64..1.0, 30u64..2_000, 0u8..4), 1..30),
        fairshare in any::<bool>(),
        backfill in any::<bool>(),
        // Times in whole minutes: jobs end as reservations expire.
        minutes in any::<bool>(),
    ) {
        let procs = nodes * per_node;
        let round = |s: u64| if minutes { (s / 60).max(1) * 60 } else { s };
        let mut jobs: Vec<WorkloadJob> = specs
            .iter()
            .enumerate()
            .map(|(i, &(u, at, share, runtime, limit))| {
                let (at, runtime) = (round(at), round(runtime));
                let slots = ((procs as f64 * share).ceil() as u32).max(1);
                let limit = (limit > 0).then(|| runtime * u64::from(limit));
                wjob(i as u64 + 1, ["u0", "u1", "u2"][usize::from(u)], at, slots, runtime, limit)
            })
            .collect();
        jobs.sort_by_key(|j| (j.submit, j.id));
        let w = Workload {
            jobs,
            skipped: Vec::new(),
            actions: Vec::new(),
            machine: Machine { max_procs: Some(procs), max_nodes: Some(nodes), ..Machine::default() },
        };
        let policy = if fairshare { Policy::Fairshare } else { Policy::Fcfs };
        let (with, _) = replay(&w, policy, backfill, Expiry::HandOver);
        let (kept, _) = replay(&w, policy, backfill, Expiry::Keep);
        let (without, _) = replay(&w, policy, backfill, Expiry::LetGo);
        same(&with, &without)?;
        same(&kept, &without)?;
    }
}
