//! allotd's side of the agents (with `[cluster]` in `allot.toml`): every
//! configured host runs `allot-agent`, and a job runs on the first host of
//! its allocation through that host's agent (see `allot_agent::wire`).
//!
//! A host's state, as `bhosts` shows it, comes from its agent: `unavail`
//! until its agent says hello, `ok` while it is heard from, `unreach`
//! after `unreach_after` seconds without a word (no new work; its jobs
//! are left running, as a job lease), `unavail` after `unavail_after`
//! (its jobs end EXIT, `lost`). Each change is a [`Record::HostReach`]:
//! passes after it depend on it, so a replay sees it too.
//!
//! Reconciling with an agent that says hello (after either side was
//! away): a run it holds that allotd does not (ended, an older attempt)
//! is told to go ([`ToAgent::Forget`]); a run allotd holds that the agent
//! does not is started again if the agent never acknowledged its start in
//! this allotd's life (the agent never had it: an agent keeps a run's
//! files until its end is acknowledged, so it never ran), and ends EXIT
//! as lost if it did.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use allot_agent::wire::{FromAgent, Hello, Load, Resources, ToAgent};
use allot_config::cluster::ClusterSettings;
use allot_engine::{JobId, Time};
use allot_exec::ExitReport;
use allot_store::{Book, Reach, Record};
use tokio::sync::mpsc::UnboundedSender;

use crate::state::State;

/// What the agents' connections tell the dispatcher.
pub enum AgentInput {
    /// An agent whose certificate names `hello.host` said hello; `link`
    /// reaches it.
    Hello {
        conn: u64,
        hello: Box<Hello>,
        link: UnboundedSender<ToAgent>,
    },
    Said {
        conn: u64,
        host: String,
        message: FromAgent,
    },
    Lost {
        conn: u64,
        host: String,
        why: String,
    },
}

/// One configured host, as its agent is heard.
#[derive(Default)]
pub struct Live {
    /// The connection to its agent.
    pub link: Option<(u64, UnboundedSender<ToAgent>)>,
    /// When its agent was last heard from (or, after allotd's start, when
    /// allotd started: the lease of its running jobs starts then).
    pub heard: Option<Instant>,
    pub resources: Option<Resources>,
    pub load: Option<Load>,
    /// Its last [`SKEW_SAMPLES`] clock measures, each its clock as sent
    /// less allotd's as heard ([`Live::skew`]).
    pub skews: std::collections::VecDeque<i64>,
}

/// How many of a host's last clock measures its skew is taken from.
const SKEW_SAMPLES: usize = 8;

impl Live {
    /// A measure of its clock: `clock` as its agent sent it, heard at
    /// `now`. A message's time on the way (a stopped agent's heartbeat
    /// sent seconds after it was stamped, a slow link) can only make a
    /// measure lower than the skew, never higher: the skew is the largest
    /// recent one, so that a delayed heartbeat does not move a host's
    /// ends late (a step of its clock ages out in a few heartbeats).
    pub fn clock_heard(&mut self, clock: u64, now: u64, fresh: bool) {
        if fresh {
            self.skews.clear();
        }
        self.skews.push_back(clock as i64 - now as i64);
        while self.skews.len() > SKEW_SAMPLES {
            self.skews.pop_front();
        }
    }

    /// How far its clock is ahead of allotd's, seconds: the largest of its
    /// recent measures ([`Live::clock_heard`]); 0 when none was said.
    pub fn skew(&self) -> i64 {
        self.skews.iter().copied().max().unwrap_or(0)
    }
}

pub struct Cluster {
    pub settings: ClusterSettings,
    pub hosts: BTreeMap<String, Live>,
    /// Running jobs whose agent acknowledged their start in this allotd's
    /// life.
    pub acked: BTreeSet<JobId>,
    /// Ends heard, to collect at the next tick: host, job, attempt, report.
    pub ends: Vec<(String, JobId, u32, ExitReport)>,
    /// Runs to end as lost at the next tick, and why.
    pub lost: Vec<(JobId, String)>,
    /// Host states to log at the next tick.
    pub reach_changes: Vec<(String, Reach)>,
    /// The hosts whose CPUs the configuration does not give, and the
    /// CPUs their agents said they have that the configuration does not
    /// have yet (logged as a reconfiguration at the next tick).
    pub cpus_open: BTreeSet<String>,
    pub cpus_heard: BTreeMap<String, u32>,
    /// After a restart: the hosts of running jobs not heard from yet, and
    /// until when their agents are waited for before the first pass
    /// ([`recovering`]).
    pub awaiting: BTreeSet<String>,
    pub awaiting_until: Option<Instant>,
    /// Measures heard, to record at the next tick.
    pub samples: Vec<allot_agent::measure::Sample>,
    /// Ends collected and not yet durable: acknowledged to their agent
    /// once they are (job, attempt, host).
    pub unacked: BTreeMap<JobId, (u32, String)>,
    /// Jobs whose end is being written: once it is, their tasks end on
    /// these hosts (their attempt, their allocation's hosts).
    pub ending: BTreeMap<JobId, (u32, Vec<String>)>,
    /// Each running job's last measure on each host it uses: its usage is
    /// their sum.
    pub usage: BTreeMap<JobId, BTreeMap<String, (f64, u64)>>,
    /// When the last pass that started jobs decided (microseconds since
    /// the epoch), told with each start for the load generator's figures.
    pub decided_us: Option<u64>,
    /// `bpeek`s waiting for an agent: by tag, the host, the job as shown,
    /// and where the answer goes.
    pub peeks: BTreeMap<u64, (String, allot_proto::JobRef, tokio::sync::oneshot::Sender<crate::serve::Answer>)>,
    pub next_peek: u64,
    /// The `bsub`s attached to interactive jobs' terminals (see `terminal`).
    pub terminals: BTreeMap<JobId, crate::terminal::TermLink>,
}

impl Cluster {
    pub fn new(settings: ClusterSettings, hosts: impl Iterator<Item = String>) -> Cluster {
        Cluster {
            settings,
            hosts: hosts.map(|h| (h, Live::default())).collect(),
            acked: BTreeSet::new(),
            ends: Vec::new(),
            lost: Vec::new(),
            reach_changes: Vec::new(),
            cpus_open: BTreeSet::new(),
            cpus_heard: BTreeMap::new(),
            awaiting: BTreeSet::new(),
            awaiting_until: None,
            samples: Vec::new(),
            unacked: BTreeMap::new(),
            ending: BTreeMap::new(),
            usage: BTreeMap::new(),
            decided_us: None,
            peeks: BTreeMap::new(),
            next_peek: 0,
            terminals: BTreeMap::new(),
        }
    }

    /// The same cluster on a new configuration: hosts still configured
    /// keep their state and link; new ones are `unavail` until a hello.
    pub fn reconfigured(mut self, settings: ClusterSettings, hosts: impl Iterator<Item = String>) -> Cluster {
        let mut kept = BTreeMap::new();
        for h in hosts {
            let live = self.hosts.remove(&h).unwrap_or_default();
            kept.insert(h, live);
        }
        self.hosts = kept;
        self.settings = settings;
        self
    }

    /// Whether `host` will be `reach` once what was heard is applied: the
    /// last change queued for it, else its state as logged (`book`).
    fn will_be(&self, book: &Book, host: &str) -> Reach {
        self.reach_changes.iter().rev().find(|(h, _)| h == host).map_or_else(|| book.reach(host), |(_, r)| *r)
    }

    /// Queues a change of `host`'s state to `to` when its state as it will
    /// be satisfies `when`.
    fn change(&mut self, book: &Book, host: &str, to: Reach, when: impl Fn(Reach) -> bool) {
        if when(self.will_be(book, host)) {
            self.reach_changes.push((host.to_string(), to));
        }
    }

    /// The `bpeek`s waiting for `host`'s agent, whose link is gone: each
    /// is told so.
    fn fail_peeks(&mut self, host: &str) {
        let waiting: Vec<u64> = self.peeks.iter().filter(|(_, p)| p.0 == host).map(|(&t, _)| t).collect();
        for tag in waiting {
            if let Some((_, shown, reply)) = self.peeks.remove(&tag) {
                let why = format!("Job <{shown}>: host {host} was lost before its output could be read");
                let _ = reply.send(crate::serve::Answer::Response(allot_proto::Response::Error(why)));
            }
        }
    }

    pub(crate) fn send(&self, host: &str, message: ToAgent) -> bool {
        match self.hosts.get(host).and_then(|l| l.link.as_ref()) {
            Some((_, link)) => link.send(message).is_ok(),
            None => false,
        }
    }
}

/// The host a job runs on: the first of its allocation.
pub(crate) fn first_host(state: &State, job: JobId) -> Option<(String, u32)> {
    let j = state.book.jobs.get(&job)?;
    Some((j.alloc.first()?.0.clone(), j.attempt))
}

/// After allotd's start: every host whose agent was heard from before
/// gets a lease from now (its jobs run on while it reconnects).
pub(crate) fn started(state: &mut State) {
    let running: BTreeSet<String> = state
        .book
        .running
        .iter()
        .filter_map(|id| state.book.jobs.get(id))
        .flat_map(|j| j.alloc.iter().map(|(h, _)| h.clone()))
        .collect();
    let Some(c) = &mut state.cluster else { return };
    let book = &state.book;
    let now = state.now;
    for (_, live) in c.hosts.iter_mut().filter(|(h, _)| book.reach(h) != Reach::Unavail) {
        live.heard = Some(now);
    }
    c.awaiting = running.into_iter().filter(|h| c.hosts.contains_key(h) && book.reach(h) != Reach::Unavail).collect();
    c.awaiting_until = Some(now + Duration::from_secs(c.settings.unreach_after));
}

/// Whether allotd, just restarted, still waits for the agents of its
/// running jobs' hosts (for `unreach_after` at most) before its first
/// pass: an end that happened while it was down is then logged when it
/// happened, before any record of the restart's time (a log's times never
/// go back, so an end heard after a pass would be charged until then).
pub(crate) fn recovering(state: &State) -> bool {
    state
        .cluster
        .as_ref()
        .is_some_and(|c| !c.awaiting.is_empty() && c.awaiting_until.is_some_and(|until| state.now < until))
}

/// Handles what an agent's connection says.
pub(crate) fn heard(state: &mut State, input: AgentInput) {
    match input {
        AgentInput::Hello { conn, hello, link } => hello_from(state, conn, *hello, link),
        AgentInput::Lost { conn, host, why } => {
            let Some(c) = &mut state.cluster else { return };
            let Some(live) = c.hosts.get_mut(&host) else { return };
            if live.link.as_ref().is_some_and(|l| l.0 == conn) {
                eprintln!("allotd: host {host}: lost its agent ({why})");
                live.link = None;
                // No new work until it is back; its jobs run on (their
                // lease is `unavail_after` from its last word).
                c.change(&state.book, &host, Reach::Unreach, |now| now == Reach::Ok);
                c.fail_peeks(&host);
            }
        }
        AgentInput::Said { conn, host, message } => {
            let Some(c) = &mut state.cluster else { return };
            let Some(live) = c.hosts.get_mut(&host).filter(|l| l.link.as_ref().is_some_and(|l| l.0 == conn)) else {
                return;
            };
            live.heard = Some(state.now);
            c.change(&state.book, &host, Reach::Ok, |now| now != Reach::Ok);
            let Some(live) = c.hosts.get_mut(&host) else { return };
            match message {
                // Commands are taken by the connection's reader (`remote`).
                FromAgent::Hello(_) | FromAgent::Command { .. } => {}
                FromAgent::Heartbeat(beat) => {
                    let beat_jobs: Vec<JobId> = beat.usage.iter().map(|u| JobId(u.0)).collect();
                    live.clock_heard(beat.clock, crate::serve::now().0, false);
                    live.load = Some(beat.load);
                    for (job, cpu, mem) in beat.usage {
                        let hosts = c.usage.entry(JobId(job)).or_default();
                        hosts.insert(host.clone(), (cpu, mem));
                        let (cpu, mem) = hosts.values().fold((0.0, 0), |a, u| (a.0 + u.0, a.1 + u.1));
                        c.samples.push((job, cpu, mem));
                    }
                    other_hosts_told(state, &host, &beat_jobs);
                }
                FromAgent::Launch(l) => crate::blaunch::launch(state, &host, *l),
                FromAgent::Peeked { tag, output } => {
                    let Some(c) = &mut state.cluster else { return };
                    if c.peeks.get(&tag).is_some_and(|p| p.0 == host) {
                        if let Some((_, job, reply)) = c.peeks.remove(&tag) {
                            let response = match output {
                                Ok(output) => allot_proto::Response::Peek { job, output },
                                Err(e) => allot_proto::Response::Error(format!("Job <{job}>: {e}")),
                            };
                            let _ = reply.send(crate::serve::Answer::Response(response));
                        }
                    }
                }
                // A resize notification command's task reports to allotd.
                FromAgent::TaskOutput { origin, .. } if origin == crate::resize::NOTIFY_ORIGIN => {}
                FromAgent::TaskEnded { origin, tag, exit, .. } if origin == crate::resize::NOTIFY_ORIGIN => {
                    crate::resize::remote_ended(state, &host, tag, exit);
                }
                FromAgent::TaskOutput { origin, tag, index, stderr, data, offset } => {
                    crate::blaunch::forward(state, &origin, ToAgent::TaskOutput { tag, index, stderr, data, offset });
                }
                FromAgent::Resume(l) => crate::blaunch::resume(state, &host, *l),
                FromAgent::TaskEnded { origin, tag, index, exit } => {
                    crate::blaunch::forward(state, &origin, ToAgent::TaskEnded { tag, index, exit });
                }
                FromAgent::Started { job, attempt } => {
                    let job = JobId(job);
                    if first_host(state, job).is_some_and(|(h, a)| h == host && a == attempt) {
                        if let Some(c) = &mut state.cluster {
                            c.acked.insert(job);
                        }
                    }
                }
                FromAgent::Ended { job, attempt, report } => ended(state, &host, JobId(job), attempt, report),
                message @ (FromAgent::TermStarted { .. }
                | FromAgent::TermOutput { .. }
                | FromAgent::TermClosed { .. }) => crate::terminal::heard(state, &host, message),
            }
        }
    }
}

/// An end an agent reports: collected at the next tick if it is the run
/// allotd holds; acknowledged later if it is being written; otherwise the
/// agent is told to forget it.
fn ended(state: &mut State, host: &str, job: JobId, attempt: u32, report: ExitReport) {
    let current =
        state.book.running.contains(&job) && first_host(state, job).is_some_and(|(h, a)| h == host && a == attempt);
    let Some(c) = &mut state.cluster else { return };
    if current {
        if !c.ends.iter().any(|e| e.1 == job) {
            c.ends.push((host.to_string(), job, attempt, report));
        }
    } else if c.unacked.get(&job).is_none_or(|(a, _)| *a != attempt) {
        c.send(host, ToAgent::Forget { job: job.0, attempt });
    }
}

/// What `host` measured of its tasks of `jobs` is passed on to each job's
/// first host, with what its other hosts measured, for the job's report
/// there (`ToAgent::OtherHosts`). Sent before the tasks' ends are (the
/// agent measures a task as it ends, then tells its end), on the same
/// link as they go, so the report has the tasks' last measures.
fn other_hosts_told(state: &State, host: &str, jobs: &[JobId]) {
    let Some(c) = &state.cluster else { return };
    for &job in jobs {
        let Some((first, attempt)) = first_host(state, job).filter(|(first, _)| first != host) else { continue };
        let Some(hosts) = c.usage.get(&job) else { continue };
        let (cpu_time, max_rss_kb) =
            hosts.iter().filter(|(h, _)| **h != first).fold((0.0, 0), |s, (_, u)| (s.0 + u.0, s.1 + u.1));
        c.send(&first, ToAgent::OtherHosts { job: job.0, attempt, cpu_time, max_rss_kb });
    }
}

/// A multi-host job's end: what its first host's supervisor measured, with
/// what its other hosts (its `blaunch` tasks there) last measured added,
/// CPU time and memory, so that the job's account after its end is the
/// sum over all its hosts, as while it ran. An agent measures a task's run
/// again as each task ends, so little after the last measure is missed.
fn with_other_hosts(state: &State, job: JobId, first: &str, report: ExitReport) -> ExitReport {
    let Some(hosts) = state.cluster.as_ref().and_then(|c| c.usage.get(&job)) else { return report };
    let (cpu, mem) =
        hosts.iter().filter(|(h, _)| h.as_str() != first).fold((0.0, 0), |s, (_, u)| (s.0 + u.0, s.1 + u.1));
    ExitReport {
        cpu_time: ((report.cpu_time + cpu) * 100.0).round() / 100.0,
        max_rss_kb: report.max_rss_kb + mem,
        ..report
    }
}

fn hello_from(state: &mut State, conn: u64, hello: Hello, link: UnboundedSender<ToAgent>) {
    let host = hello.host.clone();
    let unreach_after = match &state.cluster {
        Some(c) => Duration::from_secs(c.settings.unreach_after),
        None => return refuse(&link, "allotd runs without agents (no [cluster] in its allot.toml)".into()),
    };
    if hello.version != allot_agent::wire::VERSION {
        let why = format!("protocol version {}, allotd's is {}", hello.version, allot_agent::wire::VERSION);
        return refuse(&link, why);
    }
    let Some(c) = &mut state.cluster else { return };
    let heartbeat = c.settings.heartbeat;
    let Some(live) = c.hosts.get_mut(&host) else {
        return refuse(&link, format!("host {host} is not in allotd's configuration"));
    };
    // A second agent for a connected host is refused; one whose link has
    // been silent past `unreach_after` is taken as that link's end.
    if live.link.is_some() && live.heard.is_some_and(|h| state.now.saturating_duration_since(h) < unreach_after) {
        eprintln!("allotd: host {host}: a second agent refused (one is connected)");
        return refuse(&link, format!("host {host} already has a connected agent"));
    }
    let _ = link.send(ToAgent::Welcome { heartbeat });
    live.link = Some((conn, link));
    live.heard = Some(state.now);
    // A clock of 0 is none said.
    match hello.resources.clock {
        0 => live.skews.clear(),
        clock => live.clock_heard(clock, crate::serve::now().0, true),
    }
    if live.skew().abs() > 60 {
        eprintln!("allotd: host {host}: its clock is {} s off allotd's", live.skew());
    }
    if c.cpus_open.contains(&host) && hello.resources.ncpus > 0 {
        c.cpus_heard.insert(host.clone(), hello.resources.ncpus);
    }
    live.resources = Some(hello.resources);
    c.awaiting.remove(&host);
    c.change(&state.book, &host, Reach::Ok, |now| now != Reach::Ok);
    eprintln!("allotd: host {host}: agent connected, {} jobs held", hello.jobs.len());
    let held: BTreeMap<JobId, u32> = hello.jobs.iter().map(|h| (JobId(h.job), h.attempt)).collect();
    // Tasks of runs that are over.
    for (job, attempt) in hello.tasks {
        let id = JobId(job);
        let current =
            state.book.running.contains(&id) && state.book.jobs.get(&id).is_some_and(|j| j.attempt == attempt);
        if !current {
            if let Some(c) = &state.cluster {
                c.send(&host, ToAgent::EndTasks { job, attempt });
            }
        }
    }
    for h in hello.jobs {
        let job = JobId(h.job);
        match h.ended {
            Some(report) => ended(state, &host, job, h.attempt, report),
            None => {
                let current = state.book.running.contains(&job)
                    && first_host(state, job).is_some_and(|(f, a)| f == host && a == h.attempt);
                let Some(c) = &mut state.cluster else { return };
                if current {
                    c.acked.insert(job);
                } else {
                    c.send(&host, ToAgent::Forget { job: h.job, attempt: h.attempt });
                }
            }
        }
    }
    // Runs of this host the agent does not hold.
    let mine: Vec<JobId> = state
        .book
        .running
        .iter()
        .copied()
        .filter(|&job| first_host(state, job).is_some_and(|(f, _)| f == host) && !held.contains_key(&job))
        .collect();
    for job in mine {
        let acked = state.cluster.as_ref().is_some_and(|c| c.acked.contains(&job));
        if acked {
            let why = format!("lost: the agent of host {host} no longer holds it");
            if let Some(c) = &mut state.cluster {
                c.lost.push((job, why));
            }
        } else {
            start(state, job);
        }
    }
}

fn refuse(link: &UnboundedSender<ToAgent>, why: String) {
    let _ = link.send(ToAgent::Refused { why });
}

/// Sends a job's start to the agent of its first host; one whose agent is
/// not connected is sent when it says hello. (Its agent says why it cannot
/// run, if it cannot: an owner unknown there, a spec it cannot write.)
pub(crate) fn start(state: &mut State, job: JobId) {
    let Some(j) = state.book.jobs.get(&job) else { return };
    let alloc = j.alloc.clone();
    let user = j.record.spec.user.clone();
    let Some((host, attempt)) = first_host(state, job) else { return };
    let account = state.accounts.lookup(&user);
    let Some(mut spec) = crate::running::exec_spec(state, job, &alloc, account) else { return };
    // An interactive job on another host than bsub's (allotd's): its
    // agent makes the terminal and relays it (see `terminal`).
    if let Some(asked) = spec.interactive.as_mut() {
        asked.relay = host != state.host;
    }
    if held_back() {
        return;
    }
    if let Some(c) = &mut state.cluster {
        let decided_us = c.decided_us;
        c.send(&host, ToAgent::Start { attempt, user, spec: Box::new(spec), decided_us });
    }
}

/// For the test of allotd killed between a start's record and its
/// sending (`ALLOT_TEST_HOLD_STARTS`, debug builds only): starts are
/// recorded and never sent.
fn held_back() -> bool {
    cfg!(debug_assertions) && std::env::var_os("ALLOT_TEST_HOLD_STARTS").is_some()
}

/// `bpeek` of a job that ran on `host`: its agent reads the files; the
/// answer goes to `reply` when it comes (an error at once when the host's
/// agent is not connected).
pub(crate) fn peek(
    state: &mut State,
    (host, job, shown, user): (String, u64, allot_proto::JobRef, String),
    (out, err): (allot_exec::OutputFile, allot_exec::OutputFile),
    reply: tokio::sync::oneshot::Sender<crate::serve::Answer>,
) {
    let Some(c) = &mut state.cluster else { return };
    c.next_peek += 1;
    let tag = c.next_peek;
    if c.send(&host, ToAgent::Peek { tag, job, user, out, err }) {
        c.peeks.insert(tag, (host, shown, reply));
    } else {
        let why = format!("Job <{shown}>: its output is on host {host}, which cannot be reached now");
        let _ = reply.send(crate::serve::Answer::Response(allot_proto::Response::Error(why)));
    }
}

/// Sends a signal to a job through its host's agent: `false` when the
/// agent is not connected (send again later).
pub(crate) fn signal(state: &State, job: JobId, signal: nix::sys::signal::Signal) -> bool {
    let (Some(c), Some((host, attempt))) = (&state.cluster, first_host(state, job)) else { return false };
    c.send(&host, ToAgent::Signal { job: job.0, attempt, signal: signal as i32 })
}

/// The tick's part: host states that change (by what was heard, or by
/// silence), ends heard, runs lost, and measures, as records at `t`.
pub(crate) fn collect(state: &mut State, t: Time) -> Vec<(Time, Record)> {
    crate::terminal::sweep(state);
    let Some(c) = &mut state.cluster else { return Vec::new() };
    let (unreach, unavail) =
        (Duration::from_secs(c.settings.unreach_after), Duration::from_secs(c.settings.unavail_after));
    let mut out = Vec::new();
    // CPUs an agent found for a host the configuration leaves open: the
    // configuration again with them, as `badmin reconfig` would log it.
    let heard = std::mem::take(&mut c.cpus_heard);
    if !heard.is_empty() {
        let mut found = allot_config::detected::found(&state.source.files);
        let before = found.clone();
        found.extend(heard);
        if found != before {
            let files = allot_config::detected::with_found(state.source.files.clone(), &found);
            out.push((t, Record::Reconfigured { config_dir: state.source.dir.clone(), files }));
        }
    }
    let Some(c) = &mut state.cluster else { return out };
    // What each host's state will be once the changes heard are applied:
    // one record for each that changes (a connection lost and made again
    // within a tick changes nothing).
    let mut will_be: BTreeMap<String, Reach> = BTreeMap::new();
    for (host, reach) in std::mem::take(&mut c.reach_changes) {
        will_be.insert(host, reach);
    }
    for (host, &reach) in &will_be {
        if state.book.reach(host) != reach {
            out.push((t, Record::HostReach { host: host.clone(), reach }));
        }
    }
    let mut gone = Vec::new();
    let mut lost_links = Vec::new();
    for (host, live) in &mut c.hosts {
        let silent = live.heard.map_or(Duration::MAX, |h| state.now.saturating_duration_since(h));
        let reach = will_be.get(host).copied().unwrap_or_else(|| state.book.reach(host));
        if reach != Reach::Unavail && silent >= unavail {
            eprintln!("allotd: host {host}: unavail (its agent silent for {} s); its jobs are lost", silent.as_secs());
            out.push((t, Record::HostReach { host: host.clone(), reach: Reach::Unavail }));
            // Its agent, if it comes back, says hello again and is told
            // which runs to forget.
            live.link = None;
            lost_links.push(host.clone());
            gone.push(host.clone());
        } else if reach == Reach::Ok && silent >= unreach {
            eprintln!("allotd: host {host}: unreach (its agent silent for {} s)", silent.as_secs());
            out.push((t, Record::HostReach { host: host.clone(), reach: Reach::Unreach }));
        }
    }
    for host in lost_links {
        c.fail_peeks(&host);
    }
    let mut lost = std::mem::take(&mut c.lost);
    let ends = std::mem::take(&mut c.ends);
    let samples = std::mem::take(&mut c.samples);
    for host in &gone {
        for &job in &state.book.running {
            let on = state.book.jobs.get(&job).is_some_and(|j| j.alloc.iter().any(|(h, _)| h == host));
            if on {
                lost.push((job, format!("lost: host {host} became unavailable")));
            }
        }
    }
    for (host, job, attempt, report) in ends {
        if !state.book.running.contains(&job) {
            continue;
        }
        // Its host's time, made allotd's: a host whose clock is off by
        // minutes still has its jobs end when they did (the skew is
        // measured at each hello and heartbeat), and never before they
        // started or after now.
        let skew = state.cluster.as_ref().and_then(|c| c.hosts.get(&host)).map_or(0, Live::skew);
        let ended_at = report.ended_at.saturating_add_signed(-skew);
        let report = with_other_hosts(state, job, &host, report);
        crate::running::ended(state, job, report, ended_at, t, &mut out);
        let hosts = hosts_of(state, job);
        if let Some(c) = &mut state.cluster {
            c.unacked.insert(job, (attempt, host));
            c.ending.insert(job, (attempt, hosts));
        }
    }
    let mut seen = BTreeSet::new();
    for (job, why) in lost {
        if state.book.running.contains(&job)
            && seen.insert(job)
            && !out.iter().any(|(_, r)| r.job() == Some(job) && matches!(r, Record::Finished { .. }))
        {
            eprintln!("allotd: job {job}: {why}");
            if let Some((host, attempt)) = first_host(state, job) {
                if let Some(c) = &state.cluster {
                    c.send(&host, ToAgent::Forget { job: job.0, attempt });
                }
            }
            // A rerunnable job goes back to pending as its end is
            // collected, and runs again as its next attempt.
            if state.rerunnable(job) {
                out.push((t, Record::Requeued { job, hold: false }));
            }
            out.push((t, crate::running::finished_unrun(job, 255, why)));
            let attempt = state.book.jobs.get(&job).map_or(0, |j| j.attempt);
            let hosts = hosts_of(state, job);
            if let Some(c) = &mut state.cluster {
                c.ending.insert(job, (attempt, hosts));
            }
        }
    }
    if !samples.is_empty() {
        state.measured.get_or_insert_with(Vec::new).extend(samples);
    }
    out
}

/// `lshosts` and `lsload`: each configured host as configured, with what
/// its agent reports (with agents) or, without agents, this machine's own
/// figures for the host that is this machine (the other hosts of such a
/// configuration are names only, and have no load).
pub(crate) fn host_loads(state: &State) -> Vec<allot_proto::hosts::HostLoad> {
    use allot_proto::hosts::{HostLoad, Load as Shown};
    let shown = |l: &Load| Shown { r1m: l.r1m, r15m: l.r15m, ut: l.ut, procs: l.procs, mem: l.mem, swp: l.swp };
    let here = state.cluster.is_none().then(allot_agent::host::load);
    state
        .engine
        .config()
        .hosts
        .iter()
        .map(|h| {
            let mut resources: Vec<String> = h
                .attrs
                .resources
                .iter()
                .filter(|(_, r)| matches!(r, allot_engine::resreq::Resource::Bool))
                .map(|(name, _)| name.clone())
                .collect();
            resources.sort();
            let mut out = HostLoad {
                name: h.name.clone(),
                status: "ok".into(),
                host_type: h.attrs.host_type.clone(),
                model: h.attrs.model.clone(),
                ncpus: h.cpus,
                maxmem: h.attrs.maxmem,
                maxswp: None,
                resources,
                load: None,
            };
            match &state.cluster {
                Some(c) => {
                    let live = c.hosts.get(&h.name);
                    let reach = state.book.reach(&h.name);
                    out.status = reach.name().into();
                    if let Some(r) = live.and_then(|l| l.resources.as_ref()) {
                        out.host_type = out.host_type.or(Some(r.host_type.clone()));
                        out.maxmem = out.maxmem.or(Some(r.maxmem));
                        out.maxswp = Some(r.maxswp);
                    }
                    out.load = live.filter(|_| reach == Reach::Ok).and_then(|l| l.load.as_ref()).map(shown);
                }
                None if h.name == state.host => out.load = here.as_ref().map(shown),
                None => {}
            }
            out
        })
        .collect()
}

/// The hosts of a job's allocation.
fn hosts_of(state: &State, job: JobId) -> Vec<String> {
    state.book.jobs.get(&job).map(|j| j.alloc.iter().map(|(h, _)| h.clone()).collect()).unwrap_or_default()
}

/// Once ends are durable: each agent is told its end is had, and the
/// job's tasks end on every host it had.
pub(crate) fn acknowledge(state: &mut State, ended: &[JobId]) {
    let Some(c) = &mut state.cluster else { return };
    for job in ended {
        c.acked.remove(job);
        c.usage.remove(job);
        if let Some((attempt, host)) = c.unacked.remove(job) {
            c.send(&host, ToAgent::Acked { job: job.0, attempt });
        }
        if let Some((attempt, hosts)) = c.ending.remove(job) {
            for h in hosts {
                c.send(&h, ToAgent::EndTasks { job: job.0, attempt });
            }
        }
    }
}

#[cfg(test)]
mod skew_tests {
    use super::Live;

    /// A heartbeat stamped before its agent was stopped 7 s and heard after
    /// does not make the host's clock 7 s behind; a real step back ages
    /// out.
    #[test]
    fn a_late_heartbeat_does_not_move_the_skew() {
        let mut live = Live::default();
        live.clock_heard(1_000, 1_000, true);
        live.clock_heard(1_005, 1_005, false);
        live.clock_heard(1_005, 1_012, false);
        assert_eq!(live.skew(), 0);
        for k in 0..8 {
            live.clock_heard(1_020 + k, 1_050 + k, false);
        }
        assert_eq!(live.skew(), -30, "a clock 30 s behind, heard 8 times");
    }
}
