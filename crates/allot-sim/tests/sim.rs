//! The simulator end to end on small workloads whose schedules can be
//! worked out by hand.

use allot_engine::shares::priority::PriorityInputs;
use allot_engine::{Engine, Time};
use allot_sim::machine::{Policy, default_engine};
use allot_sim::report::{jobs_csv, share_tables_json, summary};
use allot_sim::sim::{Outcome, SimOptions, run};
use allot_sim::testing::engine_from;
use allot_sim::workload::Workload;
use allot_sim::{jsonl, swf};

fn simulate(engine: &mut Engine, w: &Workload, opts: &SimOptions) -> Outcome {
    let report = |e: &Engine, t: Time| {
        share_tables_json(e.fairshare().policies.iter().map(|p| &p.tree), t, &PriorityInputs::default())
    };
    run(engine, w, opts, &report, &mut |_| {})
}

/// Two 2-slot hosts; FCFS. Job 1 (3 slots, 0-100) takes a:2 b:1; job 2
/// (2 slots) waits for it; job 3 (1 slot) fits beside job 1 at once.
const SWF: &str = "; MaxNodes: 2\n; MaxProcs: 4\n\
    1 0 0 100 3 -1 -1 3 200 -1 1 1 1 -1 -1 -1 -1 -1\n\
    2 10 0 50 2 -1 -1 2 60 -1 1 2 1 -1 -1 -1 -1 -1\n\
    3 20 0 30 1 -1 -1 1 60 -1 0 2 1 -1 -1 -1 -1 -1\n";

#[test]
fn fcfs_on_the_header_machine() {
    let w = swf::read(SWF.as_bytes(), swf::QueueField::None).expect("read");
    let mut e = Engine::new(default_engine(&w, Policy::Fcfs));
    let out = simulate(&mut e, &w, &SimOptions::default());
    assert_eq!(
        jobs_csv(&out.records),
        "id,user,queue,submit,start,end,slots,hosts,exit,priority\n\
         3,user2,normal,20,20,50,1,node2*1,1,\n\
         1,user1,normal,0,0,100,3,node1*2 node2*1,0,\n\
         2,user2,normal,10,100,150,2,node1*2,0,\n"
    );
    let s = summary("fcfs", &w, &out, &e);
    assert_eq!((s["jobs"].as_u64(), s["rejected"].as_u64(), s["makespan"].as_u64()), (Some(3), Some(0), Some(150)));
    // waits 0, 90, 0: mean 30, p50 0, p95 90.
    assert_eq!(
        (s["mean_wait"].as_f64(), s["p50_wait"].as_u64(), s["p95_wait"].as_u64()),
        (Some(30.0), Some(0), Some(90))
    );
    // used 3*100 + 2*50 + 1*30 = 430 slot-seconds of 4 * 150.
    assert!((s["utilization"].as_f64().expect("number") - 430.0 / 600.0).abs() < 1e-12);
    // bounded slowdowns: 1, (90+50)/50 = 2.8, 1 -> mean 1.6
    assert!((s["mean_bounded_slowdown"].as_f64().expect("number") - 1.6).abs() < 1e-12);
    assert_eq!(s["users"]["user2"]["jobs"].as_u64(), Some(2));
    assert!(s["users"]["user2"]["entitled_share"].is_null(), "FCFS: no entitlement");
}

#[test]
fn the_same_trace_twice_gives_the_same_schedule() {
    let w = swf::read(SWF.as_bytes(), swf::QueueField::None).expect("read");
    let csv = || {
        let mut e = Engine::new(default_engine(&w, Policy::Fairshare));
        jobs_csv(&simulate(&mut e, &w, &SimOptions::default()).records)
    };
    assert_eq!(csv(), csv());
}

#[test]
fn kill_at_limit_ends_jobs_that_ran_past_their_request() {
    // Job 1 ran 100 s but asked for 60: by default it runs 100 s (the trace
    // shows it did); with kill_at_limit it ends at 60 with exit 137.
    let text = "; MaxProcs: 1\n1 0 0 100 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n";
    let w = swf::read(text.as_bytes(), swf::QueueField::None).expect("read");
    let mut e = Engine::new(default_engine(&w, Policy::Fcfs));
    let out = simulate(&mut e, &w, &SimOptions::default());
    assert_eq!((out.records[0].end, out.records[0].exit), (100, 0));
    let mut e = Engine::new(default_engine(&w, Policy::Fcfs));
    let out = simulate(&mut e, &w, &SimOptions { kill_at_limit: true, ..SimOptions::default() });
    assert_eq!((out.records[0].end, out.records[0].exit), (60, 137));
}

const QUEUES: &str = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nFAIRSHARE = USER_SHARES[[alice, 3] [bob, 1]]\nEnd Queue\n\
                      Begin Queue\nQUEUE_NAME = short\nPRIORITY = 40\nRUNLIMIT = 10\nEnd Queue\n";
const HOSTS: &str = "Begin Host\nHOST_NAME MXJ\nh1 2\nh2 2\nEnd Host\n";

#[test]
fn json_lines_with_bsub_options_and_bad_lines_counted() {
    let text = r#"{"submit": 0, "user": "alice", "runtime": 100, "bsub": "-n 2 ./a"}
{"submit": 0, "user": "bob", "runtime": 100, "bsub": "-n 2 ./b"}
{"submit": 5, "user": "carol", "runtime": 10, "bsub": "-q short -W 5 ./c"}
{"submit": 5, "user": "dave", "runtime": 10, "bsub": "./d"}
{"submit": 6, "user": "bob", "runtime": 10, "bsub": "-q nosuch ./e"}
not json
{"submit": 7, "user": "bob", "runtime": 10, "bsub": "-n 0 ./f"}
"#;
    let w = jsonl::read(text);
    let skipped: Vec<u64> = w.skipped.iter().map(|s| s.line).collect();
    assert_eq!(skipped, [6, 7], "{:?}", w.skipped);
    let mut e = engine_from(&[("lsb.hosts", HOSTS), ("lsb.queues", QUEUES)]);
    let out = simulate(&mut e, &w, &SimOptions { report_at: vec![50], ..SimOptions::default() });
    let rejected: Vec<(u64, &str)> = out.rejected.iter().map(|r| (r.line, r.reason.as_str())).collect();
    assert_eq!(
        rejected,
        [(4, "user `dave` has no share assignment in `normal`"), (5, "queue `nosuch` does not exist")]
    );
    let csv = jobs_csv(&out.records);
    assert!(csv.contains("\n1,alice,normal,0,0,100,2,h1*2,0,\n"), "{csv}");
    assert!(csv.contains("\n2,bob,normal,0,0,100,2,h2*2,0,\n"), "{csv}");
    assert!(csv.contains("\n3,carol,short,5,100,110,1,h1*1,0,\n"), "carol waits for a slot: {csv}");
    // At t=50 alice and bob each hold 2 slots.
    let (t, tables) = &out.reports[0];
    assert_eq!(*t, 50);
    let rows = tables[0]["rows"].as_array().expect("rows");
    let started: Vec<(&str, u64)> =
        rows.iter().map(|r| (r["name"].as_str().unwrap_or(""), r["started"].as_u64().unwrap_or(9))).collect();
    assert_eq!(started, [("alice", 2), ("bob", 2)]);
}

#[test]
fn fairshare_gives_the_larger_share_more_of_the_machine() {
    // alice has 3 shares, bob 1; both keep the 4 slots busy with 1-slot
    // jobs: alice should get about three quarters.
    let mut lines = String::new();
    for i in 0..400 {
        let user = if i % 2 == 0 { "alice" } else { "bob" };
        lines.push_str(&format!("{{\"submit\": 0, \"user\": \"{user}\", \"runtime\": 60, \"bsub\": \"./job\"}}\n"));
    }
    let w = jsonl::read(&lines);
    let mut e = engine_from(&[("lsb.hosts", HOSTS), ("lsb.queues", QUEUES)]);
    let out = simulate(&mut e, &w, &SimOptions::default());
    // Over the first 100 jobs started, count alice's.
    let mut by_start = out.records.clone();
    by_start.sort_by_key(|r| (r.start, r.id));
    let alice = by_start.iter().take(100).filter(|r| r.user == "alice").count();
    assert!((70..=80).contains(&alice), "alice got {alice} of the first 100");
    let s = summary("fairshare", &w, &out, &e);
    assert_eq!(s["users"]["alice"]["entitled_share"].as_f64(), Some(0.75));
}

/// Four one-slot hosts. Job 1 (1 slot, limit 100) runs from 0; job 2 (4
/// slots, limit 50) arrives at 1 and reserves the other three slots,
/// predicted to start at 100; jobs 3 to 11 (1 slot, limit 30) arrive at 2.
const RESERVING: &str = "; MaxNodes: 4\n; MaxProcs: 4\n\
    1 0 0 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1\n\
    2 1 0 50 4 -1 -1 4 50 -1 1 1 1 -1 -1 -1 -1 -1\n\
    3 2 0 30 1 -1 -1 1 30 -1 1 1 1 -1 -1 -1 -1 -1\n\
    4 2 0 30 1 -1 -1 1 30 -1 1 1 1 -1 -1 -1 -1 -1\n\
    5 2 0 30 1 -1 -1 1 30 -1 1 1 1 -1 -1 -1 -1 -1\n\
    6 2 0 30 1 -1 -1 1 30 -1 1 1 1 -1 -1 -1 -1 -1\n\
    7 2 0 30 1 -1 -1 1 30 -1 1 1 1 -1 -1 -1 -1 -1\n\
    8 2 0 30 1 -1 -1 1 30 -1 1 1 1 -1 -1 -1 -1 -1\n\
    9 2 0 30 1 -1 -1 1 30 -1 1 1 1 -1 -1 -1 -1 -1\n\
    10 2 0 30 1 -1 -1 1 30 -1 1 1 1 -1 -1 -1 -1 -1\n\
    11 2 0 30 1 -1 -1 1 30 -1 1 1 1 -1 -1 -1 -1 -1\n";

/// What `allot sim --reserve` and `--backfill` compare: with slot
/// reservation alone the short jobs wait behind job 2 (starting at 150,
/// 180 and 210); with backfill they run in its reserved slots before its
/// predicted start (at 2, 32 and 62, the last ending at 92), and job 2
/// still starts at 100. Backfill gives the higher utilization and the
/// lower mean wait.
#[test]
fn backfill_beats_reservation_alone() {
    let w = swf::read(RESERVING.as_bytes(), swf::QueueField::None).expect("read");
    let replay = |backfill: bool| {
        let mut config = default_engine(&w, Policy::Fairshare);
        allot_sim::machine::reserve(&mut config, backfill, allot_sim::machine::BACKFILL_RESERVE_CYCLES);
        let mut e = Engine::new(config);
        let out = simulate(&mut e, &w, &SimOptions { kill_at_limit: true, ..SimOptions::default() });
        let starts: Vec<(u64, u64)> = out.records.iter().map(|r| (r.id, r.start)).collect();
        (starts, summary("fairshare", &w, &out, &e))
    };
    let (alone, a) = replay(false);
    let (backfilled, b) = replay(true);
    let start = |starts: &[(u64, u64)], id: u64| starts.iter().find(|s| s.0 == id).map(|s| s.1);
    assert_eq!(start(&alone, 2), Some(100));
    assert_eq!((3..=11).map(|id| start(&alone, id).unwrap_or(0)).max(), Some(210));
    assert_eq!(start(&backfilled, 2), Some(100), "backfill does not delay job 2");
    let mut short: Vec<u64> = (3..=11).filter_map(|id| start(&backfilled, id)).collect();
    short.sort_unstable();
    assert_eq!(short, [2, 2, 2, 32, 32, 32, 62, 62, 62]);
    assert_eq!((a["makespan"].as_u64(), b["makespan"].as_u64()), (Some(240), Some(150)));
    let (ua, ub) = (a["utilization"].as_f64().expect("number"), b["utilization"].as_f64().expect("number"));
    let (wa, wb) = (a["mean_wait"].as_f64().expect("number"), b["mean_wait"].as_f64().expect("number"));
    assert!(ub > ua && wb < wa, "utilization {ua} -> {ub}, mean wait {wa} -> {wb}");
}

/// The interruptible backfill scenario of the next two tests, replayed with
/// `--kill-at-limit`, `lazy_extra` added to the `lazy` queue: each run as
/// (job, start, end, exit), and the outcome.
fn interruptible_replay(lazy_extra: &str) -> (Vec<(u64, u64, u64, i32)>, Outcome) {
    let hosts = "Begin Host\nHOST_NAME MXJ\nhostA 4\nEnd Host\n";
    let queues = format!(
        "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nSLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y\nEnd Queue\n\
         Begin Queue\nQUEUE_NAME = lazy\nPRIORITY = 1\nBACKFILL = Y\nINTERRUPTIBLE_BACKFILL = 60\nRUNLIMIT = 60\n{lazy_extra}\nEnd Queue\n"
    );
    let text = r#"{"submit": 0, "user": "u", "runtime": 7200, "bsub": "-W 120 ./long"}
{"submit": 0, "user": "u", "runtime": 60, "bsub": "-n 4 ./wide"}
{"submit": 5400, "user": "u", "runtime": 3000, "bsub": "-q lazy ./backfills"}
{"submit": 7260, "user": "u", "runtime": 9000, "bsub": "-q lazy ./regular"}
"#;
    let w = jsonl::read(text);
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues)]);
    let out = simulate(&mut e, &w, &SimOptions { kill_at_limit: true, ..SimOptions::default() });
    let runs = out.records.iter().map(|r| (r.id, r.start, r.end, r.exit)).collect();
    (runs, out)
}

/// With `--kill-at-limit` a job ends at the limit in force: an interruptible
/// backfill job at the limit its start cut (the reservation's predicted
/// start), a job with no limit of its own at its queue's RUNLIMIT.
#[test]
fn kill_at_limit_uses_the_limit_in_force() {
    let (ends, _) = interruptible_replay("");
    assert_eq!(
        ends,
        [(1, 0, 7200, 0), (3, 5400, 7200, 137), (2, 7200, 7260, 0), (4, 7260, 10860, 137)],
        "3 is cut to wide's predicted start; 4 runs under lazy's hour"
    );
}

/// REQUEUE_EXIT_VALUES in a replay: a run killed at its limit (exit 137)
/// goes back to pending and resumes where it stopped, so every run makes
/// progress; each run is a record.
#[test]
fn requeued_jobs_run_again_where_they_stopped() {
    let (runs, out) = interruptible_replay("REQUEUE_EXIT_VALUES = 137");
    assert_eq!(
        runs,
        [
            (1, 0, 7200, 0),
            (3, 5400, 7200, 137),
            (2, 7200, 7260, 0),
            (3, 7260, 8460, 0),
            (4, 7260, 10860, 137),
            (4, 10860, 14460, 137),
            (4, 14460, 16260, 0),
        ],
        "3 is cut at wide's start and finishes its last 20 minutes after; 4 takes three of lazy's hours"
    );
    assert_eq!((out.requeued, out.never_started.len()), (3, 0));
}

/// A trace under a multifactor policy (`allot sim --policy
/// slurm-fairtree`): every user one share under root, so each is entitled
/// to half; `jobs.csv` gives each job's priority at its start, and the
/// summary names the policy. Job 3 (user2) starts at once with fair
/// share 1 (no usage yet): 100000 * 1 + 1000 * 0 waited.
#[test]
fn a_multifactor_trace_reports_priorities_and_entitlements() {
    use allot_engine::multifactor::FairsharePolicy;
    let w = swf::read(SWF.as_bytes(), swf::QueueField::None).expect("read");
    let policy = Policy::Multifactor(FairsharePolicy::FairTree);
    let mut e = Engine::new(default_engine(&w, policy));
    let out = simulate(&mut e, &w, &SimOptions::default());
    let csv = jobs_csv(&out.records);
    assert!(csv.starts_with("id,user,queue,submit,start,end,slots,hosts,exit,priority\n"), "{csv}");
    assert!(csv.contains("\n1,user1,normal,0,0,100,3,node1*2 node2*1,0,100000.000\n"), "{csv}");
    let s = summary(policy.name(), &w, &out, &e);
    assert_eq!(s["policy"], "slurm-fairtree");
    assert_eq!(s["users"]["user1"]["entitled_share"], 0.5);
    assert_eq!(s["users"]["user2"]["entitled_share"], 0.5);
    assert_eq!(s["jobs"], 3);
}

/// A workload's `bsub -H` would never be released: skipped, said so.
#[test]
fn a_held_workload_job_is_skipped() {
    let w = jsonl::read("{\"submit\": 0, \"user\": \"a\", \"runtime\": 5, \"bsub\": \"-H ./never\"}\n");
    assert!(w.jobs.is_empty());
    assert_eq!(w.skipped.first().map(|s| s.reason.as_str()), Some("bsub: -H: not supported in a workload"));
}
