//! What a job inherits of the processes that start it: nothing but its
//! standard input, output and error, and its submitter's umask.
//!
//! allotd, the agents and the supervisors are started by a shell, a unit
//! manager or each other; a descriptor any of them holds without
//! close-on-exec (a root-only file the administrator's shell had open when
//! it ran `allot start`) would reach every job otherwise. So each daemon
//! marks every descriptor it inherited close-on-exec as it starts
//! ([`no_inherited_descriptors`]), and every command of a job (its own,
//! its `-E`/`-Ep`, its `blaunch` tasks, its mail) marks every descriptor
//! but 0-2 close-on-exec in the forked child just before exec
//! ([`start_clean`]): whatever the parent held, the program starts with
//! three. Marked rather than closed, so that the pipe through which Rust's
//! `Command` learns that exec failed still works.
//!
//! The umask is the submitter's, as LSF passes it (`bsub` sends its own);
//! a submission that did not say (an older `bsub`, an older log) runs
//! with [`DEFAULT_UMASK`].
//!
//! allotd and the agents hold a descriptor per connection, so they raise
//! their own open-file limit to its hard limit as they start
//! ([`raise_open_files`]); a job starts with the soft limit of
//! [`JOB_OPEN_FILES`] again (no higher than the hard limit, which it keeps,
//! so it may raise its own), as systemd gives its services: programs that
//! close every descriptor up to the soft limit, or use `select`, expect
//! it.

use std::process::Command;

/// The soft open-file limit a job starts with (see the module's doc).
pub const JOB_OPEN_FILES: u64 = 1024;

/// Raises this process's soft open-file limit to its hard limit; the
/// limit now, or why it could not be raised.
pub fn raise_open_files() -> Result<u64, String> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).map_err(|e| e.to_string())?;
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard).map_err(|e| format!("from {soft} to {hard}: {e}"))?;
    }
    Ok(hard)
}

/// This process's open-file limit now (its soft limit), 1,024 when it
/// cannot be read.
pub fn open_files_limit() -> u64 {
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).map_or(1024, |(soft, _)| soft)
}

/// The umask of a job whose submission did not carry one: the usual
/// default of a login shell.
pub const DEFAULT_UMASK: u32 = 0o022;

/// This process's umask: set, and set back at once (two system calls,
/// where reading `/proc/self/status` would cost a file). For `bsub`, which
/// makes no file on another thread meanwhile.
pub fn current_umask() -> u32 {
    let mask = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(DEFAULT_UMASK));
    nix::sys::stat::umask(mask);
    mask.bits()
}

/// LSF's commands in a job's environment, as LSF's sbatchd sets
/// `LSF_BINDIR` from the execution host's configuration: where this host's
/// commands are installed is where its supervisor is (`allot install`
/// puts them together), when `blaunch` is there. Then `LSF_BINDIR` names
/// that directory (MPI launchers look for `$LSF_BINDIR/blaunch`), and it
/// ends the job's `PATH` when the `PATH` does not have it, so that `bsub`,
/// `bjobs` and `blaunch` are found in any job. Elsewhere (binaries run
/// from a build directory without the commands' links) the environment
/// stays as submitted.
pub fn lsf_commands(env: &mut Vec<(String, String)>) {
    if let Some(dir) = commands_dir() {
        put_commands(env, dir);
    }
}

/// The directory of this program, where the LSF commands are when
/// `blaunch` is there: looked for once in this process (the zygote does
/// before its forks, [`warm`]).
fn commands_dir() -> Option<&'static std::path::Path> {
    static DIR: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| commands_in(std::env::current_exe().ok()?.parent()?.to_path_buf())).as_deref()
}

/// `dir`, when the LSF commands are there (`blaunch` is).
fn commands_in(dir: std::path::PathBuf) -> Option<std::path::PathBuf> {
    dir.join("blaunch").exists().then_some(dir)
}

/// Looks for the LSF commands now ([`commands_dir`]).
pub(crate) fn warm() {
    let _ = commands_dir();
}

/// [`lsf_commands`] for the commands' directory `dir` (what
/// [`commands_dir`] finds for this program's).
#[cfg(test)]
fn lsf_commands_in(env: &mut Vec<(String, String)>, dir: &std::path::Path) {
    if let Some(dir) = commands_in(dir.to_path_buf()) {
        put_commands(env, &dir);
    }
}

/// `LSF_BINDIR` and the end of `PATH` name `dir`, where `blaunch` is.
fn put_commands(env: &mut Vec<(String, String)>, dir: &std::path::Path) {
    let Some(dir) = dir.to_str() else { return };
    env.retain(|(k, _)| k != "LSF_BINDIR");
    env.push(("LSF_BINDIR".into(), dir.to_string()));
    match env.iter_mut().find(|(k, _)| k == "PATH") {
        Some((_, path)) if path.split(':').any(|p| p == dir) => {}
        Some((_, path)) if path.is_empty() => *path = dir.to_string(),
        Some((_, path)) => {
            path.push(':');
            path.push_str(dir);
        }
        None => env.push(("PATH".into(), format!("/usr/bin:/bin:{dir}"))),
    }
}

/// Marks every descriptor from 3 up close-on-exec: `close_range` with
/// `CLOSE_RANGE_CLOEXEC` (Linux 5.11), or where the kernel has none each
/// descriptor below the open-file limit in turn. Makes system calls only,
/// allocates nothing: safe in a forked child before exec.
fn mark_all_cloexec() {
    use nix::libc;
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC changes descriptor
    // flags only; it reads and writes no memory of ours.
    #[allow(unsafe_code)]
    let marked = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) } == 0;
    if marked {
        return;
    }
    let limit =
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).map_or(1024, |(soft, _)| soft);
    for fd in 3..limit.min(i32::MAX as u64) as i32 {
        // SAFETY: fcntl on a number that may not be an open descriptor
        // fails with EBADF and touches nothing.
        #[allow(unsafe_code)]
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

/// At a daemon's start: every descriptor it inherited, but 0-2, is marked
/// close-on-exec (its own are opened so by Rust), so that nothing it
/// starts inherits them.
pub fn no_inherited_descriptors() {
    mark_all_cloexec();
}

/// A job's command starts with `umask`, with no descriptor but 0-2, and
/// with a soft open-file limit of [`JOB_OPEN_FILES`] (or its hard limit,
/// if lower).
pub fn start_clean(cmd: &mut Command, umask: u32) {
    use std::os::unix::process::CommandExt;
    let mask = nix::sys::stat::Mode::from_bits_truncate(umask & 0o777);
    // SAFETY: the closure runs in the forked child before exec; it makes
    // system calls only (umask, close_range or fcntl) and allocates
    // nothing.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::stat::umask(mask);
            use nix::sys::resource::{Resource, getrlimit, setrlimit};
            if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
                if soft > JOB_OPEN_FILES {
                    let _ = setrlimit(Resource::RLIMIT_NOFILE, JOB_OPEN_FILES.min(hard), hard);
                }
            }
            mark_all_cloexec();
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn lsf_bindir_is_where_the_commands_are_and_ends_the_path() {
        let dir = std::env::temp_dir().join(format!("allot-bindir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let at = dir.to_str().expect("utf-8").to_string();
        let submitted = vec![("PATH".to_string(), "/usr/bin:/bin".to_string()), ("LSF_BINDIR".into(), "/old".into())];
        let mut env = submitted.clone();
        lsf_commands_in(&mut env, &dir);
        assert_eq!(env, submitted, "no blaunch there: not the commands' directory");
        std::fs::write(dir.join("blaunch"), "").expect("blaunch");
        lsf_commands_in(&mut env, &dir);
        let get = |env: &[(String, String)], k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get(&env, "LSF_BINDIR"), Some(at.clone()));
        assert_eq!(get(&env, "PATH"), Some(format!("/usr/bin:/bin:{at}")));
        lsf_commands_in(&mut env, &dir);
        assert_eq!(get(&env, "PATH"), Some(format!("/usr/bin:/bin:{at}")), "once");
        assert_eq!(env.iter().filter(|(k, _)| k == "LSF_BINDIR").count(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A descriptor opened without close-on-exec (as a shell's would be)
    /// is not in the started command; its standard streams are; the
    /// command's umask is the one asked.
    #[test]
    fn a_command_started_clean_sees_three_descriptors_and_the_umask_asked() {
        let leaked = std::fs::File::open("/proc/self/status").expect("open");
        let fd = leaked.as_raw_fd();
        nix::fcntl::fcntl(&leaked, nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty())).expect("fcntl");
        let script = format!("ls /proc/self/fd; echo fd{fd}:; [ -e /proc/self/fd/{fd} ] && echo leaked; umask");
        let run = |clean: bool| {
            let mut cmd = Command::new("/bin/sh");
            cmd.arg("-c").arg(&script);
            if clean {
                start_clean(&mut cmd, 0o027);
            }
            String::from_utf8(cmd.output().expect("runs").stdout).expect("utf-8")
        };
        let plain = run(false);
        assert!(plain.contains("leaked"), "the test's descriptor reaches a command started plainly: {plain}");
        let clean = run(true);
        assert!(!clean.contains("leaked"), "started clean, it does not: {clean}");
        assert!(clean.trim_end().ends_with("0027"), "the umask asked: {clean}");
        drop(leaked);
    }
}
