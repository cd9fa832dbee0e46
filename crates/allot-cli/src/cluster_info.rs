//! The commands that describe the cluster, as LSF lays them out: `lsid`,
//! `lsclusters [-w]`, `bparams [-a]`, `badmin showconf mbd`, `badmin
//! showstatus` and `bmgroup`. One answer from allotd ([`ClusterInfo`])
//! feeds them all.

use std::fmt::Write as _;
use std::process::ExitCode;

use allot_proto::cluster::ClusterInfo;
use allot_proto::{Request, Response};
use anyhow::bail;

fn ask() -> anyhow::Result<ClusterInfo> {
    match crate::lsf::call(Request::Cluster)? {
        Response::Cluster(c) => Ok(*c),
        other => bail!("unexpected answer {other:?}"),
    }
}

/// `Thu Nov 26 09:10:00 2026`, in the local zone.
fn when(secs: u64) -> String {
    allot_exec::clock::full_in(secs, crate::clock::zone())
}

pub fn lsid_text(c: &ClusterInfo) -> String {
    format!(
        "allot {}, batch scheduling with LSF's commands\n\nMy cluster name is {}\nMy master name is {}\n",
        env!("CARGO_PKG_VERSION"),
        c.name,
        c.master
    )
}

pub fn lsclusters_text(c: &ClusterInfo, wide: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<15}{:<9}{:<22} {:>8}{:>9}{:>9}",
        "CLUSTER_NAME", "STATUS", "MASTER_HOST", "ADMIN", "HOSTS", "SERVERS"
    );
    let hosts = c.hosts.ok + c.hosts.closed + c.hosts.unreachable + c.hosts.unavailable;
    let admin = c.admins.first().map_or("root", String::as_str);
    let (name, master, admin) =
        (crate::lsf::cut(&c.name, 14, wide), crate::lsf::cut(&c.master, 22, wide), crate::lsf::cut(admin, 8, wide));
    let _ = writeln!(out, "{name:<14} {:<9}{master:<22} {admin:>8}{hosts:>9}{hosts:>9}", "ok");
    out
}

pub fn bparams_text(c: &ClusterInfo, all: bool) -> String {
    let get = |k: &str| c.params.iter().find(|(n, _)| n == k).map_or("", |(_, v)| v.as_str());
    if all {
        let mut out = format!("lsb.params configuration at {}\n", when(c.configured));
        for (k, v) in &c.params {
            let _ = writeln!(out, "    {k} = {v}");
        }
        return out;
    }
    format!(
        "Default Queues:  {}\nMBD_SLEEP_TIME used for calculations:  {} seconds\nJob Accepting Interval:  {} seconds\n",
        get("DEFAULT_QUEUE"),
        get("MBD_SLEEP_TIME"),
        get("JOB_ACCEPT_INTERVAL")
    )
}

pub fn showconf_text(c: &ClusterInfo) -> String {
    let mut out = format!("MBD configuration at {}\n", when(c.configured));
    for (k, v) in &c.dirs {
        let _ = writeln!(out, "    {k} = {v}");
    }
    out
}

pub fn showstatus_text(c: &ClusterInfo) -> String {
    let h = &c.hosts;
    let servers = h.ok + h.closed + h.unreachable + h.unavailable;
    let j = &c.jobs;
    let mut out = String::from("LSF runtime mbatchd information\n");
    let line = |out: &mut String, label: &str, value: String| {
        let _ = writeln!(out, "{:<39}{value}", format!("     {label}"));
    };
    out.push_str("     Available local hosts (current/peak):\n");
    for (label, n) in [("Clients:", 0), ("Servers:", u64::from(servers)), ("CPUs:", c.cpus), ("Slots:", c.slots)] {
        line(&mut out, &format!("   {label}"), format!("{n}/{n}"));
    }
    out.push('\n');
    line(&mut out, "Number of servers:", servers.to_string());
    for (label, n) in
        [("Ok:", h.ok), ("Closed:", h.closed), ("Unreachable:", h.unreachable), ("Unavailable:", h.unavailable)]
    {
        line(&mut out, &format!("    {label}"), n.to_string());
    }
    out.push('\n');
    line(&mut out, "Number of jobs:", (j.running + j.suspended + j.pending + j.finished).to_string());
    for (label, n) in
        [("Running:", j.running), ("Suspended:", j.suspended), ("Pending:", j.pending), ("Finished:", j.finished)]
    {
        line(&mut out, &format!("    {label}"), n.to_string());
    }
    out.push('\n');
    line(&mut out, "Number of users:", c.users.to_string());
    line(&mut out, "Number of user groups:", c.user_groups.to_string());
    line(&mut out, "Number of active users:", c.active_users.to_string());
    out.push('\n');
    line(&mut out, "Latest mbatchd start:", when(c.started));
    line(&mut out, "Active mbatchd PID:", c.pid.to_string());
    out.push('\n');
    line(&mut out, "Latest mbatchd reconfig:", when(c.configured));
    out
}

fn no_more(cmd: &str, args: &[String]) -> anyhow::Result<()> {
    match args.first() {
        Some(a) => bail!("{cmd}: {a}: unknown option"),
        None => Ok(()),
    }
}

pub fn lsid(args: &[String]) -> anyhow::Result<ExitCode> {
    no_more("lsid", args)?;
    crate::lsf::emit(&lsid_text(&ask()?))?;
    Ok(ExitCode::SUCCESS)
}

pub fn lsclusters(args: &[String]) -> anyhow::Result<ExitCode> {
    let args = crate::lsf::split_options("lsclusters", args)?;
    let wide = args.iter().any(|a| a == "-w");
    no_more("lsclusters", &args.into_iter().filter(|a| a != "-w").collect::<Vec<_>>())?;
    crate::lsf::emit(&lsclusters_text(&ask()?, wide))?;
    Ok(ExitCode::SUCCESS)
}

pub fn bparams(args: &[String]) -> anyhow::Result<ExitCode> {
    let args = crate::lsf::split_options("bparams", args)?;
    // `-l` is LSF's long form of the same few; `-a` every parameter.
    let all = args.iter().any(|a| a == "-a");
    no_more("bparams", &args.into_iter().filter(|a| a != "-a" && a != "-l").collect::<Vec<_>>())?;
    crate::lsf::emit(&bparams_text(&ask()?, all))?;
    Ok(ExitCode::SUCCESS)
}

/// `badmin showconf mbd` and `badmin showstatus`.
pub fn badmin(sub: &str, args: &[String]) -> anyhow::Result<ExitCode> {
    let text = match (sub, args) {
        ("showconf", [what]) if what == "mbd" => showconf_text(&ask()?),
        ("showconf", _) => bail!("badmin showconf: expected `mbd` (allot has no sbatchd of its own)"),
        _ => {
            no_more("badmin showstatus", args)?;
            showstatus_text(&ask()?)
        }
    };
    crate::lsf::emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use allot_proto::cluster::{HostCounts, JobCounts};

    fn cluster() -> ClusterInfo {
        ClusterInfo {
            name: "cluster1".into(),
            master: "hostA".into(),
            admins: vec!["lsfadmin".into()],
            hosts: HostCounts { ok: 5, closed: 1, unreachable: 0, unavailable: 0 },
            cpus: 14,
            slots: 50,
            jobs: JobCounts { running: 2, suspended: 1, pending: 3, finished: 7 },
            users: 3,
            active_users: 2,
            user_groups: 1,
            started: 1_795_294_501,
            configured: 1_795_294_561,
            pid: 26283,
            params: vec![
                ("DEFAULT_QUEUE".into(), "normal idle".into()),
                ("JOB_ACCEPT_INTERVAL".into(), "0".into()),
                ("MBD_SLEEP_TIME".into(), "20".into()),
            ],
            dirs: vec![("LSB_SHAREDIR".into(), "/var/lib/allot".into()), ("LSF_ENVDIR".into(), "/etc/allot".into())],
            host_groups: Vec::new(),
        }
    }

    #[test]
    fn lsid_and_lsclusters_as_lsf_lays_them_out() {
        let c = cluster();
        let id = lsid_text(&c);
        assert!(id.ends_with("\n\nMy cluster name is cluster1\nMy master name is hostA\n"), "{id}");
        assert_eq!(
            lsclusters_text(&c, false),
            "CLUSTER_NAME   STATUS   MASTER_HOST               ADMIN    HOSTS  SERVERS\n\
             cluster1       ok       hostA                  lsfadmin        6        6\n"
        );
        let long = ClusterInfo { name: "a_cluster_with_a_long_name".into(), ..c };
        assert!(lsclusters_text(&long, false).contains("\na_cluster_wit* ok"), "cut as LSF cuts");
        assert!(lsclusters_text(&long, true).contains("\na_cluster_with_a_long_name ok"), "-w: whole");
    }

    #[test]
    fn bparams_showconf_and_showstatus_as_lsf_lays_them_out() {
        let c = cluster();
        assert_eq!(
            bparams_text(&c, false),
            "Default Queues:  normal idle\nMBD_SLEEP_TIME used for calculations:  20 seconds\n\
             Job Accepting Interval:  0 seconds\n"
        );
        assert_eq!(
            bparams_text(&c, true),
            "lsb.params configuration at Sat Nov 21 20:56:01 2026\n    DEFAULT_QUEUE = normal idle\n    \
             JOB_ACCEPT_INTERVAL = 0\n    MBD_SLEEP_TIME = 20\n"
        );
        assert_eq!(
            showconf_text(&c),
            "MBD configuration at Sat Nov 21 20:56:01 2026\n    LSB_SHAREDIR = /var/lib/allot\n    \
             LSF_ENVDIR = /etc/allot\n"
        );
        insta::assert_snapshot!(showstatus_text(&c));
    }
}

/// `bmgroup [-w] [host_group ...]`: the host groups of `lsb.hosts` and
/// their hosts, as LSF lists them (`GROUP_NAME HOSTS`); a group name cut
/// at 13 characters with `*` unless `-w`.
pub fn bmgroup(args: &[String]) -> anyhow::Result<ExitCode> {
    let (flags, names) = crate::lsf::flags_and_names("bmgroup", args)?;
    let c = ask()?;
    if let Some(missing) = names.iter().find(|n| !c.host_groups.iter().any(|(g, _)| g == *n)) {
        bail!("{missing}: No such user/host group");
    }
    let shown: Vec<&(String, Vec<String>)> =
        c.host_groups.iter().filter(|(g, _)| names.is_empty() || names.contains(&g.as_str())).collect();
    if shown.is_empty() {
        println!("No host group found");
        return Ok(ExitCode::SUCCESS);
    }
    crate::lsf::emit(&host_groups_text(&shown, flags.contains(&"-w")))?;
    Ok(ExitCode::SUCCESS)
}

fn host_groups_text(groups: &[&(String, Vec<String>)], wide: bool) -> String {
    let mut out = String::from("GROUP_NAME    HOSTS\n");
    for (g, hosts) in groups {
        let name = if !wide && g.chars().count() > 13 {
            format!("{}*", g.chars().take(12).collect::<String>())
        } else {
            g.clone()
        };
        let _ = writeln!(out, "{name:<13} {}", hosts.iter().map(|h| format!("{h} ")).collect::<String>().trim_end());
    }
    out
}

#[cfg(test)]
mod bmgroup_tests {
    #[test]
    fn host_groups_as_lsf_lists_them() {
        let a = ("groupA".to_string(), vec!["hostA".to_string(), "hostB".to_string()]);
        let long = ("a_very_long_group_name".to_string(), vec!["hostC".to_string()]);
        assert_eq!(
            super::host_groups_text(&[&a, &long], false),
            "GROUP_NAME    HOSTS\ngroupA        hostA hostB\na_very_long_* hostC\n"
        );
        assert!(super::host_groups_text(&[&long], true).contains("\na_very_long_group_name hostC\n"));
    }
}
