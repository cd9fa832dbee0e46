//! LSF's job report: what a job's output file ends with when it was
//! given with `-o`/`-oo` (and the report is not mailed, `-N`), so users
//! find the lines they know: `Sender: LSF System`, where and when it ran,
//! `Successfully completed.` or `Exited with exit code N.`, and the
//! resource usage summary.
//!
//! allotd writes output straight to the file as the job runs (LSF's
//! `LSB_STDOUT_DIRECT=Y`), so the report comes after the output, with
//! LSF's closing line for that case: "The output (if any) is above this
//! job summary." The supervisor writes it when the job ends, through the
//! output file it opened as the job's owner: nothing is opened again.
//! Dates are in the execution host's local time zone, as LSF's are.
//! What allot does not measure (average memory, swap, processes,
//! threads) is shown `-`, as LSF shows what it has no figure for.

use allot_proto::text::escaped;
use std::fmt::Write as _;

use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use crate::clock::full_in;

/// What the report says that only allotd knows: set in the job's
/// [`crate::ExecSpec`] when its output file gets the report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportHead {
    /// The job as its user names it: `12`, or `12[3]`.
    pub job: String,
    pub name: String,
    pub user: String,
    pub cluster: String,
    /// The LSF administrator the report is from, as `user@host`.
    pub sender: String,
    pub from_host: String,
    /// When it was submitted, seconds since the epoch.
    pub submitted: u64,
    pub queue: String,
    /// Its hosts as LSF lists them: `hostA`, `4*hostB`.
    pub hosts: Vec<String>,
    pub home: String,
    pub cwd: String,
    pub command: String,
}

/// How the run went, as the supervisor saw it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunSummary {
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    pub cpu_time: f64,
    pub max_rss_kb: u64,
    /// When it started and ended, seconds since the epoch.
    pub started: u64,
    pub ended: u64,
}

/// A signal's name as `strsignal` gives it, which LSF's report shows.
fn signal_text(signal: i32) -> String {
    let known = match signal {
        1 => "Hangup",
        2 => "Interrupt",
        3 => "Quit",
        4 => "Illegal instruction",
        6 => "Aborted",
        7 => "Bus error",
        8 => "Floating point exception",
        9 => "Killed",
        11 => "Segmentation fault",
        13 => "Broken pipe",
        14 => "Alarm clock",
        15 => "Terminated",
        24 => "CPU time limit exceeded",
        25 => "File size limit exceeded",
        _ => return format!("Unknown signal {signal}"),
    };
    known.to_string()
}

/// The column LSF's usage figures start at.
const FIGURES: usize = 49;

fn figure(out: &mut String, label: &str, value: &str) {
    let head = format!("    {label} :");
    let _ = writeln!(out, "{head:<FIGURES$}{value}");
}

/// The report's subject: `Job 12: <name> in cluster <c> Done` (or
/// `Exited`).
pub fn subject(head: &ReportHead, run: &RunSummary) -> String {
    let done = run.code == Some(0) && run.signal.is_none();
    let name = escaped(&head.name);
    format!("Job {}: <{name}> in cluster <{}> {}", head.job, head.cluster, if done { "Done" } else { "Exited" })
}

/// Where and when the job was submitted and started, as the report (and
/// `-B`'s mail) says it: further hosts each on a line of their own, under
/// the first.
pub fn where_and_when(head: &ReportHead, started: u64, tz: &TimeZone) -> String {
    const EXECUTED: &str = "Job was executed on host(s) ";
    let mut out = format!(
        "Job <{}> was submitted from host <{}> by user <{}> in cluster <{}> at {}\n",
        escaped(&head.name),
        head.from_host,
        head.user,
        head.cluster,
        full_in(head.submitted, tz)
    );
    let first = head.hosts.first().map_or("", String::as_str);
    let mut hosts = format!("<{first}>");
    for h in head.hosts.iter().skip(1) {
        let _ = write!(hosts, "\n{:width$}<{h}>", "", width = EXECUTED.len());
    }
    let _ = writeln!(
        out,
        "{EXECUTED}{hosts}, in queue <{}>, as user <{}> in cluster <{}> at {}",
        head.queue,
        head.user,
        head.cluster,
        full_in(started, tz)
    );
    let _ = writeln!(out, "<{}> was used as the home directory.", escaped(&head.home));
    let _ = writeln!(out, "<{}> was used as the working directory.", escaped(&head.cwd));
    out
}

/// The report's body, from where and when the job ran to its resource
/// usage summary (what the output file and `-N`'s mail both say).
pub fn body(head: &ReportHead, run: &RunSummary, tz: &TimeZone) -> String {
    let rule = "-".repeat(60);
    let mut out = where_and_when(head, run.started, tz);
    let _ = writeln!(out, "Started at {}", full_in(run.started, tz));
    let _ = writeln!(out, "Terminated at {}", full_in(run.ended, tz));
    let _ = writeln!(out, "Results reported at {}\n", full_in(run.ended, tz));
    let command = allot_proto::text::escaped_lines(head.command.trim_end_matches('\n'));
    let _ = writeln!(out, "Your job looked like:\n\n{rule}\n# LSBATCH: User input\n{command}\n{rule}\n");
    match (run.signal, run.code) {
        (None, Some(0)) => out.push_str("Successfully completed.\n"),
        (Some(s), _) => {
            let _ = writeln!(out, "Exited with signal termination: {}.", signal_text(s));
        }
        (None, code) => {
            let _ = writeln!(out, "Exited with exit code {}.", code.unwrap_or(-1));
        }
    }
    out.push_str("\nResource usage summary:\n\n");
    figure(&mut out, "CPU time", &format!("{:.2} sec.", run.cpu_time));
    let memory = match run.max_rss_kb {
        0 => "-".to_string(),
        kb => format!("{} MB", kb.div_ceil(1024)),
    };
    figure(&mut out, "Max Memory", &memory);
    for label in
        ["Average Memory", "Total Requested Memory", "Delta Memory", "Max Swap", "Max Processes", "Max Threads"]
    {
        figure(&mut out, label, "-");
    }
    figure(&mut out, "Run time", &format!("{} sec.", run.ended.saturating_sub(run.started)));
    figure(&mut out, "Turnaround time", &format!("{} sec.", run.ended.saturating_sub(head.submitted)));
    out
}

/// The report's text as it ends an output file, dates in `tz`.
pub fn render(head: &ReportHead, run: &RunSummary, tz: &TimeZone) -> String {
    format!(
        "\n{}\nSender: LSF System <{}>\nSubject: {}\n\n{}\nThe output (if any) is above this job summary.\n\n",
        "-".repeat(60),
        head.sender,
        subject(head, run),
        body(head, run, tz)
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A job's report head, for the tests of what is written from it.
    pub(crate) fn head() -> ReportHead {
        ReportHead {
            job: "12[3]".into(),
            name: "sims[3]".into(),
            user: "alice".into(),
            cluster: "allot".into(),
            sender: "root@hostA".into(),
            from_host: "login1".into(),
            submitted: 1_795_294_500,
            queue: "normal".into(),
            hosts: vec!["4*hostA".into(), "2*hostB".into()],
            home: "/home/alice".into(),
            cwd: "/home/alice/run".into(),
            command: "./sim --step 3".into(),
        }
    }

    /// The layout of LSF's report, whole: a job that exited with code 3
    /// on two hosts.
    #[test]
    fn the_report_is_laid_out_as_lsfs() {
        let run = RunSummary {
            code: Some(3),
            signal: None,
            cpu_time: 1.5,
            max_rss_kb: 2500,
            started: 1_795_294_501,
            ended: 1_795_294_561,
        };
        let text = render(&head(), &run, &TimeZone::UTC);
        let expected = "
------------------------------------------------------------
Sender: LSF System <root@hostA>
Subject: Job 12[3]: <sims[3]> in cluster <allot> Exited

Job <sims[3]> was submitted from host <login1> by user <alice> in cluster <allot> at Sat Nov 21 20:55:00 2026
Job was executed on host(s) <4*hostA>
                            <2*hostB>, in queue <normal>, as user <alice> in cluster <allot> at Sat Nov 21 20:55:01 2026
</home/alice> was used as the home directory.
</home/alice/run> was used as the working directory.
Started at Sat Nov 21 20:55:01 2026
Terminated at Sat Nov 21 20:56:01 2026
Results reported at Sat Nov 21 20:56:01 2026

Your job looked like:

------------------------------------------------------------
# LSBATCH: User input
./sim --step 3
------------------------------------------------------------

Exited with exit code 3.

Resource usage summary:

    CPU time :                                   1.50 sec.
    Max Memory :                                 3 MB
    Average Memory :                             -
    Total Requested Memory :                     -
    Delta Memory :                               -
    Max Swap :                                   -
    Max Processes :                              -
    Max Threads :                                -
    Run time :                                   60 sec.
    Turnaround time :                            61 sec.

The output (if any) is above this job summary.

";
        assert_eq!(text, expected);
    }

    #[test]
    fn success_and_signals_are_said_as_lsf_says_them() {
        let ok = RunSummary { code: Some(0), signal: None, cpu_time: 0.0, max_rss_kb: 0, started: 10, ended: 10 };
        let text = render(&head(), &ok, &TimeZone::UTC);
        assert!(text.contains("in cluster <allot> Done\n"), "{text}");
        assert!(text.contains("\nSuccessfully completed.\n"), "{text}");
        assert!(text.contains("    Max Memory :                                 -\n"), "{text}");
        let killed = RunSummary { code: None, signal: Some(9), ..ok };
        let text = render(&head(), &killed, &TimeZone::UTC);
        assert!(text.contains("\nExited with signal termination: Killed.\n"), "{text}");
        assert!(text.contains("> Exited\n"), "{text}");
        assert_eq!(signal_text(64), "Unknown signal 64");
    }
}
