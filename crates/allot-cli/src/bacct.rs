//! `bacct [-l] [-u users|all] [-q queue] [-C|-D|-S time0,time1] [job ...]`:
//! LSF's accounting of finished jobs, from allotd's event log, laid out as
//! LSF lays it out.

use std::fmt::Write as _;
use std::process::ExitCode;

use allot_proto::acct::{AcctAnswer, AcctQuery, AcctRun, AcctSummary};
use allot_proto::{Request, Response};
use anyhow::{anyhow, bail};

const RULE: &str = "------------------------------------------------------------------------------";

pub fn bacct(args: &[String]) -> anyhow::Result<ExitCode> {
    let args = crate::lsf::split_options("bacct", args)?;
    let now = allot_exec::now_secs();
    let mut q = AcctQuery::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| anyhow!("bacct: {a}: expected a value after it"));
        match a.as_str() {
            "-l" => q.long = true,
            // `-b`: the brief form, the summary, which is the default.
            "-b" => {}
            "-u" => q.users = value()?.split_whitespace().map(str::to_string).collect(),
            "-q" => q.queues = value()?.split_whitespace().map(str::to_string).collect(),
            "-C" | "-D" | "-S" => {
                let text = value()?;
                let window = allot_config::acct_time::parse_window(&text, now, &crate::clock::offset_at)
                    .map_err(|e| anyhow!("bacct: {a} {text}: column {}: {}", e.offset + 1, e.message))?;
                match a.as_str() {
                    "-C" => q.completed = Some(window),
                    "-D" => q.dispatched = Some(window),
                    _ => q.submitted = Some(window),
                }
            }
            job => q.jobs.extend(crate::lsf::job_refs("bacct", job)?),
        }
    }
    let answer = match crate::lsf::call(Request::Acct(Box::new(q.clone())))? {
        Response::Acct(a) => *a,
        other => bail!("bacct: unexpected answer {other:?}"),
    };
    let me = nix::unistd::User::from_uid(nix::unistd::getuid()).ok().flatten().map_or_else(String::new, |u| u.name);
    crate::lsf::emit(&render(&q, &answer, &me))?;
    Ok(ExitCode::SUCCESS)
}

/// What the query accounts, as LSF's header says it.
fn header(q: &AcctQuery, me: &str) -> String {
    let users = if q.users.is_empty() {
        format!("submitted by users {me}, ")
    } else if q.users.iter().any(|u| u == "all") {
        "submitted by all users.".to_string()
    } else {
        format!("submitted by users {}, ", q.users.join(", "))
    };
    let queues = if q.queues.is_empty() {
        "submitted to all queues.".to_string()
    } else {
        format!("submitted to queues {}.", q.queues.join(", "))
    };
    format!(
        "Accounting information about jobs that are: \n  - {users}\n  - accounted on all projects.\n  - completed normally or \
         exited\n  - executed on all hosts.\n  - {queues}\n  - accounted on all service classes.\n{RULE}\n"
    )
}

fn when(secs: u64) -> String {
    allot_exec::clock::long_in(secs, crate::clock::zone())
}

fn run_text(r: &AcctRun) -> String {
    let mut out = String::new();
    let status = if r.done() { "DONE" } else { "EXIT" };
    // What the submitter wrote, its control characters escaped.
    let shown = allot_proto::text::escaped;
    let project = shown(r.project.as_deref().unwrap_or("default"));
    let _ = writeln!(
        out,
        "\nJob <{}>, User <{}>, Project <{project}>, Status <{status}>, Queue <{}>, Command <{}>",
        r.job,
        r.user,
        r.queue,
        shown(&r.command)
    );
    let _ = writeln!(out, "{}: Submitted from host <{}>, CWD <{}>;", when(r.submitted), r.from_host, shown(&r.cwd));
    if let Some((at, hosts)) = &r.started {
        let hosts: Vec<String> = hosts.iter().map(|h| format!("<{}>", crate::lsf::exec_host(h))).collect();
        let _ = writeln!(out, "{}: Dispatched to {};", when(*at), hosts.join(", "));
    }
    match r.exit {
        0 => {
            let _ = writeln!(out, "{}: Completed <done>.", when(r.ended));
        }
        code => {
            let _ = writeln!(out, "{}: Completed <exit>; exit code {code}.", when(r.ended));
        }
    }
    let _ = writeln!(out, "\nAccounting information about this job:");
    let _ = writeln!(out, "     CPU_T     WAIT     TURNAROUND   STATUS     HOG_FACTOR    MEM    SWAP");
    let mem = format!("{}M", r.max_mem_kb.div_ceil(1024));
    let _ = writeln!(
        out,
        "{:>10.2} {:>8} {:>14} {:>8} {:>14.4} {:>6} {:>7}",
        r.cpu_time,
        r.wait(),
        r.turnaround(),
        if r.done() { "done" } else { "exit" },
        r.hog_factor(),
        mem,
        "0M"
    );
    out.push_str(RULE);
    out.push('\n');
    out
}

/// Two figures on one line, as LSF's summary pairs them.
fn pair(out: &mut String, (l, a): (&str, String), (r, b): (&str, String)) {
    let _ = writeln!(out, " {:<27}{a:>8}      {:<26}{b:>8}", format!("{l}:"), format!("{r}:"));
}

/// `Maximum WHAT` and `Minimum WHAT` of a spread, with `places` decimals.
fn extremes(out: &mut String, what: &str, spread: &allot_proto::acct::Spread, places: usize) {
    pair(
        out,
        (&format!("Maximum {what}"), format!("{:.places$}", spread.max)),
        (&format!("Minimum {what}"), format!("{:.places$}", spread.min)),
    );
}

fn summary_text(s: &AcctSummary) -> String {
    let mut out = String::from("\nSUMMARY:      ( time unit: second ) \n");
    pair(
        &mut out,
        ("Total number of done jobs", s.done.to_string()),
        ("Total number of exited jobs", s.exited.to_string()),
    );
    pair(
        &mut out,
        ("Total CPU time consumed", format!("{:.1}", s.cpu.total)),
        ("Average CPU time consumed", format!("{:.1}", s.cpu.average())),
    );
    extremes(&mut out, "CPU time of a job", &s.cpu, 1);
    let _ = writeln!(out, " {:<27}{:>8.1}", "Total wait time in queues:", s.wait.total);
    let _ = writeln!(out, " {:<27}{:>8.1}", "Average wait time in queue:", s.wait.average());
    extremes(&mut out, "wait time in queue", &s.wait, 1);
    let _ = writeln!(out, " {:<27}{:>8.0} (seconds/job)", "Average turnaround time:", s.turnaround.average());
    extremes(&mut out, "turnaround time", &s.turnaround, 0);
    let _ =
        writeln!(out, " {:<27}{:>8.2} ( cpu time / turnaround time )", "Average hog factor of a job:", s.hog.average());
    extremes(&mut out, "hog factor of a job", &s.hog, 2);
    let _ = writeln!(
        out,
        " {:<34}{:>6.2} ( turnaround time / run time )",
        "Average expansion factor of a job:",
        s.expansion.average()
    );
    extremes(&mut out, "expansion factor of a job", &s.expansion, 2);
    pair(
        &mut out,
        ("Total Run time consumed", format!("{:.0}", s.run.total)),
        ("Average Run time consumed", format!("{:.0}", s.run.average())),
    );
    extremes(&mut out, "Run time of a job", &s.run, 0);
    let hours = s.end.saturating_sub(s.begin) as f64 / 3600.0;
    let _ = writeln!(out, " {:<27}{:>8.2} (jobs/hour)  during {hours:>7.2} hours", "Total throughput:", s.throughput());
    let _ = writeln!(
        out,
        " {:<22}{:<18}{:<22}{}",
        "Beginning time:",
        crate::lsf::lsf_time(s.begin),
        "Ending time:",
        crate::lsf::lsf_time(s.end)
    );
    out
}

/// The whole answer: the header, each run (`-l`), the summary (or LSF's
/// word that there is nothing to account).
pub fn render(q: &AcctQuery, a: &AcctAnswer, me: &str) -> String {
    let mut out = header(q, me);
    if a.summary.jobs() == 0 {
        out.push_str("\nNo matching job found\n");
        return out;
    }
    for r in &a.runs {
        out.push_str(&run_text(r));
    }
    out.push_str(&summary_text(&a.summary));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_and_a_job_as_bacct_lays_them_out() {
        let done = AcctRun {
            job: allot_proto::JobRef::job(12),
            user: "alice".into(),
            queue: "normal".into(),
            command: "sleep 60".into(),
            from_host: "login1".into(),
            cwd: "/home/alice".into(),
            submitted: 1_795_294_500,
            started: Some((1_795_294_510, vec![("hostA".into(), 2)])),
            ended: 1_795_294_570,
            exit: 0,
            cpu_time: 30.0,
            max_mem_kb: 2048,
            ..AcctRun::default()
        };
        let failed = AcctRun { job: allot_proto::JobRef { id: 13, index: 2 }, exit: 3, cpu_time: 1.0, ..done.clone() };
        let mut summary = AcctSummary::default();
        summary.add(&done);
        summary.add(&failed);
        let q = AcctQuery { long: true, ..AcctQuery::default() };
        let text = render(&q, &AcctAnswer { summary, runs: vec![done, failed] }, "alice");
        insta::assert_snapshot!(text);
        let none =
            render(&AcctQuery { users: vec!["all".into()], ..AcctQuery::default() }, &AcctAnswer::default(), "x");
        assert!(
            none.contains("  - submitted by all users.\n") && none.ends_with("\nNo matching job found\n"),
            "{none}"
        );
    }
}
