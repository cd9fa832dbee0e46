//! `allot sprio`: the multi-factor priority (spec 002) of the pending jobs
//! a usage file lists ([`allot_config::assoc_usage`]), as Slurm's
//! `sprio` shows it: each factor weighted (`sprio`'s default), highest
//! priority first, then job ID. `--json` gives, per job, `id`, `user`,
//! `account`, `priority`, and `factors` and `weighted` (each with
//! `wait_time`, `fair_share`, `qos`, `queue`, `job_size`, `user`).

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use allot_engine::multifactor::priority::{Factors, JobInputs, Maxima, QosRefusal, Weights, valid_user_factor};
use anyhow::{anyhow, bail};
use serde_json::json;

use crate::sshare_cmd::{Charged, charged};

/// One job's priority.
struct Row {
    id: u64,
    user: String,
    account: String,
    factors: Factors,
    priority: f64,
}

/// Offline (`Some((config, usage))`) or on the running allotd's state
/// (each pending job's priority at allotd's last pass); highest priority
/// first, then job ID.
pub fn run(offline: Option<(&Path, &Path)>, json: bool) -> anyhow::Result<ExitCode> {
    let (w, mut rows) = match offline {
        Some((config_dir, usage_file)) => {
            let c = charged(config_dir, usage_file, "sprio")?;
            (c.config.settings.priority.weights, priorities(&c)?)
        }
        None => live()?,
    };
    rows.sort_by(|a, b| b.priority.total_cmp(&a.priority).then(a.id.cmp(&b.id)));
    if json {
        let list: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({"id": r.id, "user": r.user, "account": r.account, "priority": r.priority,
                       "factors": r.factors, "weighted": r.factors.weighted(&w)})
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = format!(
        "{:>10} {:<10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "JOBID", "USER", "PRIORITY", "WAIT_TIME", "FAIRSHARE", "QOS", "QUEUE", "JOBSIZE", "USER_FACT"
    );
    for r in &rows {
        let f = r.factors.weighted(&w);
        let _ = writeln!(
            out,
            "{:>10} {:<10} {:>10.0} {:>10.0} {:>10.0} {:>10.0} {:>10.0} {:>10.0} {:>10.0}",
            r.id, r.user, r.priority, f.wait_time, f.fair_share, f.qos, f.queue, f.job_size, f.user
        );
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

/// The running allotd's pending jobs.
fn live() -> anyhow::Result<(Weights, Vec<Row>)> {
    // `call` turns allotd's refusal into the error.
    let allot_proto::Response::Priorities(l) = crate::lsf::call(allot_proto::Request::Priorities)? else {
        bail!("sprio: unexpected answer")
    };
    let [wait_time, fair_share, qos, queue, job_size, user] = l.weights;
    let weights = Weights { wait_time, fair_share, qos, queue, job_size, user };
    let rows: Vec<Row> = l
        .jobs
        .into_iter()
        .map(|j| {
            let [wait_time, fair_share, qos, queue, job_size, user] = j.factors;
            let factors = Factors { wait_time, fair_share, qos, queue, job_size, user };
            Row { id: j.id, user: j.user, account: j.account, factors, priority: j.priority }
        })
        .collect();
    Ok((weights, rows))
}

/// Every listed pending job's factors and priority.
fn priorities(c: &Charged) -> anyhow::Result<Vec<Row>> {
    let params = &c.config.settings.priority;
    let engine = c.config.engine_config();
    let max = Maxima::of(&engine);
    let default_queue = engine.default_queues.first().cloned();
    let mut next_id = c.entries.iter().flat_map(|e| e.jobs.iter().filter_map(|j| j.id)).max().unwrap_or(0) + 1;
    let mut rows = Vec::new();
    for (i, (e, &assoc)) in c.entries.iter().zip(&c.assocs).enumerate() {
        let what = format!("entry {} (user `{}`)", i + 1, e.user);
        let fair_share = c.rows[assoc.0 as usize].factor.unwrap_or(0.0);
        let defaults = vec![Default::default(); if e.jobs.is_empty() { e.pending() as usize } else { 0 }];
        for j in e.jobs.iter().chain(&defaults) {
            let queue = j.queue.clone().or_else(|| default_queue.clone()).unwrap_or_default();
            let queue_priority = match engine.queues.iter().find(|q| q.name == queue) {
                Some(q) => i64::from(q.priority),
                None if j.queue.is_none() => 0,
                None => bail!("{what}: queue `{queue}`: no such queue"),
            };
            let qos = j.qos.as_deref().unwrap_or("normal");
            let (qos_priority, _) = params.job_qos(j.qos.as_deref(), &e.user).map_err(|r| match r {
                QosRefusal::Unknown => anyhow!("{what}: qos `{qos}`: no such QoS level"),
                QosRefusal::NotAllowed => anyhow!("{what}: qos `{qos}`: the user may not use it"),
            })?;
            let user_factor = j.user_factor.unwrap_or(1.0);
            if !valid_user_factor(user_factor) {
                bail!("{what}: user_factor: expected a number from 0 to 1 (it only lowers a job's priority)");
            }
            let slots = j.slots.unwrap_or(1);
            let inputs = JobInputs {
                waited: j.waited,
                fair_share,
                qos_priority,
                queue_priority,
                slots,
                nodes: j.nodes.unwrap_or_else(|| max.nodes(slots, None)),
                user_factor,
            };
            let factors = params.factors(&inputs, &max);
            let id = j.id.unwrap_or_else(|| {
                next_id += 1;
                next_id - 1
            });
            rows.push(Row {
                id,
                user: e.user.clone(),
                account: c.tree.get(assoc).account.clone(),
                factors,
                priority: factors.priority(&params.weights),
            });
        }
    }
    Ok(rows)
}
