//! `lsf.cluster.<name>`: the Host section (HOSTNAME, model, type, server,
//! RESOURCES, and allot's `ncpus` and `maxmem` columns, which stand for what
//! LSF detects at run time) and ResourceMap (string and numeric resources
//! by host: `(hg1@[hostA hostB] hg2@[hostD])`). A string value is each of
//! its hosts'; a number over several hosts (`10@[hostA hostB]`,
//! `10@[all]`) is one instance they share (a license count), and over one
//! host or `[default]` each host's own
//! ([`allot_engine::shared_res`]).

use winnow::ascii::multispace0;
use winnow::combinator::{cut_err, delimited, preceded, repeat, terminated};
use winnow::error::{StrContext, StrContextValue};
use winnow::token::take_while;
use winnow::{ModalResult, Parser};

use super::read::{at, value};
use super::text::{Source, sections, table, unparen};
use super::values::{name, number, uint};
use crate::diag::{Diagnostics, Location};
use crate::model::Host;
use allot_engine::shared_res::SharedSpec;

/// Sections of a cluster file that carry nothing allot uses.
const IGNORED: &[&str] = &["Cluster", "ClusterAdmins", "Parameters", "RemoteClusters"];

/// One `value@[hosts]` entry of a ResourceMap LOCATION.
fn location_entry<'a>(input: &mut &'a str) -> ModalResult<(&'a str, Vec<&'a str>)> {
    let value = take_while(1.., |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c)).parse_next(input)?;
    let hosts = cut_err(preceded(
        '@'.context(StrContext::Expected(StrContextValue::Description("`value@[hosts]`"))),
        delimited(
            '['.context(StrContext::Expected(StrContextValue::CharLiteral('['))),
            repeat(0.., delimited(multispace0, name, multispace0)),
            ']'.context(StrContext::Expected(StrContextValue::CharLiteral(']'))),
        ),
    ))
    .parse_next(input)?;
    Ok((value, hosts))
}

fn location_list<'a>(input: &mut &'a str) -> ModalResult<Vec<(&'a str, Vec<&'a str>)>> {
    repeat(0.., terminated(preceded(multispace0, location_entry), multispace0)).parse_next(input)
}

/// Reads the hosts of a cluster file, in order, with their resources, and
/// the numeric resources its hosts share (each where it is written).
pub fn read(src: &Source<'_>, diags: &mut Diagnostics) -> (Vec<Host>, Vec<(SharedSpec, Location)>) {
    let mut shared: Vec<(SharedSpec, Location)> = Vec::new();
    let mut hosts: Vec<Host> = Vec::new();
    let secs = sections(src, diags);
    for section in &secs {
        if section.is("Host") {
            let Some(t) = table(section, diags) else { continue };
            if !t.columns.iter().any(|c| c == "HOSTNAME") {
                diags.error(t.header.loc(0), "Host: expected a `HOSTNAME` column");
                continue;
            }
            for row in &t.rows {
                let Some(hname) = row.get(&t, "HOSTNAME") else { continue };
                let mut h = Host::new(hname.to_string(), at(row.line, hname));
                let field = |c: &str| row.get(&t, c).map(unparen).map(str::trim).filter(|v| !v.is_empty() && *v != "!");
                h.model = field("MODEL").map(str::to_string);
                h.host_type = field("TYPE").map(str::to_string);
                h.ncpus = field("NCPUS").and_then(|v| value(diags, row.line, "ncpus", v, uint));
                h.maxmem = field("MAXMEM").and_then(|v| value(diags, row.line, "maxmem", v, uint)).map(u64::from);
                for r in field("RESOURCES").unwrap_or("").split_whitespace() {
                    match r.split_once('=') {
                        Some((k, v)) => match v.parse::<f64>() {
                            Ok(n) => {
                                h.numbers.insert(k.to_string(), n);
                            }
                            Err(_) => {
                                h.strings.insert(k.to_string(), v.to_string());
                            }
                        },
                        None => h.booleans.push(r.to_string()),
                    }
                }
                hosts.push(h);
            }
        }
    }
    for section in &secs {
        if section.is("ResourceMap") {
            let Some(t) = table(section, diags) else { continue };
            for row in &t.rows {
                let (Some(res), Some(loc)) = (row.get(&t, "RESOURCENAME"), row.get(&t, "LOCATION")) else {
                    diags.error(t.header.loc(0), "ResourceMap: expected `RESOURCENAME` and `LOCATION` columns");
                    break;
                };
                let Some(entries) = value(diags, row.line, "LOCATION", unparen(loc), location_list) else { continue };
                for (val, on) in entries {
                    let all = on.iter().any(|n| n.eq_ignore_ascii_case("all"));
                    let each = on.iter().any(|n| n.eq_ignore_ascii_case("default"));
                    let num = super::values::parse_all(number, val).ok();
                    if let (Some(total), false, true) = (num, each, all || on.len() > 1) {
                        let hosts = (!all).then(|| on.iter().map(|n| n.to_string()).collect());
                        shared.push((SharedSpec { name: res.to_string(), total, hosts }, at(row.line, val)));
                        continue;
                    }
                    let covers = |h: &Host| all || each || on.iter().any(|n| *n == h.name);
                    for h in hosts.iter_mut().filter(|h| covers(h)) {
                        match num {
                            Some(n) => {
                                h.numbers.insert(res.to_string(), n);
                            }
                            None => {
                                h.strings.insert(res.to_string(), val.to_string());
                            }
                        }
                    }
                }
            }
        } else if !section.is("Host") && !IGNORED.iter().any(|s| section.is(s)) {
            diags.warning(at(&section.begin, &section.name), format!("unknown section `{}`, ignored", section.name));
        }
    }
    (hosts, shared)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_with_resources_and_resource_map() {
        let mut d = Diagnostics::default();
        let text = "Begin Host\nHOSTNAME model type server r1m mem swp RESOURCES ncpus maxmem\n\
                    hostA PC1133 LINUX 1 3.5 () () (linux fast scratch=100) 4 8192\nhostB ! SGI 1 () () () () ! ()\nEnd Host\n\
                    Begin ResourceMap\nRESOURCENAME LOCATION\nhgconnect (hg1@[hostA] hg2@[hostB])\nEnd ResourceMap\n";
        let (hosts, _) = read(&Source { name: "lsf.cluster.c", text }, &mut d);
        assert!(d.0.is_empty(), "{d}");
        assert_eq!(hosts[0].model.as_deref(), Some("PC1133"));
        assert_eq!((hosts[0].ncpus, hosts[0].maxmem), (Some(4), Some(8192)));
        assert_eq!(hosts[0].booleans, ["linux", "fast"]);
        assert_eq!(hosts[0].numbers["scratch"], 100.0);
        assert_eq!(hosts[0].strings["hgconnect"], "hg1");
        assert_eq!(hosts[1].strings["hgconnect"], "hg2");
        assert_eq!((hosts[1].model.as_deref(), hosts[1].ncpus), (None, None));
    }

    /// A number over several hosts (or `all`) is one count they share; over
    /// `default` each host's own; a shared count naming a host the cluster
    /// does not have is an error where it is written.
    #[test]
    fn numbers_over_several_hosts_are_shared_and_their_hosts_checked() {
        let text = "Begin Host\nHOSTNAME model type server RESOURCES\nhostA ! ! 1 ()\nhostB ! ! 1 ()\nEnd Host\n\
                    Begin ResourceMap\nRESOURCENAME LOCATION\nlicA (2@[hostA hostB])\nlicB (5@[all])\n\
                    scratch (50@[default])\nEnd ResourceMap\n";
        let mut d = Diagnostics::default();
        let (hosts, shared) = read(&Source { name: "lsf.cluster.c", text }, &mut d);
        assert!(d.0.is_empty(), "{d}");
        let specs: Vec<SharedSpec> = shared.into_iter().map(|(s, _)| s).collect();
        assert_eq!(
            specs,
            [
                SharedSpec { name: "licA".into(), total: 2.0, hosts: Some(vec!["hostA".into(), "hostB".into()]) },
                SharedSpec { name: "licB".into(), total: 5.0, hosts: None },
            ]
        );
        assert!(hosts.iter().all(|h| h.numbers["scratch"] == 50.0 && !h.numbers.contains_key("licA")));
        let bad = text.replace("2@[hostA hostB]", "2@[hostA hostZ]");
        let texts = vec![("lsf.cluster.c".to_string(), bad)];
        let d = crate::load::load_texts(&texts).expect_err("hostZ");
        let msgs: Vec<String> = d.0.iter().map(|x| x.to_string()).collect();
        assert_eq!(msgs, ["lsf.cluster.c:8:7: error: ResourceMap `licA`: `hostZ` is not a host of this cluster"]);
    }

    #[test]
    fn a_bad_location_is_located() {
        let mut d = Diagnostics::default();
        let text = "Begin ResourceMap\nRESOURCENAME LOCATION\nhg (hg1[hostA])\nEnd ResourceMap\n";
        read(&Source { name: "lsf.cluster.c", text }, &mut d);
        assert_eq!(d.0[0].to_string(), "lsf.cluster.c:3:8: error: LOCATION: expected `value@[hosts]`, found `[hostA]`");
    }
}
