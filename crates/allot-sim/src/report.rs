//! What a simulation writes: `jobs.csv`, `summary.json`, share tables.

use std::borrow::Borrow;
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
/// job (an element of a job array is `id[index]`, as LSF names it); `priority` is the multifactor priority the job started with
/// (empty under LSF's policies). Numbers are written without `write!`: a
/// row per job, and the replay is waiting for the file.
pub fn jobs_csv<R: Borrow<JobRecord>>(records: &[R]) -> String {
    let mut out = String::from("id,user,queue,submit,start,end,slots,hosts,exit,priority\n");
    out.reserve(records.iter().map(R::borrow).map(|r| 48 + r.user.len() + r.queue.len() + r.hosts.len()).sum());
    for r in records.iter().map(R::borrow) {
        push_decimal(&mut out, r.id);
        if r.index > 0 {
            out.push('[');
            push_decimal(&mut out, u64::from(r.index));
            out.push(']');
        }
        for field in [&r.user, &r.queue] {
            out.push(',');
            out.push_str(field);
        }
        for n in [r.submit, r.start, r.end, u64::from(r.slots)] {
            out.push(',');
            push_decimal(&mut out, n);
        }
        out.push(',');
        out.push_str(&r.hosts);
        out.push(',');
        if r.exit < 0 {
            out.push('-');
        }
        push_decimal(&mut out, u64::from(r.exit.unsigned_abs()));
        out.push(',');
        if let Some(p) = r.priority {
            let _ = write!(out, "{p:.3}");
        }
        out.push('\n');
    }
    out
}

/// Appends `n` in decimal, as `Display` writes it.
pub(crate) fn push_decimal(s: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut rest = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    s.extend(digits[i..].iter().map(|&d| char::from(d)));
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
/// `null` under FCFS), how far from it users got week by week
/// ([`share_error`]), and the dispatch passes that considered jobs
/// (`dispatch_passes`: instants at which nothing had changed since the
/// last pass do not count).
pub fn summary(policy: &str, w: &Workload, out: &Outcome, engine: &Engine) -> Value {
    summary_of(policy, w.jobs.first().map_or(0, |j| j.submit), w.skipped.len(), out, engine)
}

/// [`summary`] of a run whose jobs came from elsewhere (allotd's log):
/// the first submission's time and how many lines were skipped.
pub fn summary_of(policy: &str, first_submit: u64, skipped: usize, out: &Outcome, engine: &Engine) -> Value {
    let records = &out.records;
    let last_end = records.iter().map(|r| r.end).max().unwrap_or(first_submit);
    let makespan = last_end.saturating_sub(first_submit);
    // The time a job ran: suspended by preemption, its slots were another's.
    let slot_seconds = |r: &JobRecord| u64::from(r.slots) as f64 * (r.end - r.start).saturating_sub(r.suspended) as f64;
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
    let entitled_of = |u: &str| match &multifactor {
        Some(m) => m.get(u).copied(),
        None => entitled(engine.fairshare(), u),
    };
    let share_error = share_error(records, &entitled_of, SHARE_WINDOW);
    let users: BTreeMap<&str, Value> = users
        .into_iter()
        .map(|(u, (jobs, ss))| {
            let used_share = if used > 0.0 { ss / used } else { 0.0 };
            let entitled = entitled_of(u);
            (u, json!({"jobs": jobs, "slot_seconds": ss, "used_share": used_share, "entitled_share": entitled}))
        })
        .collect();
    // Why the jobs that never started wait, each reason with its count.
    let mut never_reasons: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for r in &out.never_started {
        *never_reasons.entry(r.reason.as_str()).or_default() += 1;
    }
    let (made, expired, standing) = engine.reservation_counts();
    let (reserved, unpredicted) = engine.reserved_slot_seconds();
    json!({
        "policy": policy,
        "jobs": records.len(),
        "rejected": out.rejected.len(),
        "skipped": skipped,
        "never_started": out.never_started.len(),
        "never_started_reasons": never_reasons,
        "makespan": makespan,
        "utilization": if capacity > 0.0 { used / capacity } else { 0.0 },
        "mean_wait": mean_wait,
        "p50_wait": percentile(&waits, 50.0),
        "p95_wait": percentile(&waits, 95.0),
        "mean_bounded_slowdown": bsld,
        "dispatch_passes": out.passes,
        "reservations": {
            "made": made,
            "expired": expired,
            "mean_standing": standing as f64 / out.passes.max(1) as f64,
            "reserved_share": if capacity > 0.0 { reserved / capacity } else { 0.0 },
            "unpredicted_share": if capacity > 0.0 { unpredicted / capacity } else { 0.0 },
        },
        "requeued": out.requeued,
        "preempted": out.preempted,
        "share_error": share_error,
        "users": users,
    })
}

/// Weighted max-min fair parts of `total`: `min(asked_i, λ × weight_i)`,
/// summing to `total` (or to all that was asked, when less). Users of
/// weight 0 get a part only when the others are capped.
fn water_fill(asked: &[f64], weight: &[f64], total: f64) -> Vec<f64> {
    let mut part = vec![0.0; asked.len()];
    let mut left = total.min(asked.iter().sum());
    // The uncapped, by the λ at which they would be capped; weight 0
    // shares, equally, what the others leave.
    let mut open: Vec<usize> = (0..asked.len()).filter(|&i| weight[i] > 0.0).collect();
    open.sort_by(|&a, &b| (asked[a] / weight[a]).total_cmp(&(asked[b] / weight[b])));
    let mut sum_w: f64 = open.iter().map(|&i| weight[i]).sum();
    for &i in &open {
        let share = left * weight[i] / sum_w;
        part[i] = share.min(asked[i]);
        left -= part[i];
        sum_w -= weight[i];
    }
    let mut rest: Vec<usize> = (0..asked.len()).filter(|&i| weight[i] <= 0.0).collect();
    rest.sort_by(|&a, &b| asked[a].total_cmp(&asked[b]));
    let mut n = rest.len();
    for &i in &rest {
        part[i] = (left / n as f64).min(asked[i]);
        left -= part[i];
        n -= 1;
    }
    part
}

/// The window [`share_error`] measures over in `summary.json`: a week.
pub const SHARE_WINDOW: u64 = 7 * 86_400;

/// How far the users who competed for the cluster got from their
/// entitlements, window by window. A user competes in a window when one
/// of their jobs waited in it (pending between its submission and its
/// start). The slot-seconds the competing users used in the window are
/// what there was to share; each user's fair part of it is their
/// entitlement's, capped by what they asked for (weighted max-min
/// fairness, by water-filling: `min(asked, λ × entitled)` with λ such
/// that the parts sum to what was used), where a user asked for what
/// they used plus their waiting jobs' slots × seconds waited in the
/// window. The window's distance is half the sum of `|used - fair|` over
/// what was used (0: each got their fair part; 1: none did).
/// `mean_distance` is the windows' average weighted by the slot-seconds
/// in them; a window where fewer than two users competed says nothing
/// and is left out. (Comparing used with entitled shares over a whole
/// trace, or without the caps, says little: most users ask for less than
/// their share most of the time.) `None` when a user who ran has no
/// entitlement (FCFS, or a user in no share tree): there is no fair part
/// to measure against.
pub fn share_error(records: &[JobRecord], entitled: &dyn Fn(&str) -> Option<f64>, window: u64) -> Option<Value> {
    let window = window.max(1);
    let mut ent: BTreeMap<&str, f64> = BTreeMap::new();
    for r in records {
        if !ent.contains_key(r.user.as_str()) {
            ent.insert(&r.user, entitled(&r.user)?);
        }
    }
    // Users by their rank in name order: (window, rank) keys sort as
    // (window, name) would, without comparing names at every step.
    let rank: BTreeMap<&str, usize> = ent.keys().enumerate().map(|(i, &u)| (u, i)).collect();
    let ent: Vec<f64> = ent.into_values().collect();
    // Slot-seconds per (window, user) between `from` and `to`.
    fn spread(m: &mut BTreeMap<(u64, usize), f64>, user: usize, slots: f64, from: u64, to: u64, window: u64) {
        let mut t = from;
        while t < to {
            let w = t / window;
            let end = ((w + 1) * window).min(to);
            *m.entry((w, user)).or_default() += slots * (end - t) as f64;
            t = end;
        }
    }
    // Used in each window; waited for (slots × seconds pending) in each.
    let mut used: BTreeMap<(u64, usize), f64> = BTreeMap::new();
    let mut waiting: BTreeMap<(u64, usize), f64> = BTreeMap::new();
    for r in records {
        let user = rank[r.user.as_str()];
        spread(&mut used, user, f64::from(r.slots), r.start, r.end, window);
        spread(&mut waiting, user, f64::from(r.slots), r.submit, r.start, window);
    }
    let (mut weighted, mut weight, mut windows) = (0.0, 0.0, 0u64);
    let mut it = waiting.iter().peekable();
    while let Some(&(&(w, _), _)) = it.peek() {
        let mut users = Vec::new();
        while let Some(&(&(at, u), &wait)) = it.peek() {
            if at != w {
                break;
            }
            users.push((u, wait));
            it.next();
        }
        let got: Vec<f64> = users.iter().map(|(u, _)| used.get(&(w, *u)).copied().unwrap_or(0.0)).collect();
        let asked: Vec<f64> = users.iter().zip(&got).map(|((_, wait), g)| g + wait).collect();
        let entitled: Vec<f64> = users.iter().map(|&(u, _)| ent[u]).collect();
        let total: f64 = got.iter().sum();
        if users.len() < 2 || total <= 0.0 {
            continue;
        }
        let fair = water_fill(&asked, &entitled, total);
        let d = got.iter().zip(&fair).map(|(g, f)| (g - f).abs()).sum::<f64>() / (2.0 * total);
        weighted += d * total;
        weight += total;
        windows += 1;
    }
    Some(json!({
        "window": window,
        "windows": windows,
        "mean_distance": if weight > 0.0 { weighted / weight } else { 0.0 },
    }))
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
    fn push_decimal_writes_what_display_does() {
        for n in [0, 7, 10, 99, 100, 1234, u64::from(u32::MAX), u64::MAX] {
            let mut s = String::from("node*");
            push_decimal(&mut s, n);
            assert_eq!(s, format!("node*{n}"));
        }
    }

    /// Each row as `write!` would format it: negative exits, priorities
    /// to three decimals, none empty.
    #[test]
    fn jobs_csv_rows_as_display_writes_them() {
        let row = |exit: i32, priority: Option<f64>| JobRecord {
            id: 12,
            index: 0,
            user: "alice".into(),
            queue: "normal".into(),
            submit: 5,
            start: 70,
            end: 4_000_000_000,
            slots: 32,
            hosts: "node01*16 node02*16".into(),
            priority,
            exit,
            suspended: 0,
        };
        let csv = jobs_csv(&[row(0, None), row(-1, Some(1234.56789)), row(137, Some(-0.5)), row(i32::MIN, None)]);
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("id,user,queue,submit,start,end,slots,hosts,exit,priority"));
        for (exit, p) in [(0, ""), (-1, "1234.568"), (137, "-0.500")] {
            let want = format!("12,alice,normal,5,70,4000000000,32,node01*16 node02*16,{exit},{p}");
            assert_eq!(lines.next(), Some(want.as_str()));
        }
        assert_eq!(
            lines.next(),
            Some(format!("12,alice,normal,5,70,4000000000,32,node01*16 node02*16,{},", i32::MIN).as_str())
        );
        assert_eq!(lines.next(), None);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=20).collect();
        assert_eq!((percentile(&v, 50.0), percentile(&v, 95.0)), (10, 19));
        assert_eq!(percentile(&[], 50.0), 0);
        assert_eq!(percentile(&[7], 95.0), 7);
    }

    /// By hand, windows of 100 s; alice is entitled to 0.75, bob 0.25,
    /// carol and dave 0.5.
    /// - Window 0: alice (waits 0-10, runs 10-110 on 1 slot: used 90,
    ///   asked 100) and bob (waits 0-20 for 2 slots: 40; runs 20-60: 80,
    ///   asked 120) compete; carol ran without waiting and does not. Of
    ///   the 170 used, alice's fair part is 0.75 × 170 = 127.5 capped to
    ///   her 100; bob's the 70 left. Distance (10 + 10) / 340, weight 170.
    /// - Window 1: only dave waited (150-190): left out.
    /// - Window 2: bob (waits 210-250: 40, runs 50 s: asked 90) and alice
    ///   (waits 220-230: 10, runs 30 s: asked 40) share 80: alice's part
    ///   60 capped to 40, bob's 40. Distance (10 + 10) / 160, weight 80.
    ///
    /// Mean: (20/340 × 170 + 20/160 × 80) / 250 = 20 / 250 = 0.08.
    #[test]
    fn share_error_by_hand() {
        let rec = |user: &str, submit, start, end, slots| JobRecord {
            id: 0,
            index: 0,
            user: user.into(),
            queue: "normal".into(),
            submit,
            start,
            end,
            slots,
            hosts: String::new(),
            priority: None,
            exit: 0,
            suspended: 0,
        };
        let records = [
            rec("alice", 0, 10, 110, 1),
            rec("bob", 0, 20, 60, 2),
            rec("carol", 0, 0, 100, 1),
            rec("dave", 150, 190, 200, 1),
            rec("bob", 210, 250, 300, 1),
            rec("alice", 220, 230, 260, 1),
        ];
        let ent = |u: &str| match u {
            "alice" => Some(0.75),
            "bob" => Some(0.25),
            _ => Some(0.5),
        };
        let e = share_error(&records, &ent, 100).expect("entitlements");
        assert_eq!(e["windows"], 2);
        let d = e["mean_distance"].as_f64().expect("a number");
        assert!((d - 0.08).abs() < 1e-12, "{d}");
        // Without entitlements (FCFS) there is nothing to measure.
        assert_eq!(share_error(&records, &|_| None, 100), None);
    }

    /// Water-filling by hand: 100 among two users of equal weight asking
    /// 10 and 100 and one of weight 0 asking 50: 50 each would be fair,
    /// the first takes only 10, the second the 90 left, the third none.
    /// Sharing 60 where the weighted ask only 30: the third gets the 30
    /// left.
    #[test]
    fn water_filling_caps_at_what_each_asked() {
        assert_eq!(water_fill(&[10.0, 100.0, 50.0], &[1.0, 1.0, 0.0], 100.0), [10.0, 90.0, 0.0]);
        assert_eq!(water_fill(&[10.0, 20.0, 50.0], &[1.0, 1.0, 0.0], 60.0), [10.0, 20.0, 30.0]);
        assert_eq!(water_fill(&[30.0, 30.0], &[3.0, 1.0], 40.0), [30.0, 10.0]);
    }
}
