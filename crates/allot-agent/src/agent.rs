//! `allot-agent`: runs on every compute host, as root, and carries out
//! allotd's work there. It keeps one TLS connection to allotd (made again
//! whenever it is lost), says what the host has and which jobs it holds,
//! heartbeats with the host's load and its jobs' measures, starts jobs
//! under the same per-job supervisors allotd uses on its own host (so a
//! job outlives the agent, and a restarted agent finds its jobs by their
//! files), signals them, and reports their ends until allotd has them.
//! See [`crate::wire`] for the protocol.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use allot_exec::{ExitReport, JobFiles};
use tokio::io::{ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_rustls::client::TlsStream;

use crate::spool::Task;
use crate::supervisors::{Heard, Supervisors};
use crate::tasks::{Launches, TaskEvent};

mod task_side;
use crate::wire::{self, FromAgent, Heartbeat, Held, Hello, LaunchEvent, ToAgent};

/// How an agent is started.
#[derive(Clone, Debug)]
pub struct Options {
    /// allotd's agents' address, `HOST:PORT`.
    pub server: String,
    /// This host's name, as the configuration and its certificate name it.
    pub host: String,
    /// Where `allot keygen`'s files are: `ca.pem`, `HOST.pem`, `HOST-key.pem`.
    pub tls_dir: PathBuf,
    /// The agent's own state: its jobs' files and default output.
    pub state_dir: PathBuf,
    /// `allot-supervise`.
    pub supervisor: PathBuf,
    /// The local address to connect from (a test host's loopback address).
    pub bind: Option<std::net::IpAddr>,
    /// Bytes of each stream of a `blaunch` task kept in its spool at most
    /// (`allot_exec::task`).
    pub task_spool_max: u64,
}

type Link = WriteHalf<TlsStream<TcpStream>>;

enum Event {
    Heard(Heard),
    Task(TaskEvent),
    Term(crate::terminal::TermEvent),
    Connected { conn: u64, writer: Link },
    Message { conn: u64, message: ToAgent },
    Lost { conn: u64, why: String },
    Command(crate::commands::Asked),
}

impl From<crate::commands::Asked> for Event {
    fn from(a: crate::commands::Asked) -> Event {
        Event::Command(a)
    }
}

impl From<Heard> for Event {
    fn from(h: Heard) -> Event {
        Event::Heard(h)
    }
}

impl From<TaskEvent> for Event {
    fn from(t: TaskEvent) -> Event {
        Event::Task(t)
    }
}

impl From<crate::terminal::TermEvent> for Event {
    fn from(t: crate::terminal::TermEvent) -> Event {
        Event::Term(t)
    }
}

/// A job's run on this host.
struct Run {
    attempt: u32,
    ended: Option<ExitReport>,
    /// allotd has no such run: it was killed, and its end is not reported.
    forgotten: bool,
    /// Signals that wait for its process group to exist.
    signals: Vec<nix::sys::signal::Signal>,
}

struct Agent {
    opts: Options,
    files: JobFiles,
    supervisors: Supervisors,
    accounts: crate::accounts::Accounts,
    cgroups: Option<allot_exec::cgroup::Cgroups>,
    runs: BTreeMap<u64, Run>,
    /// The connection, once it is made, and whether allotd took the hello.
    link: Option<(u64, Link, bool)>,
    heartbeat: Duration,
    /// `blaunch` tasks running here, and this host's `blaunch` requests.
    tasks: Vec<Task>,
    launches: Launches,
    /// The CPU's ticks at the last heartbeat, for its utilization.
    cpu: Option<(u64, u64)>,
    /// Interactive jobs' terminals relayed from here, by job.
    terminals: BTreeMap<u64, crate::terminal::Relay>,
    /// Commands of this host's users carried to allotd, awaiting answers.
    commands: crate::commands::Pending,
}

/// Runs the agent until SIGTERM or SIGINT; its jobs go on after it.
pub async fn run(opts: Options) -> Result<(), String> {
    // Its jobs' owners reach the local socket in it (for `blaunch`), and
    // nothing else: its job files and output are in 0700 directories.
    {
        use std::os::unix::fs::PermissionsExt;
        let dir = &opts.state_dir;
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711))
            .map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let files = JobFiles::new(&opts.state_dir).map_err(|e| format!("{}: {e}", opts.state_dir.display()))?;
    let client = crate::tls::client_config(&opts.tls_dir, &opts.host)?;
    let tag = format!("agent-{}", allot_exec::cgroup::tag_of(&opts.state_dir));
    let (tx, mut rx) = mpsc::channel::<Event>(1024);
    let mut agent = Agent {
        supervisors: Supervisors::new(opts.supervisor.clone(), &opts.state_dir),
        opts,
        files,
        accounts: Default::default(),
        cgroups: allot_exec::cgroup::Cgroups::detect(&tag),
        runs: BTreeMap::new(),
        link: None,
        heartbeat: Duration::from_secs(10),
        tasks: Vec::new(),
        launches: Launches::default(),
        cpu: crate::host::cpu_ticks(),
        terminals: BTreeMap::new(),
        commands: Default::default(),
    };
    if agent.cgroups.is_none() {
        eprintln!(
            "allot-agent: no writable cgroup v2: what a job leaves behind on this host is killed by its session \
             only (a process that makes a session of its own outlives its job)"
        );
    }
    agent.take_up(&tx);
    agent.tasks = crate::spool::recorded(&agent.opts.state_dir);
    crate::tasks::listen(&agent.opts.state_dir, tx.clone())?;
    crate::commands::listen(&agent.opts.state_dir, tx.clone())?;
    let mut term =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).map_err(|e| e.to_string())?;
    let mut sweep = tokio::time::interval(Duration::from_secs(1));
    // The tasks' spools, looked at while there are tasks.
    let mut tail = tokio::time::interval(Duration::from_millis(50));
    tail.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut beat = tokio::time::interval(agent.heartbeat);
    let mut conns = 0u64;
    let mut connecting = false;
    let mut retry = tokio::time::Instant::now();
    loop {
        if agent.link.is_none() && !connecting && tokio::time::Instant::now() >= retry {
            conns += 1;
            connecting = true;
            tokio::spawn(connect(agent.opts.clone(), client.clone(), conns, tx.clone()));
        }
        tokio::select! {
            event = rx.recv() => {
                let Some(event) = event else { break };
                match event {
                    Event::Connected { conn, writer } => {
                        connecting = false;
                        agent.link = Some((conn, writer, false));
                        let hello = FromAgent::Hello(agent.hello());
                        agent.send(&hello).await;
                    }
                    Event::Lost { conn, why } => {
                        if agent.link.as_ref().is_some_and(|l| l.0 == conn) || agent.link.is_none() {
                            if agent.link.take().is_some() {
                                eprintln!("allot-agent: lost allotd: {why}");
                            }
                            agent.commands.fail_all(&format!("host {}: lost allotd", agent.opts.host));
                            connecting = false;
                            retry = tokio::time::Instant::now() + Duration::from_millis(500);
                        }
                    }
                    Event::Message { conn, message } => {
                        if agent.link.as_ref().is_some_and(|l| l.0 == conn) {
                            if let Some(pause) = agent.handle(message, &tx).await {
                                retry = tokio::time::Instant::now() + pause;
                                beat = tokio::time::interval(agent.heartbeat);
                            }
                        }
                    }
                    Event::Heard(Heard::Ended(job)) => agent.look(job).await,
                    Event::Task(event) => agent.task_event(event).await,
                    Event::Term(event) => agent.term_event(event).await,
                    Event::Command(asked) => agent.command(asked).await,
                    Event::Heard(Heard::Unsupervised(job)) => {
                        if let Err(e) = agent.supervisors.start_alone(job, &tx) {
                            agent.cannot_start(job, format!("cannot start its supervisor: {e}")).await;
                        }
                    }
                }
            }
            _ = sweep.tick() => agent.sweep().await,
            _ = tail.tick(), if !agent.tasks.is_empty() => agent.tail().await,
            _ = beat.tick() => agent.beat().await,
            _ = term.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    eprintln!("allot-agent: stopped; its jobs go on under their supervisors");
    Ok(())
}

/// Connects to allotd (trying again, at most every 5 s, until it
/// answers), then reads what it says.
async fn connect(opts: Options, client: std::sync::Arc<rustls::ClientConfig>, conn: u64, tx: mpsc::Sender<Event>) {
    let mut pause = Duration::from_millis(200);
    let mut said = false;
    let stream = loop {
        match dial(&opts, client.clone()).await {
            Ok(s) => break s,
            Err(e) => {
                if !said {
                    eprintln!("allot-agent: cannot reach allotd at {} ({e}); trying again", opts.server);
                    said = true;
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(5));
            }
        }
    };
    let (mut reader, writer): (ReadHalf<_>, _) = tokio::io::split(stream);
    if tx.send(Event::Connected { conn, writer }).await.is_err() {
        return;
    }
    let why = loop {
        match wire::read::<ToAgent>(&mut reader).await {
            Ok(message) => {
                if tx.send(Event::Message { conn, message }).await.is_err() {
                    return;
                }
            }
            Err(e) => break e.to_string(),
        }
    };
    let _ = tx.send(Event::Lost { conn, why }).await;
}

async fn dial(opts: &Options, client: std::sync::Arc<rustls::ClientConfig>) -> std::io::Result<TlsStream<TcpStream>> {
    let addr = tokio::net::lookup_host(&opts.server)
        .await?
        .next()
        .ok_or_else(|| std::io::Error::other("the address names no host"))?;
    let socket = if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    if let Some(ip) = opts.bind {
        socket.bind(std::net::SocketAddr::new(ip, 0))?;
    }
    let tcp = tokio::time::timeout(Duration::from_secs(10), socket.connect(addr))
        .await
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
    let _ = tcp.set_nodelay(true);
    let tls = tokio_rustls::TlsConnector::from(client);
    tokio::time::timeout(Duration::from_secs(10), tls.connect(crate::tls::daemon_name(), tcp))
        .await
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))?
}

/// An end as this host tells it: by its clock (the supervisor's time is
/// the machine's; see `host::clock_offset`).
fn on_wire(mut report: ExitReport) -> ExitReport {
    report.ended_at = report.ended_at.saturating_add_signed(crate::host::clock_offset());
    report
}

impl Agent {
    /// After a start: the jobs whose files are here. A job whose
    /// supervisor never started (the agent died between its spec and its
    /// supervisor) gets one now: it never ran.
    fn take_up(&mut self, tx: &mpsc::Sender<Event>) {
        for job in self.files.jobs() {
            let Ok(spec) = self.files.read_spec(job) else {
                self.files.clean(job);
                continue;
            };
            let ended = self.files.read_exit(job);
            let unstarted = ended.is_none() && !self.files.started(job);
            if unstarted && matches!(self.files.try_lock(job), Ok(Some(_))) {
                if let Err(e) = self.supervisors.start(job, tx) {
                    eprintln!("allot-agent: job {job}: cannot start its supervisor: {e}");
                }
            }
            self.runs.insert(job, Run { attempt: spec.attempt, ended, forgotten: false, signals: Vec::new() });
        }
        if !self.runs.is_empty() {
            eprintln!("allot-agent: {} jobs taken up", self.runs.len());
        }
    }

    fn hello(&self) -> Hello {
        Hello {
            version: wire::VERSION,
            host: self.opts.host.clone(),
            resources: crate::host::resources(),
            jobs: self
                .runs
                .iter()
                .filter(|(_, r)| !r.forgotten)
                .map(|(&job, r)| Held { job, attempt: r.attempt, ended: r.ended.clone().map(on_wire) })
                .collect(),
            tasks: {
                let mut runs: Vec<(u64, u32)> = self.tasks.iter().map(|t| (t.run.job, t.run.attempt)).collect();
                runs.dedup();
                runs
            },
        }
    }

    /// Says something to allotd; a connection that does not take it in
    /// 10 s is lost (and made again).
    async fn send(&mut self, message: &FromAgent) {
        let Some((_, writer, _)) = &mut self.link else { return };
        let sent = tokio::time::timeout(Duration::from_secs(10), wire::write(writer, message)).await;
        if !matches!(sent, Ok(Ok(()))) {
            eprintln!("allot-agent: lost allotd while writing to it");
            self.link = None;
        }
    }

    /// What allotd said; a pause before connecting again when it refused.
    async fn handle(&mut self, message: ToAgent, tx: &mpsc::Sender<Event>) -> Option<Duration> {
        match message {
            ToAgent::Welcome { heartbeat } => {
                if let Some(link) = &mut self.link {
                    link.2 = true;
                }
                self.heartbeat = Duration::from_secs(heartbeat.max(1));
                eprintln!("allot-agent: {} connected to allotd at {}", self.opts.host, self.opts.server);
                self.resume_all().await;
                return Some(Duration::ZERO);
            }
            ToAgent::Refused { why } => {
                eprintln!("allot-agent: allotd refused this agent: {why}");
                self.link = None;
                return Some(Duration::from_secs(5));
            }
            ToAgent::Start { attempt, user, spec, .. } => self.start(attempt, &user, *spec, tx).await,
            ToAgent::Signal { job, attempt, signal } => {
                let Ok(signal) = nix::sys::signal::Signal::try_from(signal) else { return None };
                for t in self.tasks.iter().filter(|t| t.run.job == job && t.run.attempt == attempt) {
                    if let Some(pgid) = t.pgid(&self.opts.state_dir) {
                        let _ = allot_exec::signal_group(pgid, signal);
                    }
                }
                if let Some(run) = self.runs.get_mut(&job).filter(|r| r.attempt == attempt && r.ended.is_none()) {
                    run.signals.push(signal);
                }
                self.deliver(job);
            }
            ToAgent::OtherHosts { job, attempt, cpu_time, max_rss_kb } => {
                if self.runs.get(&job).is_some_and(|r| r.attempt == attempt && r.ended.is_none()) {
                    let _ = self.files.write_other_hosts(job, cpu_time, max_rss_kb);
                }
            }
            ToAgent::Acked { job, attempt } => {
                if self.runs.get(&job).is_some_and(|r| r.attempt == attempt && r.ended.is_some()) {
                    self.runs.remove(&job);
                    self.clean(job);
                }
            }
            ToAgent::Task { origin, tag, index, job, attempt, user, spec } => {
                self.start_task((origin, tag, index), (job, attempt), &user, *spec, tx).await;
            }
            ToAgent::TaskOutput { tag, index, stderr, data, offset } => {
                self.launches.tell(tag, LaunchEvent::Output { index, stderr, data, offset });
            }
            ToAgent::Resend { origin, tag } => self.resend(&origin, tag),
            ToAgent::TaskEnded { tag, index, exit } => self.launches.tell(tag, LaunchEvent::Ended { index, exit }),
            ToAgent::TermInput { job, attempt, data, eof } => {
                if let Some(r) = self.terminals.get(&job).filter(|r| r.attempt == attempt) {
                    r.send(crate::terminal::TermIn::Data(data, eof));
                }
            }
            ToAgent::TermResize { job, attempt, rows, cols } => {
                if let Some(r) = self.terminals.get(&job).filter(|r| r.attempt == attempt) {
                    r.send(crate::terminal::TermIn::Resize(rows, cols));
                }
            }
            ToAgent::LaunchRefused { tag, why } => self.launches.tell(tag, LaunchEvent::Refused { why }),
            ToAgent::Peek { tag, job, user, mut out, mut err } => {
                self.place_default_output(job, &mut out, &mut err);
                // As root, a file the job named is read as its owner (and
                // one of an owner this host does not know, as nobody's).
                let owner = allot_exec::owner::is_root().then(|| {
                    self.accounts.lookup(&user).map_or((u32::MAX - 1, u32::MAX - 1), |a| (a.owner.uid, a.owner.gid))
                });
                let output = crate::peek::output_of(&out, &err, owner);
                self.send(&FromAgent::Peeked { tag, output }).await;
            }
            ToAgent::Answer { tag, frames, done } => self.commands.answer(tag, frames, done),
            ToAgent::EndTasks { job, attempt } => self.end_tasks(job, attempt).await,
            ToAgent::Forget { job, attempt } => {
                let run = self.runs.get_mut(&job).filter(|r| r.attempt == attempt)?;
                if run.ended.is_some() {
                    self.runs.remove(&job);
                    self.clean(job);
                } else {
                    eprintln!("allot-agent: job {job}: allotd has no such run; ending it");
                    run.forgotten = true;
                    run.signals.push(nix::sys::signal::Signal::SIGKILL);
                    self.deliver(job);
                }
            }
        }
        None
    }

    /// Starts a run allotd asked for; one this host has already is
    /// answered as it stands (a start sent again after a lost connection).
    async fn start(&mut self, attempt: u32, user: &str, mut spec: allot_exec::ExecSpec, tx: &mpsc::Sender<Event>) {
        let job = spec.job;
        if let Some(run) = self.runs.get(&job) {
            if run.attempt == attempt {
                let said = match &run.ended {
                    Some(report) => FromAgent::Ended { job, attempt, report: on_wire(report.clone()) },
                    None => FromAgent::Started { job, attempt },
                };
                return self.send(&said).await;
            }
            // An older run allotd is done with.
            if let Some(pgid) = self.files.read_pgid(job).filter(|_| run.ended.is_none()) {
                let _ = allot_exec::signal_group(pgid, nix::sys::signal::Signal::SIGKILL);
            }
            self.runs.remove(&job);
            self.files.clean(job);
        }
        spec.attempt = attempt;
        self.place_default_output(job, &mut spec.stdout, &mut spec.stderr);
        spec.cgroup = self.cgroups.as_ref().map(|c| c.job_dir(job));
        self.runs.insert(job, Run { attempt, ended: None, forgotten: false, signals: Vec::new() });
        self.on_this_host(job, &mut spec.env);
        // As root, a job runs as its owner on this host, and only as them.
        if allot_exec::owner::is_root() {
            match self.accounts.lookup(user) {
                Some(a) => spec.run_as = Some(a.owner),
                None => {
                    spec.run_as = None;
                    let _ = self.files.write_spec(&spec);
                    let why = format!("user `{user}` does not exist on host {}", self.opts.host);
                    return self.cannot_start(job, why).await;
                }
            }
        } else {
            spec.run_as = None;
        }
        // A terminal relayed from here: the supervisor reaches it on this
        // agent's socket for the job.
        if let Some(asked) = spec.interactive.as_mut().filter(|i| i.relay) {
            let owner = spec
                .run_as
                .as_ref()
                .map_or_else(|| (nix::unistd::getuid().as_raw(), nix::unistd::getgid().as_raw()), |o| (o.uid, o.gid));
            let kind = (asked.pty, asked.size);
            match crate::terminal::open(&self.opts.state_dir, (job, attempt), kind, owner, tx.clone()) {
                Ok((path, relay)) => {
                    asked.socket = path.display().to_string();
                    self.terminals.insert(job, relay);
                }
                Err(why) => return self.cannot_start(job, format!("cannot make its terminal: {why}")).await,
            }
        }
        if let Err(e) = self.files.write_spec(&spec) {
            return self.cannot_start(job, format!("cannot write its spec: {}", allot_exec::os_message(&e))).await;
        }
        if let Some(c) = &self.cgroups {
            c.ensure();
        }
        if let Err(e) = self.supervisors.start(job, tx) {
            return self.cannot_start(job, format!("cannot start its supervisor: {e}")).await;
        }
        self.send(&FromAgent::Started { job, attempt }).await;
    }

    /// A job's output files as allotd names them: the ones the job did not
    /// name are this agent's own.
    fn place_default_output(&self, job: u64, out: &mut allot_exec::OutputFile, err: &mut allot_exec::OutputFile) {
        for (file, ext) in [(out, "out"), (err, "err")] {
            if !file.named {
                file.path = allot_exec::default_output(&self.opts.state_dir, job, ext);
            }
        }
    }

    /// The local socket's path, as jobs are told it.
    fn socket(&self) -> String {
        crate::tasks::socket_path(&self.opts.state_dir).display().to_string()
    }

    /// What an interactive job's relay says, for allotd.
    async fn term_event(&mut self, event: crate::terminal::TermEvent) {
        use crate::terminal::TermEvent;
        let said = match event {
            TermEvent::Started { job, attempt, pty } => FromAgent::TermStarted { job, attempt, pty },
            TermEvent::Output { job, attempt, stderr, data } => FromAgent::TermOutput { job, attempt, stderr, data },
            TermEvent::Closed { job, attempt } => {
                if self.terminals.get(&job).is_some_and(|r| r.attempt == attempt) {
                    self.terminals.remove(&job);
                }
                FromAgent::TermClosed { job, attempt }
            }
        };
        self.send(&said).await;
    }

    /// A command of this host's asks allotd, through this agent's link;
    /// while there is none it is told so at once.
    async fn command(&mut self, a: crate::commands::Asked) {
        if !self.link.as_ref().is_some_and(|l| l.2) {
            let why = format!("allotd cannot be reached from host {} now (its agent is not connected)", self.opts.host);
            let _ = a.reply.send(Some((vec![crate::commands::error_frame(&why)], None)));
            let _ = a.reply.send(None);
            return;
        }
        let tag = self.commands.add(a.uid, a.reply);
        self.send(&FromAgent::Command { tag, uid: a.uid, request: a.request }).await;
        if self.link.is_none() {
            self.commands.fail_all(&format!("host {}: lost allotd", self.opts.host));
        }
    }

    /// A job's environment as its processes here see it, its run's or a
    /// task's alike: this agent's socket (`blaunch`, and the commands
    /// through it), and the job's host file on this host.
    fn on_this_host(&self, job: u64, env: &mut Vec<(String, String)>) {
        let hosts = env.iter().find(|(k, _)| k == "LSB_HOSTS").map(|(_, v)| v.clone()).unwrap_or_default();
        let mut extra = vec![("ALLOT_AGENT_SOCKET".to_string(), self.socket())];
        if let Ok(path) = crate::tasks::write_hostfile(&self.opts.state_dir, job, &hosts) {
            extra.push(("LSB_DJOB_HOSTFILE".to_string(), path.display().to_string()));
        }
        for (k, v) in extra {
            env.retain(|(name, _)| *name != k);
            env.push((k, v));
        }
    }

    /// Forgets a run's files.
    fn clean(&self, job: u64) {
        self.files.clean(job);
        crate::tasks::remove_hostfile(&self.opts.state_dir, job);
    }

    /// A run that cannot start ends EXIT with the reason, reported as any
    /// end is (and kept, so a restarted agent still reports it).
    async fn cannot_start(&mut self, job: u64, reason: String) {
        eprintln!("allot-agent: job {job} cannot start: {reason}");
        self.ended_unrun(job, 1, reason).await;
    }

    /// A run that ends without its command's end known: its report is
    /// written (so a restarted agent still has it) and reported.
    async fn ended_unrun(&mut self, job: u64, exit: i32, reason: String) {
        let report = ExitReport::unrun(exit, reason);
        let _ = self.files.write_report(job, &report);
        self.ended(job, report).await;
    }

    /// Looks whether a job whose supervisor ended has its report, or died.
    async fn look(&mut self, job: u64) {
        if self.runs.get(&job).is_none_or(|r| r.ended.is_some()) {
            return;
        }
        if let Some(report) = self.files.read_exit(job) {
            return self.ended(job, report).await;
        }
        if let Some((exit, reason)) = self.files.orphan_end(job) {
            self.ended_unrun(job, exit, reason.into()).await;
        }
    }

    async fn ended(&mut self, job: u64, report: ExitReport) {
        let Some(run) = self.runs.get_mut(&job) else { return };
        run.ended = Some(report.clone());
        if run.forgotten {
            self.runs.remove(&job);
            self.clean(job);
            return;
        }
        let attempt = run.attempt;
        if self.link.as_ref().is_some_and(|l| l.2) {
            self.send(&FromAgent::Ended { job, attempt, report: on_wire(report) }).await;
        }
    }

    /// Sends a job's waiting signals once its process group exists.
    fn deliver(&mut self, job: u64) {
        let Some(run) = self.runs.get_mut(&job) else { return };
        if run.signals.is_empty() {
            return;
        }
        let Some(pgid) = self.files.read_pgid(job) else { return };
        for signal in run.signals.drain(..) {
            let _ = allot_exec::signal_group(pgid, signal);
        }
    }

    /// Every second: ends not heard of (supervisors of an earlier agent),
    /// supervisors that died, and signals that waited.
    async fn sweep(&mut self) {
        let running: Vec<u64> = self.runs.iter().filter(|(_, r)| r.ended.is_none()).map(|(&j, _)| j).collect();
        for job in running {
            self.deliver(job);
            self.look(job).await;
        }
    }

    async fn beat(&mut self) {
        if !self.link.as_ref().is_some_and(|l| l.2) {
            return;
        }
        let jobs: Vec<u64> = self.runs.iter().filter(|(_, r)| r.ended.is_none()).map(|(&j, _)| j).collect();
        let plan = crate::measure::Sampling {
            jobs,
            files: self.files.clone(),
            cgroups: self.cgroups.as_ref().map(|c| c.base().to_path_buf()),
            tasks: self.tasks.clone(),
            state_dir: self.opts.state_dir.clone(),
        };
        let usage = tokio::task::spawn_blocking(move || plan.sample()).await.unwrap_or_default();
        let mut load = crate::host::load();
        let ticks = crate::host::cpu_ticks();
        load.ut = self.cpu.zip(ticks).and_then(|(before, now)| crate::host::utilization(before, now));
        self.cpu = ticks;
        let beat = Heartbeat { load, usage, clock: crate::host::clock() };
        self.send(&FromAgent::Heartbeat(beat)).await;
    }
}
