//! The long layouts of the host commands, as LSF lays them out: `bhosts
//! -l` (its slots, then the load used for scheduling, total and reserved,
//! and the load thresholds), `lshosts -l` (every static resource, the
//! run windows and the thresholds) and `lsload -l` (with `io`, no name
//! cut).
//!
//! allot measures r1m, r15m, ut, swp and mem (see `allot_proto::hosts`);
//! every other index shows `-`, never a number made up. allot applies no
//! host load thresholds (lsb.hosts' threshold columns are read and warned
//! about), so loadSched and loadStop show `-` for every index, as LSF
//! shows an index with no threshold; run windows are always open.

use std::fmt::Write as _;

use allot_proto::HostInfo;
use allot_proto::hosts::{HostLoad, Load};

use crate::hosts_cmd::mem;

/// LSF's built-in load indices, in its order.
const INDICES: [&str; 11] = ["r15s", "r1m", "r15m", "ut", "pg", "io", "ls", "it", "tmp", "swp", "mem"];

/// A host's indices as `lsload` shows them; `-` for what is not known.
fn measured(load: Option<&Load>) -> [String; 11] {
    let dash = || "-".to_string();
    let Some(l) = load else { return std::array::from_fn(|_| dash()) };
    [
        dash(),
        format!("{:.1}", l.r1m),
        format!("{:.1}", l.r15m),
        l.ut.map_or_else(dash, |u| format!("{:.0}%", u * 100.0)),
        dash(),
        dash(),
        dash(),
        dash(),
        dash(),
        mem(Some(l.swp)),
        mem(Some(l.mem)),
    ]
}

/// A row of index cells after a label of `width`, each cell 6 wide.
fn row(out: &mut String, label: &str, width: usize, cells: &[String]) {
    let _ = write!(out, "{label:<width$}");
    for c in cells {
        let _ = write!(out, "{c:>6}");
    }
    out.push('\n');
}

/// The thresholds' section: none is applied, every index `-`.
fn thresholds(out: &mut String, labels: &[&str], width: usize) {
    let names: Vec<String> = INDICES.iter().map(|s| s.to_string()).collect();
    row(out, "", width, &names);
    for label in labels {
        row(out, label, width, &vec!["-".to_string(); INDICES.len()]);
    }
}

/// `bhosts -l`: one block per host, its load from `loads` (by name).
pub fn bhosts_long(hosts: &[&HostInfo], loads: &[HostLoad]) -> String {
    let mut out = String::new();
    for h in hosts {
        let load = loads.iter().find(|l| l.name == h.name).and_then(|l| l.load.as_ref());
        let _ = writeln!(out, "HOST  {}", h.name);
        let _ = writeln!(out, "STATUS           CPUF  JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV DISPATCH_WINDOW");
        let _ = writeln!(
            out,
            "{:<15} {:>5} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}      -\n",
            h.status, "1.00", "-", h.max, h.njobs, h.run, h.ssusp, h.ususp, h.rsv
        );
        // LSF: an increasing index's total is its load plus what is
        // reserved (nothing of these is), a decreasing one's what is left
        // after the reservations: free memory less what rusage holds.
        let mut total = measured(load).to_vec();
        if let Some(l) = load {
            total[10] = mem(Some(l.mem.saturating_sub(h.mem_reserved)));
        }
        total.push(h.max.saturating_sub(h.njobs).to_string());
        let mut reserved: Vec<String> =
            ["0.0", "0.0", "0.0", "0%", "0.0", "0", "0", "0", "0M", "0M"].iter().map(|s| s.to_string()).collect();
        reserved.push(mem(Some(h.mem_reserved)));
        reserved.push("-".into());
        out.push_str(" CURRENT LOAD USED FOR SCHEDULING:\n");
        let mut names: Vec<String> = INDICES.iter().map(|s| s.to_string()).collect();
        names.push("slots".into());
        row(&mut out, "", 11, &names);
        row(&mut out, " Total", 11, &total);
        row(&mut out, " Reserved", 11, &reserved);
        out.push_str("\n\n LOAD THRESHOLD USED FOR SCHEDULING:\n");
        thresholds(&mut out, &[" loadSched", " loadStop"], 11);
        out.push('\n');
    }
    out
}

/// `lshosts -l`: one block per host, every static resource.
pub fn lshosts_long(hosts: &[HostLoad]) -> String {
    let mut out = String::new();
    for h in hosts {
        let _ = writeln!(out, "HOST_NAME:  {}", h.name);
        out.push_str(
            "type             model  cpuf ncpus ndisks maxmem maxswp maxtmp rexpri server nprocs ncores nthreads\n",
        );
        let _ = writeln!(
            out,
            "{:<10} {:>11} {:>5} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>8}\n",
            h.host_type.as_deref().unwrap_or("-"),
            h.model.as_deref().unwrap_or("-"),
            "1.0",
            h.ncpus,
            "-",
            mem(h.maxmem),
            mem(h.maxswp),
            "-",
            0,
            "Yes",
            "-",
            "-",
            "-"
        );
        let _ = writeln!(out, "RESOURCES: ({})", h.resources.join(" "));
        out.push_str("RUN_WINDOWS:  (always open)\n\nLOAD_THRESHOLDS:\n");
        thresholds(&mut out, &[""], 0);
        out.push('\n');
    }
    out
}

/// `lsload -l`: `lsload` with `io`, and no name cut.
pub fn lsload_long(hosts: &[HostLoad]) -> String {
    let width = hosts.iter().map(|h| h.name.len() + 1).max().unwrap_or(0).max(16);
    let mut out = format!("{:<width$}{:>8}", "HOST_NAME", "status");
    for i in INDICES {
        let _ = write!(out, "{i:>6}");
    }
    out.push('\n');
    for h in hosts {
        let _ = write!(out, "{:<width$}{:>8}", h.name, h.status);
        for c in measured(h.load.as_ref()) {
            let _ = write!(out, "{c:>6}");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::hosts_cmd::tests::loaded;

    fn host(name: &str) -> HostInfo {
        HostInfo {
            name: name.into(),
            status: "ok".into(),
            max: 4,
            njobs: 3,
            run: 2,
            ususp: 0,
            ssusp: 0,
            rsv: 1,
            mem_reserved: 300,
            members: Vec::new(),
        }
    }

    #[test]
    fn bhosts_long_shows_the_load_used_for_scheduling_total_less_what_is_reserved() {
        let (a, b) = (host("hostA"), host("hostB"));
        let text = bhosts_long(&[&a, &b], &[loaded("hostA")]);
        insta::assert_snapshot!(text);
        // hostA: 900M free, 300M held by rusage: 600M left; 1 slot free.
        assert!(
            text.contains("\n Total          -   0.2   1.0    5%     -     -     -     -     -    0M  600M     1\n")
        );
        assert!(
            text.contains("\n Reserved     0.0   0.0   0.0    0%   0.0     0     0     0    0M    0M  300M     -\n")
        );
        // hostB, no load heard: dashes, the slots still counted.
        let b_block = &text[text.find("HOST  hostB").expect("hostB")..];
        assert!(
            b_block.contains("\n Total          -     -     -     -     -     -     -     -     -     -     -     1\n")
        );
    }

    #[test]
    fn lshosts_and_lsload_long_in_lsfs_layout() {
        let mut far = loaded("a-host-with-a-long-name.example.org");
        far.load = None;
        far.status = "unavail".into();
        insta::assert_snapshot!(lshosts_long(&[loaded("host1")]));
        let load = lsload_long(&[loaded("host1"), far]);
        insta::assert_snapshot!(load);
        assert!(load.contains("\na-host-with-a-long-name.example.org  unavail"), "no name cut: {load}");
    }
}
