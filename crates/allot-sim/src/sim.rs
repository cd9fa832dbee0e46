//! The discrete-event loop: workload submissions, job ends and the engine's
//! own wake-ups, in time order; one dispatch pass per instant at which
//! something happened.
//!
//! A job runs for its trace run time. Its requested time is its run limit
//! for scheduling, but by default a job that ran past it in the trace is
//! not killed, since the trace shows it ran; with `kill_at_limit` it ends
//! at its limit with exit 137 (killed).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use allot_engine::{Decision, Engine, Event, HostIdx, JobId, Setting, Slots, Time};
use allot_store::effects::{RunEnd, end_event};

use crate::report::push_decimal;
use crate::workload::{Workload, WorkloadJob};

#[derive(Clone, Debug, Default)]
pub struct SimOptions {
    pub kill_at_limit: bool,
    /// Times (seconds from the workload's start) to report share tables at.
    pub report_at: Vec<u64>,
    /// Note what happens, in order, in [`Outcome::events`] (to write the
    /// run as allotd's log: `allot bench replay`).
    pub record_events: bool,
    /// A workload job (its number, and its index in its array or 0) to
    /// explain at each report time ([`Engine::explain`]).
    pub explain: Option<(u64, u32)>,
    /// Every pass ends with a parked reservation let go, as in the daemon
    /// (for tests: the same decisions as keeping it,
    /// [`allot_engine::Setting::KeepParked`]).
    pub let_go_each_pass: bool,
}

/// A job that ran.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRecord {
    /// The job's number in the workload.
    pub id: u64,
    /// Its index when it is an element of a job array (`-J "a[1-10]"`),
    /// 0 otherwise.
    pub index: u32,
    pub user: String,
    pub queue: String,
    pub submit: u64,
    pub start: u64,
    pub end: u64,
    pub slots: u32,
    /// `hostA*4 hostB*2`.
    pub hosts: String,
    /// Its multifactor priority when it started (none under LSF's
    /// policies).
    pub priority: Option<f64>,
    pub exit: i32,
    /// Seconds it spent suspended by preemption (within start to end).
    pub suspended: u64,
}

/// A workload job the engine refused, with its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    pub id: u64,
    pub line: u64,
    pub reason: String,
}

#[derive(Debug, Default)]
pub struct Outcome {
    pub records: Vec<JobRecord>,
    pub rejected: Vec<Rejected>,
    /// Jobs still pending when nothing more could happen: each, with why
    /// it waits (its pending reason then), in workload order.
    pub never_started: Vec<Rejected>,
    /// (time, what the callback returned) for each report time.
    pub reports: Vec<(u64, serde_json::Value)>,
    /// At each report time, why the job `explain` names waits (`None`: it
    /// is not pending then, or not submitted yet).
    pub explained: Vec<(u64, Option<allot_engine::explain::Explanation>)>,
    /// Dispatch passes that considered jobs ([`Engine::passes`]).
    pub passes: u64,
    /// With [`SimOptions::record_events`]: what happened, in order, with
    /// its time.
    pub events: Vec<(u64, SimEvent)>,
    /// Runs that ended with a code of their queue's REQUEUE_EXIT_VALUES
    /// and went back to pending (each run is a record).
    pub requeued: u64,
    /// Submissions refused for now by a pending threshold and sent again
    /// SUB_TRY_INTERVAL later, as `bsub` sends them
    /// (`allot_engine::pend_limits`).
    pub retried: u64,
    /// Jobs suspended by preemption (each suspension once).
    pub preempted: u64,
    /// The workload's commands on its jobs that changed nothing, each with
    /// its line and why (as allotd would have answered it).
    pub refused_actions: Vec<Rejected>,
}

/// What happened in a run, for [`SimOptions::record_events`].
#[derive(Clone, Debug, PartialEq)]
pub enum SimEvent {
    /// The workload's job at `line` (its place in the workload) was
    /// taken, as engine job `job` (an array's first element).
    Submit { line: usize, job: u64 },
    /// A dispatch pass (whether it considered jobs or found nothing
    /// changed).
    Pass,
    /// A job started on these hosts (index, slots).
    Start { job: u64, alloc: Vec<(HostIdx, Slots)> },
    /// A run ended with this exit code.
    End { job: u64, exit: i32 },
    /// A running job was suspended, preempted by job `by`.
    Suspend { job: u64, by: u64 },
    /// A job suspended by preemption was resumed.
    Resume { job: u64 },
    /// An autoresizable job grew (the engine's pass decides it again).
    Grow { job: u64 },
    /// The workload's command `action` (its place in
    /// [`Workload::actions`]) changed these jobs.
    Act { action: usize, jobs: Vec<u64> },
}

/// The exit code of a job killed at its run limit: 128 + SIGKILL, as
/// allotd's jobs end.
pub const KILLED_EXIT: i32 = 137;

struct Running {
    job: usize,
    /// Its index in its job array (0: no array).
    index: u32,
    queue: String,
    start: u64,
    alloc: Vec<(HostIdx, Slots)>,
    killed: bool,
    priority: Option<f64>,
    /// When it ends, as it runs now; since when it is suspended, and the
    /// seconds it was suspended before: its end moves on by each
    /// suspension (an entry of `ends` for another time is stale).
    end: u64,
    suspended: Option<u64>,
    paused: u64,
}

/// Replays `w` through `engine`. `report` renders the engine's share
/// tables at a report time; `progress` hears how many jobs were submitted.
pub fn run(
    engine: &mut Engine,
    w: &Workload,
    opts: &SimOptions,
    report: &dyn Fn(&Engine, Time) -> serde_json::Value,
    progress: &mut dyn FnMut(u64),
) -> Outcome {
    let mut out = Outcome::default();
    let mut reports: Vec<u64> = opts.report_at.clone();
    reports.sort_unstable();
    reports.dedup();
    let mut reports = reports.into_iter().peekable();
    let mut ends: BinaryHeap<Reverse<(u64, JobId)>> = BinaryHeap::new();
    // Each pending job's workload job, and its index when it is an
    // element of a job array (0 otherwise).
    let mut pending: BTreeMap<JobId, (usize, u32)> = BTreeMap::new();
    let mut running: BTreeMap<JobId, Running> = BTreeMap::new();
    // What requeued jobs have left to run.
    let mut left: BTreeMap<JobId, u64> = BTreeMap::new();
    let mut next = 0;
    // Refused for now by a pending threshold: sent again then.
    let mut retries: BTreeSet<(u64, usize)> = BTreeSet::new();
    let mut named = Named::default();
    let mut acting = crate::actions::Acting::new(w);
    let mut next_action = 0;
    let mut last = 0u64;
    // At a report time: the share tables, and why the job asked about
    // waits.
    let report_at = |engine: &Engine, r: u64, named: &Named, out: &mut Outcome| {
        out.reports.push((r, report(engine, Time(r))));
        if let Some(which) = opts.explain {
            let name = |id| named.workload_name(id);
            out.explained.push((r, named.engine_id(which).and_then(|id| engine.explain_named(id, Time(r), &name))));
        }
    };
    // The replay asks no host query between passes (a report asks share
    // tables, and lets go first all the same).
    let _ = engine.apply(Time(0), &Event::Setting(Setting::KeepParked(!opts.let_go_each_pass)));
    loop {
        // An end that moved (its job was suspended, or ended otherwise)
        // is no event: no pass runs for it, as none runs in allotd.
        while let Some(&Reverse((end, id))) = ends.peek() {
            match running.get(&id).is_none_or(|r| r.end != end || r.suspended.is_some()) {
                true => ends.pop(),
                false => break,
            };
        }
        let t_submit = w.jobs.get(next).map(|j| j.submit);
        let t_end = ends.peek().map(|Reverse((t, _))| *t);
        let t_wake = engine.next_wakeup().map(|t| t.0).filter(|&t| t >= last);
        let t_retry = retries.first().map(|&(t, _)| t);
        let t_action = w.actions.get(next_action).map(|a| a.at);
        let Some(t) = [t_submit, t_end, t_wake, t_retry, t_action].into_iter().flatten().min() else { break };
        while let Some(&r) = reports.peek().filter(|&&r| r < t) {
            let _ = engine.apply(Time(r), &Event::LetGoParked);
            report_at(engine, r, &named, &mut out);
            reports.next();
        }
        last = t;
        while w.actions.get(next_action).is_some_and(|a| a.at == t) {
            act(engine, (&mut acting, &named), (t, next_action), w, opts, &mut running, &mut out);
            next_action += 1;
        }
        while let Some(&Reverse((end, id))) = ends.peek() {
            if end != t {
                break;
            }
            ends.pop();
            if running.get(&id).is_some_and(|r| r.end != t || r.suspended.is_some()) {
                continue;
            }
            if let Some(mut r) = running.remove(&id) {
                let job = &w.jobs[r.job];
                let exit = if r.killed { KILLED_EXIT } else { job.exit };
                out.records.push(record(engine, job, &mut r, t));
                if opts.record_events {
                    out.events.push((t, SimEvent::End { job: id.0, exit }));
                }
                // Ended as allotd ends a run (`effects::end_event`): a
                // queue's REQUEUE_EXIT_VALUES sends it back to pending. It
                // resumes where it stopped, as the interruptible backfill
                // jobs the spec describes checkpoint (a time slice "must be
                // longer than at least one useful iteration of the job"):
                // every run makes progress, and a replay ends.
                let killed = r.killed.then_some(allot_store::Term::RunLimit);
                let end = RunEnd {
                    exit,
                    cpu_time: job.cpu_time,
                    killed,
                    unrun: false,
                    requeue: None,
                    pre_exec: None,
                    unheard: 0,
                };
                let ends = end_event(engine, id, end, Time(t));
                if ends.requeued.is_some() {
                    let runtime = left.get(&id).copied().unwrap_or(job.runtime);
                    left.insert(id, runtime.saturating_sub((t - r.start).saturating_sub(r.paused)).max(1));
                    pending.insert(id, (r.job, r.index));
                    out.requeued += 1;
                } else if job.energy > 0.0 {
                    let _ = engine.apply(Time(t), &Event::Energy { job: id, joules: job.energy });
                }
                for event in ends.events() {
                    let _ = engine.apply(Time(t), event);
                }
            }
        }
        // Those sent again first: they were refused before the new ones came.
        let mut batch: Vec<usize> = Vec::new();
        while let Some((_, i)) = retries.first().copied().filter(|&(rt, _)| rt == t) {
            retries.pop_first();
            batch.push(i);
        }
        while w.jobs.get(next).is_some_and(|j| j.submit == t) {
            batch.push(next);
            next += 1;
        }
        for i in batch {
            let job = &w.jobs[i];
            // As allotd's bsub resolves it; `-w` names jobs of this workload.
            let resolved = allot_config::submission::resolve(&job.submission, engine, &|_| false, &mut |target| {
                named.target(&job.submission.user, target)
            });
            let submitted = resolved.map_err(|e| (e, false)).and_then(|r| {
                let indices = r.array.map(|a| a.indices);
                // Kept only for a job a command switches.
                let kept = acting.wants(job.id).then(|| r.spec.clone());
                engine
                    .apply(Time(t), &Event::Submit(r.spec))
                    .map_err(|e| (e.to_string(), e.retry_later()))
                    .map(|id| (id, r.name, indices, kept))
            });
            match submitted {
                Ok((Some(first), name, indices, kept)) => {
                    // An array's elements are its first id's successors.
                    let elements: Vec<(u32, JobId)> = match indices {
                        Some(ix) => ix.iter().enumerate().map(|(k, &i)| (i, JobId(first.0 + k as u64))).collect(),
                        None => vec![(0, first)],
                    };
                    for &(index, id) in &elements {
                        pending.insert(id, (i, index));
                    }
                    if let Some(spec) = kept {
                        acting.submitted(job.id, spec);
                    }
                    if opts.record_events {
                        out.events.push((t, SimEvent::Submit { line: i, job: first.0 }));
                    }
                    named.add(job, name, elements);
                }
                Ok((None, ..)) => {}
                Err((_, true)) => {
                    retries.insert((t + u64::from(engine.sub_try_interval()), i));
                    out.retried += 1;
                }
                Err((reason, false)) => out.rejected.push(Rejected { id: job.id, line: job.line, reason }),
            }
        }
        progress(next as u64);
        if opts.record_events {
            out.events.push((t, SimEvent::Pass));
        }
        for d in engine.schedule(Time(t)) {
            let (id, alloc) = match d {
                Decision::Start { job, alloc } => (job, alloc),
                Decision::Kill { .. } => continue,
                // An autoresizable job grew: it ends as it would have (the
                // trace's run time), on its larger allocation.
                Decision::Grow { job, alloc } => {
                    if let Some(r) = running.get_mut(&job) {
                        for (h, n) in alloc {
                            match r.alloc.iter_mut().find(|e| e.0 == h) {
                                Some(e) => e.1.0 += n.0,
                                None => r.alloc.push((h, n)),
                            }
                        }
                    }
                    if opts.record_events {
                        out.events.push((t, SimEvent::Grow { job: job.0 }));
                    }
                    continue;
                }
                Decision::Suspend { job, by } => {
                    if let Some(r) = running.get_mut(&job) {
                        r.suspended = Some(t);
                        out.preempted += 1;
                    }
                    if opts.record_events {
                        out.events.push((t, SimEvent::Suspend { job: job.0, by: by.0 }));
                    }
                    continue;
                }
                Decision::Resume { job } => {
                    if let Some(r) = running.get_mut(&job) {
                        let since = r.suspended.take().unwrap_or(t);
                        r.paused += t - since;
                        r.end += t - since;
                        ends.push(Reverse((r.end, job)));
                    }
                    if opts.record_events {
                        out.events.push((t, SimEvent::Resume { job: job.0 }));
                    }
                    continue;
                }
            };
            let Some((widx, index)) = pending.remove(&id) else { continue };
            let job = &w.jobs[widx];
            // The limit in force: the job's, its queue's RUNLIMIT, or what
            // an interruptible backfill start cut it to.
            let runtime = left.get(&id).copied().unwrap_or(job.runtime);
            let (end, killed) = match engine.job_run_limit(id) {
                Some(limit) if opts.kill_at_limit && runtime > limit => (t.saturating_add(limit), true),
                _ => (t.saturating_add(runtime), false),
            };
            ends.push(Reverse((end, id)));
            // What it reports as it runs (the trace gives one figure for
            // the whole run): reported as it starts.
            if let Some(mb) = job.memory_mb {
                let _ = engine.apply(Time(t), &Event::Memory { job: id, mb });
            }
            if job.gpus > 0 {
                let _ = engine.apply(Time(t), &Event::Gpus { job: id, count: job.gpus });
            }
            let queue = engine.job_queue(id).unwrap_or_default().to_string();
            let priority = engine.multifactor_priority(id).map(|p| p.0);
            if opts.record_events {
                out.events.push((t, SimEvent::Start { job: id.0, alloc: alloc.clone() }));
            }
            running.insert(
                id,
                Running { job: widx, index, queue, start: t, alloc, killed, priority, end, suspended: None, paused: 0 },
            );
        }
    }
    let _ = engine.apply(Time(last), &Event::Setting(Setting::KeepParked(false)));
    for r in reports {
        report_at(engine, r, &named, &mut out);
    }
    let mut never: Vec<Rejected> = pending
        .iter()
        .map(|(&id, &(widx, _))| {
            let job = &w.jobs[widx];
            let reason = engine.pending_reason(id, Time(last)).map_or_else(|| "pending".to_string(), |r| r.to_string());
            Rejected { id: job.id, line: job.line, reason }
        })
        .collect();
    never.sort_by_key(|r| r.line);
    out.never_started = never;
    out.passes = engine.passes();
    out
}

/// Carries out the workload's command `w.actions[k]` at `t` on the jobs it
/// names: a running job it changed is in the queue and on the hosts the
/// engine has for it now; a command that changed nothing is refused with
/// its line.
fn act(
    engine: &mut Engine,
    (acting, named): (&mut crate::actions::Acting, &Named),
    (t, k): (u64, usize),
    w: &Workload,
    opts: &SimOptions,
    running: &mut BTreeMap<JobId, Running>,
    out: &mut Outcome,
) {
    let a = &w.actions[k];
    let done = match named.by_id.get(&a.job) {
        Some(elements) => acting.act(engine, Time(t), a, elements),
        None => Err(format!("job {} is not submitted yet", a.job)),
    };
    match done {
        Ok(jobs) => {
            for id in &jobs {
                if let Some(r) = running.get_mut(id) {
                    r.queue = engine.job_queue(*id).unwrap_or_default().to_string();
                    r.alloc = engine.job_alloc(*id).unwrap_or_default();
                }
            }
            if opts.record_events {
                out.events.push((t, SimEvent::Act { action: k, jobs: jobs.iter().map(|j| j.0).collect() }));
            }
        }
        Err(reason) => out.refused_actions.push(Rejected { id: a.job, line: a.line, reason }),
    }
}

/// The workload's jobs as `-w` names them: by their number in the
/// workload (a JSON-lines job's line), or by `-J` name among the same
/// user's jobs (`*` matching any text), once submitted.
#[derive(Default)]
struct Named {
    /// Each workload job's engine jobs: itself, or its array's elements
    /// with their indices.
    by_id: BTreeMap<u64, Vec<(u32, JobId)>>,
    by_name: Vec<(String, String, JobId)>,
}

impl Named {
    fn add(&mut self, job: &WorkloadJob, name: Option<String>, elements: Vec<(u32, JobId)>) {
        if let Some(name) = name {
            self.by_name.extend(elements.iter().map(|&(_, id)| (job.submission.user.clone(), name.clone(), id)));
        }
        self.by_id.insert(job.id, elements);
    }

    /// The engine's job for a workload job and its index in its array.
    /// An engine job as the workload names it: `12`, or `12[3]` (a
    /// linear search: an explanation names few jobs).
    fn workload_name(&self, job: JobId) -> String {
        let found = self.by_id.iter().find_map(|(&n, ids)| ids.iter().find(|e| e.1 == job).map(|&(i, _)| (n, i)));
        match found {
            Some((n, 0)) => n.to_string(),
            Some((n, i)) => format!("{n}[{i}]"),
            None => job.to_string(),
        }
    }

    fn engine_id(&self, (id, index): (u64, u32)) -> Option<JobId> {
        self.by_id.get(&id)?.iter().find(|&&(i, _)| i == index).map(|&(_, job)| job)
    }

    fn target(&self, user: &str, target: allot_config::deps::DepTarget) -> Result<Vec<JobId>, String> {
        use allot_config::deps::DepTarget;
        match target {
            DepTarget::Id(n) => self
                .by_id
                .get(&n)
                .map(|ids| ids.iter().map(|&(_, id)| id).collect())
                .ok_or_else(|| format!("-w: job <{n}> is no job of this workload submitted before it")),
            DepTarget::Element(n, i) => self
                .by_id
                .get(&n)
                .and_then(|ids| ids.iter().find(|&&(index, _)| index == i && index > 0))
                .map(|&(_, id)| vec![id])
                .ok_or_else(|| format!("-w: job <{n}[{i}]> is no element of a job array of this workload")),
            DepTarget::Name(pattern) => {
                let ids: Vec<JobId> = self
                    .by_name
                    .iter()
                    .filter(|(u, name, _)| u == user && allot_config::deps::name_matches(&pattern, name))
                    .map(|&(_, _, id)| id)
                    .collect();
                if ids.is_empty() { Err(format!("-w: no job of {user}'s is named `{pattern}`")) } else { Ok(ids) }
            }
        }
    }
}

/// The record of `r`'s run, ended at `end`; the record takes its queue's
/// name (the run is over).
fn record(engine: &Engine, job: &WorkloadJob, r: &mut Running, end: u64) -> JobRecord {
    // Without `write!`: a record per job, an entry per host.
    let mut hosts = String::with_capacity(r.alloc.len() * 12);
    for &(h, n) in &r.alloc {
        if !hosts.is_empty() {
            hosts.push(' ');
        }
        hosts.push_str(engine.host_name(h));
        hosts.push('*');
        push_decimal(&mut hosts, u64::from(n));
    }
    JobRecord {
        id: job.id,
        index: r.index,
        user: job.submission.user.clone(),
        queue: std::mem::take(&mut r.queue),
        submit: job.submit,
        start: r.start,
        end,
        slots: r.alloc.iter().map(|a| a.1.0).sum(),
        hosts,
        priority: r.priority,
        exit: if r.killed { KILLED_EXIT } else { job.exit },
        suspended: r.paused,
    }
}
