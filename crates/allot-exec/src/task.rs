//! A `blaunch` task's supervisor (`allot-supervise --task DIR NAME`): the
//! task outlives the agent that started it, as a job outlives allotd.
//!
//! The agent writes the task's [`TaskFile`] to `DIR/NAME.task` and starts
//! the supervisor, which enters the task's cgroup, starts `/bin/sh -c
//! COMMAND` as the job's owner (a session of its own, nothing of the
//! supervisor's inherited), with its standard output and error appended to
//! the spool files `DIR/NAME.out` and `DIR/NAME.err`, records its process
//! group in `DIR/NAME.pid`, waits, and writes its exit code to
//! `DIR/NAME.exit` (by a rename: whole or not there). The agent, or the
//! next one after a restart, reads the spools from any offset and passes
//! them on; they go when the job's run ends. The spools are on disk: what
//! is waiting while allotd or an agent is down costs no memory, however
//! long; a task's output is kept whole until its job's run ends.
//!
//! Bounded: the task writes into pipes that the supervisor copies to the
//! spools, each of which keeps at most [`TaskFile::spool_max`] bytes
//! (the agent's `--task-spool-mb`, 1 GiB by default), so that no task
//! fills its host's disk. What it writes past that is dropped, never
//! silently: the bytes dropped are said on the task's standard error at
//! its end, which its `blaunch` writes into the job's output.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use crate::{ExecError, Owner, become_owner, cgroup, inherit, set_limits, set_nice};

/// What the supervisor of one task needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskFile {
    pub command: String,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    /// Whom it runs as (when the agent is root).
    pub owner: Option<Owner>,
    pub umask: u32,
    pub nice: i32,
    #[serde(default)]
    pub limits: allot_proto::ProcessLimits,
    /// The cgroup it is born in, when the agent has them.
    pub cgroup: Option<PathBuf>,
    /// The memory ceiling of that cgroup, KB (`bsub -M` with `-hl`: what
    /// the job's tasks on this host may use together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_kb: Option<u64>,
    /// At most this many bytes of each of its streams are spooled.
    #[serde(default = "default_spool_max")]
    pub spool_max: u64,
}

/// A task's spool's bound by default, per stream: 1 GiB.
pub const SPOOL_MAX: u64 = 1 << 30;

fn default_spool_max() -> u64 {
    SPOOL_MAX
}

/// The files of task `name` in `dir`: its spec, spools, process group and
/// exit.
pub fn path(dir: &Path, name: &str, what: &str) -> PathBuf {
    dir.join(format!("{name}.{what}"))
}

/// Runs task `name` of `dir` to its end, as its supervisor.
pub fn supervise(dir: &Path, name: &str) -> Result<i32, ExecError> {
    let spec_path = path(dir, name, "task");
    let text = std::fs::read_to_string(&spec_path).map_err(|source| ExecError::File {
        job: 0,
        what: "cannot read the task",
        path: spec_path.display().to_string(),
        source,
    })?;
    let mut spec: TaskFile = serde_json::from_str(&text).map_err(|e| ExecError::Spec(format!("task {name}: {e}")))?;
    // As a job's own supervisor does (`JobFiles::supervise`).
    inherit::lsf_commands(&mut spec.env);
    if let Some(dir) = &spec.cgroup {
        match cgroup::enter(dir) {
            Ok(()) => {
                if let Some(kb) = spec.memory_limit_kb {
                    cgroup::limit_memory(dir, kb);
                }
            }
            Err(e) => eprintln!("allot-supervise: task {name}: not in its cgroup {}: {e}", dir.display()),
        }
    }
    let spool =
        |what: &str| {
            use std::os::unix::fs::OpenOptionsExt;
            let p = path(dir, name, what);
            std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(&p).map_err(|source| {
                ExecError::File { job: 0, what: "cannot open the spool", path: p.display().to_string(), source }
            })
        };
    let (out, err) = (Relay::new(spool("out")?, spec.spool_max)?, Relay::new(spool("err")?, spec.spool_max)?);
    let mut dropped = [0u64; 2];
    let code = match start(&spec, out.writer, err.writer) {
        Ok(mut cmd) => match cmd.spawn() {
            Ok(mut child) => {
                // Its ends of the pipes go with the command: at the task's
                // end (and its strays'), the copies see the end of them.
                drop(cmd);
                let _ = std::fs::write(path(dir, name, "pid"), child.id().to_string());
                let copies = [out.copy, err.copy];
                let code = child.wait().map_or(255, |s| s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)));
                if spec.cgroup.is_none() {
                    crate::strays::kill_session(child.id() as i32);
                }
                for (d, copy) in dropped.iter_mut().zip(copies) {
                    // A stray in its cgroup may hold a pipe until the
                    // agent ends the run: what it wrote by then is kept.
                    *d = copy.recv_timeout(std::time::Duration::from_secs(2)).unwrap_or(0);
                }
                code
            }
            Err(e) => {
                let mut err = spool("err")?;
                let _ = std::io::Write::write_all(&mut err, format!("blaunch: cannot start /bin/sh: {e}\n").as_bytes());
                127
            }
        },
        Err(e) => {
            let mut err = spool("err")?;
            let _ = std::io::Write::write_all(&mut err, format!("blaunch: {}\n", e.reason()).as_bytes());
            1
        }
    };
    // What the task left in its session was killed above (its cgroup's
    // is the agent's to end with the job's run: other tasks of the run
    // share it). What was dropped is said last.
    if dropped.iter().any(|&d| d > 0) {
        let host = nix::unistd::gethostname().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default();
        let note = format!(
            "blaunch: host {host}: this task's output past {} MiB of a stream was dropped ({} bytes of standard \
             output, {} of standard error): a task's spool keeps no more\n",
            spec.spool_max >> 20,
            dropped[0],
            dropped[1]
        );
        if let Ok(mut e) = spool("err") {
            let _ = std::io::Write::write_all(&mut e, note.as_bytes());
        }
    }
    let done = path(dir, name, "exit.new");
    std::fs::write(&done, code.to_string())
        .and_then(|()| std::fs::rename(&done, path(dir, name, "exit")))
        .map_err(|source| ExecError::File { job: 0, what: "cannot write", path: done.display().to_string(), source })?;
    Ok(code)
}

/// The task's command, ready to start.
fn start(spec: &TaskFile, out: std::os::fd::OwnedFd, err: std::os::fd::OwnedFd) -> Result<Command, ExecError> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(&spec.command).env_clear().envs(spec.env.iter().map(|(k, v)| (k, v)));
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    // SAFETY: the closure runs in the forked child before exec; it makes
    // one system call (setsid) and allocates nothing.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(|| nix::unistd::setsid().map(drop).map_err(std::io::Error::from));
    }
    set_nice(&mut cmd, spec.nice);
    set_limits(&mut cmd, &spec.limits);
    match &spec.owner {
        Some(o) => become_owner(&mut cmd, o, &spec.cwd)?,
        None => {
            cmd.current_dir(&spec.cwd);
        }
    }
    inherit::start_clean(&mut cmd, spec.umask);
    Ok(cmd)
}

/// One of a task's streams: the pipe's end the task writes, and the
/// thread that copies what comes out of it to its spool, at most `max`
/// bytes in the spool in all; it answers the bytes dropped past that
/// when the pipe ends.
struct Relay {
    writer: std::os::fd::OwnedFd,
    copy: std::sync::mpsc::Receiver<u64>,
}

impl Relay {
    fn new(spool: std::fs::File, max: u64) -> Result<Relay, ExecError> {
        let (reader, writer) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
            .map_err(|e| ExecError::Spec(format!("cannot make a pipe for the task's output: {e}")))?;
        let (tx, copy) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(relay(std::fs::File::from(reader), spool, max));
        });
        Ok(Relay { writer, copy })
    }
}

/// Copies `pipe` to `spool` until the pipe ends, keeping the spool at
/// `max` bytes at most; returns the bytes dropped.
fn relay(mut pipe: std::fs::File, mut spool: std::fs::File, max: u64) -> u64 {
    use std::io::{Read, Write};
    let mut kept = spool.metadata().map_or(0, |m| m.len());
    let mut dropped = 0u64;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => return dropped,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return dropped,
        };
        let room = max.saturating_sub(kept).min(n as u64) as usize;
        if room > 0 && spool.write_all(&buf[..room]).is_ok() {
            kept += room as u64;
            dropped += (n - room) as u64;
        } else {
            dropped += n as u64;
        }
    }
}
