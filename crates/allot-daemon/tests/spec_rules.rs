//! Rules of the specification that were parsed and not applied, each on
//! a live allotd: the memory-based fairshare adjustment (spec 000), the
//! submitter's LSB_DEFAULTQUEUE (spec 004, "Automatic queue selection").

mod common;

use std::process::Command;

use common::{Daemon, allot, config_dir, eventually, stderr, stdout, submitted_id, tempdir};

/// One host of 2 slots and 2,048 MB (1,024 MB per slot), THRESHOLD 0.5:
/// a user whose one job holds M MB has (1 + 1) * ((M / 1) / 512).
#[test]
fn a_measured_job_raises_its_users_adjustment() {
    let dir = tempdir("adjust-memory");
    let config = config_dir(
        &dir,
        &[
            (
                "allot.toml",
                "[[hosts]]\nname = \"hostA\"\nncpus = 2\nmaxmem = 2048\n\n[daemon]\nusage_interval = 1\n\n\
                 [fairshare]\nadjustment = \"memory\"\nmemory_threshold = 0.5\n",
            ),
            (
                "lsb.queues",
                "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nFAIRSHARE = USER_SHARES[[default, 1]]\nEnd Queue\n",
            ),
            ("lsb.params", "Begin Parameters\nFAIRSHARE_ADJUSTMENT_FACTOR = 1\nEnd Parameters\n"),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let hog = "python3 -c 'import time; x = bytearray(300 * 1024 * 1024); time.sleep(60)'";
    let job = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", hog], &dir));
    d.wait_for(job, "RUN", &dir);
    let me = nix::unistd::User::from_uid(nix::unistd::Uid::effective()).ok().flatten().expect("me").name;
    // ADJUST is the last column of the user's row.
    let adjust = || -> f64 {
        let long = stdout(&d.cmd(&["bqueues", "-l", "normal"], &dir));
        let row = long.lines().find(|l| l.starts_with(&format!("{me} "))).map(str::to_string);
        row.and_then(|r| r.split_whitespace().last()?.parse().ok()).unwrap_or(0.0)
    };
    // 300 MB and the interpreter: 2 * 300 / 512 = 1.17 at least.
    eventually("the job's memory is measured and weighs in", || adjust() > 1.17);
    let a = adjust();
    assert!(a < 1.5, "2 * M / 512 for a job of about 300 MB, not {a}");
    let _ = d.cmd(&["bkill", &job.to_string()], &dir);
}

/// LSB_DEFAULTQUEUE in the submitter's environment stands for
/// DEFAULT_QUEUE: a job naming no queue goes to the first of its queues
/// that takes it; `-q` still wins; a name that is no queue is refused.
#[test]
fn lsb_defaultqueue_chooses_among_its_queues() {
    let dir = tempdir("lsb-defaultqueue");
    let queues = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n\n\
                  Begin Queue\nQUEUE_NAME = small\nPRIORITY = 30\nPROCLIMIT = 2\nEnd Queue\n\n\
                  Begin Queue\nQUEUE_NAME = wide\nPRIORITY = 30\nPROCLIMIT = 3 8\nEnd Queue\n";
    let config = config_dir(
        &dir,
        &[
            ("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 8\n"),
            ("lsb.queues", queues),
            ("lsb.params", "Begin Parameters\nDEFAULT_QUEUE = normal\nEnd Parameters\n"),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let bsub = |env: Option<&str>, args: &[&str]| {
        let mut c = Command::new(allot());
        c.arg("bsub").args(args).env("ALLOT_STATE_DIR", &d.state).current_dir(&dir);
        match env {
            Some(v) => c.env("LSB_DEFAULTQUEUE", v),
            None => c.env_remove("LSB_DEFAULTQUEUE"),
        };
        c.output().expect("bsub runs")
    };
    let queue_of = |out: &std::process::Output| {
        let text = stdout(out);
        assert!(out.status.success(), "{text}{}", stderr(out));
        text.split("queue <").nth(1).and_then(|q| q.split('>').next()).map(str::to_string).expect("a queue")
    };
    assert_eq!(queue_of(&bsub(None, &["-n", "4", "true"])), "normal", "DEFAULT_QUEUE without it");
    assert_eq!(queue_of(&bsub(Some("small wide"), &["-n", "4", "true"])), "wide", "small's PROCLIMIT is 2");
    assert_eq!(queue_of(&bsub(Some("small wide"), &["true"])), "small");
    assert_eq!(queue_of(&bsub(Some("small wide"), &["-q", "normal", "true"])), "normal", "-q wins");
    let none = bsub(Some("small wide"), &["-n", "9", "true"]);
    assert!(!none.status.success());
    assert!(
        stderr(&none).contains("-n 9: no default queue takes this job (LSB_DEFAULTQUEUE: small wide)"),
        "{}",
        stderr(&none)
    );
    let unknown = bsub(Some("nosuch"), &["true"]);
    assert!(stderr(&unknown).contains("queue `nosuch` does not exist"), "{}", stderr(&unknown));
}

/// An application profile's PROCLIMIT binds `bsub -app` jobs within
/// their queue's (spec 004: "in lsb.queues or lsb.applications").
#[test]
fn an_application_profiles_proclimit_binds_its_jobs() {
    let dir = tempdir("app-proclimit");
    let config = config_dir(
        &dir,
        &[
            ("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 8\n"),
            ("lsb.queues", "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nPROCLIMIT = 3 8\nEnd Queue\n"),
            ("lsb.applications", "Begin Application\nNAME = mpi\nPROCLIMIT = 2 4\nEnd Application\n"),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let refused = d.cmd(&["bsub", "-app", "mpi", "-n", "6", "true"], &dir);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("-n 6: more processors than the maximum PROCLIMIT of application profile `mpi` (4)"),
        "{}",
        stderr(&refused)
    );
    let job = submitted_id(&d.cmd(&["bsub", "-app", "mpi", "-n", "1,8", "sleep", "30"], &dir));
    d.wait_for(job, "RUN", &dir);
    let long = stdout(&d.cmd(&["bjobs", "-l", &job.to_string()], &dir));
    assert!(long.contains("4*hostA"), "profile 2 4 within the queue's 3 8: 3 to 4 slots, 4 free: {long}");
    let _ = d.cmd(&["bkill", &job.to_string()], &dir);
}

/// A queue's NICE is the `nice` value its jobs run at, and its
/// JOB_STARTER runs each job: in its place at `%USRCMD`, or followed by
/// it; `bqueues -l` shows both.
#[test]
fn a_queues_nice_and_job_starter_run_its_jobs() {
    let dir = tempdir("nice-starter");
    let queues = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nNICE = 10\n\
                  JOB_STARTER = /bin/sh -c \"echo starter; %USRCMD\"\nEnd Queue\n\n\
                  Begin Queue\nQUEUE_NAME = env\nPRIORITY = 30\nJOB_STARTER = /usr/bin/env STARTED=yes\nEnd Queue\n";
    let config =
        config_dir(&dir, &[("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 2\n"), ("lsb.queues", queues)]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let out = dir.join("nice.out");
    let job = submitted_id(&d.cmd(&["bsub", "-o", out.to_str().expect("path"), "nice"], &dir));
    d.wait_for(job, "DONE", &dir);
    let text = std::fs::read_to_string(&out).expect("output");
    assert!(text.contains("starter\n10\n"), "the starter first, then the job at nice 10: {text}");
    let env_out = dir.join("env.out");
    let job =
        submitted_id(&d.cmd(&["bsub", "-q", "env", "-o", env_out.to_str().expect("path"), "printenv STARTED"], &dir));
    d.wait_for(job, "DONE", &dir);
    let text = std::fs::read_to_string(&env_out).expect("output");
    assert!(text.contains("yes\n"), "the job after the starter: {text}");
    let long = stdout(&d.cmd(&["bqueues", "-l", "normal"], &dir));
    assert!(long.contains("\n  30   10  Open:Active"), "{long}");
    assert!(long.contains("JOB_STARTER:  /bin/sh -c \"echo starter; %USRCMD\"\n"), "{long}");
}

/// Spec 000: "bqueues -l also displays DISPATCH_ORDER in the master queue
/// if it is defined"; every queue of the set shows FAIRSHARE_QUEUES.
#[test]
fn bqueues_l_shows_the_dispatch_order_in_the_master_queue() {
    let dir = tempdir("dispatch-order");
    let queues = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nFAIRSHARE = USER_SHARES[[default, 1]]\n\
                  FAIRSHARE_QUEUES = normal short\nDISPATCH_ORDER = QUEUE\nEnd Queue\n\n\
                  Begin Queue\nQUEUE_NAME = short\nPRIORITY = 40\nEnd Queue\n";
    let config =
        config_dir(&dir, &[("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 2\n"), ("lsb.queues", queues)]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let master = stdout(&d.cmd(&["bqueues", "-l", "normal"], &dir));
    assert!(master.contains("FAIRSHARE_QUEUES:  normal short\nDISPATCH_ORDER:  QUEUE\n"), "{master}");
    let other = stdout(&d.cmd(&["bqueues", "-l", "short"], &dir));
    assert!(other.contains("FAIRSHARE_QUEUES:  normal short\n"), "{other}");
    assert!(!other.contains("DISPATCH_ORDER"), "only in the master queue: {other}");
}

/// Compute units with CONDENSED = Y show in `bhosts` as one row each in
/// place of their hosts, summing them (spec 004's condensed display of
/// enclosures and racks); `bhosts -X` shows the hosts.
#[test]
fn bhosts_condenses_compute_units() {
    let dir = tempdir("bhosts-cu");
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 2\nh2 2\nh3 2\nh4 2\nlone 2\nEnd Host\n\
                 Begin ComputeUnit\nNAME MEMBER CONDENSED TYPE\nenc1 (h1 h2) Y enclosure\nenc2 (h3 h4) Y enclosure\n\
                 rack1 (enc1 enc2) Y rack\nEnd ComputeUnit\n";
    let config = config_dir(
        &dir,
        &[
            ("lsb.hosts", hosts),
            ("lsb.params", "Begin Parameters\nCOMPUTE_UNIT_TYPES = enclosure! rack\nEnd Parameters\n"),
            ("lsb.queues", "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n"),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let job = submitted_id(&d.cmd(&["bsub", "-m", "h1", "sleep", "30"], &dir));
    d.wait_for(job, "RUN", &dir);
    let rows = |args: &[&str]| -> Vec<Vec<String>> {
        let out = stdout(&d.cmd(args, &dir));
        out.lines().skip(1).map(|l| l.split_whitespace().map(str::to_string).collect()).collect()
    };
    let condensed = rows(&["bhosts"]);
    let names: Vec<&str> = condensed.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["lone", "enc1", "enc2", "rack1"], "{condensed:?}");
    // HOST_NAME STATUS JL/U MAX NJOBS RUN ...
    assert_eq!(condensed[1][1..6], ["ok", "-", "4", "1", "1"], "{condensed:?}");
    assert_eq!(condensed[3][3..6], ["8", "1", "1"], "{condensed:?}");
    let all = rows(&["bhosts", "-X"]);
    let names: Vec<&str> = all.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["h1", "h2", "h3", "h4", "lone"]);
    let _ = d.cmd(&["bkill", &job.to_string()], &dir);
}
