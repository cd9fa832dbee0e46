//! Preemption on a live allotd: a job of a preemptive queue suspends a
//! running job of a lower-priority queue (SIGSTOP: it stops making
//! progress), shows SSUSP in `bjobs`, `bqueues -l`, `bhosts` and `bhist`,
//! and resumes (SIGCONT) when the slots are free; a restart keeps it so.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{Daemon, config_dir, eventually, stdout, submitted_id, tempdir};

fn count(path: &Path) -> u64 {
    std::fs::read_to_string(path).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0)
}

#[test]
fn a_preemptive_job_suspends_a_lower_queue_s_job_until_it_ends() {
    let dir = tempdir("preempt");
    let queues = "Begin Queue\nQUEUE_NAME = high\nPRIORITY = 40\nPREEMPTION = PREEMPTIVE\nEnd Queue\n\n\
                  Begin Queue\nQUEUE_NAME = low\nPRIORITY = 20\nEnd Queue\n";
    let config =
        config_dir(&dir, &[("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 2\n"), ("lsb.queues", queues)]);
    let state = dir.join("state");
    let d = Daemon::start_with(&state, Some(&config));
    let counter = dir.join("count");
    let script = format!("i=0; while true; do i=$((i+1)); echo $i > {}; sleep 0.1; done", counter.display());
    let low = submitted_id(&d.cmd(&["bsub", "-q", "low", "-n", "2", "-o", "/dev/null", &script], &dir));
    d.wait_for(low, "RUN", &dir);
    eventually("the low job counts", || count(&counter) > 3);
    let flag = dir.join("go");
    let wait = format!("while [ ! -e {} ]; do sleep 0.1; done", flag.display());
    let high = submitted_id(&d.cmd(&["bsub", "-q", "high", "-n", "2", "-o", "/dev/null", &wait], &dir));
    d.wait_for(high, "RUN", &dir);
    d.wait_for(low, "SSUSP", &dir);
    let long = stdout(&d.cmd(&["bjobs", "-l", &low.to_string()], &dir));
    assert!(long.contains(&format!(" SUSPENDING REASONS:\n Preempted by job <{high}>;")), "{long}");
    // Stopped: it counts no further.
    let at = count(&counter);
    std::thread::sleep(Duration::from_millis(600));
    assert!(count(&counter) <= at + 1, "a suspended job makes no progress: {at} then {}", count(&counter));
    let long = stdout(&d.cmd(&["bqueues", "-l", "low"], &dir));
    let mut lines = long.lines().skip_while(|l| !l.starts_with("PRIO NICE STATUS"));
    let row: Vec<&str> = lines.nth(1).expect("a row").split_whitespace().collect();
    assert_eq!(row[7..], ["2", "0", "0", "2", "0", "0"], "NJOBS PEND RUN SSUSP USUSP RSV: {long}");
    let hosts = stdout(&d.cmd(&["bhosts"], &dir));
    let row: Vec<&str> = hosts.lines().find(|l| l.starts_with("hostA")).expect("hostA").split_whitespace().collect();
    assert_eq!(row[4..], ["4", "2", "2", "0", "0"], "NJOBS RUN SSUSP USUSP RSV: {hosts}");
    // A restart keeps it suspended, its slots the high job's.
    assert!(d.cmd(&["stop"], &dir).status.success());
    drop(d);
    let d = Daemon::start_with(&state, Some(&config));
    d.wait_for(low, "SSUSP", &dir);
    d.wait_for(high, "RUN", &dir);
    std::fs::write(&flag, b"").expect("flag");
    d.wait_for(high, "DONE", &dir);
    d.wait_for(low, "RUN", &dir);
    let at = count(&counter);
    eventually("the resumed job counts again", || count(&counter) > at + 2);
    let hist = stdout(&d.cmd(&["bhist", "-l", &low.to_string()], &dir));
    assert!(hist.contains(&format!("Suspended by the system: preempted by job <{high}>;")), "{hist}");
    assert!(hist.contains("Resumed by the system;"), "{hist}");
    let _ = d.cmd(&["bkill", &low.to_string()], &dir);
    d.wait_for(low, "EXIT", &dir);
    // LSF's combined flags (issue 31): `bjobs -aw` is `-a -w`, and
    // `-noheader -o ... -aJ NAME` reads as workflow tools write it.
    let aw = d.cmd(&["bjobs", "-aw"], &dir);
    let text = stdout(&aw);
    assert!(aw.status.success(), "{}", common::stderr(&aw));
    assert!(text.contains("DONE") && text.contains("EXIT") && text.contains(&wait[..50]), "{text}");
    let tool = d.cmd(&["bjobs", "-noheader", "-o", "jobid stat", "-aJ", "while*"], &dir);
    assert_eq!(stdout(&tool).split_whitespace().collect::<Vec<_>>(), [high.to_string().as_str(), "DONE"]);
}
