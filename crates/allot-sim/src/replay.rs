//! allotd's history replayed through the engine, under the configuration
//! it ran with or under another (`allot sim --from STATE_DIR [--config
//! DIR]`).
//!
//! Each submission goes in again as typed, at its time, through the one
//! submission path (`allot_config::submission::resolve`); what users and
//! administrators did (kills, holds, modifications, requeues, closed hosts
//! and queues, hosts heard or lost) happens at its time; each job runs as
//! long as it ran, and what it used as it ran is reported at the same
//! moments of its run. The engine decides every start, reservation and
//! kill at a limit again.
//!
//! **When passes run.** allotd runs a dispatch pass whenever something
//! changed (at once after requests and job ends, and every 100 ms), and
//! its log records each pass that did anything, in order among the other
//! records. The replay runs those passes where they are. While a job's run
//! keeps the time it had (it started when it did in the log), what happened
//! to it happens where the log has it, so under the configuration it ran
//! with the replay makes every decision allotd made, at the same moment
//! and in the same order. Once the replay has decided anything otherwise
//! (another configuration), a run that moved ends and is measured at its
//! own times, each end followed by a pass, as allotd's tick does; and the
//! engine's own wake-ups (a reservation's end, a run limit) get a pass at
//! their time unless the log has one within the second, as the tick
//! would. Until then the log's passes are all there is: allotd may have
//! been stopped, or busy, when a wake-up fell due, and the log says when
//! it was handled.
//!
//! **`-w`** is replayed as allotd resolved it when the job was submitted:
//! which jobs a name meant then is part of what happened. Job ids are the
//! log's (a job another configuration refuses leaves its id unused), so
//! `-w` by id names the same job.
//!
//! **What a replay cannot know**: how long a job would have run had it
//! not been killed, or how long one runs that never started, or never
//! ended, before the log's end. A job killed at its run limit runs no
//! longer under a longer limit; a job with no recorded run that starts in
//! the replay runs until the end of the history.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use allot_engine::{Decision, Engine, Event, HostIdx, JobId, JobSpec, JobTable, Slots, Time};
use allot_store::effects::{RunEnd, end_event, usage_events};
use allot_store::{Book, Record, Term};

mod replayed;
mod resized;

pub use replayed::{Replayed, Starts, Waiting};

use crate::history::{History, HistoryError, Recorded, RecordedRun, Records, hosts_text};
use crate::sim::{JobRecord, KILLED_EXIT, Outcome, Rejected};

/// A job's run in the replay.
struct Live {
    start: u64,
    /// Its run in the log, when it has one (the job's `k`th).
    recorded: Option<usize>,
    /// It started when the log's run did: what happens to it happens where
    /// the log has it.
    in_sync: bool,
    /// When a moved run ends (stale heap entries are told by it).
    end_at: Option<u64>,
    /// Suspended by preemption since then; the seconds it was before; a
    /// moved run's running time left while it is.
    suspended: Option<u64>,
    paused: u64,
    left: Option<u64>,
    exit: i32,
    /// Killed, in the log or here: by whom, or at which limit.
    killed: Option<Term>,
    hosts: String,
    slots: u32,
    queue: String,
    priority: Option<f64>,
}

impl Live {
    /// How long it has run by `t`, its time suspended left out.
    fn ran(&self, t: u64) -> u64 {
        let now = self.suspended.map_or(0, |s| t.saturating_sub(s));
        t.saturating_sub(self.start).saturating_sub(self.paused).saturating_sub(now)
    }
}

struct Job {
    submit: u64,
    /// As its user was told it: its job number, and its index in its job
    /// array (0: no array).
    shown: (u64, u32),
    spec: JobSpec,
    /// Runs started in the replay so far, and in the log so far (its
    /// `Started` records passed).
    attempts: u32,
    seen: u32,
    run: Option<Live>,
    pending: bool,
    killed: Option<Term>,
    requeue: Option<bool>,
    charged: f64,
}

/// Something a moved run does at its own time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    /// Its end (the `u32`: its attempt).
    End(u32),
    /// Its `n`th measure.
    Usage(u32, usize),
}

/// Moved runs' ends and measures, in time order.
#[derive(Default)]
struct Dues {
    heap: BinaryHeap<Reverse<(u64, u64, Due)>>,
    /// The latest time one was due at: with the log's end, how far the
    /// replay goes (a run whose length the log does not know runs on, and
    /// reservations behind it would expire and be made again for ever).
    until: u64,
}

impl Dues {
    fn push(&mut self, (t, job, due): (u64, u64, Due)) {
        self.until = self.until.max(t);
        self.heap.push(Reverse((t, job, due)));
    }
}

struct Replay<'h> {
    h: &'h History,
    engine: Engine,
    /// Hosts and queues as the log leaves them, as allotd's.
    book: Book,
    recorded_config: bool,
    jobs: JobTable<Job>,
    due: Dues,
    source: (Option<String>, Vec<(String, String)>),
    out: Replayed,
    last: u64,
    notes: BTreeSet<String>,
    /// The replay has decided something otherwise than the log.
    diverged: bool,
    /// The last wake-up given a pass of its own: one that pass did not
    /// clear is not given another.
    woke: Option<u64>,
}

/// Replays `h` under the configuration it recorded (`under` `None`) or
/// under another; returns what happened and the engine at the end.
pub fn replay(h: &History, under: Option<Recorded>) -> Result<(Replayed, Engine), HistoryError> {
    let recorded_config = under.is_none();
    let config = match under {
        Some(c) => c,
        None => h.initial_config()?,
    };
    let source = match &h.first.1 {
        Record::Reconfigured { config_dir, files } => (config_dir.clone(), files.clone()),
        _ => (None, Vec::new()),
    };
    let mut r = Replay {
        h,
        engine: Engine::new(config.engine),
        book: Book::new(config.agents),
        recorded_config,
        jobs: JobTable::new(1),
        due: Dues::default(),
        source,
        out: Replayed {
            outcome: Outcome::default(),
            running: Vec::new(),
            waiting: Vec::new(),
            recorded: Starts::new(),
            replayed: Starts::new(),
            first_submit: h.first_submit,
            horizon: h.horizon,
            notes: Vec::new(),
            config: config.describe,
        },
        last: 0,
        notes: BTreeSet::new(),
        diverged: false,
        woke: None,
    };
    r.book.sync_hosts(&mut r.engine, h.first.0);
    r.run(&mut h.records()?)?;
    Ok(r.finish())
}

impl Replay<'_> {
    fn run(&mut self, records: &mut Records<'_>) -> Result<(), HistoryError> {
        loop {
            let t_rec = records.peek()?.map(|(t, _)| t.0);
            let t_due = self.due.heap.peek().map(|Reverse((t, ..))| *t);
            let t_wake = self.uncovered_wakeup();
            // At one time: moved runs' ends and measures first, then the
            // log's records, then a wake-up's pass.
            let next =
                [(t_due, 0), (t_rec, 1), (t_wake, 2)].into_iter().filter_map(|(t, class)| t.map(|t| (t, class))).min();
            let Some((t, class)) = next else { break };
            self.last = self.last.max(t);
            match class {
                0 => {
                    let Some(Reverse((t, job, due))) = self.due.heap.pop() else { break };
                    self.moved(t, job, due);
                }
                1 => {
                    let Some((at, record)) = records.peek()? else { break };
                    self.record(at.0, record);
                    records.advance();
                }
                _ => {
                    self.woke = Some(t);
                    self.pass(t, false);
                }
            }
        }
        Ok(())
    }

    /// The engine's next wake-up, unless a pass of the log comes within
    /// the second (the pass allotd ran for it).
    fn uncovered_wakeup(&self) -> Option<u64> {
        if !self.diverged {
            return None;
        }
        let w = self.engine.next_wakeup()?.0;
        if w < self.last || self.woke.is_some_and(|woke| w <= woke) || w > self.h.horizon.max(self.due.until) {
            return None;
        }
        let covered = self.h.pass_times.range(w..=w.saturating_add(1)).next().is_some();
        (!covered).then_some(w)
    }

    fn note(&mut self, text: String) {
        self.notes.insert(text);
    }

    fn record(&mut self, t: u64, record: &Record) {
        match record {
            Record::Submitted { job, record: submitted, typed, .. } => {
                let number = record.job_number().unwrap_or(job.0);
                self.submit(t, (job.0, number), submitted, typed.as_deref())
            }
            Record::Started { job, .. } => {
                // A start allotd made that the replay has not (its job
                // refused here, or started otherwise) is a difference.
                // (`Replayed::recorded` is the history's runs, in `finish`.)
                let Some(j) = self.jobs.get_mut(job) else {
                    self.diverged = true;
                    return;
                };
                let k = j.seen;
                j.seen += 1;
                let recorded = self.h.run(job.0, k as usize);
                let same = |(at, on): &(u64, String)| *at == t && recorded.is_some_and(|r| r.hosts == *on);
                if !self.out.replayed.get(&(job.0, k)).is_some_and(same) {
                    self.diverged = true;
                }
            }
            Record::Scheduled { full } => self.pass(t, *full),
            Record::Finished { job, .. } => {
                if self.in_step(job.0) {
                    self.end(t, job.0);
                }
            }
            Record::Usage { job, cpu_time, mem_kb } => {
                if self.in_step(job.0) {
                    self.measure(t, job.0, *cpu_time, *mem_kb);
                }
            }
            Record::Killed { job, term } => self.killed(t, job.0, *term),
            Record::Removed { job } => self.remove(t, job.0),
            // What users and administrators did that is the engine's
            // alone (no job of the replay's own is changed): as allotd
            // applies it.
            // (One the replay's engine refuses changes nothing: a job
            // group change is noted, the others need not be: an array or a
            // resize request that is gone here.)
            Record::SuspendedElements { .. }
            | Record::ArrayLimit { .. }
            | Record::JobGroup(_)
            | Record::ResizeCancelled { .. } => {
                let applied = allot_store::apply(&mut self.engine, &mut self.book, Time(t), record);
                if let (Err(e), Record::JobGroup(_)) = (applied, record) {
                    self.note(format!("a job group change is refused here: {e}"));
                }
            }
            Record::RemovedElements { array, elements } => {
                for id in elements.iter() {
                    if let Some(j) = self.jobs.get_mut(&id) {
                        j.pending = false;
                    }
                }
                let ev = Event::RemoveElements { array: *array, elements: elements.clone() };
                let _ = self.engine.apply(Time(t), &ev);
            }
            // Hosts and queues: the book's, applied as allotd applies them.
            Record::HostChanged { .. } | Record::HostReach { .. } | Record::QueueChanged { .. } => {
                if let Err(e) = allot_store::apply(&mut self.engine, &mut self.book, Time(t), record) {
                    self.note(format!("a change of hosts or queues is refused here: {e}"));
                }
            }
            Record::Reconfigured { config_dir, files } => self.reconfigured(t, config_dir, files),
            Record::Suspended { job, stop, .. } => {
                if self.jobs.get(job).is_some_and(|j| j.pending) {
                    let ev = if *stop { Event::Hold(*job) } else { Event::Release(*job) };
                    let _ = self.engine.apply(Time(t), &ev);
                }
            }
            // Resizes: a grow is the pass's (the replay's pass grows
            // again); what users and notification commands did happens
            // again at its time, to the job as it runs here.
            Record::Grown { .. } => {}
            Record::GrowFailed { job, alloc } => {
                let alloc: Vec<(HostIdx, Slots)> =
                    alloc.iter().filter_map(|(h, n)| Some((self.engine.host_index(h)?, Slots(*n)))).collect();
                let _ = self.engine.apply(Time(t), &Event::GrowFailed { job: *job, alloc });
            }
            Record::Shrunk { job, release, cancel } => {
                let release =
                    release.iter().filter_map(|(h, n)| Some((self.engine.host_index(h)?, n.map(Slots)))).collect();
                if let Err(e) = self.engine.apply(Time(t), &Event::Shrink { job: *job, release, cancel: *cancel }) {
                    self.note(format!("a release (bresize) of job {job} is refused here: {e}"));
                }
            }
            // The log's pass suspended or resumed a job: so did the
            // replay's, if in step (else the replay's own decides).
            Record::Preempted { job, .. } => {
                if self.in_step(job.0) && self.engine.preempted_by(*job).is_none() {
                    self.log_moved(t, job.0);
                }
            }
            Record::Resumed { job } => {
                if self.in_step(job.0) && self.engine.preempted_by(*job).is_some() {
                    self.log_moved(t, job.0);
                }
            }
            Record::Modified { job, record } => {
                let Some(j) = self.jobs.get_mut(job) else { return };
                match self
                    .engine
                    .apply(Time(t), &allot_store::effects::modified_event(&self.engine, *job, &record.spec))
                {
                    Ok(_) => j.spec = record.spec.clone(),
                    Err(e) => {
                        let text = format!("a modification (bmod, bswitch) of job {job} is refused here: {e}");
                        self.note(text);
                    }
                }
            }
            Record::Requeued { job, hold } => self.requeued(t, job.0, *hold),
        }
    }

    /// How many of the job's runs the log has started so far (its
    /// `Started` records passed).
    fn runs_seen(&self, job: u64) -> usize {
        self.jobs.get(&JobId(job)).map_or(0, |j| j.seen as usize)
    }

    /// Whether the job's run in the replay is in step with its last run
    /// started in the log: a record about that run applies to it here.
    fn in_step(&self, job: u64) -> bool {
        let run = self.jobs.get(&JobId(job)).and_then(|j| j.run.as_ref());
        let last = self.runs_seen(job).checked_sub(1);
        run.is_some_and(|r| r.in_sync && last.is_some() && r.recorded == last)
    }

    /// Submission `job` (the log's id), numbered `number` by allotd.
    fn submit(
        &mut self,
        t: u64,
        (job, number): (u64, u64),
        record: &allot_store::JobRecord,
        typed: Option<&allot_config::submission::Submission>,
    ) {
        let _ = self.engine.apply(Time(t), &Event::SkipIdsTo(JobId(job)));
        let spec = match typed {
            // Submitted again as typed, `-w` as allotd resolved it.
            Some(s) => {
                let without_depends;
                let typed = match s.depends {
                    None => s,
                    Some(_) => {
                        without_depends = allot_config::submission::Submission { depends: None, ..s.clone() };
                        &without_depends
                    }
                };
                let closed = |q: &str| self.book.closed_queues.contains(q);
                match allot_config::submission::resolve(typed, &self.engine, &closed, &mut |_| Ok(Vec::new())) {
                    Ok(r) => JobSpec { depends: record.spec.depends.clone(), ..r.spec },
                    Err(reason) => return self.refused(number, reason),
                }
            }
            None => {
                self.note("jobs of a log written before allotd kept submissions as typed are submitted as resolved then (their queue as chosen then)".into());
                record.spec.clone()
            }
        };
        let first = match self.engine.apply(Time(t), &Event::Submit(spec.clone())) {
            Ok(id) => id.map_or(0, |id| id.0),
            Err(e) => return self.refused(number, e.to_string()),
        };
        if first != job {
            let text = format!("job {number} of the log (id {job}) was given id {first} in the replay");
            return self.note(text);
        }
        let size = spec.array.map_or(1, |a| a.size);
        let indices = record.array.as_deref().and_then(|a| allot_config::array::indices_of(a).ok());
        // The last element takes the spec, the others a copy.
        for (k, spec) in (0..size).zip(std::iter::repeat_n(spec, size as usize)) {
            let index = indices.as_ref().map_or(0, |ix| ix.get(k as usize).copied().unwrap_or(k + 1));
            let j = Job {
                submit: t,
                shown: (number, index),
                spec,
                attempts: 0,
                seen: 0,
                run: None,
                pending: true,
                killed: None,
                requeue: None,
                charged: 0.0,
            };
            self.jobs.insert(JobId(job + u64::from(k)), j);
        }
    }

    /// Job `number` is refused by the replay's configuration.
    fn refused(&mut self, number: u64, reason: String) {
        self.diverged = true;
        self.out.outcome.rejected.push(Rejected { id: number, line: number, reason });
    }

    /// A dispatch pass at `t` (`full`: one that considers every job, as
    /// the log's says), and its decisions carried out.
    fn pass(&mut self, t: u64, full: bool) {
        let decisions = if full { self.engine.schedule_full(Time(t)) } else { self.engine.schedule(Time(t)) };
        for d in decisions {
            match d {
                Decision::Start { job, alloc } => self.start(t, job.0, &alloc),
                Decision::Kill { job, reason } => {
                    let term = match reason {
                        allot_engine::KillReason::RunLimit => Term::RunLimit,
                        allot_engine::KillReason::TermTime => Term::Deadline,
                    };
                    self.limit_kill(t, job.0, term);
                }
                Decision::Grow { job, alloc } => self.grown(job.0, &alloc),
                Decision::Suspend { job, .. } => self.suspended(t, job.0, true),
                Decision::Resume { job } => self.suspended(t, job.0, false),
            }
        }
    }

    fn start(&mut self, t: u64, job: u64, alloc: &[(HostIdx, Slots)]) {
        let hosts = hosts_text(alloc.iter().map(|&(h, n)| (self.engine.host_name(h), n.0)));
        let queue = self.engine.job_queue(JobId(job)).unwrap_or_default().to_string();
        let priority = self.engine.multifactor_priority(JobId(job)).map(|p| p.0);
        let seen = self.runs_seen(job);
        let Some(j) = self.jobs.get_mut(&JobId(job)) else { return };
        let k = j.attempts;
        j.attempts += 1;
        j.pending = false;
        j.charged = 0.0;
        j.killed = None;
        self.out.replayed.insert((job, k), (t, hosts.clone()));
        let run: Option<&RecordedRun> = self.h.run(job, k as usize);
        // In step only while the log's own start of this run is still
        // ahead (a run of under a second may have ended in the log before
        // a later pass of the same second starts it here).
        let in_sync = run.is_some_and(|r| r.start == t) && seen <= k as usize;
        if !run.is_some_and(|r| r.start == t && r.hosts == hosts) {
            self.diverged = true;
        }
        let slots = alloc.iter().map(|a| a.1.0).sum();
        let mut live = Live {
            start: t,
            recorded: run.map(|_| k as usize),
            in_sync,
            end_at: None,
            suspended: None,
            paused: 0,
            left: None,
            exit: run.map_or(0, |r| r.exit),
            killed: run.and_then(|r| r.killed).map(|k| k.1),
            hosts,
            slots,
            queue,
            priority,
        };
        if let Some(run) = run.filter(|_| !in_sync) {
            // A moved run: its end and measures at its own times.
            if let Some(len) = run.length() {
                live.end_at = Some(t.saturating_add(len));
                self.due.push((t.saturating_add(len), job, Due::End(k)));
            }
            for (n, (offset, ..)) in run.usage.iter().enumerate() {
                self.due.push((t.saturating_add(*offset), job, Due::Usage(k, n)));
            }
        }
        j.run = Some(live);
    }

    /// A moved run's end or measure, at its time.
    fn moved(&mut self, t: u64, job: u64, due: Due) {
        let (Due::End(attempt) | Due::Usage(attempt, _)) = due;
        // Of the run it was planned for, not of an earlier one.
        let Some(j) = self.jobs.get(&JobId(job)).filter(|j| j.attempts == attempt + 1) else { return };
        let Some(live) = j.run.as_ref() else { return };
        match due {
            Due::End(_) => {
                if live.end_at == Some(t) {
                    self.end(t, job);
                    self.pass(t, false);
                }
            }
            Due::Usage(_, n) => {
                let measure = live.recorded.and_then(|k| self.h.run(job, k)?.usage.get(n)).copied();
                if let Some((_, cpu, mem)) = measure {
                    self.measure(t, job, cpu, mem);
                }
            }
        }
    }

    fn measure(&mut self, t: u64, job: u64, cpu_time: f64, mem_kb: u64) {
        let Some(j) = self.jobs.get_mut(&JobId(job)) else { return };
        let (events, charged) = usage_events(JobId(job), j.charged, cpu_time, mem_kb);
        j.charged = charged;
        for ev in &events {
            let _ = self.engine.apply(Time(t), ev);
        }
    }

    /// A run's end at `t`: pending again, or done.
    fn end(&mut self, t: u64, job: u64) {
        let Some(j) = self.jobs.get_mut(&JobId(job)) else { return };
        let Some(live) = j.run.take() else { return };
        let recorded = live.recorded.and_then(|k| self.h.run(job, k));
        let end = RunEnd {
            exit: live.exit,
            cpu_time: recorded.map_or(0.0, |r| r.cpu_time),
            killed: j.killed.or(live.killed),
            unrun: recorded.is_some_and(|r| r.unrun),
            requeue: j.requeue.take(),
            pre_exec: recorded.and_then(|r| r.pre_exec),
            unheard: recorded.map_or(0, |r| r.unheard),
        };
        let ends = end_event(&self.engine, JobId(job), end, Time(t));
        for event in ends.events() {
            let _ = self.engine.apply(Time(t), event);
        }
        let requeued = ends.requeued;
        let (id, index) = j.shown;
        self.out.outcome.records.push(JobRecord {
            id,
            index,
            user: j.spec.user.clone(),
            queue: live.queue,
            submit: j.submit,
            start: live.start,
            end: t,
            slots: live.slots,
            hosts: live.hosts,
            priority: live.priority,
            exit: live.exit,
            suspended: live.paused + live.suspended.map_or(0, |s| t.saturating_sub(s)),
        });
        if requeued.is_some() {
            j.pending = true;
            self.out.outcome.requeued += 1;
        }
    }

    /// The engine killed a job at a limit. A run in step has its kill and
    /// end in the log at this moment; one that is not ends now, after the
    /// time its kill took in the log (or at once).
    fn limit_kill(&mut self, t: u64, job: u64, term: Term) {
        // One being killed already (`bkill`, an earlier limit) is not
        // killed again, as allotd does not.
        let Some(j) = self.jobs.get_mut(&JobId(job)).filter(|j| j.killed.is_none()) else { return };
        let Some(live) = j.run.as_mut() else { return };
        let recorded = live.recorded.and_then(|k| self.h.run(job, k));
        let logged = recorded.and_then(|r| r.killed).filter(|&(at, term_then)| at == t && term_then == term);
        if live.in_sync && logged.is_some() {
            return;
        }
        j.killed = Some(term);
        // Out of step from here: its kill is the replay's own.
        live.in_sync = false;
        self.diverged = true;
        let at = t.saturating_add(recorded.map_or(0, RecordedRun::kill_latency));
        self.end_by(job, at, term, Some(KILLED_EXIT));
    }

    /// A moved run of `job` killed (`term`): it ends at `at` unless it
    /// ends before, with exit code `exit` (else its own).
    fn end_by(&mut self, job: u64, at: u64, term: Term, exit: Option<i32>) {
        let Some(j) = self.jobs.get_mut(&JobId(job)) else { return };
        let attempt = j.attempts.saturating_sub(1);
        let Some(live) = j.run.as_mut().filter(|l| l.end_at.is_none_or(|e| e > at)) else { return };
        live.end_at = Some(at);
        live.killed = Some(term);
        if let Some(exit) = exit {
            live.exit = exit;
        }
        self.due.push((at, job, Due::End(attempt)));
    }

    /// A `Killed` record: in step, it marks the run; a user's `bkill` of a
    /// moved run ends it at this moment (after the time the kill took in
    /// the log), and of a job still pending in the replay removes it.
    fn killed(&mut self, t: u64, job: u64, term: Term) {
        let in_step = self.in_step(job);
        let last = self.runs_seen(job).checked_sub(1);
        let Some(j) = self.jobs.get_mut(&JobId(job)) else { return };
        if in_step {
            j.killed = Some(term);
            return;
        }
        if !term.by_request() {
            return;
        }
        if j.pending {
            self.remove(t, job);
            return;
        }
        j.killed = Some(term);
        let recorded = last.and_then(|k| self.h.run(job, k));
        let at = t.saturating_add(recorded.map_or(0, RecordedRun::kill_latency));
        self.end_by(job, at, term, None);
    }

    /// `bkill` of a job pending in the replay: it ends without running.
    fn remove(&mut self, t: u64, job: u64) {
        let Some(j) = self.jobs.get_mut(&JobId(job)).filter(|j| j.pending) else { return };
        j.pending = false;
        let _ = self.engine.apply(Time(t), &allot_store::effects::removed_event(JobId(job)));
    }

    fn requeued(&mut self, t: u64, job: u64, hold: bool) {
        let Some(j) = self.jobs.get_mut(&JobId(job)) else { return };
        if j.pending || j.run.is_some() {
            j.requeue = Some(hold);
        } else {
            let ev = Event::Resubmit { job: JobId(job), spec: j.spec.clone(), hold };
            if self.engine.apply(Time(t), &ev).is_ok() {
                j.pending = true;
            }
        }
    }

    fn reconfigured(&mut self, t: u64, dir: &Option<String>, files: &[(String, String)]) {
        if (dir, files) == (&self.source.0, self.source.1.as_slice()) {
            return;
        }
        if !self.recorded_config {
            self.note(
                "the log's reconfigurations are not replayed: the replay runs on the one configuration given".into(),
            );
            return;
        }
        self.source = (dir.clone(), files.to_vec());
        let loaded = match Recorded::load(dir.as_deref(), files) {
            Ok(c) => c,
            Err(e) => return self.note(e.to_string()),
        };
        match self.engine.apply(Time(t), &Event::Reconfigure(Box::new(loaded.engine))) {
            Ok(_) => self.book.reconfigured(&mut self.engine, loaded.agents, Time(t)),
            Err(e) => self.note(format!("a reconfiguration at {t} is refused here: {e}")),
        }
    }

    fn finish(mut self) -> (Replayed, Engine) {
        let horizon = self.out.horizon.max(self.last);
        for (JobId(id), j) in self.jobs.iter() {
            let (first, index) = j.shown;
            if let Some(live) = &j.run {
                self.out.running.push(JobRecord {
                    id: first,
                    index,
                    user: j.spec.user.clone(),
                    queue: live.queue.clone(),
                    submit: j.submit,
                    start: live.start,
                    end: horizon.max(live.start),
                    slots: live.slots,
                    hosts: live.hosts.clone(),
                    priority: live.priority,
                    exit: -1,
                    suspended: live.paused + live.suspended.map_or(0, |s| horizon.saturating_sub(s)),
                });
            } else if j.pending {
                let queue = self.engine.job_queue(JobId(id)).unwrap_or_default().to_string();
                self.out.waiting.push(Waiting { id: first, index, user: j.spec.user.clone(), queue, submit: j.submit });
                let reason = self
                    .engine
                    .pending_reason(JobId(id), Time(horizon))
                    .map_or_else(|| "pending".to_string(), |r| r.to_string());
                self.out.outcome.never_started.push(Rejected { id, line: id, reason });
            }
        }
        self.out.recorded = (self.h.runs.iter())
            .flat_map(|(JobId(job), runs)| {
                runs.iter().enumerate().map(move |(k, r)| ((job, k as u32), (r.start, r.hosts.clone())))
            })
            .collect();
        self.out.outcome.passes = self.engine.passes();
        self.out.notes = std::mem::take(&mut self.notes).into_iter().collect();
        (self.out, self.engine)
    }
}
