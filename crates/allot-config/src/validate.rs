//! Validation across files (spec 000 and 004), and what follows from the
//! files together: each host's slots, host lists resolved, the fairshare
//! policies.

use std::collections::{BTreeMap, BTreeSet};

use allot_engine::shares::ShareTarget;

use crate::diag::{Diagnostics, Location};
use crate::lsf::hosts::HostRow;
use crate::model::{Config, Exclusive, Host, HostRef, Queue};

/// Hosts from the cluster file and `allot.toml`, in that order, then hosts
/// named only in `lsb.hosts`; MXJ from `lsb.hosts` (the `default` row for
/// hosts without their own; `!` is the CPU count). A host defined twice is
/// an error.
pub fn merge_hosts(defined: Vec<Host>, rows: &[HostRow], diags: &mut Diagnostics) -> Vec<Host> {
    let mut hosts: Vec<Host> = Vec::new();
    let mut seen: BTreeMap<String, Location> = BTreeMap::new();
    for h in defined {
        if let Some(first) = seen.get(&h.name) {
            diags.error(h.loc.clone(), format!("host `{}` is already defined at {first}", h.name));
            continue;
        }
        seen.insert(h.name.clone(), h.loc.clone());
        hosts.push(h);
    }
    let default_row = rows.iter().find(|r| r.name.eq_ignore_ascii_case("default"));
    for row in rows.iter().filter(|r| !r.name.eq_ignore_ascii_case("default")) {
        if !seen.contains_key(&row.name) {
            seen.insert(row.name.clone(), row.loc.clone());
            hosts.push(Host::new(row.name.clone(), row.loc.clone()));
        }
    }
    for h in &mut hosts {
        let row = rows.iter().find(|r| r.name == h.name).or(default_row);
        match row.and_then(|r| r.mxj) {
            Some(Some(n)) => h.mxj = Some(n),
            Some(None) => h.mxj = h.ncpus,
            None => {}
        }
    }
    hosts
}

/// Host groups being expanded (the path, so a group that contains itself
/// stops there) and those expanded (each once, however often it is named).
#[derive(Default)]
struct Expansion {
    path: BTreeSet<String>,
    done: BTreeMap<String, Vec<String>>,
}

impl Config {
    /// The hosts a HOSTS-style list names, in host order: `all` (or a list
    /// of only exclusions) is every host; a host group is its members,
    /// recursively (a group met again on the way, one that contains
    /// itself, adds nothing more); `~name` takes a host or group out.
    pub fn resolve_hosts(&self, refs: &[HostRef]) -> Vec<String> {
        self.resolve_hosts_within(refs, &mut Expansion::default())
    }

    /// [`Config::resolve_hosts`] inside the groups on the way here, with
    /// the groups already expanded.
    fn resolve_hosts_within(&self, refs: &[HostRef], how: &mut Expansion) -> Vec<String> {
        let mut included = BTreeSet::new();
        let mut excluded = BTreeSet::new();
        let only_exclusions = refs.iter().all(|r| r.exclude);
        if refs.is_empty() || only_exclusions {
            included.extend(self.hosts.iter().map(|h| h.name.clone()));
        }
        for r in refs {
            let set = if r.exclude { &mut excluded } else { &mut included };
            self.expand_host_name(&r.name, set, how);
        }
        self.hosts.iter().map(|h| h.name.clone()).filter(|n| included.contains(n) && !excluded.contains(n)).collect()
    }

    fn expand_host_name(&self, name: &str, out: &mut BTreeSet<String>, how: &mut Expansion) {
        if name.eq_ignore_ascii_case("none") {
            // LSF's `HOSTS = none`: a MultiCluster queue that only sends
            // jobs to other clusters has no host here.
        } else if name.eq_ignore_ascii_case("all") {
            out.extend(self.hosts.iter().map(|h| h.name.clone()));
        } else if let Some(g) = self.host_groups.iter().find(|g| g.name == name) {
            if let Some(members) = how.done.get(name) {
                out.extend(members.iter().cloned());
            } else if how.path.insert(name.to_string()) {
                let members = self.resolve_hosts_within(&g.members, how);
                how.path.remove(name);
                out.extend(members.iter().cloned());
                how.done.insert(name.to_string(), members);
            }
        } else {
            out.insert(name.to_string());
        }
    }

    /// Whether host group `target` is among `members`, or within a group
    /// among them (each group looked into once).
    fn group_reaches(&self, target: &str, members: &[HostRef], looked: &mut BTreeSet<String>) -> bool {
        members.iter().any(|m| {
            m.name == target
                || (looked.insert(m.name.clone())
                    && self
                        .host_groups
                        .iter()
                        .find(|g| g.name == m.name)
                        .is_some_and(|g| self.group_reaches(target, &g.members, looked)))
        })
    }

    pub(crate) fn is_host_or_group(&self, name: &str) -> bool {
        name.eq_ignore_ascii_case("all")
            || name.eq_ignore_ascii_case("none")
            || name.eq_ignore_ascii_case("others")
            || self.hosts.iter().any(|h| h.name == name)
            || self.host_groups.iter().any(|g| g.name == name)
    }

    pub fn queue(&self, name: &str) -> Option<&Queue> {
        self.queues.iter().find(|q| q.name == name)
    }
}

/// The queues and hosts `lsb.resources`' limits name must be there (a
/// host name may be a host group's).
pub fn limit_names(config: &Config, named: &crate::lsf::resources::Named, diags: &mut Diagnostics) {
    for (q, loc) in &named.queues {
        if config.queue(q).is_none() {
            diags.error(loc.clone(), format!("Limit: queue `{q}` is not defined in lsb.queues"));
        }
    }
    for (h, loc) in &named.hosts {
        if !config.is_host_or_group(h) || h.eq_ignore_ascii_case("none") || h.eq_ignore_ascii_case("others") {
            diags.error(loc.clone(), format!("Limit: `{h}` is neither a host nor a host group"));
        }
    }
}

/// Checks the rules that span files; reports each problem found.
pub fn validate(config: &mut Config, diags: &mut Diagnostics) {
    duplicate_names(config, diags);
    host_references(config, diags);
    share_groups(config, diags);
    cross_queue(config, diags);
    partitions(config, diags);
    slot_pools(config, diags);
    compute_units(config, diags);
    queue_misc(config, diags);
    preemption(config, diags);
    crate::plan::plans(config, diags);
}

fn duplicate_names(config: &Config, diags: &mut Diagnostics) {
    let mut seen: BTreeMap<&str, &Location> = BTreeMap::new();
    for q in &config.queues {
        if let Some(first) = seen.insert(&q.name, &q.loc) {
            diags.error(q.loc.clone(), format!("queue `{}` is already defined at {first}", q.name));
        }
    }
    let mut seen: BTreeMap<&str, &Location> = BTreeMap::new();
    for g in &config.host_groups {
        if let Some(first) = seen.insert(&g.name, &g.loc) {
            diags.error(g.loc.clone(), format!("host group `{}` is already defined at {first}", g.name));
        }
    }
    let mut seen: BTreeMap<&str, &Location> = BTreeMap::new();
    for p in &config.partitions {
        if let Some(first) = seen.insert(&p.name, &p.loc) {
            diags.error(p.loc.clone(), format!("host partition `{}` is already defined at {first}", p.name));
        }
    }
}

/// Unknown hosts in HOSTS lists are warned about and ignored, as LSF does
/// at reconfiguration (only when the configuration defines hosts at all).
fn host_references(config: &Config, diags: &mut Diagnostics) {
    if config.hosts.is_empty() {
        return;
    }
    for q in &config.queues {
        for r in q.hosts.iter().filter(|r| !config.is_host_or_group(&r.name)) {
            let what = if r.first_exec { "first execution host candidate" } else { "host" };
            diags
                .warning(q.loc_of("HOSTS"), format!("queue `{}`: HOSTS: unknown {what} `{}`, ignored", q.name, r.name));
        }
        // A list that names no host of this cluster is no hosts, never
        // all of them.
        if !q.hosts.is_empty() && config.resolve_hosts(&q.hosts).is_empty() {
            let why = if q.hosts.iter().any(|r| r.name.eq_ignore_ascii_case("none")) {
                "`none`: a queue that sends its jobs to other clusters, which allot does not do"
            } else {
                "no host of this cluster"
            };
            diags.warning(
                q.loc_of("HOSTS"),
                format!("queue `{}`: HOSTS: {why}; the queue has no hosts, and refuses every job", q.name),
            );
        }
    }
    for g in &config.host_groups {
        for r in g.members.iter().filter(|r| !config.is_host_or_group(&r.name)) {
            diags.warning(g.loc.clone(), format!("host group `{}`: unknown member `{}`, ignored", g.name, r.name));
        }
        if config.group_reaches(&g.name, &g.members, &mut BTreeSet::new()) {
            diags.error(g.loc.clone(), format!("host group `{}` contains itself", g.name));
        }
    }
    for p in &config.partitions {
        for r in p.hosts.iter().filter(|r| !config.is_host_or_group(&r.name)) {
            diags.warning(p.loc.clone(), format!("host partition `{}`: unknown host `{}`, ignored", p.name, r.name));
        }
    }
}

/// `group@` must name a user group (`lsb.users` checks its own share trees).
fn share_groups(config: &Config, diags: &mut Diagnostics) {
    let queue_lists = config.queues.iter().filter_map(|q| Some((q.fairshare.as_ref()?, q.loc_of("FAIRSHARE"))));
    let part_lists = config.partitions.iter().map(|p| (&p.shares, p.shares_loc.clone()));
    for (list, loc) in queue_lists.chain(part_lists) {
        for a in list {
            if let ShareTarget::GroupEach(g) = &a.target {
                if !config.groups.is_group(g) {
                    diags.error(
                        loc.clone(),
                        format!("`[{g}@, {}]`: user group `{g}` is not defined in lsb.users", a.shares),
                    );
                }
            }
        }
    }
}

/// spec 000, "Configuring cross-queue fairshare": FAIRSHARE in the master
/// only (ignored in slaves); a queue in one set only; unless
/// DISPATCH_ORDER=QUEUE, no other queue's priority within the set's range.
fn cross_queue(config: &mut Config, diags: &mut Diagnostics) {
    let mut member_of: BTreeMap<String, String> = BTreeMap::new();
    let masters: Vec<usize> =
        (0..config.queues.len()).filter(|&i| !config.queues[i].fairshare_queues.is_empty()).collect();
    for &m in &masters {
        let master = config.queues[m].clone();
        if master.fairshare.is_none() {
            diags.error(
                master.loc_of("FAIRSHARE_QUEUES"),
                format!("queue `{}`: FAIRSHARE_QUEUES needs FAIRSHARE in the same (master) queue", master.name),
            );
            continue;
        }
        if let Some(other) = member_of.insert(master.name.clone(), master.name.clone()).filter(|o| *o != master.name) {
            diags.error(
                master.loc.clone(),
                format!("queue `{}` is already in the cross-queue set of `{other}`", master.name),
            );
        }
        for slave in &master.fairshare_queues {
            if *slave == master.name {
                continue;
            }
            let Some(si) = config.queues.iter().position(|q| q.name == *slave) else {
                diags.error(
                    master.loc_of("FAIRSHARE_QUEUES"),
                    format!("FAIRSHARE_QUEUES: queue `{slave}` does not exist"),
                );
                continue;
            };
            if let Some(other) = member_of.insert(slave.clone(), master.name.clone()) {
                diags.error(
                    master.loc_of("FAIRSHARE_QUEUES"),
                    format!("FAIRSHARE_QUEUES: queue `{slave}` is already in the cross-queue set of `{other}`"),
                );
            }
            let sq = &mut config.queues[si];
            if !sq.fairshare_queues.is_empty() {
                diags.error(
                    sq.loc_of("FAIRSHARE_QUEUES"),
                    format!("queue `{slave}` is a slave of `{}` and cannot be a master", master.name),
                );
            }
            if sq.fairshare.take().is_some() {
                diags.warning(
                    sq.loc_of("FAIRSHARE"),
                    format!(
                        "queue `{slave}`: FAIRSHARE is ignored; the queue takes the policy of master queue `{}`",
                        master.name
                    ),
                );
            }
        }
    }
    for &m in &masters {
        let master = &config.queues[m];
        if master.fairshare.is_none() || master.dispatch_order_queue {
            continue;
        }
        let set: Vec<&Queue> = config.queues.iter().filter(|q| member_of.get(&q.name) == Some(&master.name)).collect();
        let lo = set.iter().map(|q| q.priority).min().unwrap_or(0);
        let hi = set.iter().map(|q| q.priority).max().unwrap_or(0);
        for q in config.queues.iter().filter(|q| !member_of.contains_key(&q.name)) {
            if (lo..=hi).contains(&q.priority) {
                diags.error(
                    q.loc_of("PRIORITY"),
                    format!(
                        "queue `{}`: PRIORITY {} falls in the range {lo}..{hi} of the cross-queue fairshare set of `{}` \
                         (allowed only with DISPATCH_ORDER=QUEUE)",
                        q.name, q.priority, master.name
                    ),
                );
            }
        }
    }
}

/// A host in one partition only; no host-partition fairshare together with
/// queue-level fairshare; partition hosts are not in slot pools.
fn partitions(config: &Config, diags: &mut Diagnostics) {
    let mut owner: BTreeMap<String, &str> = BTreeMap::new();
    for p in &config.partitions {
        for h in config.resolve_hosts(&p.hosts) {
            if let Some(first) = owner.insert(h.clone(), &p.name) {
                diags.error(
                    p.loc.clone(),
                    format!("host `{h}` is already in host partition `{first}`; a host can be in one partition only"),
                );
            }
        }
    }
    if let (Some(p), Some(q)) = (config.partitions.first(), config.queues.iter().find(|q| q.fairshare.is_some())) {
        diags.error(
            q.loc_of("FAIRSHARE"),
            format!(
                "queue `{}`: queue-level fairshare and host partition fairshare (`{}` at {}) cannot both be configured in one cluster",
                q.name, p.name, p.loc
            ),
        );
    }
}

/// spec 000, "Queue-based Fairshare": SLOT_POOL with SLOT_SHARE; the queues
/// of a pool use the same hosts and are not preemptive or preemptable.
fn slot_pools(config: &Config, diags: &mut Diagnostics) {
    let partition_hosts: BTreeSet<String> =
        config.partitions.iter().flat_map(|p| config.resolve_hosts(&p.hosts)).collect();
    let mut pool_hosts: BTreeMap<&str, (Vec<String>, &str)> = BTreeMap::new();
    for q in &config.queues {
        match (&q.slot_pool, q.slot_share) {
            (Some(_), None) => {
                diags.error(q.loc_of("SLOT_POOL"), format!("queue `{}`: SLOT_POOL needs SLOT_SHARE", q.name))
            }
            (None, Some(_)) => {
                diags.error(q.loc_of("SLOT_SHARE"), format!("queue `{}`: SLOT_SHARE needs SLOT_POOL", q.name))
            }
            _ => {}
        }
        let Some(pool) = q.slot_pool.as_deref() else { continue };
        let hosts = config.resolve_hosts(&q.hosts);
        match pool_hosts.get(pool) {
            Some((first, first_q)) if *first != hosts => diags.error(
                q.loc_of("HOSTS"),
                format!(
                    "queue `{}`: the queues of slot pool `{pool}` must use the same hosts as queue `{first_q}`",
                    q.name
                ),
            ),
            Some(_) => {}
            None => {
                pool_hosts.insert(pool, (hosts.clone(), &q.name));
            }
        }
        if q.preemption.preemptive.is_some() || q.preemption.preemptable.is_some() {
            diags.error(
                q.loc_of("PREEMPTION"),
                format!("queue `{}`: a queue in slot pool `{pool}` cannot be preemptive or preemptable", q.name),
            );
        }
        if let Some(h) = hosts.iter().find(|h| partition_hosts.contains(*h)) {
            diags.error(
                q.loc_of("SLOT_POOL"),
                format!("queue `{}`: host `{h}` of slot pool `{pool}` is in a host partition", q.name),
            );
        }
        if q.slot_reserve.is_some() {
            diags.warning(
                q.loc_of("SLOT_RESERVE"),
                format!("queue `{}`: SLOT_RESERVE should not be used in slot pool `{pool}`", q.name),
            );
        }
        if q.fairshare.is_some() && !q.fairshare_queues.is_empty() {
            diags.warning(
                q.loc_of("SLOT_POOL"),
                format!("queue `{}`: cross-queue fairshare can undo the decisions of slot pool `{pool}`", q.name),
            );
        }
    }
}

/// ComputeUnit TYPE must be a COMPUTE_UNIT_TYPES type; the finest type
/// holds hosts and host groups, a coarser type holds compute units of finer
/// types; EXCLUSIVE=CU[type] names a type.
fn compute_units(config: &Config, diags: &mut Diagnostics) {
    let types = &config.params.compute_unit_types;
    let mut level: BTreeMap<&str, usize> = BTreeMap::new();
    for cu in &config.compute_units {
        let Some(ti) = types.iter().position(|t| *t == cu.cu_type) else {
            diags.error(
                cu.loc.clone(),
                format!("compute unit `{}`: TYPE `{}` is not in COMPUTE_UNIT_TYPES", cu.name, cu.cu_type),
            );
            continue;
        };
        if let Some(first) = config.compute_units.iter().find(|c| c.name == cu.name && c.loc != cu.loc) {
            if first.loc < cu.loc {
                diags.error(cu.loc.clone(), format!("compute unit `{}` is already defined at {}", cu.name, first.loc));
            }
        }
        for m in &cu.members {
            let ok = if ti == 0 {
                config.hosts.is_empty() || config.is_host_or_group(m)
            } else {
                level.get(m.as_str()).is_some_and(|&l| l < ti)
            };
            if !ok {
                let expected =
                    if ti == 0 { "a host or host group" } else { "a compute unit of a finer type, defined above" };
                diags.error(cu.loc.clone(), format!("compute unit `{}`: member `{m}` is not {expected}", cu.name));
            }
        }
        level.insert(&cu.name, ti);
    }
    for q in &config.queues {
        if let Exclusive::ComputeUnit(t) = &q.exclusive {
            if !types.contains(t) {
                diags.error(
                    q.loc_of("EXCLUSIVE"),
                    format!("queue `{}`: EXCLUSIVE=CU[{t}]: `{t}` is not in COMPUTE_UNIT_TYPES", q.name),
                );
            }
        }
    }
}

fn queue_misc(config: &Config, diags: &mut Diagnostics) {
    for name in &config.params.default_queue {
        if config.queue(name).is_none() {
            diags.error(
                config.params.loc_of("DEFAULT_QUEUE"),
                format!("DEFAULT_QUEUE: queue `{name}` is not defined in lsb.queues"),
            );
        }
    }
    for q in &config.queues {
        for h in q.hosts.iter().filter(|h| h.first_exec) {
            let why = if crate::engine::is_keyword(&h.name) {
                "cannot be a first execution host candidate"
            } else if h.preference.is_some() {
                "takes no preference as a first execution host candidate"
            } else {
                continue;
            };
            diags.warning(q.loc_of("HOSTS"), format!("queue `{}`: HOSTS: `{}!` {why}; ignored", q.name, h.name));
        }
    }
    // Spec 004: "Interruptible backfill is disabled if BACKFILL and
    // RUNLIMIT are not configured in the queue"; it belongs in "the lowest
    // priority queue in the cluster".
    for q in config.queues.iter().filter(|q| q.interruptible_backfill.is_some()) {
        let at = q.loc_of("INTERRUPTIBLE_BACKFILL");
        if !q.backfill || q.runlimit.is_none() {
            diags.warning(
                at.clone(),
                format!(
                    "queue `{}`: INTERRUPTIBLE_BACKFILL needs BACKFILL = Y and a RUNLIMIT in the queue; ignored",
                    q.name
                ),
            );
        }
        if let Some(lower) = config.queues.iter().filter(|o| o.priority < q.priority).min_by_key(|o| o.priority) {
            diags.warning(
                at,
                format!(
                    "queue `{}`: INTERRUPTIBLE_BACKFILL belongs in the lowest priority queue (`{}` has PRIORITY {})",
                    q.name, lower.name, lower.priority
                ),
            );
        }
    }
    let mut interruptible = config.queues.iter().filter(|q| q.interruptible_backfill.is_some());
    if let Some(first) = interruptible.next() {
        for q in interruptible {
            diags.error(
                q.loc_of("INTERRUPTIBLE_BACKFILL"),
                format!(
                    "queue `{}`: only one queue can be an interruptible backfill queue (`{}` is)",
                    q.name, first.name
                ),
            );
        }
    }
}

/// PREEMPTION: the queues a list names exist; a queue preempts only
/// queues of lower priority (LSF: "Jobs in this queue preempt jobs from
/// the specified lower-priority queues"), so a listed queue of equal or
/// higher priority is said to take no part.
fn preemption(config: &Config, diags: &mut Diagnostics) {
    for q in &config.queues {
        let p = &q.preemption;
        let named = p.preemptive.iter().flatten().map(|(n, _)| (n, true));
        for (name, preemptive) in named.chain(p.preemptable.iter().flatten().map(|n| (n, false))) {
            let at = q.loc_of("PREEMPTION");
            let Some(other) = config.queue(name) else {
                diags.error(at, format!("queue `{}`: PREEMPTION: queue `{name}` is not defined in lsb.queues", q.name));
                continue;
            };
            let (lower, word) = if preemptive {
                (other.priority < q.priority, "lower")
            } else {
                (other.priority > q.priority, "higher")
            };
            if !lower {
                diags.warning(
                    at,
                    format!(
                        "queue `{}`: PREEMPTION: queue `{name}` (PRIORITY {}) is not of {word} priority than this one ({}); \
                         preemption goes from higher to lower priority only, so it takes no part",
                        q.name, other.priority, q.priority
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
