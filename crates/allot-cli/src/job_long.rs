//! `bjobs -l`: one job in LSF's long form, with the dates, limits and
//! memory figures as LSF writes them.

use std::fmt::Write as _;

use allot_proto::{JobInfo, JobStatus};

use crate::lsf::exec_hosts;

/// Memory as LSF shows it: `12 Mbytes`.
pub(crate) fn mbytes(kb: u64) -> String {
    format!("{} Mbytes", kb.div_ceil(1024))
}

/// Minutes as LSF shows limits: `60.0 min`.
pub(crate) fn minutes(secs: u64) -> String {
    format!("{:.1} min", secs as f64 / 60.0)
}

/// `Sat Nov 21 20:55:01`: the date of the long form, in the local time
/// zone (see [`crate::clock`]).
pub(crate) fn long_time(secs: u64) -> String {
    crate::clock::long_in(secs, crate::clock::zone())
}

/// What a pending job holds reserved, as `bjobs -l` shows it: the slots
/// and hosts in LSF's words (`Reserved <4> job slot(s) on host(s)
/// <3*hostA> <1*hostB>`), stamped with when the reservation began, then
/// its predicted start. LSF's manual says only that `bjobs -l` shows the
/// estimated start time; we write it on a line of its own, or why there
/// is none.
fn reserved_lines(r: &allot_proto::ReservedInfo) -> String {
    let mut out = String::new();
    let slots: u32 = r.hosts.iter().map(|h| h.1).sum();
    if slots > 0 {
        let hosts: Vec<String> = r.hosts.iter().map(|(h, n)| format!("<{n}*{h}>")).collect();
        let _ = writeln!(out, "{}: Reserved <{slots}> job slot(s) on host(s) {};", long_time(r.since), hosts.join(" "));
    }
    match r.predicted_start {
        Some(t) => {
            let _ = writeln!(out, " Predicted start time: <{}>;", long_time(t));
        }
        None => {
            out.push_str(" Predicted start time: unknown (a job it waits for has no run limit, or a host is down);\n")
        }
    }
    out
}

/// `bjobs -l` for one job.
pub(crate) fn long(j: &JobInfo) -> String {
    let mut out = String::new();
    let project = j.project.as_deref().unwrap_or("default");
    // `-g`, after the project, as LSF shows it.
    let project = match j.detail.as_deref().and_then(|d| d.job_group.as_deref()) {
        Some(g) => format!("{project}>, Job Group <{g}"),
        None => project.to_string(),
    };
    let priority = j.priority.map(|p| format!(" Job Priority <{p}>,")).unwrap_or_default();
    // `-Jd`, after the project, as LSF shows it.
    let priority = match &j.description {
        Some(d) => format!(" Job Description <{d}>,{priority}"),
        None => priority,
    };
    let _ = writeln!(
        out,
        "\nJob <{}>, Job Name <{}>, User <{}>, Project <{project}>,{priority} Status <{}>, Queue <{}>, Command <{}>",
        j.job_ref(),
        j.name,
        j.user,
        j.status.as_str(),
        j.queue,
        j.command.trim_end()
    );
    let _ = writeln!(out, "{}: Submitted from host <{}>, CWD <{}>;", long_time(j.submit_time), j.from_host, j.cwd);
    if let Some(limit) = j.run_limit {
        let _ = writeln!(out, "\n RUNLIMIT\n {}", minutes(limit));
    }
    if let Some(kb) = j.mem_limit_kb {
        let _ = writeln!(out, "\n MEMLIMIT\n {} M", kb.div_ceil(1024));
    }
    if let Some(start) = j.start_time {
        let hosts = exec_hosts(j);
        let _ = writeln!(
            out,
            "{}: Started {} Task(s) on Host(s) <{}>, Allocated {} Slot(s) on Host(s) <{}>, Execution CWD <{}>;",
            long_time(start),
            j.slots,
            hosts.join("> <"),
            j.slots,
            hosts.join("> <"),
            j.exec_cwd.as_deref().unwrap_or(&j.cwd)
        );
    }
    if let (None, Some(mem)) = (j.end_time, j.mem_kb) {
        let cpu = j.cpu_time.unwrap_or(0.0);
        let _ = writeln!(out, " The CPU time used is {cpu:.1} seconds.\n MEM: {};", mbytes(mem));
    }
    if let Some(max) = j.max_mem_kb {
        let _ = writeln!(out, "\n MEMORY USAGE:\n MAX MEM: {};", mbytes(max));
    }
    if let Some(end) = j.end_time {
        let cpu = j.cpu_time.unwrap_or(0.0);
        let how = match (j.status, j.exit_code) {
            (JobStatus::Done, _) => "Done successfully.".to_string(),
            (_, Some(code)) if j.start_time.is_none() => {
                format!("Exited; job was killed while pending (exit code {code}).")
            }
            (_, Some(code)) => format!("Exited with exit code {code}."),
            _ => "Exited.".to_string(),
        };
        let _ = writeln!(out, "{}: {how} The CPU time used is {cpu:.1} seconds.", long_time(end));
        if let Some(reason) = &j.exit_reason {
            let _ = writeln!(out, " {};", not_started(reason));
        }
        if let Some(term) = &j.term_reason {
            let _ = writeln!(out, " {term}.");
        }
    }
    if let Some(r) = &j.reserved {
        out.push_str(&reserved_lines(r));
    }
    if let Some(reason) = &j.pending_reason {
        let what = if j.status == JobStatus::Ssusp { "SUSPENDING" } else { "PENDING" };
        let _ = writeln!(out, "\n {what} REASONS:\n {reason};");
    }
    // spec 004: "A resize request pends until the job's maximum slot
    // request has been allocated ... Run bjobs -l job_id."
    if let Some(n) = j.resize_request {
        let _ = writeln!(out, "\n PENDING RESIZE REQUEST:\n {n} more slot(s), up to the job's maximum;");
    }
    if let Some(est) = j.estimated_run_time {
        let _ = writeln!(out, "\n ESTIMATED_RUNTIME\n {}", minutes(est));
    }
    out.push('\n');
    out
}

/// Why a job ended without running its command, or without its end being
/// known (a job lost with its host: allotd's reason begins `lost: `), as
/// `bjobs -l` and `bhist -l` say it.
pub fn not_started(reason: &str) -> String {
    match reason.strip_prefix("lost: ") {
        Some(why) => format!("The job was lost: {why}"),
        None => format!("The job could not start: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bjobs::tests::job;

    /// A pending job holding a reservation: its reserved slots, since
    /// when, and its predicted start (or why there is none).
    #[test]
    fn long_form_of_a_job_holding_a_reservation() {
        let mut pending = job(8, JobStatus::Pend);
        let since = pending.submit_time + 60;
        pending.reserved = Some(allot_proto::ReservedInfo {
            since,
            hosts: vec![("hostA".into(), 3), ("hostB".into(), 1)],
            predicted_start: Some(since + 3600),
        });
        let text = long(&pending);
        let lines: Vec<&str> = text.lines().collect();
        let reserved = format!("{}: Reserved <4> job slot(s) on host(s) <3*hostA> <1*hostB>;", long_time(since));
        let predicted = format!(" Predicted start time: <{}>;", long_time(since + 3600));
        let i = lines.iter().position(|l| *l == reserved).expect(&text);
        assert_eq!(lines[i + 1], predicted, "{text}");
        assert!(lines[i + 2..].contains(&" PENDING REASONS:"), "the reasons follow: {text}");

        pending.reserved = Some(allot_proto::ReservedInfo { since, hosts: Vec::new(), predicted_start: None });
        let text = long(&pending);
        assert!(!text.contains("Reserved <"), "nothing held, nothing shown: {text}");
        assert!(text.contains(" Predicted start time: unknown (a job it waits for has no run limit"), "{text}");
    }

    #[test]
    fn the_long_form_dates_have_the_weekday() {
        assert_eq!(long_time(1_795_294_501), "Sat Nov 21 20:55:01");
        assert_eq!(long_time(0), "Thu Jan  1 00:00:00");
    }
}
