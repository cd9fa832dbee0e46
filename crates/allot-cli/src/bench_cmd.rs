//! `allot bench daemon`: allotd under a large backlog, measured the way its
//! targets are stated. It starts allotd on its embedded defaults in a fresh
//! state directory, submits `--jobs` jobs over `--connections` concurrent
//! connections (every job `sleep`s, so all but a host's worth stay
//! pending), then times the real `allot bjobs -u all` and reads allotd's
//! memory from /proc. Everything is killed and removed at the end.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use allot_proto::{Client, Request, Response, Submit};
use anyhow::{Context, anyhow, bail};

pub fn daemon(jobs: u64, connections: u64, keep: bool) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe()?;
    let allotd = exe.with_file_name("allotd");
    let state = std::env::temp_dir().join(format!("allot-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&state);
    std::fs::create_dir_all(&state)?;
    let mut child = Command::new(&allotd)
        .env("ALLOT_STATE_DIR", &state)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(state.join("allotd.log"))?)
        .spawn()
        .with_context(|| format!("cannot start {}", allotd.display()))?;
    let result = measure(&exe, &state, child.id(), jobs, connections.max(1));
    if keep {
        println!("allotd (pid {}) keeps running: ALLOT_STATE_DIR={}", child.id(), state.display());
        return result;
    }
    let _ = Command::new(&exe).args(["bkill", "0"]).env("ALLOT_STATE_DIR", &state).output();
    let _ = Command::new(&exe).arg("stop").env("ALLOT_STATE_DIR", &state).output();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&state);
    result
}

fn measure(exe: &Path, state: &Path, pid: u32, jobs: u64, connections: u64) -> anyhow::Result<ExitCode> {
    let socket = allot_proto::paths::socket(state);
    let deadline = Instant::now() + Duration::from_secs(20);
    while Client::connect(&socket).is_err() {
        if Instant::now() > deadline {
            bail!("allotd did not listen: see {}", state.join("allotd.log").display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let env: Vec<(String, String)> = std::env::vars().collect();
    let cwd = std::env::temp_dir().display().to_string();
    let t0 = Instant::now();
    let threads: Vec<_> = (0..connections)
        .map(|c| {
            let (socket, env, cwd) = (socket.clone(), env.clone(), cwd.clone());
            let n = jobs / connections + u64::from(c < jobs % connections);
            std::thread::spawn(move || -> anyhow::Result<()> {
                let mut client = Client::connect(&socket)?;
                for _ in 0..n {
                    let submit = Submit {
                        slots: 1,
                        command: "sleep 100000".into(),
                        cwd: cwd.clone(),
                        output: Some(("/dev/null".into(), false)),
                        env: env.clone(),
                        ..Submit::default()
                    };
                    match client.call(Request::Submit(Box::new(submit)))? {
                        Response::Submitted { .. } => {}
                        other => bail!("submission refused: {other:?}"),
                    }
                }
                Ok(())
            })
        })
        .collect();
    for t in threads {
        t.join().map_err(|_| anyhow!("a submitting thread panicked"))??;
    }
    let submit_secs = t0.elapsed().as_secs_f64();
    println!(
        "submitted {jobs} jobs over {connections} connections in {submit_secs:.2} s: {:.0} jobs/s",
        jobs as f64 / submit_secs
    );
    let mut times = Vec::new();
    let mut lines = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let out = Command::new(exe).args(["bjobs", "-u", "all"]).env("ALLOT_STATE_DIR", state).output()?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        if !out.status.success() {
            bail!("bjobs -u all failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        lines = out.stdout.iter().filter(|&&b| b == b'\n').count();
    }
    times.sort_by(f64::total_cmp);
    println!(
        "bjobs -u all ({} jobs listed): median {:.0} ms (min {:.0}, max {:.0}) over 5 runs",
        lines.saturating_sub(1),
        times[2],
        times[0],
        times[4]
    );
    let status = std::fs::read_to_string(PathBuf::from(format!("/proc/{pid}/status")))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map_or(0, |v| v.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0))
    };
    println!(
        "allotd memory: {:.0} MiB resident now, {:.0} MiB at most ({} pending jobs)",
        field("VmRSS:") as f64 / 1024.0,
        field("VmHWM:") as f64 / 1024.0,
        jobs
    );
    Ok(ExitCode::SUCCESS)
}
