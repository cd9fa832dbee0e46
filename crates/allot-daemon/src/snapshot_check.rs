//! A restart from a snapshot: the state it gives back is the one the whole
//! log gives, even with the records before the snapshot gone (so the
//! snapshot, not the log, gave it); a snapshot this allotd cannot read is
//! passed over for the whole log.

use std::path::{Path, PathBuf};

use allot_engine::Time;
use allot_proto::Request;
use tokio::sync::mpsc;

use crate::replay_check::{Twin, open, twins};
use crate::serve::Input;

use crate::fixture_check::{HOSTS, QUEUES, end, jobs_of_every_kind, submit, with};

/// Both twins live through the same: jobs that end (fairshare usage), a
/// wide job's reservation, an array, a dependency, a held job, a closed
/// host, a held array of more elements than are made at submission (one
/// of those not made killed).
fn live(twins: &mut [Twin; 2], wake: &mpsc::Sender<Input>, t0: u64) {
    for twin in twins.iter_mut() {
        jobs_of_every_kind(twin, wake, t0);
        let big = allot_proto::Submission { name: Some("big[1-1200]".into()), hold: true, ..Default::default() };
        submit(twin, Time(t0 + 13), with(big));
        let element = allot_proto::JobRef { id: 8, index: 1100 };
        twin.request(Request::Kill { jobs: vec![element], signal: None, job_group: None }, Time(t0 + 13));
        twin.request(Request::HostControl { host: "hostB".into(), open: false }, Time(t0 + 14));
        twin.tick(Time(t0 + 14), wake);
    }
}

fn root(name: &str) -> (PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!("allot-snapshot-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let config = root.join("config");
    std::fs::create_dir_all(&config).expect("config");
    std::fs::write(config.join("allot.toml"), HOSTS).expect("allot.toml");
    std::fs::write(config.join("lsb.queues"), QUEUES).expect("lsb.queues");
    let params = "Begin Parameters\nMAX_JOB_ARRAY_SIZE = 2000\nEnd Parameters\n";
    std::fs::write(config.join("lsb.params"), params).expect("lsb.params");
    (root, config)
}

fn sql(dir: &Path, statement: &str) -> usize {
    let conn = rusqlite::Connection::open(dir.join("state.db")).expect("the log");
    conn.execute(statement, []).expect(statement)
}

/// The twins, each restarted: after a tick, the same state, and both carry
/// on alike.
fn same_after_restart(twins: &mut [Twin; 2], config: &Path, wake: &mpsc::Sender<Input>, t: Time) {
    let dir = twins[1].dir.clone();
    twins[1].state = open(&dir, config, t, wake);
    for twin in twins.iter_mut() {
        twin.tick(t, wake);
    }
    let (a, b) = (twins[0].view(t), twins[1].view(t));
    assert!(a == b, "{}", crate::replay_check::differences(&a, &b));
    for twin in twins.iter_mut() {
        end(twin, 3, 0, Time(t.0 + 5));
        twin.tick(Time(t.0 + 5), wake);
    }
    let (a, b) = (twins[0].view(Time(t.0 + 5)), twins[1].view(Time(t.0 + 5)));
    assert!(a == b, "{}", crate::replay_check::differences(&a, &b));
    // What was at stake: the wide job's reservation and the usage charged.
    assert!(a.contains(r#""name":"wide","priority":20"#) && a.contains(r#""rsv":2"#), "{a}");
    assert!(a.contains(r#""cpu_time":4.4"#), "three jobs of 1.5 s, decayed a little: {a}");
    // Its elements 11 to 1010 made; 1110 (index 1100) made to be killed.
    let tail = "unmade=[(JobId(11), JobSet { runs: [(JobId(1011), JobId(1109)), (JobId(1111), JobId(1210))] })]";
    assert!(a.contains(tail), "the big array's tail: {a}");
}

/// The twins after [`live`], in `root(name)`, the restarted one with a
/// snapshot of all of it.
fn snapshotted(name: &str, wake: &mpsc::Sender<Input>) -> (PathBuf, PathBuf, [Twin; 2], u64) {
    let (root, config) = root(name);
    let t0 = 1_700_000_000;
    let mut twins = twins(&root, &config, Time(t0), wake);
    live(&mut twins, wake, t0);
    crate::snapshot::force(&mut twins[1].state);
    twins[1].state.flush().expect("flushed with a snapshot");
    (root, config, twins, t0)
}

#[test]
fn a_restart_from_a_snapshot_needs_none_of_the_log_before_it() {
    let (wake, _heard) = mpsc::channel::<Input>(1 << 12);
    let (root, config, mut twins, t0) = snapshotted("only", &wake);
    let dir = twins[1].dir.clone();
    drop(std::mem::replace(&mut twins[1].state, open(&dir, &config, Time(t0 + 15), &wake)));
    // Every record the snapshot holds, gone: only it can give them back.
    let gone = sql(&dir, "DELETE FROM events WHERE seq <= (SELECT MAX(seq) FROM snapshots)");
    assert!(gone > 10, "{gone} records before the snapshot");
    same_after_restart(&mut twins, &config, &wake, Time(t0 + 20));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_snapshot_this_allotd_cannot_read_is_passed_over_for_the_whole_log() {
    let (wake, _heard) = mpsc::channel::<Input>(1 << 12);
    let (root, config, mut twins, t0) = snapshotted("other", &wake);
    let dir = twins[1].dir.clone();
    assert_eq!(sql(&dir, "UPDATE snapshots SET format = 999, body = x'00'"), 1);
    same_after_restart(&mut twins, &config, &wake, Time(t0 + 20));
    let _ = std::fs::remove_dir_all(&root);
}

/// MAX_JOB_NUM finished jobs: after its next snapshot the log's records up
/// to it are archived (the log keeps what follows), the state taken up from
/// the snapshot is the whole log's, and a restart that cannot read the
/// snapshot replays the archives and the log as one.
#[test]
fn the_log_is_archived_after_max_job_num_jobs_and_read_back_whole() {
    let (root, config) = root("archive");
    std::fs::write(
        config.join("lsb.params"),
        "Begin Parameters\nMAX_JOB_NUM = 2\nMAX_JOB_ARRAY_SIZE = 2000\nEnd Parameters\n",
    )
    .expect("params");
    let (wake, _heard) = mpsc::channel::<Input>(1 << 12);
    let t0 = 1_700_000_000;
    let mut twins = twins(&root, &config, Time(t0), &wake);
    live(&mut twins, &wake, t0);
    let dir = twins[1].dir.clone();
    let archives = allot_store::log_files(&dir.join("state.db"));
    assert_eq!(archives.len(), 2, "one archive, then the log: {archives:?}");
    let kept = twins[1].state.store.len().expect("len");
    let mut all = 0;
    allot_store::Store::scan_all(&dir.join("state.db"), &[], |_, _, _| all += 1).expect("scan");
    assert!(kept < all && kept > 0, "the log keeps {kept} of {all}");
    same_after_restart(&mut twins, &config, &wake, Time(t0 + 20));
    // The snapshot unreadable: the archive and the log, replayed whole.
    assert_eq!(sql(&dir, "UPDATE snapshots SET format = 999, body = x'00'"), 1);
    same_after_restart(&mut twins, &config, &wake, Time(t0 + 40));
    let _ = std::fs::remove_dir_all(&root);
}
