//! What a simulation writes: `jobs.csv`, `summary.json`, share tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use allot_engine::shares::priority::PriorityInputs;
use allot_engine::shares::{FairshareSet, ShareTree};
use allot_engine::{Engine, Time};
use serde::Serialize;
use serde_json::{Value, json};

use crate::sim::{JobRecord, Outcome};
use crate::workload::Workload;

/// `id,user,queue,submit,start,end,slots,hosts,exit,priority`, one row per
/// job; `priority` is the multifactor priority the job started with
/// (empty under LSF's policies).
pub fn jobs_csv(records: &[JobRecord]) -> String {
    let mut out = String::from("id,user,queue,submit,start,end,slots,hosts,exit,priority\n");
    for r in records {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
            r.id,
            r.user,
            r.queue,
            r.submit,
            r.start,
            r.end,
            r.slots,
            r.hosts,
            r.exit,
            r.priority.map_or(String::new(), |p| format!("{p:.3}"))
        );
    }
    out
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The slowdown threshold of the bounded slowdown, seconds.
pub const SLOWDOWN_THRESHOLD: f64 = 10.0;

/// The summary of a run: jobs and refusals, makespan, utilization, waits
/// (mean, 50th and 95th percentile), mean bounded slowdown
/// `max(1, (wait + run) / max(run, 10 s))`, and per user jobs, slot-seconds
/// and the share of the cluster used versus entitled (the entitlement of
/// the user's account in the first fairshare policy that has one, or under
/// a multifactor policy the normalized shares of the user's associations;
/// `null` under FCFS).
pub fn summary(policy: &str, w: &Workload, out: &Outcome, engine: &Engine) -> Value {
    let records = &out.records;
    let first_submit = w.jobs.first().map_or(0, |j| j.submit);
    let last_end = records.iter().map(|r| r.end).max().unwrap_or(first_submit);
    let makespan = last_end.saturating_sub(first_submit);
    let slot_seconds = |r: &JobRecord| u64::from(r.slots) as f64 * (r.end - r.start) as f64;
    let used: f64 = records.iter().map(slot_seconds).sum();
    let capacity = engine.total_slots() as f64 * makespan as f64;
    let mut waits: Vec<u64> = records.iter().map(|r| r.start - r.submit).collect();
    waits.sort_unstable();
    let n = records.len().max(1) as f64;
    let mean_wait = waits.iter().sum::<u64>() as f64 / n;
    let bsld = records
        .iter()
        .map(|r| {
            let run = (r.end - r.start) as f64;
            (((r.start - r.submit) as f64 + run) / run.max(SLOWDOWN_THRESHOLD)).max(1.0)
        })
        .sum::<f64>()
        / n;
    let mut users: BTreeMap<&str, (u64, f64)> = BTreeMap::new();
    for r in records {
        let e = users.entry(&r.user).or_default();
        e.0 += 1;
        e.1 += slot_seconds(r);
    }
    let multifactor = engine.multifactor_entitlements();
    let users: BTreeMap<&str, Value> = users
        .into_iter()
        .map(|(u, (jobs, ss))| {
            let used_share = if used > 0.0 { ss / used } else { 0.0 };
            let entitled = match &multifactor {
                Some(m) => m.get(u).copied(),
                None => entitled(engine.fairshare(), u),
            };
            (u, json!({"jobs": jobs, "slot_seconds": ss, "used_share": used_share, "entitled_share": entitled}))
        })
        .collect();
    json!({
        "policy": policy,
        "jobs": records.len(),
        "rejected": out.rejected.len(),
        "skipped": w.skipped.len(),
        "never_started": out.never_started,
        "makespan": makespan,
        "utilization": if capacity > 0.0 { used / capacity } else { 0.0 },
        "mean_wait": mean_wait,
        "p50_wait": percentile(&waits, 50.0),
        "p95_wait": percentile(&waits, 95.0),
        "mean_bounded_slowdown": bsld,
        "dispatch_passes": out.passes,
        "requeued": out.requeued,
        "users": users,
    })
}

/// The user's entitlement in the first policy where they have an account.
pub fn entitled(set: &FairshareSet, user: &str) -> Option<f64> {
    set.policies.iter().find_map(|p| p.tree.leaves(user).first().map(|&leaf| p.tree.entitlement(leaf)))
}

#[derive(Serialize)]
struct JsonRow {
    name: String,
    shares: u32,
    priority: f64,
    started: u32,
    reserved: u32,
    cpu_time: f64,
    run_time: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    adjust: Option<f64>,
}

/// The share tables of `trees` at `t`, in the JSON form of `allot shares`:
/// a list of `{"policy", "path", "rows": [...]}`; rows carry `adjust` when
/// FAIRSHARE_ADJUSTMENT_FACTOR is not 0.
pub fn share_tables_json<'a>(
    trees: impl IntoIterator<Item = &'a ShareTree>,
    t: Time,
    inputs: &PriorityInputs<'_>,
) -> Value {
    let mut out = Vec::new();
    for tree in trees {
        let show_adjust = tree.factors().fairshare_adjustment_factor != 0.0;
        for table in tree.share_tables(t, inputs) {
            let rows: Vec<JsonRow> = table
                .rows
                .into_iter()
                .map(|r| JsonRow {
                    name: r.name,
                    shares: r.shares,
                    priority: r.priority,
                    started: r.started,
                    reserved: r.reserved,
                    cpu_time: r.cpu_time,
                    run_time: r.run_time,
                    adjust: show_adjust.then_some(r.adjust),
                })
                .collect();
            out.push(json!({"policy": tree.policy(), "path": table.path, "rows": rows}));
        }
    }
    Value::Array(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=20).collect();
        assert_eq!((percentile(&v, 50.0), percentile(&v, 95.0)), (10, 19));
        assert_eq!(percentile(&[], 50.0), 0);
        assert_eq!(percentile(&[7], 95.0), 7);
    }
}
