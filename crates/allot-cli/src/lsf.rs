//! The LSF commands, as `allot <cmd>` or through links named after them:
//! LSF's option syntax and output layouts, talking to allotd.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use allot_proto::{Client, JobInfo, JobQuery, JobRef, JobStatus, Request, Response, Submission, Submit};
use anyhow::{anyhow, bail};

/// Whether this binary answers to `name` as an LSF command (called by
/// that name, or as `allot NAME`): those with an option table.
pub fn is_command(name: &str) -> bool {
    allot_config::lsf_commands::command(name).is_some()
}

pub(crate) fn client() -> anyhow::Result<Client> {
    Ok(Client::connect_first(&allot_proto::paths::client_sockets())?)
}

/// Writes a command's output, its control characters but newlines and
/// tabs escaped (`allot_proto::text`: no text a user put in a job moves
/// an administrator's cursor; the fields that could forge a line are
/// escaped whole where they are read, as `JobInfo`). A reader that went
/// away (`bjobs | head`) ends the command quietly, as SIGPIPE ends LSF's.
pub(crate) fn emit(text: &str) -> anyhow::Result<()> {
    emit_raw(&allot_proto::text::escaped_lines(text))
}

/// [`emit`] as it is: a job's own output (`bpeek`), shown as `cat` would.
pub(crate) fn emit_raw(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) => output_failed(e).map(|_| ()),
    }
}

/// What a failed write of the output means: a closed pipe ends the
/// command with 141 (128 + SIGPIPE) and nothing said; anything else is an
/// error.
pub(crate) fn output_failed(e: std::io::Error) -> anyhow::Result<ExitCode> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(141);
    }
    Err(anyhow!("cannot write the output: {e}"))
}

pub fn call(request: Request) -> anyhow::Result<Response> {
    match client()?.call(request)? {
        Response::Error(e) => Err(anyhow!("{e}")),
        r => Ok(r),
    }
}

pub fn run(cmd: &str, args: &[String]) -> anyhow::Result<ExitCode> {
    let table = table(cmd)?;
    // `-V`, as every LSF command takes it: the release, on standard
    // error, and nothing else done (only as the first word: `bsub cmd -V`
    // is a command's own option).
    if args.first().is_some_and(|a| a == "-V") {
        eprintln!("{}", version_text());
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(topics) = crate::help::asked(table, args) {
        return Ok(match crate::help::text(table, topics) {
            Ok(text) => {
                eprint!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        });
    }
    let result = dispatch(cmd, args);
    // An option the command does not know: its error, then its usage, as
    // LSF's commands print it.
    match result {
        Err(e) if !table.synopsis_has_options && table.split(args).is_err() => {
            eprintln!("{e:#}");
            eprint!("{}", table.usage());
            Ok(ExitCode::FAILURE)
        }
        result => result,
    }
}

fn dispatch(cmd: &str, args: &[String]) -> anyhow::Result<ExitCode> {
    match cmd {
        "bsub" => bsub(args),
        "blaunch" => crate::blaunch::blaunch(args),
        "lsgrun" => crate::blaunch::lsgrun(args),
        "bmgroup" => crate::cluster_info::bmgroup(args),
        "blimits" => crate::blimits::blimits(args),
        "bgadd" => crate::job_groups_cmd::bgadd(args),
        "bgmod" => crate::job_groups_cmd::bgmod(args),
        "bgdel" => crate::job_groups_cmd::bgdel(args),
        "bjgroup" => crate::job_groups_cmd::bjgroup(args),
        "lshosts" => crate::hosts_cmd::lshosts(args),
        "lsload" => crate::hosts_cmd::lsload(args),
        "bjobs" => crate::bjobs::bjobs(args),
        "bkill" => crate::control::bkill(args),
        "bstop" => crate::control::bstop(args),
        "bresize" => crate::control::bresize(args),
        "bresume" => crate::control::bresume(args),
        "bswitch" => crate::control::bswitch(args),
        "bmod" => crate::control::bmod(args),
        "brequeue" => crate::control::brequeue(args),
        "bpeek" => crate::bhist::bpeek(args),
        "bhist" => crate::bhist::bhist(args),
        "bqueues" => crate::views::bqueues(args),
        "bhosts" => crate::views::bhosts(args),
        "bhpart" => crate::views::bhpart(args),
        "bugroup" => crate::views::bugroup(args),
        "busers" => crate::views::busers(args),
        "bslots" => crate::bslots::bslots(args),
        "badmin" => badmin(args),
        "bparams" => crate::cluster_info::bparams(args),
        "bacct" => crate::bacct::bacct(args),
        "lsid" => crate::cluster_info::lsid(args),
        "lsclusters" => crate::cluster_info::lsclusters(args),
        _ => bail!("{cmd}: not an allot command"),
    }
}

/// What `-V` says: allot's release, and the LSF commands it speaks.
pub fn version_text() -> String {
    format!("allot {}, LSF 10.1 commands", env!("CARGO_PKG_VERSION"))
}

/// Options `bsub` parses but this allot does not act on yet: refused, so a
/// job never runs without what its user asked for.
fn not_yet(o: &allot_config::bsub::BsubOptions) -> Option<String> {
    o.other.first().map(|(opt, _)| opt.clone())
}

/// A job script: `bsub < script` (on standard input), or `bsub script`
/// when LSB_BSUB_PARSE_SCRIPT=Y (in the environment, as LSF also takes
/// lsf.conf's parameters) and the command is one file. `None`: a command.
fn job_script(o: &allot_config::bsub::BsubOptions) -> anyhow::Result<Option<(String, Option<String>)>> {
    if o.command.is_empty() {
        if std::io::stdin().is_terminal() {
            bail!("bsub: no command: give one, or a job script on standard input. Job not submitted.");
        }
        let mut script = String::new();
        std::io::stdin().read_to_string(&mut script)?;
        return Ok(Some((script, None)));
    }
    let parse_scripts = std::env::var("LSB_BSUB_PARSE_SCRIPT").is_ok_and(|v| v.eq_ignore_ascii_case("y"));
    match &o.command[..] {
        [path] if parse_scripts && std::path::Path::new(path).is_file() => {
            let script = std::fs::read_to_string(path).map_err(|e| anyhow!("bsub: {path}: {e}. Job not submitted."))?;
            // Named as LSF names it: the script's name.
            Ok(Some((script, Some(path.clone()))))
        }
        _ => Ok(None),
    }
}

/// Whether a script has anything to run: a line that is neither blank
/// nor a comment.
fn runs_something(script: &str) -> bool {
    script.lines().any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
}

fn bsub(args: &[String]) -> anyhow::Result<ExitCode> {
    let cli = allot_config::bsub::parse(args).map_err(|e| anyhow!("bsub: {e}. Job not submitted."))?;
    let (mut o, command) = match job_script(&cli)? {
        Some((script, name)) => {
            // Its #BSUB lines are options; the command line's win.
            let directives =
                allot_config::bsub::script_directives(&script).map_err(|e| anyhow!("bsub: {e}. Job not submitted."))?;
            let mut o = cli.or_script(directives);
            o.name = o.name.or(name);
            if !runs_something(&script) {
                bail!("bsub: the job script has no command to run. Job not submitted.");
            }
            (o, script)
        }
        None => {
            let command = cli.command.join(" ");
            (cli, command)
        }
    };
    if let Some(opt) = not_yet(&o) {
        bail!("bsub: {opt}: not supported by this allot yet. Job not submitted.");
    }
    let envdir = std::env::var_os("LSF_ENVDIR").map(std::path::PathBuf::from);
    let unit = allot_config::bsub::limits_unit(std::env::var("LSF_UNIT_FOR_LIMITS").ok(), envdir.as_deref());
    let mem_limit_kb = o
        .mem_limit
        .take()
        .map(|m| allot_config::bsub::mem_limit_kb(&m, &unit))
        .transpose()
        .map_err(|e| anyhow!("bsub: {e}. Job not submitted."))?;
    let mut limits = allot_proto::ProcessLimits::default();
    for (option, value) in &o.process_limits {
        let kb = allot_config::bsub::size_limit_kb(option, value, &unit)
            .map_err(|e| anyhow!("bsub: {e}. Job not submitted."))?;
        if let Some(limit) = limits.of_option(option) {
            *limit = Some(kb);
        }
    }
    let here = std::env::current_dir()?;
    // `-cwd`: relative to where bsub runs; `%J` and `%I` expand at start.
    let cwd = o.cwd.as_ref().map_or(here.clone(), |c| here.join(c)).display().to_string();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let term_time = o
        .term_time
        .as_ref()
        .map(|t| t.resolve_in(now, &crate::clock::offset_at))
        .transpose()
        .map_err(|e| anyhow!("bsub: {e}. Job not submitted."))?;
    let begin_time = o
        .begin_time
        .as_ref()
        .map(|t| {
            t.resolve_in(now, &crate::clock::offset_at).map_err(|e| match e {
                allot_config::bsub::BsubError::PastTermTime(x) => allot_config::bsub::BsubError::PastBeginTime(x),
                e => e,
            })
        })
        .transpose()
        .map_err(|e| anyhow!("bsub: {e}. Job not submitted."))?;
    let mail_report_to_user = o.mail_user.is_some() && o.output.is_none();
    let session = match o.interactive {
        Some(_) if o.wait => bail!("bsub: -I, -Ip and -Is cannot be used with -K. Job not submitted."),
        Some(_) if o.input.is_some() => {
            bail!("bsub: -i cannot be used with -I, -Ip or -Is: the terminal is the job's input. Job not submitted.")
        }
        Some(_) if o.name.as_deref().is_some_and(|n| n.contains('[')) => {
            bail!("bsub: an interactive job cannot be a job array. Job not submitted.")
        }
        Some(mode) => {
            Some(crate::interactive::Session::listen(mode).map_err(|e| anyhow!("bsub: {e:#}. Job not submitted."))?)
        }
        None => None,
    };
    // The scheduling options, typed once (allotd sets the owner from the
    // connection); the times and LSB_DEFAULTQUEUE are this submitter's.
    let submission = Submission {
        term_time,
        begin_time,
        default_queues: std::env::var("LSB_DEFAULTQUEUE")
            .map(|v| v.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        ..allot_config::submission::from_bsub(String::new(), o.clone())
    };
    let submit = Submit {
        submission,
        command,
        cwd,
        output: o.output,
        error: o.error,
        // `-u` without `-o`: the report goes by mail, where LSF sends it
        // for a job without an output file (allot keeps such a job's
        // output for bpeek, and mails no report otherwise).
        mail: (o.mail_begin || o.mail_end || o.mail_user.is_some()).then(|| allot_proto::MailAsked {
            begin: o.mail_begin,
            end: o.mail_end || mail_report_to_user,
            to: o.mail_user.clone(),
        }),
        pre_exec: o.pre_exec.clone(),
        post_exec: o.post_exec.clone(),
        description: o.description.clone(),
        login_shell: o.login_shell.clone(),
        env: match &o.env {
            Some(only) => only.apply(std::env::vars()),
            None => std::env::vars().collect(),
        },
        request: Some(request_id()),
        mem_limit_kb,
        host_mem_limit: o.host_mem_limit,
        limits,
        rerunnable: o.rerunnable,
        interactive: session.as_ref().map(crate::interactive::Session::asked),
        input: o.input.clone(),
        umask: Some(allot_exec::inherit::current_umask()),
        warning: match (o.warning_action, o.warning_time) {
            (Some(signal), Some(secs)) => Some((signal, secs)),
            (None, None) => None,
            _ => bail!("bsub: {}. Job not submitted.", allot_config::bsub::BsubError::HalfWarning),
        },
    };
    // Every refusal reads `bsub: ... Job not submitted.`, as LSF's do.
    let answer = submit_once(submit).map_err(|e| {
        let text = e.to_string();
        if text.starts_with("bsub: ") { e } else { anyhow!("bsub: {text}") }
    });
    let Response::Submitted { job, queue, warning } = answer? else {
        bail!("bsub: unexpected answer");
    };
    if let Some(w) = warning {
        eprintln!("bsub: warning: {w}");
    }
    println!("Job <{job}> is submitted to queue <{queue}>.");
    match session {
        Some(s) => s.run(job),
        None if o.wait => wait_for_end(job),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// A submission's request id: this host, process and moment, which no
/// other submission shares.
fn request_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}:{}:{nanos}", host.trim(), std::process::id())
}

/// How long `bsub` keeps sending a submission whose answer was lost
/// (allotd died between making it durable and answering), while allotd
/// comes back.
const RETRY_FOR: std::time::Duration = std::time::Duration::from_secs(20);

/// Sends a submission and returns allotd's answer. An answer lost on the
/// way is asked for again with the same request id, which gets the job
/// the first one made (never a second job) once allotd answers; if it
/// does not within [`RETRY_FOR`], says plainly that the job may exist and
/// how to check.
///
/// A submission refused for now by a pending threshold (MAX_PEND_JOBS,
/// MAX_PEND_SLOTS) is sent again after the cluster's SUB_TRY_INTERVAL,
/// saying so each time as LSF's bsub does ("User <u>: Pending job
/// threshold reached. Retrying in 60 seconds..."), until `LSB_NTRIES`
/// tries in all have been made (for ever without it).
fn submit_once(submit: Submit) -> anyhow::Result<Response> {
    let request = submit.request.clone().unwrap_or_default();
    let tries = match std::env::var("LSB_NTRIES") {
        Ok(n) => Some(n.trim().parse::<u64>().map_err(|_| {
            anyhow!("bsub: LSB_NTRIES={n}: expected a number of tries (a whole number). Job not submitted.")
        })?),
        Err(_) => None,
    };
    let mut tried = 0u64;
    let mut lost: Option<String> = None;
    let mut until = std::time::Instant::now() + RETRY_FOR;
    loop {
        let answer = client().and_then(|mut c| Ok(c.call(Request::Submit(Box::new(submit.clone())))?));
        match answer {
            Ok(Response::Error(e)) => bail!("{e}"),
            Ok(Response::Later { why, retry_after }) => {
                tried += 1;
                if tries.is_some_and(|n| tried >= n) {
                    bail!("bsub: {why}. Job not submitted.");
                }
                eprintln!("{why}. Retrying in {retry_after} seconds...");
                std::thread::sleep(std::time::Duration::from_secs(u64::from(retry_after)));
                (lost, until) = (None, std::time::Instant::now() + RETRY_FOR);
            }
            Ok(r) => return Ok(r),
            // Not even sent: allotd is not there.
            Err(e) if lost.is_none() && e.downcast_ref::<allot_proto::ClientError>().is_some_and(is_connect) => {
                return Err(e);
            }
            Err(e) => {
                let why = lost.get_or_insert_with(|| e.to_string()).clone();
                if std::time::Instant::now() >= until {
                    bail!(
                        "bsub: allotd's answer was lost ({why}): the job may have been submitted. `bjobs -a` \
                         shows it if it was (request {request}); submit again only if it is not there."
                    );
                }
                std::thread::sleep(std::time::Duration::from_millis(250));
            }
        }
    }
}

fn is_connect(e: &allot_proto::ClientError) -> bool {
    matches!(e, allot_proto::ClientError::Connect { .. })
}

/// `bsub -K`: follows the job to its end, as LSF prints it, and exits with
/// the job's exit code. For a job array: until every element has ended,
/// exiting with the first nonzero exit code of its elements (in index
/// order), 0 if all were DONE.
fn wait_for_end(job: u64) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    println!("<<Waiting for dispatch ...>>");
    let _ = std::io::stdout().flush();
    let mut started = false;
    loop {
        let query = JobQuery { jobs: vec![JobRef::job(job)], finished: true, ..JobQuery::default() };
        let Response::Jobs(jobs) = call(Request::Jobs(query))? else { bail!("bsub: unexpected answer") };
        if jobs.is_empty() {
            bail!("bsub: job {job} is gone");
        }
        if !started {
            if let Some(j) =
                jobs.iter().find(|j| matches!(j.status, JobStatus::Run | JobStatus::Ususp | JobStatus::Unkwn))
            {
                started = true;
                if let Some((host, _)) = j.exec_hosts.first() {
                    println!("<<Starting on {host}>>");
                    let _ = std::io::stdout().flush();
                }
            }
        }
        if jobs.iter().all(|j| !j.status.unfinished()) {
            println!("<<Job is finished>>");
            let code = jobs.iter().filter_map(|j| j.exit_code).find(|&c| c != 0).unwrap_or(0);
            return Ok(ExitCode::from(u8::try_from(code).unwrap_or(255)));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A date as LSF shows it: `Nov 21 20:55`, in the local time zone (see
/// [`crate::clock`]). A list shows the same minute many times over, so the
/// last one is kept.
pub fn lsf_time(secs: u64) -> String {
    let mut out = String::new();
    push_lsf_time(&mut out, secs);
    out
}

/// [`lsf_time`] written at the end of `out`; the last minute's text is
/// remembered, as a long job list's dates mostly share it.
pub fn push_lsf_time(out: &mut String, secs: u64) {
    thread_local! {
        static LAST: std::cell::RefCell<(u64, String)> = const { std::cell::RefCell::new((u64::MAX, String::new())) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != secs / 60 {
            *last = (secs / 60, minute_of(secs));
        }
        out.push_str(&last.1);
    })
}

fn minute_of(secs: u64) -> String {
    crate::clock::minute_in(secs, crate::clock::zone())
}

pub use allot_proto::exec_host;

pub fn exec_hosts(j: &JobInfo) -> Vec<String> {
    j.exec_hosts.iter().map(|h| exec_host(h).into_owned()).collect()
}

/// `s` cut to `width` (unless `wide`) and padded with spaces to it, then
/// one space: a column of a table, as `{:<width} ` writes it, without the
/// formatter's character-by-character padding.
pub fn push_column(out: &mut String, s: &str, width: usize, wide: bool) {
    push_padded(out, &cut(s, width, wide), width);
}

/// `s` (cut already) and the blanks that make it `width` wide, and one.
pub fn push_padded(out: &mut String, s: &str, width: usize) {
    const SPACES: &str = "                                ";
    out.push_str(s);
    let shown = if s.is_ascii() { s.len() } else { s.chars().count() };
    let mut pad = width.saturating_sub(shown) + 1;
    while pad > 0 {
        let n = pad.min(SPACES.len());
        out.push_str(&SPACES[..n]);
        pad -= n;
    }
}

/// A job name cut as LSF's job lists cut it: `*` and the end of the name,
/// which tells jobs named `run_1` ... `run_100` apart where the start
/// would not.
pub fn cut_name(s: &str, width: usize, wide: bool) -> std::borrow::Cow<'_, str> {
    let n = s.chars().count();
    if wide || n <= width {
        std::borrow::Cow::Borrowed(s)
    } else {
        let keep: String = s.chars().skip(n - width.saturating_sub(1)).collect();
        std::borrow::Cow::Owned(format!("*{keep}"))
    }
}

pub fn cut(s: &str, width: usize, wide: bool) -> std::borrow::Cow<'_, str> {
    if wide || s.len() <= width || s.chars().count() <= width {
        std::borrow::Cow::Borrowed(s)
    } else {
        let keep: String = s.chars().take(width.saturating_sub(1)).collect();
        std::borrow::Cow::Owned(format!("{keep}*"))
    }
}

/// A job as the commands name it: `123`, `123[4]`, or `123[1-5,7]` (one
/// reference per index).
pub(crate) fn job_refs(cmd: &str, word: &str) -> anyhow::Result<Vec<JobRef>> {
    let (id, indices) = allot_config::array::parse_job_ref(word)
        .map_err(|e| anyhow!("{cmd}: {word}: not a job id (column {}: {})", e.offset + 1, e.message))?;
    if indices.is_empty() {
        return Ok(vec![JobRef::job(id)]);
    }
    Ok(indices.into_iter().map(|index| JobRef { id, index }).collect())
}

/// The flags a command takes without values (its table's; any other is
/// an error), and the other words: job ids, queue or host names.
pub(crate) fn flags_and_names<'a>(cmd: &str, args: &'a [String]) -> anyhow::Result<(Vec<&'static str>, Vec<&'a str>)> {
    let table = table(cmd)?;
    let mut flags = Vec::new();
    let mut names = Vec::new();
    for a in args {
        if !a.starts_with('-') {
            names.push(a.as_str());
            continue;
        }
        // `-lw` is `-l -w`, as getopt reads it (a bare `-` is no option).
        let run = table.split(std::slice::from_ref(a)).ok().filter(|_| a != "-");
        let Some(run) = run else { bail!("{cmd}: {a}: unknown option") };
        for o in &run {
            match table.option(o) {
                Some(opt) if opt.value.is_none() => flags.push(opt.name),
                _ => bail!("{cmd}: {o}: expected a value after it"),
            }
        }
    }
    Ok((flags, names))
}

/// The option table of `cmd` (see [`allot_config::lsf_commands`]).
pub(crate) fn table(cmd: &str) -> anyhow::Result<&'static allot_config::lsf_commands::CommandDoc> {
    allot_config::lsf_commands::command(cmd).ok_or_else(|| anyhow!("{cmd}: not an allot command"))
}

/// LSF's option syntax (getopt's) for `cmd`, whose options its table
/// gives: an argument that is none of them is single-letter options run
/// together, `-aw` being `-a -w`; the first of them that takes a value
/// takes the rest of the argument, or the next argument (`-aJ name`,
/// `-uall`). An option of several letters (`-noheader`, `-json`) is only
/// ever itself. Returns the arguments with each option on its own.
pub(crate) fn split_options(cmd: &str, args: &[String]) -> anyhow::Result<Vec<String>> {
    table(cmd)?.split(args).map_err(|a| anyhow!("{cmd}: {a}: unknown option"))
}

/// badmin reconfig | qclose|qopen queue ... | hclose|hopen host ...
fn badmin(args: &[String]) -> anyhow::Result<ExitCode> {
    let usage = "badmin: expected reconfig, qclose QUEUE..., qopen QUEUE..., hclose HOST..., hopen HOST..., \
                 showconf mbd or showstatus";
    let (sub, names) = args.split_first().ok_or_else(|| anyhow!("{usage}"))?;
    match sub.as_str() {
        "reconfig" => {
            if let Some(extra) = names.first() {
                bail!("badmin reconfig: {extra}: unexpected argument");
            }
            println!("\nChecking configuration files ...\n");
            match client()?.call(Request::Reconfig)? {
                Response::Reconfigured { warnings } => {
                    if warnings.is_empty() {
                        println!("No errors found.\n");
                    } else {
                        print!("{warnings}\nWarning(s) found; the configuration is applied.\n\n");
                    }
                    println!("Reconfiguration initiated");
                    Ok(ExitCode::SUCCESS)
                }
                Response::Error(e) => {
                    eprint!("{e}{}", if e.ends_with('\n') { "" } else { "\n" });
                    Ok(ExitCode::FAILURE)
                }
                other => bail!("badmin: unexpected answer {other:?}"),
            }
        }
        "qclose" | "qopen" | "hclose" | "hopen" => {
            if names.is_empty() {
                bail!("badmin {sub}: name at least one {}", if sub.starts_with('q') { "queue" } else { "host" });
            }
            let open = sub.ends_with("open");
            let mut failed = false;
            for name in names {
                let request = if sub.starts_with('q') {
                    Request::QueueControl { queue: name.clone(), open }
                } else {
                    Request::HostControl { host: name.clone(), open }
                };
                match call(request) {
                    Ok(_) if sub.starts_with('q') => {
                        println!("Queue <{name}> is {}", if open { "opened" } else { "closed" })
                    }
                    Ok(_) => println!("{} <{name}> ...... done", if open { "Open" } else { "Close" }),
                    Err(e) => {
                        eprintln!("{e}");
                        failed = true;
                    }
                }
            }
            Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
        }
        "showconf" | "showstatus" => crate::cluster_info::badmin(sub, names),
        other => bail!("badmin: {other}: unknown subcommand; {usage}"),
    }
}

#[cfg(test)]
mod tests {
    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|x| x.to_string()).collect()
    }

    /// getopt's reading, as LSF's commands have it (issue 31, "Option
    /// syntax as LSF's").
    #[test]
    fn single_letter_options_run_together() {
        let split = |w: &[&str]| super::split_options("bjobs", &words(w));
        assert_eq!(split(&["-aw"]).expect("valid"), ["-a", "-w"]);
        assert_eq!(split(&["-noheader", "-aJ", "NAME"]).expect("valid"), ["-noheader", "-a", "-J", "NAME"]);
        assert_eq!(split(&["-uall", "-lw"]).expect("valid"), ["-u", "all", "-l", "-w"]);
        // A value is taken whole, whatever it looks like.
        assert_eq!(split(&["-o", "-aw", "-J", "-x"]).expect("valid"), ["-o", "-aw", "-J", "-x"]);
        assert_eq!(split(&["-awu", "bob", "12"]).expect("valid"), ["-a", "-w", "-u", "bob", "12"]);
        // Several-letter options are only themselves.
        assert_eq!(split(&["-json"]).expect("valid"), ["-json"]);
        let e = split(&["-ax"]).expect_err("x is no option");
        assert_eq!(e.to_string(), "bjobs: -ax: unknown option");
        assert!(split(&["-nohead"]).is_err(), "not an abbreviation");
        let given = words(&["-lw", "hostA"]);
        let (flags, names) = super::flags_and_names("bhosts", &given).expect("valid");
        assert_eq!((flags, names), (vec!["-l", "-w"], vec!["hostA"]));
        assert!(super::flags_and_names("bhosts", &words(&["-lz"])).is_err());
    }

    /// A long job name keeps its end, as LSF's lists show it: the jobs of
    /// a sweep stay apart.
    #[test]
    fn long_job_names_keep_their_end() {
        assert_eq!(super::cut_name("parameter_sweep_17", 10, false), "*_sweep_17");
        assert_eq!(super::cut_name("parameter_sweep_18", 10, false), "*_sweep_18");
        assert_eq!(super::cut_name("short", 10, false), "short");
        assert_eq!(super::cut_name("exactly_10", 10, false), "exactly_10");
        assert_eq!(super::cut_name("parameter_sweep_17", 10, true), "parameter_sweep_17", "-w: whole");
        assert_eq!(super::cut("parameter_sweep_17", 10, false), "parameter*", "other columns keep their start");
    }

    #[test]
    fn lsf_dates() {
        assert_eq!(super::lsf_time(0), "Jan  1 00:00");
        // 2026-11-21 20:55 UTC
        assert_eq!(super::lsf_time(1_795_294_500), "Nov 21 20:55");
        let mut row = String::new();
        for (text, width, wide) in
            [("12", 7, false), ("a_long_name", 7, false), ("a_long_name", 7, true), ("é", 3, false)]
        {
            super::push_column(&mut row, text, width, wide);
        }
        assert_eq!(row, format!("{:<7} {:<7} {:<7} {:<3} ", "12", "a_long*", "a_long_name", "é"));
    }
}
