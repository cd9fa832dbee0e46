//! `lsb.resources`: the Limit sections (resource allocation limits,
//! [`allot_engine::alloc_limits`]), in either of LSF's two forms:
//! `KEY = value` lines, one limit per section, or a table whose first
//! line names the columns and whose every row is a limit (`-` or `()`
//! for a column a row leaves unset).
//!
//! The other sections of the file (HostExport, SharedResourceExport,
//! ResourceReservation, ReservationUsage, GuaranteedResourcePool, ...)
//! load with a warning that they are not applied.

use allot_engine::alloc_limits::{Amount, LimitSpec, Members, Scope};

use super::read::at;
use super::text::{Line, Section, Source, key_values, sections, table, unparen, unquote};
use crate::diag::{Diagnostics, Location};

/// The consumer kinds: the key that counts them together, the one that
/// counts each alone.
const KINDS: [(&str, &str); 5] = [
    ("USERS", "PER_USER"),
    ("QUEUES", "PER_QUEUE"),
    ("HOSTS", "PER_HOST"),
    ("PROJECTS", "PER_PROJECT"),
    ("APPS", "PER_APP"),
];

/// Limit parameters LSF has whose behaviour allot does not.
const NOT_APPLIED: &[&str] =
    &["SWP", "TMP", "LIC_PROJECTS", "PER_LIC_PROJECT", "ELIGIBLE_PEND_JOBS", "INELIGIBLE", "JOBS_PER_SCHED_CYCLE"];

/// What the Limit sections name that other files define: queues and
/// hosts, where they are written.
#[derive(Clone, Debug, Default)]
pub struct Named {
    pub queues: Vec<(String, Location)>,
    pub hosts: Vec<(String, Location)>,
}

/// Reads `lsb.resources`; `mb_per_unit`: MB in one unit of MEM
/// (LSF_UNIT_FOR_LIMITS when it is larger than MB).
pub fn read(src: &Source<'_>, mb_per_unit: f64, diags: &mut Diagnostics) -> (Vec<LimitSpec>, Named) {
    let mut out: Vec<(LimitSpec, Location)> = Vec::new();
    let mut named = Named::default();
    for section in sections(src, diags) {
        if !section.is("Limit") {
            let col = section.begin.text.find(&section.name).unwrap_or(0);
            diags.warning(
                section.begin.loc(col),
                format!("section `{}` is not applied by allot, ignored", section.name),
            );
            continue;
        }
        let vertical = section.lines.first().is_some_and(|l| !l.text.contains('='));
        let rows: Vec<Vec<(&Line, &str, &str)>> = if vertical {
            table_rows(&section, diags)
        } else {
            vec![key_values(&section, diags).into_iter().map(|(l, kv)| (l, kv.key, kv.value)).collect()]
        };
        for row in rows {
            let begin = row.first().map_or(section.begin.loc(0), |(l, _, _)| l.loc(0));
            if let Some(spec) = limit(&row, begin.clone(), out.len(), mb_per_unit, &mut named, diags) {
                if let Some((_, first)) = out.iter().find(|(s, _)| s.name == spec.name) {
                    diags.error(begin, format!("Limit `{}` is already defined at {first}", spec.name));
                    continue;
                }
                out.push((spec, begin));
            }
        }
    }
    (out.into_iter().map(|(s, _)| s).collect(), named)
}

/// A table's rows as (line, column, field) triples, unset fields left out.
fn table_rows<'a>(section: &'a Section, diags: &mut Diagnostics) -> Vec<Vec<(&'a Line, &'a str, &'a str)>> {
    let Some(t) = table(section, diags) else { return Vec::new() };
    let columns: Vec<&'a str> = t.header.text.split_whitespace().collect();
    t.rows
        .iter()
        .map(|row| {
            columns
                .iter()
                .zip(&row.fields)
                .filter(|(_, f)| !unparen(f).trim().is_empty())
                .map(|(c, f)| (row.line, *c, *f))
                .collect()
        })
        .collect()
}

/// One limit from its parameters; `None` (said) when one is wrong.
fn limit(
    params: &[(&Line, &str, &str)],
    begin: Location,
    index: usize,
    mb_per_unit: f64,
    named: &mut Named,
    diags: &mut Diagnostics,
) -> Option<LimitSpec> {
    let errors = diags.error_count();
    // Unnamed limits are numbered as they come, as LSF names them.
    let mut spec = LimitSpec { name: format!("NONAME{index:03}"), ..LimitSpec::default() };
    let mut scopes: [(Scope, Option<(String, Location)>); 5] = Default::default();
    for &(line, raw_key, raw) in params {
        let key = raw_key.to_ascii_uppercase();
        let v = unquote(unparen(raw.trim())).trim();
        let loc = at(line, raw);
        if let Some(k) = KINDS.iter().position(|(t, e)| key == *t || key == *e) {
            let each = key == KINDS[k].1;
            if let Some((other, first)) = &scopes[k].1 {
                diags.error(
                    loc,
                    format!("`{raw_key}`: the limit names its {} already with `{other}` at {first}", kind_word(k)),
                );
                continue;
            }
            let members = members(v, loc.clone(), raw_key, diags)?;
            let list = match k {
                1 => Some(&mut named.queues),
                2 => Some(&mut named.hosts),
                _ => None,
            };
            if let Some(list) = list {
                list.extend(members.names.iter().chain(&members.except).map(|n| (n.clone(), loc.clone())));
            }
            scopes[k] =
                (if each { Scope::Each(members) } else { Scope::Together(members) }, Some((raw_key.to_string(), loc)));
            continue;
        }
        match key.as_str() {
            "NAME" => spec.name = v.to_string(),
            "SLOTS" => spec.slots = count(v, raw_key, loc, diags),
            "JOBS" => spec.jobs = count(v, raw_key, loc, diags),
            "SLOTS_PER_PROCESSOR" => match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x.is_finite() => spec.slots_per_processor = Some(x),
                _ => diags.error(loc, format!("{raw_key}: expected a number above 0, found `{v}`")),
            },
            "MEM" => spec.mem = mem(v, mb_per_unit, raw_key, loc, diags),
            "RESOURCE" => match super::values::parse_all(resource_list, v) {
                Ok(list) => spec.resources = list,
                Err(e) => diags.error(
                    line.loc(super::text::offset_in(&line.text, v) + e.offset),
                    format!("{raw_key}: {}", e.message),
                ),
            },
            _ if NOT_APPLIED.contains(&key.as_str()) => {
                diags.warning(loc, format!("Limit `{}`: `{raw_key}` is not applied by allot, ignored", spec.name));
            }
            _ => diags.error(at(line, raw_key), format!("unknown Limit parameter `{raw_key}`")),
        }
    }
    let [users, queues, hosts, projects, apps] = scopes.map(|s| s.0);
    (spec.users, spec.queues, spec.hosts, spec.projects, spec.apps) = (users, queues, hosts, projects, apps);
    let per_host = matches!(spec.hosts, Scope::Each(_));
    if matches!(spec.mem, Some(Amount::Percent(_))) && !per_host {
        diags.error(begin.clone(), format!("Limit `{}`: MEM as a percentage needs PER_HOST", spec.name));
    }
    if spec.slots_per_processor.is_some() && !per_host {
        diags.warning(
            begin.clone(),
            format!(
                "Limit `{}`: SLOTS_PER_PROCESSOR without PER_HOST counts the CPUs of all its hosts together",
                spec.name
            ),
        );
    }
    let unlimited = spec.slots.is_none()
        && spec.slots_per_processor.is_none()
        && spec.mem.is_none()
        && spec.jobs.is_none()
        && spec.resources.is_empty();
    if unlimited && diags.error_count() == errors {
        diags.warning(
            begin,
            format!(
                "Limit `{}` limits nothing allot applies (SLOTS, SLOTS_PER_PROCESSOR, MEM, JOBS, RESOURCE)",
                spec.name
            ),
        );
    }
    (diags.error_count() == errors).then_some(spec)
}

fn kind_word(k: usize) -> &'static str {
    ["users", "queues", "hosts", "projects", "application profiles"][k]
}

/// RESOURCE's `[name,amount] ...`.
fn resource_list(input: &mut &str) -> winnow::ModalResult<Vec<(String, f64)>> {
    use winnow::Parser;
    use winnow::ascii::{float, multispace0};
    use winnow::combinator::{cut_err, delimited, preceded, repeat, separated_pair};
    use winnow::error::{StrContext, StrContextValue};
    let expected = |what: &'static str| StrContext::Expected(StrContextValue::Description(what));
    let pair = delimited(
        ('[', multispace0),
        cut_err(separated_pair(
            super::values::name.context(expected("a resource name")),
            (multispace0, ',', multispace0).context(expected("`,` and an amount")),
            float.context(expected("an amount")),
        )),
        cut_err((multispace0, ']')).context(expected("`]`")),
    )
    .map(|(n, a): (&str, f64)| (n.to_string(), a));
    repeat(1.., preceded(multispace0, pair)).parse_next(input)
}

/// A consumer list: names, `all`, `~name`s.
fn members(v: &str, loc: Location, key: &str, diags: &mut Diagnostics) -> Option<Members> {
    let mut m = Members::default();
    for word in v.split_whitespace() {
        match word.strip_prefix('~') {
            Some("") => {
                diags.error(loc, format!("{key}: expected a name after `~`"));
                return None;
            }
            Some(name) => m.except.push(name.to_string()),
            None if word.eq_ignore_ascii_case("all") => m.all = true,
            None => m.names.push(word.to_string()),
        }
    }
    if !m.all && m.names.is_empty() {
        if m.except.is_empty() {
            diags.error(loc, format!("{key}: expected at least one name, or `all`"));
            return None;
        }
        // Only exclusions: all but those, as LSF reads `~name` alone.
        m.all = true;
    }
    Some(m)
}

fn count(v: &str, key: &str, loc: Location, diags: &mut Diagnostics) -> Option<u32> {
    match v.parse::<u32>() {
        Ok(n) => Some(n),
        Err(_) => {
            diags.error(loc, format!("{key}: expected a whole number, found `{v}`"));
            None
        }
    }
}

/// MEM: a number of units, or `N%` of each host's memory.
fn mem(v: &str, mb_per_unit: f64, key: &str, loc: Location, diags: &mut Diagnostics) -> Option<Amount> {
    let bad = |diags: &mut Diagnostics| {
        diags.error(loc.clone(), format!("{key}: expected an amount of memory or a percentage (`50%`), found `{v}`"))
    };
    match v.strip_suffix('%') {
        Some(p) => match p.trim().parse::<f64>() {
            Ok(x) if (0.0..=100.0).contains(&x) => Some(Amount::Percent(x)),
            _ => {
                bad(diags);
                None
            }
        },
        None => match v.parse::<f64>() {
            Ok(x) if x >= 0.0 && x.is_finite() => Some(Amount::Mb(x * mb_per_unit)),
            _ => {
                bad(diags);
                None
            }
        },
    }
}

/// MB in one unit of LSF_UNIT_FOR_LIMITS, for lsb.resources' MEM: MB
/// unless the unit is larger ("The default unit for limits is MB").
pub fn mb_per_unit(unit: Option<&str>) -> f64 {
    match unit.map(|u| u.trim().to_ascii_uppercase()) {
        Some(u) if u == "GB" || u == "G" => 1024.0,
        Some(u) if u == "TB" || u == "T" => 1024.0 * 1024.0,
        Some(u) if u == "PB" || u == "P" => 1024.0 * 1024.0 * 1024.0,
        Some(u) if u == "EB" || u == "E" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::load_texts;

    fn said(files: &[(&str, &str)]) -> Vec<String> {
        let texts: Vec<(String, String)> = files.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
        match load_texts(&texts) {
            Ok((_, d)) | Err(d) => d.0.iter().map(|x| x.to_string()).collect(),
        }
    }

    fn limits(text: &str) -> Vec<LimitSpec> {
        let mut d = Diagnostics::default();
        let (l, _) = read(&Source { name: "lsb.resources", text }, 1.0, &mut d);
        assert!(!d.has_errors(), "{d}");
        l
    }

    #[test]
    fn both_forms_read_to_the_same_limits() {
        let flat = limits(
            "Begin Limit\nNAME = l1\nPER_USER = all ~root\nQUEUES = normal short\nSLOTS = 4\nMEM = 200\nEnd Limit\n",
        );
        let table = limits(
            "Begin Limit\nNAME PER_USER QUEUES SLOTS MEM JOBS\nl1 (all ~root) (normal short) 4 200 -\nEnd Limit\n",
        );
        assert_eq!(flat, table);
        let l = &flat[0];
        assert_eq!(l.users, Scope::Each(Members { all: true, names: vec![], except: vec!["root".into()] }));
        assert_eq!(
            l.queues,
            Scope::Together(Members { all: false, names: vec!["normal".into(), "short".into()], except: vec![] })
        );
        assert_eq!((l.slots, l.mem, l.jobs, l.hosts.clone()), (Some(4), Some(Amount::Mb(200.0)), None, Scope::Any));
    }

    #[test]
    fn unnamed_rows_are_numbered_and_mem_takes_the_unit_for_limits() {
        let mut d = Diagnostics::default();
        let text = "Begin Limit\nUSERS HOSTS MEM\nann - 2\n- hostA 50%\nEnd Limit\n";
        let (l, named) = read(&Source { name: "lsb.resources", text }, mb_per_unit(Some("GB")), &mut d);
        assert_eq!(l[0].name, "NONAME000");
        assert_eq!(l[0].mem, Some(Amount::Mb(2048.0)));
        assert_eq!(named.hosts.len(), 1);
        let msgs: Vec<String> = d.0.iter().map(|x| x.to_string()).collect();
        assert_eq!(msgs, ["lsb.resources:4:1: error: Limit `NONAME001`: MEM as a percentage needs PER_HOST"]);
    }

    #[test]
    fn resource_limits_read_their_pairs() {
        let l = limits("Begin Limit\nNAME = lic\nRESOURCE = [licA,2] [ licB , 0.5 ]\nEnd Limit\n");
        assert_eq!(l[0].resources, [("licA".to_string(), 2.0), ("licB".to_string(), 0.5)]);
        let t = limits("Begin Limit\nNAME RESOURCE\nlic ([licA,2])\nEnd Limit\n");
        assert_eq!(t[0].resources, [("licA".to_string(), 2.0)]);
        let mut d = Diagnostics::default();
        read(&Source { name: "lsb.resources", text: "Begin Limit\nRESOURCE = [licA 2]\nEnd Limit\n" }, 1.0, &mut d);
        assert_eq!(d.0[0].to_string(), "lsb.resources:2:18: error: RESOURCE: expected `,` and an amount, found `2]`");
    }

    #[test]
    fn mistakes_are_named_where_they_are() {
        let text = "Begin Limit\nNAME = a\nUSERS = ann\nPER_USER = bob\nSLOTS = two\nSWP = 10\nFOO = 1\nEnd Limit\n\
                    Begin Limit\nNAME = c\nEnd Limit\n\
                    Begin Limit\nNAME = b\nQUEUES = nowhere\nHOSTS = hostZ\nJOBS = 1\nEnd Limit\n\
                    Begin HostExport\nPER_HOST = hostA\nEnd HostExport\n";
        let queues = "Begin Queue\nQUEUE_NAME = normal\nEnd Queue\n";
        let hosts = "[[hosts]]\nname = \"hostA\"\nncpus = 2\n";
        assert_eq!(
            said(&[("lsb.resources", text), ("lsb.queues", queues), ("allot.toml", hosts)]),
            [
                "lsb.resources:4:12: error: `PER_USER`: the limit names its users already with `USERS` at \
                 lsb.resources:3:9",
                "lsb.resources:5:9: error: SLOTS: expected a whole number, found `two`",
                "lsb.resources:6:7: warning: Limit `a`: `SWP` is not applied by allot, ignored",
                "lsb.resources:7:1: error: unknown Limit parameter `FOO`",
                "lsb.resources:10:1: warning: Limit `c` limits nothing allot applies (SLOTS, \
                 SLOTS_PER_PROCESSOR, MEM, JOBS, RESOURCE)",
                "lsb.resources:18:7: warning: section `HostExport` is not applied by allot, ignored",
                "lsb.resources:14:10: error: Limit: queue `nowhere` is not defined in lsb.queues",
                "lsb.resources:15:9: error: Limit: `hostZ` is neither a host nor a host group",
            ]
        );
        let twice = "Begin Limit\nNAME = a\nJOBS = 1\nEnd Limit\nBegin Limit\nNAME SLOTS\na 1\nEnd Limit\n";
        assert_eq!(
            said(&[("lsb.resources", twice)]),
            ["lsb.resources:7:1: error: Limit `a` is already defined at lsb.resources:2:1"]
        );
    }
}
