//! What LSF users meet first: job scripts with `#BSUB` lines, memory
//! limits (`-M`) and run limits ended as LSF ends them, with the reason.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{Daemon, allot, config_dir, eventually, job_output, stderr, stdout, submitted_id, tempdir};

/// `bsub < script` as a user (or dask-jobqueue) sends it.
fn bsub_script(d: &Daemon, dir: &std::path::Path, script: &str, args: &[&str]) -> std::process::Output {
    let mut child = Command::new(allot())
        .arg("bsub")
        .args(args)
        .env("ALLOT_STATE_DIR", &d.state)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bsub");
    child.stdin.take().expect("stdin").write_all(script.as_bytes()).expect("script");
    child.wait_with_output().expect("bsub ends")
}

#[test]
fn a_job_scripts_bsub_lines_are_applied_and_the_command_line_wins() {
    let dir = tempdir("limits-script");
    let d = Daemon::start(&dir.join("state"));
    let script = "#!/bin/sh\n#BSUB -J worker\n#BSUB -q normal\n#BSUB -n 1\n#BSUB -M 100000\n#BSUB -W 00:30\n\
                  #BSUB -o script.%J\necho ran as $LSB_JOBNAME\n";
    let job = submitted_id(&bsub_script(&d, &dir, script, &[]));
    d.wait_for(job, "DONE", &dir);
    assert_eq!(job_output(&dir.join(format!("script.{job}"))).expect("-o applied"), "ran as worker\n");
    let long = stdout(&d.cmd(&["bjobs", "-l", &job.to_string()], &dir));
    assert!(long.contains("Job Name <worker>") && long.contains("RUNLIMIT\n 30.0 min"), "{long}");
    // The command line wins over the script.
    let again = submitted_id(&bsub_script(&d, &dir, script, &["-J", "mine", "-o", "cli.%J"]));
    d.wait_for(again, "DONE", &dir);
    assert_eq!(job_output(&dir.join(format!("cli.{again}"))).expect("-o from the command line"), "ran as mine\n");
    // No name given: the script's first line, not the whole script.
    let plain = submitted_id(&bsub_script(&d, &dir, "#!/bin/sh\necho plain\n", &["-o", "/dev/null"]));
    let line = d.wait_for(plain, "DONE", &dir);
    assert!(line.contains("#!/bin/sh") && !line.contains("echo plain"), "{line}");
    // Nothing to run, and a bad directive: refused, saying where.
    let empty = bsub_script(&d, &dir, "\n", &[]);
    assert_eq!(stderr(&empty), "bsub: the job script has no command to run. Job not submitted.\n");
    let bad = bsub_script(&d, &dir, "#!/bin/sh\n#BSUB -W soon\ntrue\n", &[]);
    assert_eq!(stderr(&bad), "bsub: job script line 2: -W soon: expected `[hours:]minutes`. Job not submitted.\n");
    // `bsub script` reads it too when LSB_BSUB_PARSE_SCRIPT=Y.
    std::fs::write(dir.join("job.sh"), script).expect("script file");
    let out = Command::new(allot())
        .args(["bsub", "job.sh"])
        .env("ALLOT_STATE_DIR", &d.state)
        .env("LSB_BSUB_PARSE_SCRIPT", "Y")
        .current_dir(&dir)
        .output()
        .expect("bsub");
    let file_job = submitted_id(&out);
    d.wait_for(file_job, "DONE", &dir);
    assert_eq!(job_output(&dir.join(format!("script.{file_job}"))).expect("out"), "ran as worker\n");
}

/// allotd on one host of one slot, with `queue` as its lsb.queues and a
/// JOB_TERMINATE_INTERVAL of 1 s (its configuration in `dir/config`).
fn one_host(dir: &std::path::Path, queue: &str) -> Daemon {
    let config = config_dir(
        dir,
        &[
            ("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 1\n"),
            ("lsb.queues", queue),
            ("lsb.params", "Begin Parameters\nJOB_TERMINATE_INTERVAL = 1\nEnd Parameters\n"),
        ],
    );
    Daemon::start_with(&dir.join("state"), Some(&config))
}

/// A job that notes in `signals` each of USR1, USR2, INT and TERM it gets,
/// with a run limit of `seconds` (the request takes seconds; `bsub -W`
/// counts minutes).
fn trapping(signals: &std::path::Path, dir: &std::path::Path, seconds: u64) -> allot_proto::Submit {
    let traps: String = ["USR1", "USR2", "INT", "TERM"]
        .iter()
        .map(|s| format!("trap 'echo {s} >> {}' {s}; ", signals.display()))
        .collect();
    allot_proto::Submit {
        command: format!("{traps}while :; do sleep 0.2; done"),
        cwd: dir.display().to_string(),
        output: Some(("/dev/null".into(), false)),
        submission: allot_proto::Submission { run_limit: Some(seconds), ..Default::default() },
        ..allot_proto::Submit::default()
    }
}

/// A job over its `-M` (measured every second here) is ended,
/// TERM_MEMLIMIT.
#[test]
fn a_job_over_its_memory_limit_is_ended_with_the_reason() {
    let dir = tempdir("limits-memory");
    let config = config_dir(
        &dir,
        &[
            ("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 2\n\n[daemon]\nusage_interval = 1\n"),
            ("lsb.queues", "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n"),
            ("lsb.params", "Begin Parameters\nJOB_TERMINATE_INTERVAL = 1\nEnd Parameters\n"),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let hog = "python3 -c 'import time; x = bytearray(300 * 1024 * 1024); time.sleep(120)'";
    let job = submitted_id(&d.cmd(&["bsub", "-M", "50MB", "-o", "/dev/null", hog], &dir));
    let small = submitted_id(&d.cmd(&["bsub", "-M", "1GB", "-o", "/dev/null", "sleep 2"], &dir));
    d.wait_for(job, "EXIT", &dir);
    d.wait_for(small, "DONE", &dir);
    let long = stdout(&d.cmd(&["bjobs", "-l", &job.to_string()], &dir));
    assert!(long.contains("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit."), "{long}");
    let hist = stdout(&d.cmd(&["bhist", "-l", &job.to_string()], &dir));
    assert!(hist.contains("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit;"), "{hist}");
}

/// Its warning action (`-wa USR1 -wt`) comes first; at its run limit a job
/// gets SIGINT, then SIGTERM, then SIGKILL, JOB_TERMINATE_INTERVAL apart,
/// and ends TERM_RUNLIMIT.
#[test]
fn a_job_at_its_run_limit_is_warned_then_ended_with_the_reason() {
    use allot_proto::{Client, Request, Response, Submit};
    let dir = tempdir("limits-run");
    let d = one_host(&dir, "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n");
    let signals = dir.join("signals");
    // A 3-second limit, warned 2 seconds before (bsub -W and -wt count
    // minutes; the request takes seconds).
    let submit = Submit { warning: Some(("USR1".into(), 2)), ..trapping(&signals, &dir, 3) };
    let mut client = Client::connect(&d.state.join("allotd.sock")).expect("connect");
    let Response::Submitted { job, .. } = client.call(Request::Submit(Box::new(submit))).expect("answer") else {
        panic!()
    };
    d.wait_for(job, "EXIT", &dir);
    assert_eq!(std::fs::read_to_string(&signals).expect("trapped"), "USR1\nINT\nTERM\n", "warned, then ended");
    let long = stdout(&d.cmd(&["bjobs", "-l", &job.to_string()], &dir));
    assert!(
        long.contains("Exited with exit code 137")
            && long.contains("TERM_RUNLIMIT: job killed after reaching LSF run time limit."),
        "{long}"
    );
    // A warning action must be a signal, and needs its time.
    let bad = d.cmd(&["bsub", "-wa", "NOPE", "-wt", "1", "true"], &dir);
    assert_eq!(stderr(&bad), "bsub: -wa NOPE: unknown signal. Job not submitted.\n");
    let half = d.cmd(&["bsub", "-wa", "URG", "true"], &dir);
    assert!(stderr(&half).starts_with("bsub: -wa and -wt go together"), "{}", stderr(&half));
    // bkill says who killed it.
    let other = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "sleep", "60"], &dir));
    d.wait_for(other, "RUN", &dir);
    assert!(d.cmd(&["bkill", &other.to_string()], &dir).status.success());
    d.wait_for(other, "EXIT", &dir);
    eventually("the reason shows", || {
        stdout(&d.cmd(&["bjobs", "-l", &other.to_string()], &dir)).contains("TERM_OWNER: job killed by owner.")
    });
}

/// A job killed at its run limit ends with 137 (SIGKILL, 128 + 9) and,
/// that value listed in its queue's REQUEUE_EXIT_VALUES, goes back to
/// pending and runs again, as an interruptible backfill queue's jobs do
/// (spec 004); the second run ends by itself. One its owner kills with a
/// listed value is not requeued (`jobs_exiting_with_a_requeue_value_run_again`).
#[test]
fn a_job_killed_at_its_run_limit_is_requeued_by_its_exit_value() {
    use allot_proto::{Client, Request, Response, Submit};
    let dir = tempdir("limits-requeue");
    let queue = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nREQUEUE_EXIT_VALUES = 137\nEnd Queue\n";
    let d = one_host(&dir, queue);
    let marker = dir.join("ran-once");
    // The first run ignores SIGINT and SIGTERM until SIGKILL ends it.
    let command = format!(
        "if [ -e {0} ]; then exit 0; fi; touch {0}; trap '' INT TERM; while :; do sleep 0.2; done",
        marker.display()
    );
    let submit = Submit {
        submission: allot_proto::Submission { run_limit: Some(2), ..Default::default() },
        command,
        cwd: dir.display().to_string(),
        output: Some(("/dev/null".into(), false)),
        ..Submit::default()
    };
    let mut client = Client::connect(&d.state.join("allotd.sock")).expect("connect");
    let Response::Submitted { job, .. } = client.call(Request::Submit(Box::new(submit))).expect("answer") else {
        panic!()
    };
    d.wait_for(job, "DONE", &dir);
    assert!(marker.exists(), "the first run started");
    let history = stdout(&d.cmd(&["bhist", "-l", &job.to_string()], &dir));
    assert!(
        history.contains("Exited with exit code 137") && history.contains("Done successfully"),
        "killed at its limit, requeued, then done: {history}"
    );
}

/// `bkill` ends a running job as LSF's does: SIGINT, then SIGTERM, then
/// SIGKILL, JOB_TERMINATE_INTERVAL apart, so that a job catching the first
/// two has the time to clean up; `bkill -s KILL` kills at once.
#[test]
fn bkill_sends_int_then_term_then_kill() {
    use allot_proto::{Client, Request, Response};
    let dir = tempdir("limits-bkill");
    let config = config_dir(
        &dir,
        &[
            ("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 2\n"),
            ("lsb.queues", "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n"),
            ("lsb.params", "Begin Parameters\nJOB_TERMINATE_INTERVAL = 2\nEnd Parameters\n"),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let signals = dir.join("signals");
    let mut client = Client::connect(&d.state.join("allotd.sock")).expect("connect");
    let submit = trapping(&signals, &dir, 600);
    let Response::Submitted { job, .. } = client.call(Request::Submit(Box::new(submit))).expect("answer") else {
        panic!()
    };
    d.wait_for(job, "RUN", &dir);
    // Its traps are set once it runs a moment.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let killed = std::time::Instant::now();
    assert!(d.cmd(&["bkill", &job.to_string()], &dir).status.success());
    d.wait_for(job, "EXIT", &dir);
    let took = killed.elapsed();
    assert_eq!(std::fs::read_to_string(&signals).expect("trapped"), "INT\nTERM\n", "INT, TERM, then KILL");
    assert!(took >= std::time::Duration::from_secs(4), "two intervals of 2 s before SIGKILL: {took:?}");
    let long = stdout(&d.cmd(&["bjobs", "-l", &job.to_string()], &dir));
    assert!(long.contains("Exited with exit code 137") && long.contains("TERM_OWNER"), "{long}");
    // -s KILL: at once.
    let other = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "sleep", "60"], &dir));
    d.wait_for(other, "RUN", &dir);
    let killed = std::time::Instant::now();
    assert!(d.cmd(&["bkill", "-s", "KILL", &other.to_string()], &dir).status.success());
    d.wait_for(other, "EXIT", &dir);
    assert!(killed.elapsed() < std::time::Duration::from_secs(2), "{:?}", killed.elapsed());
}

/// A queue's JOB_WARNING_ACTION and JOB_ACTION_WARNING_TIME warn its jobs
/// that ask for no warning of their own; a warning action that is no
/// signal is refused at its line.
#[test]
fn a_queues_warning_action_warns_its_jobs() {
    use allot_proto::{Client, Request, Response};
    let dir = tempdir("limits-queue-warning");
    let queue = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nJOB_WARNING_ACTION = USR2\n\
                 JOB_ACTION_WARNING_TIME = 1\nEnd Queue\n";
    let d = one_host(&dir, queue);
    let signals = dir.join("signals");
    // Its limit (3 s) is under the queue's warning time (1 min): warned
    // as it starts.
    let submit = trapping(&signals, &dir, 3);
    let mut client = Client::connect(&d.state.join("allotd.sock")).expect("connect");
    let Response::Submitted { job, .. } = client.call(Request::Submit(Box::new(submit))).expect("answer") else {
        panic!()
    };
    d.wait_for(job, "EXIT", &dir);
    assert_eq!(std::fs::read_to_string(&signals).expect("trapped"), "USR2\nINT\nTERM\n");
    drop(d);
    let bad = queue.replace("USR2", "NOPE");
    let config = dir.join("config");
    std::fs::write(config.join("lsb.queues"), bad).expect("bad queue");
    let out = Command::new(common::allotd())
        .arg("--config")
        .arg(&config)
        .env("ALLOT_STATE_DIR", dir.join("other"))
        .output()
        .expect("allotd");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("lsb.queues:4:") && stderr(&out).contains("JOB_WARNING_ACTION: `NOPE` is not a signal"),
        "{}",
        stderr(&out)
    );
}

/// `-C -D -F -S -v`: the job's processes start with them as soft limits,
/// in LSF_UNIT_FOR_LIMITS (KB unless the submitter's environment says),
/// from the command line or the script, across a restart of allotd; a bad
/// one is refused, named.
#[test]
fn per_process_limits_are_the_jobs_soft_rlimits() {
    let dir = tempdir("limits-rlimits");
    let d = Daemon::start(&dir.join("state"));
    let script = "#!/bin/sh\n#BSUB -S 8192\n#BSUB -o rl.%J\ncat /proc/self/limits\n";
    let job = submitted_id(&bsub_script(&d, &dir, script, &["-C", "0", "-F", "2MB", "-v", "4G", "-D", "1G"]));
    d.wait_for(job, "DONE", &dir);
    let limits = job_output(&dir.join(format!("rl.{job}"))).expect("output");
    let soft = |name: &str| {
        let line = limits.lines().find(|l| l.starts_with(name)).unwrap_or_default();
        line[name.len()..].split_whitespace().next().unwrap_or_default().to_string()
    };
    assert_eq!(soft("Max core file size"), "0", "{limits}");
    assert_eq!(soft("Max file size"), (2u64 << 20).to_string());
    assert_eq!(soft("Max stack size"), (8192u64 << 10).to_string());
    assert_eq!(soft("Max address space"), (4u64 << 30).to_string());
    assert_eq!(soft("Max data size"), (1u64 << 30).to_string());

    // The site's unit; and kept in the log: a restart's job has them too.
    let out = Command::new(allot())
        .args(["bsub", "-F", "3", "-o", "mb.%J", "sleep 1; cat /proc/self/limits"])
        .env("ALLOT_STATE_DIR", &d.state)
        .env("LSF_UNIT_FOR_LIMITS", "MB")
        .current_dir(&dir)
        .output()
        .expect("bsub");
    let job = submitted_id(&out);
    d.kill9();
    let d = Daemon::start(&dir.join("state"));
    d.wait_for(job, "DONE", &dir);
    let limits = job_output(&dir.join(format!("mb.{job}"))).expect("output");
    assert!(
        limits.lines().any(|l| l.starts_with("Max file size") && l.contains(&(3u64 << 20).to_string())),
        "{limits}"
    );

    let bad = d.cmd(&["bsub", "-S", "deep", "true"], &dir);
    assert!(!bad.status.success());
    assert_eq!(
        stderr(&bad),
        "bsub: -S deep: expected a size: a number, in LSF_UNIT_FOR_LIMITS (KB unless set), or with a unit (KB, MB, \
         GB, TB). Job not submitted.\n"
    );
}
