//! `allot shares`: share tables in the layout of the spec's `bhpart -r`.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use allot_config::Policy;
use allot_config::PolicyKind;
use allot_config::usage;
use allot_engine::Time;
use allot_engine::shares::priority::PriorityInputs;
use allot_engine::shares::{ShareRow, ShareTree};
use allot_proto::{PolicyShares, Request, Response, ShareRowInfo, ShareTableInfo};
use anyhow::{Context, anyhow, bail};

/// The spec's `bhpart -r Partition1` example, built in for a first run.
const EXAMPLE: &[(&str, &str)] = &[
    ("lsb.users", include_str!("../../../examples/partition1/lsb.users")),
    ("lsb.hosts", include_str!("../../../examples/partition1/lsb.hosts")),
];
const EXAMPLE_USAGE: &str = include_str!("../../../examples/partition1/usage.json");

pub fn run(config_dir: Option<&Path>, usage_file: Option<&Path>, json: bool, live: bool) -> anyhow::Result<ExitCode> {
    let policies = if live {
        if config_dir.is_some() || usage_file.is_some() {
            bail!("--live: the tables of the running allotd; --config and --usage do not apply");
        }
        let Response::Shares(p) = crate::lsf::call(Request::Shares)? else { bail!("allot shares: unexpected answer") };
        p
    } else {
        offline(config_dir, usage_file)?
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&tables_json(&policies))?);
    } else {
        print!("{}", render(&policies, true));
    }
    Ok(ExitCode::SUCCESS)
}

/// The share tables of a configuration directory (or of the built-in
/// example) charged with a usage file.
fn offline(config_dir: Option<&Path>, usage_file: Option<&Path>) -> anyhow::Result<Vec<PolicyShares>> {
    let config = match config_dir {
        Some(dir) => match allot_config::load_dir(dir) {
            Ok((config, warnings)) => {
                eprint!("{warnings}");
                config
            }
            Err(diags) => return Err(anyhow!("{}: invalid configuration:\n{diags}", dir.display())),
        },
        None => {
            let texts: Vec<(String, String)> = EXAMPLE.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
            let mut diags = allot_config::Diagnostics::default();
            let config = allot_config::load::from_texts(&texts, &mut diags);
            if diags.has_errors() {
                return Err(anyhow!("the built-in example is invalid:\n{diags}"));
            }
            config
        }
    };
    let (name, text) = match (usage_file, config_dir) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            (path.display().to_string(), text)
        }
        (None, None) => ("examples/partition1/usage.json".to_string(), EXAMPLE_USAGE.to_string()),
        (None, Some(_)) => (String::new(), "{}".to_string()),
    };
    let usage = usage::read(&name, &text, &config).map_err(|d| anyhow!("invalid usage:\n{d}"))?;
    let trees = usage::charged_trees(&config, &usage, &name, &text).map_err(|d| anyhow!("invalid usage:\n{d}"))?;
    let adjustment = config.adjustment();
    let inputs = adjustment.inputs();
    let show_adjust = config.params.factors.fairshare_adjustment_factor != 0.0;
    Ok(trees.iter().map(|(policy, tree)| policy_shares(policy, tree, &inputs, show_adjust)).collect())
}

fn policy_shares(policy: &Policy, tree: &ShareTree, inputs: &PriorityInputs<'_>, show_adjust: bool) -> PolicyShares {
    let (partition_hosts, queues) = match &policy.kind {
        PolicyKind::Partition { hosts } => (Some(hosts.clone()), Vec::new()),
        PolicyKind::Queue { queues } => (None, queues.clone()),
    };
    let tables = tree
        .share_tables(Time(0), inputs)
        .into_iter()
        .map(|t| ShareTableInfo { path: t.path, rows: t.rows.into_iter().map(row).collect() })
        .collect();
    PolicyShares {
        name: policy.name.clone(),
        partition_hosts,
        queues,
        user_shares: policy.shares.iter().map(ToString::to_string).collect::<Vec<_>>().join(" "),
        show_adjust,
        tables,
    }
}

fn row(r: ShareRow) -> ShareRowInfo {
    ShareRowInfo {
        name: r.name,
        shares: r.shares,
        priority: r.priority,
        started: r.started,
        reserved: r.reserved,
        cpu_time: r.cpu_time,
        run_time: r.run_time,
        adjust: r.adjust,
    }
}

/// The JSON form of `allot shares`: a list of `{"policy", "path", "rows":
/// [...]}`, rows with `adjust` when FAIRSHARE_ADJUSTMENT_FACTOR is not 0
/// (the form `allot sim` writes).
fn tables_json(policies: &[PolicyShares]) -> serde_json::Value {
    let mut out = Vec::new();
    for p in policies {
        for t in &p.tables {
            let rows: Vec<serde_json::Value> = t
                .rows
                .iter()
                .map(|r| {
                    let mut v = serde_json::json!({
                        "name": r.name, "shares": r.shares, "priority": r.priority, "started": r.started,
                        "reserved": r.reserved, "cpu_time": r.cpu_time, "run_time": r.run_time,
                    });
                    if p.show_adjust {
                        v["adjust"] = serde_json::json!(r.adjust);
                    }
                    v
                })
                .collect();
            out.push(serde_json::json!({"policy": p.name, "path": t.path, "rows": rows}));
        }
    }
    serde_json::Value::Array(out)
}

/// The header of a policy as `bhpart` and `allot shares` print it.
fn policy_header(p: &PolicyShares) -> String {
    match &p.partition_hosts {
        Some(hosts) => format!(
            "HOST_PARTITION_NAME: {}\nHOSTS: {}\n",
            p.name,
            if hosts.is_empty() { "-".to_string() } else { hosts.join(" ") }
        ),
        None if p.queues.len() > 1 => format!("QUEUE: {}\nFAIRSHARE_QUEUES: {}\n", p.name, p.queues.join(" ")),
        None => format!("QUEUE: {}\n", p.name),
    }
}

/// Every policy's header and share tables (all levels, or with
/// `recursive` false only the top one), as `bhpart -r` prints them.
pub fn render(policies: &[PolicyShares], recursive: bool) -> String {
    let mut out = String::new();
    for (i, p) in policies.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&policy_header(p));
        for table in p.tables.iter().take(if recursive { usize::MAX } else { 1 }) {
            out.push('\n');
            out.push_str(&render_table(table, p.show_adjust));
        }
    }
    out
}

/// One `SHARE_INFO_FOR` block: priorities with three decimals, CPU time
/// with one, run time in whole seconds.
pub fn render_table(table: &ShareTableInfo, show_adjust: bool) -> String {
    let width = table.rows.iter().map(|r| r.name.len()).max().unwrap_or(0).max(12);
    let mut out = format!("SHARE_INFO_FOR: {}\n", table.path);
    let _ = write!(
        out,
        "{:<width$} {:>6} {:>9} {:>8} {:>8} {:>10} {:>10}",
        "USER/GROUP", "SHARES", "PRIORITY", "STARTED", "RESERVED", "CPU_TIME", "RUN_TIME"
    );
    out.push_str(if show_adjust { "     ADJUST\n" } else { "\n" });
    for r in &table.rows {
        let _ = write!(
            out,
            "{:<width$} {:>6} {:>9.3} {:>8} {:>8} {:>10.1} {:>10.0}",
            r.name, r.shares, r.priority, r.started, r.reserved, r.cpu_time, r.run_time
        );
        if show_adjust {
            let _ = write!(out, " {:>10.3}", r.adjust);
        }
        out.push('\n');
    }
    out
}
