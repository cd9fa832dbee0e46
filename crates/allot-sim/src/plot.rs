//! Plots a person would rather look at than read, as SVG: utilization over
//! time, and each top-level account's used versus entitled share.
//!
//! Both come from the job records: time is cut into buckets and each job
//! adds its slot-seconds to the buckets it ran in, exactly.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::path::Path;

use allot_engine::shares::FairshareSet;
use plotters::prelude::*;

use crate::sim::JobRecord;

/// Buckets across the run.
pub const BUCKETS: usize = 400;
/// Accounts drawn one by one; the rest are summed as `others`.
pub const TOP_ACCOUNTS: usize = 8;

#[derive(Debug, thiserror::Error)]
#[error("cannot draw {path}: {message}")]
pub struct PlotError {
    path: String,
    message: String,
}

/// Slot-seconds per bucket of `[t0, t0 + width * BUCKETS)` of `records`.
fn bucketed<R: Borrow<JobRecord>>(records: &[R], t0: u64, width: f64) -> Vec<f64> {
    let mut out = vec![0.0; BUCKETS];
    for r in records.iter().map(R::borrow) {
        add_to_buckets(&mut out, r, t0, width);
    }
    out
}

/// Adds `r`'s slot-seconds to the buckets of `out` it ran in.
fn add_to_buckets(out: &mut [f64], r: &JobRecord, t0: u64, width: f64) {
    let (s, e) = ((r.start - t0) as f64, (r.end - t0) as f64);
    let first = ((s / width) as usize).min(BUCKETS - 1);
    let last = ((e / width) as usize).min(BUCKETS - 1);
    for (b, slot) in out.iter_mut().enumerate().take(last + 1).skip(first) {
        let lo = s.max(b as f64 * width);
        let hi = e.min((b + 1) as f64 * width);
        if hi > lo {
            *slot += (hi - lo) * f64::from(r.slots);
        }
    }
}

/// The top-level account a user's usage counts for: the top node above
/// the user's first account in the first policy, else the user.
fn top_account(set: &FairshareSet, user: &str) -> String {
    for p in &set.policies {
        if let Some(&leaf) = p.tree.leaves(user).first() {
            if let Some(top) = p.tree.path(leaf).last() {
                return p.tree.name(top).to_string();
            }
        }
    }
    user.to_string()
}

fn err(path: &Path, e: impl std::fmt::Display) -> PlotError {
    PlotError::new(path, e)
}

impl PlotError {
    pub fn new(path: &Path, e: impl std::fmt::Display) -> PlotError {
        PlotError { path: path.display().to_string(), message: e.to_string() }
    }
}

/// Writes `utilization.svg` and `shares.svg` into `dir`.
pub fn write_plots<R: Borrow<JobRecord>>(
    dir: &Path,
    records: &[R],
    total_slots: u64,
    set: &FairshareSet,
) -> Result<(), PlotError> {
    if records.is_empty() || total_slots == 0 {
        return Ok(());
    }
    let t0 = records.iter().map(|r| r.borrow().submit).min().unwrap_or(0);
    let t1 = records.iter().map(|r| r.borrow().end).max().unwrap_or(t0 + 1).max(t0 + 1);
    let width = (t1 - t0) as f64 / BUCKETS as f64;
    let day = |b: usize| (b as f64 + 0.5) * width / 86_400.0;
    let days = (t1 - t0) as f64 / 86_400.0;

    let all = bucketed(records, t0, width);
    let path = dir.join("utilization.svg");
    let points: Vec<(f64, f64)> =
        all.iter().enumerate().map(|(b, ss)| (day(b), 100.0 * ss / (width * total_slots as f64))).collect();
    draw(&path, "Utilization", "% of job slots in use", days, 100.0, &[("in use".into(), points, None)])?;

    let mut usage: BTreeMap<String, f64> = BTreeMap::new();
    let mut account_of: BTreeMap<&str, String> = BTreeMap::new();
    for r in records.iter().map(R::borrow) {
        let a = account_of.entry(&r.user).or_insert_with(|| top_account(set, &r.user));
        *usage.entry(a.clone()).or_default() += f64::from(r.slots) * (r.end - r.start) as f64;
    }
    let mut ranked: Vec<(String, f64)> = usage.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let top: Vec<String> = ranked.iter().take(TOP_ACCOUNTS).map(|(a, _)| a.clone()).collect();
    let entitled = |account: &str| -> Option<f64> {
        set.policies
            .iter()
            .find_map(|p| p.tree.child(allot_engine::shares::NodeId::ROOT, account).map(|n| p.tree.entitlement(n)))
    };
    // Cumulative: each account's slot-seconds so far over everyone's, the
    // figure that should approach the entitlement.
    let cumulative = |v: &[f64]| -> Vec<f64> {
        v.iter()
            .scan(0.0, |acc, x| {
                *acc += x;
                Some(*acc)
            })
            .collect()
    };
    let all_so_far = cumulative(&all);
    let mut series = Vec::new();
    let mut y_max: f64 = 1.0;
    // Each top account's buckets, in one pass over the records.
    let top_of: BTreeMap<&str, usize> =
        account_of.iter().filter_map(|(&u, a)| Some((u, top.iter().position(|t| t == a)?))).collect();
    let mut by_top = vec![vec![0.0; BUCKETS]; top.len()];
    for r in records.iter().map(R::borrow) {
        if let Some(&i) = top_of.get(r.user.as_str()) {
            add_to_buckets(&mut by_top[i], r, t0, width);
        }
    }
    for (account, buckets) in top.iter().zip(&by_top) {
        let mine = cumulative(buckets);
        let points: Vec<(f64, f64)> = mine
            .iter()
            .zip(&all_so_far)
            .enumerate()
            .map(|(b, (m, a))| (day(b), if *a > 0.0 { 100.0 * m / a } else { 0.0 }))
            .collect();
        let level = entitled(account).map(|e| e * 100.0);
        y_max = points.iter().map(|p| p.1).chain(level).fold(y_max, f64::max);
        series.push((account.clone(), points, level));
    }
    let path = dir.join("shares.svg");
    let title = "Share of the machine used so far (solid) and entitled (dashed), top accounts";
    draw(&path, title, "% of slot-seconds used so far", days, (y_max * 1.1).min(100.0), &series)
}

type Series = (String, Vec<(f64, f64)>, Option<f64>);

fn draw(path: &Path, title: &str, y_desc: &str, x_max: f64, y_max: f64, series: &[Series]) -> Result<(), PlotError> {
    let root = SVGBackend::new(path, (960, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0f64..x_max.max(1e-9), 0f64..y_max)
        .map_err(|e| err(path, e))?;
    chart.configure_mesh().x_desc("days from the first submission").y_desc(y_desc).draw().map_err(|e| err(path, e))?;
    for (i, (name, points, entitled)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))
            .map_err(|e| err(path, e))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        if let Some(level) = entitled {
            // Dashed: short segments along the entitlement.
            let dashes = (0..60).map(|k| {
                let a = x_max * k as f64 / 60.0;
                PathElement::new(vec![(a, *level), (a + x_max / 120.0, *level)], color.stroke_width(1))
            });
            chart.draw_series(dashes).map_err(|e| err(path, e))?;
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(path, e))?;
    root.present().map_err(|e| err(path, e))
}
