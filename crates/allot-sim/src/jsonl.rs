//! allot's own workload format: JSON lines, one job per line, with
//! `submit` (seconds), `user`, `runtime` (seconds it really runs), optional
//! `cpu_time`, what the job reports while it runs, `mem` (MB in all) and
//! `gpus`, and at its end, `energy` (joules), and `bsub`, the options as a
//! user types them after `bsub` (`"-n 4,8 -q short -W 30 -G groupB"`).

use serde::Deserialize;

use crate::workload::{Skipped, Workload, WorkloadJob};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    submit: u64,
    user: String,
    runtime: u64,
    #[serde(default)]
    cpu_time: f64,
    #[serde(default)]
    mem: f64,
    #[serde(default)]
    gpus: u32,
    #[serde(default)]
    energy: f64,
    #[serde(default)]
    bsub: String,
}

pub fn read(text: &str) -> Workload {
    let mut w = Workload::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i as u64 + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let parsed: Line = match serde_json::from_str(raw) {
            Ok(l) => l,
            Err(e) => {
                // serde_json says where within the line; the line is ours.
                let message = e.to_string();
                let message = message.rsplit_once(" at line ").map_or(message.as_str(), |m| m.0);
                w.skipped.push(Skipped { line, reason: format!("column {}: {message}", e.column()) });
                continue;
            }
        };
        match allot_config::bsub::parse_line(&parsed.bsub) {
            // A workload's times are its own clock's: a wall-clock deadline
            // means nothing there.
            // Nor a hold nobody will release.
            Ok(opts)
                if opts.term_time.is_some() || opts.cpu_limit.is_some() || opts.hold || opts.begin_time.is_some() =>
            {
                let opt = if opts.term_time.is_some() {
                    "-t"
                } else if opts.hold {
                    "-H"
                } else if opts.begin_time.is_some() {
                    "-b"
                } else {
                    "-c"
                };
                w.skipped.push(Skipped { line, reason: format!("bsub: {opt}: not supported in a workload") });
            }
            Ok(opts) => {
                let job = WorkloadJob {
                    id: line,
                    line,
                    submit: parsed.submit,
                    submission: allot_config::submission::from_bsub(parsed.user, opts),
                    group: None,
                    runtime: parsed.runtime,
                    cpu_time: parsed.cpu_time,
                    memory_mb: (parsed.mem > 0.0).then_some(parsed.mem),
                    gpus: parsed.gpus,
                    energy: parsed.energy,
                    exit: 0,
                };
                match job.out_of_range() {
                    None => w.jobs.push(job),
                    Some(reason) => w.skipped.push(Skipped { line, reason }),
                }
            }
            Err(e) => w.skipped.push(Skipped { line, reason: format!("bsub: {e}") }),
        }
    }
    w.jobs.sort_by_key(|j| (j.submit, j.line));
    w
}
