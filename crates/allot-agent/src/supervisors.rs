//! Starting the jobs' supervisors (allotd's for its own host, an agent's
//! for its host): forked by the supervisors' zygote
//! (`allot-supervise --zygote`, see `allot_exec::zygote`) while it runs,
//! which saves a program start for every job; otherwise, or when the
//! zygote cannot be had, `allot-supervise STATE_DIR JOB` as a program of
//! its own. Either way the supervisor is in a process group of its own, so
//! signals to the daemon's group miss it, and outlives allotd (or the
//! agent).

use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use tokio::sync::mpsc;

/// What the one who starts supervisors hears of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heard {
    /// Job `.0`'s supervisor exited: its exit report is there, or it died.
    Ended(u64),
    /// The zygote could not fork job `.0`'s supervisor: start it alone
    /// ([`Supervisors::start_alone`]).
    Unsupervised(u64),
}

pub struct Supervisors {
    /// `allot-supervise`, from allotd's own directory.
    exe: PathBuf,
    state_dir: PathBuf,
    zygote: Option<Zygote>,
    /// For the tests that drive allotd's dispatcher without running jobs:
    /// the jobs whose supervisor would have started, in order, instead.
    pub recorded: Option<Vec<u64>>,
}

struct Zygote {
    child: Child,
    input: ChildStdin,
}

impl Drop for Zygote {
    fn drop(&mut self) {
        // Its input closes with it, which ends it; the supervisors it
        // forked go on.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Supervisors {
    pub fn new(exe: PathBuf, state_dir: &Path) -> Supervisors {
        Supervisors { exe, state_dir: state_dir.to_path_buf(), zygote: None, recorded: None }
    }

    /// Supervisors that only note which jobs they would start.
    pub fn recording(state_dir: &Path) -> Supervisors {
        Supervisors { recorded: Some(Vec::new()), ..Supervisors::new(PathBuf::new(), state_dir) }
    }

    pub fn exe(&self) -> &Path {
        &self.exe
    }

    /// Starts job `job`'s supervisor; `wake` hears when it ends.
    pub fn start<T: From<Heard> + Send + 'static>(&mut self, job: u64, wake: &mpsc::Sender<T>) -> std::io::Result<()> {
        if let Some(jobs) = &mut self.recorded {
            jobs.push(job);
            return Ok(());
        }
        for _ in 0..2 {
            if self.zygote.is_none() {
                match self.spawn_zygote(wake) {
                    Ok(z) => self.zygote = Some(z),
                    Err(e) => {
                        eprintln!("allotd: cannot start the supervisors' zygote ({e}): one program per job");
                        break;
                    }
                }
            }
            let Some(z) = &mut self.zygote else { break };
            match writeln!(z.input, "{job}").and_then(|()| z.input.flush()) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    eprintln!("allotd: the supervisors' zygote is gone ({e}); starting it again");
                    self.zygote = None;
                }
            }
        }
        self.start_alone(job, wake)
    }

    /// Job `job`'s supervisor as a program of its own.
    pub fn start_alone<T: From<Heard> + Send + 'static>(
        &self,
        job: u64,
        wake: &mpsc::Sender<T>,
    ) -> std::io::Result<()> {
        let mut child = tokio::process::Command::new(&self.exe)
            .arg(&self.state_dir)
            .arg(job.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()?;
        let wake = wake.clone();
        tokio::spawn(async move {
            let _ = child.wait().await;
            let _ = wake.send(Heard::Ended(job).into()).await;
        });
        Ok(())
    }

    /// The zygote, and a thread that hears from it: a job id when that
    /// job's supervisor ended, `failed` and a job id when it could not be
    /// forked (allotd then starts it as a program of its own).
    fn spawn_zygote<T: From<Heard> + Send + 'static>(&self, wake: &mpsc::Sender<T>) -> std::io::Result<Zygote> {
        let mut child = Command::new(&self.exe)
            .arg("--zygote")
            .arg(&self.state_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other("the zygote's pipes"));
        };
        let wake = wake.clone();
        std::thread::Builder::new().name("zygote".into()).spawn(move || {
            for line in std::io::BufReader::new(output).lines() {
                let Ok(line) = line else { break };
                let heard = match (line.strip_prefix("failed ").map(str::parse::<u64>), line.parse::<u64>()) {
                    (Some(Ok(job)), _) => Heard::Unsupervised(job),
                    (_, Ok(job)) => Heard::Ended(job),
                    _ => continue,
                };
                if wake.blocking_send(heard.into()).is_err() {
                    break;
                }
            }
        })?;
        Ok(Zygote { child, input })
    }
}
