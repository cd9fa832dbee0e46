//! `bjobs`: LSF's job listing, in its default, custom (`-o`), JSON
//! (`-json`) and job array summary (`-A`) forms; the long form (`-l`) is
//! [`crate::job_long`].

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use allot_proto::{JobInfo, JobQuery, JobStatus, Request, Response};
use anyhow::{anyhow, bail};

use crate::bjobs_format::{DEFAULT_FIELDS, Field, Format, custom, json, parse_format};
use crate::bjobs_wide::RunColumn;
use crate::job_long::long;
use crate::lsf::{call, cut, emit, exec_host, push_column, push_lsf_time};

/// What `bjobs` was asked.
#[derive(Debug, Default, PartialEq)]
struct Args {
    query: JobQuery,
    wide: bool,
    header: bool,
    reasons: bool,
    long: bool,
    json: bool,
    name: Option<String>,
    format: Option<Format>,
    /// `-r`, `-s`, `-d`: running, suspended, finished jobs only.
    states: Option<States>,
    /// `-A`: one line per job array.
    arrays: bool,
    /// `-a` as given (the query may ask for finished jobs for itself).
    all: bool,
    /// `-W`: the resource usage columns, names whole.
    usage: bool,
    /// `-WL`, `-WF`, `-WP`: a run time column.
    run: Option<RunColumn>,
}

/// The state filters, as LSF names what they show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum States {
    Running,
    Suspended,
    Finished,
}

impl States {
    fn keeps(self, s: JobStatus) -> bool {
        match self {
            States::Running => s == JobStatus::Run,
            States::Suspended => matches!(s, JobStatus::Psusp | JobStatus::Ususp | JobStatus::Ssusp),
            States::Finished => !s.unfinished(),
        }
    }

    fn what(self) -> &'static str {
        match self {
            States::Running => "running job",
            States::Suspended => "suspended job",
            States::Finished => "finished job",
        }
    }
}

fn parse(args: &[String]) -> anyhow::Result<Args> {
    let args = &crate::lsf::split_options("bjobs", args)?;
    let mut a = Args { header: true, ..Args::default() };
    let mut formats: Vec<String> = Vec::new();
    let mut i = 0;
    let value = |i: usize| -> anyhow::Result<String> {
        args.get(i + 1).cloned().ok_or_else(|| anyhow!("bjobs: {}: expected a value after it", args[i]))
    };
    while i < args.len() {
        match args[i].as_str() {
            "-a" => {
                a.query.finished = true;
                a.all = true;
            }
            "-A" => a.arrays = true,
            "-r" => a.states = Some(States::Running),
            "-s" => a.states = Some(States::Suspended),
            "-d" => a.states = Some(States::Finished),
            "-w" => a.wide = true,
            "-W" => {
                a.usage = true;
                a.wide = true;
            }
            o @ ("-WL" | "-WF" | "-WP") => a.run = RunColumn::of(o),
            "-p" => a.reasons = true,
            "-l" => a.long = true,
            "-json" => a.json = true,
            "-noheader" => a.header = false,
            "-u" => {
                a.query.user = Some(value(i)?);
                i += 1;
            }
            "-q" => {
                a.query.queue = Some(value(i)?);
                i += 1;
            }
            "-g" => {
                a.query.job_group = Some(value(i)?);
                i += 1;
            }
            "-J" => {
                a.name = Some(value(i)?);
                i += 1;
            }
            "-o" => {
                formats.push(value(i)?);
                i += 1;
            }
            o if o.starts_with('-') => bail!("bjobs: {o}: unknown option"),
            id => a.query.jobs.extend(crate::lsf::job_refs("bjobs", id)?),
        }
        i += 1;
    }
    if !formats.is_empty() {
        a.format = Some(parse_format(&formats.join(" "))?);
    }
    if a.json && a.format.is_none() {
        a.format = Some(parse_format(&DEFAULT_FIELDS.join(" "))?);
    }
    if a.long && (a.format.is_some() || a.json) {
        bail!("bjobs: -l cannot be used with -o or -json");
    }
    if a.arrays && (a.long || a.format.is_some()) {
        bail!("bjobs: -A cannot be used with -l, -o or -json");
    }
    // A summary counts every element, finished ones too; -d asks for
    // finished jobs.
    if a.arrays || a.states == Some(States::Finished) {
        a.query.finished = true;
    }
    a.query.arrays = a.arrays;
    // `-W` and the run columns show the project, usage and limits.
    a.query.brief = !a.long && a.format.is_none() && !a.arrays && !a.usage && a.run.is_none();
    let asks = |want: &dyn Fn(Field) -> bool| a.format.as_ref().is_some_and(|f| f.fields.iter().any(|g| want(g.0)));
    a.query.reasons = a.reasons || a.long || asks(&|g| matches!(g, Field::PendReason | Field::EstimatedStartTime));
    // `-l` shows the job group.
    a.query.detail = a.long || asks(&|g| g.detail());
    Ok(a)
}

pub fn bjobs(args: &[String]) -> anyhow::Result<ExitCode> {
    let a = parse(args)?;
    let keep = |j: &JobInfo| {
        (!a.reasons || j.status == JobStatus::Pend)
            && a.states.is_none_or(|s| s.keeps(j.status))
            && a.name.as_ref().is_none_or(|p| name_matches(p, j))
    };
    if a.long && a.reasons {
        let Response::Jobs(mut jobs) = call(Request::Jobs(a.query.clone()))? else { bail!("bjobs: unexpected answer") };
        jobs.retain(keep);
        if jobs.is_empty() {
            emit(&render(&a, &jobs))?;
            return Ok(ExitCode::SUCCESS);
        }
        emit(&explained(&jobs)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let whole = a.query.jobs.iter().all(|r| r.index == 0);
    if a.arrays && whole && a.states.is_none() && a.name.is_none() && !a.reasons {
        // Counted by allotd, without a list of every element.
        let query = JobQuery { summary: true, ..a.query.clone() };
        let Response::Arrays(counts) = call(Request::Jobs(query))? else { bail!("bjobs: unexpected answer") };
        emit(&array_rows(&a, counts.into_iter().map(|c| (c.id, (c.spec, c.user, c.counts))).collect()))?;
        return Ok(ExitCode::SUCCESS);
    }
    if a.long || a.json || a.arrays {
        let Response::Jobs(mut jobs) = call(Request::Jobs(a.query.clone()))? else { bail!("bjobs: unexpected answer") };
        jobs.retain(keep);
        emit(&render(&a, &jobs))?;
        return Ok(ExitCode::SUCCESS);
    }
    // The default and `-o` forms are written part by part as the list
    // arrives: the first lines show while allotd still sends the rest.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut shown = 0usize;
    let mut failed: Option<std::io::Error> = None;
    let answer = crate::lsf::client()?.call_each(Request::Jobs(a.query.clone()), &mut |mut part| {
        part.retain(keep);
        if part.is_empty() || failed.is_some() {
            return;
        }
        let text = rows(&a, &part, a.header && shown == 0);
        shown += part.len();
        if let Err(e) = out.write_all(text.as_bytes()) {
            failed = Some(e);
        }
    })?;
    if let Response::Error(e) = answer {
        bail!("{e}");
    }
    if shown == 0 && failed.is_none() {
        if let Err(e) = out.write_all(render(&a, &[]).as_bytes()) {
            failed = Some(e);
        }
    }
    if failed.is_none() {
        failed = out.flush().err();
    }
    match failed {
        Some(e) => crate::lsf::output_failed(e),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// `bjobs -p -l`: each pending job's long form, with everything that
/// holds it (`allot explain`) for its pending reasons.
fn explained(jobs: &[JobInfo]) -> anyhow::Result<String> {
    let mut parts = Vec::new();
    for j in jobs {
        let x = crate::explain_cmd::ask(j.job_ref())?;
        let mut shown = j.clone();
        shown.pending_reason = None;
        let mut text = long(&shown);
        text.push_str(&x.render(&crate::job_long::long_time));
        parts.push(text);
    }
    Ok(parts.join(&format!("{}\n", "-".repeat(78))))
}

/// `-J name`: a job of that name (`*` matching any text); an array's name
/// matches each of its elements, `name[4]` one of them.
pub(crate) fn name_matches(pattern: &str, j: &JobInfo) -> bool {
    let array_name = match j.index {
        0 => None,
        i => j.name.strip_suffix(&format!("[{i}]")),
    };
    allot_config::deps::name_matches(pattern, &j.name)
        || array_name.is_some_and(|n| allot_config::deps::name_matches(pattern, n))
}

fn render(a: &Args, jobs: &[JobInfo]) -> String {
    if let (true, Some(f)) = (a.json, &a.format) {
        return json(f, jobs);
    }
    if a.arrays {
        return arrays(a, jobs);
    }
    if jobs.is_empty() && !a.query.jobs.is_empty() && a.states.is_none() && !a.reasons {
        // Jobs named that are not in the system (never were, or forgotten
        // after CLEAN_PERIOD), as LSF says it.
        return a.query.jobs.iter().map(|r| format!("Job <{r}> is not found\n")).collect();
    }
    if jobs.is_empty() {
        let what = if a.reasons {
            "pending job"
        } else if let Some(s) = a.states {
            s.what()
        } else if a.query.finished {
            "job"
        } else {
            "unfinished job"
        };
        return format!("No {what} found\n");
    }
    if a.long {
        return jobs.iter().map(long).collect::<Vec<_>>().join(&format!("{}\n", "-".repeat(78)));
    }
    if let Some(f) = &a.format {
        return custom(f, jobs, a.header);
    }
    default(a, jobs, a.header)
}

/// Rows of the default or `-o` form, the header only with `header`: what a
/// streamed part of a long list shows.
fn rows(a: &Args, jobs: &[JobInfo], header: bool) -> String {
    match &a.format {
        Some(f) => custom(f, jobs, header),
        None => default(a, jobs, header),
    }
}

fn default(a: &Args, jobs: &[JobInfo], header: bool) -> String {
    let mut out = String::new();
    if header {
        out.push_str(&crate::bjobs_wide::header(a.usage, a.run));
    }
    let now = crate::bjobs_wide::now();
    if a.usage {
        for j in jobs {
            crate::bjobs_wide::row(&mut out, j, a.run, now);
            push_reason(&mut out, a, j);
        }
        return out;
    }
    let wide = a.wide;
    out.reserve(jobs.len() * 90);
    // A job on one host (most) needs no list of its hosts.
    let mut id = String::new();
    for j in jobs {
        let first = j.exec_hosts.first().map_or(Cow::Borrowed(""), exec_host);
        id.clear();
        let _ = write!(id, "{}", j.id);
        push_column(&mut out, &id, 7, true);
        push_column(&mut out, &j.user, 7, wide);
        push_column(&mut out, j.status.as_str(), 5, true);
        push_column(&mut out, &j.queue, 10, wide);
        push_column(&mut out, &j.from_host, 11, wide);
        push_column(&mut out, &first, 11, wide);
        // `*` and the end of a long name, as LSF shows it.
        crate::lsf::push_padded(&mut out, &crate::lsf::cut_name(&j.name, 10, wide), 10);
        push_lsf_time(&mut out, j.submit_time);
        if let Some(r) = a.run {
            out.push_str("   ");
            out.push_str(&r.value(j, now));
        }
        out.push('\n');
        for h in j.exec_hosts.iter().skip(1) {
            let _ =
                writeln!(out, "{:<7} {:<7} {:<5} {:<10} {:<11} {}", "", "", "", "", "", cut(&exec_host(h), 11, wide));
        }
        push_reason(&mut out, a, j);
    }
    out
}

/// `-p`: a pending job's reason under its row.
fn push_reason(out: &mut String, a: &Args, j: &JobInfo) {
    if a.reasons {
        if let Some(r) = &j.pending_reason {
            let _ = writeln!(out, " {r};");
        }
    }
}

/// `bjobs -A`: per job array, its elements by state. Arrays with an
/// unfinished element, or every array with `-a` or named by its ID (as
/// `bjobs ID` shows a finished job it still knows).
fn arrays(a: &Args, jobs: &[JobInfo]) -> String {
    let mut rows: ArrayRows = std::collections::BTreeMap::new();
    for j in jobs.iter().filter(|j| j.index > 0) {
        let row = rows.entry(j.id).or_insert((j.array.clone().unwrap_or_default(), j.user.clone(), [0; 7]));
        row.2[allot_proto::ArrayCount::column(j.status)] += 1;
    }
    array_rows(a, rows)
}

/// Arrays by job number, each with its spec and owner and counts of
/// PEND DONE RUN EXIT SSUSP USUSP PSUSP.
type ArrayRows = std::collections::BTreeMap<u64, (String, String, [u32; 7])>;

/// `bjobs -A`'s table.
fn array_rows(a: &Args, mut rows: ArrayRows) -> String {
    let named = !a.query.jobs.is_empty();
    rows.retain(|_, (_, _, n)| a.all || named || n[0] + n[2] + n[4] + n[5] + n[6] > 0);
    if rows.is_empty() {
        return "No job array found\n".into();
    }
    let mut out = String::new();
    if a.header {
        out.push_str("JOBID   ARRAY_SPEC  OWNER  NJOBS PEND DONE  RUN EXIT SSUSP USUSP PSUSP\n");
    }
    for (id, (spec, owner, n)) in rows {
        let total: u32 = n.iter().sum();
        let _ = writeln!(
            out,
            "{id:<7} {:<11} {:<6} {total:>5} {:>4} {:>4} {:>4} {:>4} {:>5} {:>5} {:>5}",
            cut(&spec, 11, a.wide),
            cut(&owner, 6, a.wide),
            n[0],
            n[1],
            n[2],
            n[3],
            n[4],
            n[5],
            n[6]
        );
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn job(id: u64, status: JobStatus) -> JobInfo {
        JobInfo {
            id,
            index: 0,
            array: None,
            user: "alice".into(),
            status,
            queue: "normal".into(),
            from_host: "hostA".into(),
            exec_hosts: if status == JobStatus::Pend { vec![] } else { vec![("hostA".into(), 2)] },
            name: "sim".into(),
            // 2026-11-21 20:55:01 UTC, a Saturday.
            submit_time: 1_795_294_501,
            start_time: (status != JobStatus::Pend).then_some(1_795_294_502),
            end_time: matches!(status, JobStatus::Done | JobStatus::Exit).then_some(1_795_294_562),
            exit_code: match status {
                JobStatus::Done => Some(0),
                JobStatus::Exit => Some(3),
                _ => None,
            },
            pending_reason: (status == JobStatus::Pend).then(|| "Not enough job slots: 2 needed, 0 free".into()),
            slots: 2,
            command: "./sim -n 2".into(),
            cwd: "/home/alice".into(),
            project: None,
            cpu_time: matches!(status, JobStatus::Done | JobStatus::Exit).then_some(118.25),
            run_limit: Some(3600),
            estimated_run_time: None,
            priority: None,
            mem_kb: None,
            max_mem_kb: None,
            reserved: None,
            exit_reason: None,
            exec_cwd: None,
            term_reason: None,
            mem_limit_kb: None,
            resize_request: None,
            description: None,
            detail: None,
        }
    }

    fn args(words: &[&str]) -> Args {
        parse(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>()).expect("valid")
    }

    #[test]
    fn combined_flags_as_lsf_reads_them() {
        let a = args(&["-aw"]);
        assert!(a.all && a.wide);
        let a = args(&["-noheader", "-o", "jobid stat", "-aJ", "NAME"]);
        assert!(a.all && !a.header);
        assert_eq!(a.name.as_deref(), Some("NAME"));
        assert_eq!(a.format.map(|f| f.fields.len()), Some(2));
        let a = args(&["-uall", "-q", "normal"]);
        assert_eq!((a.query.user.as_deref(), a.query.queue.as_deref()), (Some("all"), Some("normal")));
    }

    #[test]
    fn long_form_of_a_finished_and_a_pending_job() {
        let text = render(&args(&["-l", "-a"]), &[job(7, JobStatus::Exit), job(8, JobStatus::Pend)]);
        insta::assert_snapshot!(text);
    }

    #[test]
    fn the_default_table_cuts_pads_and_lists_hosts() {
        let mut running = job(12345678, JobStatus::Run);
        running.exec_hosts = vec![("hostA".into(), 2), ("a_very_long_host".into(), 1)];
        running.user = "bartholomew".into();
        let mut pending = job(9, JobStatus::Pend);
        pending.name = "café_au_lait".into();
        let jobs = [running, pending];
        assert_eq!(
            render(&args(&["-p"]), &jobs[1..]),
            "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME\n\
             9       alice   PEND  normal     hostA                   *é_au_lait Nov 21 20:55\n \
             Not enough job slots: 2 needed, 0 free;\n"
        );
        assert_eq!(
            render(&args(&[]), &jobs),
            "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME\n\
             12345678 bartho* RUN   normal     hostA       2*hostA     sim        Nov 21 20:55\n\
             \x20                                            a_very_lon*\n\
             9       alice   PEND  normal     hostA                   *é_au_lait Nov 21 20:55\n"
        );
        assert_eq!(
            render(&args(&["-w"]), &jobs[..1]).lines().nth(1),
            Some("12345678 bartholomew RUN   normal     hostA       2*hostA     sim        Nov 21 20:55")
        );
    }

    #[test]
    fn custom_columns_widths_and_delimiters() {
        let jobs = [job(7, JobStatus::Done), job(8, JobStatus::Pend)];
        assert_eq!(
            render(&args(&["-o", "jobid:6 stat:5 exec_host:10 exit_code"]), &jobs),
            "JOBID  STAT  EXEC_HOST  EXIT_CODE\n7      DONE  2*hostA    0\n8      PEND  -          -\n"
        );
        assert_eq!(
            render(&args(&["-noheader", "-o", "jobid user cpu_used delimiter=','"]), &jobs),
            "7,alice,118.2 second(s)\n8,alice,-\n"
        );
        assert!(parse(&["-o".into(), "jobid colour".into()]).is_err_and(|e| e.to_string().contains("`colour`")));
        // More of LSF's fields: what ended it, its description, its hosts.
        let mut ended = job(9, JobStatus::Exit);
        ended.term_reason = Some("TERM_OWNER: job killed by owner".into());
        ended.description = Some("nightly".into());
        ended.mem_limit_kb = Some(2048);
        assert_eq!(
            render(
                &args(&["-noheader", "-o", "exit_reason job_description memlimit first_host nexec_host delimiter='|'"]),
                &[ended, job(8, JobStatus::Pend)]
            ),
            "TERM_OWNER: job killed by owner|nightly|2 Mbytes|hostA|1\n-|-|-|-|-\n"
        );
    }

    #[test]
    fn json_keeps_the_field_order_and_strings() {
        let text = render(&args(&["-json", "-o", "jobid stat exec_host"]), &[job(7, JobStatus::Run)]);
        assert_eq!(
            text,
            "{\n  \"COMMAND\":\"bjobs\",\n  \"JOBS\":1,\n  \"RECORDS\":[\n    {\n      \"JOBID\":\"7\",\n      \
             \"STAT\":\"RUN\",\n      \"EXEC_HOST\":\"2*hostA\"\n    }\n  ]\n}\n"
        );
        let parsed: serde_json::Value =
            serde_json::from_str(&render(&args(&["-json"]), &[job(1, JobStatus::Pend)])).expect("valid JSON");
        assert_eq!(parsed["RECORDS"][0]["SUBMIT_TIME"], "Nov 21 20:55");
        assert_eq!(parsed["JOBS"], 1);
        let none: serde_json::Value = serde_json::from_str(&render(&args(&["-json"]), &[])).expect("valid JSON");
        assert_eq!(none["JOBS"], 0);
    }

    #[test]
    fn job_names_match_with_stars() {
        assert!(allot_config::deps::name_matches("sim", "sim"));
        assert!(!allot_config::deps::name_matches("sim", "sim2"));
        assert!(allot_config::deps::name_matches("sim*", "sim2"));
        assert!(allot_config::deps::name_matches("*run*", "a-run-b"));
        assert!(allot_config::deps::name_matches("a*b*c", "axxbyyc"));
        assert!(!allot_config::deps::name_matches("a*b*c", "axxcyyb"));
    }

    fn element(id: u64, index: u32, status: JobStatus) -> JobInfo {
        JobInfo { index, name: format!("sims[{index}]"), array: Some("sims[1-10:3]".into()), ..job(id, status) }
    }

    #[test]
    fn array_summaries_count_elements_by_state() {
        let jobs = [
            element(5, 1, JobStatus::Done),
            element(5, 4, JobStatus::Run),
            element(5, 7, JobStatus::Pend),
            element(5, 10, JobStatus::Psusp),
            job(9, JobStatus::Run),
            JobInfo { array: Some("old[1-2]".into()), ..element(11, 1, JobStatus::Exit) },
        ];
        assert_eq!(
            render(&args(&["-A"]), &jobs),
            "JOBID   ARRAY_SPEC  OWNER  NJOBS PEND DONE  RUN EXIT SSUSP USUSP PSUSP\n\
             5       sims[1-10:* alice      4    1    1    1    0     0     0     1\n",
            "an array whose elements all ended is shown only with -a; jobs that are no array never"
        );
        let all = render(&args(&["-A", "-a", "-w", "-noheader"]), &jobs);
        assert_eq!(
            all,
            "5       sims[1-10:3] alice      4    1    1    1    0     0     0     1\n\
             11      old[1-2]    alice      1    0    0    0    1     0     0     0\n"
        );
        assert_eq!(
            render(&args(&["-A", "-noheader", "11"]), &jobs.iter().filter(|j| j.id == 11).cloned().collect::<Vec<_>>()),
            "11      old[1-2]    alice      1    0    0    0    1     0     0     0\n",
            "a finished array named by its ID, as `bjobs 11` shows it"
        );
        assert_eq!(render(&args(&["-A"]), &[job(9, JobStatus::Run)]), "No job array found\n");
        assert!(args(&["-A"]).query.finished && args(&["-A"]).query.arrays, "the daemon sends every element");
        assert!(parse(&["-A".into(), "-l".into()]).is_err());
    }

    #[test]
    fn elements_show_their_index_and_match_their_arrays_name() {
        let e = element(5, 4, JobStatus::Run);
        assert!(name_matches("sims", &e) && name_matches("sims[4]", &e) && name_matches("si*", &e));
        assert!(!name_matches("sims[5]", &e) && !name_matches("sim", &e));
        let text = render(&args(&["-o", "jobid jobindex job_name"]), &[e.clone(), job(9, JobStatus::Run)]);
        assert_eq!(text, "JOBID JOBINDEX JOB_NAME\n5 4 sims[4]\n9 0 sim\n");
        assert!(render(&args(&["-l"]), &[e]).starts_with("\nJob <5[4]>, Job Name <sims[4]>,"));
        let p = JobInfo { priority: Some(20), ..job(3, JobStatus::Pend) };
        let l = render(&args(&["-l"]), &[p]);
        assert!(l.contains("Project <default>, Job Priority <20>, Status <PEND>"), "{l}");
    }

    #[test]
    fn measured_cpu_and_memory() {
        let running =
            JobInfo { mem_kb: Some(10_000), max_mem_kb: Some(20_480), cpu_time: Some(3.5), ..job(4, JobStatus::Run) };
        let l = render(&args(&["-l"]), std::slice::from_ref(&running));
        assert!(l.contains(" The CPU time used is 3.5 seconds.\n MEM: 10 Mbytes;\n"), "{l}");
        assert!(l.contains("\n MEMORY USAGE:\n MAX MEM: 20 Mbytes;\n"), "{l}");
        let o = render(&args(&["-noheader", "-o", "mem max_mem delimiter=','"]), &[running, job(5, JobStatus::Pend)]);
        assert_eq!(o, "10 Mbytes,20 Mbytes\n-,-\n");
    }

    #[test]
    fn state_filters_and_their_empty_messages() {
        let a = args(&["-r"]);
        assert_eq!(a.states, Some(States::Running));
        assert!(States::Running.keeps(JobStatus::Run) && !States::Running.keeps(JobStatus::Ususp));
        assert!(States::Suspended.keeps(JobStatus::Ususp) && States::Suspended.keeps(JobStatus::Psusp));
        assert!(!States::Suspended.keeps(JobStatus::Pend));
        assert!(States::Finished.keeps(JobStatus::Exit) && !States::Finished.keeps(JobStatus::Run));
        assert!(args(&["-d"]).query.finished, "finished jobs are asked for");
        assert!(args(&[]).query.brief && args(&["-w", "-p"]).query.brief, "the default list asks for less");
        for full in [&["-l"][..], &["-o", "command"], &["-json"], &["-A"]] {
            assert!(!args(full).query.brief, "{full:?} shows what brief leaves out");
        }
        assert_eq!(render(&args(&["-r"]), &[]), "No running job found\n");
        assert_eq!(render(&args(&["-a", "7", "8[2]"]), &[]), "Job <7> is not found\nJob <8[2]> is not found\n");
        assert_eq!(render(&args(&["-s"]), &[]), "No suspended job found\n");
        assert_eq!(render(&args(&["-d"]), &[]), "No finished job found\n");
    }
}
