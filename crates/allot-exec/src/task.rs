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
        if let Err(e) = cgroup::enter(dir) {
            eprintln!("allot-supervise: task {name}: not in its cgroup {}: {e}", dir.display());
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
    let (out, err) = (spool("out")?, spool("err")?);
    let code = match start(&spec, out, err) {
        Ok(mut cmd) => match cmd.spawn() {
            Ok(mut child) => {
                let _ = std::fs::write(path(dir, name, "pid"), child.id().to_string());
                child.wait().map_or(255, |s| s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)))
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
    // What the task left in its session (its cgroup's is the agent's to
    // end with the job's run: other tasks of the run share it).
    let pid = std::fs::read_to_string(path(dir, name, "pid")).ok().and_then(|p| p.trim().parse().ok());
    if spec.cgroup.is_none() {
        if let Some(pid) = pid {
            crate::strays::kill_session(pid);
        }
    }
    let done = path(dir, name, "exit.new");
    std::fs::write(&done, code.to_string())
        .and_then(|()| std::fs::rename(&done, path(dir, name, "exit")))
        .map_err(|source| ExecError::File { job: 0, what: "cannot write", path: done.display().to_string(), source })?;
    Ok(code)
}

/// The task's command, ready to start.
fn start(spec: &TaskFile, out: std::fs::File, err: std::fs::File) -> Result<Command, ExecError> {
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
