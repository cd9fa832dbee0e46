//! The supervisors' zygote (`allot-supervise --zygote STATE_DIR`): one
//! long-lived process that forks a supervisor for each job allotd names on
//! its standard input (one job id a line), instead of allotd starting the
//! `allot-supervise` program anew for each job. A fork of this small
//! process costs a fraction of starting a program (the dynamic loader, the
//! C library's and Rust's start-up), and one is saved for every job.
//!
//! Each forked supervisor is exactly what `allot-supervise STATE_DIR JOB`
//! would be: in a process group of its own, with its job's lock, outliving
//! allotd and the zygote. When one ends, the zygote writes its job's id on
//! its standard output, which is how allotd hears of job ends at once; a
//! supervisor it cannot fork it writes as `failed JOB`.
//! When allotd goes away (end of file on the zygote's input), the zygote
//! ends and the supervisors go on.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::AsFd;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid};

use crate::{ExecError, JobFiles};

fn sys(what: &str) -> impl Fn(nix::errno::Errno) -> ExecError + '_ {
    move |e| ExecError::Spec(format!("zygote: {what}: {e}"))
}

/// Runs the zygote until its input ends.
pub fn zygote(files: &JobFiles) -> Result<(), ExecError> {
    crate::clock::warm();
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    chld.thread_block().map_err(sys("blocking SIGCHLD"))?;
    let ended = SignalFd::with_flags(&chld, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC).map_err(sys("signalfd"))?;
    let stdin = std::io::stdin();
    let mut children: BTreeMap<Pid, u64> = BTreeMap::new();
    let mut line = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN), PollFd::new(ended.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(sys("poll")(e)),
        }
        let ready = |fd: &PollFd| fd.revents().is_some_and(|r| !r.is_empty());
        let (input, reaped) = (ready(&fds[0]), ready(&fds[1]));
        if reaped {
            // SIGCHLD does not queue: one pending at most, and one read
            // takes it (a read more would only say there is none).
            let _ = ended.read_signal();
            // Every child that ended, not one per signal: signals merge.
            while !children.is_empty() {
                match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::Exited(pid, _) | WaitStatus::Signaled(pid, _, _)) => {
                        if let Some(job) = children.remove(&pid) {
                            // allotd gone: nobody to tell; the exit file says it.
                            let _ = tell(&job.to_string());
                        }
                    }
                    Ok(WaitStatus::StillAlive) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        }
        if input {
            let n = match nix::unistd::read(stdin.as_fd(), &mut buf) {
                Ok(n) => n,
                Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => continue,
                Err(e) => return Err(sys("read")(e)),
            };
            if n == 0 {
                return Ok(());
            }
            line.extend_from_slice(&buf[..n]);
            while let Some(end) = line.iter().position(|&b| b == b'\n') {
                let word: Vec<u8> = line.drain(..=end).collect();
                let Some(job) = std::str::from_utf8(&word).ok().and_then(|w| w.trim().parse::<u64>().ok()) else {
                    eprintln!("allot-supervise: zygote: not a job id: {}", String::from_utf8_lossy(&word).trim());
                    continue;
                };
                match fork_supervisor(files, job, &chld) {
                    Ok(pid) => {
                        children.insert(pid, job);
                    }
                    // allotd starts this one as a program of its own.
                    Err(e) => {
                        eprintln!("allot-supervise: zygote: job {job}: {e}");
                        let _ = tell(&format!("failed {job}"));
                    }
                }
            }
        }
    }
}

/// A line to allotd, flushed: nothing stays buffered for a forked child
/// to inherit.
fn tell(line: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout();
    writeln!(out, "{line}")?;
    out.flush()
}

/// A supervisor for `job`, forked: in its own process group, with SIGCHLD
/// back as it was and /dev/null for input and output (the zygote's pipes
/// are allotd's, and must close when the zygote ends).
fn fork_supervisor(files: &JobFiles, job: u64, chld: &SigSet) -> Result<Pid, ExecError> {
    // SAFETY: the zygote has one thread (it starts none), so the child is a
    // whole copy of it, with no lock held by a thread that is not there,
    // and may run any code.
    #[allow(unsafe_code)]
    let forked = unsafe { nix::unistd::fork() };
    match forked.map_err(sys("fork"))? {
        ForkResult::Parent { child } => Ok(child),
        ForkResult::Child => {
            let _ = chld.thread_unblock();
            let _ = nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0));
            if let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") {
                let _ = nix::unistd::dup2_stdin(&null);
                let _ = nix::unistd::dup2_stdout(&null);
            }
            let code = match files.supervise(job) {
                Ok(_) => 0,
                Err(e) => {
                    eprintln!("allot-supervise: {e}");
                    1
                }
            };
            std::process::exit(code)
        }
    }
}
