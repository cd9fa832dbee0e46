//! `lshosts` and `lsload`: what each host has and how loaded it is, in
//! LSF's layouts. With agents, as each host's agent reports it; without,
//! this machine's own figures for the host that is this machine. Figures
//! allot does not measure (CPU factor 1.0 for every host; r15s, paging,
//! logins, idle time, /tmp) show `-` rather than a number made up.

use std::fmt::Write as _;
use std::process::ExitCode;

use allot_proto::hosts::HostLoad;
use allot_proto::{Request, Response};
use anyhow::bail;

use crate::lsf::{call, cut, emit, flags_and_names};

/// Hosts named (all without names); an unknown name is LSF's error.
fn hosts(cmd: &str, args: &[String]) -> anyhow::Result<(Vec<HostLoad>, Layout)> {
    let (flags, names) = flags_and_names(cmd, args)?;
    let Response::HostLoads(all) = call(Request::HostLoads)? else { bail!("{cmd}: unexpected answer") };
    if let Some(missing) = names.iter().find(|n| !all.iter().any(|h| h.name == **n)) {
        bail!("{cmd}: {missing}: Unknown host");
    }
    let shown = all.into_iter().filter(|h| names.is_empty() || names.contains(&h.name.as_str())).collect();
    let layout = match (flags.contains(&"-l"), flags.contains(&"-w")) {
        (true, _) => Layout::Long,
        (false, wide) => Layout::Short { wide },
    };
    Ok((shown, layout))
}

/// `-l`: LSF's long layout (see [`crate::host_long`]); `-w`: no name cut.
enum Layout {
    Short { wide: bool },
    Long,
}

/// `bhosts -s` (`reserved`: with what jobs hold), `lsload -s` and
/// `lshosts -s`: the numeric resources hosts share (all static, so both
/// of the latter show their configured values), those named only if any
/// are.
pub(crate) fn shared(cmd: &str, names: &[&str], reserved: bool) -> anyhow::Result<ExitCode> {
    let Response::SharedResources(all) = call(Request::SharedResources)? else { bail!("{cmd}: unexpected answer") };
    if let Some(missing) = names.iter().find(|n| !all.iter().any(|r| r.name == **n)) {
        bail!("{cmd}: {missing}: Unknown resource name");
    }
    let shown: Vec<&allot_proto::SharedResourceInfo> =
        all.iter().filter(|r| names.is_empty() || names.contains(&r.name.as_str())).collect();
    if shown.is_empty() {
        println!("No resource found");
        return Ok(ExitCode::SUCCESS);
    }
    emit(&shared_text(&shown, reserved))?;
    Ok(ExitCode::SUCCESS)
}

/// LSF's layouts: `RESOURCE TOTAL RESERVED LOCATION` (bhosts -s) and
/// `RESOURCE VALUE LOCATION` (lsload -s).
fn shared_text(rows: &[&allot_proto::SharedResourceInfo], reserved: bool) -> String {
    let mut out = if reserved {
        String::from("RESOURCE                 TOTAL       RESERVED       LOCATION\n")
    } else {
        String::from("RESOURCE                                VALUE       LOCATION\n")
    };
    for r in rows {
        let hosts = r.hosts.join(" ");
        if reserved {
            let _ = writeln!(out, "{:<20} {:>10.1} {:>14.1}       {hosts}", r.name, r.total, r.reserved);
        } else {
            let _ = writeln!(out, "{:<36} {:>9.1}       {hosts}", r.name, r.total);
        }
    }
    out
}

/// Megabytes as LSF shows them: `900M`, `23.5G`.
pub(crate) fn mem(mb: Option<u64>) -> String {
    match mb {
        None => "-".into(),
        Some(m) if m < 1024 => format!("{m}M"),
        Some(m) => format!("{:.1}G", m as f64 / 1024.0),
    }
}

pub fn lshosts(args: &[String]) -> anyhow::Result<ExitCode> {
    let (flags, names) = flags_and_names("lshosts", args)?;
    if flags.contains(&"-s") {
        return shared("lshosts", &names, false);
    }
    let text = match hosts("lshosts", args)? {
        (hosts, Layout::Long) => crate::host_long::lshosts_long(&hosts),
        (hosts, Layout::Short { wide }) => render_lshosts(&hosts, wide),
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn render_lshosts(hosts: &[HostLoad], wide: bool) -> String {
    let mut out = String::from("HOST_NAME      type    model  cpuf ncpus maxmem maxswp server RESOURCES\n");
    for h in hosts {
        let _ = writeln!(
            out,
            "{:<14} {:>6} {:>8} {:>5} {:>5} {:>6} {:>6} {:>6} ({})",
            cut(&h.name, 14, wide),
            cut(h.host_type.as_deref().unwrap_or("-"), 6, wide),
            cut(h.model.as_deref().unwrap_or("-"), 8, wide),
            "1.0",
            h.ncpus,
            mem(h.maxmem),
            mem(h.maxswp),
            "Yes",
            h.resources.join(" ")
        );
    }
    out
}

pub fn lsload(args: &[String]) -> anyhow::Result<ExitCode> {
    let (flags, names) = flags_and_names("lsload", args)?;
    if flags.contains(&"-s") {
        return shared("lsload", &names, false);
    }
    let text = match hosts("lsload", args)? {
        (hosts, Layout::Long) => crate::host_long::lsload_long(&hosts),
        (hosts, Layout::Short { wide }) => render_lsload(&hosts, wide),
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn render_lsload(hosts: &[HostLoad], wide: bool) -> String {
    let mut out = String::from("HOST_NAME       status  r15s   r1m  r15m   ut    pg  ls    it   tmp   swp   mem\n");
    for h in hosts {
        let (r1m, r15m, ut, swp, memory) = match &h.load {
            Some(l) => (
                format!("{:.1}", l.r1m),
                format!("{:.1}", l.r15m),
                l.ut.map_or("-".into(), |u| format!("{:.0}%", u * 100.0)),
                mem(Some(l.swp)),
                mem(Some(l.mem)),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into(), "-".into()),
        };
        let _ = writeln!(
            out,
            "{:<15} {:>7} {:>5} {:>5} {:>5} {:>4} {:>5} {:>3} {:>5} {:>5} {:>5} {:>5}",
            cut(&h.name, 15, wide),
            h.status,
            "-",
            r1m,
            r15m,
            ut,
            "-",
            "-",
            "-",
            "-",
            swp,
            memory
        );
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use allot_proto::hosts::Load;

    /// A host heard from, with a load: the host layouts' tests' sample.
    pub(crate) fn loaded(name: &str) -> HostLoad {
        HostLoad {
            name: name.into(),
            status: "ok".into(),
            host_type: Some("X86_64".into()),
            model: None,
            ncpus: 2,
            maxmem: Some(24_064),
            maxswp: Some(0),
            resources: vec!["fast".into()],
            load: Some(Load { r1m: 0.25, r15m: 1.0, ut: Some(0.05), procs: 3, mem: 900, swp: 0 }),
        }
    }

    #[test]
    fn hosts_and_loads_in_lsfs_layout_with_what_is_not_known_as_a_dash() {
        let hosts = vec![
            loaded("host1"),
            HostLoad { name: "host2".into(), status: "unavail".into(), ncpus: 2, ..HostLoad::default() },
        ];
        let table = render_lshosts(&hosts, false);
        assert_eq!(
            table,
            "HOST_NAME      type    model  cpuf ncpus maxmem maxswp server RESOURCES\n\
             host1          X86_64        -   1.0     2  23.5G     0M    Yes (fast)\n\
             host2               -        -   1.0     2      -      -    Yes ()\n"
        );
        let load = render_lsload(&hosts, false);
        assert_eq!(
            load,
            "HOST_NAME       status  r15s   r1m  r15m   ut    pg  ls    it   tmp   swp   mem\n\
             host1                ok     -   0.2   1.0   5%     -   -     -     -    0M  900M\n\
             host2           unavail     -     -     -    -     -   -     -     -     -     -\n"
        );
    }
}

#[cfg(test)]
mod shared_tests {
    use super::*;

    #[test]
    fn shared_resources_as_lsf_lists_them() {
        let lic = allot_proto::SharedResourceInfo {
            name: "licA".into(),
            total: 2.0,
            reserved: 1.0,
            hosts: vec!["hostA".into(), "hostB".into()],
        };
        assert_eq!(
            shared_text(&[&lic], true),
            "RESOURCE                 TOTAL       RESERVED       LOCATION\n\
             licA                        2.0            1.0       hostA hostB\n"
        );
        assert_eq!(
            shared_text(&[&lic], false),
            "RESOURCE                                VALUE       LOCATION\n\
             licA                                       2.0       hostA hostB\n"
        );
    }
}
