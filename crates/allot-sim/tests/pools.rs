//! Queue-based fairshare (spec 000, "Queue-based Fairshare"): the spec's
//! tables, through configuration text and the engine.

use allot_engine::shares::priority::PriorityInputs;
use allot_engine::{Engine, Event, JobSpec, PendingReason, Time};
use allot_sim::jsonl;
use allot_sim::report::share_tables_json;
use allot_sim::sim::{Outcome, SimOptions, run};
use allot_sim::testing::engine_from;

/// Slots `queue`'s jobs held on average from `w0` to `w1`.
fn average_slots(out: &Outcome, queue: &str, (w0, w1): (u64, u64)) -> f64 {
    let slot_seconds: u64 = out
        .records
        .iter()
        .filter(|r| r.queue == queue)
        .map(|r| r.end.min(w1).saturating_sub(r.start.max(w0)) * u64::from(r.slots))
        .sum();
    slot_seconds as f64 / (w1 - w0) as f64
}

/// Each queue's average slots over `window` within `within` of what is
/// expected of it; every average said when one is not.
fn assert_averages(out: &Outcome, window: (u64, u64), expected: &[(&str, f64)], within: f64) {
    let averages: Vec<f64> = expected.iter().map(|(q, _)| average_slots(out, q, window)).collect();
    for ((q, expect), average) in expected.iter().zip(&averages) {
        assert!(
            (average - expect).abs() <= within,
            "{q}: {average:.2} slots on average, {expect} expected: {averages:.2?}"
        );
    }
}

/// `jobs` jobs of user `u` in each of `queues`, all submitted at 0, each
/// running `base` seconds and up to `spread` more (varied by job and
/// queue): queues that keep work pending while jobs end and start.
fn backlog(queues: &[&str], jobs: u64, (base, spread): (u64, u64)) -> String {
    let mut lines = String::new();
    for (qi, q) in queues.iter().enumerate() {
        for i in 0..jobs {
            let runtime = base + (i * 37 + qi as u64 * 101) % spread;
            lines +=
                &format!("{{\"submit\": 0, \"user\": \"u\", \"runtime\": {runtime}, \"bsub\": \"-q {q} ./job\"}}\n");
        }
    }
    lines
}

/// A workload's run through the simulator on `e`.
fn simulate(e: &mut Engine, lines: &str) -> Outcome {
    let w = jsonl::read(lines);
    run(e, &w, &SimOptions::default(), &|_: &Engine, _| serde_json::Value::Null, &mut |_| {})
}

fn queue(name: &str, priority: i32, pool: &str, share: u32, hosts: &str) -> String {
    format!(
        "Begin Queue\nQUEUE_NAME = {name}\nPRIORITY = {priority}\nSLOT_POOL = {pool}\nSLOT_SHARE = {share}\nHOSTS = {hosts}\nEnd Queue\n"
    )
}

/// spec 000: Roma 50%, Verona 30%, Genova 20% of 3 hosts of 5 slots.
fn roma_verona_genova() -> Engine {
    let hosts = "Begin Host\nHOST_NAME MXJ\nhosta 5\nhostb 5\nhostc 5\nEnd Host\n\
                 Begin HostGroup\nGROUP_NAME GROUP_MEMBER\ngroupA (hosta hostb hostc)\nEnd HostGroup\n";
    let queues = queue("Roma", 50, "poolA", 50, "groupA")
        + &queue("Verona", 48, "poolA", 30, "groupA")
        + &queue("Genova", 48, "poolA", 20, "groupA");
    engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)])
}

fn submit(e: &mut Engine, queue: &str, n: usize) {
    for _ in 0..n {
        let spec = JobSpec { user: "u".into(), queue: Some(queue.into()), slots: 1, ..JobSpec::default() };
        e.apply(Time(0), &Event::Submit(spec)).expect("accepted");
    }
}

fn running(e: &Engine, queues: &[&str]) -> Vec<u32> {
    queues.iter().map(|q| e.queue_load(q).expect("queue").1.0).collect()
}

#[test]
fn phase_one_all_three_queues_run_8_5_2() {
    let mut e = roma_verona_genova();
    for q in ["Roma", "Verona", "Genova"] {
        submit(&mut e, q, 1000);
    }
    e.schedule(Time(0));
    assert_eq!(running(&e, &["Roma", "Verona", "Genova"]), [8, 5, 2]);
    let waiting = e.pending_jobs().find(|&j| e.job_queue(j) == Some("Genova")).expect("a Genova job waits");
    assert_eq!(e.pending_reason(waiting, Time(0)), Some(PendingReason::SlotPool { pool: "poolA".into(), entitled: 2 }));
}

#[test]
fn phase_two_verona_done_roma_11_genova_4() {
    let mut e = roma_verona_genova();
    submit(&mut e, "Roma", 1000);
    submit(&mut e, "Genova", 1000);
    e.schedule(Time(0));
    assert_eq!(running(&e, &["Roma", "Verona", "Genova"]), [11, 0, 4]);
}

#[test]
fn phase_three_genova_alone_takes_all_15() {
    let mut e = roma_verona_genova();
    submit(&mut e, "Genova", 1000);
    e.schedule(Time(0));
    assert_eq!(running(&e, &["Roma", "Verona", "Genova"]), [0, 0, 15]);
}

#[test]
fn a_queue_limit_gives_its_slots_to_the_others() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nh 10\nEnd Host\n";
    let queues =
        queue("a", 50, "p", 50, "h").replace("End Queue", "QJOB_LIMIT = 2\nEnd Queue") + &queue("b", 40, "p", 50, "h");
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    submit(&mut e, "a", 100);
    submit(&mut e, "b", 100);
    e.schedule(Time(0));
    assert_eq!(running(&e, &["a", "b"]), [2, 8]);
}

const POOL_A: [(&str, i32, u32); 3] = [("Roma", 50, 50), ("Verona", 48, 30), ("Genova", 47, 20)];
const POOL_B: [(&str, i32); 10] = [
    ("Pisa", 44),
    ("Milano", 43),
    ("Parma", 42),
    ("Bologna", 40),
    ("Sora", 40),
    ("Ferrara", 40),
    ("Napoli", 40),
    ("Livorno", 40),
    ("Palermo", 40),
    ("Venezia", 4),
];

/// spec 000, "Round-robin slot distribution - 13 queues and 2 pools":
/// poolA, 3 hosts of 7 slots, 50/30/20; poolB, 3 hosts of 7 slots, 10
/// queues of 10%.
fn thirteen_queues() -> (String, String) {
    let hosts = "Begin Host\nHOST_NAME MXJ\nha1 7\nha2 7\nha3 7\nhb1 7\nhb2 7\nhb3 7\nEnd Host\n\
                 Begin HostGroup\nGROUP_NAME GROUP_MEMBER\ngroupA (ha1 ha2 ha3)\ngroupB (hb1 hb2 hb3)\nEnd HostGroup\n";
    let mut queues = String::new();
    for (name, prio, share) in POOL_A {
        queues += &queue(name, prio, "poolA", share, "groupA");
    }
    for (name, prio) in POOL_B {
        queues += &queue(name, prio, "poolB", 10, "groupB");
    }
    (hosts.to_string(), queues)
}

#[test]
fn thirteen_queues_initially() {
    let (hosts, queues) = thirteen_queues();
    let mut e = engine_from(&[("lsb.hosts", &hosts), ("lsb.queues", &queues)]);
    for (q, _, _) in POOL_A {
        submit(&mut e, q, 500);
    }
    for (q, _) in POOL_B {
        submit(&mut e, q, 500);
    }
    e.schedule(Time(0));
    assert_eq!(running(&e, &["Roma", "Verona", "Genova"]), [11, 7, 3]);
    let b: Vec<&str> = POOL_B.iter().map(|q| q.0).collect();
    assert_eq!(running(&e, &b), [3, 3, 3, 3, 3, 3, 3, 0, 0, 0], "Livorno, Palermo and Venezia wait");
}

#[test]
fn thirteen_queues_take_turns_over_time() {
    // Every queue keeps jobs pending; jobs run 5 to 15 minutes. Over the
    // middle of the run poolA keeps the spec's 11, 7 and 3 (its queues'
    // shares differ: they are ordered by share), and each of poolB's ten
    // queues of 10% averages 2.1 of its 21 slots (within a quarter slot):
    // the queues that did not run at first get their turn as the others
    // accumulate usage.
    let (hosts, queues) = thirteen_queues();
    let names: Vec<&str> = POOL_A.iter().map(|q| q.0).chain(POOL_B.iter().map(|q| q.0)).collect();
    let mut lines = String::new();
    for (qi, q) in names.iter().enumerate() {
        // Enough work for every queue to keep jobs pending past the window.
        let jobs = if qi < 3 { 1500 } else { 500 };
        for i in 0..jobs {
            let runtime = 300 + (i * 37 + qi as u64 * 101) % 600;
            lines +=
                &format!("{{\"submit\": 0, \"user\": \"u\", \"runtime\": {runtime}, \"bsub\": \"-q {q} ./job\"}}\n");
        }
    }
    let w = jsonl::read(&lines);
    let mut e = engine_from(&[("lsb.hosts", &hosts), ("lsb.queues", &queues)]);
    let report = |e: &Engine, t: Time| {
        share_tables_json(e.fairshare().policies.iter().map(|p| &p.tree), t, &PriorityInputs::default())
    };
    let out = run(&mut e, &w, &SimOptions::default(), &report, &mut |_| {});
    let (w0, w1) = (10_000u64, 60_000u64);
    let pool_a = POOL_A.iter().map(|q| q.0).zip([11.0, 7.0, 3.0]);
    for (q, expect) in pool_a.chain(POOL_B.iter().map(|(n, _)| (*n, 2.1))) {
        let average = average_slots(&out, q, (w0, w1));
        assert!((average - expect).abs() <= 0.25, "{q}: {average:.2} slots on average, share {expect:.2}");
    }
}

#[test]
fn a_non_pool_queue_takes_what_it_can_and_the_pool_divides_the_rest() {
    // spec 000: Milano is in no pool but uses poolB's hosts, at a priority
    // between the pool's queues. It keeps 4 of the 15 slots busy. The
    // pool's total stays 15: Pisa, above Milano, keeps its 5 (as the
    // spec's Pisa does above Milano and Parma); Venezia and Bologna, below
    // it, share the other 6.
    let hosts = "Begin Host\nHOST_NAME MXJ\nhb1 5\nhb2 5\nhb3 5\nEnd Host\n\
                 Begin HostGroup\nGROUP_NAME GROUP_MEMBER\ngroupB (hb1 hb2 hb3)\nEnd HostGroup\n";
    let queues = queue("Pisa", 44, "poolB", 30, "groupB")
        + "Begin Queue\nQUEUE_NAME = Milano\nPRIORITY = 42\nHOSTS = groupB\nEnd Queue\n"
        + &queue("Venezia", 40, "poolB", 30, "groupB")
        + &queue("Bologna", 40, "poolB", 30, "groupB");
    let mut lines = String::new();
    for i in 0..4 {
        lines +=
            &format!("{{\"submit\": 0, \"user\": \"m{i}\", \"runtime\": 100000, \"bsub\": \"-q Milano ./long\"}}\n");
    }
    for (qi, q) in ["Pisa", "Venezia", "Bologna"].iter().enumerate() {
        for i in 0..400u64 {
            let runtime = 300 + (i * 53 + qi as u64 * 17) % 600;
            lines +=
                &format!("{{\"submit\": 0, \"user\": \"u\", \"runtime\": {runtime}, \"bsub\": \"-q {q} ./job\"}}\n");
        }
    }
    let w = jsonl::read(&lines);
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    let report = |e: &Engine, t: Time| {
        share_tables_json(e.fairshare().policies.iter().map(|p| &p.tree), t, &PriorityInputs::default())
    };
    let out = run(&mut e, &w, &SimOptions::default(), &report, &mut |_| {});
    let milano_start: Vec<u64> = out.records.iter().filter(|r| r.queue == "Milano").map(|r| r.start).collect();
    assert_eq!(milano_start, [0, 0, 0, 0], "the non-pool queue dispatches all it can at once");
    let (w0, w1) = (5_000u64, 40_000u64);
    for (q, expect) in [("Pisa", 5.0), ("Venezia", 3.0), ("Bologna", 3.0)] {
        let average = average_slots(&out, q, (w0, w1));
        assert!((average - expect).abs() <= 0.35, "{q}: {average:.2} slots on average, {expect} expected");
    }
}

#[test]
fn phase_two_settles_at_11_and_4_as_jobs_come_and_go() {
    // spec 000 phase 2 over time: Roma and Genova keep jobs pending, jobs
    // of 2 to 10 minutes end and new ones start. The division stays 11
    // and 4 (the last slot to Roma "again"), so after the first hour
    // Roma runs 11 on average and Genova 4, not the 10.5 and 4.5 of a
    // slot traded back and forth.
    let out = simulate(&mut roma_verona_genova(), &backlog(&["Roma", "Genova"], 1500, (120, 480)));
    assert_averages(&out, (3_600, 20_000), &[("Roma", 11.0), ("Genova", 4.0)], 0.1);
}

/// spec 000, "2 pools, 30 job slots, and 2 queues out of any pool": poolA
/// (Roma 50%, Verona 30%, Genova 20%) and poolB (Pisa, Venezia, Bologna,
/// 30% each) of 15 slots each; Milano and Parma, in no pool, use poolB's
/// hosts at Venezia's and Bologna's priority. The spec's first table has
/// Milano and Parma's two jobs each waiting while poolB runs 5, 5, 5; its
/// second, once six of Venezia's and Bologna's slots free and Milano and
/// Parma have their bursts, Pisa 5, Milano 3, Parma 3, Venezia 2,
/// Bologna 2: "their higher priority reduces the share of slots free and
/// in use by Venezia and Bologna".
#[test]
fn queues_out_of_any_pool_take_the_pools_freed_slots_first() {
    use allot_engine::{Decision, JobId};
    let hosts = "Begin Host\nHOST_NAME MXJ\nha1 5\nha2 5\nha3 5\nhb1 5\nhb2 5\nhb3 5\nEnd Host\n\
                 Begin HostGroup\nGROUP_NAME GROUP_MEMBER\ngroupA (ha1 ha2 ha3)\ngroupB (hb1 hb2 hb3)\nEnd HostGroup\n";
    let queues = queue("Roma", 50, "poolA", 50, "groupA")
        + &queue("Verona", 48, "poolA", 30, "groupA")
        + &queue("Genova", 48, "poolA", 20, "groupA")
        + &queue("Pisa", 44, "poolB", 30, "groupB")
        + "Begin Queue\nQUEUE_NAME = Milano\nPRIORITY = 43\nHOSTS = groupB\nEnd Queue\n"
        + "Begin Queue\nQUEUE_NAME = Parma\nPRIORITY = 43\nHOSTS = groupB\nEnd Queue\n"
        + &queue("Venezia", 43, "poolB", 30, "groupB")
        + &queue("Bologna", 43, "poolB", 30, "groupB");
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    let all = ["Roma", "Verona", "Genova", "Pisa", "Milano", "Parma", "Venezia", "Bologna"];
    let mut started: Vec<(JobId, &str)> = Vec::new();
    let pass = |e: &mut Engine, t: u64, started: &mut Vec<(JobId, &'static str)>| {
        for d in e.schedule(Time(t)) {
            if let Decision::Start { job, .. } = d {
                let q = all.iter().find(|&&q| e.job_queue(job) == Some(q)).expect("a queue");
                started.push((job, q));
            }
        }
    };
    for q in ["Roma", "Verona", "Genova", "Pisa", "Venezia", "Bologna"] {
        submit(&mut e, q, 1000);
    }
    pass(&mut e, 0, &mut started);
    submit(&mut e, "Milano", 2);
    submit(&mut e, "Parma", 2);
    pass(&mut e, 1, &mut started);
    assert_eq!(running(&e, &all), [8, 5, 2, 5, 0, 0, 5, 5], "the spec's first table");
    // Their bursts, alternating; then three jobs of Venezia's and three of
    // Bologna's end.
    for _ in 0..8 {
        submit(&mut e, "Milano", 1);
        submit(&mut e, "Parma", 1);
    }
    submit(&mut e, "Parma", 1);
    for q in ["Venezia", "Bologna"] {
        for _ in 0..3 {
            let k = started.iter().position(|r| r.1 == q).expect("one runs");
            let (job, _) = started.remove(k);
            e.apply(Time(2), &Event::Finish { job, cpu_time: 0.0, exit: 0 }).expect("ends");
        }
    }
    pass(&mut e, 2, &mut started);
    assert_eq!(running(&e, &all)[3..], [5, 3, 3, 2, 2], "the spec's second table (poolB and its neighbours)");
    let waiting = |q: &str| e.queues().find(|x| x.0.name == q).map(|x| x.1).expect("queue");
    assert_eq!((waiting("Milano"), waiting("Parma")), (7, 8), "NJOBS 10 and 11, PEND 7 and 8");
}

/// spec 000, "2 pools, 30 job slots, and 2 queues out of any pool", over
/// time: poolB's queues keep jobs pending while Milano and Parma, in no
/// pool, run bursts of short jobs on poolB's hosts. "The total number of
/// slots in each pool is constant", so Pisa, above Milano and Parma,
/// keeps its 5; Milano's and Parma's jobs come out of the slots of
/// Venezia and Bologna, below them, which share what is left: the spec's
/// second table, Pisa 5, Milano 3, Parma 3, Venezia 2, Bologna 2.
#[test]
fn a_pools_queue_above_the_queues_out_of_it_keeps_its_share_over_time() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nhb1 5\nhb2 5\nhb3 5\nEnd Host\n\
                 Begin HostGroup\nGROUP_NAME GROUP_MEMBER\ngroupB (hb1 hb2 hb3)\nEnd HostGroup\n";
    let queues = queue("Pisa", 44, "poolB", 30, "groupB")
        + "Begin Queue\nQUEUE_NAME = Milano\nPRIORITY = 43\nHOSTS = groupB\nEnd Queue\n"
        + "Begin Queue\nQUEUE_NAME = Parma\nPRIORITY = 43\nHOSTS = groupB\nEnd Queue\n"
        + &queue("Venezia", 43, "poolB", 30, "groupB")
        + &queue("Bologna", 43, "poolB", 30, "groupB");
    let mut lines = backlog(&["Pisa", "Venezia", "Bologna"], 400, (300, 600));
    // Milano and Parma: three jobs each at once, every 10 minutes.
    for burst in 0..60u64 {
        for q in ["Milano", "Parma"] {
            for k in 0..3u64 {
                let runtime = 590 + k;
                lines += &format!(
                    "{{\"submit\": {}, \"user\": \"m\", \"runtime\": {runtime}, \"bsub\": \"-q {q} ./short\"}}\n",
                    burst * 600
                );
            }
        }
    }
    let out = simulate(&mut engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]), &lines);
    assert_averages(
        &out,
        (3_600u64, 30_000u64),
        &[("Pisa", 5.0), ("Milano", 3.0), ("Parma", 3.0), ("Venezia", 2.0), ("Bologna", 2.0)],
        0.35,
    );
}

/// spec 000 phase 1 over time: the three queues keep jobs pending while
/// jobs of 2 to 10 minutes end and start. The division stays the spec's
/// 8, 5 and 2 ("Though queue Genova deserves 3 slots, the total slot
/// assignment must be 15, so Genova is allocated only 2 slots"): the
/// queues are ordered by their shares, and accumulated use orders only
/// queues of equal shares.
#[test]
fn phase_one_settles_at_8_5_2_as_jobs_come_and_go() {
    let out = simulate(&mut roma_verona_genova(), &backlog(&["Roma", "Verona", "Genova"], 1500, (120, 480)));
    assert_averages(&out, (3_600u64, 20_000u64), &[("Roma", 8.0), ("Verona", 5.0), ("Genova", 2.0)], 0.2);
}
