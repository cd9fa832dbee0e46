//! Running a job on its host: its pre-execution command, the job, its
//! post-execution command, and the report at the end of its output file.

use std::fs::File;
use std::io::Write as _;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use crate::interactive;
use crate::named::{open_outputs, working_directory};
use crate::owner::{self, Owner, as_owner};
use crate::{
    ExecError, ExecSpec, ExitReport, become_owner, cgroup, now_secs, os_message, report, set_limits, set_nice,
};

/// Shell builtins and reserved words: a command starting with one of these
/// needs the shell even when it has no special characters.
const SHELL_WORDS: &[&str] = &[
    ".", ":", "[", "alias", "bg", "break", "case", "cd", "command", "continue", "do", "done", "echo", "elif", "else",
    "esac", "eval", "exec", "exit", "export", "false", "fc", "fg", "fi", "for", "function", "getopts", "hash", "if",
    "in", "jobs", "kill", "local", "newgrp", "printf", "pwd", "read", "readonly", "return", "select", "set", "shift",
    "source", "test", "then", "time", "times", "trap", "true", "type", "ulimit", "umask", "unalias", "unset", "until",
    "wait", "while",
];

/// The words of a command that a shell would run exactly as they are, with
/// nothing to expand, quote, redirect or interpret: the job is then run
/// without the shell, which is one process start less per job (most of a
/// short job's cost). Anything else, including a command starting with a
/// builtin or an assignment, goes to `/bin/sh -c` as LSF runs it.
pub(crate) fn plain_words(command: &str) -> Option<Vec<&str>> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._+,:@%=-".contains(c);
    let words: Vec<&str> = command.split([' ', '\t']).filter(|w| !w.is_empty()).collect();
    let first = words.first()?;
    let all_plain = command.chars().all(|c| c == ' ' || c == '\t' || plain(c));
    (all_plain && !SHELL_WORDS.contains(first) && !first.contains('=')).then_some(words)
}

/// A command of the job's (the job itself, or its pre- or post-execution
/// command) as the job runs: its environment, standard output and error,
/// a process group of its own, its nice value and limits, as its owner in
/// its working directory.
///
/// With `input` (`-i`, the job's own command), its standard input is that
/// file. With `terminal` (an interactive job's own command), its standard input
/// is the terminal, and so is each of its outputs that no `-o`/`-e` names
/// (those go to their files, as LSF sends them); on a pseudo-terminal it
/// leads a session of its own whose controlling terminal that is.
fn job_command(
    spec: &ExecSpec,
    command: &str,
    extra_env: &[(&str, String)],
    (stdout, stderr): (&File, &File),
    owner: Option<&Owner>,
    cwd: &Path,
    (terminal, input): (Option<&interactive::Terminal>, Option<&File>),
) -> Result<(Command, String), ExecError> {
    // Each output named by its own path when it cannot be shared.
    let share = |f: &File, path: &Path| {
        f.try_clone().map_err(|source| ExecError::File {
            job: spec.job,
            what: "cannot share",
            path: path.display().to_string(),
            source,
        })
    };
    // A login shell runs every command itself (its profile first).
    let direct = plain_words(command).filter(|_| spec.login_shell.is_none());
    let mut cmd = match &direct {
        Some(words) => {
            let mut c = Command::new(words[0]);
            c.args(&words[1..]);
            c
        }
        None => {
            let mut c = Command::new(spec.login_shell.as_deref().unwrap_or("/bin/sh"));
            if spec.login_shell.is_some() {
                c.arg("-l");
            }
            c.arg("-c").arg(command);
            c
        }
    };
    cmd.env_clear().envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    cmd.envs(extra_env.iter().map(|(k, v)| (*k, v.as_str())));
    match terminal {
        None => {
            let input = match input {
                Some(f) => f
                    .try_clone()
                    .map(Stdio::from)
                    .map_err(|e| ExecError::Spec(format!("cannot share its input file: {e}")))?,
                None => Stdio::null(),
            };
            cmd.stdin(input).stdout(share(stdout, &spec.stdout.path)?).stderr(share(stderr, &spec.stderr.path)?);
            lead_session(&mut cmd);
        }
        Some(t) => {
            let pass = |fd: &std::os::fd::OwnedFd| {
                fd.try_clone().map(Stdio::from).map_err(|e| ExecError::Spec(format!("cannot share its terminal: {e}")))
            };
            cmd.stdin(pass(&t.stdin)?);
            cmd.stdout(if spec.stdout.named { share(stdout, &spec.stdout.path)?.into() } else { pass(&t.stdout)? });
            cmd.stderr(if spec.stderr.named { share(stderr, &spec.stderr.path)?.into() } else { pass(&t.stderr)? });
            if t.pty {
                // SAFETY: the closure runs in the forked child before
                // exec; it makes two system calls and allocates nothing.
                #[allow(unsafe_code)]
                unsafe {
                    cmd.pre_exec(interactive::take_terminal);
                }
            } else {
                cmd.process_group(0);
            }
        }
    }
    set_nice(&mut cmd, spec.nice);
    set_limits(&mut cmd, &spec.limits);
    match owner {
        Some(o) => become_owner(&mut cmd, o, cwd)?,
        None => {
            cmd.current_dir(cwd);
        }
    }
    crate::inherit::start_clean(&mut cmd, spec.umask);
    let shell = spec.login_shell.as_deref().unwrap_or("/bin/sh");
    let program = direct.as_ref().map_or(shell, |w| w[0]).to_string();
    Ok((cmd, program))
}

/// The job's command leads a session of its own (and so a process group,
/// whose id is its process id, which `bkill` signals): where the job has
/// no cgroup, what is left of it at its end is found by its session too
/// ([`crate::strays`]), including what left its process group.
fn lead_session(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec; it makes
    // one system call (setsid) and allocates nothing.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(|| nix::unistd::setsid().map(drop).map_err(std::io::Error::from));
    }
}

/// Starts `cmd` and waits for it; `started` hears its process group (and
/// is asked again every second until it says it heard).
fn spawn_and_wait(
    job: u64,
    (mut cmd, program): (Command, String),
    started: &mut impl FnMut(i32) -> bool,
) -> Result<ExitStatus, ExecError> {
    let status = cmd.spawn().and_then(|mut child| {
        let pgid = child.id() as i32;
        if started(pgid) {
            return child.wait();
        }
        // Not recorded (a full disk): allotd could not signal the job, so
        // it is tried again every second while the job runs.
        loop {
            for _ in 0..4 {
                if let Some(status) = child.try_wait()? {
                    return Ok(status);
                }
                std::thread::sleep(std::time::Duration::from_millis(250));
            }
            if started(pgid) {
                return child.wait();
            }
        }
    });
    status.map_err(|source| ExecError::Spawn { job, program, source })
}

/// `-E`'s exit code that ends the job instead of sending it back to
/// pending (LSF's: "If the pre-execution command exits with value 99, the
/// job exits without pending").
pub const PRE_EXEC_ABORT: i32 = 99;

/// Runs the job and waits for it; `started` hears its process group.
///
/// With `-E`, the pre-execution command runs first, as the job would
/// (same owner, environment, working directory and output files, LSF's
/// rule); if it fails the job's command does not run and the report says
/// so ([`ExitReport::pre_exec_failed`]). With `-Ep`, the post-execution
/// command runs after the job, whatever its end, with `LSB_JOBEXIT_STAT`
/// (the job's wait status); the job's end is reported once it is done, as
/// LSF reports it with JOB_INCLUDE_POSTPROC=Y (the job keeps its slots
/// meanwhile), and its output goes to the job's output files, where the
/// job's user looks (LSF mails it with LSB_POSTEXEC_SEND_MAIL; allot sends
/// no mail). Its exit code changes nothing of the job's.
pub fn run(
    spec: &ExecSpec,
    mut started: impl FnMut(i32) -> bool,
    other_hosts: impl Fn() -> (f64, u64),
) -> Result<ExitReport, ExecError> {
    let owner = spec.run_as.as_ref().filter(|_| owner::started_root());
    // One switch to the owner for the working directory and the files
    // the user named, where every file is one (two switches cost seven
    // system calls more a job).
    let (cwd, (stdout, stderr)) = match crate::named::both_named(spec) {
        true => {
            // The files only once the directory is there, as before.
            let opened =
                as_owner(owner, || working_directory(spec).map(|cwd| (cwd, open_outputs(spec, owner.is_some()))))??;
            (opened.0, opened.1?)
        }
        false => (as_owner(owner, || working_directory(spec))??, open_outputs(spec, false)?),
    };
    let outputs = (&stdout, &stderr);
    // Into the job's cgroup first, so the job is born in it; back out once
    // it ended, so the cgroup can go.
    // allotd's own cgroup, where allotd started the supervisor: the job's
    // cgroup is `<allotd's>/allot-<tag>/job.<id>` (see `cgroup`).
    let came_from = spec.cgroup.as_deref().and_then(Path::parent).and_then(Path::parent).map(Path::to_path_buf);
    let in_cgroup = spec.cgroup.as_deref().filter(|dir| match cgroup::enter_job(dir) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("allot-supervise: job {}: not measured by cgroup {}: {e}", spec.job, dir.display());
            false
        }
    });
    if let (Some(dir), Some(kb)) = (in_cgroup, spec.memory_limit_kb) {
        cgroup::limit_memory(dir, kb);
    }
    // Nothing of the job outlives it: what is left in its cgroup, or
    // (without one) in the session its command led, is killed as it ends.
    let session = std::cell::Cell::new(0);
    let leave = || match (in_cgroup, &came_from) {
        (Some(dir), Some(home)) => cgroup::leave_job(dir, home),
        _ => crate::strays::kill_session(session.get()),
    };
    let mut started = |pgid: i32| {
        session.set(pgid);
        started(pgid)
    };
    if let Some(pre) = &spec.pre_exec {
        let ran = job_command(spec, pre, &[], outputs, owner, &cwd, (None, None))
            .and_then(|cmd| spawn_and_wait(spec.job, cmd, &mut started));
        let failed = match ran {
            Ok(status) if status.success() => None,
            Ok(status) => Some(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))),
            Err(e) => Some(e.exit_code()),
        };
        if let Some(code) = failed {
            leave();
            let mut report = ExitReport::unrun(code, format!("its pre-execution command (-E) exited with {code}"));
            report.pre_exec_failed = true;
            return Ok(report);
        }
    }
    // Mail goes as the job's owner; one not sent is said on its standard
    // error, never dropped unsaid.
    let mail = |message: String| {
        let Some(m) = &spec.mail else { return };
        let sent = crate::mail::send(m, &message, |cmd| {
            crate::inherit::start_clean(cmd, spec.umask);
            match owner {
                Some(o) => become_owner(cmd, o, &cwd),
                None => Ok(()),
            }
        });
        if let Err(why) = sent {
            let _ = writeln!(&stderr, "allot: job {}: mail to {} not sent: {why}", spec.job, m.to);
        }
    };
    let zone = crate::clock::process_zone();
    let started_at = now_secs();
    if let Some(m) = spec.mail.as_ref().filter(|m| m.begin) {
        mail(crate::mail::begin_message(m, started_at, &zone));
    }
    // An interactive job's terminal, from its bsub; the supervisor's
    // copies close once the job has its own, so bsub sees the end of its
    // output when the job's processes are done with it.
    let terminal = match spec.interactive.as_ref().map(|asked| interactive::reach(asked, owner)).transpose() {
        Ok(t) => t,
        Err(why) => {
            leave();
            return Ok(ExitReport::unrun(1, why));
        }
    };
    // `-i`: read as the owner, who must be able to.
    let input = match &spec.input {
        Some(path) => match as_owner(owner, || crate::named::open_input(path)) {
            Ok(Ok(f)) => Some(f),
            Ok(Err(e)) => {
                leave();
                let why = format!("cannot read the input file {}: {}", path.display(), os_message(&e));
                return Ok(ExitReport::unrun(1, why));
            }
            Err(e) => {
                leave();
                return Err(e);
            }
        },
        None => None,
    };
    let status = job_command(spec, &spec.command, &[], outputs, owner, &cwd, (terminal.as_ref(), input.as_ref()))
        .and_then(|cmd| spawn_and_wait(spec.job, cmd, &mut started));
    drop(terminal);
    let measured = in_cgroup.and_then(cgroup::read_usage);
    // `memory.events` is there only where `memory.current` is.
    let oom_killed = measured.is_some_and(|m| m.memory_kb.is_some()) && in_cgroup.is_some_and(cgroup::oom_killed);
    let status = match status {
        Ok(status) => status,
        Err(e) => {
            leave();
            return Err(e);
        }
    };
    let exit = status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).ok();
    let cpu_time = usage.map_or(0.0, |u| {
        let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
        secs(u.user_time()) + secs(u.system_time())
    });
    // Linux gives ru_maxrss in KB.
    let max_rss_kb = usage.map_or(0, |u| u.max_rss().max(0) as u64);
    let ended = match measured {
        Some(m) => ExitReport {
            exit,
            cpu_time: m.cpu_time.max(cpu_time),
            max_rss_kb: m.peak_kb.unwrap_or(max_rss_kb).max(max_rss_kb),
            ..ExitReport::default()
        },
        None => ExitReport { exit, cpu_time, max_rss_kb, ..ExitReport::default() },
    };
    let ended = ExitReport { oom_killed, ..ended };
    let ended_at = now_secs();
    leave();
    // Its post-execution command runs once nothing of the job is left (as
    // LSF's does), outside the job's cgroup; what it leaves behind is
    // killed as the job's was.
    if let Some(post) = &spec.post_exec {
        let status_env = [("LSB_JOBEXIT_STAT", status.into_raw().to_string())];
        let ran = job_command(spec, post, &status_env, outputs, owner, &cwd, (None, None))
            .and_then(|cmd| spawn_and_wait(spec.job, cmd, &mut started));
        crate::strays::kill_session(session.get());
        if let Err(e) = ran {
            let _ = writeln!(&stderr, "allot: job {}: {}", spec.job, e.reason());
        }
    }
    // The report and the mail tell the job's whole use: its other hosts'
    // too, as allotd last told this host (`JobFiles::write_other_hosts`).
    let (other_cpu, other_kb) = other_hosts();
    let run = report::RunSummary {
        code: status.code(),
        signal: status.signal(),
        cpu_time: ((ended.cpu_time + other_cpu) * 100.0).round() / 100.0,
        max_rss_kb: ended.max_rss_kb + other_kb,
        started: started_at,
        ended: ended_at,
    };
    if let Some(m) = spec.mail.as_ref().filter(|m| m.end) {
        mail(crate::mail::end_message(m, &run, &zone));
    }
    // The report goes through the output file as the job's owner opened
    // it.
    if let Some(head) = spec.report.as_ref().filter(|_| spec.stdout.named) {
        let text = report::render(head, &run, &zone);
        if let Err(e) = (&stdout).write_all(text.as_bytes()) {
            eprintln!("allot-supervise: job {}: its report is not written: {}", spec.job, os_message(&e));
        }
    }
    Ok(ended)
}
