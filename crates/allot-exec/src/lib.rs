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

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

pub mod cgroup;
pub mod clock;
mod files;
pub mod inherit;
pub mod interactive;
pub mod mail;
mod named;
pub mod owner;
pub mod report;
mod run;
pub mod strays;
pub mod task;
pub mod zygote;

pub use files::{JobFiles, default_output};
use named::open_output;
pub use named::{OutputFile, Patterns, expand_name, expand_patterns, has_patterns};

pub use owner::Owner;
pub use run::{PRE_EXEC_ABORT, run};

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
    /// `-E`: the pre-execution command, run before the job ([`run`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_exec: Option<String>,
    /// `-Ep`: the post-execution command, run after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_exec: Option<String>,
    /// `-B`, `-N`: its mail ([`mail`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail: Option<Box<mail::MailSpec>>,
    /// `-I`, `-Ip`, `-Is`: its standard input and output are its `bsub`'s
    /// terminal ([`interactive`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interactive: Option<allot_proto::Interactive>,
    /// `-i`: the file its standard input is read from, opened as its
    /// owner (the job's command's; its pre- and post-execution commands
    /// read nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<PathBuf>,
    /// Its submitter's umask, which its commands start with (and its
    /// output files are made with); see [`inherit`].
    #[serde(default = "default_umask")]
    pub umask: u32,
    /// `-L`: the login shell its command runs under, as `SHELL -l -c
    /// COMMAND`, so that its environment is set up as a login sets it up
    /// (the shell's profile files); `None`: `/bin/sh -c`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login_shell: Option<String>,
}

fn default_umask() -> u32 {
    inherit::DEFAULT_UMASK
}

/// How a job ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// Its pre-execution command (`-E`) failed, with `exit`: the job's
    /// command did not run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pre_exec_failed: bool,
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
        ExitReport { exit, reason: Some(reason), ended_at: now_secs(), ..ExitReport::default() }
    }
}

/// Now, in seconds since the epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
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
pub fn signal_group(pgid: i32, signal: nix::sys::signal::Signal) -> Result<(), nix::errno::Errno> {
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::plain_words;

    /// A test's own directory, removed when the test passes (a failed
    /// test's stays, to look at); the crate's modules' tests use it too.
    pub(crate) struct Scratch(PathBuf);

    impl std::ops::Deref for Scratch {
        type Target = Path;

        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            if !std::thread::panicking() {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    pub(crate) fn temp(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("allot-exec-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        Scratch(dir)
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
            pre_exec: None,
            post_exec: None,
            interactive: None,
            input: None,
            mail: None,
            umask: inherit::DEFAULT_UMASK,
            login_shell: None,
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
        let report = run(
            &s,
            |pid| {
                born_in = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
                true
            },
            || (0.0, 0),
        )
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
        assert_eq!(run(&s, |_| true, || (0.0, 0)).expect("ran").exit, 2);
        let out = std::fs::read_to_string(dir.join("out.8")).expect("output");
        let (output, report) = out.split_once('\n').expect("lines");
        assert_eq!(output, "hello");
        assert!(
            report.starts_with("\n------------------------------------------------------------\nSender: LSF System")
        );
        assert!(report.contains("\nExited with exit code 2.\n"), "{report}");
        assert!(report.ends_with("The output (if any) is above this job summary.\n\n"), "{report}");
        let started = report.lines().find_map(|l| l.strip_prefix("Started at ")).expect("a start");
        let zone = clock::local_zone();
        assert!([before, before + 1].iter().any(|&t| clock::full_in(t, &zone) == started), "{started}");
        assert_eq!(std::fs::read_to_string(dir.join("err")).expect("err"), "oops\n");
        // Without one (no `-o`, or `-N`), the output is the job's alone.
        let s = spec(&dir, 9, "echo hello");
        run(&s, |_| true, || (0.0, 0)).expect("ran");
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
        assert_eq!(run(&s, |_| true, || (0.0, 0)).expect("ran").exit, 0);
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
        let report = run(&big, |_| true, || (0.0, 0)).expect("ran");
        assert_eq!(std::fs::metadata(dir.join("big")).expect("big").len(), 1024 * 1024, "cut at the limit");
        assert_ne!(report.exit, 0, "{report:?}");
    }

    /// `-i`: the job's command reads the file; the pre-execution command
    /// reads nothing; a file that cannot be read ends the job unrun, saying
    /// why.
    #[test]
    fn the_input_file_is_the_jobs_standard_input() {
        let dir = temp("input");
        std::fs::write(dir.join("in.txt"), "line one\nline two\n").expect("input");
        let mut s = spec(&dir, 12, "wc -l");
        s.input = Some(dir.join("in.txt"));
        s.pre_exec = Some("cat".into());
        assert_eq!(run(&s, |_| true, || (0.0, 0)).expect("ran").exit, 0);
        assert_eq!(std::fs::read_to_string(dir.join("out.12")).expect("output").trim(), "2");
        let mut missing = spec(&dir, 13, "cat");
        missing.input = Some(dir.join("nowhere"));
        let report = run(&missing, |_| true, || (0.0, 0)).expect("ran");
        let why = format!("cannot read the input file {}: No such file or directory", dir.join("nowhere").display());
        assert_eq!((report.exit, report.reason), (1, Some(why)));
    }

    /// `-E` runs first, as the job would, its output in the job's file;
    /// `-Ep` after, with the job's wait status, before the report.
    #[test]
    fn pre_and_post_execution_commands_run_around_the_job() {
        let dir = temp("prepost");
        let mut s = spec(&dir, 11, "echo job; exit 3");
        s.pre_exec = Some("echo pre $LSB_JOBID".into());
        s.post_exec = Some("echo post $LSB_JOBEXIT_STAT".into());
        s.report = Some(Box::new(report::ReportHead { job: "11".into(), ..Default::default() }));
        let mut groups = Vec::new();
        let report = run(
            &s,
            |pgid| {
                groups.push(pgid);
                true
            },
            || (0.0, 0),
        )
        .expect("ran");
        assert_eq!((report.exit, report.pre_exec_failed), (3, false));
        assert_eq!(groups.len(), 3, "each ran in a process group allotd heard of: {groups:?}");
        let out = std::fs::read_to_string(dir.join("out.11")).expect("output");
        assert!(out.starts_with("pre 11\njob\npost 768\n\n----"), "{out}");
        assert!(out.contains("Exited with exit code 3."), "{out}");

        // A failing pre-execution command: the job's command never runs.
        let mut s = spec(&dir, 12, "echo never");
        s.pre_exec = Some("echo not yet; exit 4".into());
        s.post_exec = Some("echo nor this".into());
        let report = run(&s, |_| true, || (0.0, 0)).expect("ran");
        assert_eq!((report.exit, report.pre_exec_failed), (4, true));
        assert!(report.reason.as_deref().is_some_and(|r| r.contains("pre-execution command (-E) exited with 4")));
        assert_eq!(std::fs::read_to_string(dir.join("out.12")).expect("output"), "not yet\n");
    }

    /// `-B` and `-N` mail through the mail program, sendmail's way; a mail
    /// program that fails is said on the job's standard error.
    #[test]
    fn mail_goes_through_the_mail_program_at_start_and_end() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp("mail");
        let program = dir.join("fake-sendmail");
        let sink = dir.join("mails");
        std::fs::write(&program, format!("#!/bin/sh\n{{ echo \"ARGS $*\"; cat; echo; }} >> {}\n", sink.display()))
            .expect("program");
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let mut s = spec(&dir, 13, "echo out");
        let head = report::ReportHead { job: "13".into(), name: "echo out".into(), ..Default::default() };
        s.mail = Some(Box::new(mail::MailSpec {
            program: program.display().to_string(),
            to: "someone@example.org".into(),
            begin: true,
            end: true,
            head,
        }));
        run(&s, |_| true, || (0.0, 0)).expect("ran");
        let mails = std::fs::read_to_string(&sink).expect("mailed");
        assert_eq!(mails.matches("ARGS -oi -- someone@example.org\n").count(), 2, "{mails}");
        assert!(mails.contains("Subject: Job 13: <echo out> in cluster <> Started\n"), "{mails}");
        assert!(mails.contains("Subject: Job 13: <echo out> in cluster <> Done\n"), "{mails}");
        assert!(mails.find("Started").expect("start") < mails.find("Done").expect("end"));

        let mut broken = spec(&dir, 14, "true");
        broken.mail = s.mail.clone();
        if let Some(m) = broken.mail.as_mut() {
            m.program = "/no/such/mailer".into();
        }
        run(&broken, |_| true, || (0.0, 0)).expect("ran");
        let err = std::fs::read_to_string(dir.join("err")).expect("err");
        assert!(err.contains("allot: job 14: mail to someone@example.org not sent: /no/such/mailer: "), "{err}");
    }

    #[test]
    fn a_signal_to_the_group_ends_the_job() {
        let dir = temp("kill");
        let s = spec(&dir, 1, "sleep 30 & sleep 30; wait");
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || run(&s, |pgid| tx.send(pgid).is_ok(), || (0.0, 0)));
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
        let report = run(&spec(&dir, 3, "ls /no-such-directory-here"), |_| true, || (0.0, 0)).expect("ran");
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
