//! Reading a configuration directory: every file that is there, each
//! missing file taking its defaults, then validation across files.

use std::path::{Path, PathBuf};

use allot_engine::shares::GroupTable;

use crate::diag::{Diagnostics, Location};
use crate::lsf::text::{Source, key_values, logical_lines};
use crate::lsf::{cluster, hosts, params, queues, users};
use crate::model::{Config, Host};
use crate::{settings, validate};

/// The files of a configuration directory that allot reads.
pub const FILES: &[&str] = &[
    "lsb.params",
    "lsf.conf",
    "lsf.shared",
    "lsb.users",
    "lsb.hosts",
    "lsb.queues",
    "lsb.applications",
    "lsb.resources",
    "allot.toml",
];

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
    // lsf.conf once: it says where the rest is.
    let conf = std::fs::read(dir.join("lsf.conf"));
    let tree = layout_of(dir, &conf.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default());
    // Each file by its path from `dir` (where it is under it), which is
    // what diagnostics name; lookups go by file name.
    let name_of = |p: &Path| p.strip_prefix(dir).unwrap_or(p).display().to_string();
    let listed = |d: &Path, keep: &dyn Fn(&str) -> bool| -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|rd| {
                rd.filter_map(|e| e.ok()).filter(|e| keep(&e.file_name().to_string_lossy())).map(|e| e.path()).collect()
            })
            .unwrap_or_default();
        found.sort();
        found
    };
    let mut paths: Vec<PathBuf> = Vec::new();
    for name in FILES {
        let home = match *name {
            n if n.starts_with("lsb.") => &tree.batch_dir,
            "lsf.shared" => &tree.confdir,
            _ => &tree.envdir,
        };
        paths.push(home.join(name));
    }
    paths.extend(listed(&tree.confdir, &|n| n.starts_with("lsf.cluster.")));
    for path in paths {
        let name = name_of(&path);
        let read = if path == dir.join("lsf.conf") {
            conf.as_ref().map(Vec::clone).map_err(|e| std::io::Error::new(e.kind(), e.to_string()))
        } else {
            std::fs::read(&path)
        };
        match read {
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
    let accounts = texts.iter().find(|(n, _)| file_name(n) == "allot.toml").and_then(|(_, t)| accounts_file(t));
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

/// A file's name without the directories its path names.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Where a cluster's configuration files are, LSF's way, from a directory
/// taken as LSF_ENVDIR: its `lsf.conf`'s LSF_CONFDIR (else the directory
/// itself) holds `lsf.shared` and `lsf.cluster.<name>`; LSB_CONFDIR (else
/// `LSF_CONFDIR/lsbatch`) holds `<cluster>/configdir/lsb.*`, the cluster
/// being the one [`crate::lsf::shared::this_cluster`] says. Where that
/// `configdir` is not there, the `lsb.*` files are the directory's own
/// (allot's flat layout). `allot.toml` is always the directory's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub envdir: PathBuf,
    pub confdir: PathBuf,
    pub lsb_confdir: PathBuf,
    /// Where the `lsb.*` files are read from.
    pub batch_dir: PathBuf,
}

/// [`Layout`] of `dir`.
pub fn layout(dir: &Path) -> Layout {
    layout_of(dir, &std::fs::read_to_string(dir.join("lsf.conf")).unwrap_or_default())
}

/// LSF_CONFDIR and LSB_CONFDIR of `dir` taken as LSF_ENVDIR, as its
/// lsf.conf's text `lsf_conf` sets them: what [`Layout`] reads from, and
/// what allotd shows (`badmin showconf mbd`) of the configuration it
/// loaded.
pub fn conf_dirs(dir: &Path, lsf_conf: &str) -> (PathBuf, PathBuf) {
    let value = |key: &str| lsf_conf_value(lsf_conf, key).filter(|v| !v.is_empty()).map(PathBuf::from);
    let confdir = value("LSF_CONFDIR").unwrap_or_else(|| dir.to_path_buf());
    let lsb_confdir = value("LSB_CONFDIR").unwrap_or_else(|| confdir.join("lsbatch"));
    (confdir, lsb_confdir)
}

fn layout_of(dir: &Path, lsf_conf: &str) -> Layout {
    let (confdir, lsb_confdir) = conf_dirs(dir, lsf_conf);
    let files: Vec<String> = std::fs::read_dir(&confdir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_string_lossy().strip_prefix("lsf.cluster.").map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    // lsf.shared's problems are said where the files are read.
    let shared_text = std::fs::read_to_string(confdir.join("lsf.shared")).unwrap_or_default();
    let shared =
        crate::lsf::shared::read(&Source { name: "lsf.shared", text: &shared_text }, &mut Diagnostics::default());
    let shared: Vec<String> = shared.into_iter().map(|(n, _)| n).collect();
    let batch_dir = crate::lsf::shared::this_cluster(&shared, &files)
        .map(|c| lsb_confdir.join(c).join("configdir"))
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| dir.to_path_buf());
    Layout { envdir: dir.to_path_buf(), confdir, lsb_confdir, batch_dir }
}

/// One `KEY=VALUE` of an `lsf.conf` text, unquoted.
pub fn lsf_conf_value(text: &str, key: &str) -> Option<String> {
    let src = Source { name: "lsf.conf", text };
    let lines = logical_lines(&src);
    let first = lines.first().cloned()?;
    let section = crate::lsf::text::Section { name: "lsf.conf".into(), begin: first, lines };
    let mut scratch = Diagnostics::default();
    key_values(&section, &mut scratch)
        .into_iter()
        .find(|(_, kv)| kv.key == key)
        .map(|(_, kv)| crate::lsf::text::unquote(kv.value).trim().to_string())
}

/// `[priority] accounts` of an `allot.toml` text, if it names one.
fn accounts_file(text: &str) -> Option<String> {
    let table: toml::Table = toml::from_str(text).ok()?;
    table.get("priority")?.get("accounts")?.as_str().map(str::to_string)
}

/// Reads configuration files given as (file name, text) pairs; the names
/// say which file each is. Problems go to `diags`.
pub fn from_texts(texts: &[(String, String)], diags: &mut Diagnostics) -> Config {
    let get = |name: &str| texts.iter().find(|(n, _)| file_name(n) == name).map(|(n, t)| Source { name: n, text: t });
    let mut config = Config::default();
    if let Some(src) = get("lsb.params") {
        config.params = params::read(&src, diags);
    }
    if let Some(src) = get("lsf.conf") {
        let conf = read_lsf_conf(&src, diags);
        config.params.ncpu_enforce |= conf.ncpu_enforce;
        config.params.time_reserve_numjobs = conf.time_reserve_numjobs;
        config.mail_prog = conf.mail;
    }
    if let Some(src) = get("lsb.users") {
        let (groups, limits) = users::read(&src, diags);
        config.groups = groups;
        config.user_limits = limits;
    } else {
        config.groups = GroupTable::default();
    }
    // This cluster (see `shared::this_cluster`), and its cluster file
    // alone: another cluster's hosts are not this cluster's.
    let shared = get("lsf.shared").map(|src| crate::lsf::shared::read(&src, diags)).unwrap_or_default();
    config.not_consumable =
        get("lsf.shared").map(|src| crate::lsf::shared::not_consumable(&src, diags)).unwrap_or_default();
    let cluster_files: Vec<(&String, &String)> =
        texts.iter().filter(|(n, _)| file_name(n).starts_with("lsf.cluster.")).map(|(n, t)| (n, t)).collect();
    let file_names: Vec<String> =
        cluster_files.iter().map(|(n, _)| file_name(n).trim_start_matches("lsf.cluster.").to_string()).collect();
    let shared_names: Vec<String> = shared.iter().map(|(n, _)| n.clone()).collect();
    config.cluster_name = crate::lsf::shared::this_cluster(&shared_names, &file_names);
    let mut all_hosts: Vec<Host> = Vec::new();
    let mut counts: Vec<(allot_engine::shared_res::SharedSpec, Location)> = Vec::new();
    for ((name, text), named) in cluster_files.iter().zip(&file_names) {
        if config.cluster_name.as_ref() == Some(named) {
            let (hosts, instances) = cluster::read(&Source { name, text }, diags);
            all_hosts.extend(hosts);
            counts.extend(instances);
        } else {
            let this = config.cluster_name.as_deref().unwrap_or_default();
            diags.warning(
                Location { file: name.to_string(), line: 1, col: 1 },
                format!("this is cluster `{this}`, not `{named}`: the file is not read"),
            );
        }
    }
    if let (Some((first, loc)), Some(this)) = (shared.first(), &config.cluster_name) {
        if !file_names.contains(this) && !file_names.is_empty() {
            diags.warning(loc.clone(), format!("no lsf.cluster.{first} for the cluster lsf.shared names"));
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
    if config.hosts.is_empty() {
        config.hosts.extend(crate::detected::machine_host(texts));
    }
    // A count shared by hosts names hosts of this cluster.
    for (s, loc) in counts {
        let unknown = s.hosts.iter().flatten().find(|h| !config.hosts.iter().any(|x| x.name == **h));
        match unknown {
            Some(h) => diags.error(loc, format!("ResourceMap `{}`: `{h}` is not a host of this cluster", s.name)),
            None => config.shared_resources.push(s),
        }
    }
    config.cpus_found_for = crate::detected::undetermined(&config.hosts);
    crate::detected::apply(&mut config.hosts, &crate::detected::found(texts));
    config.host_groups = lsb_hosts.groups;
    config.partitions = lsb_hosts.partitions;
    config.compute_units = lsb_hosts.compute_units;
    if let Some(src) = get("lsb.queues") {
        config.queues = queues::read(&src, diags);
    }
    if config.queues.is_empty() {
        // A site that wrote hosts and no queue still has somewhere to
        // submit, as on the embedded defaults: queue `normal` (`bqueues`
        // and `allot config check` show it), under fairshare unless host
        // partitions hold the fairshare.
        let text = default_queues(config.partitions.is_empty());
        config.queues = queues::read(&Source { name: DEFAULTS, text: &text }, diags);
    }
    if let Some(src) = get("lsb.applications") {
        config.applications = crate::lsf::applications::read(&src, diags);
    }
    if let Some(src) = get("lsb.resources") {
        let unit = get("lsf.conf").and_then(|c| lsf_conf_value(c.text, "LSF_UNIT_FOR_LIMITS"));
        let per_unit = crate::lsf::resources::mb_per_unit(unit.as_deref());
        let (limits, named) = crate::lsf::resources::read(&src, per_unit, diags);
        config.resource_limits = limits;
        validate::limit_names(&config, &named, diags);
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

/// Where what a configuration does not define comes from, as its
/// locations name it (the queue a configuration without one gets).
pub const DEFAULTS: &str = "(allot's defaults)";

/// The queue a configuration without one gets, as `lsb.queues` text: the
/// embedded defaults' (`normal`, PRIORITY 30), under their fairshare
/// unless `fairshare` is false (host partitions hold it).
fn default_queues(fairshare: bool) -> String {
    let shares = if fairshare { "FAIRSHARE = USER_SHARES[[default, 1]]\n" } else { "" };
    format!("Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\n{shares}End Queue\n")
}

/// The parameters of `lsf.conf` that change scheduling whose behaviour
/// allot does not have: CPU binding of parallel jobs (spec 004), and what
/// a host's CPUs count (EGO_DEFINE_NCPUS: procs, cores or threads; allot
/// counts a host's `ncpus`, else the logical CPUs its agent finds).
const LSF_CONF_NOT_APPLIED: &[&str] = &["LSB_BIND_JOB", "LSB_BIND_CPU_LIST", "EGO_DEFINE_NCPUS"];

/// What allot reads of `lsf.conf`.
#[derive(Default)]
struct LsfConf {
    ncpu_enforce: bool,
    mail: Option<String>,
    time_reserve_numjobs: Option<u32>,
}

/// `lsf.conf` is `KEY=VALUE` lines with no sections; allot reads
/// LSB_NCPU_ENFORCE, LSB_MAILPROG (the mail program, as written) and
/// LSB_TIME_RESERVE_NUMJOBS (a positive whole number) from it, warns
/// about the parameters of the specification it does not apply, and
/// passes over the rest (a site's `lsf.conf` holds hundreds of settings
/// of LSF's own daemons).
fn read_lsf_conf(src: &Source<'_>, diags: &mut Diagnostics) -> LsfConf {
    let lines = logical_lines(src);
    let Some(first) = lines.first().cloned() else { return LsfConf::default() };
    let section = crate::lsf::text::Section { name: "lsf.conf".into(), begin: first, lines };
    let mut conf = LsfConf::default();
    for (line, kv) in key_values(&section, diags) {
        let v = crate::lsf::text::unquote(kv.value).trim();
        if kv.key == "LSB_NCPU_ENFORCE" {
            conf.ncpu_enforce |= v == "1";
        } else if kv.key == "LSB_MAILPROG" {
            conf.mail = Some(v.to_string()).filter(|m| !m.is_empty());
        } else if kv.key == "LSB_TIME_RESERVE_NUMJOBS" {
            match v.parse::<u32>() {
                Ok(n) if n > 0 => conf.time_reserve_numjobs = Some(n),
                _ => diags.error(
                    crate::lsf::read::at(line, kv.value),
                    format!("LSB_TIME_RESERVE_NUMJOBS: expected a positive whole number, found `{v}`"),
                ),
            }
        } else if LSF_CONF_NOT_APPLIED.contains(&kv.key) {
            diags.warning(crate::lsf::read::at(line, kv.key), format!("`{}` is not applied by allot, ignored", kv.key));
        }
    }
    conf
}
