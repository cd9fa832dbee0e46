//! The socket and the dispatcher loop.
//!
//! Each connection's requests go, with the caller's identity from the
//! socket's peer credentials (never from the request), to the one
//! dispatcher. It handles every request waiting, makes their records
//! durable in one commit, and only then answers: a submission is
//! acknowledged only once it is in the log. Every 100 ms it collects the
//! exit reports of running jobs and runs a dispatch pass.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use allot_config::deps::DepTarget;
use allot_engine::{ArrayShape, Decision, Dependency, Engine, JobId, JobSpec, Time};
use allot_exec::JobFiles;
use allot_proto::{Envelope, JobRef, PROTOCOL_VERSION, Request, Response};
use allot_store::{JobRecord, Record, Store};
use anyhow::{Context, anyhow};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot};

use crate::config::Source;
use crate::lists::{JobList, write_job_list};
use crate::running::{measure, recover_running, start_job};
use crate::state::State;
use crate::{control, history, views};

/// Who is asking: from the socket's peer credentials.
#[derive(Clone, Debug)]
pub(crate) struct Caller {
    pub(crate) uid: u32,
    /// Their name in the password database; a uid without an entry is
    /// `uid:N`, which no user can be named (a colon ends a passwd field),
    /// so it never stands for somebody else.
    pub(crate) user: String,
    /// Whether the uid has a password database entry: a job runs as its
    /// owner, so one without may submit nothing.
    pub(crate) known: bool,
}

pub struct Message {
    caller: Caller,
    request: Request,
    reply: oneshot::Sender<Answer>,
}

/// The dispatcher's answer to one request: a response, or a job list's
/// frames as the dispatcher writes them (see [`write_job_list`]).
pub enum Answer {
    Response(Response),
    Frames(mpsc::UnboundedReceiver<Vec<u8>>),
}

/// What the dispatcher hears.
pub enum Input {
    Request(Box<Message>),
    /// A supervisor started by this daemon exited: collect job ends now.
    JobEnded,
    /// The zygote could not fork this job's supervisor: start it alone.
    Unsupervised(u64),
    /// The metrics endpoint asks for the figures, in Prometheus text.
    Metrics(oneshot::Sender<String>),
}

pub(crate) fn now() -> Time {
    Time(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}

pub async fn run(config_dir: Option<PathBuf>) -> anyhow::Result<()> {
    let state_dir = allot_proto::paths::state_dir();
    std::fs::create_dir_all(&state_dir).with_context(|| format!("cannot create {}", state_dir.display()))?;
    // Others may reach the socket in it, and nothing else.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&state_dir, std::fs::Permissions::from_mode(0o711))
            .with_context(|| format!("cannot make {} private", state_dir.display()))?;
    }
    let current = match &config_dir {
        Some(dir) => Source::read(dir).map_err(|e| anyhow!("{}: invalid configuration:\n{e}", dir.display()))?,
        None => Source::defaults(),
    };
    let current_loaded = current.load().map_err(|e| anyhow!("{}: invalid configuration:\n{e}", current.describe()))?;
    eprint!("{}", current_loaded.warnings);
    let metrics = current_loaded.metrics;
    let store = Store::open(&state_dir.join("state.db"))?;
    let files = JobFiles::new(&state_dir)?;
    let supervisor = std::env::current_exe()?.with_file_name("allot-supervise");
    if !supervisor.is_file() {
        return Err(anyhow!("{} is missing: it is installed with allotd, next to it", supervisor.display()));
    }
    let mut replayed = Vec::new();
    let mut seqs = Vec::new();
    store.replay(|seq, t, r| {
        seqs.push(seq);
        replayed.push((t, r));
    })?;
    // The log replays under the configuration it starts with.
    let initial = match replayed.first() {
        Some((_, Record::Reconfigured { config_dir, files })) => {
            Source { dir: config_dir.clone(), files: files.clone() }
        }
        _ => current.clone(),
    };
    let loaded = if initial == current {
        current_loaded
    } else {
        initial.load().map_err(|e| {
            anyhow!("the configuration the event log starts with ({}) no longer loads:\n{e}", initial.describe())
        })?
    };
    let (usage_interval, clean_period) = (loaded.usage_interval, loaded.clean_period);
    let mut state = State {
        engine: Engine::new(loaded.engine),
        source: initial,
        admins: loaded.admins.into_iter().collect(),
        closed_queues: Default::default(),
        closed_hosts: Default::default(),
        store,
        files,
        state_dir: state_dir.clone(),
        host: crate::defaults::this_host(),
        supervisors: crate::supervisors::Supervisors::new(supervisor, &state_dir),
        cgroups: allot_exec::cgroup::Cgroups::detect(&allot_exec::cgroup::tag_of(&state_dir)),
        jobs: BTreeMap::new(),
        arrays: BTreeMap::new(),
        running: Default::default(),
        pending_kills: BTreeMap::new(),
        envs: Default::default(),
        passes: Default::default(),
        usage_interval,
        last_usage: None,
        clean_period,
        finished: Default::default(),
    };
    for ((t, r), seq) in replayed.iter().zip(&seqs) {
        state.apply(*t, r).map_err(|e| {
            anyhow!(
                "replaying the event log {}: record {seq} ({}): {e}. This allotd cannot take up this log; \
                 the log is left as it is: report this with the log, or move it aside to start with no jobs",
                state_dir.join("state.db").display(),
                r.kind(),
            )
        })?;
    }
    eprintln!("allotd: {} records replayed, {} jobs", replayed.len(), state.jobs.len());
    match &state.cgroups {
        Some(c) => eprintln!("allotd: jobs run and are measured in cgroup v2, under {}", c.base().display()),
        None => eprintln!("allotd: no writable cgroup v2: jobs are measured from /proc and getrusage"),
    }
    // Made again at the next job's start.
    if let Some(c) = state.cgroups.as_ref().filter(|_| state.running.is_empty()) {
        c.release();
    }
    // Started on another configuration than the log's last: it applies as
    // `badmin reconfig` would, or allotd does not start.
    if replayed.is_empty() || state.source != current {
        let t = now();
        if state.source != current {
            let warnings = state
                .reconfigure(t, current.clone())
                .map_err(|e| anyhow!("cannot run on {} with the jobs in the event log: {e}", current.describe()))?;
            eprint!("{warnings}");
        }
        let record = Record::Reconfigured { config_dir: current.dir.clone(), files: current.files.clone() };
        state.record(t, vec![record]).context("cannot write the event log")?;
    }
    let (tx, mut rx) = mpsc::channel::<Input>(4096);
    recover_running(&mut state, &tx)?;

    let socket = allot_proto::paths::socket(&state_dir);
    if UnixStream::connect(&socket).await.is_ok() {
        return Err(anyhow!("another allotd already listens on {}", socket.display()));
    }
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket).with_context(|| format!("cannot listen on {}", socket.display()))?;
    // Anyone may connect: who they are comes from the peer credentials,
    // and what they may do from that.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666))
            .with_context(|| format!("cannot open {} to every user", socket.display()))?;
    }
    tokio::spawn(accept_loop(listener, tx.clone()));
    if let Some(addr) = metrics {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("[daemon] metrics: cannot listen on {addr}"))?;
        eprintln!("allotd: metrics on http://{addr}/metrics");
        tokio::spawn(crate::metrics::serve(listener, tx.clone()));
    }
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            first = rx.recv() => {
                let Some(first) = first else { break };
                let mut batch = Vec::new();
                let mut inputs = vec![first];
                while let Ok(m) = rx.try_recv() {
                    inputs.push(m);
                    if inputs.len() >= 512 { break; }
                }
                for input in inputs {
                    match input {
                        Input::Request(m) => batch.push(*m),
                        Input::Metrics(reply) => {
                            let _ = reply.send(crate::metrics::render(&state));
                        }
                        Input::JobEnded => {}
                        Input::Unsupervised(job) => {
                            if let Err(e) = state.supervisors.start_alone(job, &tx) {
                                eprintln!("allotd: job {job}: cannot start its supervisor: {e}");
                            }
                        }
                    }
                }
                let mut lists = Vec::new();
                let stop = !batch.is_empty() && handle_batch(&mut state, batch, &mut lists)?;
                // Answered before a shutdown in the same batch, as every
                // other request of it is.
                for list in lists {
                    write_job_list(&state, list).await;
                }
                if stop {
                    break;
                }
                // Submissions and job ends: dispatch at once.
                tick_once(&mut state, &tx)?;
            }
            _ = tick.tick() => tick_once(&mut state, &tx)?,
        }
    }
    let _ = std::fs::remove_file(&socket);
    // Let the connection tasks write the answers already given.
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Empty once no job runs; left for the running jobs' cgroups otherwise.
    if let Some(c) = &state.cgroups {
        let _ = std::fs::remove_dir(c.base());
    }
    eprintln!("allotd: stopped; running jobs go on under their supervisors");
    Ok(())
}

/// How long a connection may wait between requests, and how long a
/// request, once its length has come, may take to arrive whole: a
/// connection that stalls past either is closed, and its memory freed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(600);
const FRAME_TIMEOUT: Duration = Duration::from_secs(10);

/// Requests are read in pieces of this size, each but the first taken
/// from [`REQUEST_BUDGET`] as it comes.
const PIECE: usize = 64 << 10;
/// What all the requests being read at once may hold, in pieces (32 MiB):
/// a connection that has none to take waits for one (its frame timeout
/// still runs), so however many connections send large requests, what
/// they hold together stays bounded.
const REQUEST_BUDGET: usize = 512;

async fn accept_loop(listener: UnixListener, tx: mpsc::Sender<Input>) {
    let budget = std::sync::Arc::new(tokio::sync::Semaphore::new(REQUEST_BUDGET));
    let mut failures = 0u32;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => {
                failures = 0;
                stream
            }
            // Out of descriptors, or memory: the error stays until
            // something closes, so wait instead of spinning, longer
            // while it lasts (up to a second).
            Err(e) => {
                failures = failures.saturating_add(1);
                if failures == 1 {
                    eprintln!("allotd: cannot accept a connection: {e}; retrying");
                }
                tokio::time::sleep(Duration::from_millis(10 * u64::from(failures.min(100)))).await;
                continue;
            }
        };
        let (tx, budget) = (tx.clone(), budget.clone());
        tokio::spawn(async move {
            let _ = connection(stream, tx, budget).await;
        });
    }
}

/// Reads a request's `len` bytes, piece by piece. The first piece is the
/// connection's own (every ordinary request fits in it, so a `bjobs` never
/// waits behind large requests); each further piece's memory is taken from
/// `budget` first, and the permits are held until the request is dropped
/// with them. Memory grows as bytes come, never with the length announced.
async fn read_body(
    stream: &mut UnixStream,
    len: usize,
    budget: &std::sync::Arc<tokio::sync::Semaphore>,
) -> std::io::Result<(Vec<u8>, Option<tokio::sync::OwnedSemaphorePermit>)> {
    let mut buf = Vec::new();
    let mut held: Option<tokio::sync::OwnedSemaphorePermit> = None;
    while buf.len() < len {
        if !buf.is_empty() {
            let permit = budget.clone().acquire_owned().await.map_err(std::io::Error::other)?;
            match &mut held {
                Some(h) => h.merge(permit),
                None => held = Some(permit),
            }
            buf.reserve_exact(PIECE.min(len - buf.len()));
        }
        let piece = PIECE.min(len - buf.len());
        let n = (&mut *stream).take(piece as u64).read_to_end(&mut buf).await?;
        if n < piece {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
    }
    Ok((buf, held))
}

async fn connection(
    mut stream: UnixStream,
    tx: mpsc::Sender<Input>,
    budget: std::sync::Arc<tokio::sync::Semaphore>,
) -> anyhow::Result<()> {
    let cred = stream.peer_cred()?;
    let uid = cred.uid();
    let account = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)).ok().flatten();
    let known = account.is_some();
    let user = account.map_or_else(|| format!("uid:{uid}"), |u| u.name);
    let caller = Caller { uid, user, known };
    loop {
        let mut len = [0u8; 4];
        match tokio::time::timeout(IDLE_TIMEOUT, stream.read_exact(&mut len)).await {
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => return Ok(()),
        }
        let len = u32::from_be_bytes(len) as usize;
        let response = if len > allot_proto::MAX_FRAME {
            // Refused unread: the connection cannot go on after it.
            let r = Response::Error(format!(
                "request of {len} bytes is larger than the {} allowed",
                allot_proto::MAX_FRAME
            ));
            write_frame(&mut stream, &r, 256).await?;
            return Ok(());
        } else {
            // Memory grows with the bytes that come, not with the length
            // announced; a request that stops coming is given up.
            let (buf, _held) = match tokio::time::timeout(FRAME_TIMEOUT, read_body(&mut stream, len, &budget)).await {
                Ok(Ok(body)) => body,
                Ok(Err(_)) => return Ok(()),
                Err(_) => {
                    let r = Response::Error(format!(
                        "request of {len} bytes incomplete after {} s: the connection is closed",
                        FRAME_TIMEOUT.as_secs()
                    ));
                    let _ = write_frame(&mut stream, &r, 256).await;
                    return Ok(());
                }
            };
            match serde_json::from_slice::<Envelope<Request>>(&buf) {
                Ok(env) if env.version != PROTOCOL_VERSION => Answer::Response(Response::Error(format!(
                    "protocol version {} is not {PROTOCOL_VERSION}",
                    env.version
                ))),
                Ok(env) => {
                    let (reply, answer) = oneshot::channel();
                    tx.send(Input::Request(Box::new(Message { caller: caller.clone(), request: env.body, reply })))
                        .await?;
                    answer.await?
                }
                Err(e) => Answer::Response(Response::Error(format!("malformed request: {e}"))),
            }
        };
        match response {
            Answer::Response(r) => write_frame(&mut stream, &r, 256).await?,
            Answer::Frames(mut frames) => {
                while let Some(bytes) = frames.recv().await {
                    stream.write_all(&bytes).await?;
                }
            }
        }
    }
}

/// Appends one frame: its length, then its JSON.
pub(crate) fn frame_into(bytes: &mut Vec<u8>, body: &impl serde::Serialize) -> anyhow::Result<()> {
    let at = bytes.len();
    bytes.extend_from_slice(&[0; 4]);
    serde_json::to_writer(&mut *bytes, &Envelope { version: PROTOCOL_VERSION, body })?;
    let len = u32::try_from(bytes.len() - at - 4).context("a frame of more than 4 GiB")?;
    bytes[at..at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// One frame, built in one buffer of about `size` bytes and written at
/// once.
async fn write_frame(stream: &mut UnixStream, body: &impl serde::Serialize, size: usize) -> anyhow::Result<()> {
    let mut bytes = Vec::with_capacity(size + 4);
    frame_into(&mut bytes, body)?;
    stream.write_all(&bytes).await?;
    Ok(())
}

/// Root, the user allotd runs as, and the `[daemon] admins` of its
/// configuration.
fn is_admin(state: &State, caller: &Caller) -> bool {
    let daemon_uid = nix::unistd::Uid::effective().as_raw();
    caller.uid == 0 || caller.uid == daemon_uid || state.admins.contains(&caller.user)
}

/// A user acts on their own jobs; administrators on any.
pub(crate) fn may_act(state: &State, caller: &Caller, owner: &str) -> bool {
    caller.user == owner || is_admin(state, caller)
}

const NOT_ADMIN: &str = "User permission denied: only administrators may do this";

/// Handles a batch of requests with one commit; returns whether to stop.
/// Job lists are only read, and written after the batch's commit, into
/// `lists`.
fn handle_batch(state: &mut State, batch: Vec<Message>, lists: &mut Vec<JobList>) -> anyhow::Result<bool> {
    let t = now();
    let daemon_uid = nix::unistd::Uid::effective().as_raw();
    let mut records = Vec::new();
    let mut replies = Vec::new();
    let mut stop = false;
    for Message { caller, request, reply } in batch {
        if daemon_uid != 0 && !is_admin(state, &caller) {
            let _ = reply.send(Answer::Response(Response::Error(format!(
                "user `{}` cannot use this allotd, which runs as another user and is not root",
                caller.user
            ))));
            continue;
        }
        let response = match request {
            Request::Submit(s) => submit(state, &caller, s, t, &mut records),
            Request::Jobs(query) => {
                lists.push(JobList { reply, caller, query });
                continue;
            }
            Request::Kill { jobs, signal } => control::kill(state, &caller, &jobs, signal.as_deref(), t, &mut records),
            Request::Suspend { jobs, stop } => control::suspend(state, &caller, &jobs, stop, t, &mut records),
            Request::Switch { jobs, queue } => control::switch(state, &caller, &jobs, &queue, t, &mut records),
            Request::Modify { job, changes } => control::modify(state, &caller, job, &changes, t, &mut records),
            Request::Requeue { jobs, states, hold } => {
                control::requeue(state, &caller, &jobs, states, hold, t, &mut records)
            }
            Request::Peek { job } => history::peek(state, &caller, job),
            Request::History { jobs, user, finished } => {
                history::history(state, &caller, &jobs, user.as_deref(), finished, t)
            }
            Request::Queues => Response::Queues(views::queues(state)),
            Request::Hosts => Response::Hosts(views::hosts(state)),
            Request::Slots { select } => slots(state, t, select.as_deref()),
            Request::Shares => Response::Shares(views::shares(&state.engine, t)),
            Request::Associations => views::associations(&state.engine, t),
            Request::Priorities => views::priorities(&state.engine),
            Request::Groups => Response::Groups(views::groups(&state.engine)),
            Request::Users { users } => Response::Users(views::users(state, &caller.user, &users)),
            Request::Reconfig | Request::QueueControl { .. } | Request::HostControl { .. } | Request::Shutdown
                if !is_admin(state, &caller) =>
            {
                Response::Error(NOT_ADMIN.into())
            }
            Request::Reconfig => reconfig(state, t, &mut records),
            Request::QueueControl { queue, open } => {
                if state.engine.queue_names().any(|q| q == queue) {
                    keep(state, t, &mut records, Record::QueueChanged { queue, open });
                    Response::Done
                } else {
                    Response::Error(format!("Queue <{queue}>: No such queue"))
                }
            }
            Request::HostControl { host, open } => {
                if state.engine.host_index(&host).is_some() {
                    keep(state, t, &mut records, Record::HostChanged { host, up: open });
                    Response::Done
                } else {
                    Response::Error(format!("Host <{host}>: No such host"))
                }
            }
            Request::Shutdown => {
                stop = true;
                Response::Done
            }
        };
        replies.push((reply, Answer::Response(response)));
    }
    // Durable before any answer: a failed commit stops the daemon, whose
    // restart replays only what was committed.
    state.record(t, records).context("cannot write the event log")?;
    for (reply, response) in replies {
        let _ = reply.send(response);
    }
    Ok(stop)
}

/// Applies a record now, and keeps it for the batch's one commit (made
/// before any answer goes out).
pub(crate) fn keep(state: &mut State, t: Time, records: &mut Vec<Record>, record: Record) {
    let _ = state.apply(t, &record);
    records.push(record);
}

/// `badmin reconfig`: reads the configuration directory again and runs on
/// it, or refuses with every located error and keeps the running one.
fn reconfig(state: &mut State, t: Time, records: &mut Vec<Record>) -> Response {
    let Some(dir) = state.source.dir.clone() else {
        return Response::Error(
            "allotd runs on its embedded defaults: there is no configuration directory to read again \
             (start it with --config DIR)"
                .into(),
        );
    };
    let refused = |e: String| {
        let newline = if e.ends_with('\n') { "" } else { "\n" };
        Response::Error(format!("{e}{newline}No reconfiguration: the running configuration is kept."))
    };
    let source = match Source::read(Path::new(&dir)) {
        Ok(s) => s,
        Err(e) => return refused(e),
    };
    match state.reconfigure(t, source.clone()) {
        Ok(warnings) => {
            records.push(Record::Reconfigured { config_dir: source.dir, files: source.files });
            Response::Reconfigured { warnings }
        }
        Err(e) => refused(e),
    }
}

fn submit(state: &mut State, caller: &Caller, s: allot_proto::Submit, t: Time, records: &mut Vec<Record>) -> Response {
    if !caller.known {
        return Response::Error(format!(
            "bsub: uid {} has no user account on this host (no password database entry): a job runs as its owner. \
             Job not submitted.",
            caller.uid
        ));
    }
    let res_req = match allot_config::resreq::parse_all_of(&s.res_req) {
        Ok(r) => r,
        Err((_, e)) if s.res_req.len() == 1 => {
            return Response::Error(format!("{}. Job not submitted.", at_column("-R", &e)));
        }
        Err((i, e)) => {
            let option = format!("-R (the {} one)", ordinal(i + 1));
            return Response::Error(format!("{}. Job not submitted.", at_column(&option, &e)));
        }
    };
    let depends = match s.depends.as_deref().map(|w| resolve_dependency(state, &caller.user, w)).transpose() {
        Ok(d) => d,
        Err(e) => return Response::Error(format!("{e}. Job not submitted.")),
    };
    let max = state.engine.config().max_job_array_size;
    let job_name = match s.name.as_deref().map(|n| allot_config::array::parse_job_name(n, max)).transpose() {
        Ok(n) => n,
        Err(e) => return Response::Error(format!("{}. Job not submitted.", at_column("-J", &e))),
    };
    let (name, mut array) = match job_name {
        Some(n) => (Some(n.name), n.array),
        None => (None, None),
    };
    let hosts = match s.hosts.as_deref().map(allot_config::engine::parse_host_picks).transpose() {
        Ok(h) => h.unwrap_or_default(),
        Err(e) => return Response::Error(format!("{}. Job not submitted.", at_column("-m", &e))),
    };
    let mut spec = JobSpec {
        user: caller.user.clone(),
        queue: s.queue.clone(),
        slots: s.slots,
        max_slots: s.max_slots.filter(|&m| m != s.slots),
        res_req,
        hosts,
        run_limit: s.run_limit,
        run_estimate: s.estimated_run_time,
        group: s.group.clone(),
        depends,
        array: array.as_ref().map(|a| ArrayShape { size: a.indices.len() as u32, limit: a.limit }),
        priority: s.priority,
        term_time: s.term_time,
        cpu_limit: s.cpu_limit,
        exclusive: s.exclusive,
        app: s.app.clone(),
        qos: s.qos.clone(),
        user_factor: s.user_factor,
        project: s.project.clone(),
    };
    // A job that names no queue goes to the first default queue that
    // takes it, closed queues left out (automatic queue selection).
    if spec.queue.is_none() {
        let closed = &state.closed_queues;
        match state.engine.choose_queue(&spec, &|q| closed.contains(q)) {
            Ok(q) => spec.queue = Some(q.to_string()),
            Err(e) => {
                let only = state.engine.default_queue().filter(|q| closed.contains(*q));
                return match only {
                    Some(q) => Response::Error(format!("Queue <{q}> is closed. Job not submitted.")),
                    None => Response::Error(format!("{e}. Job not submitted.")),
                };
            }
        }
    }
    if let Some(q) = spec.queue.as_ref().filter(|q| state.closed_queues.contains(*q)) {
        return Response::Error(format!("Queue <{q}> is closed. Job not submitted."));
    }
    match state.engine.submit_at(&spec, t) {
        Ok(id) => {
            let queue = state.engine.job_queue(id).unwrap_or_default().to_string();
            let record = JobRecord {
                spec: JobSpec { queue: Some(queue.clone()), ..spec },
                name: name.unwrap_or_else(|| s.command.chars().take(60).collect()),
                command: s.command,
                cwd: s.cwd,
                output: s.output,
                error: s.error,
                env: s.env.into(),
                from_host: state.host.clone(),
                project: s.project,
                estimated_run_time: s.estimated_run_time,
                array: array.as_ref().map(|a| a.spec.clone()),
            };
            state.register(id.0, &record, t, array.take().map(|a| a.indices));
            records.push(Record::Submitted { job: id.0, record: Box::new(record) });
            Response::Submitted { job: id.0, queue }
        }
        Err(e) => Response::Error(e.to_string()),
    }
}

/// `bslots [-R "select"]`: the engine's backfill windows, on the hosts
/// the requirement selects. Only a select string is taken, as LSF's
/// bslots takes.
fn slots(state: &State, t: Time, select: Option<&str>) -> Response {
    let select = match select.map(allot_config::resreq::parse).transpose() {
        Ok(r) => r,
        Err(e) => return Response::Error(at_column("-R", &e)),
    };
    if let Some(r) = &select {
        let only_select = allot_engine::ResReq { text: r.text.clone(), select: r.select.clone(), ..Default::default() };
        if *r != only_select {
            return Response::Error(format!("-R \"{}\": bslots takes a select string only", r.text));
        }
    }
    let windows = state.engine.backfill_windows(t, select.as_ref().and_then(|r| r.select.as_ref()));
    Response::Slots(
        windows
            .into_iter()
            .map(|w| allot_proto::SlotWindow {
                slots: w.slots,
                runtime: w.runtime,
                hosts: w.hosts.iter().map(|&(h, n)| (state.engine.host_name(h).to_string(), n)).collect(),
            })
            .collect(),
    )
}

/// An option's value that failed to parse, where (columns from 1) and why.
fn at_column(option: &str, e: &allot_config::lsf::values::ValueError) -> String {
    format!("{option}: column {}: {}", e.offset + 1, e.message)
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// A `-w` expression with its jobs resolved: a name stands for every job
/// of the caller with that name (`*` matching any text), as LSF resolves
/// it; an array's id or name for every element of it, and `id[index]` or
/// `name[index]` for one element. A name that matches none is an error, as
/// is a job id the cluster never had.
fn resolve_dependency(state: &State, user: &str, text: &str) -> Result<Dependency<Vec<JobId>>, String> {
    let parsed = allot_config::deps::parse(text).map_err(|e| at_column("-w", &e))?;
    let by_ref = |r: JobRef| {
        let ids = state.resolve(r);
        if ids.is_empty() {
            Err(format!("-w: job <{r}> is not a job of this cluster"))
        } else {
            Ok(ids.into_iter().map(JobId).collect())
        }
    };
    parsed.try_map(&mut |target| match target {
        DepTarget::Id(id) => by_ref(JobRef::job(id)),
        DepTarget::Element(id, index) => by_ref(JobRef { id, index }),
        DepTarget::Name(name) => {
            let matches = |j: &crate::state::DaemonJob| {
                allot_config::deps::name_matches(&name, &j.record.name)
                    || (j.array.is_some() && allot_config::deps::name_matches(&name, &j.display_name()))
            };
            let ids: Vec<JobId> = state
                .jobs
                .iter()
                .filter(|(_, j)| j.record.spec.user == user && matches(j))
                .map(|(id, _)| JobId(*id))
                .collect();
            if ids.is_empty() { Err(format!("-w: no job of yours is named `{name}`")) } else { Ok(ids) }
        }
    })
}

/// Measures running jobs when due, collects job ends, runs a dispatch
/// pass, starts what it decided.
fn tick_once(state: &mut State, wake: &mpsc::Sender<Input>) -> anyhow::Result<()> {
    let t = now();
    state.clean(t.0);
    let mut records = Vec::new();
    measure(state, &mut records);
    for &id in &state.running {
        if let Some(report) = state.files.read_exit(id) {
            records.push(Record::Finished {
                job: id,
                exit: report.exit,
                cpu_time: report.cpu_time,
                max_mem_kb: report.max_rss_kb,
                reason: report.reason,
            });
        }
    }
    // Kills that waited for their job's command to start.
    let due: Vec<(u64, i32, nix::sys::signal::Signal)> = state
        .pending_kills
        .iter()
        .filter_map(|(&id, &sig)| state.files.read_pgid(id).map(|pgid| (id, pgid, sig)))
        .collect();
    for (id, pgid, sig) in due {
        state.pending_kills.remove(&id);
        let _ = allot_exec::signal_group(pgid, sig);
    }
    let ended: Vec<u64> =
        records.iter().filter_map(|r| if let Record::Finished { job, .. } = r { Some(*job) } else { None }).collect();
    for r in &records {
        state.apply(t, r).map_err(|e| anyhow!(e))?;
    }
    let mut starts = Vec::new();
    let pass = std::time::Instant::now();
    let decisions = state.engine.schedule(t);
    state.passes.record(pass.elapsed());
    for d in decisions {
        match d {
            Decision::Start { job, alloc } => {
                let named: Vec<(String, u32)> =
                    alloc.iter().map(|&(h, n)| (state.engine.host_name(h).to_string(), n)).collect();
                starts.push((job, named));
            }
            Decision::Kill { job, .. } => {
                if let Some(pgid) = state.files.read_pgid(job.0) {
                    let _ = allot_exec::signal_group(pgid, nix::sys::signal::Signal::SIGKILL);
                }
            }
        }
    }
    // One commit for the ends and the starts they made room for. The
    // starts are durable before any job runs (no job runs twice), and the
    // ends before their jobs' files go (a restart never mistakes an ended
    // job for one that never started).
    records.extend(starts.iter().map(|(job, alloc)| Record::Started { job: job.0, alloc: alloc.clone() }));
    state.record(t, records).context("cannot write the event log")?;
    let idle = !ended.is_empty() && state.running.is_empty() && starts.is_empty();
    for id in ended {
        state.files.clean(id);
    }
    if let Some(c) = state.cgroups.as_ref().filter(|_| idle) {
        c.release();
    }
    let mut unrun = Vec::new();
    for (job, alloc) in starts {
        state.mark_running(job.0, t, &alloc);
        unrun.extend(start_job(state, job, &alloc, wake));
    }
    state.commit(t, unrun).map_err(|e| anyhow!("cannot write the event log: {e}"))
}
