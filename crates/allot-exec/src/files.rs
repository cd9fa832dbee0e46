//! A host's job files (`STATE/jobs/`): each job's spec, supervisor lock,
//! process group, exit report, and the default output's place; and the
//! supervisor's whole life over them ([`JobFiles::supervise`]).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::owner::as_owner;
use crate::{ExecError, ExecSpec, ExitReport, now_secs, open_output, run, signal_group};

/// Whether a job file must survive a crash of the machine (an fsync).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Durable {
    Yes,
    No,
}

/// Where a job's default output (`ext`: `out` or `err`) is, in the state
/// directory of allotd or of the agent that runs it: `output/JOB.EXT`.
pub fn default_output(state_dir: &Path, job: u64, ext: &str) -> PathBuf {
    state_dir.join("output").join(format!("{job}.{ext}"))
}

/// A job file, read whole. Each is written whole before it is renamed
/// into place ([`JobFiles::write_atomic`]), so a read that does not fill
/// the buffer has reached its end: no look at its size first and no read
/// that returns nothing after (`std::fs::read` makes both, for every job).
fn read_whole(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = File::open(path)?;
    let mut bytes = vec![0u8; 4096];
    let mut len = 0;
    loop {
        match file.read(&mut bytes[len..]) {
            Ok(0) => break,
            Ok(n) => {
                len += n;
                if len < bytes.len() {
                    break;
                }
                bytes.resize(bytes.len() * 2, 0);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(len);
    Ok(bytes)
}

/// Files of the jobs in the state directory.
#[derive(Clone, Debug)]
pub struct JobFiles {
    dir: PathBuf,
}

impl JobFiles {
    /// The job files under `state_dir`: `jobs/` (specs, which hold each
    /// job's environment) and `output/` (default output), both mode 0700:
    /// no user reads another's through them (`bpeek` reads for the owner).
    pub fn new(state_dir: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let dir = state_dir.join("jobs");
        for d in [&dir, &state_dir.join("output")] {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(d)?;
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(JobFiles { dir })
    }

    fn path(&self, job: u64, ext: &str) -> PathBuf {
        self.dir.join(format!("{job}.{ext}"))
    }

    /// Writes a job file whole or not at all (a reader never sees half of
    /// it); with `durable`, it also survives a crash of the machine.
    fn write_atomic(&self, job: u64, ext: &str, bytes: &[u8], durable: Durable) -> std::io::Result<()> {
        use std::io::Write;
        let tmp = self.path(job, &format!("{ext}.tmp"));
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        if durable == Durable::Yes {
            file.sync_all()?;
        }
        drop(file);
        std::fs::rename(tmp, self.path(job, ext))
    }

    /// The spec need not survive a machine crash: a job whose supervisor
    /// never started it is launched again after a restart, and its spec
    /// written anew.
    pub fn write_spec(&self, spec: &ExecSpec) -> std::io::Result<()> {
        self.write_atomic(spec.job, "spec", &serde_json::to_vec(spec).map_err(std::io::Error::other)?, Durable::No)
    }

    pub fn read_spec(&self, job: u64) -> Result<ExecSpec, ExecError> {
        let path = self.path(job, "spec");
        let bytes = read_whole(&path).map_err(|source| ExecError::File {
            job,
            what: "cannot read",
            path: path.display().to_string(),
            source,
        })?;
        serde_json::from_slice(&bytes).map_err(|e| ExecError::Spec(format!("{}: {e}", path.display())))
    }

    /// The job's exit report, once the supervisor wrote it.
    pub fn read_exit(&self, job: u64) -> Option<ExitReport> {
        serde_json::from_slice(&read_whole(&self.path(job, "exit")).ok()?).ok()
    }

    /// The job's process group, once it started.
    pub fn read_pgid(&self, job: u64) -> Option<i32> {
        std::fs::read_to_string(self.path(job, "pgid")).ok()?.trim().parse().ok()
    }

    /// What a multi-host job's other hosts (its `blaunch` tasks there)
    /// used so far, CPU seconds and KB of memory, as allotd last told this
    /// host: its report shows the job's whole use (its own exit report,
    /// allotd's, does not count it: allotd adds it itself).
    pub fn write_other_hosts(&self, job: u64, cpu_time: f64, max_rss_kb: u64) -> std::io::Result<()> {
        self.write_atomic(job, "others", format!("{cpu_time} {max_rss_kb}").as_bytes(), Durable::No)
    }

    /// See [`JobFiles::write_other_hosts`]: (0, 0) when none was told.
    pub fn read_other_hosts(&self, job: u64) -> (f64, u64) {
        let text = std::fs::read_to_string(self.path(job, "others")).unwrap_or_default();
        let mut words = text.split_whitespace();
        let cpu = words.next().and_then(|w| w.parse().ok()).unwrap_or(0.0);
        (cpu, words.next().and_then(|w| w.parse().ok()).unwrap_or(0))
    }

    /// Removes a finished job's files (its output files stay).
    pub fn clean(&self, job: u64) {
        self.remove(job, &["spec", "pgid", "exit", "lock", "others"]);
    }

    /// [`JobFiles::clean`] where no job has other hosts to be told of
    /// (allotd's own files, without agents): there is no `others` file.
    pub fn clean_alone(&self, job: u64) {
        self.remove(job, &["spec", "pgid", "exit", "lock"]);
    }

    fn remove(&self, job: u64, exts: &[&str]) {
        for ext in exts {
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

    /// A job whose supervisor is gone without an exit report (killed, or
    /// the machine's OOM killer): nobody can hear how it ends, so its
    /// processes still alive are ended (SIGKILL to its process group) and
    /// the end to report is returned: exit code and why. `None` while its
    /// supervisor lives (it holds the lock), when it wrote its report, when
    /// its command never started (a supervisor may be about to take the
    /// lock; one that fails before the start writes a report), or when the
    /// lock cannot be looked at.
    pub fn orphan_end(&self, job: u64) -> Option<(i32, &'static str)> {
        if !self.started(job) || self.read_exit(job).is_some() {
            return None;
        }
        if !matches!(self.try_lock(job), Ok(Some(_))) {
            return None;
        }
        let alive =
            self.read_pgid(job).is_some_and(|pgid| signal_group(pgid, nix::sys::signal::Signal::SIGKILL).is_ok());
        Some(if alive {
            (128 + 9, "its supervisor died; its processes were ended")
        } else {
            (255, "its supervisor died; how the job itself ended is not known")
        })
    }

    /// The jobs that have files here (a spec, a report or a lock), in
    /// ascending order.
    pub fn jobs(&self) -> Vec<u64> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut ids: Vec<u64> = entries
            .filter_map(|e| {
                let name = e.ok()?.file_name();
                let (id, ext) = name.to_str()?.split_once('.')?;
                matches!(ext, "spec" | "exit" | "lock").then(|| id.parse().ok())?
            })
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
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
        let spec = match self.read_spec(job) {
            Ok(spec) => spec,
            Err(e) => {
                // Reported, so the job ends with why instead of running
                // for ever in allotd's eyes.
                self.write_report(job, &ExitReport::unrun(e.exit_code(), e.reason()))?;
                return Err(e);
            }
        };
        // This process serves this job alone: the files it makes for the
        // job (its output files) are made with the job's umask, as the
        // job's own are.
        nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(spec.umask & 0o777));
        let mut spec = spec;
        crate::inherit::lsf_commands(&mut spec.env);
        let started = |pgid: i32| {
            // Durable: after a crash of the machine, it is what says the
            // job ran, so it is not run again. The job runs meanwhile.
            self.write_atomic(job, "pgid", pgid.to_string().as_bytes(), Durable::Yes).is_ok()
        };
        // Only a job on several hosts has others to be told of
        // (`LSB_MCPU_HOSTS`, "host n" per host, is allotd's to set).
        let hosts =
            spec.env.iter().find(|(k, _)| k == "LSB_MCPU_HOSTS").map_or(0, |(_, v)| v.split_whitespace().count());
        let report = run(&spec, started, || if hosts > 2 { self.read_other_hosts(job) } else { (0.0, 0) });
        let report = report.unwrap_or_else(|e| {
            // Said on the job's standard error too, where it can be
            // opened as it would have been for the job.
            if let Ok(Ok(mut err)) = as_owner(spec.run_as.as_ref(), || open_output(job, &spec.stderr, false)) {
                let _ = writeln!(err, "allot: job {job}: {}", e.reason());
            }
            ExitReport::unrun(e.exit_code(), e.reason())
        });
        let report = ExitReport { ended_at: now_secs(), ..report };
        // The report is how allotd hears of the end: on a full disk it is
        // tried again every second until it is written.
        while let Err(e) = self.write_report(job, &report) {
            if !matches!(&e, ExecError::File { source, .. } if source.raw_os_error() == Some(28)) {
                return Err(e);
            }
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
        Ok(report)
    }

    /// Writes the job's exit report. Not synced: the daemon's `Finished`
    /// record is the durable one. A machine crash between the two leaves a
    /// started job without a report, which the restart records as lost
    /// (exit 255).
    pub fn write_report(&self, job: u64, report: &ExitReport) -> Result<(), ExecError> {
        let bytes = serde_json::to_vec(report).map_err(|e| ExecError::Spec(e.to_string()))?;
        self.write_atomic(job, "exit", &bytes, Durable::No).map_err(|source| ExecError::File {
            job,
            what: "cannot write",
            path: self.path(job, "exit").display().to_string(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever its size, a job file comes back whole: empty, within the
    /// first buffer, exactly one buffer, and past several.
    #[test]
    fn a_job_file_is_read_whole_in_as_few_reads_as_it_takes() {
        let dir = crate::tests::temp("read-whole");
        for size in [0usize, 70, 4096, 10_000, 70_000] {
            let bytes: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let path = dir.join(format!("{size}.spec"));
            std::fs::write(&path, &bytes).expect("written");
            assert_eq!(read_whole(&path).expect("read"), bytes, "{size} bytes");
        }
        assert!(read_whole(&dir.join("none")).is_err());
    }
}
