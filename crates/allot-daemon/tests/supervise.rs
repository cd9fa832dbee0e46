//! The supervisors' zygote (`allot-supervise --zygote`): the real binary
//! driven through its pipes as allotd drives it, and allotd going on when
//! the zygote is killed.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use allot_exec::{ExecSpec, JobFiles, OutputFile};
use common::{Daemon, tempdir};

fn spec(dir: &Path, job: u64, command: &str) -> ExecSpec {
    ExecSpec {
        nice: 0,
        job,
        command: command.into(),
        cwd: dir.to_path_buf(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        stdout: OutputFile { path: dir.join(format!("out.{job}")), overwrite: false, named: true },
        stderr: OutputFile { path: dir.join(format!("err.{job}")), overwrite: false, named: true },
        run_as: None,
        create_cwd: false,
        cgroup: None,
        memory_limit_kb: None,
        attempt: 1,
        report: None,
        limits: Default::default(),
        pre_exec: None,
        post_exec: None,
        mail: None,
        interactive: None,
        input: None,
        umask: allot_exec::inherit::DEFAULT_UMASK,
        login_shell: None,
    }
}

fn wait(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A job id a line in, a supervisor forked for each, each one's id out
/// when it ended; a line that is no job id is refused and the rest goes
/// on; when its input closes the zygote ends, and a job still running
/// goes on under its supervisor to its end.
#[test]
fn the_zygote_forks_a_supervisor_per_job_and_outlives_nothing() {
    let dir = tempdir("zygote");
    let files = JobFiles::new(&dir).expect("files");
    files.write_spec(&spec(&dir, 1, "echo one")).expect("spec");
    files.write_spec(&spec(&dir, 2, "exit 4")).expect("spec");
    files.write_spec(&spec(&dir, 3, "sleep 1; echo three")).expect("spec");
    let mut zygote = Command::new(env!("CARGO_BIN_EXE_allot-supervise"))
        .arg("--zygote")
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the zygote starts");
    let mut input = zygote.stdin.take().expect("stdin");
    let mut ended = BufReader::new(zygote.stdout.take().expect("stdout")).lines();
    input.write_all(b"1\nnot-a-job\n2\n").expect("write");
    let mut heard: Vec<String> = (0..2).map(|_| ended.next().expect("a line").expect("text")).collect();
    heard.sort();
    assert_eq!(heard, ["1", "2"]);
    assert_eq!(files.read_exit(1).map(|r| r.exit), Some(0));
    assert_eq!(files.read_exit(2).map(|r| r.exit), Some(4));
    assert_eq!(std::fs::read_to_string(dir.join("out.1")).expect("output"), "one\n");
    // Job 3's supervisor outlives the zygote, whose input closes now.
    input.write_all(b"3\n").expect("write");
    wait("job 3 starts", || files.started(3));
    drop(input);
    let status = zygote.wait().expect("the zygote ends");
    assert!(status.success(), "{status}");
    assert_eq!(files.read_exit(3), None, "still running");
    wait("job 3 ends under its supervisor", || files.read_exit(3).is_some());
    assert_eq!(std::fs::read_to_string(dir.join("out.3")).expect("output"), "three\n");
    // Read to its end once job 3's supervisor, which shares it, is gone.
    let mut errors = String::new();
    let _ = std::io::Read::read_to_string(&mut zygote.stderr.take().expect("stderr"), &mut errors);
    assert!(errors.contains("zygote: not a job id: not-a-job"), "{errors}");
}

/// The pids of the processes whose command line has all of `words`.
fn pids_with(words: &[&str]) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let args: Vec<String> = cmdline.split(|&b| b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
        if words.iter().all(|w| args.iter().any(|a| a == w)) {
            out.push(pid);
        }
    }
    out
}

/// allotd starts its jobs through the zygote; killed, the zygote is
/// started again at the next job and no job is lost.
#[test]
fn allotd_starts_the_zygote_again_when_it_is_gone() {
    let dir = tempdir("zygote-gone");
    let state = dir.join("state");
    let d = Daemon::start(&state);
    let first = d.cmd(&["bsub", "-K", "true"], &dir);
    assert!(first.status.success(), "{}", common::stderr(&first));
    let state_arg = state.display().to_string();
    let zygotes = pids_with(&["--zygote", &state_arg]);
    assert_eq!(zygotes.len(), 1, "one zygote, started with the first job");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(zygotes[0]), nix::sys::signal::Signal::SIGKILL).expect("kill");
    wait("the zygote is gone", || pids_with(&["--zygote", &state_arg]).is_empty());
    for code in ["0", "5"] {
        let out = d.cmd(&["bsub", "-K", &format!("exit {code}")], &dir);
        assert_eq!(out.status.code(), Some(code.parse().expect("code")), "{}", d.log());
    }
    assert!(d.log().contains("the supervisors' zygote is gone"), "{}", d.log());
    assert_eq!(pids_with(&["--zygote", &state_arg]).len(), 1, "a new one");
}
