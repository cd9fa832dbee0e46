//! `allot.toml`: allot's own settings, and hosts for sites without LSF's
//! cluster file.
//!
//! ```toml
//! [priority]
//! policy = "lsf"              # or slurm-classic, slurm-fairtree, slurm-tickets, flux-accounting
//! accounts = "assoc.cfg"      # a `sacctmgr dump` file (relative to this directory)
//! dampening = 1               # slurm-classic's FairShareDampeningFactor
//! [state]
//! dir = "/var/lib/allot"
//! [fairshare]
//! adjustment = "memory"       # or "none" (the default)
//! memory_threshold = 0.8
//! [daemon]
//! admins = ["alice", "bob"]   # may act on any job, and run badmin
//! metrics = "127.0.0.1:9464"  # Prometheus text endpoint (off without it)
//! usage_interval = 10         # seconds between measurements of running jobs
//! [[hosts]]
//! name = "hostA"
//! ncpus = 8                   # otherwise MXJ
//! mxj = 8
//! maxmem = 64000              # MB
//! type = "X86_64"
//! model = "PC1133"
//! resources = { fast = true, scratch = 100, hgconnect = "hg1" }
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::diag::{Diagnostics, Location};
use crate::model::{AllotSettings, Host};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    priority: Priority,
    #[serde(default)]
    state: State,
    #[serde(default)]
    fairshare: Fairshare,
    #[serde(default)]
    daemon: Daemon,
    #[serde(default)]
    hosts: Vec<HostEntry>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Daemon {
    #[serde(default)]
    admins: Vec<String>,
    metrics: Option<toml::Spanned<String>>,
    usage_interval: Option<toml::Spanned<i64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Priority {
    policy: Option<toml::Spanned<String>>,
    accounts: Option<toml::Spanned<String>>,
    dampening: Option<toml::Spanned<f64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct State {
    dir: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Fairshare {
    adjustment: Option<toml::Spanned<String>>,
    memory_threshold: Option<toml::Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostEntry {
    name: toml::Spanned<String>,
    ncpus: Option<u32>,
    mxj: Option<u32>,
    maxmem: Option<u64>,
    #[serde(rename = "type")]
    host_type: Option<String>,
    model: Option<String>,
    #[serde(default)]
    resources: BTreeMap<String, toml::Value>,
}

/// Line and column of byte `offset` in `text`.
pub fn line_col(file: &str, text: &str, offset: usize) -> Location {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() as u32 + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
    Location { file: file.to_string(), line, col }
}

/// The policies `[priority] policy` may name.
pub const POLICIES: &[&str] = &["lsf", "slurm-classic", "slurm-fairtree", "slurm-tickets", "flux-accounting"];

pub fn read(name: &str, text: &str, diags: &mut Diagnostics) -> (AllotSettings, Vec<Host>) {
    let file: File = match toml::from_str(text) {
        Ok(f) => f,
        Err(e) => {
            let loc = line_col(name, text, e.span().map_or(0, |s| s.start));
            diags.error(loc, e.message().trim().to_string());
            return (AllotSettings::default(), Vec::new());
        }
    };
    let mut s = AllotSettings { state_dir: file.state.dir, admins: file.daemon.admins, ..AllotSettings::default() };
    if let Some(m) = file.daemon.metrics {
        match m.get_ref().parse::<std::net::SocketAddr>() {
            Ok(addr) => s.metrics = Some(addr),
            Err(_) => diags.error(
                line_col(name, text, m.span().start),
                format!(
                    "[daemon] metrics: expected an address and port such as `127.0.0.1:9464`, found `{}`",
                    m.get_ref()
                ),
            ),
        }
    }
    if let Some(i) = file.daemon.usage_interval {
        match u64::try_from(*i.get_ref()) {
            Ok(n) if n >= 1 => s.usage_interval = Some(n),
            _ => diags.error(
                line_col(name, text, i.span().start),
                format!("[daemon] usage_interval: expected seconds, at least 1, found `{}`", i.get_ref()),
            ),
        }
    }
    if let Some(p) = file.priority.policy {
        if POLICIES.contains(&p.get_ref().as_str()) {
            s.policy = p.get_ref().clone();
        } else {
            let loc = line_col(name, text, p.span().start);
            diags.error(
                loc,
                format!("[priority] policy: expected one of {}, found `{}`", quoted(POLICIES), p.get_ref()),
            );
        }
    }
    if let Some(a) = file.priority.accounts {
        s.accounts = Some((a.get_ref().clone(), line_col(name, text, a.span().start)));
    }
    if let Some(d) = file.priority.dampening {
        if *d.get_ref() >= 1.0 && d.get_ref().is_finite() {
            s.dampening = *d.get_ref();
        } else {
            let loc = line_col(name, text, d.span().start);
            diags.error(loc, format!("[priority] dampening: expected a number, at least 1, found `{}`", d.get_ref()));
        }
    }
    match file.fairshare.adjustment.as_ref().map(|a| (a.get_ref().as_str(), a.span())) {
        None | Some(("none", _)) => {}
        Some(("memory", _)) => {
            let threshold = file.fairshare.memory_threshold.as_ref().map_or(1.0, |t| *t.get_ref());
            s.memory_adjustment_threshold = Some(threshold);
        }
        Some((other, span)) => diags.error(
            line_col(name, text, span.start),
            format!("[fairshare] adjustment: expected `none` or `memory`, found `{other}`"),
        ),
    }
    if let Some(t) = &file.fairshare.memory_threshold {
        if *t.get_ref() <= 0.0 || !t.get_ref().is_finite() {
            let loc = line_col(name, text, t.span().start);
            diags.error(loc, "[fairshare] memory_threshold: expected a number greater than 0");
            s.memory_adjustment_threshold = None;
        }
    }
    let hosts = file.hosts.into_iter().map(|h| host(name, text, h, diags)).collect();
    (s, hosts)
}

fn quoted(list: &[&str]) -> String {
    list.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
}

fn host(file: &str, text: &str, h: HostEntry, diags: &mut Diagnostics) -> Host {
    let mut host = Host::new(h.name.get_ref().clone(), line_col(file, text, h.name.span().start));
    host.ncpus = h.ncpus;
    host.mxj = h.mxj;
    host.maxmem = h.maxmem;
    host.host_type = h.host_type;
    host.model = h.model;
    for (k, v) in h.resources {
        match v {
            toml::Value::Boolean(true) => host.booleans.push(k),
            toml::Value::Boolean(false) => {}
            toml::Value::Integer(n) => {
                host.numbers.insert(k, n as f64);
            }
            toml::Value::Float(n) => {
                host.numbers.insert(k, n);
            }
            toml::Value::String(v) => {
                host.strings.insert(k, v);
            }
            _ => diags.error(
                host.loc.clone(),
                format!("host `{}`: resource `{k}`: expected true, a number or a string", host.name),
            ),
        }
    }
    host
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_and_hosts_read() {
        let mut d = Diagnostics::default();
        let (s, hosts) = read(
            "allot.toml",
            "[priority]\npolicy = \"lsf\"\n[state]\ndir = \"/tmp/x\"\n[fairshare]\nadjustment = \"memory\"\nmemory_threshold = 0.5\n\
             [[hosts]]\nname = \"a\"\nncpus = 8\nresources = { fast = true, scratch = 100, hgconnect = \"hg1\" }\n\
             [daemon]\nadmins = [\"alice\", \"bob\"]\nmetrics = \"127.0.0.1:9464\"\nusage_interval = 30\n",
            &mut d,
        );
        assert_eq!(s.admins, ["alice", "bob"]);
        assert_eq!(s.metrics, Some("127.0.0.1:9464".parse().expect("addr")));
        assert_eq!(s.usage_interval, Some(30));
        assert!(d.0.is_empty(), "{d}");
        assert_eq!(
            (s.policy.as_str(), s.state_dir.as_deref(), s.memory_adjustment_threshold),
            ("lsf", Some("/tmp/x"), Some(0.5))
        );
        assert_eq!((hosts[0].name.as_str(), hosts[0].cpus()), ("a", 8));
        assert_eq!(hosts[0].booleans, ["fast"]);
        assert_eq!(hosts[0].strings["hgconnect"], "hg1");
        assert_eq!(hosts[0].loc.to_string(), "allot.toml:9:8");
    }

    #[test]
    fn errors_are_located() {
        let mut d = Diagnostics::default();
        read("allot.toml", "[priority]\npolicy = \"slurm-fair-tree\"\n", &mut d);
        assert_eq!(
            d.0[0].to_string(),
            "allot.toml:2:10: error: [priority] policy: expected one of `lsf`, `slurm-classic`, `slurm-fairtree`, `slurm-tickets`, `flux-accounting`, found `slurm-fair-tree`"
        );
        let mut d = Diagnostics::default();
        read("allot.toml", "[daemon]\nmetrics = \"localhost\"\n", &mut d);
        assert_eq!(
            d.0[0].to_string(),
            "allot.toml:2:11: error: [daemon] metrics: expected an address and port such as `127.0.0.1:9464`, found `localhost`"
        );
        let mut d = Diagnostics::default();
        read("allot.toml", "[daemon]\nusage_interval = 0\n", &mut d);
        assert_eq!(
            d.0[0].to_string(),
            "allot.toml:2:18: error: [daemon] usage_interval: expected seconds, at least 1, found `0`"
        );
        let mut d = Diagnostics::default();
        read("allot.toml", "[state]\ndri = 1\n", &mut d);
        assert!(d.0[0].to_string().starts_with("allot.toml:2:1: error: unknown field `dri`"), "{}", d.0[0]);
    }
}
