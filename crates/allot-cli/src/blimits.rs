//! `blimits [-a] [-w] [-n limit ...] [-u user] [-q queue] [-m host]
//! [-P project] [-A app]`: what the resource allocation limits of
//! `lsb.resources` hold now, as LSF's blimits shows it: one row per
//! bucket in use (a limit counting each user, host, ... alone has one
//! per consumer), `USED/LIMIT` for each resource the limit bounds, `-`
//! for the rest; with `-a`, limits with nothing in use too.

use std::fmt::Write;
use std::process::ExitCode;

use allot_proto::{LimitInfo, Request, Response};
use anyhow::{anyhow, bail};

use crate::lsf::{call, cut};

/// What the options ask.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct LimitsQuery {
    pub(crate) all: bool,
    pub(crate) wide: bool,
    pub(crate) names: Vec<String>,
    /// (column, name): `-u`, `-q`, `-m`, `-P`, `-A`.
    pub(crate) consumers: Vec<(char, String)>,
}

pub(crate) fn parse(args: &[String]) -> anyhow::Result<LimitsQuery> {
    let args = crate::lsf::split_options("blimits", args)?;
    let mut q = LimitsQuery::default();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        match arg {
            "-a" => q.all = true,
            "-w" => q.wide = true,
            "-n" => {
                while let Some(n) = args.get(i).filter(|a| !a.starts_with('-')) {
                    q.names.push(n.clone());
                    i += 1;
                }
                if q.names.is_empty() {
                    bail!("blimits: -n: a limit name is needed");
                }
            }
            "-u" | "-q" | "-m" | "-P" | "-A" => {
                let v = args.get(i).ok_or_else(|| anyhow!("blimits: {arg}: a name is needed"))?;
                q.consumers.push((arg.chars().nth(1).unwrap_or('u'), v.clone()));
                i += 1;
            }
            other => bail!("blimits: {other}: unexpected argument"),
        }
    }
    Ok(q)
}

pub fn blimits(args: &[String]) -> anyhow::Result<ExitCode> {
    let q = parse(args)?;
    let Response::Limits(rows) = call(Request::Limits { all: q.all })? else { bail!("blimits: unexpected answer") };
    let shown: Vec<&LimitInfo> = rows.iter().filter(|r| wanted(r, &q)).collect();
    if shown.is_empty() {
        println!("No resource usage found.");
        return Ok(ExitCode::SUCCESS);
    }
    crate::lsf::emit(&limits_text(&shown, q.wide))?;
    Ok(ExitCode::SUCCESS)
}

/// Whether a row is among those asked: by limit name, and for each
/// consumer asked, a row that names it, names `all`, or names none of
/// its kind (the limit covers every one).
fn wanted(r: &LimitInfo, q: &LimitsQuery) -> bool {
    if !q.names.is_empty() && !q.names.contains(&r.name) {
        return false;
    }
    q.consumers.iter().all(|(kind, name)| {
        let column = match kind {
            'u' => &r.users,
            'q' => &r.queues,
            'm' => &r.hosts,
            'P' => &r.projects,
            _ => &r.apps,
        };
        column.as_deref().is_none_or(|c| c.split_whitespace().any(|w| w == name || w == "all"))
    })
}

/// LSF's layout: `INTERNAL RESOURCE LIMITS:`, then NAME, the consumer
/// columns (APPS where a limit names profiles), SLOTS, MEM, TMP, SWP
/// and JOBS; names cut at 12 characters unless `wide`. The rows of limits
/// with RESOURCE follow under `EXTERNAL RESOURCE LIMITS:`, a column for
/// each site resource named.
fn limits_text(rows: &[&LimitInfo], wide: bool) -> String {
    let internal: Vec<&LimitInfo> = rows
        .iter()
        .copied()
        .filter(|r| r.resources.is_empty() || r.slots.1.is_some() || r.mem.1.is_some() || r.jobs.1.is_some())
        .collect();
    let external: Vec<&LimitInfo> = rows.iter().copied().filter(|r| !r.resources.is_empty()).collect();
    let mut out = String::new();
    if !internal.is_empty() {
        out.push_str(&internal_text(&internal, wide));
    }
    if !external.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&external_text(&external, wide));
    }
    out
}

/// A row's consumer columns (APPS when `apps`), names cut unless `wide`.
fn consumers(r: &LimitInfo, apps: bool, wide: bool) -> Vec<String> {
    let name = |v: &Option<String>| cut(v.as_deref().unwrap_or("-"), 12, wide).into_owned();
    let mut cells = vec![cut(&r.name, 12, wide).into_owned(), name(&r.users), name(&r.queues), name(&r.hosts)];
    cells.push(name(&r.projects));
    if apps {
        cells.push(name(&r.apps));
    }
    cells
}

/// Cells padded to 13 columns, the line's end trimmed.
fn line(cells: Vec<String>) -> String {
    let mut s = String::new();
    for c in cells {
        let _ = write!(s, "{c:<13}");
    }
    s.trim_end().to_string()
}

/// `EXTERNAL RESOURCE LIMITS:`: the consumer columns, then each site
/// resource any row limits, `USED/LIMIT` or `-`.
fn external_text(rows: &[&LimitInfo], wide: bool) -> String {
    let apps = rows.iter().any(|r| r.apps.is_some());
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        for (n, _, _) in &r.resources {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
    }
    let mut head: Vec<String> = ["NAME", "USERS", "QUEUES", "HOSTS", "PROJECTS"].map(String::from).to_vec();
    if apps {
        head.push("APPS".into());
    }
    head.extend(names.iter().map(|n| n.to_string()));
    let mut out = format!("EXTERNAL RESOURCE LIMITS:\n\n{}\n", line(head));
    for r in rows {
        let mut cells = consumers(r, apps, wide);
        for n in &names {
            cells.push(match r.resources.iter().find(|x| x.0 == *n) {
                Some((_, used, bound)) => format!("{}/{}", mb(*used), mb(*bound)),
                None => "-".into(),
            });
        }
        let _ = writeln!(out, "{}", line(cells));
    }
    out
}

fn internal_text(rows: &[&LimitInfo], wide: bool) -> String {
    let apps = rows.iter().any(|r| r.apps.is_some());
    let mut out = String::from("INTERNAL RESOURCE LIMITS:\n\n");
    let mut head = vec!["NAME", "USERS", "QUEUES", "HOSTS", "PROJECTS"];
    if apps {
        head.push("APPS");
    }
    head.extend(["SLOTS", "MEM", "TMP", "SWP", "JOBS"]);
    let _ = writeln!(out, "{}", line(head.iter().map(|h| h.to_string()).collect()));
    for r in rows {
        let mut cells = consumers(r, apps, wide);
        let used = |u: String, l: Option<String>| l.map_or("-".to_string(), |l| format!("{u}/{l}"));
        cells.push(used(r.slots.0.to_string(), r.slots.1.map(|l| l.to_string())));
        cells.push(used(mb(r.mem.0), r.mem.1.map(mb)));
        cells.extend(["-".to_string(), "-".to_string()]);
        cells.push(used(r.jobs.0.to_string(), r.jobs.1.map(|l| l.to_string())));
        let _ = writeln!(out, "{}", line(cells));
    }
    out
}

/// MB as blimits shows it: whole when whole, else to one decimal.
fn mb(v: f64) -> String {
    if (v - v.round()).abs() < 1e-6 { format!("{}", v.round() as i64) } else { format!("{v:.1}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, users: Option<&str>, hosts: Option<&str>) -> LimitInfo {
        LimitInfo {
            name: name.into(),
            users: users.map(str::to_string),
            queues: None,
            hosts: hosts.map(str::to_string),
            projects: None,
            apps: None,
            slots: (2, Some(4)),
            mem: (400.0, Some(1000.0)),
            jobs: (2, None),
            resources: Vec::new(),
        }
    }

    #[test]
    fn resource_limits_show_as_external() {
        let lic = LimitInfo {
            resources: vec![("licA".into(), 1.0, 2.0)],
            slots: (0, None),
            mem: (0.0, None),
            ..row("lic", None, None)
        };
        assert_eq!(
            limits_text(&[&lic], false),
            "EXTERNAL RESOURCE LIMITS:\n\n\
             NAME         USERS        QUEUES       HOSTS        PROJECTS     licA\n\
             lic          -            -            -            -            1/2\n"
        );
    }

    #[test]
    fn rows_as_lsf_shows_them() {
        let a = row("user_limit1", Some("ann"), None);
        let b = row("a_very_long_limit_name", None, Some("hostA"));
        assert_eq!(
            limits_text(&[&a, &b], false),
            "INTERNAL RESOURCE LIMITS:\n\n\
             NAME         USERS        QUEUES       HOSTS        PROJECTS     SLOTS        MEM          TMP          \
             SWP          JOBS\n\
             user_limit1  ann          -            -            -            2/4          400/1000     -            \
             -            -\n\
             a_very_long* -            -            hostA        -            2/4          400/1000     -            \
             -            -\n"
        );
    }

    #[test]
    fn options_choose_rows() {
        let q = parse(&["-u".into(), "bob".into(), "-n".into(), "l1".into(), "l2".into(), "-a".into()]).expect("ok");
        assert_eq!(
            q,
            LimitsQuery {
                all: true,
                wide: false,
                names: vec!["l1".into(), "l2".into()],
                consumers: vec![('u', "bob".into())]
            }
        );
        let (ann, every, none) =
            (row("l1", Some("ann"), None), row("l1", Some("all ~ann"), None), row("l2", None, None));
        assert!(!wanted(&ann, &q));
        assert!(wanted(&every, &q));
        assert!(wanted(&none, &q), "a limit naming no users covers bob");
        assert!(!wanted(&row("l3", None, None), &q), "not a limit asked for");
        assert!(parse(&["-u".into()]).is_err());
    }
}
