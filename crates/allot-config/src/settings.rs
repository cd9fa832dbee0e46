//! `allot.toml`: allot's own settings, and hosts for sites without LSF's
//! cluster file.
//!
//! ```toml
//! [priority]
//! policy = "lsf"              # or slurm-classic, slurm-fairtree, slurm-tickets, flux-accounting, flux
//! accounts = "assoc.cfg"      # a `sacctmgr dump` file (relative to this directory)
//! dampening = 1               # slurm-classic's FairShareDampeningFactor
//! half_life = "7d"            # usage half-life (s, m, h, d, w; 0: no decay)
//! max_wait = "7d"             # the wait time that makes the wait factor 1
//! calc_period = "5m"          # priorities recomputed this often while jobs wait (and every pass)
//! favor_small = false         # the job size factor favours small jobs
//! job_size = "slots"          # what the job size factor counts: slots, or nodes (hosts)
//! reset = "none"              # usage reset: none, daily, weekly, monthly, quarterly, yearly
//! [priority.billing]          # billed units per second of each resource (cpu 1, others 0)
//! cpu = 1.0                   # per slot
//! memory_gb = 0.25            # per GB: reserved (rusage[mem]), or used when more
//! gpu = 2.0                   # per GPU a job reports holding
//! node = 0.0                  # per host of its allocation
//! energy_joule = 0.0          # per joule a job reports
//! [priority.weights]          # the six factors of spec 002 (0 when not given)
//! wait_time = 1000
//! fair_share = 100000
//! qos = 0
//! queue = 0
//! job_size = 0
//! user = 1000
//! [[priority.qos]]            # replaces expedite (2), normal (1), standby (0)
//! name = "expedite"
//! priority = 2
//! users = ["alice"]           # who may ask for it (everyone without it)
//! exempt = false              # exempt from size and run-time limits
//! [state]
//! dir = "/var/lib/allot"
//! [fairshare]
//! adjustment = "memory"       # or "none" (the default)
//! memory_threshold = 0.8
//! [daemon]
//! admins = ["alice", "bob"]   # may act on any job, and run badmin
//! metrics = "127.0.0.1:9464"  # Prometheus text endpoint (off without it)
//! usage_interval = 10         # seconds between measurements of running jobs
//! [cluster]                   # an agent on every host: see `cluster`
//! listen = "0.0.0.0:6880"
//! tls = "/etc/allot/tls"
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
    cluster: Option<crate::cluster::Entry>,
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
    half_life: Option<toml::Spanned<toml::Value>>,
    max_wait: Option<toml::Spanned<toml::Value>>,
    calc_period: Option<toml::Spanned<toml::Value>>,
    favor_small: Option<bool>,
    job_size: Option<toml::Spanned<String>>,
    reset: Option<toml::Spanned<String>>,
    billing: Option<Billing>,
    #[serde(default)]
    weights: Weights,
    qos: Option<Vec<Qos>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Weights {
    wait_time: Option<toml::Spanned<toml::Value>>,
    fair_share: Option<toml::Spanned<toml::Value>>,
    qos: Option<toml::Spanned<toml::Value>>,
    queue: Option<toml::Spanned<toml::Value>>,
    job_size: Option<toml::Spanned<toml::Value>>,
    user: Option<toml::Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Billing {
    cpu: Option<f64>,
    memory_gb: Option<f64>,
    gpu: Option<f64>,
    node: Option<f64>,
    energy_joule: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Qos {
    name: String,
    priority: u32,
    users: Option<Vec<String>>,
    #[serde(default)]
    exempt: bool,
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
pub const POLICIES: &[&str] = &["lsf", "slurm-classic", "slurm-fairtree", "slurm-tickets", "flux-accounting", "flux"];

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
    if let Some(p) = &file.priority.policy {
        if POLICIES.contains(&p.get_ref().as_str()) {
            s.policy = p.get_ref().clone();
            s.policy_loc = Some(line_col(name, text, p.span().start));
        } else {
            let loc = line_col(name, text, p.span().start);
            diags.error(
                loc,
                format!("[priority] policy: expected one of {}, found `{}`", quoted(POLICIES), p.get_ref()),
            );
        }
    }
    if let Some(a) = &file.priority.accounts {
        s.accounts = Some((a.get_ref().clone(), line_col(name, text, a.span().start)));
    }
    if let Some(d) = &file.priority.dampening {
        if *d.get_ref() >= 1.0 && d.get_ref().is_finite() {
            s.dampening = *d.get_ref();
        } else {
            let loc = line_col(name, text, d.span().start);
            diags.error(loc, format!("[priority] dampening: expected a number, at least 1, found `{}`", d.get_ref()));
        }
    }
    priority_factors(name, text, file.priority, &mut s, diags);
    let memory = &[("none", false), ("memory", true)];
    if let Some(true) =
        file.fairshare.adjustment.as_ref().and_then(|a| one_of(name, text, "[fairshare] adjustment", a, memory, diags))
    {
        let threshold = file.fairshare.memory_threshold.as_ref().map_or(1.0, |t| *t.get_ref());
        s.memory_adjustment_threshold = Some(threshold);
    }
    if let Some(t) = &file.fairshare.memory_threshold {
        if *t.get_ref() <= 0.0 || !t.get_ref().is_finite() {
            let loc = line_col(name, text, t.span().start);
            diags.error(loc, "[fairshare] memory_threshold: expected a number greater than 0");
            s.memory_adjustment_threshold = None;
        }
    }
    s.cluster = file.cluster.and_then(|c| crate::cluster::read(name, text, c, diags));
    let hosts = file.hosts.into_iter().map(|h| host(name, text, h, diags)).collect();
    (s, hosts)
}

/// The job priority's parameters: durations, weights, QoS levels.
fn priority_factors(name: &str, text: &str, p: Priority, s: &mut AllotSettings, diags: &mut Diagnostics) {
    let mut duration = |key: &str, v: &toml::Spanned<toml::Value>| -> Option<u64> {
        let parsed = match v.get_ref() {
            toml::Value::Integer(n) => u64::try_from(*n).ok(),
            toml::Value::String(t) => crate::lsf::values::parse_all(seconds, t).ok(),
            _ => None,
        };
        if parsed.is_none() {
            let loc = line_col(name, text, v.span().start);
            diags.error(loc, format!("[priority] {key}: expected seconds, or a number with s, m, h, d or w (`7d`)"));
        }
        parsed
    };
    if let Some(v) = &p.half_life {
        s.half_life = duration("half_life", v).unwrap_or(s.half_life);
    }
    if let Some(v) = &p.max_wait {
        s.priority.max_wait = duration("max_wait", v).unwrap_or(s.priority.max_wait);
    }
    if let Some(v) = &p.calc_period {
        s.priority.calc_period = duration("calc_period", v).unwrap_or(s.priority.calc_period);
    }
    s.priority.favor_small = p.favor_small.unwrap_or(false);
    if let Some(v) = &p.job_size {
        use allot_engine::multifactor::priority::SizeBy;
        let sizes = &[("slots", SizeBy::Slots), ("nodes", SizeBy::Nodes)];
        s.priority.size_by = one_of(name, text, "[priority] job_size", v, sizes, diags).unwrap_or(s.priority.size_by);
    }
    if let Some(v) = &p.reset {
        use allot_engine::multifactor::ledger::ResetPeriod;
        let periods = &[
            ("none", ResetPeriod::None),
            ("daily", ResetPeriod::Daily),
            ("weekly", ResetPeriod::Weekly),
            ("monthly", ResetPeriod::Monthly),
            ("quarterly", ResetPeriod::Quarterly),
            ("yearly", ResetPeriod::Yearly),
        ];
        s.usage_reset = one_of(name, text, "[priority] reset", v, periods, diags).unwrap_or(s.usage_reset);
    }
    if let Some(b) = &p.billing {
        let d = allot_engine::multifactor::ledger::Billing::default();
        let weights = [b.cpu, b.memory_gb, b.gpu, b.node, b.energy_joule];
        if weights.iter().flatten().any(|w| !w.is_finite() || *w < 0.0) {
            let loc = line_col(name, text, text.find("[priority.billing]").unwrap_or(0));
            diags.error(loc, "[priority.billing]: expected numbers, 0 or more");
        } else {
            s.billing = allot_engine::multifactor::ledger::Billing {
                cpu: b.cpu.unwrap_or(d.cpu),
                memory_gb: b.memory_gb.unwrap_or(d.memory_gb),
                gpu: b.gpu.unwrap_or(d.gpu),
                node: b.node.unwrap_or(d.node),
                energy_joule: b.energy_joule.unwrap_or(d.energy_joule),
            };
        }
    }
    let w = &mut s.priority.weights;
    let weights = [
        ("wait_time", &p.weights.wait_time, &mut w.wait_time),
        ("fair_share", &p.weights.fair_share, &mut w.fair_share),
        ("qos", &p.weights.qos, &mut w.qos),
        ("queue", &p.weights.queue, &mut w.queue),
        ("job_size", &p.weights.job_size, &mut w.job_size),
        ("user", &p.weights.user, &mut w.user),
    ];
    for (key, given, into) in weights {
        let Some(v) = given else { continue };
        let n = match v.get_ref() {
            toml::Value::Integer(n) => Some(*n as f64),
            toml::Value::Float(x) => Some(*x),
            _ => None,
        };
        match n {
            Some(n) if n >= 0.0 && n.is_finite() => *into = n,
            _ => diags.error(
                line_col(name, text, v.span().start),
                format!("[priority.weights] {key}: expected a number, 0 or more"),
            ),
        }
    }
    if let Some(levels) = p.qos {
        s.priority.qos = levels
            .into_iter()
            .map(|q| allot_engine::multifactor::priority::QosLevel {
                name: q.name,
                priority: q.priority,
                users: q.users,
                exempt: q.exempt,
            })
            .collect();
    }
}

/// `7d`, `36h`, `90m`, `45s`, `2w`, or seconds.
fn seconds(input: &mut &str) -> winnow::ModalResult<u64> {
    use winnow::Parser;
    use winnow::ascii::dec_uint;
    use winnow::combinator::opt;
    use winnow::token::one_of;
    let n: u64 = dec_uint.parse_next(input)?;
    let unit = opt(one_of(['s', 'm', 'h', 'd', 'w'])).parse_next(input)?;
    let scale = match unit {
        Some('m') => 60,
        Some('h') => 3600,
        Some('d') => 86_400,
        Some('w') => 7 * 86_400,
        _ => 1,
    };
    Ok(n.saturating_mul(scale))
}

/// What the word a key gives stands for among `options`; a located error
/// listing them (`expected `a`, `b` or `c`, found `x``) when none.
fn one_of<T: Copy>(
    name: &str,
    text: &str,
    key: &str,
    v: &toml::Spanned<String>,
    options: &[(&str, T)],
    diags: &mut Diagnostics,
) -> Option<T> {
    let found = options.iter().find(|o| o.0 == v.get_ref()).map(|o| o.1);
    if found.is_none() {
        let words: Vec<&str> = options.iter().map(|o| o.0).collect();
        let list = match words.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or `{last}`", quoted(rest)),
            _ => quoted(&words),
        };
        diags.error(line_col(name, text, v.span().start), format!("{key}: expected {list}, found `{}`", v.get_ref()));
    }
    found
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

    /// The issue's own `[priority]` example, and its errors located: an
    /// unknown weight, a bad duration, a negative weight.
    #[test]
    fn priority_weights_durations_and_qos_read() {
        let mut d = Diagnostics::default();
        let text = "[priority]\npolicy = \"slurm-fairtree\"\naccounts = \"associations.cfg\"\nhalf_life = \"7d\"\n\
                    max_wait = 86400\nfavor_small = true\ncalc_period = \"1m\"\n\
                    [priority.weights]\nwait_time = 1000\nfair_share = 100000\nqos = 0\nqueue = 0\njob_size = 0\nuser = 1000\n\
                    [[priority.qos]]\nname = \"gold\"\npriority = 5\nusers = [\"alice\"]\n\
                    [[priority.qos]]\nname = \"scavenger\"\npriority = 0\nexempt = true\n";
        let (s, _) = read("allot.toml", text, &mut d);
        assert!(d.0.is_empty(), "{d}");
        assert_eq!((s.policy.as_str(), s.half_life, s.priority.max_wait), ("slurm-fairtree", 7 * 86_400, 86_400));
        assert_eq!(
            s.accounts.as_ref().map(|a| (a.0.as_str(), a.1.to_string())),
            Some(("associations.cfg", "allot.toml:3:12".into()))
        );
        assert!(s.priority.favor_small);
        assert_eq!(s.priority.calc_period, 60);
        assert_eq!(s.priority.size_by, allot_engine::multifactor::priority::SizeBy::Slots, "by default");
        let (n, _) = read("allot.toml", "[priority]\njob_size = \"nodes\"\n", &mut d);
        assert_eq!(n.priority.size_by, allot_engine::multifactor::priority::SizeBy::Nodes);
        let w = s.priority.weights;
        assert_eq!(
            [w.wait_time, w.fair_share, w.qos, w.queue, w.job_size, w.user],
            [1000.0, 100_000.0, 0.0, 0.0, 0.0, 1000.0]
        );
        assert_eq!(s.priority.qos.len(), 2);
        assert!(s.priority.may_use_qos("gold", "alice") && !s.priority.may_use_qos("gold", "bob"));
        assert!(s.priority.qos_level("scavenger").is_some_and(|q| q.exempt));
        let (s, _) = read("allot.toml", "[priority]\nreset = \"monthly\"\n[priority.billing]\ngpu = 2.5\n", &mut d);
        assert_eq!(s.usage_reset, allot_engine::multifactor::ledger::ResetPeriod::Monthly);
        assert_eq!((s.billing.cpu, s.billing.gpu, s.billing.memory_gb), (1.0, 2.5, 0.0));
        // Defaults: one week, the three levels.
        let (s, _) = read("allot.toml", "", &mut d);
        assert_eq!((s.half_life, s.priority.max_wait, s.priority.qos.len()), (604_800, 604_800, 3));

        let cases = [
            ("[priority.weights]\nage = 3\n", "allot.toml:2:1: error: unknown field `age`"),
            (
                "[priority]\nhalf_life = \"7 days\"\n",
                "allot.toml:2:13: error: [priority] half_life: expected seconds, or a number with s, m, h, d or w (`7d`)",
            ),
            (
                "[priority.weights]\nuser = -1\n",
                "allot.toml:2:8: error: [priority.weights] user: expected a number, 0 or more",
            ),
            (
                "[priority]\nreset = \"hourly\"\n",
                "allot.toml:2:9: error: [priority] reset: expected `none`, `daily`, `weekly`, `monthly`, `quarterly` or `yearly`, found `hourly`",
            ),
            (
                "[fairshare]\nadjustment = \"cpu\"\n",
                "allot.toml:2:14: error: [fairshare] adjustment: expected `none` or `memory`, found `cpu`",
            ),
            (
                "[priority]\njob_size = \"cpus\"\n",
                "allot.toml:2:12: error: [priority] job_size: expected `slots` or `nodes`, found `cpus`",
            ),
            (
                "[priority.billing]\ncpu = -1.0\n",
                "allot.toml:1:1: error: [priority.billing]: expected numbers, 0 or more",
            ),
            ("[priority.billing]\ncpus = 1.0\n", "allot.toml:2:1: error: unknown field `cpus`"),
            (
                "[priority]\ndampening = 0.5\n",
                "allot.toml:2:13: error: [priority] dampening: expected a number, at least 1, found `0.5`",
            ),
        ];
        for (text, want) in cases {
            let mut d = Diagnostics::default();
            read("allot.toml", text, &mut d);
            assert!(d.0.first().is_some_and(|x| x.to_string().starts_with(want)), "{text}: {d}");
        }
    }

    #[test]
    fn errors_are_located() {
        let mut d = Diagnostics::default();
        read("allot.toml", "[priority]\npolicy = \"slurm-fair-tree\"\n", &mut d);
        assert_eq!(
            d.0[0].to_string(),
            "allot.toml:2:10: error: [priority] policy: expected one of `lsf`, `slurm-classic`, `slurm-fairtree`, `slurm-tickets`, `flux-accounting`, `flux`, found `slurm-fair-tree`"
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
