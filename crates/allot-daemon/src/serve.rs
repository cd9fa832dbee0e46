//! The dispatcher loop.
//!
//! Each connection's requests come (see [`crate::socket`]), with the
//! caller's identity from the socket's peer credentials, to the one
//! dispatcher. It handles every request waiting, makes their records
//! durable in one commit, and only then answers: a submission is
//! acknowledged only once it is in the log. Every 100 ms it collects the
//! exit reports of running jobs and runs a dispatch pass
//! ([`crate::tick`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use allot_agent::supervisors::Heard;
use allot_engine::Time;
use allot_proto::{Request, Response};
use allot_store::Record;
use anyhow::{Context, anyhow};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot};

use crate::config::Source;
use crate::lists::{JobList, write_job_list};
use crate::running::recover_running;
use crate::socket::accept_loop;
use crate::startup::open_state;
use crate::state::{ApplyError, State};
use crate::submit::submit;
use crate::tick::{Logged, tick_once};
use crate::{control, history, views};

/// Who is asking: from the socket's peer credentials, or from the agent
/// of the host a command ran on (`crate::remote`).
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
    /// The host whose agent carried the request; `None` on allotd's own
    /// socket.
    pub(crate) from: Option<String>,
}

pub struct Message {
    pub(crate) caller: Caller,
    pub(crate) request: Request,
    pub(crate) reply: oneshot::Sender<Answer>,
}

/// The dispatcher's answer to one request: a response, or a job list's
/// frames as the dispatcher writes them (see [`write_job_list`]).
pub enum Answer {
    Response(Response),
    /// Each frame with its bytes counted until written ([`crate::answers`]).
    Frames(mpsc::UnboundedReceiver<(Vec<u8>, Option<allot_agent::answers::Held>)>),
    /// Frames as they come, at most so many held (`Attach`).
    Stream(mpsc::Receiver<Vec<u8>>),
}

/// What the dispatcher hears.
pub enum Input {
    Request(Box<Message>),
    /// A supervisor started by this daemon exited (collect job ends now),
    /// or the zygote could not fork one (start it alone).
    Supervisor(allot_agent::supervisors::Heard),
    /// The metrics endpoint asks for the figures, in Prometheus text.
    Metrics(oneshot::Sender<String>),
    /// Running jobs' measures, taken off the dispatcher.
    Measured(Vec<allot_agent::measure::Sample>),
    /// The log writer wrote (or could not): what waited for it is done.
    Committed(Box<crate::writer::Done>),
    /// An agent's connection said something (see `cluster`).
    Agent(crate::cluster::AgentInput),
    /// The numbers of these jobs, as the commands show them (`bhist`, read
    /// off the dispatcher, names the jobs that preempted).
    JobRefs(Vec<allot_engine::JobId>, oneshot::Sender<Vec<allot_proto::JobRef>>),
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
    // Before anything of the state is touched: a second allotd on the same
    // state would launch the first one's jobs again.
    let _lock = crate::state_lock::take(&state_dir)?;
    let socket = allot_proto::paths::socket(&state_dir);
    if UnixStream::connect(&socket).await.is_ok() {
        return Err(anyhow!("another allotd already listens on {}", socket.display()));
    }
    let supervisor = std::env::current_exe()?.with_file_name("allot-supervise");
    if !supervisor.is_file() {
        return Err(anyhow!("{} is missing: it is installed with allotd, next to it", supervisor.display()));
    }
    let supervisors = allot_agent::supervisors::Supervisors::new(supervisor, &state_dir);
    let mut state = open_state(&state_dir, current, current_loaded, supervisors, now())?;
    let (tx, mut rx) = mpsc::channel::<Input>(4096);
    recover_running(&mut state, &tx, now())?;
    // From here on, commits run on the writer's thread (see `writer`).
    state.writer = Some(
        crate::writer::Writer::start(&state_dir.join("state.db"), tx.clone()).context("cannot start the log writer")?,
    );

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
    if let Some(c) = state.cluster.as_ref().map(|c| c.settings.clone()) {
        let tls = crate::tls_config(&c)?;
        let listener = tokio::net::TcpListener::bind(c.listen)
            .await
            .with_context(|| format!("[cluster] listen: cannot listen on {}", c.listen))?;
        eprintln!(
            "allotd: agents connect to {} ({} hosts)",
            c.listen,
            state.cluster.as_ref().map_or(0, |c| c.hosts.len())
        );
        tokio::spawn(crate::agents::listen(listener, tls, tx.clone()));
    }
    if let Some(addr) = metrics {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("[daemon] metrics: cannot listen on {addr}"))?;
        eprintln!("allotd: metrics on http://{addr}/metrics");
        tokio::spawn(crate::metrics::serve(listener, tx.clone()));
    }
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let answers = allot_agent::answers::Budget::new();
    loop {
        tokio::select! {
            first = rx.recv() => {
                let Some(first) = first else { break };
                state.now = Instant::now();
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
                        Input::JobRefs(ids, reply) => {
                            let _ = reply.send(ids.iter().map(|&id| state.book.job_ref(id)).collect());
                        }
                        Input::Measured(samples) => state.measured = Some(samples),
                        Input::Committed(done) => {
                            if let Some(why) = crate::writer::finish(&mut state, *done, &tx) {
                                state = crate::degraded::take_up_again(state, &tx, now(), why)?;
                            }
                        }
                        Input::Supervisor(Heard::Ended(job)) => {
                            state.supervisors_ended.insert(allot_engine::JobId(job));
                        }
                        Input::Agent(heard) => crate::cluster::heard(&mut state, heard),
                        Input::Supervisor(Heard::Unsupervised(job)) => {
                            if let Err(e) = state.supervisors.start_alone(job, &tx) {
                                eprintln!("allotd: job {job}: cannot start its supervisor: {e}");
                            }
                        }
                    }
                }
                let mut lists = Vec::new();
                let handled = if batch.is_empty() {
                    Handled { stop: false, failed: None }
                } else {
                    handle_batch(&mut state, batch, &mut lists, now(), &tx)
                };
                // Answered before a shutdown in the same batch, as every
                // other request of it is.
                for list in lists {
                    write_job_list(&state, list, &answers).await;
                }
                if let Some(why) = handled.failed {
                    state = crate::degraded::take_up_again(state, &tx, now(), why)?;
                    continue;
                }
                if handled.stop {
                    break;
                }
                // Submissions and job ends: dispatch at once.
                if let Logged::Failed(why) = tick_once(&mut state, &tx, now()) {
                    state = crate::degraded::take_up_again(state, &tx, now(), why)?;
                }
            }
            _ = tick.tick() => {
                state.now = Instant::now();
                if let Logged::Failed(why) = tick_once(&mut state, &tx, now()) {
                    state = crate::degraded::take_up_again(state, &tx, now(), why)?;
                }
            }
        }
    }
    let _ = std::fs::remove_file(&socket);
    // Everything handed to the writer is written, and what waited for it
    // (the last answers, the shutdown's own) done, before allotd goes.
    // With a snapshot of the state as it stops: the next start replays
    // nothing.
    crate::snapshot::force(&mut state);
    let (told, drained) = std::sync::mpsc::channel();
    let _ = crate::writer::write(&mut state, Vec::new(), crate::writer::After::Drained(told), &tx);
    while drained.try_recv().is_err() {
        match rx.recv().await {
            Some(Input::Committed(done)) => {
                let _ = crate::writer::finish(&mut state, *done, &tx);
            }
            Some(_) => {}
            None => break,
        }
    }
    // Let the connection tasks write the answers already given.
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Empty once no job runs; left for the running jobs' cgroups otherwise.
    if let Some(c) = &state.cgroups {
        let _ = std::fs::remove_dir(c.base());
    }
    eprintln!("allotd: stopped; running jobs go on under their supervisors");
    Ok(())
}

/// Root, the user allotd runs as, and the `[daemon] admins` of its
/// configuration.
pub(crate) fn is_admin(state: &State, caller: &Caller) -> bool {
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
pub(crate) fn handle_batch(
    state: &mut State,
    batch: Vec<Message>,
    lists: &mut Vec<JobList>,
    t: Time,
    wake: &mpsc::Sender<Input>,
) -> Handled {
    let daemon_uid = nix::unistd::Uid::effective().as_raw();
    let mut records = Vec::new();
    let mut replies = Vec::new();
    let mut stop = false;
    let failing = state.write_failure.is_some();
    for Message { caller, request, reply } in batch {
        if let Some(why) = crate::remote::refusal(state, &caller, daemon_uid) {
            let _ = reply.send(Answer::Response(Response::Error(why)));
            continue;
        }
        if daemon_uid != 0 && !is_admin(state, &caller) {
            let _ = reply.send(Answer::Response(Response::Error(format!(
                "user `{}` cannot use this allotd, which runs as another user and is not root",
                caller.user
            ))));
            continue;
        }
        let submission = matches!(request, Request::Submit(_));
        if let Some(failure) = state.write_failure.as_ref().filter(|_| failing && crate::degraded::writes(&request)) {
            let refused = crate::degraded::refusal(submission, &failure.why);
            let _ = reply.send(Answer::Response(Response::Error(refused)));
            continue;
        }
        let before = records.len();
        let response = match request {
            Request::Submit(s) => submit(state, &caller, *s, t, &mut records),
            Request::Jobs(query) if query.summary => {
                Response::Arrays(crate::array_tail::array_counts(state, &caller.user, &query))
            }
            Request::Jobs(query) => {
                lists.push(JobList { reply, caller, query });
                continue;
            }
            Request::Kill { jobs, signal, job_group } => {
                control::kill(state, &caller, (&jobs, job_group.as_deref()), signal.as_deref(), t, &mut records)
            }
            Request::Suspend { jobs, stop, job_group } => {
                control::suspend(state, &caller, (&jobs, job_group.as_deref()), stop, t, &mut records)
            }
            Request::Resize { job, action } => crate::resize::request(state, &caller, job, action, t, &mut records),
            Request::Switch { jobs, queue } => control::switch(state, &caller, &jobs, &queue, t, &mut records),
            Request::Modify { job, changes } => control::modify(state, &caller, job, &changes, t, &mut records),
            Request::Requeue { jobs, states, hold } => {
                control::requeue(state, &caller, &jobs, states, hold, t, &mut records)
            }
            Request::Peek { job } => match history::peek(state, &caller, job) {
                history::Peek::Now(response) => response,
                history::Peek::Agent { host, job, shown, user, out, err } => {
                    crate::cluster::peek(state, (host, job, shown, user), (out, err), reply);
                    continue;
                }
                history::Peek::Here { shown, user, out, err } => {
                    history::read_here((shown, user), (out, err), reply);
                    continue;
                }
            },
            Request::History { jobs, user, finished } => {
                match history::ask(state, &caller, &jobs, user.as_deref(), finished, t) {
                    Ok(asked) => {
                        history::answer_off(asked, reply, wake.clone());
                        continue;
                    }
                    Err(response) => response,
                }
            }
            Request::Queues => Response::Queues(views::queues(state)),
            Request::Hosts => Response::Hosts(views::hosts(state)),
            Request::HostLoads => Response::HostLoads(crate::cluster::host_loads(state)),
            Request::Slots { select } => views::slots(state, t, select.as_deref()),
            Request::Shares => Response::Shares(views::shares(&state.engine, t)),
            Request::Associations => views::associations(&state.engine, t),
            Request::Priorities => views::priorities(&state.engine),
            Request::Explain { job } => views::explain(state, job, t),
            Request::Groups => Response::Groups(views::groups(&state.engine)),
            Request::Cluster => Response::Cluster(Box::new(crate::cluster_view::cluster(state))),
            Request::Attach { job } => {
                crate::terminal::attach(state, &caller, job, reply);
                continue;
            }
            Request::TermInput { job, data, eof } => {
                crate::terminal::typed(state, &caller, job, crate::terminal::Typed::Input { data, eof })
            }
            Request::TermResize { job, rows, cols } => {
                crate::terminal::typed(state, &caller, job, crate::terminal::Typed::Resize { rows, cols })
            }
            Request::Acct(query) => {
                crate::acct::acct(state, &caller, *query, reply);
                continue;
            }
            Request::Users { users } => Response::Users(views::users(state, &caller.user, &users)),
            Request::Limits { all } => Response::Limits(views::limits(&state.engine, all)),
            Request::SharedResources => Response::SharedResources(views::shared_resources(&state.engine)),
            Request::JobGroup(r) => crate::job_groups::request(state, &caller, r, t, &mut records),
            Request::Reconfig | Request::QueueControl { .. } | Request::HostControl { .. } | Request::Shutdown
                if !is_admin(state, &caller) =>
            {
                Response::Error(NOT_ADMIN.into())
            }
            Request::Reconfig => reconfig(state, t, &mut records),
            Request::QueueControl { queue, open } => {
                if state.engine.queue_names().any(|q| q == queue) {
                    done_or_error(keep(state, t, &mut records, Record::QueueChanged { queue, open }))
                } else {
                    Response::Error(format!("Queue <{queue}>: No such queue"))
                }
            }
            Request::HostControl { host, open } => {
                if state.engine.host_index(&host).is_some() {
                    done_or_error(keep(state, t, &mut records, Record::HostChanged { host, up: open }))
                } else {
                    Response::Error(format!("Host <{host}>: No such host"))
                }
            }
            Request::Shutdown => {
                stop = true;
                Response::Done
            }
        };
        let wrote = records.len() > before;
        replies.push((reply, Answer::Response(response), wrote.then_some(submission)));
    }
    // Durable before any answer (see `writer`). Not written: what wrote is
    // refused, and the state is taken up again from the log (`degraded`).
    let stamped = records.into_iter().map(|r| (t, r)).collect();
    let failed = crate::writer::write(state, stamped, crate::writer::After::Replies(replies), wake);
    Handled { stop, failed }
}

/// What handling a batch came to: whether to stop, and why the log could
/// not be written if it could not.
pub(crate) struct Handled {
    pub(crate) stop: bool,
    pub(crate) failed: Option<String>,
}

/// Applies a record now and keeps it for the batch's one commit (made
/// before any answer goes out); a record `apply` refuses changes nothing
/// and is never logged (it would stop a restart's replay). The refusal is
/// the caller's to word for its user ([`ApplyError::reason`]: what was
/// refused, without the job's id, which the answer names its own way).
pub(crate) fn keep(state: &mut State, t: Time, records: &mut Vec<Record>, record: Record) -> Result<(), ApplyError> {
    state.apply(t, &record)?;
    records.push(record);
    Ok(())
}

/// `Done`, or the refusal's reason as the answer's error.
pub(crate) fn done_or_error(r: Result<(), ApplyError>) -> Response {
    r.map_or_else(|e| Response::Error(e.reason()), |()| Response::Done)
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
    let refused = |e: &dyn std::fmt::Display| {
        let e = e.to_string();
        let newline = if e.ends_with('\n') { "" } else { "\n" };
        Response::Error(format!("{e}{newline}No reconfiguration: the running configuration is kept."))
    };
    let source = match Source::read(Path::new(&dir)) {
        Ok(s) => s.keeping_found(&state.source),
        Err(e) => return refused(&e),
    };
    // The same files: nothing to do, and nothing to log (a replay skips
    // a configuration it already runs on, so doing anything here would
    // make the restarted state differ).
    if source == state.source {
        return Response::Reconfigured { warnings: String::new() };
    }
    match state.reconfigure(t, source.clone()) {
        Ok(warnings) => {
            records.push(Record::Reconfigured { config_dir: source.dir, files: source.files });
            Response::Reconfigured { warnings }
        }
        Err(e) => refused(&e),
    }
}

impl From<Heard> for Input {
    fn from(h: Heard) -> Input {
        Input::Supervisor(h)
    }
}
