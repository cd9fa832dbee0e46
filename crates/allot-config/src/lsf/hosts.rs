//! `lsb.hosts`: Host, HostGroup, HostPartition and ComputeUnit sections.

use std::collections::BTreeMap;

use super::read::{at, value};
use super::shares::convert_shares;
use super::text::{Line, Source, key_values, sections, table, unparen};
use super::values::{expand_range, host_tokens, name, share_list, uint, yes_no};
use crate::diag::{Diagnostics, Location};
use crate::model::{ComputeUnit, HostGroup, HostPartition, HostRef};

/// A Host section row: the job slot limit of a host (or of every host, for
/// the row named `default`). `mxj: None` is unlimited (`()` or `-`);
/// `Some(None)` is `!`, the host's CPU count.
#[derive(Clone, Debug, PartialEq)]
pub struct HostRow {
    pub name: String,
    pub loc: Location,
    pub mxj: Option<Option<u32>>,
}

/// What `lsb.hosts` holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LsbHosts {
    pub hosts: Vec<HostRow>,
    pub groups: Vec<HostGroup>,
    pub partitions: Vec<HostPartition>,
    pub compute_units: Vec<ComputeUnit>,
}

pub fn read(src: &Source<'_>, diags: &mut Diagnostics) -> LsbHosts {
    let mut out = LsbHosts::default();
    for section in sections(src, diags) {
        if section.is("Host") {
            let Some(t) = table(&section, diags) else { continue };
            if !t.columns.iter().any(|c| c == "HOST_NAME") {
                diags.error(t.header.loc(0), "Host: expected a `HOST_NAME` column");
                continue;
            }
            t.warn_unapplied("Host", &["HOST_NAME", "MXJ"], diags);
            for row in &t.rows {
                let Some(name) = row.get(&t, "HOST_NAME") else { continue };
                let mxj = row.get(&t, "MXJ").map(unparen).and_then(|v| match v.trim() {
                    "" => Some(None),
                    "!" => Some(Some(None)),
                    v => value(diags, row.line, "MXJ", v, uint).map(|n| Some(Some(n))),
                });
                out.hosts.push(HostRow { name: name.to_string(), loc: at(row.line, name), mxj: mxj.flatten() });
            }
        } else if section.is("HostGroup") {
            let Some(t) = table(&section, diags) else { continue };
            t.warn_unapplied("HostGroup", &["GROUP_NAME", "GROUP_MEMBER"], diags);
            for row in &t.rows {
                let (Some(name), Some(members)) = (row.get(&t, "GROUP_NAME"), row.get(&t, "GROUP_MEMBER")) else {
                    diags.error(t.header.loc(0), "HostGroup: expected `GROUP_NAME` and `GROUP_MEMBER` columns");
                    break;
                };
                let members = host_refs(row.line, "GROUP_MEMBER", unparen(members), diags);
                out.groups.push(HostGroup { name: name.to_string(), loc: at(row.line, name), members });
            }
        } else if section.is("HostPartition") {
            if let Some(p) = partition(&section, diags) {
                out.partitions.push(p);
            }
        } else if section.is("ComputeUnit") {
            let Some(t) = table(&section, diags) else { continue };
            t.warn_unapplied("ComputeUnit", &["NAME", "MEMBER", "TYPE", "CONDENSED"], diags);
            for col in ["NAME", "MEMBER", "TYPE"] {
                if !t.columns.iter().any(|c| c == col) {
                    diags.error(t.header.loc(0), format!("ComputeUnit: expected a `{col}` column"));
                }
            }
            for row in &t.rows {
                let (Some(name), Some(members), Some(cu_type)) =
                    (row.get(&t, "NAME"), row.get(&t, "MEMBER"), row.get(&t, "TYPE"))
                else {
                    break;
                };
                let mut list = Vec::new();
                for m in unparen(members).split_whitespace() {
                    match expand_range(m) {
                        Ok(names) => list.extend(names),
                        Err(e) => diags.error(
                            row.line.loc(super::text::offset_in(&row.line.text, m) + e.offset),
                            format!("MEMBER: {}", e.message),
                        ),
                    }
                }
                let condensed = row
                    .get(&t, "CONDENSED")
                    .map(unparen)
                    .filter(|v| !v.is_empty())
                    .and_then(|v| value(diags, row.line, "CONDENSED", v, yes_no))
                    .unwrap_or(false);
                out.compute_units.push(ComputeUnit {
                    name: name.to_string(),
                    loc: at(row.line, name),
                    members: list,
                    cu_type: cu_type.to_string(),
                    condensed,
                });
            }
        } else {
            diags.warning(at(&section.begin, &section.name), format!("unknown section `{}`, ignored", section.name));
        }
    }
    out
}

/// A HOSTS-style list: names, `all`, `~excluded`, `name!`, `name+n`, and
/// ranges such as `host1[01-16]`.
pub fn host_refs(line: &Line, what: &str, v: &str, diags: &mut Diagnostics) -> Vec<HostRef> {
    if v.trim().is_empty() {
        return Vec::new();
    }
    let Some(tokens) = value(diags, line, what, v, host_tokens) else { return Vec::new() };
    let mut out = Vec::new();
    for t in tokens {
        match expand_range(t.name) {
            Ok(names) => out.extend(names.into_iter().map(|name| HostRef {
                name,
                exclude: t.exclude,
                first_exec: t.first_exec,
                preference: t.preference,
            })),
            Err(e) => diags.error(
                line.loc(super::text::offset_in(&line.text, t.name) + e.offset),
                format!("{what}: {}", e.message),
            ),
        }
    }
    out
}

fn partition(section: &super::text::Section, diags: &mut Diagnostics) -> Option<HostPartition> {
    let kvs = key_values(section, diags);
    let mut fields: BTreeMap<String, (&Line, &str)> = BTreeMap::new();
    for (line, kv) in &kvs {
        let key = kv.key.to_ascii_uppercase();
        match key.as_str() {
            "HPART_NAME" | "HOSTS" | "USER_SHARES" => {
                fields.insert(key, (line, kv.value));
            }
            _ => diags.warning(at(line, kv.key), format!("unknown HostPartition parameter `{}`, ignored", kv.key)),
        }
    }
    let Some(&(line, hname)) = fields.get("HPART_NAME") else {
        diags.error(section.begin.loc(0), "HostPartition: expected an `HPART_NAME` parameter");
        return None;
    };
    let hname = value(diags, line, "HPART_NAME", hname, name)?;
    let loc = at(line, hname);
    let hosts = match fields.get("HOSTS") {
        Some(&(line, v)) => host_refs(line, "HOSTS", v, diags),
        None => {
            diags.error(loc.clone(), format!("host partition `{hname}`: expected a `HOSTS` parameter"));
            Vec::new()
        }
    };
    let (shares, shares_loc) = match fields.get("USER_SHARES") {
        Some(&(line, v)) => (
            value(diags, line, "USER_SHARES", v, share_list).map(|r| convert_shares(&r)).unwrap_or_default(),
            at(line, v),
        ),
        None => (Vec::new(), loc.clone()),
    };
    if shares.is_empty() {
        diags.error(
            loc.clone(),
            format!("host partition `{hname}`: expected USER_SHARES with at least one `[name, shares]`"),
        );
    }
    Some(HostPartition { name: hname.to_string(), loc, hosts, shares, shares_loc })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(text: &str) -> (LsbHosts, Vec<String>) {
        let mut d = Diagnostics::default();
        let h = read(&Source { name: "lsb.hosts", text }, &mut d);
        (h, d.0.iter().map(|x| x.to_string()).collect())
    }

    #[test]
    fn the_specs_sections_read() {
        let (h, d) = hosts(
            "Begin Host\nHOST_NAME MXJ r1m pg ls tmp DISPATCH_WINDOW # Keywords\nhosta 5 () () () () ()\ndefault ! () () () () ()\nEnd Host\n\
             Begin HostGroup\nGROUP_NAME GROUP_MEMBER\ngroupA (hosta hostb hostc)\nEnd HostGroup\n\
             Begin HostPartition\nHPART_NAME = Partition1\nHOSTS = hostA hostB ~hostC\nUSER_SHARES = [groupA@, 3] [groupB, 7] [default, 1]\nEnd HostPartition\n\
             Begin ComputeUnit\nNAME MEMBER CONDENSED TYPE\nenclosure1 (host1[01-16]) Y enclosure\nrack1 (enclosure[1-2]) Y rack\nEnd ComputeUnit\n",
        );
        // The load thresholds and the dispatch window are read, not applied.
        assert_eq!(
            d,
            ["r1m", "pg", "ls", "tmp", "DISPATCH_WINDOW"]
                .iter()
                .zip([15, 19, 22, 25, 29])
                .map(|(c, col)| format!(
                    "lsb.hosts:2:{col}: warning: Host: the `{c}` column is not applied by allot, ignored"
                ))
                .collect::<Vec<_>>()
        );
        assert_eq!(h.hosts[0].mxj, Some(Some(5)));
        assert_eq!(h.hosts[1].mxj, Some(None), "`!`: the CPU count");
        assert_eq!(h.groups[0].members.len(), 3);
        let p = &h.partitions[0];
        assert_eq!((p.name.as_str(), p.hosts.len(), p.shares.len()), ("Partition1", 3, 3));
        assert!(p.hosts[2].exclude);
        assert_eq!(h.compute_units[0].members.len(), 16);
        assert_eq!(h.compute_units[0].members[0], "host101");
        assert_eq!(h.compute_units[1].members, ["enclosure1", "enclosure2"]);
        assert!(h.compute_units[1].condensed);
    }

    #[test]
    fn partition_errors_are_located() {
        let (_, d) = hosts("Begin HostPartition\nHPART_NAME = p\nHOSTS = h[2-1]\nEnd HostPartition\n");
        assert_eq!(
            d,
            [
                "lsb.hosts:3:11: error: HOSTS: range `2-1` is empty or too large",
                "lsb.hosts:2:14: error: host partition `p`: expected USER_SHARES with at least one `[name, shares]`",
            ]
        );
    }
}
