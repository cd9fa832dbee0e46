//! `allot sim --from STATE_DIR` and `allot whatif`: allotd's own history
//! replayed, under the configuration it ran with or another.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use allot_engine::Engine;
use allot_sim::history::{History, Recorded};
use allot_sim::replay::{Replayed, replay};
use allot_sim::report;
use allot_sim::sim::JobRecord;
use anyhow::{Context, anyhow};

/// `<state dir name>.replay`, or `.replay-2`, ... when taken.
fn default_out(from: &Path) -> PathBuf {
    let name = from.file_name().map_or_else(|| "allot".into(), |n| n.to_string_lossy().into_owned());
    crate::sim_cmd::unused(&format!("{name}.replay"))
}

fn read(from: &Path) -> anyhow::Result<History> {
    History::read(from).map_err(|e| anyhow!("--from {}: {e}", from.display()))
}

fn under(config: Option<&Path>) -> anyhow::Result<Option<Recorded>> {
    config.map(|dir| Recorded::from_dir(dir).map_err(|e| anyhow!("--config {}: {e}", dir.display()))).transpose()
}

fn run(h: &History, config: Option<Recorded>) -> anyhow::Result<(Replayed, Engine, String)> {
    let recorded = config.is_none();
    let (replayed, engine) = replay(h, config).map_err(|e| anyhow!("{}: {e}", h.path.display()))?;
    let name = if recorded { format!("{} (as recorded)", replayed.config) } else { replayed.config.clone() };
    Ok((replayed, engine, name))
}

/// `allot sim --from STATE_DIR [--config DIR] [--out DIR]`.
pub fn sim_from(from: &Path, config: Option<&Path>, out: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let wall = Instant::now();
    let h = read(from)?;
    let recorded = config.is_none();
    let (r, engine, name) = run(&h, under(config)?)?;
    let out_dir = out.unwrap_or_else(|| default_out(from));
    std::fs::create_dir_all(&out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    let write = |file: &str, text: String| crate::sim_cmd::write_out(&out_dir, file, text);
    // Every run, by start (a run is one job's start: the keys differ).
    let mut all: Vec<&JobRecord> = r.outcome.records.iter().chain(&r.running).collect();
    all.sort_unstable_by_key(|j| (j.start, j.id, j.index));
    let (summary, differences) = crate::sim_cmd::with_job_outputs(&out_dir, &all, &engine, || {
        let summary = report::summary_of(&name, r.first_submit, 0, &r.outcome, &engine);
        write("summary.json", serde_json::to_string_pretty(&summary)? + "\n")?;
        Ok((summary, r.differences()))
    })?;
    let shown = |s: Option<&(u64, String)>| s.map_or_else(|| "not started".into(), |(t, h)| format!("{t} on {h}"));
    let mut problems = String::new();
    for j in &r.outcome.rejected {
        problems.push_str(&format!("job {}: refused: {}\n", j.id, j.reason));
    }
    for j in &r.outcome.never_started {
        problems.push_str(&format!("job {}: never started: {}\n", j.id, j.reason));
    }
    for note in &r.notes {
        problems.push_str(&format!("note: {note}\n"));
    }
    if recorded {
        for ((job, run), then, now) in &differences {
            problems.push_str(&format!(
                "job {job} (run {}): allotd: {}; the replay: {}\n",
                run + 1,
                shown(*then),
                shown(*now)
            ));
        }
    }
    write("problems.txt", problems.clone())?;
    for line in problems.lines().take(5) {
        eprintln!("{line}");
    }
    println!(
        "{}: {} runs ended, {} still running, {} rejected, {} never started; utilization {:.1}%, mean wait {:.0} s; {:.2} s wall",
        h.path.display(),
        r.outcome.records.len(),
        r.running.len(),
        r.outcome.rejected.len(),
        r.outcome.never_started.len(),
        summary["utilization"].as_f64().unwrap_or(0.0) * 100.0,
        summary["mean_wait"].as_f64().unwrap_or(0.0),
        wall.elapsed().as_secs_f64(),
    );
    if recorded {
        let same = r.made_again();
        println!(
            "under the configuration it recorded: {same} of {} starts allotd decided made again, at the same time on the same hosts{}",
            r.recorded.len(),
            if differences.is_empty() {
                String::new()
            } else {
                format!("; {} differ (problems.txt)", differences.len())
            },
        );
    }
    println!("output: {}/ (jobs.csv, summary.json, problems.txt, utilization.svg, shares.svg)", out_dir.display());
    let code = if recorded && !differences.is_empty() { ExitCode::from(3) } else { ExitCode::SUCCESS };
    // Let go with the process: freeing a year's jobs one by one takes
    // longer than writing the outputs (RICC: 1.5 s).
    drop(differences);
    drop(all);
    std::mem::forget((r, engine, h));
    Ok(code)
}

/// `allot whatif --from STATE_DIR --config DIR [--json] [--plot FILE]`.
pub fn whatif(from: &Path, config: &Path, json: bool, plot: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let h = read(from)?;
    let new = under(Some(config))?;
    // The two replays are independent: run side by side.
    let (before, after) = std::thread::scope(|s| {
        let before = s.spawn(|| run(&h, None));
        let after = run(&h, new);
        (before.join().map_err(|_| anyhow!("the replay under the recorded configuration failed")), after)
    });
    let (before, before_engine, before_name) = before??;
    let (after, after_engine, after_name) = after?;
    let w = allot_sim::whatif::compare((&before_name, &before, &before_engine), (&after_name, &after, &after_engine));
    let plot = plot.unwrap_or_else(|| PathBuf::from("whatif.svg"));
    allot_sim::whatif::plot(&w, &plot)?;
    // Through `emit`: a closed pipe (`| head`) ends it quietly.
    if json {
        crate::lsf::emit(&(serde_json::to_string_pretty(&w)? + "\n"))?;
    } else {
        crate::lsf::emit(&format!("{}\nplot: {}\n", allot_sim::whatif::table(&w), plot.display()))?;
    }
    // Let go with the process (see `sim_from`).
    drop(w);
    std::mem::forget((before, before_engine, after, after_engine, h));
    Ok(ExitCode::SUCCESS)
}
