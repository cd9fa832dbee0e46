//! Pending job thresholds through the commands, as a site's users meet
//! them: one user past `lsb.users`' MAX_PEND_JOBS is told so by `bsub`,
//! which tries again every SUB_TRY_INTERVAL as LSF's does (LSB_NTRIES
//! tries in all), while another user submits as before; nothing of a
//! refused submission is kept.

mod common;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Daemon, ONE_HOST, Throwaway, config_dir, queues, stderr, stdout, submitted_id, tempdir};

fn bsub_as(d: &Daemon, user: &Throwaway, tries: Option<&str>) -> Command {
    let mut c = Command::new(common::allot());
    c.args(["bsub", "-H", "-o", "/dev/null", "true"])
        .env("ALLOT_STATE_DIR", &d.state)
        .env_remove("LSB_NTRIES")
        .current_dir("/")
        .uid(user.uid)
        .gid(user.gid);
    if let Some(n) = tries {
        c.env("LSB_NTRIES", n);
    }
    c
}

#[test]
fn a_user_past_their_pending_threshold_waits_and_nobody_else_does() {
    let test = "a_user_past_their_pending_threshold_waits_and_nobody_else_does";
    let (flood, other) = (Throwaway::new(test, "pf"), Throwaway::new(test, "po"));
    let dir = tempdir("pend-thresholds");
    let config = config_dir(
        &dir,
        &[
            ("allot.toml", ONE_HOST),
            ("lsb.queues", &queues(&["normal"])),
            ("lsb.params", "Begin Parameters\nSUB_TRY_INTERVAL = 1\nEnd Parameters\n"),
            ("lsb.users", "Begin User\nUSER_NAME MAX_PEND_JOBS\ndefault 2\nEnd User\n"),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let held: Vec<u64> = (0..2).map(|_| submitted_id(&bsub_as(&d, &flood, None).output().expect("bsub"))).collect();
    // LSB_NTRIES=1: one try, then the refusal.
    let out = bsub_as(&d, &flood, Some("1")).output().expect("bsub");
    assert!(!out.status.success());
    let said = format!("bsub: User <{}>: Pending job threshold reached. Job not submitted.", flood.name);
    assert!(stderr(&out).contains(&said), "{}", stderr(&out));
    // Another user is not bound by the first one's jobs.
    submitted_id(&bsub_as(&d, &other, Some("1")).output().expect("bsub"));
    // Without LSB_NTRIES, bsub waits and tries again until it is taken.
    let mut waiting = bsub_as(&d, &flood, None).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("bsub");
    std::thread::sleep(Duration::from_millis(2500));
    assert!(waiting.try_wait().expect("wait").is_none(), "bsub waits while the threshold holds");
    let listed = d.cmd(&["bjobs", "-u", &flood.name, "-a", "-noheader"], &dir);
    assert_eq!(stdout(&listed).lines().count(), 2, "nothing of the refused submissions kept: {}", stdout(&listed));
    let killed = Instant::now();
    assert!(d.cmd(&["bkill", &held[0].to_string()], &dir).status.success());
    let out = waiting.wait_with_output().expect("bsub ends");
    eprintln!("taken {:?} after a pending job was killed", killed.elapsed());
    assert!(stdout(&out).contains("is submitted to queue <normal>"), "{}{}", stdout(&out), stderr(&out));
    let retrying = format!("User <{}>: Pending job threshold reached. Retrying in 1 seconds...", flood.name);
    assert!(stderr(&out).lines().filter(|l| *l == retrying).count() >= 2, "{}", stderr(&out));
    let listed = d.cmd(&["bjobs", "-u", &flood.name, "-noheader"], &dir);
    assert_eq!(stdout(&listed).lines().count(), 2, "the one held before and the one taken: {}", stdout(&listed));
}
