//! Reading a configuration directory: every file that is there, each
//! missing file taking its defaults, then validation across files.

use std::path::Path;

use allot_engine::shares::GroupTable;

use crate::diag::{Diagnostics, Location};
use crate::lsf::text::{Source, key_values, logical_lines};
use crate::lsf::{cluster, hosts, params, queues, users};
use crate::model::{Config, Host};
use crate::{settings, validate};

/// The files of a configuration directory that allot reads.
pub const FILES: &[&str] =
    &["lsb.params", "lsf.conf", "lsb.users", "lsb.hosts", "lsb.queues", "lsb.applications", "allot.toml"];

/// Reads `dir`. On success, the configuration and its warnings; on any
/// error, every diagnostic found (errors and warnings), and nothing else.
pub fn load_dir(dir: &Path) -> Result<(Config, Diagnostics), Diagnostics> {
    load_texts(&read_dir(dir)?)
}

/// The configuration from files' texts, as [`load_dir`] gives it.
pub fn load_texts(texts: &[(String, String)]) -> Result<(Config, Diagnostics), Diagnostics> {
    let mut diags = Diagnostics::default();
    let config = from_texts(texts, &mut diags);
    if diags.has_errors() { Err(diags) } else { Ok((config, diags)) }
}

/// The texts of the files of `dir` that allot reads, as (file name, text),
/// in a fixed order; an unreadable file is an error.
pub fn read_dir(dir: &Path) -> Result<Vec<(String, String)>, Diagnostics> {
    let mut diags = Diagnostics::default();
    let mut texts: Vec<(String, String)> = Vec::new();
    if !dir.is_dir() {
        let loc = Location { file: dir.display().to_string(), line: 1, col: 1 };
        diags.error(loc, "expected a configuration directory");
        return Err(diags);
    }
    let mut cluster_files: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("lsf.cluster."))
                .collect()
        })
        .unwrap_or_default();
    cluster_files.sort();
    for name in FILES.iter().map(|s| s.to_string()).chain(cluster_files.iter().cloned()) {
        let path = dir.join(&name);
        match std::fs::read(&path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => texts.push((name, text)),
                Err(e) => diags.error(
                    settings::line_col(&name, &String::from_utf8_lossy(e.as_bytes()), e.utf8_error().valid_up_to()),
                    "expected UTF-8 text",
                ),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => diags.error(Location { file: name, line: 1, col: 1 }, format!("cannot read: {e}")),
        }
    }
    // The association file `[priority] accounts` names, under the name
    // written there (settings::read reports a malformed allot.toml).
    let accounts = texts.iter().find(|(n, _)| n == "allot.toml").and_then(|(_, t)| accounts_file(t));
    if let Some(name) = accounts {
        match std::fs::read_to_string(dir.join(&name)) {
            Ok(text) => texts.push((name, text)),
            // from_texts says where it was named.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => diags.error(Location { file: name, line: 1, col: 1 }, format!("cannot read: {e}")),
        }
    }
    if diags.has_errors() { Err(diags) } else { Ok(texts) }
}

/// `[priority] accounts` of an `allot.toml` text, if it names one.
fn accounts_file(text: &str) -> Option<String> {
    let table: toml::Table = toml::from_str(text).ok()?;
    table.get("priority")?.get("accounts")?.as_str().map(str::to_string)
}

/// Reads configuration files given as (file name, text) pairs; the names
/// say which file each is. Problems go to `diags`.
pub fn from_texts(texts: &[(String, String)], diags: &mut Diagnostics) -> Config {
    let get = |name: &str| texts.iter().find(|(n, _)| n == name).map(|(n, t)| Source { name: n, text: t });
    let mut config = Config::default();
    if let Some(src) = get("lsb.params") {
        config.params = params::read(&src, diags);
    }
    if let Some(src) = get("lsf.conf") {
        let (enforce, mail) = read_lsf_conf(&src, diags);
        config.params.ncpu_enforce |= enforce;
        config.mail_prog = mail;
    }
    if let Some(src) = get("lsb.users") {
        let (groups, limits) = users::read(&src, diags);
        config.groups = groups;
        config.user_limits = limits;
    } else {
        config.groups = GroupTable::default();
    }
    let mut all_hosts: Vec<Host> = Vec::new();
    for (name, text) in texts.iter().filter(|(n, _)| n.starts_with("lsf.cluster.")) {
        all_hosts.extend(cluster::read(&Source { name, text }, diags));
        let named = name.trim_start_matches("lsf.cluster.");
        if config.cluster_name.as_deref().is_none_or(|n| named < n) {
            config.cluster_name = Some(named.to_string());
        }
    }
    if let Some(src) = get("allot.toml") {
        let (settings, hosts) = settings::read(src.name, src.text, diags);
        config.settings = settings;
        all_hosts.extend(hosts);
    }
    if let Some((name, loc)) = config.settings.accounts.clone() {
        match texts.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => match crate::sacctmgr::read(&name, text) {
                Ok(tree) => config.accounts = Some(tree),
                Err(d) => diags.0.extend(d.0),
            },
            None => diags.error(loc, format!("[priority] accounts: `{name}` is not in the configuration directory")),
        }
    }
    let lsb_hosts = get("lsb.hosts").map(|src| hosts::read(&src, diags)).unwrap_or_default();
    config.hosts = validate::merge_hosts(all_hosts, &lsb_hosts.hosts, diags);
    config.host_groups = lsb_hosts.groups;
    config.partitions = lsb_hosts.partitions;
    config.compute_units = lsb_hosts.compute_units;
    if let Some(src) = get("lsb.queues") {
        config.queues = queues::read(&src, diags);
    }
    if let Some(src) = get("lsb.applications") {
        config.applications = crate::lsf::applications::read(&src, diags);
    }
    validate::validate(&mut config, diags);
    // A multifactor policy ranks associations: it needs some.
    if config.multifactor_policy().is_some() && config.accounts.is_none() && !diags.has_errors() {
        if let Err(e) = config.account_tree(Vec::new()) {
            let loc =
                config.settings.policy_loc.clone().unwrap_or(Location { file: "allot.toml".into(), line: 1, col: 1 });
            diags.error(loc, format!("[priority] policy `{}`: {e}", config.settings.policy));
        }
    }
    config
}

/// The parameters of `lsf.conf` the specification names whose behaviour
/// allot does not have (CPU binding of parallel jobs, spec 004).
const LSF_CONF_NOT_APPLIED: &[&str] = &["LSB_BIND_JOB", "LSB_BIND_CPU_LIST"];

/// `lsf.conf` is `KEY=VALUE` lines with no sections; allot reads
/// LSB_NCPU_ENFORCE and LSB_MAILPROG (the mail program, as written) from
/// it, warns about the parameters of the specification it does not apply,
/// and passes over the rest (a site's `lsf.conf` holds hundreds of
/// settings of LSF's own daemons).
fn read_lsf_conf(src: &Source<'_>, diags: &mut Diagnostics) -> (bool, Option<String>) {
    let lines = logical_lines(src);
    let Some(first) = lines.first().cloned() else { return (false, None) };
    let section = crate::lsf::text::Section { name: "lsf.conf".into(), begin: first, lines };
    let (mut enforce, mut mail) = (false, None);
    for (line, kv) in key_values(&section, diags) {
        if kv.key == "LSB_NCPU_ENFORCE" {
            enforce |= crate::lsf::text::unquote(kv.value).trim() == "1";
        } else if kv.key == "LSB_MAILPROG" {
            mail = Some(crate::lsf::text::unquote(kv.value).trim().to_string()).filter(|m| !m.is_empty());
        } else if LSF_CONF_NOT_APPLIED.contains(&kv.key) {
            diags.warning(crate::lsf::read::at(line, kv.key), format!("`{}` is not applied by allot, ignored", kv.key));
        }
    }
    (enforce, mail)
}
