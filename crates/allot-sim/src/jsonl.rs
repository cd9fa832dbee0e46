//! allot's own workload format: JSON lines, one job per line, with
//! `submit` (seconds), `user`, `runtime` (seconds it really runs), optional
//! `cpu_time`, what the job reports while it runs, `mem` (MB in all) and
//! `gpus`, and at its end, `energy` (joules), and `bsub`, the options as a
//! user types them after `bsub` (`"-n 4,8 -q short -W 30 -G groupB"`).
//!
//! A line with `at` is a user's command on a job of the workload instead:
//! `{"at": 300, "job": 12, "bswitch": "night"}`, `{"at": 300, "job": 12,
//! "index": 3, "bresize": "release -c 1*hostA hostB"}` or `"bresize":
//! "cancel"`; `job` is the job's line, `index` an element of its array.

use serde::Deserialize;

use crate::workload::{Action, ActionKind, Skipped, Workload, WorkloadJob};

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

/// A user's command on a job.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionLine {
    at: u64,
    job: u64,
    #[serde(default)]
    index: u32,
    #[serde(default)]
    bswitch: Option<String>,
    #[serde(default)]
    bresize: Option<String>,
}

/// A line's JSON as `T`; the error names the column.
fn parse<'a, T: Deserialize<'a>>(raw: &'a str) -> Result<T, String> {
    serde_json::from_str(raw).map_err(|e| {
        // serde_json says where within the line; the line is ours.
        let message = e.to_string();
        let message = message.rsplit_once(" at line ").map_or(message.as_str(), |m| m.0);
        format!("column {}: {message}", e.column())
    })
}

/// An action line as the simulator takes it: one command, `bswitch` or
/// `bresize` with what `bresize` takes after its name but the job.
fn action(line: u64, a: ActionLine) -> Result<Action, String> {
    let what = match (a.bswitch, a.bresize) {
        (Some(queue), None) if !queue.trim().is_empty() && !queue.contains(char::is_whitespace) => {
            ActionKind::Switch(queue)
        }
        (Some(queue), None) => return Err(format!("bswitch: `{queue}`: expected one queue's name")),
        (None, Some(r)) => match r.split_once(char::is_whitespace).unwrap_or((r.as_str(), "")) {
            ("cancel", "") => ActionKind::ResizeCancel,
            ("release", rest) => {
                let rest = rest.trim_start();
                let (cancel, hosts) = match rest.strip_prefix("-c") {
                    Some(h) if h.is_empty() || h.starts_with(char::is_whitespace) => (true, h),
                    _ => (false, rest),
                };
                let hosts = allot_config::resize::release_hosts(hosts).map_err(|e| format!("bresize release: {e}"))?;
                ActionKind::Release { hosts, cancel }
            }
            _ => return Err(format!("bresize: `{r}`: expected `release [-c] \"1*hostA hostB\"` or `cancel`")),
        },
        _ => return Err("an action (a line with `at`) is one of `bswitch` and `bresize`".into()),
    };
    Ok(Action { line, at: a.at, job: a.job, index: a.index, what })
}

pub fn read(text: &str) -> Workload {
    let mut w = Workload::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i as u64 + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let keys = || serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(raw);
        if raw.contains("\"at\"") && keys().is_ok_and(|m| m.contains_key("at")) {
            match parse::<ActionLine>(raw).and_then(|a| action(line, a)) {
                Ok(a) => w.actions.push(a),
                Err(reason) => w.skipped.push(Skipped { line, reason }),
            }
            continue;
        }
        let parsed: Line = match parse(raw) {
            Ok(l) => l,
            Err(reason) => {
                w.skipped.push(Skipped { line, reason });
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
                    submission: Box::new(allot_config::submission::from_bsub(parsed.user, opts)),
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
    // An action names a job of this workload by its line.
    let lines: std::collections::BTreeSet<u64> = w.jobs.iter().map(|j| j.line).collect();
    let (actions, stray): (Vec<Action>, Vec<Action>) = w.actions.drain(..).partition(|a| lines.contains(&a.job));
    w.skipped.extend(stray.into_iter().map(|a| Skipped {
        line: a.line,
        reason: format!("job {}: no job of this workload is on line {}", a.job, a.job),
    }));
    w.skipped.sort_by_key(|s| s.line);
    w.actions = actions;
    w.actions.sort_by_key(|a| (a.at, a.line));
    w
}
