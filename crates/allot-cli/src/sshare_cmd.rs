//! `allot sshare`: the fair-share of the multifactor policies, as Slurm's
//! `sshare -l` prints it, for a configuration directory charged with a
//! usage file ([`allot_config::assoc_usage`]).
//!
//! Rows in tree order, accounts indented one space a level (a user row
//! shows its account one level further in). RawShares is `parent` for
//! `Fairshare=parent`; RawUsage is whole billed seconds; LevelFS is `inf`
//! for an association with shares and no usage. `--json` gives the same
//! rows with keys `account`, `user` (null on account rows), `raw_shares`
//! (a number, `"parent"`, or null for root), `norm_shares`, `raw_usage`,
//! `norm_usage`, `effective_usage`, `fairshare`, `level_fs` (null where
//! the policy has none; the string `"inf"` where infinite, JSON having no
//! infinity) and, under slurm-tickets, `tickets`.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use allot_config::assoc_usage;
use allot_engine::multifactor::{self, AccountTree, FairsharePolicy, FairshareRow, RawShares};
use anyhow::{Context, anyhow, bail};
use serde_json::{Value, json};

/// A configuration directory charged with a usage file: what `sshare`
/// and `sprio` show.
pub struct Charged {
    pub config: allot_config::Config,
    pub policy: FairsharePolicy,
    pub tree: AccountTree,
    pub entries: Vec<assoc_usage::Entry>,
    /// Each entry's association.
    pub assocs: Vec<multifactor::AssocId>,
    pub rows: Vec<FairshareRow>,
}

/// Offline (`Some((config, usage))`) or on the running allotd's state.
pub fn run(offline: Option<(&Path, &Path)>, json: bool) -> anyhow::Result<ExitCode> {
    let (policy, tree, rows) = match offline {
        Some((config_dir, usage_file)) => {
            let Charged { policy, tree, rows, .. } = charged(config_dir, usage_file, "sshare")?;
            (policy, tree, rows)
        }
        None => live()?,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&rows_json(policy, &tree, &rows))?);
    } else {
        print!("{}", render(policy, &tree, &rows));
    }
    Ok(ExitCode::SUCCESS)
}

/// The running allotd's associations, with the fair-share computed here
/// by the engine's code from its usage and pending jobs.
fn live() -> anyhow::Result<(FairsharePolicy, AccountTree, Vec<FairshareRow>)> {
    // `call` turns allotd's refusal into the error.
    let allot_proto::Response::Associations(l) = crate::lsf::call(allot_proto::Request::Associations)? else {
        bail!("sshare: unexpected answer")
    };
    let Some(policy) = FairsharePolicy::from_name(&l.policy, l.dampening) else {
        bail!("sshare: allotd runs policy `{}`, which this allot does not know", l.policy)
    };
    let mut tree = AccountTree::new();
    for a in l.assocs.iter().skip(1) {
        let parent = multifactor::AssocId(a.parent.unwrap_or(0));
        let shares = a.shares.map_or(RawShares::Parent, RawShares::Count);
        match &a.user {
            Some(u) => tree.add_user(parent, u, shares),
            None => tree.add_account(parent, &a.account, shares),
        }
        .map_err(|e| anyhow!("sshare: allotd's associations: {e}"))?;
    }
    let rows = multifactor::compute(policy, &tree, &l.usage, &l.pending);
    Ok((policy, tree, rows))
}

/// Loads `config_dir`, charges its associations with `usage_file`, and
/// computes its policy's fair-share; `command` names who asks, in errors.
pub fn charged(config_dir: &Path, usage_file: &Path, command: &str) -> anyhow::Result<Charged> {
    let config = match allot_config::load_dir(config_dir) {
        Ok((config, warnings)) => {
            eprint!("{warnings}");
            config
        }
        Err(diags) => return Err(anyhow!("{}: invalid configuration:\n{diags}", config_dir.display())),
    };
    let Some(policy) = config.multifactor_policy() else {
        bail!(
            "{}: [priority] policy is `{}`: {command} shows slurm-classic, slurm-fairtree, slurm-tickets, flux-accounting and flux (`allot shares` shows LSF's share tables)",
            config_dir.display(),
            config.settings.policy
        );
    };
    let name = usage_file.display().to_string();
    let text = std::fs::read_to_string(usage_file).with_context(|| format!("cannot read {name}"))?;
    let entries = assoc_usage::entries(&name, &text).map_err(|d| anyhow!("invalid usage:\n{d}"))?;
    let tree = config
        .account_tree(entries.iter().map(|e| e.user.clone()))
        .map_err(|e| anyhow!("{}: {e}", config_dir.display()))?;
    let charges = assoc_usage::charge(&name, &text, &entries, &tree).map_err(|d| anyhow!("invalid usage:\n{d}"))?;
    let rows = multifactor::compute(policy, &tree, &charges.usage, &charges.pending);
    Ok(Charged { config, policy, tree, entries, assocs: charges.assocs, rows })
}

fn depth(tree: &AccountTree, a: multifactor::AssocId) -> usize {
    let mut d = 0;
    let mut at = tree.get(a).parent;
    while let Some(p) = at {
        d += 1;
        at = tree.get(p).parent;
    }
    d
}

fn raw_shares(tree: &AccountTree, a: multifactor::AssocId) -> Option<RawShares> {
    (a != multifactor::AssocId::ROOT).then(|| tree.get(a).shares)
}

/// The table of `sshare -l`.
pub fn render(policy: FairsharePolicy, tree: &AccountTree, rows: &[FairshareRow]) -> String {
    let tickets = policy == FairsharePolicy::Tickets;
    let mut out = format!(
        "{:<20} {:<10} {:>10} {:>11} {:>11} {:>11} {:>13} {:>10} {:>10}",
        "Account", "User", "RawShares", "NormShares", "RawUsage", "NormUsage", "EffectvUsage", "FairShare", "LevelFS"
    );
    let mut rule = format!(
        "{} {} {} {} {} {} {} {} {}",
        "-".repeat(20),
        "-".repeat(10),
        "-".repeat(10),
        "-".repeat(11),
        "-".repeat(11),
        "-".repeat(11),
        "-".repeat(13),
        "-".repeat(10),
        "-".repeat(10)
    );
    if tickets {
        out.push_str(&format!(" {:>10}", "Tickets"));
        rule.push_str(&format!(" {}", "-".repeat(10)));
    }
    out.push('\n');
    out.push_str(&rule);
    out.push('\n');
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.6}"));
    for a in tree.tree_order() {
        let x = tree.get(a);
        let r = &rows[a.0 as usize];
        let account = format!("{}{}", " ".repeat(depth(tree, a)), x.account);
        let shares = match raw_shares(tree, a) {
            None => String::new(),
            Some(RawShares::Count(n)) => n.to_string(),
            Some(RawShares::Parent) => "parent".into(),
        };
        let level = match r.level_fs {
            Some(v) if v.is_infinite() => "inf".to_string(),
            v => opt(v),
        };
        let _ = write!(
            out,
            "{:<20} {:<10} {:>10} {:>11.6} {:>11.0} {:>11.6} {:>13.6} {:>10} {:>10}",
            account,
            x.user.as_deref().unwrap_or(""),
            shares,
            r.norm_shares,
            r.raw_usage,
            r.norm_usage,
            r.effective_usage,
            opt(r.fairshare),
            level
        );
        if tickets {
            let _ = write!(out, " {:>10}", r.tickets.map_or(String::new(), |t| format!("{t:.0}")));
        }
        out = out.trim_end().to_string();
        out.push('\n');
    }
    out
}

pub fn rows_json(policy: FairsharePolicy, tree: &AccountTree, rows: &[FairshareRow]) -> Value {
    let list: Vec<Value> = tree
        .tree_order()
        .into_iter()
        .map(|a| {
            let x = tree.get(a);
            let r = &rows[a.0 as usize];
            let shares = match raw_shares(tree, a) {
                None => Value::Null,
                Some(RawShares::Count(n)) => json!(n),
                Some(RawShares::Parent) => json!("parent"),
            };
            let level = match r.level_fs {
                Some(v) if v.is_infinite() => json!("inf"),
                v => json!(v),
            };
            let mut row = json!({
                "account": x.account,
                "user": x.user,
                "raw_shares": shares,
                "norm_shares": r.norm_shares,
                "raw_usage": r.raw_usage,
                "norm_usage": r.norm_usage,
                "effective_usage": r.effective_usage,
                "fairshare": r.fairshare,
                "level_fs": level,
            });
            if policy == FairsharePolicy::Tickets {
                row["tickets"] = json!(r.tickets);
            }
            row
        })
        .collect();
    Value::Array(list)
}
