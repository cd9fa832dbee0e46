//! Running real jobs on a host.
//!
//! Each job is held by a small supervisor process (the daemon's binary in
//! its `supervise` mode), so a job keeps running while the daemon is down
//! and its end is recorded when the daemon is back. The supervisor reads
//! the job's [`ExecSpec`] from `jobs/<id>.spec`, runs `/bin/sh -c
//! <command>` in a process group of its own (so `bkill` signals the whole
//! job), writes the group's id to `jobs/<id>.pgid`, waits, and writes an
//! [`ExitReport`] to `jobs/<id>.exit` by an atomic rename. The daemon
//! watches for exit files.
//!
//! Output goes to the `-o`/`-e` files (`%J` is the job id, `%I` the array
//! index), appended to, or overwritten with `-oo`/`-eo`; without them, to
//! `output/<id>.out` and `.err` in the state directory.

use std::fs::{File, OpenOptions};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("job {job}: {what} {path}: {source}")]
    File { job: u64, what: &'static str, path: String, source: std::io::Error },
    #[error("job {job}: cannot start /bin/sh: {source}")]
    Spawn { job: u64, source: std::io::Error },
    #[error("job {job}: {0}", job = .0)]
    Spec(String),
}

/// Everything the supervisor needs to run one job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecSpec {
    pub job: u64,
    pub command: String,
    pub cwd: PathBuf,
    /// The submission environment, then the `LSB_*` variables.
    pub env: Vec<(String, String)>,
    /// Path and whether to overwrite (`-oo`).
    pub stdout: (PathBuf, bool),
    pub stderr: (PathBuf, bool),
    /// Run as this uid and gid (when the daemon runs as root).
    pub run_as: Option<(u32, u32)>,
}

/// How a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExitReport {
    /// The exit code, or 128 + the signal that ended it.
    pub exit: i32,
    /// CPU seconds, user and system, of the job and its children.
    pub cpu_time: f64,
}

/// Files of the jobs in the state directory.
#[derive(Clone, Debug)]
pub struct JobFiles {
    dir: PathBuf,
}

impl JobFiles {
    pub fn new(state_dir: &Path) -> std::io::Result<Self> {
        let dir = state_dir.join("jobs");
        std::fs::create_dir_all(&dir)?;
        std::fs::create_dir_all(state_dir.join("output"))?;
        Ok(JobFiles { dir })
    }

    fn path(&self, job: u64, ext: &str) -> PathBuf {
        self.dir.join(format!("{job}.{ext}"))
    }

    fn write_atomic(&self, job: u64, ext: &str, bytes: &[u8]) -> std::io::Result<()> {
        let tmp = self.path(job, &format!("{ext}.tmp"));
        std::fs::write(&tmp, bytes)?;
        File::open(&tmp)?.sync_all()?;
        std::fs::rename(tmp, self.path(job, ext))
    }

    pub fn write_spec(&self, spec: &ExecSpec) -> std::io::Result<()> {
        self.write_atomic(spec.job, "spec", &serde_json::to_vec(spec).map_err(std::io::Error::other)?)
    }

    pub fn read_spec(&self, job: u64) -> Result<ExecSpec, ExecError> {
        let path = self.path(job, "spec");
        let bytes = std::fs::read(&path).map_err(|source| ExecError::File {
            job,
            what: "cannot read",
            path: path.display().to_string(),
            source,
        })?;
        serde_json::from_slice(&bytes).map_err(|e| ExecError::Spec(format!("{}: {e}", path.display())))
    }

    /// The job's exit report, once the supervisor wrote it.
    pub fn read_exit(&self, job: u64) -> Option<ExitReport> {
        serde_json::from_slice(&std::fs::read(self.path(job, "exit")).ok()?).ok()
    }

    /// The job's process group, once it started.
    pub fn read_pgid(&self, job: u64) -> Option<i32> {
        std::fs::read_to_string(self.path(job, "pgid")).ok()?.trim().parse().ok()
    }

    /// Removes a finished job's files (its output files stay).
    pub fn clean(&self, job: u64) {
        for ext in ["spec", "pgid", "exit", "lock"] {
            let _ = std::fs::remove_file(self.path(job, ext));
        }
    }

    /// Takes the job's supervisor lock without waiting: `None` when a
    /// supervisor holds it.
    pub fn try_lock(&self, job: u64) -> Result<Option<nix::fcntl::Flock<File>>, ExecError> {
        let path = self.path(job, "lock");
        let file =
            OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(|source| {
                ExecError::File { job, what: "cannot open", path: path.display().to_string(), source }
            })?;
        match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(Some(lock)),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
            Err((_, e)) => Err(ExecError::Spec(format!("cannot lock {}: {e}", path.display()))),
        }
    }

    /// Whether the job's command was started (its process group recorded).
    pub fn started(&self, job: u64) -> bool {
        self.path(job, "pgid").exists()
    }

    /// Runs job `job` to its end: the supervisor's whole life. It holds the
    /// job's lock throughout, so a second supervisor of the same job ends at
    /// once and a job never runs twice.
    pub fn supervise(&self, job: u64) -> Result<ExitReport, ExecError> {
        let Some(_lock) = self.try_lock(job)? else {
            return Err(ExecError::Spec(format!("job {job} already has a supervisor")));
        };
        if let Some(done) = self.read_exit(job) {
            return Ok(done);
        }
        if self.started(job) {
            return Err(ExecError::Spec(format!("job {job} was started by a supervisor that died; not run again")));
        }
        let spec = self.read_spec(job)?;
        let report = run(&spec, |pgid| {
            let _ = self.write_atomic(job, "pgid", pgid.to_string().as_bytes());
        });
        let report = report.unwrap_or_else(|e| {
            // A job that could not start ends with 127, as a shell would.
            let _ = std::fs::write(&spec.stderr.0, format!("allot: {e}\n"));
            ExitReport { exit: 127, cpu_time: 0.0 }
        });
        self.write_atomic(job, "exit", &serde_json::to_vec(&report).map_err(|e| ExecError::Spec(e.to_string()))?)
            .map_err(|source| ExecError::File {
                job,
                what: "cannot write",
                path: self.path(job, "exit").display().to_string(),
                source,
            })?;
        Ok(report)
    }
}

/// `%J` and `%I` in an output file name.
pub fn expand_name(name: &str, job: u64, index: u32) -> String {
    name.replace("%J", &job.to_string()).replace("%I", &index.to_string())
}

fn open_output(job: u64, (path, overwrite): &(PathBuf, bool)) -> Result<File, ExecError> {
    let mut o = OpenOptions::new();
    o.create(true).write(true);
    if *overwrite {
        o.truncate(true);
    } else {
        o.append(true);
    }
    o.open(path).map_err(|source| ExecError::File {
        job,
        what: "cannot open",
        path: path.display().to_string(),
        source,
    })
}

/// Runs the job and waits for it; `started` hears its process group.
pub fn run(spec: &ExecSpec, started: impl FnOnce(i32)) -> Result<ExitReport, ExecError> {
    let stdout = open_output(spec.job, &spec.stdout)?;
    let stderr = open_output(spec.job, &spec.stderr)?;
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(&spec.command);
    cmd.current_dir(&spec.cwd).env_clear().envs(spec.env.iter().map(|(k, v)| (k, v)));
    cmd.stdin(Stdio::null()).stdout(stdout).stderr(stderr);
    cmd.process_group(0);
    if let Some((uid, gid)) = spec.run_as {
        cmd.gid(gid).uid(uid);
    }
    let mut child = cmd.spawn().map_err(|source| ExecError::Spawn { job: spec.job, source })?;
    started(child.id() as i32);
    let status = child.wait().map_err(|source| ExecError::Spawn { job: spec.job, source })?;
    let exit = status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).ok();
    let cpu_time = usage.map_or(0.0, |u| {
        let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
        secs(u.user_time()) + secs(u.system_time())
    });
    Ok(ExitReport { exit, cpu_time })
}

/// Sends `signal` to a job's process group.
pub fn signal_group(pgid: i32, signal: nix::sys::signal::Signal) -> Result<(), String> {
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("allot-exec-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        dir
    }

    fn spec(dir: &Path, job: u64, command: &str) -> ExecSpec {
        ExecSpec {
            job,
            command: command.into(),
            cwd: dir.to_path_buf(),
            env: vec![("LSB_JOBID".into(), job.to_string()), ("PATH".into(), "/usr/bin:/bin".into())],
            stdout: (dir.join(expand_name("out.%J", job, 0)), false),
            stderr: (dir.join("err"), true),
            run_as: None,
        }
    }

    #[test]
    fn a_job_runs_with_its_environment_output_and_exit_code() {
        let dir = temp("run");
        let files = JobFiles::new(&dir).expect("files");
        files.write_spec(&spec(&dir, 7, "echo job $LSB_JOBID in $(pwd); echo oops >&2; exit 3")).expect("spec");
        let report = files.supervise(7).expect("ran");
        assert_eq!(report.exit, 3);
        assert_eq!(files.read_exit(7), Some(report));
        assert!(files.read_pgid(7).is_some());
        let out = std::fs::read_to_string(dir.join("out.7")).expect("output");
        assert_eq!(out, format!("job 7 in {}\n", dir.display()));
        assert_eq!(std::fs::read_to_string(dir.join("err")).expect("err"), "oops\n");
        files.clean(7);
        assert_eq!(files.read_exit(7), None);
    }

    #[test]
    fn a_signal_to_the_group_ends_the_job() {
        let dir = temp("kill");
        let s = spec(&dir, 1, "sleep 30 & sleep 30; wait");
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || run(&s, |pgid| tx.send(pgid).expect("send")));
        let pgid = rx.recv().expect("started");
        std::thread::sleep(std::time::Duration::from_millis(100));
        signal_group(pgid, nix::sys::signal::Signal::SIGTERM).expect("signal");
        let report = waiter.join().expect("thread").expect("ran");
        assert_eq!(report.exit, 128 + 15);
    }

    #[test]
    fn a_second_supervisor_does_not_run_the_job_again() {
        let dir = temp("twice");
        let files = JobFiles::new(&dir).expect("files");
        files.write_spec(&spec(&dir, 5, "echo ran >> count")).expect("spec");
        let held = files.try_lock(5).expect("lock").expect("free");
        assert!(files.supervise(5).is_err(), "the lock is held");
        drop(held);
        files.supervise(5).expect("runs");
        assert_eq!(files.supervise(5).expect("reports").exit, 0, "already done: not run again");
        assert_eq!(std::fs::read_to_string(dir.join("count")).expect("count"), "ran\n");
    }

    #[test]
    fn a_missing_working_directory_ends_the_job_with_127() {
        let dir = temp("nocwd");
        let files = JobFiles::new(&dir).expect("files");
        let mut s = spec(&dir, 2, "true");
        s.cwd = dir.join("does-not-exist");
        files.write_spec(&s).expect("spec");
        assert_eq!(files.supervise(2).expect("reported").exit, 127);
        assert!(
            std::fs::read_to_string(dir.join("err")).expect("err").starts_with("allot: job 2: cannot start /bin/sh")
        );
    }
}
