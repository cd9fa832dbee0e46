//! The simulator takes a workload's `bsub` options as allotd's `bsub`
//! does (one path: `allot_config::submission`): placement strings, `-m`,
//! `-n min,max`, PROCLIMIT's default, `-w` by name and by line; a job that
//! can never start is reported with why.

use allot_sim::sim::{SimOptions, run};
use allot_sim::testing::engine_from;

const HOSTS: &str = "[[hosts]]\nname = \"h1\"\nncpus = 4\ntype = \"X86_64\"\n\n\
                     [[hosts]]\nname = \"h2\"\nncpus = 4\ntype = \"X86_64\"\n\n\
                     [[hosts]]\nname = \"h3\"\nncpus = 4\ntype = \"X86_64\"\n\n\
                     [[hosts]]\nname = \"h4\"\nncpus = 4\ntype = \"SGI\"\n";

const QUEUES: &str = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n\n\
                      Begin Queue\nQUEUE_NAME = par\nPRIORITY = 20\nPROCLIMIT = 3 8\nEnd Queue\n";

/// Each job's line, start and hosts (as jobs.csv has them), and the
/// outcome.
fn replay(lines: &[&str]) -> (Vec<(u64, u64, String)>, allot_sim::sim::Outcome) {
    let mut engine = engine_from(&[("allot.toml", HOSTS), ("lsb.queues", QUEUES)]);
    let w = allot_sim::jsonl::read(&lines.join("\n"));
    assert!(w.skipped.is_empty(), "{:?}", w.skipped);
    let opts = SimOptions::default();
    let out = run(&mut engine, &w, &opts, &|_, _| serde_json::Value::Null, &mut |_| {});
    let mut ran: Vec<(u64, u64, String)> = out.records.iter().map(|r| (r.id, r.start, r.hosts.clone())).collect();
    ran.sort();
    (ran, out)
}

#[test]
fn placement_strings_hosts_and_ranges_are_taken_as_allotd_takes_them() {
    let (ran, out) = replay(&[
        r#"{"submit": 0, "user": "a", "runtime": 100, "bsub": "-n 6 -R \"span[ptile=3]\""}"#,
        r#"{"submit": 0, "user": "a", "runtime": 100, "bsub": "-n 2 -R \"select[type==SGI]\""}"#,
        r#"{"submit": 0, "user": "a", "runtime": 100, "bsub": "-m h3"}"#,
        r#"{"submit": 200, "user": "a", "runtime": 100, "bsub": "-n 4,32"}"#,
        r#"{"submit": 400, "user": "a", "runtime": 100, "bsub": "-q par"}"#,
    ]);
    assert!(out.rejected.is_empty(), "{:?}", out.rejected);
    assert_eq!(
        ran,
        [
            (1, 0, "h1*3 h2*3".to_string()),
            (2, 0, "h4*2".to_string()),
            (3, 0, "h3*1".to_string()),
            // -n 4,32 on an empty cluster: all 16 slots.
            (4, 200, "h1*4 h2*4 h3*4 h4*4".to_string()),
            // No -n in a PROCLIMIT = 3 8 queue: its default, 3.
            (5, 400, "h1*3".to_string()),
        ]
    );
}

#[test]
fn dependencies_name_jobs_of_the_workload_and_a_job_that_never_starts_says_why() {
    let (ran, out) = replay(&[
        r#"{"submit": 0, "user": "a", "runtime": 100, "bsub": "-J first"}"#,
        r#"{"submit": 0, "user": "a", "runtime": 50, "bsub": "-w done(first)"}"#,
        r#"{"submit": 10, "user": "a", "runtime": 50, "bsub": "-w ended(2)"}"#,
        r#"{"submit": 10, "user": "a", "runtime": 50, "bsub": "-w exit(1)"}"#,
        r#"{"submit": 20, "user": "a", "runtime": 50, "bsub": "-R \"select[type==NONE]\""}"#,
        r#"{"submit": 20, "user": "a", "runtime": 50, "bsub": "-w done(nosuch)"}"#,
    ]);
    assert_eq!(ran, [(1, 0, "h1*1".into()), (2, 100, "h1*1".into()), (3, 150, "h1*1".into())]);
    let rejected: Vec<(u64, &str)> = out.rejected.iter().map(|r| (r.line, r.reason.as_str())).collect();
    assert_eq!(rejected, [(6, "-w: no job of a's is named `nosuch`")]);
    let never: Vec<u64> = out.never_started.iter().map(|r| r.line).collect();
    assert_eq!(never, [4, 5], "{:?}", out.never_started);
    assert!(out.never_started.iter().all(|r| !r.reason.is_empty() && r.reason != "pending"), "{:?}", out.never_started);
}
