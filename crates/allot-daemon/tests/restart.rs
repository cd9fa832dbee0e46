//! allotd comes back after anything it accepted, and refuses a log it
//! cannot trust instead of starting on an empty cluster.

mod common;

use std::process::Command;

use common::{Daemon, ONE_HOST, allotd, config_dir, eventually, queues, stderr, stdout, submitted_id, tempdir};

/// `bsub -J A true; bsub -w 'done(A)' true; allot stop; allot start`: the
/// dependent job's start replays (its dependency was met by a pass the
/// replay does not run), and allotd carries on. The stop wrote a snapshot
/// of the state, which the start takes up.
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
    // The stop left a snapshot of everything: the start replayed nothing.
    let log = d.log();
    let taken_up = log.lines().rev().find(|l| l.contains("replayed")).unwrap_or_default();
    assert!(taken_up.contains("taken up, 0 records after it replayed, 2 jobs"), "{log}");
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

/// A job that ends while allotd is down is recorded as ending when it
/// did, not when allotd came back: its usage is not charged for the
/// downtime.
#[test]
fn a_job_ending_while_allotd_is_down_ends_when_it_did() {
    let dir = tempdir("restart-end-time");
    let state = dir.join("state");
    let d = Daemon::start(&state);
    let job = submitted_id(&d.cmd(&["bsub", "sleep", "1"], &dir));
    d.wait_for(job, "RUN", &dir);
    assert!(d.cmd(&["stop"], &dir).status.success());
    drop(d);
    std::thread::sleep(std::time::Duration::from_secs(5));
    let back = now();
    let d = Daemon::start(&state);
    d.wait_for(job, "DONE", &dir);
    let store = allot_store::Store::open(&state.join("state.db")).expect("log");
    let records = store.job_records(allot_engine::JobId(job)).expect("records");
    let ended = records
        .iter()
        .find_map(|(t, r)| matches!(r, allot_store::Record::Finished { .. }).then_some(t.0))
        .expect("finished");
    assert!(ended + 3 <= back, "recorded at {ended}, allotd back at {back}");
}

/// The supervisor of a running job is killed (kill -9, the OOM killer):
/// allotd notices, ends the job's processes, records its end with the
/// reason, and frees its slot.
#[test]
fn a_job_whose_supervisor_is_killed_ends_and_frees_its_slot() {
    let dir = tempdir("restart-supervisor");
    let config = config_dir(&dir, &[("allot.toml", ONE_HOST), ("lsb.queues", &queues(&["normal"]))]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let job = submitted_id(&d.cmd(&["bsub", "sleep", "300"], &dir));
    let next = submitted_id(&d.cmd(&["bsub", "true"], &dir));
    d.wait_for(job, "RUN", &dir);
    let pgid_file = d.state.join("jobs").join(format!("{job}.pgid"));
    eventually("the job's process group is known", || pgid_file.exists());
    let pgid: i32 = std::fs::read_to_string(&pgid_file).expect("pgid").trim().parse().expect("number");
    let stat = std::fs::read_to_string(format!("/proc/{pgid}/stat")).expect("the job runs");
    let after_name = &stat[stat.rfind(')').expect(")") + 2..];
    let supervisor: i32 = after_name.split(' ').nth(1).expect("ppid").parse().expect("number");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(supervisor), nix::sys::signal::Signal::SIGKILL).expect("kill");
    d.wait_for(job, "EXIT", &dir);
    let long = stdout(&d.cmd(&["bjobs", "-l", &job.to_string()], &dir));
    assert!(long.contains("its supervisor died; its processes were ended"), "{long}");
    eventually("the job's processes are gone", || !std::path::Path::new(&format!("/proc/{pgid}")).exists());
    d.wait_for(next, "DONE", &dir);
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_secs()
}

/// A submission sent again with the same request id (its answer was lost)
/// gets the job the first one made, before and after a restart; no second
/// job is made.
#[test]
fn the_same_request_again_gets_the_same_job() {
    use allot_proto::{Client, Request, Response, Submit};
    let dir = tempdir("restart-request");
    let state = dir.join("state");
    let d = Daemon::start(&state);
    let submit = Submit {
        command: "sleep 30".into(),
        cwd: dir.display().to_string(),
        request: Some("hostX:123:456".into()),
        ..Submit::default()
    };
    let send = || {
        let mut client = Client::connect(&state.join("allotd.sock")).expect("connect");
        match client.call(Request::Submit(Box::new(submit.clone()))).expect("answer") {
            Response::Submitted { job, .. } => job,
            other => panic!("{other:?}"),
        }
    };
    let first = send();
    assert_eq!(send(), first);
    assert!(d.cmd(&["stop"], &dir).status.success());
    drop(d);
    let d = Daemon::start(&state);
    assert_eq!(send(), first, "after a restart too");
    let other = Submit { request: Some("hostX:123:457".into()), ..submit.clone() };
    let mut client = Client::connect(&state.join("allotd.sock")).expect("connect");
    let Response::Submitted { job, .. } = client.call(Request::Submit(Box::new(other))).expect("answer") else {
        panic!()
    };
    assert_eq!(job, first + 1, "another request is another job");
    let jobs = stdout(&d.cmd(&["bjobs", "-a", "-noheader"], &dir));
    assert_eq!(jobs.lines().count(), 2, "{jobs}");
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// A second allotd started on a state directory while the first runs
/// (or still writes its last records and snapshot) waits for it, never
/// running beside it, and takes over once it has stopped: from the
/// snapshot the stop wrote, with nothing to replay after it.
#[test]
fn a_second_allotd_waits_for_the_first_to_stop() {
    let dir = tempdir("restart-lock");
    let state = dir.join("state");
    let d = Daemon::start(&state);
    let job = submitted_id(&d.cmd(&["bsub", "true"], &dir));
    d.wait_for(job, "DONE", &dir);
    let second_log = dir.join("second.log");
    let mut second = Command::new(allotd())
        .env_remove("LSF_ENVDIR")
        .env("ALLOT_STATE_DIR", &state)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&second_log).expect("log"))
        .spawn()
        .expect("a second allotd");
    let log = || std::fs::read_to_string(&second_log).unwrap_or_default();
    eventually("the second allotd waits", || log().contains("waiting for it to stop"));
    assert!(!log().contains("replayed"), "{}", log());
    // The first goes on alone meanwhile.
    d.wait_for(job, "DONE", &dir);
    assert!(d.cmd(&["stop"], &dir).status.success());
    eventually("the second allotd takes over", || log().contains("replayed"));
    assert!(log().contains("taken up, 0 records after it replayed, 1 jobs"), "{}", log());
    d.wait_for(job, "DONE", &dir);
    assert!(d.cmd(&["stop"], &dir).status.success());
    assert!(second.wait().expect("it ends").success(), "{}", log());
}
