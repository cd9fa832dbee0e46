//! Reservation and backfill against spec 004 ("Reserving Processors",
//! "Reserving Memory for Pending Parallel Jobs", "Backfill Scheduling",
//! "Using backfill on memory"), driven from configuration text.

use allot_engine::{Decision, Engine, Event, HostIdx, JobId, JobSpec, Time};
use allot_sim::testing::engine_from;

mod common;

use common::*;

/// The spec's example: a 4-CPU host; job1 (sequential, 2 hours) starts at
/// 8:00; job2 (4 CPUs) reserves the other 3; job3 (2 CPUs, 1 hour) comes
/// at 8:30 and backfills job2's reserved slots, ending at 9:30; job1 ends
/// at 10:00 and job2 starts.
#[test]
fn the_four_cpu_backfill_example() {
    let mut e = four_cpu_engine();
    let job1 = submit(&mut e, hm(8, 0), job("normal", 1, Some(120), None));
    assert_eq!(pass(&mut e, hm(8, 0)), [job1.0]);
    let job2 = submit(&mut e, hm(8, 0), job("normal", 4, None, None));
    assert_eq!(pass(&mut e, hm(8, 0)), Vec::<u64>::new());
    assert_eq!(reserved_slots(&e, job2), 3, "job2 reserves the 3 free processors");
    assert_eq!(e.reserved_on_host(allot_engine::HostIdx(0)), 3);
    assert_eq!(e.predicted_start(job2, hm(8, 0)), Some(hm(10, 0)), "job2 waits for job1's run limit");

    let job3 = submit(&mut e, hm(8, 30), job("normal", 2, Some(60), None));
    assert_eq!(pass(&mut e, hm(8, 30)), [job3.0], "job3 backfills job2's reserved slots");
    // Figure c: job2 still holds its 3, job3 runs on 2 of them; on the
    // host, 1 stays reserved and idle.
    assert_eq!(reserved_slots(&e, job2), 3, "job3 uses 2 of job2's 3");
    assert_eq!(e.reserved_on_host(allot_engine::HostIdx(0)), 1);
    assert_eq!(e.predicted_start(job2, hm(8, 30)), Some(hm(10, 0)), "job3 does not delay job2");

    end(&mut e, hm(9, 30), job3);
    assert_eq!(pass(&mut e, hm(9, 30)), Vec::<u64>::new(), "job2 still waits for job1");
    assert_eq!(reserved_slots(&e, job2), 3, "job2 takes its slots back");
    assert_eq!(e.reserved_on_host(allot_engine::HostIdx(0)), 3);
    assert_eq!(pass(&mut e, hm(10, 0)), [job2.0], "job1 is killed at its run limit and job2 starts");
    assert_eq!(e.reservation(job2), None);
}

/// "If job3's run limit was 2 hours, it would not be able to backfill
/// job2's reserved slots, and would have to run after job2 finishes."
#[test]
fn a_job_ending_after_the_predicted_start_does_not_backfill() {
    let mut e = four_cpu_engine();
    let job1 = submit(&mut e, hm(8, 0), job("normal", 1, Some(120), None));
    let job2 = submit(&mut e, hm(8, 0), job("normal", 4, None, None));
    assert_eq!(pass(&mut e, hm(8, 0)), [job1.0]);
    let job3 = submit(&mut e, hm(8, 30), job("normal", 2, Some(120), None));
    assert_eq!(pass(&mut e, hm(8, 30)), Vec::<u64>::new());
    assert_eq!(reserved_slots(&e, job2), 3);
    assert_eq!(pass(&mut e, hm(10, 0)), [job2.0]);
    end(&mut e, hm(11, 0), job2);
    assert_eq!(pass(&mut e, hm(11, 0)), [job3.0], "job3 runs after job2 finishes");
}

#[test]
fn a_job_without_a_run_limit_never_backfills() {
    let mut e = four_cpu_engine();
    submit(&mut e, hm(8, 0), job("normal", 1, Some(120), None));
    let job2 = submit(&mut e, hm(8, 0), job("normal", 4, None, None));
    pass(&mut e, hm(8, 0));
    submit(&mut e, hm(8, 30), job("normal", 1, None, None));
    assert_eq!(pass(&mut e, hm(8, 30)), Vec::<u64>::new());
    assert_eq!(reserved_slots(&e, job2), 3);
}

/// "LSF cannot backfill if the big job is waiting for a job that has no
/// run limit defined."
#[test]
fn no_backfill_while_the_reserving_job_waits_for_a_job_without_a_run_limit() {
    let mut e = four_cpu_engine();
    submit(&mut e, hm(8, 0), job("normal", 1, None, None));
    let job2 = submit(&mut e, hm(8, 0), job("normal", 4, None, None));
    pass(&mut e, hm(8, 0));
    assert_eq!(e.predicted_start(job2, hm(8, 0)), None);
    submit(&mut e, hm(8, 30), job("normal", 1, Some(1), None));
    assert_eq!(pass(&mut e, hm(8, 30)), Vec::<u64>::new());
}

/// Only jobs of a BACKFILL=Y queue backfill.
#[test]
fn only_backfill_queues_backfill() {
    let q = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[1000]");
    let mut e = engine_from(&[("lsb.hosts", FOUR_CPUS), ("lsb.queues", &q)]);
    submit(&mut e, hm(8, 0), job("normal", 1, Some(120), None));
    submit(&mut e, hm(8, 0), job("normal", 4, None, None));
    pass(&mut e, hm(8, 0));
    submit(&mut e, hm(8, 30), job("normal", 1, Some(10), None));
    assert_eq!(pass(&mut e, hm(8, 30)), Vec::<u64>::new(), "reserved slots are free to no other job");
}

/// Without reservation the parallel job is passed over and sequential
/// jobs take the slots as they free up.
#[test]
fn without_slot_reserve_nothing_is_reserved() {
    let q = queue("normal", 30, "");
    let mut e = engine_from(&[("lsb.hosts", FOUR_CPUS), ("lsb.queues", &q)]);
    submit(&mut e, hm(8, 0), job("normal", 1, Some(120), None));
    let job2 = submit(&mut e, hm(8, 0), job("normal", 4, None, None));
    pass(&mut e, hm(8, 0));
    assert_eq!(e.reservation(job2), None);
    let seq = submit(&mut e, hm(8, 30), job("normal", 1, None, None));
    assert_eq!(pass(&mut e, hm(8, 30)), [seq.0]);
}

/// A sequential job reserves nothing under SLOT_RESERVE ("slot
/// reservation ... only applies to parallel jobs"), not even the memory
/// it waits for; under RESOURCE_RESERVE it does.
#[test]
fn slot_reserve_is_for_parallel_jobs_only() {
    for (reserve, reserves) in [("SLOT_RESERVE", false), ("RESOURCE_RESERVE", true)] {
        let q = queue("normal", 30, &format!("{reserve} = MAX_RESERVE_TIME[1000]"));
        let mut e = engine_from(&[("lsf.cluster.c", ONE_GB), ("lsb.queues", &q)]);
        submit(&mut e, Time(0), job("normal", 1, None, Some("rusage[mem=800]")));
        let waits = submit(&mut e, Time(0), job("normal", 1, None, Some("rusage[mem=400]")));
        let small = submit(&mut e, Time(0), job("normal", 1, None, Some("rusage[mem=100]")));
        let started = pass(&mut e, Time(0));
        assert_eq!(e.reservation(waits).is_some(), reserves, "{reserve}");
        assert_eq!(started.contains(&small.0), !reserves, "{reserve}: the 200 MB free go to the small job");
    }
}

/// MAX_RESERVE_TIME[n] is n MBD_SLEEP_TIME cycles from the first slot
/// reserved; then the job gives every slot up, reserves nothing for one
/// cycle, and may reserve again.
#[test]
fn a_reservation_expires_and_pauses_for_one_cycle() {
    let q = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[5]");
    let params = "Begin Parameters\nMBD_SLEEP_TIME = 30\nEnd Parameters\n";
    let mut e = engine_from(&[("lsb.hosts", FOUR_CPUS), ("lsb.queues", &q), ("lsb.params", params)]);
    submit(&mut e, Time(0), job("normal", 1, None, None));
    let big = submit(&mut e, Time(0), job("normal", 4, None, None));
    pass(&mut e, Time(0));
    assert_eq!(reserved_slots(&e, big), 3);
    assert_eq!(e.next_wakeup(), Some(Time(150)), "5 cycles of 30 seconds");
    assert_eq!(pass(&mut e, Time(149)), Vec::<u64>::new());
    assert_eq!(reserved_slots(&e, big), 3, "not yet");
    // At 150 the reservation expires: a sequential job submitted then may
    // take a slot the big job held.
    let seq = submit(&mut e, Time(150), job("normal", 1, None, None));
    assert_eq!(pass(&mut e, Time(150)), [seq.0]);
    assert_eq!(e.reservation(big), None, "nothing reserved in the cycle it expired");
    assert_eq!(e.next_wakeup(), Some(Time(180)), "the next cycle");
    pass(&mut e, Time(180));
    let (since, hosts) = e.reservation(big).expect("it reserves again");
    assert_eq!((since, hosts), (Time(180), vec![(HostIdx(0), allot_engine::Slots(2))]), "a new reservation time");
}

/// The cycle after an expiry is for the job to reserve again: a pass in
/// between gave it that chance, and the engine does not wake for the
/// cycle; where nothing is free at the cycle, it could reserve nothing
/// and no pass runs.
#[test]
fn the_cycle_after_an_expiry_wakes_the_engine_only_when_it_matters() {
    let q = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[5]");
    let params = "Begin Parameters\nMBD_SLEEP_TIME = 30\nEnd Parameters\n";
    let files = [("lsb.hosts", FOUR_CPUS), ("lsb.queues", q.as_str()), ("lsb.params", params)];

    // A submission at 160 brings a pass: the big job reserves then, and
    // the next wake-up is the end of that reservation's time.
    let mut e = engine_from(&files);
    submit(&mut e, Time(0), job("normal", 1, None, None));
    let big = submit(&mut e, Time(0), job("normal", 4, None, None));
    pass(&mut e, Time(0));
    pass(&mut e, Time(150));
    assert_eq!(e.reservation(big), None);
    assert_eq!(e.next_wakeup(), Some(Time(180)));
    submit(&mut e, Time(160), job("normal", 1, None, None));
    assert_eq!(pass(&mut e, Time(160)), Vec::<u64>::new(), "the big job is first, and reserves");
    assert_eq!(
        e.reservation(big),
        Some((Time(160), vec![(HostIdx(0), allot_engine::Slots(3))])),
        "at the first pass after the expiry"
    );
    assert_eq!(e.next_wakeup(), Some(Time(310)), "not 180: its chance came at 160");

    // Three jobs take the three slots it gave up: at 180 it could reserve
    // nothing, and no pass runs.
    let mut e = engine_from(&files);
    submit(&mut e, Time(0), job("normal", 1, None, None));
    let big = submit(&mut e, Time(0), job("normal", 4, None, None));
    pass(&mut e, Time(0));
    let seq: Vec<_> = (0..3).map(|_| submit(&mut e, Time(150), job("normal", 1, None, None))).collect();
    assert_eq!(pass(&mut e, Time(150)), seq.iter().map(|j| j.0).collect::<Vec<_>>());
    assert_eq!(e.next_wakeup(), Some(Time(180)));
    let passes = e.passes();
    assert_eq!(pass(&mut e, Time(180)), Vec::<u64>::new());
    assert_eq!((e.passes(), e.reservation(big)), (passes, None), "nothing free at 180: no pass");
    assert_eq!(e.next_wakeup(), None);
}

/// A reservation given up before its time (its job started) leaves no
/// wake-up behind.
#[test]
fn a_started_job_leaves_no_wake_up_for_its_reservation() {
    let q = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[5]");
    let mut e = engine_from(&[("lsb.hosts", FOUR_CPUS), ("lsb.queues", &q)]);
    let first = submit(&mut e, Time(0), job("normal", 1, None, None));
    let big = submit(&mut e, Time(0), job("normal", 4, None, None));
    pass(&mut e, Time(0));
    assert_eq!(e.next_wakeup(), Some(Time(300)), "5 cycles of the default 60 seconds");
    end(&mut e, Time(100), first);
    assert_eq!(pass(&mut e, Time(100)), [big.0]);
    assert_eq!(e.next_wakeup(), None);
}

/// Reserved slots count against the queue's and the user's job slot
/// limits.
#[test]
fn reserved_slots_count_against_limits() {
    let q = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[1000]\nUJOB_LIMIT = 6");
    let hosts = "Begin Host\nHOST_NAME MXJ\nhostA 4\nhostB 4\nEnd Host\n";
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &q)]);
    let other = JobSpec { user: "v".into(), ..job("normal", 1, None, None) };
    for _ in 0..6 {
        submit(&mut e, Time(0), other.clone());
    }
    pass(&mut e, Time(0));
    let big = submit(&mut e, Time(0), job("normal", 4, None, None));
    pass(&mut e, Time(0));
    assert_eq!(reserved_slots(&e, big), 2, "2 free slots reserved");
    // Without the reservation -n 5 would be within UJOB_LIMIT and wait
    // for slots.
    let small = submit(&mut e, Time(0), job("normal", 5, None, None));
    assert_eq!(pass(&mut e, Time(0)), Vec::<u64>::new());
    let reason = e.pending_reason(small, Time(0)).expect("pending").to_string();
    assert!(reason.contains("UJOB_LIMIT 6"), "2 reserved and 5 asked are over 6: {reason}");
    let (_, reserving) = (e.pending_reason(big, Time(0)), reserved_slots(&e, big));
    assert_eq!(reserving, 2, "its own reservation does not count against the job itself");
}

/// "If LSF cannot reserve a first execution host job slot, it does not
/// reserve slots on any other hosts."
#[test]
fn no_reservation_without_a_first_execution_host_slot() {
    let q = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[1000]\nHOSTS = hostA! hostB");
    let hosts = "Begin Host\nHOST_NAME MXJ\nhostA 2\nhostB 2\nEnd Host\n";
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &q)]);
    let mut on_a = job("normal", 2, None, None);
    on_a.hosts = allot_config::engine::parse_host_picks("hostA").expect("valid");
    let a = submit(&mut e, Time(0), on_a);
    let mut on_b = job("normal", 1, None, None);
    on_b.hosts = allot_config::engine::parse_host_picks("hostB!").expect("valid");
    let b = submit(&mut e, Time(0), on_b);
    assert_eq!(pass(&mut e, Time(0)), [a.0, b.0]);
    let big = submit(&mut e, Time(0), job("normal", 4, None, None));
    pass(&mut e, Time(0));
    assert_eq!(e.reservation(big), None, "hostA is full: hostB's free slot is not reserved");
    end(&mut e, Time(10), a);
    pass(&mut e, Time(10));
    let (_, hosts) = e.reservation(big).expect("a slot on hostA");
    assert_eq!(
        hosts,
        vec![(HostIdx(0), allot_engine::Slots(2)), (HostIdx(1), allot_engine::Slots(1))],
        "hostA first, then hostB"
    );
}

// --- Backfill on memory: one host, 10 CPUs, 1 GB free ---

fn memory_engine() -> Engine {
    let queues =
        queue("reservation", 40, "RESOURCE_RESERVE = MAX_RESERVE_TIME[20]") + &queue("backfill", 30, "BACKFILL = y");
    let params = "Begin Parameters\nRESOURCE_RESERVE_PER_SLOT = y\nEnd Parameters\n";
    engine_from(&[("lsf.cluster.c", ONE_GB), ("lsb.queues", &queues), ("lsb.params", params)])
}

fn reserved_mem(e: &Engine, id: JobId) -> u32 {
    e.reserved_memory(id).round() as u32
}

/// The spec's sequential jobs 1 to 7 ("Examples of memory reservation
/// and backfill on memory").
#[test]
fn backfill_on_memory_sequential_jobs() {
    let mut e = memory_engine();
    let t = Time(0);
    let seq = |q: &str, w: u64, mem: Option<&str>| job(q, 1, Some(w), mem);
    let j1 = submit(&mut e, t, seq("reservation", 300, Some("rusage[mem=400]")));
    assert_eq!(pass(&mut e, t), [j1.0], "job 1 runs with 400 MB");
    let j2 = submit(&mut e, t, seq("reservation", 300, Some("rusage[mem=400]")));
    assert_eq!(pass(&mut e, t), [j2.0], "job 2 likewise");
    let j3 = submit(&mut e, t, seq("reservation", 300, Some("rusage[mem=400]")));
    assert_eq!(pass(&mut e, t), Vec::<u64>::new());
    assert_eq!((reserved_slots(&e, j3), reserved_mem(&e, j3)), (1, 200), "one slot and all free memory");
    // bhosts -l's Reserved mem: what runs holds and what is reserved.
    let on_host = |e: &Engine| e.reserved_memory_on_host(HostIdx(0)).round() as u32;
    assert_eq!(on_host(&e), 400 + 400 + 200);
    assert_eq!(e.predicted_start(j3, t), Some(Time(300 * 60)), "when job 1 ends");

    let j4 = submit(&mut e, t, seq("backfill", 400, Some("rusage[mem=50]")));
    assert_eq!(pass(&mut e, t), Vec::<u64>::new(), "job 4 runs longer than jobs 1 and 2: pending");
    let j5 = submit(&mut e, t, seq("backfill", 100, Some("rusage[mem=50]")));
    assert_eq!(pass(&mut e, t), [j5.0], "job 5 uses memory reserved by job 3");
    assert_eq!(reserved_mem(&e, j3), 150);
    assert_eq!(on_host(&e), 400 + 400 + 50 + 150, "job 5's 50 MB counted once");
    let j6 = submit(&mut e, t, seq("backfill", 100, Some("rusage[mem=300]")));
    assert_eq!(pass(&mut e, t), Vec::<u64>::new(), "job 6: not enough of job 3's memory");
    assert_eq!(e.reservation(j6), None, "job 6 pends with no reservation");
    let j7 = submit(&mut e, t, seq("backfill", 100, None));
    assert_eq!(pass(&mut e, t), [j7.0], "job 7 needs no memory and slots are free");
    assert!(e.is_pending(j4) && e.is_pending(j6));
}

/// The spec's parallel jobs 1 to 5: 4 CPUs and 100 MB per process each.
#[test]
fn backfill_on_memory_parallel_jobs() {
    let mut e = memory_engine();
    let t = Time(0);
    let par = || job("reservation", 4, Some(300), Some("rusage[mem=100]"));
    let j1 = submit(&mut e, t, par());
    assert_eq!(pass(&mut e, t), [j1.0], "4 slots and 400 MB");
    let j2 = submit(&mut e, t, par());
    assert_eq!(pass(&mut e, t), [j2.0]);
    let j3 = submit(&mut e, t, par());
    assert_eq!(pass(&mut e, t), Vec::<u64>::new());
    assert_eq!((reserved_slots(&e, j3), reserved_mem(&e, j3)), (2, 200), "2 slots and all 200 MB");

    let j4 = submit(&mut e, t, job("backfill", 1, Some(400), Some("rusage[mem=50]")));
    assert_eq!(pass(&mut e, t), Vec::<u64>::new(), "job 4 runs longer than jobs 1 and 2");
    let j5 = submit(&mut e, t, job("backfill", 1, Some(100), Some("rusage[mem=50]")));
    assert_eq!(pass(&mut e, t), [j5.0], "job 5 backfills a slot and memory reserved by job 3");
    // The spec: job 3 "reserves 2 slots"; job 5 runs on one of them, which
    // stays job 3's (and 50 MB of its memory).
    assert_eq!((reserved_slots(&e, j3), reserved_mem(&e, j3)), (2, 150));
    assert!(e.is_pending(j4));
}

/// RESOURCE_RESERVE reserves for a sequential job with `rusage[mem]`;
/// the memory it holds is free to no other job.
#[test]
fn reserved_memory_is_free_to_no_other_job() {
    let mut e = memory_engine();
    let t = Time(0);
    for _ in 0..2 {
        submit(&mut e, t, job("reservation", 1, Some(300), Some("rusage[mem=400]")));
    }
    pass(&mut e, t);
    let j3 = submit(&mut e, t, job("reservation", 1, Some(300), Some("rusage[mem=400]")));
    pass(&mut e, t);
    assert_eq!(reserved_mem(&e, j3), 200);
    let small = submit(&mut e, t, job("reservation", 1, None, Some("rusage[mem=10]")));
    assert_eq!(pass(&mut e, t), Vec::<u64>::new(), "no memory is free");
    assert!(e.is_pending(small));
}

// --- Property: backfill never delays a reservation ---

mod property {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// A small job: slots, run limit (= run time) in minutes, submission
    /// minute.
    type Small = (u32, u64, u64);

    /// Runs the cluster: `early` small jobs at 0, the big job at minute 1,
    /// `late` small jobs at their minutes; every job runs exactly its run
    /// limit. Returns the big job's predicted start when it first reserved
    /// and its start.
    fn run(hosts: &[u32], big: u32, early: &[Small], late: &[Small], backfill: bool) -> (Option<Time>, Time) {
        let rows: String = hosts.iter().enumerate().map(|(i, n)| format!("h{i} {n}\n")).collect();
        let hosts_file = format!("Begin Host\nHOST_NAME MXJ\n{rows}End Host\n");
        let queues = queue("big", 40, "SLOT_RESERVE = MAX_RESERVE_TIME[100000]")
            + &queue("small", 30, if backfill { "BACKFILL = Y" } else { "" });
        let mut e = engine_from(&[("lsb.hosts", &hosts_file), ("lsb.queues", &queues)]);
        let total: u32 = hosts.iter().sum();
        let small = |n: u32, w: u64| job("small", n.min(total), Some(w), None);
        let mut submits: Vec<(u64, JobSpec)> = early.iter().map(|&(n, w, _)| (0, small(n, w))).collect();
        submits.push((60, job("big", big, None, None)));
        submits.extend(late.iter().map(|&(n, w, at)| (60 + at * 60, small(n, w))));
        submits.sort_by_key(|s| s.0);
        let mut ends: BTreeMap<(u64, u64), JobId> = BTreeMap::new();
        let mut limits: BTreeMap<JobId, u64> = BTreeMap::new();
        let (mut next, mut big_id, mut predicted) = (0, None, None);
        let mut t = 0;
        loop {
            while let Some((&(end, n), &id)) = ends.first_key_value().filter(|(k, _)| k.0 == t) {
                ends.remove(&(end, n));
                end_job(&mut e, Time(t), id);
            }
            while submits.get(next).is_some_and(|s| s.0 == t) {
                let spec = submits[next].1.clone();
                let limit = spec.run_limit;
                let id = submit(&mut e, Time(t), spec);
                if let Some(l) = limit {
                    limits.insert(id, l);
                } else {
                    big_id = Some(id);
                }
                next += 1;
            }
            for d in e.schedule(Time(t)) {
                if let Decision::Start { job, alloc } = d {
                    if Some(job) == big_id {
                        return (predicted, Time(t));
                    }
                    ends.insert((t + limits[&job], job.0), job);
                    let used: u32 = alloc.iter().map(|a| a.1.0).sum();
                    assert!(used > 0);
                }
            }
            for (h, (_, slots, used, _)) in e.hosts().enumerate() {
                let reserved = e.reserved_on_host(allot_engine::HostIdx(h as u32));
                assert!(used + reserved <= slots, "host {h}: {used} used and {reserved} reserved of {slots}");
            }
            if let Some(id) = big_id.filter(|_| predicted.is_none()) {
                if e.reservation(id).is_some() {
                    predicted = Some(e.predicted_start(id, Time(t)).expect("every running job has a run limit"));
                }
            }
            let t_end = ends.first_key_value().map(|(k, _)| k.0);
            let t_sub = submits.get(next).map(|s| s.0);
            t = [t_end, t_sub].into_iter().flatten().min().expect("the big job starts once the others end");
        }
    }

    fn end_job(e: &mut Engine, t: Time, id: JobId) {
        e.apply(t, &Event::Finish { job: id, cpu_time: 0.0, exit: 0 }).expect("a running job ends");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// With every job running its run limit and the reserving job
        /// first in dispatch order, it starts at the time predicted when it
        /// first reserved, with or without backfill: what backfills comes
        /// back in time.
        #[test]
        fn backfill_never_delays_a_reservation(
            hosts in prop::collection::vec(1u32..5, 1..5),
            big_share in 0.3f64..1.0,
            early in prop::collection::vec((1u32..4, 1u64..30, 0u64..1), 0..12),
            late in prop::collection::vec((1u32..4, 1u64..30, 0u64..40), 0..25),
        ) {
            let total: u32 = hosts.iter().sum();
            let big = ((f64::from(total) * big_share).ceil() as u32).clamp(2, total.max(2));
            prop_assume!(big <= total);
            let (predicted, with) = run(&hosts, big, &early, &late, true);
            let (_, without) = run(&hosts, big, &early, &late, false);
            prop_assert!(with <= without, "backfill delayed the big job: {with:?} > {without:?}");
            if let Some(p) = predicted {
                prop_assert_eq!(with, p, "started at its predicted start");
            }
        }
    }
}

/// A failed backfill passes over the jobs it tells about, not the others:
/// job A (1 slot, 3 hours) cannot backfill job2's reservation, ending
/// after its predicted start; job B behind it (2 slots, 1 hour) can,
/// although it asks more slots than A.
#[test]
fn a_longer_job_failing_to_backfill_does_not_stop_a_shorter_wider_one() {
    let mut e = four_cpu_engine();
    let job1 = submit(&mut e, hm(8, 0), job("normal", 1, Some(120), None));
    let job2 = submit(&mut e, hm(8, 0), job("normal", 4, None, None));
    assert_eq!(pass(&mut e, hm(8, 0)), [job1.0]);
    assert_eq!(reserved_slots(&e, job2), 3);
    let a = submit(&mut e, hm(8, 30), job("normal", 1, Some(180), None));
    let b = submit(&mut e, hm(8, 30), job("normal", 2, Some(60), None));
    assert_eq!(pass(&mut e, hm(8, 30)), [b.0], "B backfills, A does not");
    assert!(e.reservation(a).is_none());
}

/// Only what ends on the reserving job's own queue's hosts brings its
/// predicted start forward: a job ending sooner on another queue's host
/// does not.
#[test]
fn a_prediction_counts_only_the_queues_hosts() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nhostA 4\nhostB 4\nEnd Host\n";
    let queues = queue("qa", 30, "HOSTS = hostA\nSLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y")
        + &queue("qb", 30, "HOSTS = hostB");
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    let other = submit(&mut e, hm(8, 0), job("qb", 4, Some(60), None));
    let job1 = submit(&mut e, hm(8, 0), job("qa", 1, Some(120), None));
    let job2 = submit(&mut e, hm(8, 0), job("qa", 4, None, None));
    let mut started = pass(&mut e, hm(8, 0));
    started.sort_unstable();
    assert_eq!(started, [other.0, job1.0]);
    assert_eq!(reserved_slots(&e, job2), 3);
    assert_eq!(e.predicted_start(job2, hm(8, 0)), Some(hm(10, 0)), "hostB's job ending at 9:00 does not count");
}

/// A window: slots, run time, hosts.
type Window = (u32, Option<u64>, Vec<(u32, u32)>);

fn windows(e: &Engine, t: Time, select: Option<&str>) -> Vec<Window> {
    let select = select.map(|s| res(s).select.expect("a select expression"));
    e.backfill_windows(t, select.as_ref())
        .into_iter()
        .map(|w| (w.slots, w.runtime, w.hosts.iter().map(|&(h, n)| (h.0, n.0)).collect()))
        .collect()
}

/// `bslots` on the spec's 4-CPU example: job2's three reserved slots for
/// 2 hours at 8:00; at 8:30, after job3 backfilled two of them, one for
/// 1 hour 30 minutes; once job2 starts, none.
#[test]
fn backfill_windows_of_the_four_cpu_example() {
    let mut e = four_cpu_engine();
    assert_eq!(windows(&e, hm(8, 0), None), [(4, None, vec![(0, 4)])], "an empty host: 4 slots, unlimited");
    let job1 = submit(&mut e, hm(8, 0), job("normal", 1, Some(120), None));
    let job2 = submit(&mut e, hm(8, 0), job("normal", 4, None, None));
    assert_eq!(pass(&mut e, hm(8, 0)), [job1.0]);
    assert_eq!(windows(&e, hm(8, 0), None), [(3, Some(7200), vec![(0, 3)])]);
    let job3 = submit(&mut e, hm(8, 30), job("normal", 2, Some(60), None));
    assert_eq!(pass(&mut e, hm(8, 30)), [job3.0]);
    assert_eq!(windows(&e, hm(8, 30), None), [(1, Some(5400), vec![(0, 1)])]);
    assert_eq!(pass(&mut e, hm(10, 0)), [job2.0]);
    assert_eq!(windows(&e, hm(10, 0), None), [], "No reserved slots available.");
}

/// Free slots are a window with no run limit; each predicted start adds
/// the reservation's slots to a shorter window; `-R` keeps the hosts its
/// select holds on; a reservation waiting for a job with no run limit
/// lends nothing.
#[test]
fn backfill_windows_free_reserved_and_selected() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nhostA 4\nhostB 2\nEnd Host\n";
    let q = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y");
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &q)]);
    let t = hm(8, 0);
    assert_eq!(windows(&e, t, Some("maxslots>3")), [(4, None, vec![(0, 4)])]);
    let long = submit(&mut e, t, job("normal", 1, Some(120), None));
    let forever = submit(&mut e, t, job("normal", 1, None, None));
    let mut started = pass(&mut e, t);
    started.sort_unstable();
    assert_eq!(started, [long.0, forever.0], "both on hostA");
    // Job 3 may use hostA only: it reserves hostA's 2 free slots and waits
    // for `long`; hostB's 2 slots stay free.
    let mut spec = job("normal", 3, None, None);
    spec.hosts = vec![allot_engine::HostPick { name: "hostA".into(), first: false, preference: None }];
    let job3 = submit(&mut e, t, spec);
    assert!(pass(&mut e, t).is_empty());
    assert_eq!(reserved_slots(&e, job3), 2);
    assert_eq!(e.predicted_start(job3, t), Some(hm(10, 0)));
    assert_eq!(
        windows(&e, t, None),
        [(2, None, vec![(1, 2)]), (4, Some(7200), vec![(0, 2), (1, 2)])],
        "hostB free for ever, and hostA's reserved slots until 10:00"
    );
    assert_eq!(windows(&e, t, Some("hname==hostA")), [(2, Some(7200), vec![(0, 2)])]);
    assert_eq!(windows(&e, t, Some("hname==hostC")), [], "no host selected, no window");
    // `long` ends early and job 3 starts: only hostB's free slots remain.
    end(&mut e, hm(9, 0), long);
    assert_eq!(pass(&mut e, hm(9, 0)), [job3.0]);
    assert_eq!(windows(&e, hm(9, 0), None), [(2, None, vec![(1, 2)])]);
}

/// A reservation that waits for a job with no run limit has no predicted
/// start, and lends no window.
#[test]
fn a_reservation_without_a_predicted_start_lends_no_window() {
    let mut e = four_cpu_engine();
    let t = hm(8, 0);
    let forever = submit(&mut e, t, job("normal", 2, None, None));
    assert_eq!(pass(&mut e, t), [forever.0]);
    let wide = submit(&mut e, t, job("normal", 4, Some(60), None));
    assert!(pass(&mut e, t).is_empty());
    assert_eq!((reserved_slots(&e, wide), e.predicted_start(wide, t)), (2, None));
    assert_eq!(windows(&e, t, None), []);
}

/// A user's row of the first share table: (started, reserved, priority).
fn share_row(e: &Engine, user: &str, t: Time) -> (u32, u32, f64) {
    let inputs = allot_engine::shares::priority::PriorityInputs::default();
    let tables = e.fairshare().policies[0].tree.share_tables(t, &inputs);
    let row = tables[0].rows.iter().find(|r| r.name == user).expect("the user's row");
    (row.started, row.reserved, row.priority)
}

/// LSF fairshare: job_slots is "the number of job slots reserved and in
/// use by a user". A reservation shows in the RESERVED column and lowers
/// the dynamic priority as running slots do (defaults: RUN_JOB_FACTOR 3,
/// 1 share, no run time yet: 1 / ((1 + job_slots) × 3)); a backfill job
/// borrowing reserved slots takes them off; a start moves them to
/// STARTED.
#[test]
fn reserved_slots_count_in_the_dynamic_priority() {
    let q = queue(
        "normal",
        30,
        "SLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y\nFAIRSHARE = USER_SHARES[[default,1]]",
    );
    let mut e = engine_from(&[("lsb.hosts", FOUR_CPUS), ("lsb.queues", &q)]);
    let user = |name: &str, spec: JobSpec| JobSpec { user: name.into(), ..spec };
    let t = hm(8, 0);
    let job1 = submit(&mut e, t, user("a", job("normal", 1, Some(120), None)));
    assert_eq!(pass(&mut e, t), [job1.0]);
    let job2 = submit(&mut e, t, user("a", job("normal", 4, None, None)));
    assert_eq!(pass(&mut e, t), Vec::<u64>::new());
    let (started, reserved, priority) = share_row(&e, "a", t);
    assert_eq!((started, reserved), (1, 3));
    assert!((priority - 1.0 / 15.0).abs() < 1e-12, "1 running + 3 reserved slots: {priority}");

    let job3 = submit(&mut e, t, user("b", job("normal", 2, Some(60), None)));
    assert_eq!(pass(&mut e, t), [job3.0], "b backfills 2 of a's 3 reserved slots");
    assert_eq!(share_row(&e, "a", t).1, 1, "what is lent is no longer reserved");
    assert_eq!(share_row(&e, "b", t).0, 2);

    end(&mut e, hm(9, 0), job3);
    assert_eq!(pass(&mut e, hm(9, 0)), Vec::<u64>::new());
    assert_eq!(share_row(&e, "a", hm(9, 0)).1, 3, "the slots come back to the reservation");
    assert_eq!(pass(&mut e, hm(10, 0)), [job2.0]);
    let (started, reserved, _) = share_row(&e, "a", hm(10, 0));
    assert_eq!((started, reserved), (4, 0), "a start moves the slots to STARTED");
}

fn fairshare_reserve_engine() -> Engine {
    let q = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[5]\nFAIRSHARE = USER_SHARES[[default,1]]");
    engine_from(&[("lsb.hosts", FOUR_CPUS), ("lsb.queues", &q)])
}

/// A job holding a reservation has first claim on the slots that free up
/// (`Engine::dispatch_holders`): b's job, ahead of a's in share order
/// once a's reserved slot counts against a, gets nothing until a's job
/// has all it needs.
#[test]
fn a_reservation_takes_freed_slots_before_other_users_jobs() {
    let mut e = fairshare_reserve_engine();
    let user = |name: &str, slots: u32| JobSpec { user: name.into(), ..job("normal", slots, None, None) };
    let running: Vec<JobId> = (0..4).map(|_| submit(&mut e, Time(0), user("u", 1))).collect();
    assert_eq!(pass(&mut e, Time(0)).len(), 4);
    let p = submit(&mut e, Time(10), user("a", 4));
    assert_eq!(pass(&mut e, Time(10)), Vec::<u64>::new());
    end(&mut e, Time(100), running[0]);
    assert_eq!(pass(&mut e, Time(100)), Vec::<u64>::new());
    assert_eq!(reserved_slots(&e, p), 1);
    let q = submit(&mut e, Time(120), user("b", 2));
    assert_eq!(pass(&mut e, Time(120)), Vec::<u64>::new());
    assert!(share_row(&e, "b", Time(150)).2 > share_row(&e, "a", Time(150)).2, "b goes first in share order");
    end(&mut e, Time(150), running[1]);
    assert_eq!(pass(&mut e, Time(150)), Vec::<u64>::new());
    assert_eq!((reserved_slots(&e, p), reserved_slots(&e, q)), (2, 0), "the freed slot goes to a's reservation");
    end(&mut e, Time(200), running[2]);
    assert_eq!(pass(&mut e, Time(200)), Vec::<u64>::new());
    end(&mut e, Time(250), running[3]);
    assert_eq!(pass(&mut e, Time(250)), [p.0]);
}

/// Three users, each with two jobs as wide as the host, wait while one-slot
/// jobs end one by one. Tried in share order, each freed slot would go to
/// the user holding least, and as reservations expired their slots would
/// pass to the same users' next jobs: every slot reserved, nothing running,
/// for ever. With reservations first, the oldest accumulates what the
/// others give up, and every job runs.
#[test]
fn expiring_reservations_never_leave_the_cluster_idle_for_good() {
    let mut e = fairshare_reserve_engine();
    let user = |name: &str, slots: u32| JobSpec { user: name.into(), ..job("normal", slots, None, None) };
    let mut ends: std::collections::BTreeMap<u64, Vec<JobId>> = std::collections::BTreeMap::new();
    for i in 0..4 {
        submit(&mut e, Time(0), user("u", 1));
        ends.entry(10 * (i + 1)).or_default();
    }
    let started = pass(&mut e, Time(0));
    for (i, id) in started.iter().enumerate() {
        ends.entry(10 * (i as u64 + 1)).or_default().push(JobId(*id));
    }
    let wide: Vec<JobId> = ["a", "b", "c", "a", "b", "c"].iter().map(|u| submit(&mut e, Time(1), user(u, 4))).collect();
    assert_eq!(pass(&mut e, Time(1)), Vec::<u64>::new());
    let mut first_start = None;
    let mut ran = 0;
    loop {
        let next_end = ends.keys().next().copied();
        let Some(t) = [next_end, e.next_wakeup().map(|w| w.0)].into_iter().flatten().min() else { break };
        if t > 100_000 {
            break;
        }
        for id in ends.remove(&t).unwrap_or_default() {
            end(&mut e, Time(t), id);
        }
        for id in pass(&mut e, Time(t)) {
            assert!(wide.contains(&JobId(id)));
            first_start.get_or_insert(t);
            ran += 1;
            ends.entry(t + 100).or_default().push(JobId(id));
        }
    }
    assert_eq!(ran, 6, "every wide job ran");
    // The first reservation (from t=10) expires at 310; the next oldest
    // takes what it gives up and what is left comes to it then.
    assert!(first_start.is_some_and(|t| t <= 400), "first wide start at {first_start:?}");
}

/// Among jobs holding reservations, the oldest reservation goes first,
/// whatever the jobs' own order: y, submitted first, reserves later than
/// x because its first execution host (hostB) had no free slot; when a
/// hostA slot frees, x (reserving since 10) takes it and starts.
#[test]
fn the_oldest_reservation_goes_first() {
    let q = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[1000]");
    let hosts = "Begin Host\nHOST_NAME MXJ\nhostA 2\nhostB 2\nEnd Host\n";
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &q)]);
    let on = |picks: &str, slots: u32| JobSpec {
        hosts: allot_config::engine::parse_host_picks(picks).expect("valid"),
        ..job("normal", slots, None, None)
    };
    let running: Vec<JobId> =
        ["hostA", "hostA", "hostB", "hostB"].iter().map(|h| submit(&mut e, Time(0), on(h, 1))).collect();
    assert_eq!(pass(&mut e, Time(0)).len(), 4);
    let y = submit(&mut e, Time(1), on("hostB! hostA", 3));
    let x = submit(&mut e, Time(1), on("hostA", 2));
    assert!(y < x);
    assert_eq!(pass(&mut e, Time(1)), Vec::<u64>::new());
    end(&mut e, Time(10), running[0]);
    assert_eq!(pass(&mut e, Time(10)), Vec::<u64>::new());
    assert_eq!((reserved_slots(&e, y), reserved_slots(&e, x)), (0, 1), "y has no slot on hostB to begin with");
    end(&mut e, Time(20), running[2]);
    assert_eq!(pass(&mut e, Time(20)), Vec::<u64>::new());
    assert_eq!((reserved_slots(&e, y), reserved_slots(&e, x)), (1, 1));
    end(&mut e, Time(30), running[1]);
    assert_eq!(pass(&mut e, Time(30)), [x.0]);
}

/// A queue over hosts of two partitions runs a user's jobs only on hosts of
/// partitions where the user has shares: u's reservation counts only what
/// hostA releases, not hostB's slots (v's partition) freed earlier. (The
/// running sum of every release, which predictions use when hosts give
/// exactly what is free, would say 9:00.)
#[test]
fn a_prediction_counts_only_the_users_partitions() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nhostA 4\nhostB 4\nEnd Host\n\
                 Begin HostPartition\nHPART_NAME = pa\nHOSTS = hostA\nUSER_SHARES = [u, 1]\nEnd HostPartition\n\
                 Begin HostPartition\nHPART_NAME = pb\nHOSTS = hostB\nUSER_SHARES = [v, 1]\nEnd HostPartition\n";
    let queues = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y");
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    let as_user = |user: &str, slots: u32, minutes: Option<u64>| JobSpec {
        user: user.into(),
        ..job("normal", slots, minutes, None)
    };
    let other = submit(&mut e, hm(8, 0), as_user("v", 4, Some(60)));
    let job1 = submit(&mut e, hm(8, 0), as_user("u", 1, Some(120)));
    let job2 = submit(&mut e, hm(8, 0), as_user("u", 4, None));
    let mut started = pass(&mut e, hm(8, 0));
    started.sort_unstable();
    assert_eq!(started, [other.0, job1.0]);
    assert_eq!(e.reservation(job2).map(|r| r.1), Some(vec![(HostIdx(0), allot_engine::Slots(3))]), "3 slots of hostA");
    assert_eq!(e.predicted_start(job2, hm(8, 0)), Some(hm(10, 0)), "hostB's 4 slots at 9:00 are not u's");
}
