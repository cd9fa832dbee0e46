//! Resizable jobs on allotd (spec 004, "Job Allocations that Grow and
//! Shrink"): the grows the engine's pass makes, `bresize release` and
//! `bresize cancel`, and the job's resize notification command.
//!
//! The notification command is the job's `bsub -rnc`, else its
//! application profile's RESIZE_NOTIFY_CMD. It runs as the job's owner
//! (never root), in the job's working directory, with the job's
//! environment and `LSB_RESIZE_EVENT` (`grow` or `shrink`),
//! `LSB_RESIZE_HOSTS` (`hostA 1 hostB 2`: what is added or released),
//! `LSB_RESIZE_NOTIFY_OK` (0) and `LSB_RESIZE_NOTIFY_FAIL` (1). It runs
//! beside allotd, not in its way: each tick looks whether it ended. Exit
//! 0 is success; anything else, or still running after
//! [`NOTIFY_TIMEOUT`] (its process group is killed), is failure: a grow's
//! slots go back (`GrowFailed`, the request tried again a cycle later), a
//! release does not happen ("If the shrink request fails, LSF does not
//! update the job allocation"). Without a command, a release happens at
//! once, and so does a release with `-rnc`.
//!
//! Without agents it runs on allotd's host; with agents (`[cluster]`) on
//! the job's first execution host, as a task of the job's run there (as
//! `blaunch`'s are, its owner looked up on that host), its end reported
//! back to allotd ([`NOTIFY_ORIGIN`]); one still running at the timeout
//! counts as failed there too (the job's tasks end with its run).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use allot_engine::{JobId, Time};
use allot_proto::{JobRef, JobStatus, ResizeAction, Response};
use allot_store::Record;

use crate::daemon_job::JobPaths;
use crate::serve::{Caller, keep, may_act};
use crate::state::State;

/// How long a notification command may run.
pub const NOTIFY_TIMEOUT: Duration = Duration::from_secs(60);

/// The `origin` of a notification command's task on an agent: no host's
/// name, so its end comes to allotd, not to a `blaunch`.
pub const NOTIFY_ORIGIN: &str = "";

/// Tags of notification tasks on agents.
static NEXT_TAG: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// What a notification command is told of.
pub(crate) enum Change {
    Grow(Vec<(String, u32)>),
    Shrink { release: Vec<(String, Option<u32>)>, cancel: bool },
}

/// A notification command running (`None`: it could not start, which
/// the next look tells as a failure), here or as a task on an agent's
/// host (its host and tag, and its exit once heard).
pub(crate) struct Notifying {
    job: JobId,
    change: Change,
    child: Option<Child>,
    remote: Option<(String, u64, Option<i32>)>,
    until: Instant,
}

/// The job's notification command, if it has one.
fn command_of(state: &State, job: JobId) -> Option<String> {
    let j = state.book.jobs.get(&job)?;
    j.record.extras().resize_notify.clone().or_else(|| state.resize_notify.get(j.record.spec.app.as_deref()?).cloned())
}

/// Starts the job's notification command for `change` (`command`, when
/// the request names one for this change: `bresize release -rnc`);
/// `false` when it has none to run (or cannot be run here), the change
/// then standing.
pub(crate) fn notify(state: &mut State, job: JobId, change: Change, command: Option<String>) -> bool {
    let Some(cmd) = command.or_else(|| command_of(state, job)) else { return false };
    let (event, hosts) = match &change {
        Change::Grow(alloc) => ("grow", alloc.iter().map(|(h, n)| format!("{h} {n}")).collect::<Vec<_>>()),
        Change::Shrink { release, .. } => {
            let on = |h: &str| state.book.jobs.get(&job).and_then(|j| j.alloc.iter().find(|a| a.0 == h).map(|a| a.1));
            ("shrink", release.iter().map(|(h, n)| format!("{h} {}", n.or_else(|| on(h)).unwrap_or(0))).collect())
        }
    };
    let until = state.now + NOTIFY_TIMEOUT;
    if state.cluster.is_some() {
        let remote = send_task(state, job, &cmd, event, &hosts.join(" "));
        state.notifying.push(Notifying { job, change, child: None, remote, until });
        return true;
    }
    let child = spawn(state, job, &cmd, event, &hosts.join(" "))
        .map_err(|e| eprintln!("allotd: job {job}: its resize notification command cannot start: {e}"))
        .ok();
    state.notifying.push(Notifying { job, change, child, remote: None, until });
    true
}

/// The command as a task of the job's run on its first execution host
/// (with agents): its host and tag, `None` when it cannot be sent.
fn send_task(state: &mut State, job: JobId, cmd: &str, event: &str, hosts: &str) -> Option<(String, u64, Option<i32>)> {
    let j = state.book.jobs.get(&job)?;
    let (first, attempt, user) = (j.alloc.first()?.0.clone(), j.attempt, j.record.spec.user.clone());
    let mut spec = crate::running::exec_spec(state, job, &j.alloc, None)?;
    spec.command = cmd.to_string();
    spec.cwd = j.cwd();
    for (k, v) in [
        ("LSB_RESIZE_EVENT", event),
        ("LSB_RESIZE_HOSTS", hosts),
        ("LSB_RESIZE_NOTIFY_OK", "0"),
        ("LSB_RESIZE_NOTIFY_FAIL", "1"),
    ] {
        spec.env.push((k.to_string(), v.to_string()));
    }
    let tag = NEXT_TAG.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let task = allot_agent::wire::ToAgent::Task {
        origin: NOTIFY_ORIGIN.to_string(),
        tag,
        index: 0,
        job: job.0,
        attempt,
        user,
        spec: Box::new(spec),
    };
    let sent = state.cluster.as_ref().is_some_and(|c| c.send(&first, task));
    if !sent {
        eprintln!("allotd: job {job}: its resize notification command cannot reach host {first}");
        return None;
    }
    Some((first, tag, None))
}

/// A notification task on `host` ended with `exit`.
pub(crate) fn remote_ended(state: &mut State, host: &str, tag: u64, exit: i32) {
    let mine = |n: &&mut Notifying| n.remote.as_ref().is_some_and(|r| r.0 == host && r.1 == tag);
    if let Some(r) = state.notifying.iter_mut().find(mine).and_then(|n| n.remote.as_mut()) {
        r.2 = Some(exit);
    }
}

/// Why a resize notification command could not start here.
#[derive(Debug, thiserror::Error)]
enum NotifyError {
    #[error("no such job")]
    NoJob,
    #[error("user `{0}` does not exist on this host")]
    NoAccount(String),
    #[error("{}", .0.reason())]
    Owner(allot_exec::ExecError),
    #[error("{}", allot_exec::os_message(.0))]
    Spawn(std::io::Error),
}

/// The command as the job's owner, in its working directory.
fn spawn(state: &mut State, job: JobId, cmd: &str, event: &str, hosts: &str) -> Result<Child, NotifyError> {
    let user = state.book.jobs.get(&job).ok_or(NotifyError::NoJob)?.record.spec.user.clone();
    let account = state.accounts.lookup(&user);
    let j = state.book.jobs.get(&job).ok_or(NotifyError::NoJob)?;
    let spec = crate::running::exec_spec(state, job, &j.alloc, account.clone()).ok_or(NotifyError::NoJob)?;
    let mut c = Command::new("/bin/sh");
    c.arg("-c").arg(cmd).env_clear().envs(spec.env.iter().map(|(k, v)| (k, v)));
    c.env("LSB_RESIZE_EVENT", event)
        .env("LSB_RESIZE_HOSTS", hosts)
        .env("LSB_RESIZE_NOTIFY_OK", "0")
        .env("LSB_RESIZE_NOTIFY_FAIL", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let cwd = j.cwd();
    if allot_exec::owner::is_root() {
        let owner = account.ok_or(NotifyError::NoAccount(user))?.owner;
        allot_exec::become_owner(&mut c, &owner, &cwd).map_err(NotifyError::Owner)?;
    } else {
        c.current_dir(&cwd);
    }
    c.spawn().map_err(NotifyError::Spawn)
}

/// The notification commands that ended (or ran out of time): the
/// records their outcomes make.
pub(crate) fn poll(state: &mut State) -> Vec<Record> {
    let mut out = Vec::new();
    let now = state.now;
    let mut still = Vec::with_capacity(state.notifying.len());
    for mut n in std::mem::take(&mut state.notifying) {
        let waited = n.child.as_mut().map(Child::try_wait);
        let ok = match (waited, &n.remote) {
            (None, Some((_, _, Some(exit)))) => *exit == 0,
            (None, Some(_)) if now < n.until => {
                still.push(n);
                continue;
            }
            (None, _) => false,
            (Some(Ok(Some(status))), _) => status.code() == Some(0),
            (Some(Ok(None)), _) if now < n.until => {
                still.push(n);
                continue;
            }
            (Some(Ok(None) | Err(_)), _) => {
                if let Some(child) = n.child.as_mut() {
                    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
                    let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
                    let _ = child.wait();
                }
                false
            }
        };
        let running = state.book.jobs.get(&n.job).is_some_and(|j| j.status.unfinished() && !j.alloc.is_empty());
        match (n.change, ok, running) {
            (_, _, false) => {}
            (Change::Grow(_), true, _) => {}
            (Change::Grow(alloc), false, true) => {
                eprintln!("allotd: job {}: its resize notification command failed; the grow is given back", n.job);
                out.push(Record::GrowFailed { job: n.job, alloc });
            }
            (Change::Shrink { release, cancel }, true, true) => {
                out.push(Record::Shrunk { job: n.job, release, cancel })
            }
            (Change::Shrink { .. }, false, true) => {
                eprintln!("allotd: job {}: its resize notification command failed; nothing is released", n.job);
            }
        }
    }
    state.notifying = still;
    out
}

/// `bresize release` and `bresize cancel`.
pub(crate) fn request(
    state: &mut State,
    caller: &Caller,
    r: JobRef,
    action: ResizeAction,
    t: Time,
    records: &mut Vec<Record>,
) -> Response {
    let outcome = (|| {
        let job = match state.book.resolve(r)[..] {
            [id] => id,
            [] => return Err(format!("Job <{r}>: No matching job found")),
            _ => return Err(format!("Job <{r}>: a job array; name one element, as {r}[1]")),
        };
        let j = state.book.jobs.get(&job).ok_or_else(|| format!("Job <{r}>: No matching job found"))?;
        if !may_act(state, caller, &j.record.spec.user) {
            return Err(format!("Job <{r}>: User permission denied"));
        }
        if !matches!(j.status, JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp | JobStatus::Unkwn) {
            return Err(format!("Job <{r}>: Job is not running"));
        }
        // One resize at a time: a release waits for the job's notification
        // command (so none can be started over and over meanwhile).
        if state.notifying.iter().any(|n| n.job == job) {
            return Err(format!("Job <{r}>: its resize notification command is still running; try again when it ends"));
        }
        match action {
            ResizeAction::Cancel => keep(state, t, records, Record::ResizeCancelled { job }).map_err(|e| e.reason()),
            ResizeAction::Release { hosts, cancel, notify: run, command } => {
                let release = allot_store::release_slots(&state.engine, job, &hosts)
                    .map_err(|e| format!("Job <{r}>: {}", e.reason()))?;
                state.engine.check_shrink(job, &release, cancel).map_err(|e| format!("Job <{r}>: {e}"))?;
                if run && notify(state, job, Change::Shrink { release: hosts.clone(), cancel }, command) {
                    return Ok(());
                }
                keep(state, t, records, Record::Shrunk { job, release: hosts, cancel }).map_err(|e| e.reason())
            }
        }
    })();
    Response::Each(vec![(r, outcome.map_err(|e| e.to_string()))])
}
