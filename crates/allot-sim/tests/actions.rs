//! A workload's commands on its jobs (JSON lines with `at`): `bswitch`
//! moves a pending job to a queue that dispatches it sooner and a running
//! one to the queue it is accounted in, `bresize release` frees slots a
//! pending job starts on at once, and a command that changes nothing is
//! refused with its line and why.

use allot_sim::sim::{JobRecord, Outcome, SimOptions, run};
use allot_sim::testing::engine_from;
use allot_sim::workload::{ActionKind, Skipped};

/// Two hosts of one slot; `normal` and a higher-priority `high`; an
/// application whose jobs may be resized.
fn simulate(text: &str) -> Outcome {
    let hosts = "Begin Host\nHOSTNAME model type server RESOURCES ncpus\nh1 ! LINUX 1 () 1\nh2 ! LINUX 1 () 1\n\
                 End Host\n";
    let queues = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n\
                  Begin Queue\nQUEUE_NAME = high\nPRIORITY = 50\nEnd Queue\n";
    let apps = "Begin Application\nNAME = shrink\nRESIZABLE_JOBS = Y\nEnd Application\n";
    let mut engine = engine_from(&[("lsf.cluster.c", hosts), ("lsb.queues", queues), ("lsb.applications", apps)]);
    let w = allot_sim::jsonl::read(text);
    assert!(w.skipped.is_empty(), "{:?}", w.skipped);
    run(&mut engine, &w, &SimOptions::default(), &|_, _| serde_json::Value::Null, &mut |_| {})
}

fn of(out: &Outcome, line: u64) -> &JobRecord {
    out.records.iter().find(|r| r.id == line).expect("the job ran")
}

#[test]
fn bswitch_of_a_pending_job_puts_it_in_the_queue_that_dispatches_it_first() {
    // Line 1 holds both hosts to 100; lines 2 (one slot) and 3 (two)
    // wait in normal, 2 first. At 50 line 3 moves to high: it takes both
    // hosts at 100, line 2 follows at 110. Without the command, 2 goes
    // first and 3 waits for it.
    let jobs = r#"{"submit": 0, "user": "u", "runtime": 100, "bsub": "-n 2"}
{"submit": 1, "user": "u", "runtime": 10, "bsub": "-q normal"}
{"submit": 2, "user": "u", "runtime": 10, "bsub": "-q normal -n 2"}
{"at": 50, "job": 3, "bswitch": "high"}"#;
    let out = simulate(jobs);
    assert!(out.refused_actions.is_empty(), "{:?}", out.refused_actions);
    assert_eq!((of(&out, 3).start, of(&out, 3).queue.as_str()), (100, "high"));
    assert_eq!(of(&out, 2).start, 110, "line 3 before line 2");
    let unswitched = simulate(&jobs[..jobs.rfind('\n').expect("lines")]);
    assert_eq!((of(&unswitched, 2).start, of(&unswitched, 3).start), (100, 110), "in submission order");
}

#[test]
fn bswitch_of_a_running_job_accounts_it_in_its_new_queue() {
    let out = simulate(
        r#"{"submit": 0, "user": "u", "runtime": 100, "bsub": "-q normal"}
{"at": 10, "job": 1, "bswitch": "high"}"#,
    );
    assert_eq!((of(&out, 1).start, of(&out, 1).end, of(&out, 1).queue.as_str()), (0, 100, "high"));
}

#[test]
fn bresize_release_frees_slots_a_pending_job_starts_on() {
    // Line 1 holds both hosts to 100; line 2 waits for one. At 30 line 1
    // gives h2 back: line 2 starts there at 30, line 1 ends on h1 alone.
    let out = simulate(
        r#"{"submit": 0, "user": "u", "runtime": 100, "bsub": "-n 2 -app shrink"}
{"submit": 1, "user": "u", "runtime": 10, "bsub": ""}
{"at": 30, "job": 1, "bresize": "release h2"}"#,
    );
    assert!(out.refused_actions.is_empty(), "{:?}", out.refused_actions);
    assert_eq!((of(&out, 1).hosts.as_str(), of(&out, 1).slots), ("h1*1", 1));
    assert_eq!((of(&out, 2).start, of(&out, 2).hosts.as_str()), (30, "h2*1"));
}

#[test]
fn a_command_that_changes_nothing_is_refused_with_its_line() {
    let out = simulate(
        r#"{"submit": 0, "user": "u", "runtime": 100, "bsub": ""}
{"at": 10, "job": 1, "bswitch": "nowhere"}
{"at": 10, "job": 1, "bresize": "release h1"}
{"at": 200, "job": 1, "bswitch": "high"}"#,
    );
    let refused: Vec<(u64, &str)> = out.refused_actions.iter().map(|r| (r.line, r.reason.as_str())).collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert!(refused[0].0 == 2 && refused[0].1.contains("nowhere"), "{refused:?}");
    assert!(refused[1].0 == 3 && refused[1].1.contains("resiz"), "not resizable: {refused:?}");
    assert!(refused[2].0 == 4 && refused[2].1.contains("pending or running"), "ended: {refused:?}");
    assert_eq!(of(&out, 1).queue, "normal");
}

#[test]
fn action_lines_are_read_and_bad_ones_skipped_with_their_line() {
    let w = allot_sim::jsonl::read(
        r#"{"submit": 0, "user": "u", "runtime": 100, "bsub": "-J a[1-3]"}
{"at": 5, "job": 1, "index": 2, "bresize": "release -c 1*h1 h2"}
{"at": 4, "job": 1, "bswitch": "high"}
{"at": 6, "job": 1, "bresize": "cancel"}
{"at": 6, "job": 9, "bswitch": "high"}
{"at": 6, "job": 1, "bswitch": "two words"}
{"at": 6, "job": 1, "bresize": "release 0*h1"}
{"at": 6, "job": 1, "bswitch": "high", "bresize": "cancel"}
{"at": 6, "job": 1, "bkill": ""}
{"at": 6, "job": 1, "bresize": "release -rncn h1"}"#,
    );
    let what: Vec<(u64, u64, &ActionKind)> = w.actions.iter().map(|a| (a.at, a.line, &a.what)).collect();
    let release = ActionKind::Release { hosts: vec![("h1".into(), Some(1)), ("h2".into(), None)], cancel: true };
    assert_eq!(
        what,
        [(4, 3, &ActionKind::Switch("high".into())), (5, 2, &release), (6, 4, &ActionKind::ResizeCancel)],
        "in time order"
    );
    assert_eq!(w.actions[1].index, 2);
    let skipped: Vec<u64> = w.skipped.iter().map(|s: &Skipped| s.line).collect();
    assert_eq!(skipped, [5, 6, 7, 8, 9, 10], "{:?}", w.skipped);
    assert!(w.skipped[0].reason.contains("line 9"), "{:?}", w.skipped[0]);
    assert!(w.skipped[2].reason.contains("`0*h1`"), "{:?}", w.skipped[2]);
    assert!(w.skipped[4].reason.contains("bkill"), "{:?}", w.skipped[4]);
    // An option a workload's bresize does not take is named as one, not
    // taken for a host.
    assert!(w.skipped[5].reason.contains("`-rncn`: an option where a host is expected"), "{:?}", w.skipped[5]);
}
