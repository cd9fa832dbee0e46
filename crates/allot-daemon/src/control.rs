//! Job control requests: `bkill`, `bstop`, `bresume`, `bswitch`, `bmod`
//! and `brequeue`. Each acts job by job and answers job by job; a job the
//! caller may not act on, or in a state the request does not fit, gets its
//! own error and changes nothing. A change the engine refuses (a queue that
//! does not exist or does not admit the user, too many slots) is refused
//! before anything is recorded.

use allot_engine::{JobId, JobSet, Time};
use allot_proto::{Changes, JobRef, JobStatus, RequeueStates, Response};
use allot_store::{JobRecord, Record, Term};
use nix::sys::signal::Signal;

use crate::serve::{Caller, keep, may_act};
use crate::state::{BookJob, State};

/// The jobs a request names, each with the id it has here if there is
/// one: a reference to an array names each of its elements; `0` names
/// every job of the caller that `mine` selects, oldest first. With a job
/// group (`-g`), only the jobs of that group (not of its subgroups, as
/// LSF's `bkill -g` does): another job is not found.
fn targets(
    state: &State,
    caller: &Caller,
    (refs, group): (&[JobRef], Option<&str>),
    mine: impl Fn(&BookJob) -> bool,
) -> Vec<(JobRef, Option<JobId>)> {
    let group = group.map(allot_engine::job_groups::normal);
    let in_group = |j: &BookJob| group.is_none_or(|g| j.record.spec.job_group.as_deref() == Some(g));
    if refs == [JobRef::job(0)] {
        return state
            .book
            .each_job()
            .filter(|(_, j)| j.record.spec.user == caller.user && mine(j) && in_group(j))
            .map(|(id, _)| (state.book.job_ref(id), Some(id)))
            .collect();
    }
    let mut out = Vec::with_capacity(refs.len());
    for &r in refs {
        let ids: Vec<JobId> = state
            .book
            .resolve(r)
            .into_iter()
            .filter(|&id| state.book.job_or_template(id).is_some_and(in_group))
            .collect();
        if ids.is_empty() {
            out.push((r, None));
        }
        out.extend(ids.into_iter().map(|id| (state.book.job_ref(id), Some(id))));
    }
    out
}

/// The jobs a request names, and the job group it limits them to.
pub(crate) type Named<'a> = (&'a [JobRef], Option<&'a str>);

/// Runs `act` on each job the caller may act on; the answer holds each
/// job's outcome. `act` gets the job's id here and its name to show.
fn each(
    state: &mut State,
    caller: &Caller,
    targets: Vec<(JobRef, Option<JobId>)>,
    mut act: impl FnMut(&mut State, JobId, JobRef, JobStatus) -> Result<(), String>,
) -> Response {
    let mut out = Vec::with_capacity(targets.len());
    for (shown, id) in targets {
        let result = match id.and_then(|id| state.book.job_or_template(id).map(|j| (id, j))) {
            None => Err(format!("Job <{shown}>: No matching job found")),
            Some((_, j)) if !may_act(state, caller, &j.record.spec.user) => {
                Err(format!("Job <{shown}>: User permission denied"))
            }
            Some((id, j)) => {
                let status = j.status;
                act(state, id, shown, status)
            }
        };
        out.push((shown, result));
    }
    Response::Each(out)
}

/// [`keep`] in a job's answer: a refusal is `Job <N>: reason`.
fn keep_job(
    state: &mut State,
    t: Time,
    records: &mut Vec<Record>,
    shown: JobRef,
    record: Record,
) -> Result<(), String> {
    keep(state, t, records, record).map_err(|e| format!("Job <{shown}>: {}", e.reason()))
}

/// Sends a signal to a running job's process group, or (when its command
/// has not started yet) as soon as it exists.
fn signal(state: &mut State, id: JobId, shown: JobRef, sig: Signal) -> Result<(), String> {
    match crate::running::send_signal(state, id, sig) {
        Ok(true) => Ok(()),
        Ok(false) => {
            state.pending_kills.insert(id, sig);
            Ok(())
        }
        Err(e) => Err(format!("Job <{shown}>: {e}")),
    }
}

fn signal_of(name: &str) -> Result<Signal, String> {
    signal_named(name).map_err(|()| format!("-s {name}: unknown signal"))
}

/// A signal by its name, with or without `SIG`, in either case (`URG`,
/// `sigusr1`).
pub(crate) fn signal_named(name: &str) -> Result<Signal, ()> {
    let upper = name.to_ascii_uppercase();
    let full = if upper.starts_with("SIG") { upper } else { format!("SIG{upper}") };
    full.parse().map_err(|_| ())
}

const FINISHED: &str = "Job has already finished";

/// `bkill`: a pending job is removed; a running one gets the signal
/// (`-s`), or by default, as LSF's `bkill` ends a job, SIGINT, then
/// SIGTERM, then SIGKILL, JOB_TERMINATE_INTERVAL apart
/// (`running::terminate`, which ends jobs at their limits the same way):
/// a job that catches the first two has that long to clean up.
pub fn kill(
    state: &mut State,
    caller: &Caller,
    refs: Named<'_>,
    signal_name: Option<&str>,
    t: Time,
    records: &mut Vec<Record>,
) -> Response {
    let sig = match signal_name.map(signal_of).transpose() {
        Ok(s) => s,
        Err(e) => return Response::Error(e),
    };
    let targets = targets(state, caller, refs, |j| j.status.unfinished());
    let (bulk, targets) = kill_tails(state, caller, targets, t, records);
    let by = caller.user.clone();
    let each = each(state, caller, targets, |state, id, shown, status| match status {
        JobStatus::Pend | JobStatus::Psusp => keep_job(state, t, records, shown, Record::Removed { job: id }),
        JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp | JobStatus::Unkwn => {
            // A signal that only tells the job something leaves it as it was.
            if sig.is_none_or(|s| matches!(s, Signal::SIGKILL | Signal::SIGTERM | Signal::SIGINT)) {
                let owner = state.book.job_or_template(id).is_some_and(|j| j.record.spec.user == by);
                let term = if owner { Term::Owner } else { Term::Admin };
                keep_job(state, t, records, shown, Record::Killed { job: id, term })?;
            }
            match sig {
                Some(sig) => signal(state, id, shown, sig),
                None => {
                    state.terminating.entry(id).or_insert((0, state.now));
                    crate::running::terminate(state);
                    Ok(())
                }
            }
        }
        JobStatus::Done | JobStatus::Exit => Err(format!("Job <{shown}>: {FINISHED}")),
    });
    with_bulk(each, bulk)
}

/// `bkill` of a large array: its elements not made yet go in one record
/// each array. Returns the answers of those acted on at once, and the
/// targets left.
fn kill_tails(
    state: &mut State,
    caller: &Caller,
    targets: Vec<(JobRef, Option<JobId>)>,
    t: Time,
    records: &mut Vec<Record>,
) -> (Vec<Answer>, Vec<(JobRef, Option<JobId>)>) {
    let (tails, rest) = crate::array_tail::split_tails(state, targets);
    let mut bulk = Vec::new();
    for (first, (unmade, removed)) in tails {
        // One element by its own name; more by their array's.
        let shown = |ids: &[JobId]| match ids {
            [one] => state.book.job_ref(*one),
            _ => JobRef::job(state.book.job_ref(first).id),
        };
        if !removed.is_empty() {
            let shown = shown(&removed);
            bulk.push((shown, Err(format!("Job <{shown}>: {FINISHED}"))));
        }
        if unmade.is_empty() {
            continue;
        }
        let shown = shown(&unmade);
        let owner = state.book.job_or_template(first).map(|j| j.record.spec.user.clone()).unwrap_or_default();
        let result = if may_act(state, caller, &owner) {
            let record = Record::RemovedElements { array: first, elements: JobSet::from_ids(unmade) };
            keep_job(state, t, records, shown, record)
        } else {
            Err(format!("Job <{shown}>: User permission denied"))
        };
        bulk.push((shown, result));
    }
    (bulk, rest)
}

/// A job's answer: done, or why not.
type Answer = (JobRef, Result<(), String>);

/// The answer of the jobs acted on one by one, then of those acted on at
/// once ([`crate::array_tail::split_tails`]).
fn with_bulk(each: Response, bulk: Vec<Answer>) -> Response {
    match each {
        Response::Each(mut out) if !bulk.is_empty() => {
            out.extend(bulk);
            Response::Each(out)
        }
        other => other,
    }
}

/// `bstop` and `bresume`. A pending job is held (PSUSP) or released; a
/// running one is stopped (SIGSTOP, USUSP) or continued (SIGCONT). A
/// stopped job keeps its slots, as in LSF, and its run limit keeps
/// counting: the limit is wall-clock time from its start.
pub fn suspend(
    state: &mut State,
    caller: &Caller,
    refs: Named<'_>,
    stop: bool,
    t: Time,
    records: &mut Vec<Record>,
) -> Response {
    let wanted = |j: &BookJob| {
        if stop {
            matches!(j.status, JobStatus::Pend | JobStatus::Run | JobStatus::Ssusp)
        } else {
            matches!(j.status, JobStatus::Psusp | JobStatus::Ususp)
        }
    };
    let targets = targets(state, caller, refs, wanted);
    let (bulk, targets) = suspend_tails(state, caller, targets, stop, t, records);
    let by = caller.user.clone();
    let each = each(state, caller, targets, |state, id, shown, status| {
        let record = Record::Suspended { job: id, stop, by: by.clone() };
        match (status, stop) {
            (JobStatus::Pend, true) | (JobStatus::Psusp, false) => keep_job(state, t, records, shown, record),
            (JobStatus::Run | JobStatus::Unkwn, true) | (JobStatus::Ususp, false) => {
                signal(state, id, shown, if stop { Signal::SIGSTOP } else { Signal::SIGCONT })?;
                keep_job(state, t, records, shown, record)
            }
            // Stopped already: from now on the user's, not resumed with
            // its slots ([`crate::tick`]).
            (JobStatus::Ssusp, true) => keep_job(state, t, records, shown, record),
            (JobStatus::Ssusp, false) => Err(format!(
                "Job <{shown}>: Job was suspended by the system (preempted); it resumes when its slots are free"
            )),
            (JobStatus::Psusp | JobStatus::Ususp, true) => {
                Err(format!("Job <{shown}>: Job has already been suspended"))
            }
            (JobStatus::Pend | JobStatus::Run | JobStatus::Unkwn, false) => {
                Err(format!("Job <{shown}>: Job is not suspended"))
            }
            (JobStatus::Done | JobStatus::Exit, _) => Err(format!("Job <{shown}>: {FINISHED}")),
        }
    });
    with_bulk(each, bulk)
}

/// `bstop` or `bresume` of a large array: its elements not made yet, when
/// every one is named, held or released in one record; named some only,
/// or removed, each is acted on alone. Returns the answers of those acted
/// on at once, and the targets left.
fn suspend_tails(
    state: &mut State,
    caller: &Caller,
    targets: Vec<(JobRef, Option<JobId>)>,
    stop: bool,
    t: Time,
    records: &mut Vec<Record>,
) -> (Vec<Answer>, Vec<(JobRef, Option<JobId>)>) {
    let (tails, mut rest) = crate::array_tail::split_tails(state, targets);
    let mut bulk = Vec::new();
    for (first, (unmade, removed)) in tails {
        let alone = |ids: Vec<JobId>, state: &State| {
            ids.into_iter().map(|id| (state.book.job_ref(id), Some(id))).collect::<Vec<_>>()
        };
        rest.extend(alone(removed, state));
        let Some(tail) = state.book.tails.get(&first).filter(|t| t.unmade.len() == unmade.len() && !unmade.is_empty())
        else {
            rest.extend(alone(unmade, state));
            continue;
        };
        let shown = JobRef::job(state.book.job_ref(first).id);
        let (owner, status) = (tail.template.record.spec.user.clone(), tail.template.status);
        let result = match (status, stop) {
            _ if !may_act(state, caller, &owner) => Err(format!("Job <{shown}>: User permission denied")),
            (JobStatus::Pend, true) | (JobStatus::Psusp, false) => {
                let elements = JobSet::from_ids(unmade);
                let record = Record::SuspendedElements { array: first, elements, stop, by: caller.user.clone() };
                keep_job(state, t, records, shown, record)
            }
            (_, true) => Err(format!("Job <{shown}>: Job has already been suspended")),
            (_, false) => Err(format!("Job <{shown}>: Job is not suspended")),
        };
        bulk.push((shown, result));
    }
    (bulk, rest)
}

/// Records a pending job's new record if the engine accepts it; otherwise
/// nothing changes and the refusal names the job.
/// A job's record changed by `change`, as the engine admits the change.
/// Of a running job, only its run limit changes (`bmod -W`), or with
/// `switching` its queue (`bswitch`, as LSF's switches running jobs); LSF's
/// LSB_MOD_ALL_JOBS is not set.
#[allow(clippy::too_many_arguments)]
fn modify_job(
    state: &mut State,
    id: JobId,
    shown: JobRef,
    status: JobStatus,
    t: Time,
    records: &mut Vec<Record>,
    switching: bool,
    change: impl FnOnce(&mut JobRecord),
) -> Result<(), String> {
    let running = match status {
        JobStatus::Pend | JobStatus::Psusp => false,
        JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp | JobStatus::Unkwn => true,
        JobStatus::Done | JobStatus::Exit => return Err(format!("Job <{shown}>: {FINISHED}")),
    };
    let Some(j) = state.book.job_or_template(id) else { return Err(format!("Job <{shown}>: No matching job found")) };
    let mut record = j.record.clone();
    change(&mut record);
    let mut rest = record.clone();
    rest.spec.run_limit = j.record.spec.run_limit;
    if switching {
        rest.spec.queue.clone_from(&j.record.spec.queue);
    }
    if running && rest != j.record {
        return Err(format!("Job <{shown}>: Job has already started; only its run limit (-W) changes a running job"));
    }
    if let Some(q) = record.spec.queue.as_ref().filter(|&q| j.record.spec.queue.as_ref() != Some(q)) {
        if state.book.closed_queues.contains(q) {
            return Err(format!("Job <{shown}>: Queue <{q}> is closed"));
        }
    }
    keep_job(state, t, records, shown, Record::Modified { job: id, record: Box::new(record) })
}

/// `bswitch`: unfinished jobs to another queue; a running one as the
/// engine moves it (its hosts must be the new queue's too).
pub fn switch(
    state: &mut State,
    caller: &Caller,
    refs: &[JobRef],
    queue: &str,
    t: Time,
    records: &mut Vec<Record>,
) -> Response {
    let targets = targets(state, caller, (refs, None), |j| j.status.unfinished());
    each(state, caller, targets, |state, id, shown, status| {
        modify_job(state, id, shown, status, t, records, true, |r| r.spec.queue = Some(queue.to_string()))
    })
}

/// `bmod`: the changes to one pending job.
pub fn modify(
    state: &mut State,
    caller: &Caller,
    job: JobRef,
    changes: &Changes,
    t: Time,
    records: &mut Vec<Record>,
) -> Response {
    if let Some(limit) = changes.array_limit {
        // An array is its first element's job, named by the array's number.
        let first =
            state.book.resolve(job).first().copied().filter(|id| job.index == 0 && state.book.arrays.contains_key(id));
        let array = first.and_then(|id| state.book.jobs.get(&id).map(|j| (id, j)));
        let first = match array {
            None => Err("Not a job array"),
            Some((_, j)) if !may_act(state, caller, &j.record.spec.user) => Err("User permission denied"),
            Some((first, _)) => Ok(first),
        };
        let first = match first {
            Ok(first) => first,
            Err(why) => return Response::Each(vec![(job, Err(format!("Job <{job}>: {why}")))]),
        };
        let record = Record::ArrayLimit { job: first, limit: Some(limit) };
        if let Err(e) = state.apply(t, &record) {
            return Response::Each(vec![(job, Err(format!("Job <{job}>: {e}")))]);
        }
        records.push(record);
        if *changes == (Changes { array_limit: Some(limit), ..Changes::default() }) {
            return Response::Each(vec![(job, Ok(()))]);
        }
    }
    let targets = targets(state, caller, (&[job], None), |_| true);
    each(state, caller, targets, |state, id, shown, status| {
        modify_job(state, id, shown, status, t, records, false, |r| apply_changes(r, changes))
    })
}

fn apply_changes(r: &mut JobRecord, c: &Changes) {
    if let Some(q) = &c.queue {
        r.spec.queue = Some(q.clone());
    }
    if let Some(n) = c.slots {
        r.spec.slots = n.max(1);
    }
    if let Some(w) = c.run_limit {
        r.spec.run_limit = w;
    }
    if let Some(g) = &c.group {
        r.spec.group = g.clone();
    }
    if let Some(e) = c.estimated_run_time {
        r.estimated_run_time = e;
        r.spec.run_estimate = e;
    }
    if let Some(name) = &c.name {
        r.name = name.clone();
    }
    if let Some(p) = &c.project {
        r.project = p.clone();
        r.spec.project = p.clone();
    }
    if let Some(o) = &c.output {
        r.output = o.clone();
    }
    if let Some(e) = &c.error {
        r.error = e.clone();
    }
    if let Some(cwd) = &c.cwd {
        r.cwd = cwd.clone();
    }
    if let Some(cmd) = &c.command {
        r.command = cmd.clone();
    }
    if let Some(p) = c.priority {
        r.spec.priority = p;
    }
    if let Some(q) = &c.qos {
        r.spec.qos = Some(q.clone());
    }
    if let Some(f) = c.user_factor {
        r.spec.user_factor = Some(f);
    }
    if let Some(g) = &c.job_group {
        r.spec.job_group = g.as_deref().map(|g| allot_engine::job_groups::normal(g).to_string());
    }
}

/// `brequeue`: a running (or stopped) job is killed and goes back to
/// pending when its end is collected; a DONE or EXIT job comes back now.
/// Either keeps its id and its place in submission order.
pub fn requeue(
    state: &mut State,
    caller: &Caller,
    refs: &[JobRef],
    states: RequeueStates,
    hold: bool,
    t: Time,
    records: &mut Vec<Record>,
) -> Response {
    let asked = move |s: JobStatus| match s {
        JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp | JobStatus::Unkwn => states.running,
        JobStatus::Done => states.done,
        JobStatus::Exit => states.exit,
        JobStatus::Pend | JobStatus::Psusp => false,
    };
    let targets = targets(state, caller, (refs, None), |j| asked(j.status) && j.requeue.is_none());
    each(state, caller, targets, |state, id, shown, status| {
        if matches!(status, JobStatus::Pend | JobStatus::Psusp) {
            return Err(format!("Job <{shown}>: Job has not started yet"));
        }
        if !asked(status) {
            return Err(format!("Job <{shown}>: Job is {}, not in a state asked for", status.as_str()));
        }
        let record = Record::Requeued { job: id, hold };
        if status.unfinished() {
            if state.book.jobs.get(&id).is_some_and(|j| j.requeue.is_some()) {
                return Err(format!("Job <{shown}>: Job is already being requeued"));
            }
            keep_job(state, t, records, shown, record)?;
            // A job already gone is requeued all the same when its end
            // is collected.
            let _ = signal(state, id, shown, Signal::SIGKILL);
            return Ok(());
        }
        keep_job(state, t, records, shown, record)
    })
}
