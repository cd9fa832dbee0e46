//! `allot shares`: share tables in the layout of the spec's `bhpart -r`.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use allot_config::usage;
use allot_config::{Config, PolicyKind};
use allot_engine::Time;
use allot_engine::shares::priority::PriorityInputs;
use allot_engine::shares::{ShareTable, ShareTree};
use anyhow::{Context, anyhow};

/// The spec's `bhpart -r Partition1` example, built in for a first run.
const EXAMPLE: &[(&str, &str)] = &[
    ("lsb.users", include_str!("../../../examples/partition1/lsb.users")),
    ("lsb.hosts", include_str!("../../../examples/partition1/lsb.hosts")),
];
const EXAMPLE_USAGE: &str = include_str!("../../../examples/partition1/usage.json");

pub fn run(config_dir: Option<&Path>, usage_file: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
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
    let inputs = PriorityInputs { adjustment: adjustment.as_ref(), cluster: Default::default() };
    if json {
        println!("{}", to_json(&trees, &inputs)?);
    } else {
        print!("{}", render(&config, &trees, &inputs));
    }
    Ok(ExitCode::SUCCESS)
}

fn to_json(trees: &[(allot_config::Policy, ShareTree)], inputs: &PriorityInputs<'_>) -> anyhow::Result<String> {
    let tables = allot_sim::report::share_tables_json(trees.iter().map(|(_, tree)| tree), Time(0), inputs);
    Ok(serde_json::to_string_pretty(&tables)?)
}

/// Every policy's header and share tables, as `bhpart -r` and `bqueues -l`
/// print them.
pub fn render(config: &Config, trees: &[(allot_config::Policy, ShareTree)], inputs: &PriorityInputs<'_>) -> String {
    let mut out = String::new();
    for (i, (policy, tree)) in trees.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match &policy.kind {
            PolicyKind::Partition { hosts } => {
                let _ = writeln!(out, "HOST_PARTITION_NAME: {}", policy.name);
                let _ = writeln!(out, "HOSTS: {}", if hosts.is_empty() { "-".to_string() } else { hosts.join(" ") });
            }
            PolicyKind::Queue { queues } => {
                let _ = writeln!(out, "QUEUE: {}", policy.name);
                if queues.len() > 1 {
                    let _ = writeln!(out, "FAIRSHARE_QUEUES: {}", queues.join(" "));
                }
            }
        }
        let show_adjust = config.params.factors.fairshare_adjustment_factor != 0.0;
        for table in tree.share_tables(Time(0), inputs) {
            out.push('\n');
            out.push_str(&render_table(&table, show_adjust));
        }
    }
    out
}

/// One `SHARE_INFO_FOR` block: priorities with three decimals, CPU time
/// with one, run time in whole seconds.
pub fn render_table(table: &ShareTable, show_adjust: bool) -> String {
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
