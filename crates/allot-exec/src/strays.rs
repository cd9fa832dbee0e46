//! What is left of a job when it ends: processes that left its process
//! group (`setsid`, `nohup`, a daemonizing double fork, an orphaned
//! `blaunch`) would otherwise run on with no slot, no limit and no charge.
//!
//! With a cgroup (the job's, see [`crate::cgroup`]), every process in it
//! is killed ([`kill_cgroup`]): `cgroup.kill` (Linux 5.14), or else the
//! cgroup frozen so that nothing in it forks meanwhile, each of its
//! processes killed, and thawed; then it is waited for until empty. Without
//! one (allotd says so at its start), the job's command leads a session of
//! its own, and what is left in its process group or its session is killed
//! ([`kill_session`]); a process that made a session of its own escapes
//! this, which only a cgroup prevents.

use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// How long a killed cgroup is waited for to empty.
const EMPTIED_WITHIN: Duration = Duration::from_secs(5);

/// Kills every process in the cgroup `dir` (the caller must have left it)
/// and waits until none is left; `false` if some were still there after
/// [`EMPTIED_WITHIN`] (a process stuck in the kernel, say).
pub fn kill_cgroup(dir: &Path) -> bool {
    // Already empty (the usual end: the job left nothing behind), there
    // is nothing to kill; and an empty cgroup gains no process, as
    // nothing in it is left to fork one.
    if emptied(dir) {
        return true;
    }
    if std::fs::write(dir.join("cgroup.kill"), "1").is_err() {
        let frozen = std::fs::write(dir.join("cgroup.freeze"), "1").is_ok();
        // A process forked between the list and the kill is in the next
        // list; frozen, none is.
        for _ in 0..10 {
            let pids = procs(dir);
            if pids.is_empty() {
                break;
            }
            for pid in pids {
                let _ = kill(pid, Signal::SIGKILL);
            }
        }
        if frozen {
            let _ = std::fs::write(dir.join("cgroup.freeze"), "0");
        }
    }
    let deadline = Instant::now() + EMPTIED_WITHIN;
    while !emptied(dir) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// Ends the cgroup `dir` of a job's run (or of its tasks on a host): every
/// process in it killed ([`kill_cgroup`]), then the cgroup removed; what
/// did not end is said on standard error, by `who`.
pub fn end_cgroup(dir: &Path, who: &str) {
    // Emptied (the usual end: the job left nothing behind), it goes at
    // once: the kernel refuses to remove a cgroup that holds a process.
    if std::fs::remove_dir(dir).is_ok() {
        return;
    }
    if !kill_cgroup(dir) {
        eprintln!("{who}: processes of the cgroup {} did not end when killed", dir.display());
    }
    let _ = std::fs::remove_dir(dir);
}

/// The processes in the cgroup `dir`.
fn procs(dir: &Path) -> Vec<Pid> {
    let text = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    text.lines().filter_map(|l| l.trim().parse::<i32>().ok()).map(Pid::from_raw).collect()
}

/// Whether no process is left in the cgroup `dir` (nor in any below it):
/// `cgroup.events`' `populated 0`, or, where that file is missing, an
/// empty `cgroup.procs`. A cgroup already gone is empty.
fn emptied(dir: &Path) -> bool {
    match crate::cgroup::read_small(&dir.join("cgroup.events")) {
        Ok(events) => events.lines().any(|l| l.trim() == "populated 0"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !dir.exists() => true,
        Err(_) => procs(dir).is_empty(),
    }
}

/// Kills what is left of the session `sid` that a job's command led: its
/// process group, and every process still in its session.
pub fn kill_session(sid: i32) {
    if sid <= 1 {
        return;
    }
    let _ = killpg(Pid::from_raw(sid), Signal::SIGKILL);
    for pid in in_session(sid) {
        let _ = kill(pid, Signal::SIGKILL);
    }
}

/// The processes whose session is `sid`, from `/proc`.
fn in_session(sid: i32) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| session_of(&s)) == Some(sid)
        })
        .map(Pid::from_raw)
        .collect()
}

/// A `/proc/PID/stat` line's session (field 6); fields count from the
/// command name's last `)`, since the name may hold anything.
fn session_of(stat: &str) -> Option<i32> {
    stat[stat.rfind(')')? + 1..].split_whitespace().nth(3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn the_session_is_the_sixth_field_after_the_name() {
        assert_eq!(session_of("123 (a) b) c) S 1 123 456 0 -1 4194560 0"), Some(456));
        assert_eq!(session_of("garbage"), None);
    }

    /// A command that leads a session and leaves a process behind in it,
    /// out of its process group: killing the session ends that one too.
    #[test]
    fn what_is_left_in_a_session_is_killed() {
        let dir = std::env::temp_dir().join(format!("allot-strays-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let pidfile = dir.join("pid");
        let script =
            format!("perl -e 'setpgrp(0,0); exec(\"sleep\", \"300\")' & echo $! > {}; exit 0", pidfile.display());
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg(&script);
        // SAFETY: setsid in the forked child only.
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(|| nix::unistd::setsid().map(drop).map_err(std::io::Error::from));
        }
        let child = cmd.spawn().expect("spawns");
        let sid = child.id() as i32;
        let status = cmd_wait(child);
        assert!(status.success());
        let stray: i32 = std::fs::read_to_string(&pidfile).expect("pid").trim().parse().expect("a pid");
        let alive = |pid: i32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.rsplit(')').next().is_some_and(|r| !r.trim_start().starts_with('Z')))
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while std::fs::read_to_string(format!("/proc/{stray}/stat")).ok().and_then(|s| session_of(&s)) != Some(sid) {
            assert!(Instant::now() < deadline, "the stray is in the session");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(alive(stray), "the job's command ended and left it running");
        kill_session(sid);
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(stray) {
            assert!(Instant::now() < deadline, "the stray was killed");
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn cmd_wait(mut child: std::process::Child) -> std::process::ExitStatus {
        child.wait().expect("waits")
    }
}
