//! `bhist` (a job's history from allotd's event log) and `bpeek` (a
//! running job's output so far).

use std::fmt::Write;
use std::process::ExitCode;

use allot_proto::{HistoryEvent, JobHistory, Request, Response};
use anyhow::{anyhow, bail};

use crate::job_long::long_time;
use crate::lsf::{call, cut};

/// What a job was doing, for the time summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Pend,
    Psusp,
    Run,
    Ususp,
    Ssusp,
    Unkwn,
    Ended,
}

/// Seconds spent pending, held, running, stopped and unknown, from the
/// events up to `now` (for a job that has not ended).
fn summary(events: &[(u64, HistoryEvent)], now: u64) -> [u64; 6] {
    let mut spent = [0u64; 6];
    let mut phase = Phase::Ended;
    let mut since = 0;
    // A running job's requeue takes effect when it ends.
    let mut requeue: Option<bool> = None;
    for (at, e) in events {
        let next = match (e, phase) {
            (HistoryEvent::Submitted { .. }, _) => Phase::Pend,
            (HistoryEvent::Started { .. }, _) => Phase::Run,
            (HistoryEvent::Suspended { .. }, Phase::Pend) => Phase::Psusp,
            (HistoryEvent::Suspended { .. }, Phase::Run) => Phase::Ususp,
            (HistoryEvent::Resumed { .. }, Phase::Psusp) => Phase::Pend,
            (HistoryEvent::Resumed { .. }, Phase::Ususp) => Phase::Run,
            (HistoryEvent::Preempted { .. }, Phase::Run) => Phase::Ssusp,
            (HistoryEvent::ResumedBySystem, Phase::Ssusp) => Phase::Run,
            (HistoryEvent::Unknown, Phase::Run) => Phase::Unkwn,
            (HistoryEvent::Reached, Phase::Unkwn) => Phase::Run,
            (HistoryEvent::Finished { .. }, _) => match requeue.take() {
                Some(true) => Phase::Psusp,
                Some(false) => Phase::Pend,
                None => Phase::Ended,
            },
            (HistoryEvent::Removed, _) => Phase::Ended,
            (HistoryEvent::Requeued { hold }, Phase::Run | Phase::Ususp | Phase::Ssusp) => {
                requeue = Some(*hold);
                phase
            }
            (HistoryEvent::Requeued { hold: true }, _) => Phase::Psusp,
            (HistoryEvent::Requeued { hold: false }, _) => Phase::Pend,
            (_, p) => p,
        };
        add(&mut spent, phase, at.saturating_sub(since));
        phase = next;
        since = *at;
    }
    add(&mut spent, phase, now.saturating_sub(since));
    spent
}

fn add(spent: &mut [u64; 6], phase: Phase, secs: u64) {
    let i = match phase {
        Phase::Pend => 0,
        Phase::Psusp => 1,
        Phase::Run => 2,
        Phase::Ususp => 3,
        Phase::Ssusp => 4,
        Phase::Unkwn => 5,
        Phase::Ended => return,
    };
    spent[i] += secs;
}

/// The summary row's numbers: PEND PSUSP RUN USUSP SSUSP UNKWN TOTAL.
fn columns(s: [u64; 6]) -> [u64; 7] {
    [s[0], s[1], s[2], s[3], s[4], s[5], s.iter().sum()]
}

/// One event as `bhist -l` writes it. A requeue of a running job takes
/// effect at its end (`requeue` remembers it until then); a finished
/// job's is at once.
fn event_line(e: &HistoryEvent, running: bool, requeue: &mut bool) -> String {
    match e {
        HistoryEvent::Submitted { queue, from_host, cwd, .. } => {
            // The submitter's directory may name anything, a newline too.
            let cwd = allot_proto::text::escaped(cwd);
            format!("Submitted from host <{from_host}>, to Queue <{queue}>, CWD <{cwd}>;")
        }
        HistoryEvent::Started { hosts, .. } => {
            let slots: u32 = hosts.iter().map(|(_, n)| n).sum();
            let names: Vec<String> = hosts.iter().map(crate::lsf::exec_host).map(|h| h.into_owned()).collect();
            let names = names.join("> <");
            format!("Dispatched {slots} Task(s) on Host(s) <{names}>, Allocated {slots} Slot(s) on Host(s) <{names}>;")
        }
        HistoryEvent::Finished { exit, cpu_time, reason, term } => {
            let how =
                if *exit == 0 { "Done successfully.".to_string() } else { format!("Exited with exit code {exit}.") };
            let then = if std::mem::take(requeue) { " The job is requeued;" } else { "" };
            let why = reason.as_ref().map(|r| allot_proto::text::escaped(r).into_owned());
            let why = why.map(|r| format!(" {};", crate::job_long::not_started(&r))).unwrap_or_default();
            let why = match term {
                Some(t) => format!("{why} {t};"),
                None => why,
            };
            format!("{how} The CPU time used is {cpu_time:.1} seconds;{why}{then}")
        }
        HistoryEvent::Removed => "Exited; job was killed while pending;".into(),
        HistoryEvent::Unknown => "Unknown; unable to reach the execution host;".into(),
        HistoryEvent::Reached => "Running;".into(),
        HistoryEvent::Suspended { by } => format!("Suspended by the user or administrator <{by}>;"),
        HistoryEvent::Resumed { by } => format!("Resumed by the user or administrator <{by}>;"),
        HistoryEvent::Preempted { by } => format!("Suspended by the system: preempted by job <{by}>;"),
        HistoryEvent::ResumedBySystem => "Resumed by the system;".into(),
        HistoryEvent::Grown { hosts } => {
            let slots: u32 = hosts.iter().map(|h| h.1).sum();
            format!(
                "Resized: added {slots} slot(s) on host(s) <{}>;",
                host_list(hosts.iter().map(|(h, n)| (h, Some(*n))))
            )
        }
        HistoryEvent::GrowFailed { hosts } => format!(
            "Resize notification failed: slot(s) on host(s) <{}> given back;",
            host_list(hosts.iter().map(|(h, n)| (h, Some(*n))))
        ),
        HistoryEvent::Released { hosts } => {
            format!("Resized: released slot(s) on host(s) <{}>;", host_list(hosts.iter().map(|(h, n)| (h, *n))))
        }
        HistoryEvent::ResizeCancelled => "Pending resize request cancelled;".into(),
        HistoryEvent::Modified { queue } => format!("Parameters of Job are changed: Queue <{queue}>;"),
        HistoryEvent::ArrayLimit { limit: Some(n) } => {
            format!("Parameters of Job are changed: Job array running element limit <{n}>;")
        }
        HistoryEvent::ArrayLimit { limit: None } => {
            "Parameters of Job are changed: Job array running element limit removed;".into()
        }
        HistoryEvent::Requeued { hold } => {
            *requeue = running;
            let what = if running { "Requeue requested" } else { "Requeued" };
            format!("{what}{};", if *hold { " (held)" } else { "" })
        }
    }
}

/// `1*hostA 2*hostB hostC` (no count: all of the job's there).
fn host_list<'a>(hosts: impl Iterator<Item = (&'a String, Option<u32>)>) -> String {
    let each: Vec<String> = hosts.map(|(h, n)| n.map_or_else(|| h.clone(), |n| format!("{n}*{h}"))).collect();
    each.join("> <")
}

fn long(h: &JobHistory, now: u64) -> String {
    let j = &h.job;
    let mut out = String::new();
    let project = j.project.as_deref().unwrap_or("default");
    let _ = writeln!(out, "Job <{}>, User <{}>, Project <{project}>, Command <{}>", j.job_ref(), j.user, j.command);
    let mut requeue = false;
    let mut running = false;
    for (at, e) in &h.events {
        let _ = writeln!(out, "{}: {}", long_time(*at), event_line(e, running, &mut requeue));
        // As spec 004 shows an interruptible backfill job's: the job's
        // own limit under its submission, the limit its start cut it to
        // after its dispatch.
        match e {
            HistoryEvent::Submitted { run_limit: Some(limit), from_host, .. } => {
                let _ = writeln!(out, " RUNLIMIT\n {:.1} min of {from_host}", *limit as f64 / 60.0);
            }
            HistoryEvent::Started { backfill_limit: Some(limit), .. } => {
                let _ = writeln!(
                    out,
                    "{}: Interruptible backfill runtime limit is {:.1} minutes;",
                    long_time(*at),
                    *limit as f64 / 60.0
                );
            }
            _ => {}
        }
        match e {
            HistoryEvent::Started { .. } => running = true,
            HistoryEvent::Finished { .. } | HistoryEvent::Removed => running = false,
            _ => {}
        }
    }
    let end = if j.status.unfinished() { now } else { j.end_time.unwrap_or(now) };
    let c = columns(summary(&h.events, end));
    let _ = writeln!(out, "\nSummary of time in seconds spent in various states by  {}", long_time(end));
    let _ = writeln!(out, "  PEND     PSUSP    RUN      USUSP    SSUSP    UNKWN    TOTAL");
    let row: Vec<String> = c.iter().map(|n| format!("{n:<8}")).collect();
    let _ = writeln!(out, "  {}", row.join(" ").trim_end());
    out
}

fn short(hs: &[JobHistory], now: u64) -> String {
    let mut out = String::from("Summary of time in seconds spent in various states:\n");
    out.push_str("JOBID   USER    JOB_NAME  PEND    PSUSP   RUN     USUSP   SSUSP   UNKWN   TOTAL\n");
    for h in hs {
        let j = &h.job;
        let end = if j.status.unfinished() { now } else { j.end_time.unwrap_or(now) };
        let c = columns(summary(&h.events, end));
        let nums: Vec<String> = c.iter().map(|n| format!("{n:<7}")).collect();
        let _ = writeln!(
            out,
            "{:<7} {:<7} {:<9} {}",
            j.id,
            cut(&j.user, 7, false),
            cut(&j.name, 9, false),
            nums.join(" ").trim_end()
        );
    }
    out
}

/// `bhist [-a] [-d] [-l] [-u user|all] [jobid ...]`: by default the
/// caller's unfinished jobs; `-a` finished ones too, `-d` only finished
/// ones.
pub fn bhist(args: &[String]) -> anyhow::Result<ExitCode> {
    let args = &crate::lsf::split_options("bhist", args)?;
    let (mut all, mut done, mut long_form, mut user, mut jobs) = (false, false, false, None, Vec::new());
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-a" => all = true,
            "-d" => done = true,
            "-l" => long_form = true,
            "-u" => {
                user = Some(args.get(i + 1).ok_or_else(|| anyhow!("bhist: -u: expected a user after it"))?.clone());
                i += 1;
            }
            o if o.starts_with('-') => bail!("bhist: {o}: unknown option"),
            id => jobs.extend(crate::lsf::job_refs("bhist", id)?),
        }
        i += 1;
    }
    let request = Request::History { jobs, user, finished: all || done };
    let Response::History(mut hs) = call(request)? else { bail!("bhist: unexpected answer") };
    if done {
        hs.retain(|h| !h.job.status.unfinished());
    }
    if hs.is_empty() {
        println!("No matching job found");
        return Ok(ExitCode::SUCCESS);
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    if long_form {
        let blocks: Vec<String> = hs.iter().map(|h| long(h, now)).collect();
        crate::lsf::emit(&blocks.join(&format!("{}\n", "-".repeat(78))))?;
    } else {
        crate::lsf::emit(&short(&hs, now))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `bpeek [-f] [jobid]`: a running job's output so far (the caller's last
/// running job by default); `-f` follows it until the job ends.
pub fn bpeek(args: &[String]) -> anyhow::Result<ExitCode> {
    let args = crate::lsf::split_options("bpeek", args)?;
    let mut follow = false;
    let mut job = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-f" => follow = true,
            "-J" => {
                let name = it.next().ok_or_else(|| anyhow::anyhow!("bpeek: -J: expected a job name after it"))?;
                job = Some(most_recent_named(name)?);
            }
            o if o.starts_with('-') => bail!("bpeek: {o}: unknown option"),
            id if job.is_none() => {
                job = match crate::lsf::job_refs("bpeek", id)?[..] {
                    [one] => Some(one),
                    _ => bail!("bpeek: {id}: one job at a time"),
                }
            }
            extra => bail!("bpeek: {extra}: one job at a time"),
        }
    }
    let Response::Peek { job: id, output } = call(Request::Peek { job })? else { bail!("bpeek: unexpected answer") };
    emit_peek(follow, id, &output)
}

/// `bpeek -J NAME`: the caller's most recently submitted job of that name
/// (`*` matching any text, as `bjobs -J` takes it).
fn most_recent_named(name: &str) -> anyhow::Result<allot_proto::JobRef> {
    let query = allot_proto::JobQuery { finished: true, brief: true, ..Default::default() };
    let Response::Jobs(jobs) = call(Request::Jobs(query))? else { bail!("bpeek: unexpected answer") };
    jobs.iter()
        .filter(|j| crate::bjobs::name_matches(name, j))
        .max_by_key(|j| (j.submit_time, j.id, j.index))
        .map(|j| j.job_ref())
        .ok_or_else(|| anyhow::anyhow!("bpeek: Job <{name}>: No matching job found"))
}

fn emit_peek(follow: bool, id: allot_proto::JobRef, output: &str) -> anyhow::Result<ExitCode> {
    println!("<< output from stdout >>");
    let stdout_part = |o: &str| o.strip_prefix("<< output from stdout >>\n").unwrap_or(o).to_string();
    let mut shown = stdout_part(output);
    crate::lsf::emit_raw(&shown)?;
    if !follow {
        return Ok(ExitCode::SUCCESS);
    }
    use std::io::Write;
    loop {
        let _ = std::io::stdout().flush();
        std::thread::sleep(std::time::Duration::from_millis(500));
        // LSF: "When the job is done, the bpeek -f command exits" (its
        // output stays readable): a last look once it has ended.
        let ended = !running(id)?;
        let Ok(Response::Peek { output, .. }) = call(Request::Peek { job: Some(id) }) else {
            return Ok(ExitCode::SUCCESS);
        };
        let now = stdout_part(&output);
        // The file may have been cut to its tail: print what is new.
        let new = now.strip_prefix(shown.as_str()).unwrap_or(&now);
        let new = new.split("\n<< output from stderr >>\n").next().unwrap_or_default();
        crate::lsf::emit_raw(new)?;
        shown.push_str(new);
        if ended {
            return Ok(ExitCode::SUCCESS);
        }
    }
}

/// Whether job `id` has not ended yet (it may still write).
fn running(id: allot_proto::JobRef) -> anyhow::Result<bool> {
    let query = allot_proto::JobQuery { finished: true, brief: true, jobs: vec![id], ..Default::default() };
    match call(Request::Jobs(query))? {
        Response::Jobs(jobs) => Ok(jobs.iter().any(|j| j.status.unfinished())),
        Response::Error(e) => bail!("bpeek: {e}"),
        _ => bail!("bpeek: unexpected answer"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn submitted() -> HistoryEvent {
        HistoryEvent::Submitted {
            queue: "normal".into(),
            from_host: "hostA".into(),
            cwd: "/tmp".into(),
            run_limit: None,
        }
    }

    fn started() -> HistoryEvent {
        HistoryEvent::Started { hosts: vec![("hostA".into(), 1)], backfill_limit: None }
    }

    #[test]
    fn time_is_split_by_state() {
        let by = || "alice".to_string();
        let events = vec![
            (100, submitted()),
            (105, HistoryEvent::Suspended { by: by() }),
            (115, HistoryEvent::Resumed { by: by() }),
            (120, started()),
            (130, HistoryEvent::Suspended { by: by() }),
            (160, HistoryEvent::Resumed { by: by() }),
            (170, HistoryEvent::Finished { exit: 0, cpu_time: 1.0, reason: None, term: None }),
        ];
        assert_eq!(summary(&events, 999), [10, 10, 20, 30, 0, 0]);
        assert_eq!(columns(summary(&events, 999)), [10, 10, 20, 30, 0, 0, 70]);
    }

    #[test]
    fn an_unfinished_job_counts_up_to_now() {
        assert_eq!(summary(&[(100, submitted()), (110, started())], 150), [10, 0, 40, 0, 0, 0]);
    }

    #[test]
    fn a_requeued_running_job_pends_again_from_its_end() {
        let events = vec![
            (100, submitted()),
            (100, started()),
            (150, HistoryEvent::Requeued { hold: false }),
            (152, HistoryEvent::Finished { exit: 137, cpu_time: 0.0, reason: None, term: None }),
            (160, started()),
            (170, HistoryEvent::Finished { exit: 0, cpu_time: 0.0, reason: None, term: None }),
        ];
        assert_eq!(summary(&events, 999), [8, 0, 62, 0, 0, 0]);
        let h = JobHistory { job: crate::bjobs::tests::job(3, allot_proto::JobStatus::Done), events };
        let text = long(&h, 999);
        assert!(text.contains("Requeue requested;"), "{text}");
        assert!(
            text.contains("Exited with exit code 137. The CPU time used is 0.0 seconds; The job is requeued;"),
            "{text}"
        );
    }

    #[test]
    fn a_requeued_finished_job_pends_at_once() {
        let events = vec![
            (100, submitted()),
            (100, started()),
            (110, HistoryEvent::Finished { exit: 1, cpu_time: 0.0, reason: None, term: None }),
            (200, HistoryEvent::Requeued { hold: true }),
        ];
        assert_eq!(summary(&events, 250), [0, 50, 10, 0, 0, 0]);
        let h = JobHistory { job: crate::bjobs::tests::job(3, allot_proto::JobStatus::Psusp), events };
        let text = long(&h, 250);
        assert!(text.contains(": Requeued (held);"), "{text}");
        assert!(!text.contains("The job is requeued"), "{text}");
    }

    #[test]
    fn a_preempted_job_s_suspended_time_is_ssusp() {
        let events = vec![
            (100, submitted()),
            (100, started()),
            (130, HistoryEvent::Preempted { by: allot_proto::JobRef::job(7) }),
            (180, HistoryEvent::ResumedBySystem),
            (200, HistoryEvent::Finished { exit: 0, cpu_time: 0.0, reason: None, term: None }),
        ];
        assert_eq!(columns(summary(&events, 999)), [0, 0, 50, 0, 50, 0, 100]);
        let h = JobHistory { job: crate::bjobs::tests::job(3, allot_proto::JobStatus::Done), events };
        let text = long(&h, 999);
        assert!(text.contains(": Suspended by the system: preempted by job <7>;"), "{text}");
        assert!(text.contains(": Resumed by the system;"), "{text}");
    }

    /// LSF counts the time a job's host could not be reached as UNKWN,
    /// not RUN, and says so in `bhist -l`.
    #[test]
    fn time_a_job_s_host_was_unreachable_is_unkwn() {
        let events = vec![
            (100, submitted()),
            (100, started()),
            (110, HistoryEvent::Unknown),
            (140, HistoryEvent::Reached),
            (150, HistoryEvent::Finished { exit: 0, cpu_time: 0.0, reason: None, term: None }),
        ];
        assert_eq!(columns(summary(&events, 999)), [0, 0, 20, 0, 0, 30, 50]);
        let h = JobHistory { job: crate::bjobs::tests::job(3, allot_proto::JobStatus::Done), events };
        let text = long(&h, 999);
        assert!(text.contains(": Unknown; unable to reach the execution host;"), "{text}");
        assert!(text.contains(": Running;"), "{text}");
        let open = [(100, submitted()), (100, started()), (120, HistoryEvent::Unknown)];
        assert_eq!(summary(&open, 150), [0, 0, 20, 0, 0, 30], "still unknown: up to now");
    }

    #[test]
    fn a_job_removed_while_pending() {
        assert_eq!(summary(&[(100, submitted()), (103, HistoryEvent::Removed)], 999), [3, 0, 0, 0, 0, 0]);
    }
}
