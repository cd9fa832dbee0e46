//! Where a job runs and what it carries, end to end on the real daemon:
//! a configuration that names no host runs on this machine; `bsub -Jd`
//! (the job's description) and `bsub -L` (its login shell).

mod common;

use common::*;

/// A configuration directory holding only `allot.toml` (to turn a setting
/// on) runs on this machine, as the embedded defaults do, not on 0 hosts
/// where every job would wait; a restart takes it up the same.
#[test]
fn a_configuration_naming_no_host_runs_jobs_on_this_machine() {
    let dir = tempdir("no-hosts");
    let config = config_dir(&dir, &[("allot.toml", "[daemon]\nusage_interval = 5\n")]);
    let state = dir.join("state");
    let d = Daemon::start_with(&state, Some(&config));
    let job = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "true"], &dir));
    d.wait_for(job, "DONE", &dir);
    let this = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname").trim().to_string();
    let hosts = stdout(&d.cmd(&["bhosts", "-w"], &dir));
    assert!(hosts.lines().nth(1).is_some_and(|l| l.starts_with(&this)), "{hosts}");
    assert!(d.cmd(&["stop"], &dir).status.success());
    drop(d);
    let d = Daemon::start_with(&state, Some(&config));
    d.wait_for(job, "DONE", &dir);
    let again = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "true"], &dir));
    d.wait_for(again, "DONE", &dir);
}

/// `bsub -Jd`: the job's description, which `bjobs -l` shows after its
/// project, as LSF does, with control characters escaped like all a
/// submitter writes.
#[test]
fn a_jobs_description_shows_in_bjobs_l() {
    let dir = tempdir("description");
    let d = Daemon::start(&dir.join("state"));
    let job = submitted_id(&d.cmd(&["bsub", "-H", "-Jd", "sweep of\x1b[2J runs", "-o", "/dev/null", "true"], &dir));
    let long = stdout(&d.cmd(&["bjobs", "-l", &job.to_string()], &dir));
    let flat = long.replace("\n                     ", "");
    assert!(flat.contains("Project <default>, Job Description <sweep of\\e[2J runs>, Status <PSUSP>"), "{long}");
    let plain = submitted_id(&d.cmd(&["bsub", "-H", "-o", "/dev/null", "true"], &dir));
    assert!(!stdout(&d.cmd(&["bjobs", "-l", &plain.to_string()], &dir)).contains("Job Description"));
}

/// `bsub -L /bin/bash` (and `#BSUB -L`, as job scripts in the wild write
/// it): the job's command runs under that login shell, its environment
/// set up as a login sets it up; a shell not named by its absolute path is
/// refused, as LSF refuses it.
#[test]
fn a_job_runs_under_the_login_shell_it_names() {
    let dir = tempdir("login-shell");
    let d = Daemon::start(&dir.join("state"));
    let out = dir.join("out");
    let job = submitted_id(&d.cmd(
        &["bsub", "-L", "/bin/bash", "-o", out.to_str().expect("utf-8"), "shopt -q login_shell && echo login"],
        &dir,
    ));
    d.wait_for(job, "DONE", &dir);
    assert_eq!(job_output(&out).as_deref(), Some("login\n"));
    let refused = d.cmd(&["bsub", "-L", "bash", "true"], &dir);
    assert!(stderr(&refused).contains("-L bash: expected the login shell's absolute path"), "{}", stderr(&refused));
    let plain = dir.join("plain");
    let job = submitted_id(&d.cmd(&["bsub", "-o", plain.to_str().expect("utf-8"), "echo $0"], &dir));
    d.wait_for(job, "DONE", &dir);
    assert_eq!(job_output(&plain).as_deref(), Some("/bin/sh\n"), "without -L, /bin/sh as before");
}
