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
