//! `blaunch` on an agent's host: the local socket a job's `blaunch` asks
//! on (its caller known by the socket's peer credentials), and the tasks
//! this host runs for a job's `blaunch` anywhere in its allocation.
//!
//! A request goes to allotd, which checks it against the job's allocation
//! and sends each task to its host's agent; a task's output and end come
//! back the same way to the `blaunch` that asked, which writes the output
//! as its own (so it lands in the job's output) and exits with the first
//! failing task's code. A task runs as the job's owner, in the job's
//! environment, under a supervisor of its own ([`crate::spool`]: it, its
//! output and its end outlive this agent); it ends when the job's run
//! does ([`crate::wire::ToAgent::EndTasks`]). Its standard input is empty,
//! as with `blaunch -n`.
//!
//! A request outlives its agent and allotd too: its `blaunch` learns its
//! tag ([`LaunchEvent::Accepted`]), and when its agent goes away it
//! connects to the next one and asks again with that tag
//! ([`LaunchRequest::resume`]); an agent whose link to allotd comes back
//! resumes every request it holds. Resuming has every task's host send all
//! of the task's output and end again, and the `blaunch` writes each byte
//! and each end once.
//!
//! Where the agent has cgroup v2, a job's tasks on this host are born in
//! a cgroup of their own, `tasks.<job>.<attempt>` beside the jobs' ([`cgroup_of`]):
//! when the job's run ends, everything in it is killed, including what
//! left a task's process group or session, and it is removed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tokio::net::UnixListener;
use tokio::sync::mpsc;

use crate::wire::{self, LaunchEvent, LaunchRequest};

/// What the task side tells the agent's loop.
pub enum TaskEvent {
    /// A `blaunch` asks: its caller's uid, its request, where its events go.
    Asked { uid: u32, request: LaunchRequest, reply: mpsc::UnboundedSender<LaunchEvent> },
    /// A task's supervisor here ended: its spools are whole.
    Settled,
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
/// Local users may connect at will: at most MAX_ASKING at once, each
/// request of at most MAX_REQUEST bytes, read within 10 s.
pub fn listen<T: From<TaskEvent> + Send + 'static>(state_dir: &Path, tx: mpsc::Sender<T>) -> Result<(), String> {
    serve_local(&socket_path(state_dir), MAX_ASKING, move |stream| {
        let tx = tx.clone();
        async move {
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
        }
    })
}

/// An agent's local socket at `path`, for every user of the host (mode
/// 0666: who connects comes from the kernel), each connection served by
/// `serve` on a task of its own, at most `max` at once and a quarter of
/// them of one user, root's kept an eighth (`crate::caps`; one more is
/// closed at once): one user holding connections cannot stop another's
/// `blaunch` or commands.
pub(crate) fn serve_local<F, Fut>(path: &Path, max: usize, serve: F) -> Result<(), String>
where
    F: Fn(tokio::net::UnixStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let caps = crate::caps::Caps::new(max, (max / 4).max(1), max / 8, nix::unistd::geteuid().as_raw());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            };
            let Ok(uid) = stream.peer_cred().map(|c| c.uid()) else { continue };
            let Ok(slot) = caps.take(uid) else { continue };
            let served = serve(stream);
            tokio::spawn(async move {
                let _slot = slot;
                served.await;
            });
        }
    });
    Ok(())
}

/// The `blaunch` requests of this host waiting for their tasks: where each
/// one's events go, what it asked (to resume it), and which of its tasks
/// ended.
#[derive(Default)]
pub struct Launches {
    next: u64,
    waiting: BTreeMap<u64, Waiting>,
}

struct Waiting {
    reply: mpsc::UnboundedSender<LaunchEvent>,
    request: LaunchRequest,
    ended: std::collections::BTreeSet<u32>,
}

impl Launches {
    /// A new request: its tag, unique to this host across its agent's
    /// restarts (the first of a life is the time in nanoseconds), which
    /// its `blaunch` is told.
    pub fn add(&mut self, reply: mpsc::UnboundedSender<LaunchEvent>, request: LaunchRequest) -> u64 {
        if self.next == 0 {
            self.next =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
        }
        self.next += 1;
        self.adopt(self.next, reply, request);
        self.next
    }

    /// A request under its tag (a new one, or one resumed).
    pub fn adopt(&mut self, tag: u64, reply: mpsc::UnboundedSender<LaunchEvent>, request: LaunchRequest) {
        let _ = reply.send(LaunchEvent::Accepted { tag });
        self.waiting.insert(tag, Waiting { reply, request, ended: Default::default() });
    }

    /// Passes an event on to its `blaunch` (a task's end once); the end of
    /// its last task, a refusal, or a `blaunch` gone ends the request.
    pub fn tell(&mut self, tag: u64, event: LaunchEvent) {
        let Some(w) = self.waiting.get_mut(&tag) else { return };
        let done = match &event {
            LaunchEvent::Ended { index, .. } => {
                if !w.ended.insert(*index) {
                    return;
                }
                w.ended.len() >= w.request.hosts.len()
            }
            LaunchEvent::Refused { .. } => true,
            LaunchEvent::Output { .. } | LaunchEvent::Accepted { .. } => false,
        };
        if w.reply.send(event).is_err() || done {
            self.waiting.remove(&tag);
        }
    }

    /// Every request waiting, to resume; those whose `blaunch` is gone
    /// are forgotten.
    pub fn to_resume(&mut self) -> Vec<wire::Launch> {
        self.waiting.retain(|_, w| !w.reply.is_closed());
        self.waiting.iter().map(|(&tag, w)| wire::Launch { tag, request: w.request.clone() }).collect()
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
    let _ = tokio::task::spawn_blocking(move || allot_exec::strays::end_cgroup(&dir, "allot-agent")).await;
}

/// `LSB_DJOB_HOSTFILE`: the job's hosts, one line per slot, in the order
/// of `LSB_HOSTS` (`hosts`, space-separated), in `STATE/hostfiles/JOB`
/// (readable by all: host names are no secret). Returns its path.
pub fn write_hostfile(state_dir: &Path, job: u64, hosts: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let dir = state_dir.join("hostfiles");
    let path = dir.join(job.to_string());
    let mut text: String = hosts.split_whitespace().map(|h| format!("{h}\n")).collect();
    if text.is_empty() {
        text.push('\n');
    }
    // The directory is made when it is missing, not looked for every job.
    if let Err(e) = std::fs::write(&path, &text) {
        if e.kind() != std::io::ErrorKind::NotFound {
            return Err(e);
        }
        std::fs::DirBuilder::new().recursive(true).mode(0o755).create(&dir)?;
        std::fs::write(&path, &text)?;
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
    Ok(path)
}

/// Removes a job's host file.
pub fn remove_hostfile(state_dir: &Path, job: u64) {
    let _ = std::fs::remove_file(state_dir.join("hostfiles").join(job.to_string()));
}
