//! allotd comes back after anything it accepted, and refuses a log it
//! cannot trust instead of starting on an empty cluster.

mod common;

use std::process::Command;

use common::{Daemon, allotd, stderr, submitted_id, tempdir};

/// `bsub -J A true; bsub -w 'done(A)' true; allot stop; allot start`: the
/// dependent job's start replays (its dependency was met by a pass the
/// replay does not run), and allotd carries on.
#[test]
fn a_dependency_met_before_a_restart_replays() {
    let dir = tempdir("restart-deps");
    let state = dir.join("state");
    let d = Daemon::start(&state);
    let a = submitted_id(&d.cmd(&["bsub", "-J", "A", "true"], &dir));
    let b = submitted_id(&d.cmd(&["bsub", "-w", "done(A)", "true"], &dir));
    d.wait_for(a, "DONE", &dir);
    d.wait_for(b, "DONE", &dir);
    let stopped = d.cmd(&["stop"], &dir);
    assert!(stopped.status.success(), "{}", stderr(&stopped));
    drop(d);
    let d = Daemon::start(&state);
    d.wait_for(a, "DONE", &dir);
    d.wait_for(b, "DONE", &dir);
    let c = submitted_id(&d.cmd(&["bsub", "-w", "done(A)", "true"], &dir));
    d.wait_for(c, "DONE", &dir);
}

/// A 0-byte state database (a disk that lost it, a careless `>`) stops
/// allotd with what is wrong and how to recover; the file is left as it
/// was.
#[test]
fn an_empty_state_database_is_refused_not_taken_for_a_new_cluster() {
    let dir = tempdir("restart-empty-db");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).expect("state");
    std::fs::write(state.join("state.db"), b"").expect("empty");
    let out = Command::new(allotd()).env("ALLOT_STATE_DIR", &state).output().expect("allotd runs");
    assert!(!out.status.success());
    let text = stderr(&out);
    assert!(text.contains("state.db is empty (0 bytes)") && text.contains("move it aside"), "{text}");
    assert_eq!(std::fs::metadata(state.join("state.db")).expect("kept").len(), 0);
}
