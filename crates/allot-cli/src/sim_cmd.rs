//! `allot sim`: replay a workload and write what happened.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use allot_engine::Engine;
use allot_sim::input::{ReadOptions, read_workload};
use allot_sim::machine::{Policy, default_engine};
use allot_sim::report;
use allot_sim::sim::{self, SimOptions};
use anyhow::{Context, anyhow, bail};

pub struct SimArgs {
    pub workload: PathBuf,
    pub config: Option<PathBuf>,
    pub policy: Option<Policy>,
    pub out: Option<PathBuf>,
    pub report_at: Vec<u64>,
    /// `--explain JOB`: the workload job to explain at each report time.
    pub explain: Option<String>,
    pub kill_at_limit: bool,
    pub backfill: bool,
    pub reserve: bool,
    /// `--time-reserve N`: LSB_TIME_RESERVE_NUMJOBS.
    pub time_reserve: Option<u32>,
    /// `--max-reserve-time CYCLES`: MAX_RESERVE_TIME of the reservation
    /// `--backfill` and `--reserve` make ([`NEVER`] for `never`).
    pub max_reserve_time: Option<u32>,
    /// `--plan PLAN`: ALLOCATION_PLANNER with the queue's PLAN.
    pub plan: Option<String>,
    pub swf_queues: allot_sim::swf::QueueField,
}

/// `--max-reserve-time never`: so many MBD_SLEEP_TIME cycles that no
/// reservation made in any workload expires (over 8,000 years at the
/// default 60 s): held until its job starts, as EASY backfill holds the
/// first waiting job's.
pub const NEVER: u32 = u32::MAX;

/// `--max-reserve-time`'s value: cycles (at least 1), or `never`.
pub fn reserve_cycles(text: &str) -> Result<u32, String> {
    match text {
        "never" => Ok(NEVER),
        _ => match text.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(format!("`{text}` is neither a number of cycles (1 or more) nor `never`")),
        },
    }
}

/// `<workload name>.sim`, or `.sim-2`, `.sim-3`, ... when taken.
fn default_out(workload: &Path) -> PathBuf {
    let name = workload.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "workload".into());
    unused(&format!("{}.sim", name.trim_end_matches(".gz").trim_end_matches(".swf").trim_end_matches(".jsonl")))
}

/// Writes `text` as `name` in `dir`, saying which file it could not.
pub(crate) fn write_out(dir: &Path, name: &str, text: String) -> anyhow::Result<()> {
    let path = dir.join(name);
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// `jobs.csv` and the plots of `records` in `dir`, each on a thread of
/// its own, while `rest` (the summary, ...) runs on this one: the
/// outputs are independent, so they are written side by side.
pub(crate) fn with_job_outputs<T, R: std::borrow::Borrow<allot_sim::sim::JobRecord> + Sync>(
    dir: &Path,
    records: &[R],
    engine: &Engine,
    rest: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    std::thread::scope(|s| {
        let csv = s.spawn(|| write_out(dir, "jobs.csv", report::jobs_csv(records)));
        let plots = s.spawn(|| allot_sim::plot::write_plots(dir, records, engine.total_slots(), engine.fairshare()));
        let rest = rest();
        csv.join().map_err(|_| anyhow!("writing jobs.csv failed"))??;
        plots.join().map_err(|_| anyhow!("writing the plots failed"))??;
        rest
    })
}

/// `name`, or `name-2`, `name-3`, ... when taken: an output directory
/// that overwrites nothing.
pub(crate) fn unused(name: &str) -> PathBuf {
    let mut candidate = PathBuf::from(name);
    let mut n = 2;
    while candidate.exists() {
        candidate = PathBuf::from(format!("{name}-{n}"));
        n += 1;
    }
    candidate
}

/// The default queue's reservation and backfill as the options ask, and
/// the run's name for it.
fn reservation(config: &mut allot_engine::EngineConfig, args: &SimArgs, policy: &str) -> anyhow::Result<String> {
    use allot_sim::machine;
    let with = if args.backfill { " and backfill" } else { "" };
    if let Some(text) = &args.plan {
        let value = allot_config::lsf::values::parse_all(allot_config::lsf::values::plan, text)
            .map_err(|e| anyhow!("--plan: {}", e.message))?;
        machine::plan(config, allot_config::plan::planner_queue(value), args.backfill);
        return Ok(format!("{policy} with planned reservation (PLAN = {}){with}", text.trim()));
    }
    if args.time_reserve.is_some() && !(args.backfill || args.reserve) {
        bail!("--time-reserve: plans slot reservation: give --backfill or --reserve");
    }
    if args.max_reserve_time.is_some() && !(args.backfill || args.reserve) {
        bail!("--max-reserve-time: times slot reservation: give --backfill or --reserve");
    }
    if args.backfill || args.reserve {
        let cycles = args.max_reserve_time.unwrap_or(machine::BACKFILL_RESERVE_CYCLES);
        machine::reserve(config, args.backfill, cycles);
    }
    if let Some(n) = args.time_reserve {
        machine::time_reserve(config, n);
    }
    let time = match args.max_reserve_time {
        Some(NEVER) => " held until its job starts".to_string(),
        Some(n) => format!(" (MAX_RESERVE_TIME[{n}])"),
        None => String::new(),
    };
    Ok(match (args.backfill || args.reserve, args.time_reserve) {
        (true, Some(n)) => format!("{policy} with time-based slot reservation ({n} jobs){time}{with}"),
        (true, None) => format!("{policy} with slot reservation{time}{with}"),
        (false, _) => policy.into(),
    })
}

pub fn run(args: SimArgs) -> anyhow::Result<ExitCode> {
    let wall = Instant::now();
    if args.config.is_none() && allot_sim::input::is_json_lines(&args.workload) {
        bail!("{}: a JSON-lines workload names no machine: give --config DIR", args.workload.display());
    }
    let workload = read_workload(&args.workload, &ReadOptions { swf_queues: args.swf_queues })?;
    let (engine_config, policy_name) = match (&args.config, args.policy) {
        (Some(_), Some(_)) => bail!("--policy: applies only without --config (the configuration sets the policy)"),
        (Some(_), None)
            if args.backfill
                || args.reserve
                || args.time_reserve.is_some()
                || args.max_reserve_time.is_some()
                || args.plan.is_some() =>
        {
            let option = match (args.backfill, args.reserve, args.time_reserve, args.max_reserve_time) {
                (true, ..) => "--backfill",
                (_, true, ..) => "--reserve",
                (_, _, Some(_), _) => "--time-reserve",
                (.., Some(_)) => "--max-reserve-time",
                _ => "--plan",
            };
            bail!(
                "{option}: applies only without --config (set BACKFILL, SLOT_RESERVE and PLAN in lsb.queues, \
                 ALLOCATION_PLANNER in lsb.params, LSB_TIME_RESERVE_NUMJOBS in lsf.conf)"
            )
        }
        (Some(dir), None) => match allot_config::load_dir(dir) {
            Ok((config, warnings)) => {
                eprint!("{warnings}");
                let name = match config.multifactor_policy() {
                    Some(p) => p.name(),
                    None if config.fairshare_policies().is_empty() => "fcfs",
                    None => "fairshare",
                };
                let users = workload.users().into_iter().map(str::to_string).collect();
                (config.engine_config_for(users), format!("{name} ({})", dir.display()))
            }
            Err(diags) => return Err(anyhow!("{}: invalid configuration:\n{diags}", dir.display())),
        },
        (None, policy) => {
            workload.machine.check().map_err(|(line, e)| anyhow!("{}:{line}: {e}", args.workload.display()))?;
            let policy = policy.unwrap_or(Policy::Fairshare);
            let mut config = default_engine(&workload, policy);
            let name = reservation(&mut config, &args, policy.name())?;
            (config, name)
        }
    };
    let mut engine = Engine::new(engine_config);
    let out_dir = args.out.clone().unwrap_or_else(|| default_out(&args.workload));
    std::fs::create_dir_all(&out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;

    let bar = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(workload.jobs.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} jobs submitted ({elapsed})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(bar)
    } else {
        None
    };
    let mut progress = |n: u64| {
        if let Some(b) = &bar {
            if n % 1024 == 0 {
                b.set_position(n);
            }
        }
    };
    let report_tables = |e: &Engine, t| {
        let adjustment = e.adjustment();
        let inputs = adjustment.inputs();
        report::share_tables_json(e.fairshare().policies.iter().map(|p| &p.tree), t, &inputs)
    };
    let explain = match &args.explain {
        Some(word) => match crate::lsf::job_refs("--explain", word)?[..] {
            [job] => Some((job.id, job.index)),
            _ => bail!("--explain {word}: one job, as `12` or `12[3]`"),
        },
        None => None,
    };
    let opts = SimOptions {
        kill_at_limit: args.kill_at_limit,
        report_at: args.report_at.clone(),
        explain,
        ..SimOptions::default()
    };
    let outcome = sim::run(&mut engine, &workload, &opts, &report_tables, &mut progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }

    let write = |name: &str, text: String| write_out(&out_dir, name, text);
    let summary = with_job_outputs(&out_dir, &outcome.records, &engine, || {
        let summary = report::summary(&policy_name, &workload, &outcome, &engine);
        write("summary.json", serde_json::to_string_pretty(&summary)? + "\n")?;
        Ok(summary)
    })?;
    for (t, tables) in &outcome.reports {
        write(&format!("shares-{t}.json"), serde_json::to_string_pretty(tables)? + "\n")?;
    }
    // Why the job asked about waits at each report time (the simulated
    // clock's seconds).
    let job = args.explain.as_deref().unwrap_or_default();
    for (t, x) in &outcome.explained {
        let (text, json) = match x {
            Some(x) => (x.render(&|s| format!("{s} s")), serde_json::to_string_pretty(x)? + "\n"),
            None => {
                (format!("job {job} is not pending at {t} s (not submitted yet, running or ended)\n"), "null\n".into())
            }
        };
        write(&format!("explain-{job}-{t}.txt"), text)?;
        write(&format!("explain-{job}-{t}.json"), json)?;
    }
    // Every skipped or rejected line (a job, or a command refused), in line
    // order, in problems.txt; the
    // first few on stderr too.
    let mut problems: Vec<(u64, &str, &str)> = workload
        .skipped
        .iter()
        .map(|s| (s.line, "skipped", s.reason.as_str()))
        .chain(outcome.rejected.iter().map(|r| (r.line, "rejected", r.reason.as_str())))
        .chain(outcome.never_started.iter().map(|r| (r.line, "never started", r.reason.as_str())))
        .chain(outcome.refused_actions.iter().map(|r| (r.line, "command refused", r.reason.as_str())))
        .collect();
    problems.sort_by_key(|p| p.0);
    let listed: String = problems
        .iter()
        .map(|(line, what, why)| format!("{}:{line}: {what}: {why}\n", args.workload.display()))
        .collect();
    write("problems.txt", listed.clone())?;
    for l in listed.lines().take(5) {
        eprintln!("{l}");
    }
    if problems.len() > 5 {
        eprintln!("... and {} more, all in problems.txt", problems.len() - 5);
    }
    // Jobs that never started are said when there are any (why each
    // waits is in problems.txt).
    let never = match outcome.never_started.len() {
        0 => String::new(),
        n => format!(", {n} never started"),
    };
    println!(
        "{}: {} jobs ran, {} skipped, {} rejected{never}; utilization {:.1}%, mean wait {:.0} s, makespan {} s; {:.2} s wall",
        args.workload.display(),
        summary["jobs"],
        summary["skipped"],
        summary["rejected"],
        summary["utilization"].as_f64().unwrap_or(0.0) * 100.0,
        summary["mean_wait"].as_f64().unwrap_or(0.0),
        summary["makespan"],
        wall.elapsed().as_secs_f64(),
    );
    println!("output: {}/ (jobs.csv, summary.json, utilization.svg, shares.svg)", out_dir.display());
    // The process ends here: the OS takes the memory back faster than a
    // walk that frees every record, job and name.
    std::mem::forget((outcome, workload, engine));
    Ok(ExitCode::SUCCESS)
}
