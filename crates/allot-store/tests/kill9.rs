//! A process appending to the store is killed with SIGKILL at a random
//! moment; every batch it acknowledged is there after reopening.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use allot_engine::Time;
use allot_store::{Record, Store};

const CHILD: &str = "ALLOT_STORE_KILL9_CHILD";

/// Run as the child: append batches forever, printing each acknowledged
/// sequence number.
#[test]
fn child_appends_until_killed() {
    let Ok(path) = std::env::var(CHILD) else { return };
    let mut store = Store::open(std::path::Path::new(&path)).expect("open");
    for i in 0u64.. {
        let batch: Vec<(Time, Record)> =
            (0..5).map(|k| (Time(i), Record::HostChanged { host: format!("h{}", i * 5 + k), up: true })).collect();
        let last = store.append(&batch).expect("append");
        println!("acked {last}");
    }
}

#[test]
fn acknowledged_records_survive_kill_9() {
    let dir = std::env::temp_dir().join(format!("allot-store-kill9-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("state.db");
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", "child_appends_until_killed", "--nocapture", "--test-threads=1"])
        .env(CHILD, &path)
        .stdout(Stdio::piped())
        .spawn()
        .expect("child");
    let stdout = child.stdout.take().expect("stdout");
    let mut acked = 0u64;
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("line");
        if let Some(n) = line.strip_prefix("acked ") {
            acked = n.trim().parse().expect("number");
            if acked >= 200 {
                break;
            }
        }
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let store = Store::open(&path).expect("reopen");
    let mut last = 0;
    let mut count = 0;
    store
        .replay(|seq, _, _| {
            assert_eq!(seq, last + 1, "no gap");
            last = seq;
            count += 1;
        })
        .expect("replay");
    assert!(count >= acked, "{count} records after the kill, {acked} acknowledged");
    assert_eq!(count % 5, 0, "whole batches only");
    let _ = std::fs::remove_dir_all(&dir);
}
