//! Hosts' CPUs as their agents find them, for the hosts whose
//! configuration gives neither `ncpus` nor MXJ (LSF detects `ncpus` the
//! same way): such a host has its CPUs as job slots, not 1.
//!
//! What the agents found is kept with the configuration's texts, as one
//! more text under a name no file can have ([`DETECTED_CPUS`], `HOST
//! NCPUS` a line), so that it is in allotd's log with every
//! reconfiguration, and a restart's replay and `allot sim --from` load the
//! same configuration through the same code ([`crate::load::load_texts`]).

use std::collections::BTreeMap;

use crate::model::Host;

/// The name of the CPUs found text among a configuration's texts.
pub const DETECTED_CPUS: &str = "(cpus found by the agents)";

/// The name of the text that makes this machine the one host of a
/// configuration that names none (`NAME CPUS MEMORY_MB`), as the embedded
/// defaults do: a directory holding only `allot.toml` (to turn metrics on,
/// say) has this machine to run its jobs on, not 0 hosts. allotd adds it
/// when it reads such a directory ([`this_machine`]), so that its log, a
/// restart's replay and `allot sim --from` all have it.
pub const THIS_MACHINE: &str = "(this machine: no host configured)";

/// `files` with [`THIS_MACHINE`] for this machine, if they name no host
/// and no `[cluster]` (whose hosts are its agents'); as they are
/// otherwise.
pub fn this_machine(mut files: Vec<(String, String)>) -> Vec<(String, String)> {
    files.retain(|(n, _)| n != THIS_MACHINE);
    let Ok((config, _)) = crate::load::load_texts(&files) else { return files };
    if config.hosts.is_empty() && config.settings.cluster.is_none() {
        let e = crate::defaults::engine_config();
        if let Some(h) = e.hosts.first() {
            let memory = h.attrs.maxmem.unwrap_or(0);
            files.push((THIS_MACHINE.to_string(), format!("{} {} {memory}\n", h.name, h.cpus)));
        }
    }
    files
}

/// The host [`THIS_MACHINE`] says, if `files` have it.
pub(crate) fn machine_host(files: &[(String, String)]) -> Option<Host> {
    let (name, text) = files.iter().find(|(n, _)| n == THIS_MACHINE)?;
    let mut words = text.split_whitespace();
    let host = words.next()?;
    let cpus: u32 = words.next()?.parse().ok().filter(|&n| n > 0)?;
    let memory: u64 = words.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    let loc = crate::diag::Location { file: name.clone(), line: 1, col: 1 };
    let mut h = Host::new(host.to_string(), loc);
    h.ncpus = Some(cpus);
    h.maxmem = (memory > 0).then_some(memory);
    Some(h)
}

/// The CPUs found, by host, in `files`.
pub fn found(files: &[(String, String)]) -> BTreeMap<String, u32> {
    let Some((_, text)) = files.iter().find(|(n, _)| n == DETECTED_CPUS) else { return BTreeMap::new() };
    text.lines()
        .filter_map(|l| {
            let (host, n) = l.split_once(' ')?;
            Some((host.to_string(), n.trim().parse().ok()?))
        })
        .collect()
}

/// `files` with `found` as their CPUs found (none: no such text).
pub fn with_found(mut files: Vec<(String, String)>, found: &BTreeMap<String, u32>) -> Vec<(String, String)> {
    files.retain(|(n, _)| n != DETECTED_CPUS);
    if !found.is_empty() {
        let text: String = found.iter().map(|(h, n)| format!("{h} {n}\n")).collect();
        files.push((DETECTED_CPUS.to_string(), text));
    }
    files
}

/// The hosts whose CPUs the configuration does not give.
pub fn undetermined(hosts: &[Host]) -> Vec<String> {
    hosts.iter().filter(|h| h.ncpus.is_none() && h.mxj.is_none()).map(|h| h.name.clone()).collect()
}

/// Gives each host whose CPUs the configuration does not give the CPUs
/// its agent found.
pub(crate) fn apply(hosts: &mut [Host], found: &BTreeMap<String, u32>) {
    for h in hosts.iter_mut().filter(|h| h.ncpus.is_none() && h.mxj.is_none()) {
        if let Some(&n) = found.get(&h.name).filter(|&&n| n > 0) {
            h.ncpus = Some(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory with only `allot.toml` has this machine as its host,
    /// through a text its log keeps; one that names hosts, or has
    /// `[cluster]`, gets none.
    #[test]
    fn a_configuration_without_hosts_runs_on_this_machine() {
        let bare = vec![("allot.toml".to_string(), "[daemon]\nmetrics = \"127.0.0.1:9464\"\n".to_string())];
        let with = this_machine(bare.clone());
        assert_eq!(with.len(), 2);
        let (config, _) = crate::load::load_texts(&with).expect("loads");
        let ours = crate::defaults::engine_config();
        let hosts: Vec<(&str, u32)> = config.hosts.iter().map(|h| (h.name.as_str(), h.cpus())).collect();
        assert_eq!(hosts, [(ours.hosts[0].name.as_str(), ours.hosts[0].cpus)]);
        assert_eq!(this_machine(with.clone()), with, "once");
        let named = vec![("allot.toml".to_string(), "[[hosts]]\nname = \"a\"\nncpus = 2\n".to_string())];
        assert_eq!(this_machine(named.clone()), named);
        let (plain, _) = crate::load::load_texts(&bare).expect("loads");
        assert!(plain.hosts.is_empty(), "without the text, as before");
    }

    #[test]
    fn cpus_found_go_to_hosts_the_configuration_leaves_open_and_round_trip() {
        let files = vec![("allot.toml".to_string(), "x".to_string())];
        let found: BTreeMap<String, u32> = [("a".to_string(), 8), ("b".to_string(), 4)].into();
        let with = with_found(files.clone(), &found);
        assert_eq!(super::found(&with), found);
        assert_eq!(with_found(with, &BTreeMap::new()), files, "none: no text");
        let text = "[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\nncpus = 2\n[[hosts]]\nname = \"c\"\n";
        let texts = with_found(vec![("allot.toml".to_string(), text.to_string())], &found);
        let (config, d) = crate::load::load_texts(&texts).expect("loads");
        assert_eq!(d.to_string(), "");
        let cpus: Vec<(&str, u32)> = config.hosts.iter().map(|h| (h.name.as_str(), h.cpus())).collect();
        assert_eq!(cpus, [("a", 8), ("b", 2), ("c", 1)], "b's own ncpus wins; c was not found: 1");
        assert_eq!(config.cpus_found_for, ["a", "c"]);
    }
}
