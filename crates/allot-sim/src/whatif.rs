//! What-if: a site's own history replayed under the configuration it ran
//! with and under another, side by side (`allot whatif`): per user and
//! per queue the mean and 95th percentile wait and the mean bounded
//! slowdown before and after, utilization, share error, and the jobs
//! whose wait moved most.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use allot_engine::Engine;
use plotters::prelude::*;
use serde::Serialize;

use crate::plot::PlotError;
use crate::replay::Replayed;
use crate::report::SLOWDOWN_THRESHOLD;

/// Wait and slowdown of a set of jobs. A job that never started counts as
/// waiting until the end of the history (its wait is at least that).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Figures {
    pub jobs: u64,
    pub never_started: u64,
    pub mean_wait: f64,
    pub p95_wait: u64,
    pub mean_bounded_slowdown: f64,
}

/// One side of the comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    pub config: String,
    pub all: Figures,
    pub utilization: f64,
    /// `summary.json`'s `share_error.mean_distance` (none under FCFS).
    pub share_error: Option<f64>,
    pub users: BTreeMap<String, Figures>,
    pub queues: BTreeMap<String, Figures>,
    /// The history's submissions this configuration refused, and why,
    /// most common first (at most [`REASONS_SHOWN`]): its figures count
    /// only the rest, which a reader must know first.
    pub rejected: u64,
    pub rejected_why: Vec<(String, u64)>,
}

/// How many reasons for refusals a side names.
const REASONS_SHOWN: usize = 3;

/// A job whose wait changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Move {
    /// `12`, or `12[3]` for an array's element.
    pub job: String,
    pub user: String,
    pub queue: String,
    /// Seconds; `None`: it never started (before the history's end).
    pub wait_before: Option<u64>,
    pub wait_after: Option<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct WhatIf {
    pub before: Side,
    pub after: Side,
    /// The jobs whose wait moved most, most first.
    pub moved: Vec<Move>,
}

/// How many jobs `moved` lists.
pub const MOST_MOVED: usize = 10;

/// A job's first run: its wait `None` when it never started.
#[derive(Clone, Debug, PartialEq)]
struct FirstRun {
    user: String,
    queue: String,
    submit: u64,
    wait: Option<u64>,
    run: u64,
}

/// Each job's first run, keyed by (job, index).
type FirstRuns = BTreeMap<(u64, u32), FirstRun>;

fn first_runs(r: &Replayed) -> FirstRuns {
    let mut out = FirstRuns::new();
    for j in r.outcome.records.iter().chain(&r.running) {
        let entry = FirstRun {
            user: j.user.clone(),
            queue: j.queue.clone(),
            submit: j.submit,
            wait: Some(j.start - j.submit),
            run: j.end - j.start,
        };
        out.entry((j.id, j.index))
            .and_modify(|e| {
                if e.wait > entry.wait {
                    *e = entry.clone();
                }
            })
            .or_insert(entry);
    }
    for w in &r.waiting {
        let first = FirstRun { user: w.user.clone(), queue: w.queue.clone(), submit: w.submit, wait: None, run: 0 };
        out.insert((w.id, w.index), first);
    }
    out
}

fn figures<'a>(jobs: impl Iterator<Item = &'a FirstRun>, horizon: u64) -> Figures {
    let mut waits = Vec::new();
    let mut slowdown = 0.0;
    let mut never = 0;
    for j in jobs {
        let wait = j.wait.unwrap_or_else(|| {
            never += 1;
            horizon.saturating_sub(j.submit)
        });
        waits.push(wait);
        let run = j.run as f64;
        slowdown += ((wait as f64 + run) / run.max(SLOWDOWN_THRESHOLD)).max(1.0);
    }
    waits.sort_unstable();
    let n = waits.len();
    Figures {
        jobs: n as u64,
        never_started: never,
        mean_wait: if n > 0 { waits.iter().sum::<u64>() as f64 / n as f64 } else { 0.0 },
        p95_wait: if n > 0 { waits[((0.95 * n as f64).ceil() as usize).clamp(1, n) - 1] } else { 0 },
        mean_bounded_slowdown: if n > 0 { slowdown / n as f64 } else { 0.0 },
    }
}

fn side(config: &str, r: &Replayed, engine: &Engine) -> Side {
    let runs = first_runs(r);
    let horizon = r.horizon;
    let group = |key: &dyn Fn(&FirstRun) -> &str| {
        let mut by: BTreeMap<String, Vec<&FirstRun>> = BTreeMap::new();
        for j in runs.values() {
            by.entry(key(j).to_string()).or_default().push(j);
        }
        by.into_iter().map(|(k, v)| (k, figures(v.into_iter(), horizon))).collect()
    };
    let mut outcome = crate::sim::Outcome { records: r.outcome.records.clone(), ..Default::default() };
    outcome.records.extend(r.running.iter().cloned());
    let summary = crate::report::summary_of(config, r.first_submit, 0, &outcome, engine);
    let mut why: BTreeMap<&str, u64> = BTreeMap::new();
    for rejected in &r.outcome.rejected {
        *why.entry(rejected.reason.as_str()).or_default() += 1;
    }
    let mut why: Vec<(String, u64)> = why.into_iter().map(|(w, n)| (w.to_string(), n)).collect();
    why.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    why.truncate(REASONS_SHOWN);
    Side {
        config: config.to_string(),
        all: figures(runs.values(), horizon),
        utilization: summary["utilization"].as_f64().unwrap_or(0.0),
        share_error: summary["share_error"]["mean_distance"].as_f64(),
        users: group(&|j| &j.user),
        queues: group(&|j| &j.queue),
        rejected: r.outcome.rejected.len() as u64,
        rejected_why: why,
    }
}

/// Compares two replays of one history.
pub fn compare(before: (&str, &Replayed, &Engine), after: (&str, &Replayed, &Engine)) -> WhatIf {
    let (b, a) = (first_runs(before.1), first_runs(after.1));
    let horizon = before.1.horizon.max(after.1.horizon);
    let mut moved: Vec<(u64, Move)> = b
        .iter()
        .filter_map(|(key, jb)| {
            let ja = a.get(key)?;
            let (wb, wa) = (jb.wait, ja.wait);
            let shown = |w: Option<u64>, s: u64| w.unwrap_or(horizon.saturating_sub(s));
            let by = shown(wb, jb.submit).abs_diff(shown(wa, ja.submit));
            let job = if key.1 > 0 { format!("{}[{}]", key.0, key.1) } else { key.0.to_string() };
            let queue = if jb.queue == ja.queue { jb.queue.clone() } else { format!("{} -> {}", jb.queue, ja.queue) };
            (by > 0).then(|| (by, Move { job, user: jb.user.clone(), queue, wait_before: wb, wait_after: wa }))
        })
        .collect();
    moved.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.job.cmp(&y.1.job)));
    WhatIf {
        before: side(before.0, before.1, before.2),
        after: side(after.0, after.1, after.2),
        moved: moved.into_iter().take(MOST_MOVED).map(|(_, m)| m).collect(),
    }
}

fn wait(w: Option<u64>) -> String {
    w.map_or_else(|| "never".into(), |w| format!("{w} s"))
}

/// The comparison as a person reads it on a terminal.
pub fn table(w: &WhatIf) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "before: {}\nafter:  {}\n", w.before.config, w.after.config);
    for (name, s) in [("before", &w.before), ("after", &w.after)] {
        if s.rejected == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "{name}: {} of {} submissions refused by this configuration; the figures below count only the rest:",
            s.rejected,
            s.rejected + s.all.jobs
        );
        for (why, n) in &s.rejected_why {
            let _ = writeln!(out, "  {n} refused: {why}");
        }
        out.push('\n');
    }
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    let err = |x: Option<f64>| x.map_or_else(|| "-".into(), |x| format!("{x:.3}"));
    let _ = writeln!(out, "{:<22} {:>14} {:>14}", "", "before", "after");
    let _ = writeln!(out, "{:<22} {:>14} {:>14}", "utilization", pct(w.before.utilization), pct(w.after.utilization));
    let _ = writeln!(out, "{:<22} {:>14} {:>14}", "share error", err(w.before.share_error), err(w.after.share_error));
    let rows =
        |out: &mut String, title: &str, before: &BTreeMap<String, Figures>, after: &BTreeMap<String, Figures>| {
            let _ = writeln!(
                out,
                "\n{title:<14} {:>6} {:>21} {:>21} {:>15}\n{:<14} {:>6} {:>10} {:>10} {:>10} {:>10} {:>7} {:>7}",
                "JOBS",
                "MEAN WAIT (s)",
                "P95 WAIT (s)",
                "SLOWDOWN",
                "",
                "",
                "before",
                "after",
                "before",
                "after",
                "before",
                "after"
            );
            let keys: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
            // A side with no job of that user or queue shows `-`.
            let shown = |x: Option<&Figures>, v: &dyn Fn(&Figures) -> String| x.map_or_else(|| "-".to_string(), v);
            let wait = |f: &Figures| format!("{:.0}", f.mean_wait);
            let p95 = |f: &Figures| f.p95_wait.to_string();
            let slowdown = |f: &Figures| format!("{:.2}", f.mean_bounded_slowdown);
            for k in keys {
                let (b, a) = (before.get(k), after.get(k));
                let _ = writeln!(
                    out,
                    "{k:<14} {:>6} {:>10} {:>10} {:>10} {:>10} {:>7} {:>7}",
                    b.map_or(0, |f| f.jobs).max(a.map_or(0, |f| f.jobs)),
                    shown(b, &wait),
                    shown(a, &wait),
                    shown(b, &p95),
                    shown(a, &p95),
                    shown(b, &slowdown),
                    shown(a, &slowdown)
                );
            }
        };
    let all = |s: &Side| BTreeMap::from([("(all)".to_string(), s.all.clone())]);
    rows(&mut out, "", &all(&w.before), &all(&w.after));
    rows(&mut out, "USER", &w.before.users, &w.after.users);
    rows(&mut out, "QUEUE", &w.before.queues, &w.after.queues);
    let never = |s: &Side| s.all.never_started;
    if never(&w.before) + never(&w.after) > 0 {
        let _ = writeln!(
            out,
            "\nnever started (counted as waiting until the history's end): {} before, {} after",
            never(&w.before),
            never(&w.after)
        );
    }
    if !w.moved.is_empty() {
        let _ = writeln!(
            out,
            "\nmoved most:\n{:<10} {:<10} {:<16} {:>10} {:>10}",
            "JOB", "USER", "QUEUE", "BEFORE", "AFTER"
        );
        for m in &w.moved {
            let _ = writeln!(
                out,
                "{:<10} {:<10} {:<16} {:>10} {:>10}",
                m.job,
                m.user,
                m.queue,
                wait(m.wait_before),
                wait(m.wait_after)
            );
        }
    }
    out
}

/// An SVG of each user's mean wait before and after, side by side.
pub fn plot(w: &WhatIf, path: &Path) -> Result<(), PlotError> {
    let users: Vec<&String> = w
        .before
        .users
        .keys()
        .chain(w.after.users.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mean = |s: &Side, u: &str| s.users.get(u).map_or(0.0, |f| f.mean_wait);
    let y_max = users.iter().flat_map(|u| [mean(&w.before, u), mean(&w.after, u)]).fold(1.0, f64::max) * 1.1;
    let root = SVGBackend::new(path, (960, 540)).into_drawing_area();
    let e = |e: &dyn std::fmt::Display| PlotError::new(path, e);
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let n = users.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption("Mean wait per user: before (left) and after (right)", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..n, 0f64..y_max)
        .map_err(|x| e(&x))?;
    chart.configure_mesh().disable_x_mesh().x_labels(0).y_desc("mean wait (s)").draw().map_err(|x| e(&x))?;
    // Each user's name over their two bars.
    let names = users.iter().enumerate().map(|(i, u)| {
        let top = mean(&w.before, u).max(mean(&w.after, u));
        Text::new(u.to_string(), (i as f64 + 0.1, top + y_max * 0.04), ("sans-serif", 14).into_font())
    });
    chart.draw_series(names).map_err(|x| e(&x))?;
    let colors = [Palette99::pick(0).to_rgba(), Palette99::pick(1).to_rgba()];
    for (k, (label, side)) in [("before", &w.before), ("after", &w.after)].into_iter().enumerate() {
        let color = colors[k];
        let bars = users.iter().enumerate().map(|(i, u)| {
            let x0 = i as f64 + 0.1 + 0.4 * k as f64;
            Rectangle::new([(x0, 0.0), (x0 + 0.4, mean(side, u))], color.filled())
        });
        chart
            .draw_series(bars)
            .map_err(|x| e(&x))?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw().map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(user: &str, submit: u64, wait: Option<u64>, run: u64) -> FirstRun {
        FirstRun { user: user.into(), queue: "normal".into(), submit, wait, run }
    }

    /// A configuration that refused the history's submissions says so
    /// first, with why, before figures that count only the rest.
    #[test]
    fn refusals_come_first_with_why() {
        let side = |rejected: u64, why: Vec<(String, u64)>| Side {
            config: "c".into(),
            all: Figures { jobs: 0, ..Figures::default() },
            utilization: 0.0,
            share_error: None,
            users: BTreeMap::new(),
            queues: BTreeMap::new(),
            rejected,
            rejected_why: why,
        };
        let w = WhatIf {
            before: side(0, Vec::new()),
            after: side(12, vec![("queue `short` does not exist".into(), 9), ("-n 64: too many".into(), 3)]),
            moved: Vec::new(),
        };
        let text = table(&w);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[3],
            "after: 12 of 12 submissions refused by this configuration; the figures below count only the rest:"
        );
        assert_eq!(lines[4..6], ["  9 refused: queue `short` does not exist", "  3 refused: -n 64: too many"]);
        assert!(lines[7].trim_start().starts_with("before"), "then the table: {text}");
    }

    /// Mean and nearest-rank 95th percentile of waits, bounded slowdown
    /// over 10 s, and a job that never started waiting until the end.
    #[test]
    fn figures_count_a_job_never_started_as_waiting_until_the_end() {
        let mut jobs: Vec<FirstRun> = (0..19).map(|k| run("a", 0, Some(k), 100)).collect();
        jobs.push(run("a", 500, None, 0));
        let f = figures(jobs.iter(), 1500);
        assert_eq!((f.jobs, f.never_started), (20, 1));
        assert_eq!(f.mean_wait, (171.0 + 1000.0) / 20.0);
        assert_eq!(f.p95_wait, 18, "the 19th of 20");
        // (wait + run) / max(run, 10): 1.00..1.18 for the 19, and 1000/10.
        let slowdown = ((0..19).map(|k| (k as f64 + 100.0) / 100.0).sum::<f64>() + 100.0) / 20.0;
        assert!((f.mean_bounded_slowdown - slowdown).abs() < 1e-12, "{}", f.mean_bounded_slowdown);
    }
}
