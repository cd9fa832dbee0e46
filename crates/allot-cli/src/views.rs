//! The cluster views: `bqueues` (`-l` with the fairshare tables),
//! `bhosts`, `bhpart` (`-r`), `bugroup` (`-l`) and `busers`.

use std::fmt::Write;
use std::process::ExitCode;

use allot_proto::{GroupInfo, HostInfo, PolicyShares, QueueInfo, Request, Response, UserInfo};
use anyhow::bail;

use crate::lsf::{call, cut, flags_and_names};
use crate::shares_cmd::{render, render_table};

fn dash<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |x| x.to_string())
}

/// `bqueues [-l [-r]] [queue ...]`.
pub fn bqueues(args: &[String]) -> anyhow::Result<ExitCode> {
    let (flags, names) = flags_and_names("bqueues", args)?;
    let Response::Queues(queues) = call(Request::Queues)? else { bail!("bqueues: unexpected answer") };
    if let Some(missing) = names.iter().find(|n| !queues.iter().any(|q| q.name == **n)) {
        bail!("{missing}: No such queue");
    }
    let queues: Vec<&QueueInfo> =
        queues.iter().filter(|q| names.is_empty() || names.contains(&q.name.as_str())).collect();
    if flags.contains(&"-l") {
        let Response::Shares(policies) = call(Request::Shares)? else { bail!("bqueues: unexpected answer") };
        let blocks: Vec<String> = queues.iter().map(|q| queue_long(q, &policies, flags.contains(&"-r"))).collect();
        crate::lsf::emit(
            &blocks.join("-------------------------------------------------------------------------------\n\n"),
        )?;
    } else {
        crate::lsf::emit(&queue_table(&queues, flags.contains(&"-w")))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `bqueues`' table. As LSF shows it, a queue name longer than its
/// column (15) is cut and ends with `*`; with `-w` (`wide`) it is shown
/// whole and the column widens to the longest.
fn queue_table(queues: &[&QueueInfo], wide: bool) -> String {
    let width = if wide { queues.iter().map(|q| q.name.chars().count()).max().unwrap_or(0).max(15) } else { 15 };
    let mut out = format!("{:<width$} PRIO STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN  SUSP\n", "QUEUE_NAME");
    for q in queues {
        let name = if q.name.chars().count() > width {
            format!("{}*", q.name.chars().take(width - 1).collect::<String>())
        } else {
            q.name.clone()
        };
        let _ = writeln!(
            out,
            "{:<width$} {:>4}  {:<14} {:>4} {:>4} {:>4} {:>4} {:>5} {:>5} {:>5} {:>5}",
            name,
            q.priority,
            q.status,
            dash(q.max),
            dash(q.jl_u),
            dash(q.jl_p),
            dash(q.jl_h),
            q.njobs,
            q.pend,
            q.run,
            q.susp
        );
    }
    out
}

/// `bqueues -l` for one queue: its figures, limits, fairshare policy with
/// the top level of its share tree (every level with `-r`), users and
/// hosts.
fn queue_long(q: &QueueInfo, policies: &[PolicyShares], recursive: bool) -> String {
    let mut out = format!("QUEUE: {}\n", q.name);
    if !q.description.is_empty() {
        let _ = writeln!(out, "  -- {}", q.description);
    }
    out.push_str("\nPARAMETERS/STATISTICS\n");
    out.push_str("PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV\n");
    let _ = writeln!(
        out,
        "{:>4} {:>4}  {:<14} {:>4} {:>4} {:>4} {:>4} {:>5} {:>5} {:>5} {:>5} {:>5} {:>4}\n",
        q.priority,
        q.nice,
        q.status,
        dash(q.max),
        dash(q.jl_u),
        dash(q.jl_p),
        dash(q.jl_h),
        q.njobs,
        q.pend,
        q.run,
        q.ssusp,
        q.susp - q.ssusp,
        q.rsv
    );
    if let Some((default, max)) = q.run_limit {
        let minutes = |s: u64| format!("{:.1} min", s as f64 / 60.0);
        match default {
            Some(d) => {
                let _ = writeln!(out, " RUNLIMIT\n {}   {}\n", minutes(d), minutes(max));
            }
            None => {
                let _ = writeln!(out, " RUNLIMIT\n {}\n", minutes(max));
            }
        }
    }
    let policy =
        q.policy.as_ref().and_then(|name| policies.iter().find(|p| p.name == *name && p.partition_hosts.is_none()));
    if let Some(p) = policy {
        out.push_str("SCHEDULING POLICIES:  FAIRSHARE\n");
        if p.queues.len() > 1 {
            let _ = writeln!(out, "FAIRSHARE_QUEUES:  {}", p.queues.join(" "));
        }
        // Spec 000: "bqueues -l also displays DISPATCH_ORDER in the master
        // queue if it is defined" (the master: the first of the set).
        if q.dispatch_order_queue && p.queues.first() == Some(&q.name) {
            out.push_str("DISPATCH_ORDER:  QUEUE\n");
        }
        let _ = writeln!(out, "USER_SHARES:  {}\n", p.user_shares);
        for table in p.tables.iter().take(if recursive { usize::MAX } else { 1 }) {
            // Every queue of a cross-queue set shows the tree under its own name.
            let path = match table.path.split_once('/') {
                Some((_, rest)) => format!("{}/{rest}", q.name),
                None => table.path.clone(),
            };
            let shown = allot_proto::ShareTableInfo { path, rows: table.rows.clone() };
            out.push_str(&render_table(&shown, p.show_adjust));
            out.push('\n');
        }
    }
    let users = q.users.as_ref().map_or_else(|| "all users".to_string(), |u| u.join(" "));
    let hosts = if q.hosts.is_empty() { "all".to_string() } else { q.hosts.join(" ") };
    let _ = writeln!(out, "USERS: {users}\nHOSTS:  {hosts}");
    if let Some((pool, share)) = &q.slot_pool {
        let _ = writeln!(out, "SLOT_SHARE: {share}%\nSLOT_POOL: {pool}");
    }
    if let Some(starter) = &q.job_starter {
        let _ = writeln!(out, "JOB_STARTER:  {starter}");
    }
    out.push('\n');
    out
}

/// `bhosts [-l] [-w] [-X] [host ...]`: job slots per host; `-w` cuts no
/// name, `-l` one block per host with its load (see [`crate::host_long`]). A compute unit with CONDENSED = Y shows
/// as one row in place of its hosts (spec 004's enclosures and racks);
/// `-X` shows every host uncondensed instead. Named, a unit or a host
/// shows as named.
pub fn bhosts(args: &[String]) -> anyhow::Result<ExitCode> {
    let (flags, names) = flags_and_names("bhosts", args)?;
    if flags.contains(&"-s") {
        return crate::hosts_cmd::shared("bhosts", &names, true);
    }
    let Response::Hosts(hosts) = call(Request::Hosts)? else { bail!("bhosts: unexpected answer") };
    if let Some(missing) = names.iter().find(|n| !hosts.iter().any(|h| h.name == **n)) {
        bail!("{missing}: Bad host name, host group name or cluster name");
    }
    // LSF: `-l`, like `-X`, shows every host uncondensed.
    let long = flags.contains(&"-l");
    let shown = condense(&hosts, &names, flags.contains(&"-X") || long);
    if long {
        let Response::HostLoads(loads) = call(Request::HostLoads)? else { bail!("bhosts: unexpected answer") };
        crate::lsf::emit(&crate::host_long::bhosts_long(&shown, &loads))?;
        return Ok(ExitCode::SUCCESS);
    }
    crate::lsf::emit(&render_hosts(&shown, flags.contains(&"-w")))?;
    Ok(ExitCode::SUCCESS)
}

/// The rows `bhosts` shows (see [`bhosts`]).
fn condense<'a>(hosts: &'a [HostInfo], names: &[&str], uncondensed: bool) -> Vec<&'a HostInfo> {
    if !names.is_empty() {
        return hosts.iter().filter(|h| names.contains(&h.name.as_str())).collect();
    }
    let in_unit = |h: &HostInfo| hosts.iter().any(|u| u.members.contains(&h.name));
    match uncondensed {
        true => hosts.iter().filter(|h| h.members.is_empty()).collect(),
        false => hosts.iter().filter(|h| !h.members.is_empty() || !in_unit(h)).collect(),
    }
}

fn render_hosts(hosts: &[&HostInfo], wide: bool) -> String {
    let mut out = String::new();
    out.push_str("HOST_NAME          STATUS       JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV\n");
    for h in hosts {
        // LSF's short layout says `closed` whatever the reason
        // (closed_Adm, closed_Full...); `-w` and `-l` say which.
        let status = match h.status.starts_with("closed_") && !wide {
            true => "closed",
            false => h.status.as_str(),
        };
        let _ = writeln!(
            out,
            "{:<18} {:<12} {:>4} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
            cut(&h.name, 18, wide),
            cut(status, 12, wide),
            "-",
            h.max,
            h.njobs,
            h.run,
            h.ssusp,
            h.ususp,
            h.rsv
        );
    }
    out
}

/// `bhpart [-r] [partition ...]`: host partitions with the top level of
/// their share trees, or every level with `-r`.
pub fn bhpart(args: &[String]) -> anyhow::Result<ExitCode> {
    let (flags, names) = flags_and_names("bhpart", args)?;
    let Response::Shares(policies) = call(Request::Shares)? else { bail!("bhpart: unexpected answer") };
    let partitions: Vec<PolicyShares> = policies.into_iter().filter(|p| p.partition_hosts.is_some()).collect();
    if let Some(missing) = names.iter().find(|n| !partitions.iter().any(|p| p.name == **n)) {
        bail!("{missing}: No such host partition");
    }
    let shown: Vec<PolicyShares> =
        partitions.into_iter().filter(|p| names.is_empty() || names.contains(&p.name.as_str())).collect();
    if shown.is_empty() {
        println!("No host partition found");
        return Ok(ExitCode::SUCCESS);
    }
    crate::lsf::emit(&render(&shown, flags.contains(&"-r")))?;
    Ok(ExitCode::SUCCESS)
}

/// `bugroup [-l] [group ...]`.
pub fn bugroup(args: &[String]) -> anyhow::Result<ExitCode> {
    let (flags, names) = flags_and_names("bugroup", args)?;
    let Response::Groups(groups) = call(Request::Groups)? else { bail!("bugroup: unexpected answer") };
    if let Some(missing) = names.iter().find(|n| !groups.iter().any(|g| g.name == **n)) {
        bail!("{missing}: No such user group");
    }
    let shown: Vec<&GroupInfo> =
        groups.iter().filter(|g| names.is_empty() || names.contains(&g.name.as_str())).collect();
    if shown.is_empty() {
        println!("No user group found");
        return Ok(ExitCode::SUCCESS);
    }
    crate::lsf::emit(&groups_text(&shown, flags.contains(&"-l")))?;
    Ok(ExitCode::SUCCESS)
}

/// The groups as `bugroup` prints them; `-l` adds each group's shares,
/// written `[name,shares]` as in the spec's sample.
fn groups_text(groups: &[&GroupInfo], long: bool) -> String {
    let mut out = String::new();
    if long {
        for g in groups {
            let _ = writeln!(out, "GROUP_NAME: {}\nUSERS: {}", g.name, g.members.join(" "));
            if !g.shares.is_empty() {
                let _ = writeln!(out, "SHARES: {}", g.shares.replace(", ", ","));
            }
            out.push('\n');
        }
    } else {
        out.push_str("GROUP_NAME    USERS\n");
        for g in groups {
            let _ = writeln!(out, "{:<13} {}", g.name, g.members.join(" "));
        }
    }
    out
}

/// `busers [user ... | all]`: job slots by state and MAX_JOBS.
pub fn busers(args: &[String]) -> anyhow::Result<ExitCode> {
    let (_, names) = flags_and_names("busers", args)?;
    let users = names.iter().map(|n| n.to_string()).collect();
    let Response::Users(users) = call(Request::Users { users })? else { bail!("busers: unexpected answer") };
    crate::lsf::emit(&users_text(&users))?;
    Ok(ExitCode::SUCCESS)
}

fn users_text(users: &[UserInfo]) -> String {
    let mut out = String::from("USER/GROUP          JL/P    MAX  NJOBS   PEND    RUN  SSUSP  USUSP    RSV\n");
    for u in users {
        let _ = writeln!(
            out,
            "{:<19} {:>4} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
            u.name,
            "-",
            dash(u.max),
            u.pend + u.run + u.ssusp + u.ususp,
            u.pend,
            u.run,
            u.ssusp,
            u.ususp,
            u.rsv
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4-slot host: `njobs` counts running, stopped and reserved slots.
    fn host(name: &str, status: &str, njobs: u32, ususp: u32, rsv: u32) -> HostInfo {
        HostInfo {
            name: name.into(),
            status: status.into(),
            max: 4,
            njobs,
            run: njobs - ususp - rsv,
            ususp,
            ssusp: 0,
            rsv,
            mem_reserved: 0,
            members: Vec::new(),
        }
    }

    #[test]
    fn condensed_units_replace_their_hosts_unless_uncondensed() {
        let (a, b, c) = (host("a1", "ok", 1, 0, 0), host("a2", "ok", 0, 0, 0), host("lone", "ok", 0, 0, 0));
        let unit =
            HostInfo { name: "enclosure1".into(), members: vec!["a1".into(), "a2".into()], ..host("", "ok", 1, 0, 0) };
        let hosts = [a, b, c, unit];
        let names = |rows: Vec<&HostInfo>| rows.iter().map(|h| h.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(condense(&hosts, &[], false)), ["lone", "enclosure1"]);
        assert_eq!(names(condense(&hosts, &[], true)), ["a1", "a2", "lone"]);
        assert_eq!(names(condense(&hosts, &["a2", "enclosure1"], false)), ["a2", "enclosure1"]);
    }

    /// A queue name past 15 characters is cut with `*`, as LSF's
    /// `bqueues` shows it; `-w` shows it whole.
    #[test]
    fn bqueues_cuts_long_names_and_w_shows_them_whole() {
        let q = |name: &str| QueueInfo {
            name: name.into(),
            priority: 30,
            status: "Open:Active".into(),
            ..QueueInfo::default()
        };
        let (long, short) = (q("a_very_long_queue_name"), q("normal"));
        let narrow = queue_table(&[&long, &short], false);
        assert!(narrow.lines().nth(1).is_some_and(|l| l.starts_with("a_very_long_qu* ")), "{narrow}");
        let wide = queue_table(&[&long, &short], true);
        assert!(wide.starts_with("QUEUE_NAME             PRIO"), "{wide}");
        assert!(wide.lines().nth(1).is_some_and(|l| l.starts_with("a_very_long_queue_name   30")), "{wide}");
        assert!(wide.lines().nth(2).is_some_and(|l| l.starts_with("normal                   30")), "{wide}");
    }

    #[test]
    fn bhosts_wide_and_long() {
        let long_name = host("compute-node-0042.example.org", "closed_Full", 4, 1, 1);
        let ok = host("hostA", "ok", 1, 0, 0);
        let hosts = [&ok, &long_name];
        assert_eq!(
            render_hosts(&hosts, false),
            "HOST_NAME          STATUS       JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV\n\
             hostA              ok              -      4      1      1      0      0      0\n\
             compute-node-0042* closed          -      4      4      2      0      1      1\n",
            "LSF's short layout: `closed`, whatever the reason"
        );
        let wide = render_hosts(&hosts, true);
        assert!(wide.contains("\ncompute-node-0042.example.org closed_Full "), "{wide}");
        let long = crate::host_long::bhosts_long(&[&long_name], &[]);
        assert!(
            long.starts_with(
                "HOST  compute-node-0042.example.org\n\
                 STATUS           CPUF  JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV DISPATCH_WINDOW\n\
                 closed_Full      1.00     -      4      4      2      0      1      1      -\n\n"
            ),
            "{long}"
        );
    }

    /// The spec's `bugroup -l` sample (spec 000, "View hierarchical share
    /// information for a group"), line by line.
    #[test]
    fn bugroup_l_matches_the_spec() {
        let g = |name: &str, members: &[&str], shares: &str| GroupInfo {
            name: name.into(),
            members: members.iter().map(|m| m.to_string()).collect(),
            shares: shares.into(),
        };
        let groups = [
            g("group1", &["group2/", "group3/"], "[group2, 20] [group3, 10]"),
            g("group2", &["user1", "user2", "user3"], "[others, 10] [user3, 4]"),
            g("group3", &["all"], "[user2, 10] [default, 5]"),
        ];
        let text = groups_text(&groups.iter().collect::<Vec<_>>(), true);
        let words: Vec<&str> = text.split_whitespace().collect();
        let spec = "GROUP_NAME: group1 USERS: group2/ group3/ SHARES: [group2,20] [group3,10] GROUP_NAME: group2 \
                    USERS: user1 user2 user3 SHARES: [others,10] [user3,4] GROUP_NAME: group3 USERS: all SHARES: \
                    [user2,10] [default,5]";
        assert_eq!(words, spec.split_whitespace().collect::<Vec<_>>());
    }

    #[test]
    fn busers_counts_slots_by_state() {
        let u = UserInfo { name: "user1".into(), max: Some(12), pend: 2, run: 2, ssusp: 3, ususp: 1, rsv: 1 };
        assert_eq!(
            users_text(&[u]),
            "USER/GROUP          JL/P    MAX  NJOBS   PEND    RUN  SSUSP  USUSP    RSV\n\
             user1                  -     12      8      2      2      3      1      1\n"
        );
    }
}
