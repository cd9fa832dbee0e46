//! `allot bench restart TRACE`: how long allotd takes to come back on a
//! long history. The trace (repeated end to end up to `--jobs` jobs) is
//! simulated on its machine and written as allotd's event log, as `allot
//! bench replay` writes it; then allotd is started on that state
//! directory `--restarts` times, each timed from its start to its first
//! answer (`bjobs` of one job), with its memory at most, and stopped.

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use allot_proto::{Client, JobQuery, JobRef, Request};
use allot_sim::workload::Workload;
use anyhow::{Context, anyhow, bail};

pub fn restart(trace: &Path, jobs: Option<usize>, restarts: u32, keep: bool) -> anyhow::Result<ExitCode> {
    let w = allot_sim::input::read_workload(trace, &allot_sim::input::ReadOptions::default())?;
    w.machine.check().map_err(|(line, e)| anyhow!("{}:{line}: {e}", trace.display()))?;
    let w = match jobs {
        Some(n) => repeated(w, n),
        None => w,
    };
    let state = std::env::temp_dir().join(format!("allot-bench-restart-{}", std::process::id()));
    crate::bench_cmd::written_log(&w, &trace.display().to_string(), false, false, &state)?;
    drop(w);
    let log = std::fs::metadata(state.join("state.db")).map_or(0, |m| m.len());
    println!("the log: {:.0} MiB", log as f64 / f64::from(1 << 20));
    let result = (1..=restarts.max(1)).try_for_each(|k| timed_start(&state, k));
    if keep {
        println!("the state stays in {}", state.display());
    } else {
        let _ = std::fs::remove_dir_all(&state);
    }
    result.map(|()| ExitCode::SUCCESS)
}

/// `w`'s jobs again and again, each round after the last one's
/// submissions and a day, until there are `n`. Its users' commands are
/// left out: they name the first round's jobs by number.
fn repeated(mut w: Workload, n: usize) -> Workload {
    w.actions.clear();
    let first = w.jobs.iter().map(|j| j.submit).min().unwrap_or(0);
    let span = w.jobs.iter().map(|j| j.submit).max().unwrap_or(0) - first + 86_400;
    let one = std::mem::take(&mut w.jobs);
    if one.is_empty() {
        return w;
    }
    w.jobs.reserve(n);
    for k in 0.. {
        for j in &one {
            if w.jobs.len() == n {
                return w;
            }
            let mut j = j.clone();
            j.submit += k * span;
            j.id = w.jobs.len() as u64 + 1;
            w.jobs.push(j);
        }
    }
    w
}

/// allotd started on `state`, timed to its first answer, then stopped.
fn timed_start(state: &Path, k: u32) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let allotd = exe.with_file_name("allotd");
    let began = Instant::now();
    let mut child = Command::new(&allotd)
        .arg("--config")
        .arg(state.join("config"))
        .env("ALLOT_STATE_DIR", state)
        .env_remove("LSF_ENVDIR")
        .stdout(Stdio::null())
        .stderr(crate::daemon_cmd::log_file(&state.join("allotd.log"))?)
        .spawn()
        .with_context(|| format!("cannot start {}", allotd.display()))?;
    let socket = allot_proto::paths::socket(state);
    let query = JobQuery { jobs: vec![JobRef::job(1)], finished: true, ..JobQuery::default() };
    loop {
        let answered = Client::connect(&socket).and_then(|mut c| c.call(Request::Jobs(query.clone())));
        if answered.is_ok() {
            break;
        }
        if let Some(status) = child.try_wait()? {
            bail!("allotd ended ({status}): see {}", state.join("allotd.log").display());
        }
        if began.elapsed() > Duration::from_secs(3600) {
            let _ = child.kill();
            bail!("allotd did not answer within an hour");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = began.elapsed().as_secs_f64();
    let [_, peak] = crate::bench_cmd::memory_mib(child.id())?;
    println!("restart {k}: allotd answered after {took:.2} s, {peak:.0} MiB resident at most");
    let stopped = Command::new(&exe).arg("stop").env("ALLOT_STATE_DIR", state).output()?;
    if !stopped.status.success() {
        let _ = child.kill();
    }
    child.wait()?;
    Ok(())
}
