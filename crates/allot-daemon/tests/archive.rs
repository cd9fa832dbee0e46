//! MAX_JOB_NUM: once the event log holds that many finished jobs, allotd
//! archives what a snapshot of its state holds (LSF's switch of
//! `lsb.events`); `bacct`, `bhist`, `allot sim --from` and a restart read
//! the archives with the log as one.

mod common;

use common::{Daemon, config_dir, stdout, submitted_id, tempdir};

#[test]
fn an_archived_history_is_still_accounted_shown_and_replayed() {
    let dir = tempdir("archive");
    let config = config_dir(
        &dir,
        &[
            ("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 2\n"),
            ("lsb.queues", "Begin Queue\nQUEUE_NAME = normal\nEnd Queue\n"),
            ("lsb.params", "Begin Parameters\nDEFAULT_QUEUE = normal\nMAX_JOB_NUM = 2\nEnd Parameters\n"),
        ],
    );
    let state = dir.join("state");
    let d = Daemon::start_with(&state, Some(&config));
    let mut jobs = Vec::new();
    for _ in 0..5 {
        let job = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "true"], &dir));
        d.wait_for(job, "DONE", &dir);
        jobs.push(job);
    }
    // One more record after the fifth end: the archive follows a write.
    let last = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "true"], &dir));
    d.wait_for(last, "DONE", &dir);
    jobs.push(last);
    let files = allot_store::log_files(&state.join("state.db"));
    assert!(files.len() >= 3, "two archives at least, then the log: {files:?}\n{}", d.log());
    assert!(d.log().contains("archived in "), "{}", d.log());

    let summary = stdout(&d.cmd(&["bacct"], &dir));
    assert!(summary.contains(" Total number of done jobs:        6 "), "{summary}");
    let first = jobs[0].to_string();
    let history = stdout(&d.cmd(&["bhist", "-l", &first], &dir));
    assert!(history.contains("Submitted from host") && history.contains("Done successfully"), "{history}");

    let out = d.cmd(&["sim", "--from", state.to_str().expect("utf-8"), "--out", "replayed"], &dir);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", common::stderr(&out));
    let csv = std::fs::read_to_string(dir.join("replayed/jobs.csv")).expect("jobs.csv");
    assert_eq!(csv.lines().count(), 1 + 6, "every job replayed: {csv}");

    // A restart: from the snapshot, every job as it was.
    assert!(d.cmd(&["stop"], &dir).status.success());
    drop(d);
    let d = Daemon::start_with(&state, Some(&config));
    let all = stdout(&d.cmd(&["bjobs", "-a"], &dir));
    for job in &jobs {
        assert!(all.lines().any(|l| l.starts_with(&format!("{job} ")) && l.contains(" DONE ")), "{job}: {all}");
    }
}
