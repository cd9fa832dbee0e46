//! `bgadd`, `bgmod`, `bgdel` and `bjgroup`: job groups
//! (`allot_engine::job_groups`), with LSF's options and lines.

use std::fmt::Write as _;
use std::process::ExitCode;

use allot_proto::job_groups::{GroupCounts, GroupDeletion, JobGroupInfo, JobGroupRequest};
use allot_proto::{Request, Response};
use anyhow::{anyhow, bail};

use crate::lsf::{call, split_options};

/// `-L limit`: 0 to 2147483647.
fn limit(cmd: &str, v: Option<&String>) -> anyhow::Result<u32> {
    let v = v.ok_or_else(|| anyhow!("{cmd}: -L: expected a limit after it"))?;
    v.parse::<u32>()
        .ok()
        .filter(|&l| l <= allot_engine::job_groups::MAX_LIMIT)
        .ok_or_else(|| anyhow!("{cmd}: -L {v}: expected a job limit, a whole number from 0 to 2147483647"))
}

/// The one group a command names.
fn one_group(cmd: &str, names: &[&String]) -> anyhow::Result<String> {
    match names {
        [g] => Ok((*g).clone()),
        [] => bail!("{cmd}: name the job group, by its full path (/A/B)"),
        [_, extra, ..] => bail!("{cmd}: {extra}: unexpected argument"),
    }
}

/// Done, or allotd's reason on standard error.
fn answered(cmd: &str, response: Response, done: impl FnOnce() -> String) -> anyhow::Result<ExitCode> {
    match response {
        Response::Done => {
            println!("{}", done());
            Ok(ExitCode::SUCCESS)
        }
        Response::Error(e) => {
            eprintln!("{e}");
            Ok(ExitCode::FAILURE)
        }
        other => bail!("{cmd}: unexpected answer {other:?}"),
    }
}

/// `bgadd [-L limit] job_group_name`.
pub fn bgadd(args: &[String]) -> anyhow::Result<ExitCode> {
    let args = split_options("bgadd", args)?;
    let (mut lim, mut names) = (None, Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-L" => lim = Some(limit("bgadd", it.next())?),
            _ => names.push(a),
        }
    }
    let group = one_group("bgadd", &names)?;
    let shown = allot_engine::job_groups::normal(&group).to_string();
    let response = call(Request::JobGroup(JobGroupRequest::Add { group, limit: lim }))?;
    answered("bgadd", response, || format!("Job group <{shown}> was added."))
}

/// `bgmod [-L limit | -Ln] [-u owner] job_group_name`.
pub fn bgmod(args: &[String]) -> anyhow::Result<ExitCode> {
    let args = split_options("bgmod", args)?;
    let (mut lim, mut owner, mut names) = (None, None, Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-L" if lim.is_some() => bail!("bgmod: -L and -Ln: one or the other"),
            "-L" => lim = Some(Some(limit("bgmod", it.next())?)),
            "-Ln" if lim.is_some() => bail!("bgmod: -L and -Ln: one or the other"),
            "-Ln" => lim = Some(None),
            "-u" => owner = Some(it.next().ok_or_else(|| anyhow!("bgmod: -u: expected a user after it"))?.clone()),
            _ => names.push(a),
        }
    }
    let group = one_group("bgmod", &names)?;
    if lim.is_none() && owner.is_none() {
        bail!("bgmod: nothing to change: give -L limit, -Ln or -u owner");
    }
    let shown = allot_engine::job_groups::normal(&group).to_string();
    let response = call(Request::JobGroup(JobGroupRequest::Modify { group, limit: lim, owner }))?;
    answered("bgmod", response, || format!("Job group {shown} is modified."))
}

/// `bgdel [-u user | -u all] job_group_name | 0`, `bgdel -c job_group_name`.
pub fn bgdel(args: &[String]) -> anyhow::Result<ExitCode> {
    let args = split_options("bgdel", args)?;
    let (mut user, mut under, mut names) = (None, None, Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-u" => {
                user = Some(it.next().ok_or_else(|| anyhow!("bgdel: -u: expected a user or all after it"))?.clone())
            }
            "-c" => under = Some(it.next().ok_or_else(|| anyhow!("bgdel: -c: expected a job group after it"))?.clone()),
            _ => names.push(a),
        }
    }
    let which = match (under, names.as_slice()) {
        (Some(g), []) => GroupDeletion::EmptyUnder(g),
        (Some(_), [extra, ..]) => bail!("bgdel: {extra}: unexpected argument with -c"),
        // "If you specify a job group name, the -u option is ignored."
        (None, [g]) if g.as_str() != "0" => GroupDeletion::Group((*g).clone()),
        (None, [_]) => match user {
            None => GroupDeletion::EmptyMine,
            Some(u) if u == "all" => GroupDeletion::EmptyOf(None),
            Some(u) => GroupDeletion::EmptyOf(Some(u)),
        },
        (None, names) => one_group("bgdel", names).map(GroupDeletion::Group)?,
    };
    let named = matches!(which, GroupDeletion::Group(_));
    match call(Request::JobGroup(JobGroupRequest::Delete(which)))? {
        Response::JobGroups(deleted) => {
            for g in &deleted {
                println!("Job group {} is deleted.", g.path);
            }
            if deleted.is_empty() && !named {
                println!("No empty job group found");
            }
            Ok(ExitCode::SUCCESS)
        }
        Response::Error(e) => {
            eprintln!("{e}");
            Ok(ExitCode::FAILURE)
        }
        other => bail!("bgdel: unexpected answer {other:?}"),
    }
}

/// `bjgroup [-N] [-s [job_group_name]]`.
pub fn bjgroup(args: &[String]) -> anyhow::Result<ExitCode> {
    let args = split_options("bjgroup", args)?;
    let (mut slots, mut sorted, mut names) = (false, false, Vec::new());
    for a in &args {
        match a.as_str() {
            "-N" => slots = true,
            "-s" => sorted = true,
            _ => names.push(a),
        }
    }
    let only = match names.as_slice() {
        [] => None,
        [g] if sorted => Some((*g).clone()),
        [g] => bail!("bjgroup: {g}: a job group is named with -s"),
        [_, extra, ..] => bail!("bjgroup: {extra}: unexpected argument"),
    };
    let Response::JobGroups(mut groups) = call(Request::JobGroup(JobGroupRequest::List))? else {
        bail!("bjgroup: unexpected answer")
    };
    if let Some(g) = &only {
        let (path, alone) = (allot_engine::job_groups::normal(g), g.len() > 1 && g.ends_with('/'));
        groups.retain(|i| if alone { i.path == path } else { allot_engine::job_groups::is_within(&i.path, path) });
    }
    // Without -s, shallower groups first (LSF's example lists /A, /X,
    // /A/B, /X/Y); with it, each group above the groups under it.
    if !sorted {
        groups.sort_by(|a, b| depth(&a.path).cmp(&depth(&b.path)).then_with(|| a.path.cmp(&b.path)));
    }
    if groups.is_empty() {
        println!("No job group found");
        return Ok(ExitCode::FAILURE);
    }
    print!("{}", table(&groups, slots));
    Ok(ExitCode::SUCCESS)
}

fn depth(path: &str) -> usize {
    path.matches('/').count()
}

/// bjgroup's table: by jobs, or (`-N`) by slots.
pub(crate) fn table(groups: &[JobGroupInfo], slots: bool) -> String {
    let width = groups.iter().map(|g| g.path.len() + 1).max().unwrap_or(0).max(19);
    let mut out = String::new();
    let row = |out: &mut String, name: &str, cells: &[String]| {
        let _ = write!(out, "{name:<width$}");
        // Columns of 7 and a space, the last (the owner) as it is.
        if let Some((last, rest)) = cells.split_last() {
            for c in rest {
                let _ = write!(out, "{c:<7} ");
            }
            let _ = write!(out, "{last}");
        }
        let _ = writeln!(out);
    };
    let head: &[&str] = if slots {
        &["NSLOTS", "PEND", "RUN", "SSUSP", "USUSP", "RSV", "SLA", "OWNER"]
    } else {
        &["NJOBS", "PEND", "RUN", "SSUSP", "USUSP", "FINISH", "SLA", "JLIMIT", "OWNER"]
    };
    row(&mut out, "GROUP_NAME", &head.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    for g in groups {
        let c: &GroupCounts = if slots { &g.slots } else { &g.jobs };
        let mut cells = if slots {
            let unfinished = c.total() - c.finish;
            vec![unfinished, c.pend, c.run, c.ssusp, c.ususp, 0]
        } else {
            vec![c.total(), c.pend, c.run, c.ssusp, c.ususp, c.finish]
        }
        .into_iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>();
        cells.push("()".into());
        if !slots {
            cells.push(format!("{}/{}", g.started, g.limit.map_or_else(|| "-".to_string(), |l| l.to_string())));
        }
        cells.push(g.owner.clone());
        row(&mut out, &g.path, &cells);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_lsfs_columns() {
        let g = JobGroupInfo {
            path: "/X".into(),
            owner: "user1".into(),
            limit: Some(100),
            started: 25,
            jobs: GroupCounts { run: 25, ..Default::default() },
            slots: GroupCounts { run: 50, ..Default::default() },
        };
        let t = table(std::slice::from_ref(&g), false);
        let lines: Vec<&str> = t.lines().collect();
        let words = |l: &str| l.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            words(lines[0]),
            ["GROUP_NAME", "NJOBS", "PEND", "RUN", "SSUSP", "USUSP", "FINISH", "SLA", "JLIMIT", "OWNER"]
        );
        assert_eq!(words(lines[1]), ["/X", "25", "0", "25", "0", "0", "0", "()", "25/100", "user1"]);
        let by_slots = table(&[g], true);
        assert_eq!(
            words(by_slots.lines().nth(1).expect("a row")),
            ["/X", "50", "0", "50", "0", "0", "0", "()", "user1"]
        );
        assert_eq!(lines[0].find("NJOBS"), lines[1].find("25"), "columns line up");
    }
}
