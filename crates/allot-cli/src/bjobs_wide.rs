//! `bjobs -W`, and the run time columns of `-WL`, `-WF` and `-WP`, in
//! LSF's layout, which tools parse by splitting on white space (Open
//! OnDemand's LSF adapter runs `bjobs -u all -a -w -W` and expects exactly
//! these 15 columns, `-` for a value a job does not have):
//!
//! `JOBID USER STAT QUEUE FROM_HOST EXEC_HOST JOB_NAME SUBMIT_TIME
//! PROJ_NAME CPU_USED MEM SWAP PIDS START_TIME FINISH_TIME`
//!
//! `-W` shows every name whole (as `-w`), a job's hosts joined by `:`
//! (`2*hostA:1*hostB`), times as `11/21-20:55:01`, CPU time as
//! `000:01:58.25`, MEM and SWAP in KB. allot keeps no swap figure (0) and
//! no process ids (`-`).

use std::fmt::Write as _;

use allot_proto::{JobInfo, JobStatus};

use crate::lsf::{exec_host, push_column};

/// The run time column `-WL`, `-WF` or `-WP` adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RunColumn {
    /// `-WL`: the run time left.
    TimeLeft,
    /// `-WF`: when it ends (or ended).
    FinishTime,
    /// `-WP`: how much of its run it has done.
    Complete,
}

impl RunColumn {
    pub(crate) fn of(option: &str) -> Option<RunColumn> {
        match option {
            "-WL" => Some(RunColumn::TimeLeft),
            "-WF" => Some(RunColumn::FinishTime),
            "-WP" => Some(RunColumn::Complete),
            _ => None,
        }
    }

    fn header(self) -> &'static str {
        match self {
            RunColumn::TimeLeft => "TIME_LEFT",
            RunColumn::FinishTime => "FINISH_TIME",
            RunColumn::Complete => "%COMPLETE",
        }
    }

    /// The column's value for `j` at `now`.
    pub(crate) fn value(self, j: &JobInfo, now: u64) -> String {
        match self {
            RunColumn::TimeLeft => time_left(j, now),
            RunColumn::FinishTime => finish_time(j, now),
            RunColumn::Complete => complete(j, now),
        }
    }
}

/// What a running job's end is counted from, as LSF marks it: its
/// estimate (`-We`, `E`; `X` once it ran past it), else its run limit
/// (`L`). `None`: not running, or neither.
fn basis(j: &JobInfo, now: u64) -> Option<(u64, char)> {
    let start = j.start_time.filter(|_| j.end_time.is_none() && j.status.unfinished())?;
    let ran = now.saturating_sub(start);
    match (j.estimated_run_time, j.run_limit) {
        (Some(e), _) if ran <= e => Some((e, 'E')),
        (Some(_), Some(l)) => Some((l, 'X')),
        (Some(e), None) => Some((e, 'X')),
        (None, Some(l)) => Some((l, 'L')),
        (None, None) => None,
    }
}

/// `-WL`, `-o time_left`: `hours:minutes` left, and its basis.
pub(crate) fn time_left(j: &JobInfo, now: u64) -> String {
    let Some(start) = j.start_time else { return "-".into() };
    match basis(j, now) {
        Some((of, mark)) => {
            let left = (start + of).saturating_sub(now) / 60;
            format!("{}:{:02} {mark}", left / 60, left % 60)
        }
        None => "-".into(),
    }
}

/// `-WF`: a finished job's end; a running job's expected end, and its
/// basis.
fn finish_time(j: &JobInfo, now: u64) -> String {
    if let Some(end) = j.end_time {
        return crate::lsf::lsf_time(end);
    }
    match (j.start_time, basis(j, now)) {
        (Some(start), Some((of, mark))) => format!("{} {mark}", crate::lsf::lsf_time(start + of)),
        _ => "-".into(),
    }
}

/// `-WP`, `-o %complete`: the share of its run done, and its basis.
pub(crate) fn complete(j: &JobInfo, now: u64) -> String {
    match (j.start_time, basis(j, now)) {
        (Some(start), Some((of, mark))) if of > 0 => {
            format!("{:.2}% {mark}", now.saturating_sub(start) as f64 * 100.0 / of as f64)
        }
        _ => "-".into(),
    }
}

/// Seconds since the epoch now.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// CPU seconds as `-W` shows them: `hhh:mm:ss.cc`.
fn timer(secs: f64) -> String {
    let hundredths = (secs.max(0.0) * 100.0).round() as u64;
    let whole = hundredths / 100;
    format!("{:03}:{:02}:{:02}.{:02}", whole / 3600, whole % 3600 / 60, whole % 60, hundredths % 100)
}

fn stamp(secs: u64) -> String {
    crate::clock::numeric_in(secs, crate::clock::zone())
}

/// The header of the default list with `-W` and a run column.
pub(crate) fn header(w: bool, run: Option<RunColumn>) -> String {
    let mut h = String::from("JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME");
    if w {
        h.push_str("  PROJ_NAME CPU_USED MEM SWAP PIDS START_TIME FINISH_TIME");
    }
    if let Some(r) = run {
        let _ = write!(h, "   {}", r.header());
    }
    h.push('\n');
    h
}

/// One job's row with `-W` (and a run column).
pub(crate) fn row(out: &mut String, j: &JobInfo, run: Option<RunColumn>, now: u64) {
    let hosts = match j.exec_hosts.is_empty() || j.status == JobStatus::Pend {
        true => "-".to_string(),
        false => j.exec_hosts.iter().map(|h| exec_host(h).into_owned()).collect::<Vec<_>>().join(":"),
    };
    push_column(out, &j.id.to_string(), 7, true);
    push_column(out, &j.user, 7, true);
    push_column(out, j.status.as_str(), 5, true);
    push_column(out, &j.queue, 10, true);
    push_column(out, &j.from_host, 11, true);
    push_column(out, &hosts, 11, true);
    push_column(out, &j.name, 10, true);
    push_column(out, &stamp(j.submit_time), 14, true);
    push_column(out, j.project.as_deref().unwrap_or("default"), 10, true);
    push_column(out, &timer(j.cpu_time.unwrap_or(0.0)), 10, true);
    push_column(out, &j.mem_kb.unwrap_or(0).to_string(), 6, true);
    push_column(out, "0", 6, true);
    out.push_str("- ");
    out.push_str(&j.start_time.map_or_else(|| "-".to_string(), stamp));
    out.push(' ');
    out.push_str(&j.end_time.map_or_else(|| "-".to_string(), stamp));
    if let Some(r) = run {
        out.push_str("   ");
        out.push_str(&r.value(j, now));
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bjobs::tests::job;

    /// The 15 fields Open OnDemand's adapter splits each line into.
    #[test]
    fn w_rows_have_the_fifteen_columns_tools_split() {
        let mut running = job(12, JobStatus::Run);
        running.project = Some("climate".into());
        running.cpu_time = Some(118.25);
        running.mem_kb = Some(6395);
        running.exec_hosts = vec![("hostA".into(), 2), ("hostB".into(), 1)];
        let pending = job(13, JobStatus::Pend);
        let done = job(14, JobStatus::Done);
        let mut out = header(true, None);
        for j in [&running, &pending, &done] {
            row(&mut out, j, None, 1_795_294_600);
        }
        let lines: Vec<Vec<&str>> = out.lines().map(|l| l.split_whitespace().collect()).collect();
        assert_eq!(
            lines[0],
            [
                "JOBID",
                "USER",
                "STAT",
                "QUEUE",
                "FROM_HOST",
                "EXEC_HOST",
                "JOB_NAME",
                "SUBMIT_TIME",
                "PROJ_NAME",
                "CPU_USED",
                "MEM",
                "SWAP",
                "PIDS",
                "START_TIME",
                "FINISH_TIME"
            ]
        );
        assert_eq!(
            lines[1],
            [
                "12",
                "alice",
                "RUN",
                "normal",
                "hostA",
                "2*hostA:hostB",
                "sim",
                "11/21-20:55:01",
                "climate",
                "000:01:58.25",
                "6395",
                "0",
                "-",
                "11/21-20:55:02",
                "-"
            ]
        );
        assert_eq!(lines[2][5], "-", "a pending job's hosts");
        assert_eq!(lines[2].len(), 15);
        assert_eq!((lines[3][13], lines[3][14]), ("11/21-20:55:02", "11/21-20:56:02"));
    }

    /// `-WL`/`-WP`: L for a run limit, E for an estimate, X once past it.
    #[test]
    fn run_columns_say_what_they_count_from() {
        let mut j = job(12, JobStatus::Run);
        let start = j.start_time.expect("started");
        j.run_limit = Some(3600);
        assert_eq!(time_left(&j, start + 600), "0:50 L");
        assert_eq!(complete(&j, start + 900), "25.00% L");
        j.estimated_run_time = Some(1200);
        assert_eq!(time_left(&j, start + 600), "0:10 E");
        assert_eq!(time_left(&j, start + 1800), "0:30 X", "past its estimate: the run limit's time left");
        assert_eq!(time_left(&job(13, JobStatus::Pend), start), "-");
        let mut out = header(false, Some(RunColumn::TimeLeft));
        assert!(out.ends_with("SUBMIT_TIME   TIME_LEFT\n"), "{out}");
        out.clear();
        row(&mut out, &j, Some(RunColumn::Complete), start + 600);
        assert!(out.trim_end().ends_with("50.00% E"), "{out}");
    }
}
