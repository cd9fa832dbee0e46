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
    let start = |job| Record::Started { job: JobId(job), alloc: vec![("h1".into(), 1)], backfill_limit: None };
    let end = |job| Record::Finished {
        job: JobId(job),
        exit: 0,
        cpu_time: 0.0,
        max_mem_kb: 0,
        reason: None,
        pre_exec: None,
        ran_until: None,
    };
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
        (Time(0), Record::Started { job: JobId(1), alloc: vec![("h1".into(), 1)], backfill_limit: None }),
    ];
    let h = History::from_records("hand-written".into(), log).expect("a history");
    let queue = "Begin Queue\nQUEUE_NAME = other\nPRIORITY = 30\nEnd Queue\n";
    let other = Recorded::load(Some("no queue normal"), &[files(1)[0].clone(), ("lsb.queues".into(), queue.into())])
        .expect("loads");
    let (after, _) = allot_sim::replay::replay(&h, Some(other)).expect("replays");
    assert_eq!(after.outcome.rejected.len(), 1, "{:?}", after.outcome.rejected);
    assert_eq!(after.differences().len(), 1, "{:?}", after.differences());
}

/// A log read from its state database (a first look that passes over
/// submissions and passes but for their times, then the records decoded
/// on a thread of their own as the replay takes them) replays as the same
/// records held in memory. A submission damaged on disk, which the first
/// look passes over, is named by its number when the replay reaches it; a
/// log that lost records between the look and the replay is refused, not
/// replayed short.
#[test]
fn a_log_read_from_disk_replays_as_the_same_records_in_memory() {
    let dir = std::env::temp_dir().join(format!("allot-sim-history-read-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("state.db");
    let end = |job| Record::Finished {
        job: JobId(job),
        exit: 0,
        cpu_time: 1.0,
        max_mem_kb: 0,
        reason: None,
        pre_exec: None,
        ran_until: None,
    };
    let mut log: Vec<(Time, Record)> =
        vec![(Time(5), Record::Reconfigured { config_dir: Some("two".into()), files: files(2) })];
    // Enough jobs for several of the stream's batches.
    for job in 1..=3000u64 {
        let t = 10 * job;
        log.push((Time(t), submitted(job)));
        log.push((Time(t), Record::Scheduled { full: false }));
        log.push((Time(t), Record::Started { job: JobId(job), alloc: vec![("h1".into(), 1)], backfill_limit: None }));
        log.push((Time(t + 15), end(job)));
    }
    allot_store::Store::open(&path).expect("store").append(&log).expect("written");

    let read = History::read(&dir).expect("a history");
    let held = History::from_records("held".into(), log).expect("a history");
    assert_eq!((read.first_submit, read.horizon, read.first.0), (10, 30_015, Time(5)));
    assert_eq!(read.pass_times, held.pass_times);
    assert_eq!(read.runs, held.runs);
    let (from_disk, _) = allot_sim::replay::replay(&read, None).expect("replays");
    let (from_memory, _) = allot_sim::replay::replay(&held, None).expect("replays");
    assert!(from_disk.differences().is_empty(), "{:?}", from_disk.differences());
    assert_eq!(from_disk.made_again(), 3000);
    assert_eq!(from_disk.outcome.records, from_memory.outcome.records);

    let raw = rusqlite::Connection::open(&path).expect("raw");
    let read = History::read(&dir).expect("a history");
    raw.execute("DELETE FROM events WHERE seq = 9000", []).expect("lost");
    let err = allot_sim::replay::replay(&read, None).err().expect("refused").to_string();
    assert!(err.contains("the event log changed while it was read (12001 records, then 12000)"), "{err}");

    // Record 4002 is job 1001's submission.
    raw.execute("UPDATE events SET record = '{\"Submitted\":{' WHERE seq = 4002", []).expect("damaged");
    let damaged = History::read(&dir).expect("the first look passes over submissions");
    let err = allot_sim::replay::replay(&damaged, None).err().expect("refused").to_string();
    assert!(err.contains("record 4002 is not readable"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
