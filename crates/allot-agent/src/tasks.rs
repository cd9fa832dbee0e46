//! `blaunch` on an agent's host: the local socket a job's `blaunch` asks
//! on (its caller known by the socket's peer credentials), and the tasks
//! this host runs for a job's `blaunch` anywhere in its allocation.
//!
//! A request goes to allotd, which checks it against the job's allocation
//! and sends each task to its host's agent; a task's output and end come
//! back the same way to the `blaunch` that asked, which writes the output
//! as its own (so it lands in the job's output) and exits with the first
//! failing task's code. A task runs as the job's owner, in the job's
//! environment, in a process group of its own that this agent records in
//! `tasks/` (a restarted agent still ends it with its job); it ends when
//! the job's run does ([`crate::wire::ToAgent::EndTasks`]). Its standard
//! input is empty, as with `blaunch -n`.
//!
//! Where the agent has cgroup v2, a job's tasks on this host are born in
//! a cgroup of their own, `tasks.<job>.<attempt>` beside the jobs' ([`cgroup_of`]):
//! when the job's run ends, everything in it is killed, including what
//! left a task's process group or session, and it is removed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tokio::io::AsyncReadExt;
use tokio::net::UnixListener;
use tokio::sync::mpsc;

use crate::wire::{self, LaunchEvent, LaunchRequest};

/// A task running here: its job's run, and its process group.
#[derive(Clone, Debug)]
pub struct Task {
    pub job: u64,
    pub attempt: u32,
    pub pgid: i32,
}

/// What the task side tells the agent's loop.
pub enum TaskEvent {
    /// A `blaunch` asks: its caller's uid, its request, where its events go.
    Asked {
        uid: u32,
        request: LaunchRequest,
        reply: mpsc::UnboundedSender<LaunchEvent>,
    },
    Output {
        origin: String,
        tag: u64,
        index: u32,
        stderr: bool,
        data: Vec<u8>,
    },
    Exited {
        origin: String,
        tag: u64,
        index: u32,
        pgid: i32,
        exit: i32,
    },
}

/// The most `blaunch` connections an agent serves at once (one more is
/// closed at once), and the largest request it reads (its command and
/// environment).
const MAX_ASKING: usize = 256;
const MAX_REQUEST: usize = 1 << 20;

/// The agent's local socket, where a job's `blaunch` finds it: given to
/// every job and task as `ALLOT_AGENT_SOCKET`.
pub fn socket_path(state_dir: &Path) -> PathBuf {
    state_dir.join("agent.sock")
}

/// Listens on the local socket; each `blaunch` request goes to `tx`.
pub fn listen<T: From<TaskEvent> + Send + 'static>(state_dir: &Path, tx: mpsc::Sender<T>) -> Result<(), String> {
    let path = socket_path(state_dir);
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    {
        use std::os::unix::fs::PermissionsExt;
        // Any job's owner may ask; who asks comes from the kernel.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    // Local users may connect at will: at most MAX_ASKING at once, each
    // request of at most MAX_REQUEST bytes, read within 10 s.
    let asking = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_ASKING));
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            };
            let Ok(permit) = asking.clone().try_acquire_owned() else { continue };
            let tx = tx.clone();
            tokio::spawn(async move {
                let _permit = permit;
                let Ok(cred) = stream.peer_cred() else { return };
                let (mut r, mut w) = stream.into_split();
                let request = wire::read_up_to::<LaunchRequest>(&mut r, MAX_REQUEST);
                let read = tokio::time::timeout(std::time::Duration::from_secs(10), request);
                let Ok(Ok(request)) = read.await else { return };
                let (reply, mut events) = mpsc::unbounded_channel();
                if tx.send(TaskEvent::Asked { uid: cred.uid(), request, reply }.into()).await.is_err() {
                    return;
                }
                while let Some(event) = events.recv().await {
                    if wire::write(&mut w, &event).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    Ok(())
}

/// Where a task's process group is recorded: `tasks/JOB.ATTEMPT.PGID`.
fn record(state_dir: &Path, t: &Task) -> PathBuf {
    state_dir.join("tasks").join(format!("{}.{}.{}", t.job, t.attempt, t.pgid))
}

/// The tasks an earlier agent left running here.
pub fn recorded(state_dir: &Path) -> Vec<Task> {
    let Ok(entries) = std::fs::read_dir(state_dir.join("tasks")) else { return Vec::new() };
    let mut tasks: Vec<Task> = entries
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let mut parts = name.split('.');
            Some(Task {
                job: parts.next()?.parse().ok()?,
                attempt: parts.next()?.parse().ok()?,
                pgid: parts.next()?.parse().ok()?,
            })
        })
        .collect();
    tasks.sort_by_key(|t| (t.job, t.attempt, t.pgid));
    tasks
}

/// Forgets a task that ended.
pub fn forget(state_dir: &Path, t: &Task) {
    let _ = std::fs::remove_file(record(state_dir, t));
}

/// Starts task `index` of `origin`'s request `tag`: `/bin/sh -c COMMAND`
/// as `owner` (when this agent is root), in `cwd`, with exactly `env`,
/// the job's `umask` and nothing else of the agent's; its output and end
/// go to `tx`.
#[allow(clippy::too_many_arguments)]
pub fn spawn<T: From<TaskEvent> + Send + 'static>(
    state_dir: &Path,
    (origin, tag, index): (String, u64, u32),
    (job, attempt): (u64, u32),
    command: &str,
    cwd: &Path,
    env: &[(String, String)],
    (owner, umask, cgroup): (Option<&allot_exec::Owner>, u32, Option<&Path>),
    tx: &mpsc::Sender<T>,
) -> Result<Task, String> {
    use std::os::unix::process::CommandExt;
    std::fs::create_dir_all(state_dir.join("tasks")).map_err(|e| e.to_string())?;
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.arg("-c").arg(command).env_clear().envs(env.iter().map(|(k, v)| (k, v))).process_group(0);
    // Into its cgroup as root, before it becomes its owner.
    if let Some(dir) = cgroup {
        allot_exec::cgroup::born_in(&mut cmd, dir).map_err(|e| format!("the tasks' cgroup {}: {e}", dir.display()))?;
    }
    match owner {
        Some(o) => allot_exec::become_owner(&mut cmd, o, cwd).map_err(|e| e.to_string())?,
        None => {
            cmd.current_dir(cwd);
        }
    }
    allot_exec::inherit::start_clean(&mut cmd, umask);
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("cannot start `/bin/sh -c {command}`: {e}"))?;
    let pgid = child.id().map_or(0, |p| p as i32);
    let task = Task { job, attempt, pgid };
    let _ = std::fs::write(record(state_dir, &task), b"");
    let pipes = [(child.stdout.take().map(Pipe::Out), false), (child.stderr.take().map(Pipe::Err), true)];
    let mut readers = Vec::new();
    for (pipe, stderr) in pipes {
        let Some(mut pipe) = pipe else { continue };
        let (tx, origin) = (tx.clone(), origin.clone());
        readers.push(tokio::spawn(async move {
            let mut buf = vec![0u8; 32 << 10];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let data = buf[..n].to_vec();
                let out = TaskEvent::Output { origin: origin.clone(), tag, index, stderr, data };
                if tx.send(out.into()).await.is_err() {
                    break;
                }
            }
        }));
    }
    let tx = tx.clone();
    tokio::spawn(async move {
        let status = child.wait().await;
        // All its output first, then its end.
        for r in readers {
            let _ = r.await;
        }
        use std::os::unix::process::ExitStatusExt;
        let exit = status.map_or(255, |s| s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)));
        let _ = tx.send(TaskEvent::Exited { origin, tag, index, pgid, exit }.into()).await;
    });
    Ok(task)
}

/// A task's standard output or error.
enum Pipe {
    Out(tokio::process::ChildStdout),
    Err(tokio::process::ChildStderr),
}

impl Pipe {
    async fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Pipe::Out(p) => p.read(buf).await,
            Pipe::Err(p) => p.read(buf).await,
        }
    }
}

/// The `blaunch` requests of this host waiting for their tasks: where each
/// one's events go, and how many of its tasks still run.
#[derive(Default)]
pub struct Launches {
    next: u64,
    waiting: BTreeMap<u64, (mpsc::UnboundedSender<LaunchEvent>, usize)>,
}

impl Launches {
    pub fn add(&mut self, reply: mpsc::UnboundedSender<LaunchEvent>, tasks: usize) -> u64 {
        self.next += 1;
        self.waiting.insert(self.next, (reply, tasks));
        self.next
    }

    /// Passes an event on to its `blaunch`; one that ended its last task
    /// (or refused the request) ends the request.
    pub fn tell(&mut self, tag: u64, event: LaunchEvent) {
        let Some((reply, left)) = self.waiting.get_mut(&tag) else { return };
        let done = match &event {
            LaunchEvent::Ended { .. } => {
                *left = left.saturating_sub(1);
                *left == 0
            }
            LaunchEvent::Refused { .. } => true,
            LaunchEvent::Output { .. } => false,
        };
        let _ = reply.send(event);
        if done {
            self.waiting.remove(&tag);
        }
    }

    /// allotd is gone: every request waiting is told so.
    pub fn refuse_all(&mut self, why: &str) {
        for (_, (reply, _)) in std::mem::take(&mut self.waiting) {
            let _ = reply.send(LaunchEvent::Refused { why: why.to_string() });
        }
    }
}

/// Where the tasks of job `job`'s run `attempt` on this host run, under
/// the agent's cgroup `base` (`allot-agent-<tag>`).
pub fn cgroup_of(base: &Path, (job, attempt): (u64, u32)) -> PathBuf {
    base.join(format!("tasks.{job}.{attempt}"))
}

/// Ends every process of a run's tasks' cgroup under `base` and removes
/// it (on a blocking thread: it waits for them to go).
pub async fn end_cgroup(base: PathBuf, run: (u64, u32)) {
    let dir = cgroup_of(&base, run);
    if !dir.exists() {
        return;
    }
    let _ = tokio::task::spawn_blocking(move || {
        if !allot_exec::strays::kill_cgroup(&dir) {
            eprintln!("allot-agent: processes of {} did not end when killed", dir.display());
        }
        let _ = std::fs::remove_dir(&dir);
    })
    .await;
}

/// `LSB_DJOB_HOSTFILE`: the job's hosts, one line per slot, in the order
/// of `LSB_HOSTS` (`hosts`, space-separated), in `STATE/hostfiles/JOB`
/// (readable by all: host names are no secret). Returns its path.
pub fn write_hostfile(state_dir: &Path, job: u64, hosts: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let dir = state_dir.join("hostfiles");
    std::fs::DirBuilder::new().recursive(true).mode(0o755).create(&dir)?;
    let path = dir.join(job.to_string());
    let mut text: String = hosts.split_whitespace().map(|h| format!("{h}\n")).collect();
    if text.is_empty() {
        text.push('\n');
    }
    std::fs::write(&path, text)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
    Ok(path)
}

/// Removes a job's host file.
pub fn remove_hostfile(state_dir: &Path, job: u64) {
    let _ = std::fs::remove_file(state_dir.join("hostfiles").join(job.to_string()));
}
