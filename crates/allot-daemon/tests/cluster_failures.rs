//! Hosts that fail, each with its outcome and nothing run twice: an agent
//! that hangs, allotd killed around a start, a clock that is off.

mod common;

use std::time::Duration;

use common::agents::TestCluster;
use common::{Daemon, alive, eventually, lines_of, stdout, submitted_id, tempdir};
use nix::sys::signal::Signal;

/// `bhist -l` of a job, and its summary row's seconds (PEND PSUSP RUN
/// USUSP SSUSP UNKWN TOTAL).
fn bhist_summary(d: &Daemon, id: u64, dir: &std::path::Path) -> (String, Vec<u64>) {
    let text = stdout(&d.cmd(&["bhist", "-l", &id.to_string()], dir));
    let row: Vec<u64> = text
        .lines()
        .skip_while(|l| !l.contains("PEND     PSUSP    RUN"))
        .nth(1)
        .map(|l| l.split_whitespace().filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default();
    assert_eq!(row.len(), 7, "{text}");
    (text, row)
}

/// `bjobs -l` of a job.
fn long(d: &Daemon, id: u64, dir: &std::path::Path) -> String {
    stdout(&d.cmd(&["bjobs", "-l", &id.to_string()], dir))
}

#[test]
fn a_hung_agent_makes_its_host_unreach_and_then_unavail_and_its_jobs_are_given_up_once() {
    let dir = tempdir("cluster-hang");
    let c = TestCluster::start(&dir, 2, (1, 3, 8));
    let d = c.daemon();
    let pid_file = dir.join("pid");
    let script = format!("echo $$ > {}; exec sleep 60", pid_file.display());
    let id = submitted_id(&d.cmd(&["bsub", "-m", "host1", &script], &dir));
    eventually("the job runs", || lines_of(&pid_file).len() == 1);
    let pid: i32 = lines_of(&pid_file)[0].parse().expect("a pid");

    // Stopped for a while, shorter than unavail_after: unreach, no new
    // work there, its job left running; back, it is ok again.
    c.signal_agent("host1", Signal::SIGSTOP);
    c.wait_host("host1", "unreach");
    let lsload = stdout(&d.cmd(&["lsload", "host1"], &dir));
    assert!(lsload.lines().nth(1).is_some_and(|l| l.split_whitespace().nth(1) == Some("unreach")), "{lsload}");
    let waits = submitted_id(&d.cmd(&["bsub", "-m", "host1", "true"], &dir));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(d.wait_for(waits, "PEND", &dir).split_whitespace().nth(2), Some("PEND"));
    assert!(alive(pid), "the job runs on while its host is unreach");
    // How it does is not known: bjobs says so, as LSF does.
    d.wait_for(id, "UNKWN", &dir);
    c.signal_agent("host1", Signal::SIGCONT);
    c.wait_host("host1", "ok");
    d.wait_for(waits, "DONE", &dir);
    d.wait_for(id, "RUN", &dir);

    // Stopped past unavail_after: the job is given up (EXIT, lost), and
    // when the agent is back it is told to end it.
    c.signal_agent("host1", Signal::SIGSTOP);
    c.wait_host("host1", "unavail");
    d.wait_for(id, "EXIT", &dir);
    let shown = long(d, id, &dir);
    assert!(shown.contains("The job was lost: host host1 became unavailable"), "{shown}");
    assert!(alive(pid), "the agent is stopped: nothing has ended the job's process yet");
    c.signal_agent("host1", Signal::SIGCONT);
    c.wait_host("host1", "ok");
    eventually("the agent ends the job allotd gave up", || !alive(pid));
    eventually("and forgets it", || c.held("host1").is_empty());
    // Given up once: one end in its history.
    let history = stdout(&d.cmd(&["bhist", "-l", &id.to_string()], &dir));
    assert_eq!(
        history.matches("Exited with exit code").count() + history.matches("Completed <exit>").count(),
        1,
        "{history}"
    );
}

#[test]
fn allotd_killed_before_a_start_reached_the_agent_runs_the_job_once_after_its_restart() {
    let dir = tempdir("cluster-dispatch-before");
    let mut c = TestCluster::configured(&dir, 1, (1, 30, 60), "");
    let runs = dir.join("runs");
    // The start is recorded, never sent: as if allotd died between.
    c.daemon = Some(Daemon::start_env(&dir.join("state"), Some(&c.config), &[("ALLOT_TEST_HOLD_STARTS", "1")]));
    c.start_agent("host1");
    c.wait_host("host1", "ok");
    let id = submitted_id(&c.daemon().cmd(&["bsub", &format!("echo ran >> {}", runs.display())], &dir));
    c.daemon().wait_for(id, "RUN", &dir);
    std::thread::sleep(Duration::from_millis(300));
    assert!(c.held("host1").is_empty() && lines_of(&runs).is_empty(), "never sent");
    c.daemon.take().expect("allotd").kill9();
    c.start_daemon();
    // The agent reconnects without the run: never acknowledged, so sent.
    c.daemon().wait_for(id, "DONE", &dir);
    assert_eq!(lines_of(&runs), ["ran"]);
}

#[test]
fn allotd_killed_after_the_agent_took_a_start_finds_the_job_running_and_its_end_once() {
    let dir = tempdir("cluster-dispatch-after");
    let mut c = TestCluster::start(&dir, 2, (1, 30, 60));
    let runs = dir.join("runs");
    let script = format!("echo started >> {0}; sleep 3; echo ended >> {0}", runs.display());
    let long_one = submitted_id(&c.daemon().cmd(&["bsub", "-m", "host2", &script], &dir));
    let short =
        submitted_id(&c.daemon().cmd(&["bsub", "-m", "host1", &format!("echo short >> {}", runs.display())], &dir));
    eventually("both ran", || lines_of(&runs).len() == 2);
    c.daemon.take().expect("allotd").kill9();
    // One ends while allotd is away.
    eventually("the long one ends", || lines_of(&runs).len() == 3);
    c.start_daemon();
    c.daemon().wait_for(long_one, "DONE", &dir);
    c.daemon().wait_for(short, "DONE", &dir);
    let mut seen = lines_of(&runs);
    seen.sort();
    assert_eq!(seen, ["ended", "short", "started"], "each ran once");
    eventually("both agents let go", || c.held("host1").is_empty() && c.held("host2").is_empty());
}

#[test]
fn a_host_whose_clock_is_minutes_off_has_its_jobs_end_when_they_did() {
    let dir = tempdir("cluster-clock");
    let mut c = TestCluster::configured(&dir, 2, (1, 30, 60), "");
    c.start_daemon();
    c.start_agent("host1");
    // host2's clock is five minutes behind.
    c.agent_env.push(("ALLOT_TEST_CLOCK_OFFSET".into(), "-300".into()));
    c.start_agent("host2");
    c.wait_host("host1", "ok");
    c.wait_host("host2", "ok");
    let id = submitted_id(&c.daemon().cmd(&["bsub", "-m", "host2", "sleep 2"], &dir));
    c.daemon().wait_for(id, "DONE", &dir);
    // Started and ended by allotd's clock: the run time is the job's.
    let shown = long(c.daemon(), id, &dir);
    let at = |what: &str| -> i64 {
        let line = shown.lines().find(|l| l.contains(what)).unwrap_or_else(|| panic!("{what}: {shown}"));
        // `Wed Nov 25 10:12:05: Started ...`
        let hms = line.split_whitespace().nth(3).expect("a time").trim_end_matches(':');
        hms.split(':').filter_map(|p| p.parse::<i64>().ok()).fold(0, |acc, p| acc * 60 + p)
    };
    let ran = at(": Done successfully") - at(": Started");
    assert!((1..=4).contains(&ran), "ran {ran} s: {shown}");
    assert!(c.daemon().log().contains("host host2: its clock is -30"), "{}", c.daemon().log());
}

#[test]
fn a_rerunnable_job_lost_with_its_host_runs_again_elsewhere_and_its_first_run_is_ended() {
    let dir = tempdir("cluster-rerun");
    let mut c = TestCluster::configured(&dir, 2, (1, 2, 4), "RERUNNABLE = Y\n");
    c.start_all(2);
    let d = c.daemon();
    assert!(d.cmd(&["badmin", "hclose", "host2"], &dir).status.success());
    let runs = dir.join("runs");
    let pids = dir.join("pids");
    // The queue's RERUNNABLE for one, `bsub -rn` against it for the other.
    let script = |tag: &str| {
        format!(
            "echo {tag} $ALLOT_ATTEMPT >> {0}; echo $$ >> {1}; [ $ALLOT_ATTEMPT = 1 ] && exec sleep 60; true",
            runs.display(),
            pids.display()
        )
    };
    let rerun = submitted_id(&d.cmd(&["bsub", &script("a")], &dir));
    let not = submitted_id(&d.cmd(&["bsub", "-rn", &script("b")], &dir));
    eventually("both run on host1", || lines_of(&runs).len() == 2);
    let first: Vec<i32> = lines_of(&pids).iter().map(|p| p.parse().expect("pid")).collect();
    assert!(d.cmd(&["badmin", "hopen", "host2"], &dir).status.success());
    c.signal_agent("host1", Signal::SIGSTOP);
    c.wait_host("host1", "unavail");
    d.wait_for(rerun, "DONE", &dir);
    d.wait_for(not, "EXIT", &dir);
    assert!(long(d, not, &dir).contains("The job was lost: host host1 became unavailable"));
    let rerun_shown = stdout(&d.cmd(&["bjobs", "-a", "-noheader", &rerun.to_string()], &dir));
    assert!(rerun_shown.contains("host2"), "ran again on host2: {rerun_shown}");
    let mut seen = lines_of(&runs);
    seen.sort();
    assert_eq!(seen, ["a 1", "a 2", "b 1"], "a ran again as its next attempt; b did not");
    c.signal_agent("host1", Signal::SIGCONT);
    c.wait_host("host1", "ok");
    eventually("host1's agent ends both first runs", || first.iter().all(|&p| !alive(p)));
}

#[test]
fn a_run_its_agent_no_longer_holds_ends_as_lost_and_nothing_runs_it_twice() {
    let dir = tempdir("cluster-forgotten");
    let mut c = TestCluster::start(&dir, 2, (1, 30, 60));
    let pids = dir.join("pids");
    let script = format!("echo $$ >> {}; exec sleep 60", pids.display());
    let id = submitted_id(&c.daemon().cmd(&["bsub", "-m", "host1", &script], &dir));
    eventually("the job runs on host1", || lines_of(&pids).len() == 1);
    let pid: i32 = lines_of(&pids)[0].parse().expect("pid");
    // The host loses everything: its agent, the job, the agent's files.
    c.kill9_agent("host1");
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
    // Its supervisor may still be writing the run's end there as the
    // files go: removed again until they are gone.
    let jobs = c.agent_state("host1").join("jobs");
    eventually("the agent's files are gone", || std::fs::remove_dir_all(&jobs).is_ok() || !jobs.exists());
    c.start_agent("host1");
    c.wait_host("host1", "ok");
    c.daemon().wait_for(id, "EXIT", &dir);
    let shown = long(c.daemon(), id, &dir);
    assert!(shown.contains("The job was lost: the agent of host host1 no longer holds it"), "{shown}");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(lines_of(&pids).len(), 1, "not run again");
}

/// The time a job's host could not be reached is UNKWN in `bhist`, not
/// RUN, and `bhist -l` says when it was and when its host was back; the
/// same after a restart of allotd (the host states are in its log).
#[test]
fn the_time_a_job_s_host_was_unreachable_is_unkwn_in_bhist() {
    let dir = tempdir("cluster-unkwn");
    let mut c = TestCluster::start(&dir, 2, (1, 2, 60));
    let id = submitted_id(&c.daemon().cmd(&["bsub", "-m", "host1", "-o", "/dev/null", "sleep 15"], &dir));
    c.daemon().wait_for(id, "RUN", &dir);
    c.signal_agent("host1", Signal::SIGSTOP);
    c.daemon().wait_for(id, "UNKWN", &dir);
    std::thread::sleep(Duration::from_secs(2));
    c.signal_agent("host1", Signal::SIGCONT);
    c.daemon().wait_for(id, "RUN", &dir);
    c.daemon().wait_for(id, "DONE", &dir);
    let check = |d: &Daemon| {
        let (text, row) = bhist_summary(d, id, &dir);
        assert!(text.contains(": Unknown; unable to reach the execution host;"), "{text}");
        assert!(text.contains(": Running;"), "{text}");
        assert!(row[5] >= 2, "at least 2 s UNKWN: {text}");
        assert_eq!(row[2] + row[5], row[6] - row[0], "RUN and UNKWN make the run: {text}");
    };
    check(c.daemon());
    if let Some(d) = c.daemon.take() {
        d.kill9();
    }
    c.start_daemon();
    check(c.daemon());
}

/// A job that ends on its host while allotd is down ends when it did, not
/// when allotd is back: the restarted allotd waits for its running jobs'
/// agents before its first pass, so their ends are logged at their time
/// (`bhist` counts its run as it was).
#[test]
fn a_job_that_ends_while_allotd_is_down_ends_when_it_did() {
    let dir = tempdir("cluster-down-end");
    let mut c = TestCluster::start(&dir, 2, (1, 30, 60));
    let id = submitted_id(&c.daemon().cmd(&["bsub", "-m", "host1", "-o", "/dev/null", "sleep 2"], &dir));
    c.daemon().wait_for(id, "RUN", &dir);
    if let Some(d) = c.daemon.take() {
        d.kill9();
    }
    std::thread::sleep(Duration::from_secs(8));
    c.start_daemon();
    c.daemon().wait_for(id, "DONE", &dir);
    let (text, row) = bhist_summary(c.daemon(), id, &dir);
    assert!(row[2] <= 4, "it ran about 2 s, not until allotd was back (8 s and more): {text}");
}

/// A job that ends while its host's agent is not heard (stopped here; a
/// host cut off alike), with allotd going on meanwhile: its end, heard
/// late, is logged after what allotd did meanwhile, but the job ended,
/// and is charged, when it did (`bhist` counts its run as it was, and
/// `bjobs -l` shows its end then).
#[test]
fn a_job_whose_end_is_heard_late_ends_when_it_did() {
    let dir = tempdir("cluster-late-end");
    let c = TestCluster::start(&dir, 2, (1, 30, 60));
    let cmd = "touch started && sleep 2";
    let id = submitted_id(&c.daemon().cmd(&["bsub", "-m", "host1", "-o", "/dev/null", cmd], &dir));
    c.daemon().wait_for(id, "RUN", &dir);
    // Its command running, not only its start logged: an agent stopped
    // before it launched the job would start it late, and rightly charge
    // it from then.
    eventually("the job's command runs", || dir.join("started").exists());
    c.signal_agent("host1", Signal::SIGSTOP);
    std::thread::sleep(Duration::from_secs(5));
    // allotd goes on: the log's clock passes the job's end.
    let d = c.daemon();
    let other = submitted_id(&d.cmd(&["bsub", "-m", "host2", "-o", "/dev/null", "true"], &dir));
    d.wait_for(other, "DONE", &dir);
    std::thread::sleep(Duration::from_secs(2));
    c.signal_agent("host1", Signal::SIGCONT);
    d.wait_for(id, "DONE", &dir);
    let (text, row) = bhist_summary(d, id, &dir);
    assert!(row[2] <= 4, "it ran about 2 s, not until its end was heard (7 s and more): {text}");
}
