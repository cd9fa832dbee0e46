//! Running real jobs on a host.
//!
//! Each job is held by a small supervisor process (`allot-supervise`), so a
//! job keeps running while the daemon is down and its end is recorded when
//! the daemon is back. The supervisor reads the job's [`ExecSpec`] from
//! `jobs/<id>.spec`, runs `/bin/sh -c <command>` (or the command itself
//! when a shell would have nothing to do, see [`run`]) in a process group
//! of its own (so `bkill` signals the whole job), writes the group's id to
//! `jobs/<id>.pgid`, waits, and writes an
//! [`ExitReport`] to `jobs/<id>.exit` by an atomic rename. The daemon
//! watches for exit files.
//!
//! Output goes to the `-o`/`-e` files (`%J` is the job id, `%I` the array
//! index), appended to, or overwritten with `-oo`/`-eo`; without them, to
//! `output/<id>.out` and `.err` in the state directory.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

pub mod cgroup;
pub mod clock;
mod files;
mod named;
pub mod owner;
pub mod report;
pub mod zygote;

pub use files::{JobFiles, default_output};
pub use named::{OutputFile, Patterns, expand_name, expand_patterns, has_patterns};
use named::{open_output, open_outputs, working_directory};

pub use owner::Owner;
use owner::as_owner;

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("job {job}: {what} {path}: {source}")]
    File { job: u64, what: &'static str, path: String, source: std::io::Error },
    #[error("job {job}: cannot start {program}: {source}")]
    Spawn { job: u64, program: String, source: std::io::Error },
    #[error("job {job}: the working directory {path} does not exist (TERM_CWD_NOTEXIST)")]
    NoDirectory { job: u64, path: String },
    #[error("{0}")]
    Spec(String),
}

impl ExecError {
    /// Why the job could not run, as `bjobs -l` and `bhist -l` show it:
    /// the error without its job id, and an operating-system error as its
    /// message alone (`Permission denied`, not `... (os error 13)`).
    pub fn reason(&self) -> String {
        match self {
            ExecError::File { what, path, source, .. } => format!("{what} {path}: {}", os_message(source)),
            ExecError::Spawn { program, source, .. } => format!("cannot start {program}: {}", os_message(source)),
            ExecError::NoDirectory { path, .. } => {
                format!("the working directory {path} does not exist (TERM_CWD_NOTEXIST)")
            }
            ExecError::Spec(text) => text.clone(),
        }
    }

    /// The exit code of a job that could not run, as a shell's would be:
    /// 126 when its program may not be run, 127 when it is not there, 1
    /// for anything else before it (an output file, the directory).
    pub fn exit_code(&self) -> i32 {
        match self {
            ExecError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => 126,
            ExecError::Spawn { .. } => 127,
            _ => 1,
        }
    }
}

/// An operating-system error's message without its number.
pub fn os_message(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Everything the supervisor needs to run one job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecSpec {
    pub job: u64,
    pub command: String,
    pub cwd: PathBuf,
    /// The submission environment, then the `LSB_*` variables.
    pub env: Vec<(String, String)>,
    pub stdout: OutputFile,
    pub stderr: OutputFile,
    /// Run as this user (when the daemon runs as root): everything the
    /// job names is opened with their credentials (see [`owner`]).
    pub run_as: Option<Owner>,
    /// The working directory came from a path with dynamic patterns
    /// (`-cwd /scratch/%U/%J`): if it is missing it is made, mode 0700 and
    /// the job's owner's, as LSF makes it. A missing directory without
    /// patterns is not made: the job ends before it starts (TERM_CWD_NOTEXIST).
    #[serde(default)]
    pub create_cwd: bool,
    /// The job's cgroup v2 directory, when allotd has cgroups (see
    /// [`cgroup`]): the supervisor moves itself there before it starts the
    /// job, and measures the job from it.
    #[serde(default)]
    pub cgroup: Option<PathBuf>,
    /// `-M`, KB: the job's cgroup's memory ceiling where the memory
    /// controller reaches it (allotd also ends a job measured over it).
    #[serde(default)]
    pub memory_limit_kb: Option<u64>,
    /// Which run of the job this is (1 the first; a requeued job runs
    /// again as the next): what an agent keys the run by.
    #[serde(default)]
    pub attempt: u32,
    /// The `nice` value the job starts with (its queue's NICE); set
    /// before the job becomes its owner, so a negative one takes where
    /// allotd is root. Where it cannot be set, the job runs as it is.
    #[serde(default)]
    pub nice: i32,
    /// LSF's job report, written at the end of the output file when the
    /// job ends ([`report`]): for a job given `-o` whose report is not
    /// mailed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<Box<report::ReportHead>>,
    /// `-C -D -F -S -v`: the soft resource limits its processes start with.
    #[serde(default, skip_serializing_if = "allot_proto::ProcessLimits::is_empty")]
    pub limits: allot_proto::ProcessLimits,
}

/// How a job ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExitReport {
    /// The exit code, or 128 + the signal that ended it.
    pub exit: i32,
    /// CPU seconds, user and system, of the job and its children: of every
    /// process it started, with a cgroup; of those waited for, without.
    pub cpu_time: f64,
    /// The most memory it used, KB: its cgroup's `memory.peak` where there
    /// is one, else the largest resident set of any of its processes
    /// (getrusage's `ru_maxrss` of the waited-for children).
    #[serde(default)]
    pub max_rss_kb: u64,
    /// Why the job did not run, when it could not start (an output file
    /// its owner may not write, a program that is not there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When it ended, seconds since the epoch (set by the supervisor as
    /// it writes the report): a job that ends while allotd is down is
    /// recorded as ending then, not when allotd is back.
    #[serde(default)]
    pub ended_at: u64,
    /// The kernel ended it at its cgroup's memory ceiling (`-M`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub oom_killed: bool,
}

/// What a job's processes use now, summed over its process group.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GroupUsage {
    /// CPU seconds of the processes alive, with what the children they
    /// waited for used.
    pub cpu_time: f64,
    /// Resident memory, KB.
    pub rss_kb: u64,
}

/// The usage of each process group of `groups`, from one pass over
/// `/proc` (this is what measures jobs on a machine without cgroup v2; see
/// the daemon's notes). A group with no process left is not in the answer.
pub fn sample_groups(groups: &std::collections::BTreeSet<i32>) -> std::collections::BTreeMap<i32, GroupUsage> {
    use nix::unistd::{SysconfVar, sysconf};
    let mut out = std::collections::BTreeMap::new();
    if groups.is_empty() {
        return out;
    }
    let ticks = sysconf(SysconfVar::CLK_TCK).ok().flatten().filter(|&t| t > 0).unwrap_or(100) as f64;
    let page_kb = sysconf(SysconfVar::PAGE_SIZE).ok().flatten().filter(|&p| p > 0).unwrap_or(4096) as u64 / 1024;
    let Ok(entries) = std::fs::read_dir("/proc") else { return out };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some((pgrp, cpu_ticks, rss_pages)) = parse_stat(&stat) else { continue };
        if groups.contains(&pgrp) {
            let u: &mut GroupUsage = out.entry(pgrp).or_default();
            u.cpu_time += cpu_ticks as f64 / ticks;
            u.rss_kb += rss_pages * page_kb;
        }
    }
    out
}

/// From a `/proc/PID/stat` line: the process group, CPU ticks (utime,
/// stime, cutime, cstime) and resident pages. The command name, in
/// parentheses, may hold anything, so fields count from its last `)`.
fn parse_stat(stat: &str) -> Option<(i32, u64, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state): field n is f[n - 3].
    let num = |n: usize| f.get(n - 3).and_then(|v| v.parse::<i64>().ok());
    let pgrp = i32::try_from(num(5)?).ok()?;
    let cpu: i64 = [14, 15, 16, 17].iter().map(|&n| num(n).unwrap_or(0).max(0)).sum();
    Some((pgrp, cpu as u64, num(24)?.max(0) as u64))
}

impl ExitReport {
    /// The end, now, of a job whose command did not run (or whose end is
    /// not known): its exit code and why.
    pub fn unrun(exit: i32, reason: String) -> ExitReport {
        ExitReport { exit, cpu_time: 0.0, max_rss_kb: 0, reason: Some(reason), ended_at: now_secs(), oom_killed: false }
    }
}

/// Now, in seconds since the epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

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
fn plain_words(command: &str) -> Option<Vec<&str>> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._+,:@%=-".contains(c);
    let words: Vec<&str> = command.split([' ', '\t']).filter(|w| !w.is_empty()).collect();
    let first = words.first()?;
    let all_plain = command.chars().all(|c| c == ' ' || c == '\t' || plain(c));
    (all_plain && !SHELL_WORDS.contains(first) && !first.contains('=')).then_some(words)
}

/// Runs the job and waits for it; `started` hears its process group.
pub fn run(spec: &ExecSpec, mut started: impl FnMut(i32) -> bool) -> Result<ExitReport, ExecError> {
    let owner = spec.run_as.as_ref().filter(|_| owner::is_root());
    let cwd = as_owner(owner, || working_directory(spec))??;
    let (stdout, stderr) = open_outputs(spec)?;
    // The report goes through the output file as the job's owner opened
    // it; where it cannot be shared the job runs all the same.
    let report_to = spec.report.as_ref().filter(|_| spec.stdout.named).and_then(|_| stdout.try_clone().ok());
    let direct = plain_words(&spec.command);
    let mut cmd = match &direct {
        Some(words) => {
            let mut c = Command::new(words[0]);
            c.args(&words[1..]);
            c
        }
        None => {
            let mut c = Command::new("/bin/sh");
            c.arg("-c").arg(&spec.command);
            c
        }
    };
    cmd.env_clear().envs(spec.env.iter().map(|(k, v)| (k, v)));
    cmd.stdin(Stdio::null()).stdout(stdout).stderr(stderr);
    cmd.process_group(0);
    set_nice(&mut cmd, spec.nice);
    set_limits(&mut cmd, &spec.limits);
    match owner {
        Some(o) => become_owner(&mut cmd, o, &cwd)?,
        None => {
            cmd.current_dir(&cwd);
        }
    }
    let program = direct.as_ref().map_or("/bin/sh", |w| w[0]).to_string();
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
    let started_at = now_secs();
    let spawned = cmd.spawn();
    let status = spawned.and_then(|mut child| {
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
    let measured = in_cgroup.and_then(cgroup::read_usage);
    let oom_killed = in_cgroup.is_some_and(cgroup::oom_killed);
    if let (Some(dir), Some(home)) = (in_cgroup, &came_from) {
        cgroup::leave_job(dir, home);
    }
    let status = status.map_err(|source| ExecError::Spawn { job: spec.job, program, source })?;
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
            reason: None,
            ended_at: 0,
            oom_killed,
        },
        None => ExitReport { exit, cpu_time, max_rss_kb, reason: None, ended_at: 0, oom_killed },
    };
    if let (Some(mut file), Some(head)) = (report_to, &spec.report) {
        let run = report::RunSummary {
            code: status.code(),
            signal: status.signal(),
            cpu_time: ended.cpu_time,
            max_rss_kb: ended.max_rss_kb,
            started: started_at,
            ended: now_secs(),
        };
        let text = report::render(head, &run, &jiff::tz::TimeZone::system());
        if let Err(e) = std::io::Write::write_all(&mut file, text.as_bytes()) {
            eprintln!("allot-supervise: job {}: its report is not written: {}", spec.job, os_message(&e));
        }
    }
    Ok(ended)
}

/// Makes the job's process its owner's for good before its command runs:
/// their groups, gid and uid, and only then its working directory, entered
/// as the owner. (`Command::uid` would drop the supplementary groups, and
/// enter the directory as root.)
pub fn become_owner(cmd: &mut Command, owner: &Owner, cwd: &Path) -> Result<(), ExecError> {
    use std::os::unix::ffi::OsStrExt;
    let dir = std::ffi::CString::new(cwd.as_os_str().as_bytes()).map_err(|_| ExecError::File {
        job: 0,
        what: "cannot enter the working directory",
        path: cwd.display().to_string(),
        source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
    })?;
    let (owner, groups) = (owner.clone(), owner.gids());
    // SAFETY: the closure runs in the forked child before exec; it only
    // makes system calls (setgroups, setresgid, setresuid, chdir) on data
    // made before the fork, and allocates nothing.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            owner.become_in_child(&groups)?;
            nix::unistd::chdir(dir.as_c_str())?;
            Ok(())
        });
    }
    Ok(())
}

/// The job's process starts at `nice` (0 leaves it as it is). A value
/// the caller may not set (below the current one, unless root) is left
/// unset: the job runs at the current one.
pub fn set_nice(cmd: &mut Command, nice: i32) {
    if nice == 0 {
        return;
    }
    // SAFETY: the closure runs in the forked child before exec; it makes
    // one system call (setpriority) and allocates nothing.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            let _ = nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, nice);
            Ok(())
        });
    }
}

/// The job's process starts with `limits` as its soft resource limits
/// (each no higher than its hard limit, which stays as it is: the job may
/// raise a soft limit back up to it, as under LSF). A limit that cannot be
/// set leaves the job as it is.
pub fn set_limits(cmd: &mut Command, limits: &allot_proto::ProcessLimits) {
    use nix::sys::resource::Resource;
    let asked: Vec<(Resource, u64)> = [
        (Resource::RLIMIT_CORE, limits.core_kb),
        (Resource::RLIMIT_DATA, limits.data_kb),
        (Resource::RLIMIT_FSIZE, limits.file_kb),
        (Resource::RLIMIT_STACK, limits.stack_kb),
        (Resource::RLIMIT_AS, limits.swap_kb),
    ]
    .into_iter()
    .filter_map(|(r, kb)| kb.map(|kb| (r, kb.saturating_mul(1024))))
    .collect();
    if asked.is_empty() {
        return;
    }
    // SAFETY: the closure runs in the forked child before exec; it makes
    // system calls (getrlimit, setrlimit) on data made before the fork,
    // and allocates nothing.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            for &(resource, bytes) in &asked {
                if let Ok((_, hard)) = nix::sys::resource::getrlimit(resource) {
                    let _ = nix::sys::resource::setrlimit(resource, bytes.min(hard), hard);
                }
            }
            Ok(())
        });
    }
}

/// Sends `signal` to a job's process group.
pub fn signal_group(pgid: i32, signal: nix::sys::signal::Signal) -> Result<(), String> {
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("allot-exec-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        dir
    }

    fn spec(dir: &Path, job: u64, command: &str) -> ExecSpec {
        ExecSpec {
            job,
            command: command.into(),
            cwd: dir.to_path_buf(),
            env: vec![("LSB_JOBID".into(), job.to_string()), ("PATH".into(), "/usr/bin:/bin".into())],
            stdout: OutputFile { path: dir.join(expand_name("out.%J", job, 0)), overwrite: false, named: true },
            stderr: OutputFile { path: dir.join("err"), overwrite: true, named: true },
            run_as: None,
            create_cwd: false,
            cgroup: None,
            memory_limit_kb: None,
            attempt: 1,
            nice: 0,
            report: None,
            limits: Default::default(),
        }
    }

    /// On a machine with a writable cgroup v2 (this one: a hybrid layout
    /// whose v2 hierarchy has no controllers, so CPU only), the job is born
    /// in its cgroup, measured from it, and the cgroup is gone after, with
    /// allotd's `allot-<tag>` that it was the last job in. `allot-<tag>`
    /// went before the job started (a job ending just then removed it): it
    /// is made again. Elsewhere there is nothing to test: it says so.
    #[test]
    fn a_job_runs_in_its_own_cgroup_when_there_is_cgroup_v2() {
        let Some(cgroups) = cgroup::Cgroups::detect(&format!("test-{}", std::process::id())) else {
            eprintln!("no writable cgroup v2 here: jobs are measured from /proc");
            return;
        };
        cgroups.release();
        assert!(!cgroups.base().exists());
        let dir = temp("cgroup");
        let mut s = spec(&dir, 9, "( i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done & ) ; sleep 1.5");
        s.cgroup = Some(cgroups.job_dir(9));
        let job_dir = cgroups.job_dir(9);
        let mut born_in = String::new();
        let report = run(&s, |pid| {
            born_in = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
            true
        })
        .expect("ran");
        let line = born_in.lines().find_map(|l| l.strip_prefix("0::")).unwrap_or_default().trim();
        let line = line.trim_start_matches('/');
        assert!(!line.is_empty() && job_dir.ends_with(line), "born in its cgroup, not in {born_in}");
        // The loop left the job and was never waited for by it: only the
        // cgroup saw its CPU time.
        assert!(report.cpu_time >= 0.05, "{report:?}");
        assert!(!job_dir.exists(), "removed once the job ended");
        let own = cgroup::current().expect("a cgroup v2 process");
        assert!(!own.starts_with(cgroups.base()), "the supervisor went back: {}", own.display());
        assert!(!cgroups.base().exists(), "the last job out removes allot-<tag>");
    }

    #[test]
    fn a_job_runs_with_its_environment_output_and_exit_code() {
        let dir = temp("run");
        let files = JobFiles::new(&dir).expect("files");
        files.write_spec(&spec(&dir, 7, "echo job $LSB_JOBID in $(pwd); echo oops >&2; exit 3")).expect("spec");
        let report = files.supervise(7).expect("ran");
        assert_eq!(report.exit, 3);
        assert_eq!(files.read_exit(7), Some(report));
        assert!(files.read_pgid(7).is_some());
        let out = std::fs::read_to_string(dir.join("out.7")).expect("output");
        assert_eq!(out, format!("job 7 in {}\n", dir.display()));
        assert_eq!(std::fs::read_to_string(dir.join("err")).expect("err"), "oops\n");
        files.clean(7);
        assert_eq!(files.read_exit(7), None);
    }

    /// With a report to write, the output file ends with it, after the
    /// output; the error file has none.
    #[test]
    fn the_job_report_ends_the_output_file() {
        let dir = temp("report");
        let mut s = spec(&dir, 8, "echo hello; echo oops >&2; exit 2");
        let head = report::ReportHead { job: "8".into(), command: "echo hello".into(), ..Default::default() };
        s.report = Some(Box::new(head));
        let before = now_secs();
        assert_eq!(run(&s, |_| true).expect("ran").exit, 2);
        let out = std::fs::read_to_string(dir.join("out.8")).expect("output");
        let (output, report) = out.split_once('\n').expect("lines");
        assert_eq!(output, "hello");
        assert!(
            report.starts_with("\n------------------------------------------------------------\nSender: LSF System")
        );
        assert!(report.contains("\nExited with exit code 2.\n"), "{report}");
        assert!(report.ends_with("The output (if any) is above this job summary.\n\n"), "{report}");
        let started = report.lines().find_map(|l| l.strip_prefix("Started at ")).expect("a start");
        let zone = jiff::tz::TimeZone::system();
        assert!([before, before + 1].iter().any(|&t| clock::full_in(t, &zone) == started), "{started}");
        assert_eq!(std::fs::read_to_string(dir.join("err")).expect("err"), "oops\n");
        // Without one (no `-o`, or `-N`), the output is the job's alone.
        let s = spec(&dir, 9, "echo hello");
        run(&s, |_| true).expect("ran");
        assert_eq!(std::fs::read_to_string(dir.join("out.9")).expect("output"), "hello\n");
    }

    /// `-C -D -F -S -v` are the job's soft limits, in KB; a file written
    /// past `-F` ends the process with SIGXFSZ.
    #[test]
    fn the_jobs_processes_start_with_its_limits() {
        let dir = temp("limits");
        let mut s = spec(&dir, 6, "cat /proc/self/limits");
        s.limits = allot_proto::ProcessLimits {
            core_kb: Some(1024),
            data_kb: Some(4_194_304),
            file_kb: Some(2048),
            stack_kb: Some(4096),
            swap_kb: Some(8_388_608),
        };
        assert_eq!(run(&s, |_| true).expect("ran").exit, 0);
        let limits = std::fs::read_to_string(dir.join("out.6")).expect("limits");
        let soft = |name: &str| {
            let line = limits.lines().find(|l| l.starts_with(name)).unwrap_or_default();
            line[name.len()..].split_whitespace().next().unwrap_or_default().to_string()
        };
        assert_eq!(soft("Max core file size"), (1024 * 1024).to_string(), "{limits}");
        assert_eq!(soft("Max data size"), (4_194_304u64 * 1024).to_string());
        assert_eq!(soft("Max file size"), (2048 * 1024).to_string());
        assert_eq!(soft("Max stack size"), (4096 * 1024).to_string());
        assert_eq!(soft("Max address space"), (8_388_608u64 * 1024).to_string());
        let mut big = spec(&dir, 7, "head -c 4000000 /dev/zero > big");
        big.limits.file_kb = Some(1024);
        let report = run(&big, |_| true).expect("ran");
        assert_eq!(std::fs::metadata(dir.join("big")).expect("big").len(), 1024 * 1024, "cut at the limit");
        assert_ne!(report.exit, 0, "{report:?}");
    }

    #[test]
    fn a_signal_to_the_group_ends_the_job() {
        let dir = temp("kill");
        let s = spec(&dir, 1, "sleep 30 & sleep 30; wait");
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || run(&s, |pgid| tx.send(pgid).is_ok()));
        let pgid = rx.recv().expect("started");
        std::thread::sleep(std::time::Duration::from_millis(100));
        signal_group(pgid, nix::sys::signal::Signal::SIGTERM).expect("signal");
        let report = waiter.join().expect("thread").expect("ran");
        assert_eq!(report.exit, 128 + 15);
    }

    #[test]
    fn a_second_supervisor_does_not_run_the_job_again() {
        let dir = temp("twice");
        let files = JobFiles::new(&dir).expect("files");
        files.write_spec(&spec(&dir, 5, "echo ran >> count")).expect("spec");
        let held = files.try_lock(5).expect("lock").expect("free");
        assert!(files.supervise(5).is_err(), "the lock is held");
        drop(held);
        files.supervise(5).expect("runs");
        assert_eq!(files.supervise(5).expect("reports").exit, 0, "already done: not run again");
        assert_eq!(std::fs::read_to_string(dir.join("count")).expect("count"), "ran\n");
    }

    #[test]
    fn a_missing_working_directory_ends_the_job_before_it_starts() {
        let dir = temp("nocwd");
        let files = JobFiles::new(&dir).expect("files");
        let mut s = spec(&dir, 2, "pwd");
        s.cwd = dir.join("does-not-exist");
        files.write_spec(&s).expect("spec");
        let report = files.supervise(2).expect("reported");
        let why = format!("the working directory {} does not exist (TERM_CWD_NOTEXIST)", s.cwd.display());
        assert_eq!((report.exit, report.reason.as_deref()), (1, Some(why.as_str())));
        let err = std::fs::read_to_string(dir.join("err")).expect("err");
        assert_eq!(err, format!("allot: job 2: {why}\n"));
        assert!(!dir.join("out.2").exists(), "the job did not run");
        assert!(!s.cwd.exists(), "a path without patterns is not made");
    }

    #[test]
    fn a_working_directory_with_patterns_is_made_0700() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp("mkcwd");
        let files = JobFiles::new(&dir).expect("files");
        let mut s = spec(&dir, 3, "pwd");
        s.cwd = dir.join("scratch/alice/3_0");
        s.create_cwd = true;
        files.write_spec(&s).expect("spec");
        assert_eq!(files.supervise(3).expect("reported").exit, 0);
        assert_eq!(std::fs::read_to_string(dir.join("out.3")).expect("out"), format!("{}\n", s.cwd.display()));
        for d in [dir.join("scratch"), dir.join("scratch/alice"), s.cwd.clone()] {
            assert_eq!(std::fs::metadata(&d).expect("made").permissions().mode() & 0o777, 0o700, "{}", d.display());
        }
    }

    #[test]
    fn output_and_error_to_one_file_keep_both() {
        let dir = temp("onefile");
        let files = JobFiles::new(&dir).expect("files");
        let mut s = spec(&dir, 4, "echo out; echo err >&2; echo out2");
        s.stdout = OutputFile { path: dir.join("both"), overwrite: true, named: true };
        s.stderr = s.stdout.clone();
        files.write_spec(&s).expect("spec");
        assert_eq!(files.supervise(4).expect("reported").exit, 0);
        assert_eq!(std::fs::read_to_string(dir.join("both")).expect("both"), "out\nerr\nout2\n");
    }

    #[test]
    fn proc_stat_lines_parse_whatever_the_command_name() {
        let line = "4242 (my (odd) job) S 1 4240 4240 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 1 0 99 1000000 256 x";
        assert_eq!(parse_stat(line), Some((4240, 210, 256)));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S 1"), None);
    }

    #[test]
    fn a_group_is_measured_while_it_runs() {
        use std::collections::BTreeSet;
        let mut child = Command::new("/bin/sh")
            .args(["-c", "x=0; while [ $x -lt 200000 ]; do x=$((x+1)); done; sleep 5"])
            .process_group(0)
            .spawn()
            .expect("spawns");
        let pgid = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let usage = loop {
            let u = sample_groups(&BTreeSet::from([pgid])).get(&pgid).copied().unwrap_or_default();
            if u.cpu_time > 0.05 || std::time::Instant::now() > deadline {
                break u;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let _ = child.kill();
        let _ = child.wait();
        assert!(usage.cpu_time > 0.05, "{usage:?}");
        assert!(usage.rss_kb > 0, "{usage:?}");
        assert!(sample_groups(&BTreeSet::from([pgid])).is_empty(), "a group with nothing left is not measured");
    }

    #[test]
    fn the_exit_report_has_the_largest_resident_set() {
        let dir = temp("maxrss");
        let files = JobFiles::new(&dir).expect("files");
        files.write_spec(&spec(&dir, 8, "true")).expect("spec");
        let report = files.supervise(8).expect("reported");
        assert!(report.max_rss_kb > 0, "{report:?}");
    }

    #[test]
    fn cwd_patterns_expand_longest_first() {
        let p = Patterns { job: 12, index: 3, user: "alice", project: "climate", group: "g1", host: "hostA" };
        assert_eq!(expand_patterns("/s/%U/%P/%G/%H/%J_%I", &p), "/s/alice/climate/g1/hostA/12_3");
        assert_eq!(expand_patterns("/s/%JG/%EJ.%EI/%Z%", &p), "/s//12.3/%Z%", "unknown patterns stay");
        assert!(has_patterns("/scratch/%U") && !has_patterns("/scratch/100%"));
    }

    #[test]
    fn only_commands_with_nothing_for_a_shell_to_do_skip_it() {
        assert_eq!(plain_words("/bin/true"), Some(vec!["/bin/true"]));
        assert_eq!(plain_words("  sleep   1 "), Some(vec!["sleep", "1"]));
        assert_eq!(
            plain_words("./a.out -n 4 --in=x.dat out_%J"),
            Some(vec!["./a.out", "-n", "4", "--in=x.dat", "out_%J"])
        );
        for shell in [
            "echo $HOME",
            "exit 3",
            "true",
            "cd /tmp",
            "A=1 prog",
            "ls *.c",
            "prog > out",
            "a; b",
            "a && b",
            "prog 'quoted arg'",
            "prog ~/x",
            "prog\nnext",
            "",
        ] {
            assert_eq!(plain_words(shell), None, "{shell:?} needs the shell");
        }
    }

    #[test]
    fn a_plain_command_runs_with_its_arguments_and_exit_code() {
        let dir = temp("direct");
        let report = run(&spec(&dir, 3, "ls /no-such-directory-here"), |_| true).expect("ran");
        assert_eq!(report.exit, 2, "ls's own exit code for a missing operand");
        assert!(std::fs::read_to_string(dir.join("err")).expect("err").contains("no-such-directory-here"));
    }

    #[test]
    fn a_program_that_does_not_exist_ends_the_job_with_127() {
        let dir = temp("noprog");
        let files = JobFiles::new(&dir).expect("files");
        files.write_spec(&spec(&dir, 4, "no-such-program-anywhere --flag")).expect("spec");
        assert_eq!(files.supervise(4).expect("reported").exit, 127);
        let err = std::fs::read_to_string(dir.join("err")).expect("err");
        assert!(err.starts_with("allot: job 4: cannot start no-such-program-anywhere: "), "{err}");
    }
}
