//! `[cluster]` of `allot.toml`: allotd with an agent on every host.
//!
//! ```toml
//! [cluster]
//! listen = "0.0.0.0:6880"     # where agents connect (TLS)
//! tls = "/etc/allot/tls"      # `allot keygen`'s directory (relative: to this one)
//! heartbeat = 10              # seconds between an agent's heartbeats
//! unreach_after = 60          # silent this long: `unreach`, no new work
//! unavail_after = 600         # silent this long: `unavail`, its jobs end
//! admin_hosts = ["login1"]    # hosts whose root is root to allotd
//! ```
//!
//! The LSF commands work on every host with an agent, through it
//! (`allot_agent::commands`): allotd takes the caller's uid from the agent
//! of the host its certificate names. Root there is root to allotd only on
//! an `admin_hosts` host (allotd's own host needs no listing); elsewhere a
//! request of root's is refused, as no host's root can be trusted with the
//! cluster because it runs an agent. Every other uid is the same user on
//! every host, as the site's password database (NSS) makes it.
//!
//! Without `[cluster]`, allotd runs every job on its own machine, as it
//! always did; with it, every configured host runs `allot-agent`, and a
//! job runs on the first host of its allocation (LSF's first execution
//! host), through that host's agent.

use serde::Deserialize;

use crate::diag::Diagnostics;
use crate::settings::line_col;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Entry {
    listen: toml::Spanned<String>,
    tls: toml::Spanned<String>,
    heartbeat: Option<toml::Spanned<i64>>,
    unreach_after: Option<toml::Spanned<i64>>,
    unavail_after: Option<toml::Spanned<i64>>,
    #[serde(default)]
    admin_hosts: Vec<String>,
}

/// allotd's cluster: where agents connect, its certificates, and the
/// timeouts of the host states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSettings {
    pub listen: std::net::SocketAddr,
    /// As written: relative to the configuration directory unless absolute.
    pub tls: String,
    pub heartbeat: u64,
    pub unreach_after: u64,
    pub unavail_after: u64,
    /// Hosts whose root is root to allotd (commands through their agents).
    pub admin_hosts: Vec<String>,
}

pub const DEFAULT_HEARTBEAT: u64 = 10;
/// Six heartbeats missed: a host is `unreach` (LSF's sbatchd is thought
/// unreachable after about as long).
pub const DEFAULT_UNREACH_AFTER: u64 = 60;
/// Ten minutes without a word: `unavail`, and its jobs are given up.
pub const DEFAULT_UNAVAIL_AFTER: u64 = 600;

pub(crate) fn read(name: &str, text: &str, e: Entry, diags: &mut Diagnostics) -> Option<ClusterSettings> {
    let listen = match e.listen.get_ref().parse::<std::net::SocketAddr>() {
        Ok(a) => Some(a),
        Err(_) => {
            diags.error(
                line_col(name, text, e.listen.span().start),
                format!(
                    "[cluster] listen: expected an address and port such as `0.0.0.0:6880`, found `{}`",
                    e.listen.get_ref()
                ),
            );
            None
        }
    };
    let mut seconds = |key: &str, v: &Option<toml::Spanned<i64>>, default: u64| match v {
        None => Some(default),
        Some(v) => match u64::try_from(*v.get_ref()) {
            Ok(n) if n >= 1 => Some(n),
            _ => {
                let loc = line_col(name, text, v.span().start);
                diags.error(loc, format!("[cluster] {key}: expected seconds, at least 1, found `{}`", v.get_ref()));
                None
            }
        },
    };
    let heartbeat = seconds("heartbeat", &e.heartbeat, DEFAULT_HEARTBEAT);
    let unreach_after = seconds("unreach_after", &e.unreach_after, DEFAULT_UNREACH_AFTER);
    let unavail_after = seconds("unavail_after", &e.unavail_after, DEFAULT_UNAVAIL_AFTER);
    let (heartbeat, unreach_after, unavail_after) = (heartbeat?, unreach_after?, unavail_after?);
    if unreach_after <= heartbeat || unavail_after <= unreach_after {
        let at =
            e.unreach_after.as_ref().or(e.unavail_after.as_ref()).map_or(e.listen.span().start, |v| v.span().start);
        diags.error(
            line_col(name, text, at),
            format!(
                "[cluster]: expected heartbeat < unreach_after < unavail_after, found {heartbeat}, {unreach_after}, {unavail_after}"
            ),
        );
        return None;
    }
    Some(ClusterSettings {
        listen: listen?,
        tls: e.tls.get_ref().clone(),
        heartbeat,
        unreach_after,
        unavail_after,
        admin_hosts: e.admin_hosts,
    })
}

#[cfg(test)]
mod tests {
    use crate::diag::Diagnostics;

    fn read(text: &str) -> (Option<super::ClusterSettings>, String) {
        let mut d = Diagnostics::default();
        let (s, _) = crate::settings::read("allot.toml", text, &mut d);
        (s.cluster, d.to_string())
    }

    #[test]
    fn a_cluster_section_is_read_with_defaults_and_located_errors() {
        let (c, d) = read("[cluster]\nlisten = \"127.0.0.1:6880\"\ntls = \"tls\"\n");
        assert_eq!(d, "");
        let c = c.expect("a cluster");
        assert_eq!(
            (c.listen.port(), c.tls.as_str(), c.heartbeat, c.unreach_after, c.unavail_after),
            (6880, "tls", 10, 60, 600)
        );
        assert!(c.admin_hosts.is_empty(), "no host's root is allotd's unless listed");
        let (c, _) = read("[cluster]\nlisten = \"127.0.0.1:6880\"\ntls = \"tls\"\nadmin_hosts = [\"login1\"]\n");
        assert_eq!(c.expect("a cluster").admin_hosts, ["login1"]);
        let (c, d) = read("[cluster]\nlisten = \"here\"\ntls = \"tls\"\n");
        assert!(c.is_none());
        assert!(d.contains("allot.toml:2:10: error: [cluster] listen: expected an address"), "{d}");
        let (_, d) = read("[cluster]\nlisten = \"127.0.0.1:1\"\ntls = \"t\"\nheartbeat = 0\n");
        assert!(
            d.contains("allot.toml:4:13: error: [cluster] heartbeat: expected seconds, at least 1, found `0`"),
            "{d}"
        );
        let (_, d) = read("[cluster]\nlisten = \"127.0.0.1:1\"\ntls = \"t\"\nunreach_after = 5\nunavail_after = 5\n");
        assert!(
            d.contains(
                "allot.toml:4:17: error: [cluster]: expected heartbeat < unreach_after < unavail_after, found 10, 5, 5"
            ),
            "{d}"
        );
        let (_, d) = read("[cluster]\nlisten = \"127.0.0.1:1\"\n");
        assert!(d.contains("missing field `tls`"), "{d}");
    }
}
