//! allotd end to end: the real daemon in a temporary state directory,
//! driven through the real commands.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn allotd() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_allotd"))
}

/// The `allot` command, built beside allotd by `cargo test --workspace`
/// (allot-cli's own tests need it).
fn allot() -> PathBuf {
    let path = allotd().with_file_name("allot");
    assert!(path.exists(), "{} is missing: run `cargo test --workspace`, which builds it", path.display());
    path
}

struct Daemon {
    state: PathBuf,
    child: Child,
}

impl Daemon {
    fn start(state: &Path) -> Daemon {
        std::fs::create_dir_all(state).expect("state dir");
        let log = std::fs::File::create(state.join("test-allotd.log")).expect("log");
        let child = Command::new(allotd())
            .env("ALLOT_STATE_DIR", state)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("allotd starts");
        let d = Daemon { state: state.to_path_buf(), child };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(state.join("allotd.sock")).is_err() {
            assert!(Instant::now() < deadline, "allotd did not listen: {}", d.log());
            std::thread::sleep(Duration::from_millis(20));
        }
        d
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.state.join("test-allotd.log")).unwrap_or_default()
    }

    fn cmd(&self, args: &[&str], cwd: &Path) -> Output {
        Command::new(allot())
            .args(args)
            .env("ALLOT_STATE_DIR", &self.state)
            .current_dir(cwd)
            .output()
            .expect("allot runs")
    }

    /// Polls `bjobs -a` until `job` shows `status`.
    fn wait_for(&self, job: u64, status: &str, cwd: &Path) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let out = self.cmd(&["bjobs", "-a", "-noheader", &job.to_string()], cwd);
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            if text.split_whitespace().nth(2) == Some(status) {
                return text;
            }
            assert!(Instant::now() < deadline, "job {job} never reached {status}: {text} {}", self.log());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("allot-daemon-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

fn submitted_id(out: &Output) -> u64 {
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "bsub failed: {text} {}", String::from_utf8_lossy(&out.stderr));
    let rest = text.strip_prefix("Job <").unwrap_or_else(|| panic!("{text}"));
    rest[..rest.find('>').expect(">")].parse().expect("id")
}

#[test]
fn submit_run_output_environment_and_kill() {
    let dir = tempdir("run");
    let d = Daemon::start(&dir.join("state"));
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let out = d.cmd(
        &["bsub", "-o", "out.%J", "-J", "hello", "echo", "$LSB_JOBID", "$LSB_QUEUE", "$LSB_JOBNAME", "$LS_SUBCWD"],
        &work,
    );
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("is submitted to queue <normal>.\n"));
    let id = submitted_id(&out);
    let line = d.wait_for(id, "DONE", &work);
    assert!(line.contains("hello"), "{line}");
    let text = std::fs::read_to_string(work.join(format!("out.{id}"))).expect("output file");
    assert_eq!(text, format!("{id} normal hello {}\n", work.display()));

    let long = submitted_id(&d.cmd(&["bsub", "sleep", "60"], &work));
    d.wait_for(long, "RUN", &work);
    let killed = d.cmd(&["bkill", &long.to_string()], &work);
    assert_eq!(String::from_utf8_lossy(&killed.stdout), format!("Job <{long}> is being terminated\n"));
    d.wait_for(long, "EXIT", &work);
    let missing = d.cmd(&["bkill", "999"], &work);
    assert!(!missing.status.success());
    assert_eq!(String::from_utf8_lossy(&missing.stderr), "Job <999>: No matching job found\n");

    let none = d.cmd(&["bjobs"], &work);
    assert_eq!(String::from_utf8_lossy(&none.stdout), "No unfinished job found\n");
    let bad = d.cmd(&["bsub", "-q", "nosuch", "true"], &work);
    assert!(!bad.status.success());
    assert_eq!(String::from_utf8_lossy(&bad.stderr), "queue `nosuch` does not exist\n");
    let q = d.cmd(&["bqueues"], &work);
    assert!(String::from_utf8_lossy(&q.stdout).starts_with("QUEUE_NAME      PRIO STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN  SUSP\nnormal            30  Open:Active"));
}

#[test]
fn pending_jobs_say_why() {
    let dir = tempdir("pending");
    let d = Daemon::start(&dir.join("state"));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ids: Vec<u64> = (0..=cpus).map(|_| submitted_id(&d.cmd(&["bsub", "sleep", "30"], &dir))).collect();
    let last = *ids.last().expect("one more job than CPUs");
    d.wait_for(ids[0], "RUN", &dir);
    let p = d.cmd(&["bjobs", "-p"], &dir);
    let text = String::from_utf8_lossy(&p.stdout);
    assert!(text.contains(&format!("\n{last} ")), "{text}");
    assert!(text.contains("Not enough job slots: 1 needed, 0 free"), "{text}");
    let k = d.cmd(&["bkill", "0"], &dir);
    assert!(k.status.success());
}

/// kill -9 of allotd in the middle of a submission burst, then a restart:
/// every acknowledged job is there, and no job ran twice.
#[test]
fn kill_9_during_a_burst_loses_no_acknowledged_job() {
    let dir = tempdir("kill9");
    let state = dir.join("state");
    let ran = dir.join("ran");
    let d = Daemon::start(&state);
    let command = format!("echo $LSB_JOBID >> {}", ran.display());
    let submitter = {
        let state = state.clone();
        let dir = dir.clone();
        std::thread::spawn(move || {
            let mut acked = Vec::new();
            for _ in 0..400 {
                let out = Command::new(allot())
                    .args(["bsub", "sh", "-c", &format!("'{command}'")])
                    .env("ALLOT_STATE_DIR", &state)
                    .current_dir(&dir)
                    .output()
                    .expect("runs");
                if out.status.success() {
                    acked.push(submitted_id(&out));
                } else if !acked.is_empty() {
                    break;
                }
            }
            acked
        })
    };
    std::thread::sleep(Duration::from_millis(600));
    d.kill9();
    let acked = submitter.join().expect("submitter");
    assert!(acked.len() >= 3, "some submissions before the kill: {}", acked.len());
    let d = Daemon::start(&state);
    for &id in &acked {
        d.wait_for(id, "DONE", &dir);
    }
    let ran_ids: Vec<u64> =
        std::fs::read_to_string(&ran).unwrap_or_default().lines().map(|l| l.trim().parse().expect("id")).collect();
    for &id in &acked {
        assert_eq!(ran_ids.iter().filter(|&&r| r == id).count(), 1, "job {id} ran once: {ran_ids:?}");
    }
    let mut sorted = ran_ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), ran_ids.len(), "no job ran twice");
}
