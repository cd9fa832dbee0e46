//! Usage files for `allot shares`: JSON keyed by policy name, then by user
//! name, each user with any of `started`, `reserved` (slots), `cpu_time`,
//! `run_time`, `hist_run_time`, `committed_run_time` (seconds, already
//! decayed), `memory` (MB) and `adjustment`; absent fields are 0.
//!
//! ```json
//! {"Partition1": {"user1": {"started": 1, "cpu_time": 9.6, "run_time": 5108}}}
//! ```

use std::collections::BTreeMap;

use allot_engine::Time;
use allot_engine::shares::Usage;
use serde::Deserialize;

use crate::diag::{Diagnostics, Location};
use crate::model::Config;
use crate::settings::line_col;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Entry {
    #[serde(default)]
    started: u32,
    #[serde(default)]
    reserved: u32,
    #[serde(default)]
    cpu_time: f64,
    #[serde(default)]
    run_time: f64,
    #[serde(default)]
    hist_run_time: f64,
    #[serde(default)]
    committed_run_time: f64,
    #[serde(default)]
    memory: f64,
    #[serde(default)]
    adjustment: f64,
}

/// Usage by policy, then by user.
pub type UsageFile = BTreeMap<String, BTreeMap<String, Usage>>;

/// Where `"key"` first appears in the text, for errors about a key.
fn key_loc(file: &str, text: &str, key: &str) -> Location {
    let needle = serde_json::to_string(key).unwrap_or_default();
    line_col(file, text, text.find(&needle).unwrap_or(0))
}

/// Reads a usage file and checks it against `config`: every policy must be
/// one of its fairshare policies, every value finite and not negative.
pub fn read(file: &str, text: &str, config: &Config) -> Result<UsageFile, Diagnostics> {
    let mut diags = Diagnostics::default();
    let raw: BTreeMap<String, BTreeMap<String, Entry>> = match serde_json::from_str(text) {
        Ok(r) => r,
        Err(e) => {
            let loc = Location { file: file.to_string(), line: e.line() as u32, col: e.column() as u32 };
            diags.error(loc, format!("expected a usage object keyed by policy, then user: {e}"));
            return Err(diags);
        }
    };
    let policies: Vec<String> = config.fairshare_policies().into_iter().map(|p| p.name).collect();
    let mut out = UsageFile::new();
    for (policy, users) in raw {
        if !policies.contains(&policy) {
            let known = if policies.is_empty() { "none".to_string() } else { policies.join(", ") };
            diags.error(
                key_loc(file, text, &policy),
                format!("`{policy}` is not a fairshare policy of the configuration (policies: {known})"),
            );
            continue;
        }
        let mut per_user = BTreeMap::new();
        for (user, e) in users {
            let values = [e.cpu_time, e.run_time, e.hist_run_time, e.committed_run_time, e.memory, e.adjustment];
            if values.iter().any(|v| !v.is_finite() || *v < 0.0) {
                diags.error(
                    key_loc(file, text, &user),
                    format!("`{policy}`/`{user}`: usage values must be finite and at least 0"),
                );
                continue;
            }
            per_user.insert(
                user,
                Usage {
                    started: e.started,
                    reserved: e.reserved,
                    cpu_time: e.cpu_time,
                    run_time: e.run_time,
                    hist_run_time: e.hist_run_time,
                    committed_run_time: e.committed_run_time,
                    memory: e.memory,
                    adjustment: e.adjustment,
                },
            );
        }
        out.insert(policy, per_user);
    }
    if diags.has_errors() { Err(diags) } else { Ok(out) }
}

/// Builds the share tree of every policy with its usage charged: each user's
/// usage goes to the user's first share account (a user reached through
/// several groups is charged through the first in configuration order). A
/// user without shares in the policy is an error.
pub fn charged_trees(
    config: &Config,
    usage: &UsageFile,
    file: &str,
    text: &str,
) -> Result<Vec<(crate::policy::Policy, allot_engine::shares::ShareTree)>, Diagnostics> {
    let mut diags = Diagnostics::default();
    let mut out = Vec::new();
    let empty = BTreeMap::new();
    for policy in config.fairshare_policies() {
        let users = usage.get(&policy.name).unwrap_or(&empty);
        let mut tree = config.share_tree(&policy, users.keys().cloned());
        for (user, u) in users {
            match tree.resolve(user, None) {
                Ok(leaves) => tree.add_usage(leaves[0], u, Time(0)),
                Err(e) => diags.error(key_loc(file, text, user), e.to_string()),
            }
        }
        out.push((policy, tree));
    }
    if diags.has_errors() { Err(diags) } else { Ok(out) }
}
