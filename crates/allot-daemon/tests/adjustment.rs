//! The memory-based fairshare adjustment on a live allotd (spec 000,
//! "Fairshare adjustment plugin"): a running job's measured memory raises
//! its user's adjustment in `bqueues -l`, and lowers the user's priority.

mod common;

use common::{Daemon, config_dir, eventually, stdout, submitted_id, tempdir};

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
