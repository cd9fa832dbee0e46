//! Nothing of a job outlives it, and it inherits nothing of the daemons:
//! what leaves its process group (a double fork, `setsid`) is killed at its
//! end and at `bkill`, through its cgroup; it starts with no descriptor but
//! 0-2 whatever allotd was started with, and with its submitter's umask; a
//! FIFO or a device as its input or output ends it with the reason instead
//! of pinning its supervisor. As root, with a throwaway user's jobs.

mod common;

use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use common::{Daemon, Throwaway, alive, eventually, lines_of, stdout, submitted_id, tempdir};

/// `bsub ARGS` as `user`, from `dir`, with the umask `umask`.
fn bsub_as(d: &Daemon, user: &Throwaway, dir: &Path, umask: &str, args: &[&str]) -> u64 {
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("umask {umask}; exec \"$0\" bsub \"$@\""))
        .arg(common::allot())
        .args(args)
        .env("ALLOT_STATE_DIR", &d.state)
        .current_dir(dir)
        .uid(user.uid)
        .gid(user.gid)
        .output()
        .expect("bsub runs");
    submitted_id(&out)
}

/// A directory of the user's own in `dir`.
fn home_of(user: &Throwaway, dir: &Path) -> std::path::PathBuf {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let home = dir.join("home");
    std::fs::create_dir(&home).expect("home");
    std::os::unix::fs::chown(&home, Some(user.uid), Some(user.gid)).expect("chown");
    home
}

/// The process ids written, one a line, in `file`, once there are `n`.
fn pids_in(file: &Path, n: usize) -> Vec<i32> {
    eventually(&format!("{n} processes wrote {}", file.display()), || lines_of(file).len() >= n);
    lines_of(file).iter().map(|l| l.trim().parse().expect("a pid")).collect()
}

#[test]
fn a_job_inherits_no_descriptor_of_allotd_and_runs_with_its_submitters_umask() {
    let user = Throwaway::new("a_job_inherits_no_descriptor_of_allotd", "fd");
    let dir = tempdir("leftovers-fd");
    let home = home_of(&user, &dir);
    // A root-only file, open without close-on-exec in whatever starts
    // allotd (as in the shell of an administrator who runs `allot start`).
    let secret = dir.join("secret");
    std::fs::write(&secret, "root's secret\n").expect("secret");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let held = std::fs::File::open(&secret).expect("open");
    nix::fcntl::fcntl(&held, nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty())).expect("fcntl");
    let fd = held.as_raw_fd();
    let d = Daemon::start(&dir.join("state"));
    drop(held);

    let out = home.join("out");
    let script = format!("cat /proc/$$/fd/{fd} 2>/dev/null || echo no-such-descriptor; umask");
    let id = bsub_as(&d, &user, &home, "077", &["-o", out.to_str().expect("utf-8"), &script]);
    d.wait_for(id, "DONE", &home);
    let text = lines_of(&out);
    assert!(!text.iter().any(|l| l.contains("secret")), "the job read allotd's descriptor {fd}: {text:?}");
    assert_eq!(text.first().map(String::as_str), Some("no-such-descriptor"), "{text:?}");
    assert_eq!(text.get(1).map(String::as_str), Some("0077"), "the submitter's umask: {text:?}");
    let mode = std::fs::metadata(&out).expect("out").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "its output file is made with its umask");

    // Another umask, another job: each its own.
    let out2 = home.join("out2");
    let id = bsub_as(&d, &user, &home, "002", &["-o", out2.to_str().expect("utf-8"), "umask"]);
    d.wait_for(id, "DONE", &home);
    assert_eq!(lines_of(&out2).first().map(String::as_str), Some("0002"));
}

#[test]
fn what_leaves_a_job_is_killed_at_its_end_and_at_bkill() {
    let user = Throwaway::new("what_leaves_a_job_is_killed", "lo");
    let dir = tempdir("leftovers-kill");
    let home = home_of(&user, &dir);
    let d = Daemon::start(&dir.join("state"));
    assert!(
        d.log().contains("jobs run and are measured in cgroup v2"),
        "this test needs a writable cgroup v2 (CI's machine has one): {}",
        d.log()
    );
    let cgroup_of = |id: u64| {
        let own = allot_exec::cgroup::current().expect("a cgroup");
        own.join(format!("allot-{}", allot_exec::cgroup::tag_of(&d.state))).join(format!("job.{id}"))
    };

    // A job that ends, leaving a process in a session of its own, one
    // double-forked (orphaned, in its process group) and one in the
    // background.
    let pids = home.join("pids");
    let script = format!(
        "setsid sh -c 'echo $$ >> {p}; exec sleep 300' & \
         ( sh -c 'echo $$ >> {p}; exec sleep 301' & ) ; \
         nohup sleep 302 >/dev/null 2>&1 & echo $! >> {p}; \
         while [ $(wc -l < {p}) -lt 3 ]; do sleep 0.05; done",
        p = pids.display()
    );
    let id = bsub_as(&d, &user, &home, "022", &["-o", "/dev/null", &script]);
    let left = pids_in(&pids, 3);
    d.wait_for(id, "DONE", &home);
    eventually("every process the job left is killed at its end", || left.iter().all(|&p| !alive(p)));
    eventually("its cgroup is removed", || !cgroup_of(id).exists());

    // A job killed while a process of it runs in a session of its own.
    let pids = home.join("pids2");
    let script = format!("setsid sh -c 'echo $$ >> {}; exec sleep 300' & exec sleep 300", pids.display());
    let id = bsub_as(&d, &user, &home, "022", &["-o", "/dev/null", &script]);
    let left = pids_in(&pids, 1);
    d.wait_for(id, "RUN", &home);
    let killed = d.cmd(&["bkill", &id.to_string()], &home);
    assert!(killed.status.success(), "{}", stdout(&killed));
    d.wait_for(id, "EXIT", &home);
    eventually("what left the killed job is killed with it", || left.iter().all(|&p| !alive(p)));
    eventually("its cgroup is removed", || !cgroup_of(id).exists());
}

/// Runs as whoever runs the tests: a FIFO is no privilege matter.
#[test]
fn a_fifo_or_a_device_as_input_or_output_ends_the_job_with_why() {
    let dir = tempdir("leftovers-fifo");
    let d = Daemon::start(&dir.join("state"));
    let fifo = dir.join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
    let fifo = fifo.to_str().expect("utf-8");
    let bsub = |args: &[&str]| {
        let mut all = vec!["bsub"];
        all.extend_from_slice(args);
        submitted_id(&d.cmd(&all, &dir))
    };
    for (args, kind) in [
        (vec!["-o", fifo, "true"], "a FIFO"),
        (vec!["-e", fifo, "-o", "/dev/null", "true"], "a FIFO"),
        (vec!["-i", fifo, "-o", "/dev/null", "true"], "a FIFO"),
        (vec!["-o", "/dev/zero", "true"], "a device"),
        (vec!["-i", "/dev/zero", "-o", "/dev/null", "true"], "a device"),
    ] {
        let id = bsub(&args);
        d.wait_for(id, "EXIT", &dir);
        let long = stdout(&d.cmd(&["bjobs", "-l", &id.to_string()], &dir));
        assert!(long.contains(&format!("not a regular file but {kind}")), "{args:?}: {long}");
    }
    // /dev/null is a device, and fine.
    let id = bsub(&["-i", "/dev/null", "-o", "/dev/null", "-e", "/dev/null", "true"]);
    d.wait_for(id, "DONE", &dir);
}
