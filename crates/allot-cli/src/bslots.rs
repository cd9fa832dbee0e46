//! `bslots [-l] [-n slots] [-R "select"] [-W [hour:]minute]`: the slots
//! a backfill job could use now, and for how long (spec 004, "Displaying
//! available slots for backfill jobs"); the windows are the engine's
//! (`Engine::backfill_windows`).

use std::fmt::Write;
use std::process::ExitCode;

use allot_proto::{Request, Response, SlotWindow};
use anyhow::{anyhow, bail};

use crate::lsf::call;

/// What the options ask: windows of at least `slots` slots and at least
/// `runtime` seconds, on hosts `select` holds on; `long` for `-l`.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct SlotsQuery {
    pub(crate) slots: Option<u32>,
    pub(crate) runtime: Option<u64>,
    pub(crate) select: Option<String>,
    pub(crate) long: bool,
}

pub(crate) fn parse(args: &[String]) -> anyhow::Result<SlotsQuery> {
    let args = &crate::lsf::split_options("bslots", args)?;
    let mut q = SlotsQuery::default();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "-l" {
            q.long = true;
            i += 1;
            continue;
        }
        if !["-n", "-W", "-R"].contains(&arg) {
            bail!("bslots: {arg}: unknown option (bslots [-l] [-n slots] [-R \"select\"] [-W [hour:]minute])");
        }
        let value = args.get(i + 1).ok_or_else(|| anyhow!("bslots: {arg}: a value is needed"))?;
        match arg {
            "-n" => {
                let n = value.parse::<u32>().ok().filter(|&n| n > 0);
                q.slots = Some(n.ok_or_else(|| anyhow!("bslots: -n {value}: a number of slots is needed"))?);
            }
            "-W" => {
                let w = allot_config::bsub::run_limit(value)
                    .ok_or_else(|| anyhow!("bslots: -W {value}: [hour:]minute is needed"))?;
                q.runtime = Some(w);
            }
            _ => q.select = Some(value.clone()),
        }
        i += 2;
    }
    Ok(q)
}

pub fn bslots(args: &[String]) -> anyhow::Result<ExitCode> {
    let q = parse(args)?;
    let Response::Slots(windows) = call(Request::Slots { select: q.select.clone() })? else {
        bail!("bslots: unexpected answer")
    };
    crate::lsf::emit(&render(&windows, &q))?;
    Ok(ExitCode::SUCCESS)
}

/// A window's run time as bslots shows it: `UNLIMITED`, `40 minutes`,
/// `1 hour 30 minutes`, `2 hours 0 minutes` (whole minutes).
pub(crate) fn runtime(seconds: Option<u64>) -> String {
    let Some(s) = seconds else { return "UNLIMITED".into() };
    let (h, m) = (s / 3600, s % 3600 / 60);
    let minutes = if m == 1 { "minute" } else { "minutes" };
    match h {
        0 => format!("{m} {minutes}"),
        1 => format!("1 hour {m} {minutes}"),
        _ => format!("{h} hours {m} {minutes}"),
    }
}

/// The windows the query keeps, as a table or (`-l`) one block each with
/// its hosts. `-W` keeps windows of at least that run time; an
/// `UNLIMITED` window (free slots, reserved by no job) is shown only
/// without `-W`, as the spec's examples show (`bslots -W 30` leaves out
/// the `1 UNLIMITED` row that `bslots` shows).
pub(crate) fn render(windows: &[SlotWindow], q: &SlotsQuery) -> String {
    let kept: Vec<&SlotWindow> = windows
        .iter()
        .filter(|w| q.slots.is_none_or(|n| w.slots >= n))
        .filter(|w| q.runtime.is_none_or(|min| w.runtime.is_some_and(|r| r >= min)))
        .collect();
    if kept.is_empty() {
        return "No reserved slots available.\n".into();
    }
    let mut out = String::new();
    if q.long {
        let blocks: Vec<String> = kept
            .iter()
            .map(|w| {
                let hosts: Vec<String> = w.hosts.iter().map(|(h, n)| format!("{n}*{h}")).collect();
                format!("SLOTS: {}\nRUNTIME: {}\nHOSTS: {}\n", w.slots, runtime(w.runtime), hosts.join(" "))
            })
            .collect();
        out.push_str(&blocks.join("\n"));
    } else {
        out.push_str("SLOTS  RUNTIME\n");
        for w in kept {
            let _ = writeln!(out, "{:<7}{}", w.slots, runtime(w.runtime));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        allot_config::bsub::split_words(line).expect("words")
    }

    /// The spec's windows: 1 slot unlimited, then 3 for 1 hour 30 minutes,
    /// ... 20 for 20 minutes.
    fn spec_windows() -> Vec<SlotWindow> {
        [(1, None), (3, Some(90)), (5, Some(60)), (7, Some(45)), (15, Some(40)), (18, Some(30)), (20, Some(20))]
            .into_iter()
            .map(|(slots, minutes)| SlotWindow { slots, runtime: minutes.map(|m: u64| m * 60), hosts: Vec::new() })
            .collect()
    }

    fn shown(line: &str) -> String {
        render(&spec_windows(), &parse(&args(line)).expect("valid options"))
    }

    #[test]
    fn the_spec_examples() {
        assert_eq!(
            shown(""),
            "SLOTS  RUNTIME\n1      UNLIMITED\n3      1 hour 30 minutes\n5      1 hour 0 minutes\n7      45 minutes\n\
             15     40 minutes\n18     30 minutes\n20     20 minutes\n"
        );
        assert_eq!(shown("-n 15"), "SLOTS  RUNTIME\n15     40 minutes\n18     30 minutes\n20     20 minutes\n");
        assert_eq!(
            shown("-W 30"),
            "SLOTS  RUNTIME\n3      1 hour 30 minutes\n5      1 hour 0 minutes\n7      45 minutes\n\
             15     40 minutes\n18     30 minutes\n"
        );
        assert_eq!(shown("-W 2:45"), "No reserved slots available.\n");
        assert_eq!(shown("-n 15 -W 30"), "SLOTS  RUNTIME\n15     40 minutes\n18     30 minutes\n");
    }

    #[test]
    fn long_lists_the_hosts() {
        let windows = [
            SlotWindow { slots: 4, runtime: Some(2400), hosts: vec![("hostB".into(), 1), ("hostC".into(), 3)] },
            SlotWindow { slots: 6, runtime: Some(1800), hosts: vec![("hostA".into(), 2), ("hostC".into(), 4)] },
        ];
        let q = parse(&args("-l")).expect("valid");
        assert_eq!(
            render(&windows, &q),
            "SLOTS: 4\nRUNTIME: 40 minutes\nHOSTS: 1*hostB 3*hostC\n\nSLOTS: 6\nRUNTIME: 30 minutes\nHOSTS: 2*hostA 4*hostC\n"
        );
    }

    #[test]
    fn run_times() {
        assert_eq!(runtime(Some(59)), "0 minutes");
        assert_eq!(runtime(Some(60)), "1 minute");
        assert_eq!(runtime(Some(7200)), "2 hours 0 minutes");
        assert_eq!(runtime(Some(3661)), "1 hour 1 minute");
    }

    #[test]
    fn bad_options_say_which() {
        for (line, says) in [("-n x", "-n x"), ("-W 1:2:3", "-W 1:2:3"), ("-x", "-x"), ("-R", "-R")] {
            let e = parse(&args(line)).expect_err(line).to_string();
            assert!(e.contains(says), "{line}: {e}");
        }
        assert_eq!(
            parse(&args(r#"-l -n 2 -W 1:30 -R "mem>500""#)).expect("valid"),
            SlotsQuery { slots: Some(2), runtime: Some(5400), select: Some("mem>500".into()), long: true }
        );
    }
}
