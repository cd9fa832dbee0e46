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

/// A process's resident memory now and at most (VmRSS, VmHWM), MiB.
pub(crate) fn memory_mib(pid: u32) -> anyhow::Result<[f64; 2]> {
    let status = std::fs::read_to_string(PathBuf::from(format!("/proc/{pid}/status")))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map_or(0, |v| v.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0))
    };
    Ok(["VmRSS:", "VmHWM:"].map(|f| field(f) as f64 / 1024.0))
}

pub fn daemon(jobs: u64, connections: u64, keep: bool) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe()?;
    let allotd = exe.with_file_name("allotd");
    let state = std::env::temp_dir().join(format!("allot-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&state);
    std::fs::create_dir_all(&state)?;
    let mut child = Command::new(&allotd)
        .env("ALLOT_STATE_DIR", &state)
        .stdout(Stdio::null())
        .stderr(crate::daemon_cmd::log_file(&state.join("allotd.log"))?)
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
                        submission: allot_proto::Submission { slots: 1, ..Default::default() },
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
    let [now, most] = memory_mib(pid)?;
    println!("allotd memory: {now:.0} MiB resident now, {most:.0} MiB at most ({jobs} pending jobs)");
    Ok(ExitCode::SUCCESS)
}

/// `allot bench replay TRACE`: `allot sim --from` at the scale of a
/// year's trace. The trace is simulated on its machine (one queue
/// `normal`, fairshare or FCFS, with slot reservation and backfill when
/// asked), the run written as allotd's event log into a fresh state
/// directory, and that log replayed under the configuration it records,
/// as `allot sim --from` does: the time to read it and the time to replay
/// it, and whether every start came back; then the time of the command
/// itself, `allot sim --from` run as a user runs it.
pub fn replay(trace: &Path, fcfs: bool, backfill: bool, keep: bool) -> anyhow::Result<ExitCode> {
    let w = allot_sim::input::read_workload(trace, &allot_sim::input::ReadOptions::default())?;
    w.machine.check().map_err(|(line, e)| anyhow!("{}:{line}: {e}", trace.display()))?;
    let state = std::env::temp_dir().join(format!("allot-bench-replay-{}", std::process::id()));
    written_log(&w, &trace.display().to_string(), fcfs, backfill, &state)?;
    let t2 = Instant::now();
    let h = allot_sim::history::History::read(&state)?;
    let read = t2.elapsed().as_secs_f64();
    let t3 = Instant::now();
    let (replayed, engine) = allot_sim::replay::replay(&h, None)?;
    let replay_secs = t3.elapsed().as_secs_f64();
    replayed_report(&state, keep, read, replay_secs, replayed, engine, h)
}

/// `w` simulated on its machine (one queue `normal`, fairshare or FCFS,
/// with slot reservation and backfill when asked) and written as
/// allotd's event log into the fresh state directory `state`, with the
/// configuration it ran on in `state/config`.
pub(crate) fn written_log(
    w: &allot_sim::workload::Workload,
    name: &str,
    fcfs: bool,
    backfill: bool,
    state: &Path,
) -> anyhow::Result<()> {
    use allot_sim::sim::{SimOptions, run};
    let policy = if fcfs { allot_sim::machine::Policy::Fcfs } else { allot_sim::machine::Policy::Fairshare };
    let machine = allot_sim::machine::default_engine(w, policy);
    let mut hosts = String::new();
    for h in &machine.hosts {
        hosts.push_str(&format!("[[hosts]]\nname = \"{}\"\nncpus = {}\n\n", h.name, h.slots));
    }
    let mut queue = String::from("Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\n");
    if !fcfs {
        queue.push_str("FAIRSHARE = USER_SHARES[[default, 1]]\n");
    }
    if backfill {
        queue.push_str(&format!(
            "SLOT_RESERVE = MAX_RESERVE_TIME[{}]\nBACKFILL = Y\n",
            allot_sim::machine::BACKFILL_RESERVE_CYCLES
        ));
    }
    queue.push_str("End Queue\n");
    let files = vec![
        ("allot.toml".to_string(), hosts),
        ("lsb.params".to_string(), "Begin Parameters\nDEFAULT_QUEUE = normal\nEnd Parameters\n".to_string()),
        ("lsb.queues".to_string(), queue),
    ];
    let (config, _) = allot_config::load::load_texts(&files).map_err(|d| anyhow!("the trace's configuration:\n{d}"))?;
    let engine_config = config.engine_config();
    let t0 = Instant::now();
    let mut engine = allot_engine::Engine::new(engine_config.clone());
    let opts = SimOptions { kill_at_limit: true, record_events: true, ..SimOptions::default() };
    let out = run(&mut engine, w, &opts, &|_, _| serde_json::Value::Null, &mut |_| {});
    let simulated = t0.elapsed().as_secs_f64();
    let log = allot_sim::record::as_log(w, &out, &files, &allot_engine::Engine::new(engine_config));
    let _ = std::fs::remove_dir_all(state);
    std::fs::create_dir_all(state.join("config"))?;
    for (file, text) in &files {
        std::fs::write(state.join("config").join(file), text)?;
    }
    let t1 = Instant::now();
    allot_store::Store::open(&state.join("state.db"))?.append(&log)?;
    let written = t1.elapsed().as_secs_f64();
    println!(
        "{name}: {} jobs simulated in {simulated:.2} s; written as allotd's log: {} records in {written:.2} s",
        out.records.len(),
        log.len()
    );
    Ok(())
}

/// The replay's figures, and the command's.
fn replayed_report(
    state: &Path,
    keep: bool,
    read: f64,
    replay_secs: f64,
    replayed: allot_sim::replay::Replayed,
    engine: allot_engine::Engine,
    h: allot_sim::history::History,
) -> anyhow::Result<ExitCode> {
    // Let go with the process, as `allot sim --from` does.
    std::mem::forget((engine, h));
    let differences = replayed.differences();
    println!(
        "allot sim --from: log read in {read:.2} s, replayed in {replay_secs:.2} s ({:.2} s in all); {} of {} starts made again{}",
        read + replay_secs,
        replayed.made_again(),
        replayed.recorded.len(),
        if differences.is_empty() { String::new() } else { format!(", {} differ", differences.len()) }
    );
    for &((job, run), then, now) in differences.iter().take(5) {
        eprintln!("job {job} run {}: simulated {then:?}, replayed {now:?}", run + 1);
    }
    let same = differences.is_empty();
    drop(differences);
    std::mem::forget(replayed);
    // What a user runs: the command, in a process of its own (its heap
    // not the one this simulation used), its outputs written.
    let t4 = Instant::now();
    let command = Command::new(std::env::current_exe()?)
        .args(["sim", "--from"])
        .arg(state)
        .arg("--out")
        .arg(state.join("replay"))
        .output()
        .context("cannot run allot sim --from")?;
    let command_secs = t4.elapsed().as_secs_f64();
    match command.status.code() {
        // 3: some start differs, as said above.
        Some(0 | 3) => println!("allot sim --from as a command, its outputs written: {command_secs:.2} s"),
        _ => bail!(
            "allot sim --from {} failed ({}): {}",
            state.display(),
            command.status,
            String::from_utf8_lossy(&command.stderr).trim_end()
        ),
    }
    if keep {
        println!("the log stays in {}", state.display());
    } else {
        let _ = std::fs::remove_dir_all(state);
    }
    Ok(if same { ExitCode::SUCCESS } else { ExitCode::from(3) })
}
