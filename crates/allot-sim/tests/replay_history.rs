//! The replay of a history (`allot sim --from`) on a hand-written log:
//! what allotd recorded, replayed under another configuration.

use allot_config::submission::Submission;
use allot_engine::{JobId, JobSpec, Time};
use allot_sim::history::{History, Recorded};
use allot_store::{JobRecord, Record};

fn files(slots: u32) -> Vec<(String, String)> {
    vec![
        ("allot.toml".into(), format!("[[hosts]]\nname = \"h1\"\nncpus = {slots}\n")),
        ("lsb.queues".into(), "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n".into()),
    ]
}

fn submitted(job: u64) -> Record {
    let record = JobRecord {
        spec: JobSpec { user: "u".into(), queue: Some("normal".into()), slots: 1, ..JobSpec::default() },
        name: format!("j{job}"),
        command: "true".into(),
        cwd: "/".into(),
        output: None,
        error: None,
        env: Vec::new().into(),
        from_host: "h1".into(),
        project: None,
        estimated_run_time: None,
        array: None,
        extras: None,
    };
    let typed = Submission { user: "u".into(), queue: Some("normal".into()), slots: 1, ..Submission::default() };
    Record::Submitted { job: JobId(job), number: None, record: Box::new(record), typed: Some(Box::new(typed)) }
}

/// Job 2 ran for under a second at 10 on the second slot of h1, its end
/// logged right after its start. On one slot, the replay can start it
/// only once job 1 ends, later in the same second: it is not in step with
/// the log any more (its end there has passed), ends after its own run
/// (none), and leaves the slot free.
#[test]
fn a_run_of_under_a_second_started_later_in_its_second_still_ends() {
    let start = |job| Record::Started { job: JobId(job), alloc: vec![("h1".into(), 1)] };
    let end =
        |job| Record::Finished { job: JobId(job), exit: 0, cpu_time: 0.0, max_mem_kb: 0, reason: None, pre_exec: None };
    let pass = || Record::Scheduled { full: true };
    let log: Vec<(Time, Record)> = vec![
        (Time(0), Record::Reconfigured { config_dir: Some("two".into()), files: files(2) }),
        (Time(0), submitted(1)),
        (Time(0), pass()),
        (Time(0), start(1)),
        (Time(10), submitted(2)),
        (Time(10), pass()),
        (Time(10), start(2)),
        (Time(10), end(2)),
        (Time(10), end(1)),
        (Time(10), pass()),
        (Time(20), submitted(3)),
        (Time(20), pass()),
        (Time(20), start(3)),
        (Time(30), end(3)),
    ];
    let h = History::from_records("hand-written".into(), log).expect("a history");
    let (same, _) = allot_sim::replay::replay(&h, None).expect("replays");
    assert!(same.differences().is_empty(), "{:?}", same.differences());
    assert_eq!(same.replayed.len(), 3);

    let one = Recorded::load(Some("one"), &files(1)).expect("loads");
    let (after, _) = allot_sim::replay::replay(&h, Some(one)).expect("replays");
    let starts: Vec<(u64, u64, u64)> = after.outcome.records.iter().map(|r| (r.id, r.start, r.end)).collect();
    assert_eq!(starts, [(1, 0, 10), (2, 10, 10), (3, 20, 30)], "running: {:?}", after.running);
    assert!(after.running.is_empty() && after.waiting.is_empty());
}

/// A start allotd made that the replay cannot (its job refused here) is a
/// difference, not left out.
#[test]
fn a_start_the_replay_cannot_make_is_a_difference() {
    let log: Vec<(Time, Record)> = vec![
        (Time(0), Record::Reconfigured { config_dir: Some("two".into()), files: files(2) }),
        (Time(0), submitted(1)),
        (Time(0), Record::Scheduled { full: true }),
        (Time(0), Record::Started { job: JobId(1), alloc: vec![("h1".into(), 1)] }),
    ];
    let h = History::from_records("hand-written".into(), log).expect("a history");
    let queue = "Begin Queue\nQUEUE_NAME = other\nPRIORITY = 30\nEnd Queue\n";
    let other = Recorded::load(Some("no queue normal"), &[files(1)[0].clone(), ("lsb.queues".into(), queue.into())])
        .expect("loads");
    let (after, _) = allot_sim::replay::replay(&h, Some(other)).expect("replays");
    assert_eq!(after.outcome.rejected.len(), 1, "{:?}", after.outcome.rejected);
    assert_eq!(after.differences().len(), 1, "{:?}", after.differences());
}
