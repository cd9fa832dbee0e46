//! What a record does to the book and the engine: [`apply`], the one
//! function allotd applies each record with (live, and over its log at a
//! restart) and the history replay applies the log's hosts and queues
//! with.

use allot_engine::{Engine, Event, JobId, Time};
use allot_proto::JobStatus;

use super::{Book, BookJob, host_slots, release_slots};
use crate::effects::{EndEvents, RunEnd, end_event, modified_event, removed_event, usage_events};
use crate::{JobRecord, Record};

/// Why [`apply`] refused a record: it then changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The engine, or the job table, refused a change to one job.
    #[error("job {job}: {reason}")]
    Job { job: JobId, reason: String },
    /// A submission refused for now: a pending threshold is reached
    /// (`allot_engine::pend_limits`); the same may be taken later.
    #[error("job {job}: {reason}")]
    Later { job: JobId, reason: String },
    /// The engine refused a change to the job groups.
    #[error("{0}")]
    Group(allot_engine::Rejection),
}

impl ApplyError {
    /// What was refused, without the job's id (for its own user).
    pub fn reason(&self) -> String {
        match self {
            ApplyError::Job { reason, .. } | ApplyError::Later { reason, .. } => reason.clone(),
            ApplyError::Group(e) => e.to_string(),
        }
    }
}

fn refused(job: JobId, reason: impl std::fmt::Display) -> ApplyError {
    ApplyError::Job { job, reason: reason.to_string() }
}

/// What an applied record leaves for whoever runs the jobs to do.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// A running job whose run limit is now what it is from this start
    /// (it started, or `bmod` changed it): its warning action (`-wa`) is
    /// timed again from here.
    pub limit_from: Option<(JobId, u64)>,
    /// A job whose run is over: nothing is to be sent to it any more.
    pub run_over: Option<JobId>,
}

/// Applies `record`, logged at `t`, to the engine and the book. Every
/// record but two is the book's whole: [`Record::Reconfigured`] (the
/// configuration is read by whoever runs the engine) and
/// [`Record::Scheduled`] (a pass's decisions are carried out, or decided
/// again, by whoever runs it) change nothing here.
pub fn apply(engine: &mut Engine, book: &mut Book, t: Time, record: &Record) -> Result<Effects, ApplyError> {
    let whole =
        matches!(record, Record::Submitted { .. } | Record::RemovedElements { .. } | Record::SuspendedElements { .. });
    if let Some(job) = record.job().filter(|_| !whole) {
        book.make(job);
    }
    let mut effects = Effects::default();
    match record {
        Record::Submitted { job, number, record, .. } => submitted(engine, book, t, (*job, *number), record)?,
        Record::ArrayLimit { job, limit } => {
            engine.apply(t, &Event::ArrayLimit { array: *job, limit: *limit }).map_err(|e| refused(*job, e))?;
        }
        Record::JobGroup(change) => {
            engine.apply(t, &Event::JobGroup(change.clone())).map_err(ApplyError::Group)?;
        }
        Record::Started { job, alloc, .. } => {
            // The pass started it (live, or a restart's pass again); a log
            // whose pass did not is carried out here.
            if !engine.is_running(*job) {
                let alloc = host_slots(engine, *job, alloc)?;
                engine.apply(t, &Event::Started { job: *job, alloc }).map_err(|e| refused(*job, e))?;
            }
            book.mark_running(*job, t, alloc);
            effects.limit_from = Some((*job, t.0));
        }
        Record::Usage { job, cpu_time, mem_kb } => {
            let Some(j) = book.jobs.get_mut(job) else { return Ok(effects) };
            if !matches!(j.status, JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp) {
                return Ok(effects);
            }
            let charged = j.usage.map_or(0.0, |u| u.0);
            let (events, charged) = usage_events(*job, charged, *cpu_time, *mem_kb);
            for ev in &events {
                let _ = engine.apply(t, ev);
            }
            j.usage = Some((charged, *mem_kb));
            j.max_mem_kb = j.max_mem_kb.max(*mem_kb);
        }
        Record::Finished { .. } => {
            effects.run_over = record.job();
            finished(engine, book, t, record);
        }
        Record::Removed { job } => {
            let _ = engine.apply(t, &removed_event(*job));
            if let Some(j) = book.jobs.get_mut(job) {
                j.status = JobStatus::Exit;
                j.end_time = Some(t.0);
                j.exit = Some(130);
                book.finished.insert((t.0, *job));
            }
        }
        Record::RemovedElements { array, elements } => book.remove_elements(engine, t, *array, elements)?,
        Record::SuspendedElements { array, elements, stop, .. } => {
            book.hold_elements(engine, t, *array, elements, *stop)?;
        }
        Record::HostChanged { .. } | Record::QueueChanged { .. } | Record::HostReach { .. } => {
            book.apply_hosts(engine, t, record);
        }
        Record::Suspended { job, stop, .. } => suspended(engine, book, t, *job, *stop)?,
        // The pass suspended or resumed the job (a replay's pass did
        // again); a log whose pass did not is carried out here.
        Record::Preempted { job, by } => {
            if engine.preempted_by(*job).is_none() {
                engine.apply(t, &Event::Preempted { job: *job, by: *by }).map_err(|e| refused(*job, e))?;
            }
            if let Some(j) = book.jobs.get_mut(job).filter(|j| j.status == JobStatus::Run) {
                j.status = JobStatus::Ssusp;
            }
        }
        Record::Resumed { job } => {
            if engine.preempted_by(*job).is_some() {
                engine.apply(t, &Event::Resumed(*job)).map_err(|e| refused(*job, e))?;
            }
            if let Some(j) = book.jobs.get_mut(job).filter(|j| j.status == JobStatus::Ssusp) {
                j.status = JobStatus::Run;
            }
        }
        Record::Grown { job, .. } => book.refresh_alloc(engine, *job),
        Record::GrowFailed { job, alloc } => {
            let alloc = host_slots(engine, *job, alloc)?;
            engine.apply(t, &Event::GrowFailed { job: *job, alloc }).map_err(|e| refused(*job, e))?;
            book.refresh_alloc(engine, *job);
        }
        Record::Shrunk { job, release, cancel } => {
            let release = release_slots(engine, *job, release)?;
            let ev = Event::Shrink { job: *job, release, cancel: *cancel };
            engine.apply(t, &ev).map_err(|e| refused(*job, e))?;
            book.refresh_alloc(engine, *job);
        }
        Record::ResizeCancelled { job } => {
            engine.apply(t, &Event::ResizeCancel(*job)).map_err(|e| refused(*job, e))?;
        }
        Record::Modified { job, record } => {
            effects.limit_from = modified(engine, book, t, *job, record)?;
        }
        Record::Killed { job, term } => {
            let running =
                |j: &&mut Box<BookJob>| matches!(j.status, JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp);
            if let Some(j) = book.jobs.get_mut(job).filter(running) {
                j.killed = Some(*term);
            }
        }
        Record::Requeued { job, hold } => {
            let Some(j) = book.jobs.get_mut(job) else { return Ok(effects) };
            if j.status.unfinished() {
                j.requeue = Some(*hold);
            } else {
                let ev = Event::Resubmit { job: *job, spec: j.record.spec.clone(), hold: *hold };
                engine.apply(t, &ev).map_err(|e| refused(*job, e))?;
                j.back_to_pending(*hold);
            }
        }
        Record::Reconfigured { .. } | Record::Scheduled { .. } => {}
    }
    Ok(effects)
}

/// A submission (`number`, or its first id's for a log written before
/// numbers were kept): the engine takes it, the job table registers it
/// (each element of an array), or neither.
fn submitted(
    engine: &mut Engine,
    book: &mut Book,
    t: Time,
    (job, number): (JobId, Option<u64>),
    record: &JobRecord,
) -> Result<(), ApplyError> {
    let indices = match &record.array {
        Some(spec) => {
            let ix =
                allot_config::array::indices_of(spec).map_err(|e| refused(job, format!("[{spec}]: {}", e.message)))?;
            let size = record.spec.array.map_or(0, |a| a.size);
            if ix.len() != size as usize {
                return Err(refused(job, format!("[{spec}] has {} indices, its spec {size}", ix.len())));
            }
            Some(ix)
        }
        None => None,
    };
    let number = number.unwrap_or(job.0);
    if number < book.numbers.next() {
        return Err(refused(job, format!("job number {number} was given before")));
    }
    let id = engine.apply(t, &Event::Submit(record.spec.clone())).map_err(|e| match e.retry_later() {
        true => ApplyError::Later { job, reason: e.to_string() },
        false => refused(job, e),
    })?;
    if let Some(id) = id.filter(|id| *id != job) {
        return Err(refused(job, format!("replayed as job {id}")));
    }
    book.register(job, number, record, t, indices);
    Ok(())
}

/// A run's end: the engine told (and the job requeued, where its end or
/// a `brequeue` says so), the job table shows it ended or pending again.
fn finished(engine: &mut Engine, book: &mut Book, t: Time, record: &Record) {
    let Record::Finished { job, exit, cpu_time, max_mem_kb, reason, pre_exec, ran_until } = record else { return };
    book.running.remove(job);
    let Some(ends) = book.run_end(engine, t, record) else { return };
    let Some(j) = book.jobs.get_mut(job) else { return };
    j.max_mem_kb = j.max_mem_kb.max(*max_mem_kb);
    j.usage = None;
    j.requeue = None;
    j.pre_exec_failures += u32::from(pre_exec.is_some());
    for event in ends.events() {
        let _ = engine.apply(t, event);
    }
    if let Some(hold) = ends.requeued {
        j.back_to_pending(hold);
        // Why it is pending again, for `bjobs -l`.
        if pre_exec.is_some() {
            j.exit_reason = reason.as_deref().map(Box::from);
        }
        return;
    }
    j.status = if *exit == 0 { JobStatus::Done } else { JobStatus::Exit };
    // When it ended, heard late or not.
    j.end_time = Some(ran_until.map_or(t.0, |e| e.min(t.0)));
    j.exit = Some(*exit);
    j.cpu_time = Some(*cpu_time);
    j.exit_reason = reason.as_deref().map(Box::from);
    book.finished.insert((t.0, *job));
}

impl Book {
    /// What a [`Record::Finished`] applied at `t` would do to the engine
    /// (whether the run's job is requeued), changing nothing: `None` for
    /// another record, or a job the table does not hold.
    pub fn run_end(&self, engine: &Engine, t: Time, record: &Record) -> Option<EndEvents> {
        let Record::Finished { job, exit, cpu_time, reason, pre_exec, ran_until, .. } = record else { return None };
        let j = self.jobs.get(job)?;
        let end = RunEnd {
            exit: *exit,
            cpu_time: *cpu_time,
            killed: j.killed,
            unrun: reason.is_some(),
            requeue: j.requeue,
            pre_exec: *pre_exec,
            unheard: ran_until.map_or(0, |e| t.0.saturating_sub(e)),
        };
        Some(end_event(engine, *job, end, t))
    }
}

/// `bstop`/`bresume` of one job: a pending one is held or released in the
/// engine as well.
fn suspended(engine: &mut Engine, book: &mut Book, t: Time, job: JobId, stop: bool) -> Result<(), ApplyError> {
    let Some(j) = book.jobs.get_mut(&job) else { return Ok(()) };
    j.status = match (j.status, stop) {
        (JobStatus::Pend | JobStatus::Psusp, true) => JobStatus::Psusp,
        (JobStatus::Pend | JobStatus::Psusp, false) => JobStatus::Pend,
        (JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp, true) => JobStatus::Ususp,
        (JobStatus::Run | JobStatus::Ususp, false) => JobStatus::Run,
        (finished, _) => finished,
    };
    if matches!(j.status, JobStatus::Pend | JobStatus::Psusp) {
        let ev = if stop { Event::Hold(job) } else { Event::Release(job) };
        engine.apply(t, &ev).map_err(|e| refused(job, e))?;
    }
    Ok(())
}

/// `bmod` or `bswitch`: the engine takes the new spec, the job table the
/// new record. A running job's start is given back, for its warning.
fn modified(
    engine: &mut Engine,
    book: &mut Book,
    t: Time,
    job: JobId,
    record: &JobRecord,
) -> Result<Option<(JobId, u64)>, ApplyError> {
    engine.apply(t, &modified_event(engine, job, &record.spec)).map_err(|e| refused(job, e))?;
    let env = book.intern(&record.env);
    if let Some(j) = book.jobs.get_mut(&job) {
        book.names.remove(&j.record.spec.user, &j.record.name, job);
        j.record = JobRecord { env, ..record.clone() };
        book.names.insert(&j.record.spec.user, &j.record.name, job);
    }
    let start = book.jobs.get(&job).filter(|_| book.running.contains(&job)).and_then(|j| j.start_time);
    Ok(start.map(|s| (job, s)))
}

#[cfg(test)]
mod tests {
    use allot_engine::model::{EngineConfig, HostSpec};

    use super::*;
    use crate::tests::submitted;

    fn ended(job: u64, exit: i32) -> Record {
        Record::Finished {
            job: JobId(job),
            exit,
            cpu_time: 1.0,
            max_mem_kb: 0,
            reason: None,
            pre_exec: None,
            ran_until: None,
        }
    }

    /// A job's life through `apply` alone (what a standby controller or
    /// a restart does with the log): submitted, refused a second time,
    /// started, requeued by `brequeue` at its end, run again, ended, and
    /// forgotten CLEAN_PERIOD later; each step's effects for the runner.
    #[test]
    fn a_jobs_life_is_the_records_applied() {
        let mut engine = Engine::new(EngineConfig::one_queue(vec![HostSpec::new("hostA", 1, 1)], false));
        let mut book = Book::new(false);
        let mut go = |t: u64, r: &Record| apply(&mut engine, &mut book, Time(t), r);
        let start = Record::Started { job: JobId(1), alloc: vec![("hostA".into(), 1)], backfill_limit: None };
        assert_eq!(go(1, &submitted(1)).expect("submitted"), Effects::default());
        let again = go(2, &submitted(1)).expect_err("a number given before");
        assert!(again.reason().contains("given before"), "{again}");
        assert_eq!(go(5, &start).expect("started").limit_from, Some((JobId(1), 5)));
        go(6, &Record::Requeued { job: JobId(1), hold: false }).expect("brequeue");
        assert_eq!(go(7, &ended(1, 0)).expect("ended").run_over, Some(JobId(1)));
        let j = &book.jobs[&JobId(1)];
        assert_eq!((j.status, j.attempt, j.start_time), (JobStatus::Pend, 1, None), "pending again");
        assert!(engine.is_pending(JobId(1)) && book.running.is_empty());

        apply(&mut engine, &mut book, Time(20), &start).expect("started again");
        apply(&mut engine, &mut book, Time(30), &ended(1, 3)).expect("ended");
        let j = &book.jobs[&JobId(1)];
        assert_eq!((j.status, j.attempt, j.exit, j.end_time), (JobStatus::Exit, 2, Some(3), Some(30)));
        assert_eq!((book.numbers.next(), book.resolve(j.job_ref())), (2, vec![JobId(1)]));
        book.clean(30 + 3599, 3600);
        assert!(book.jobs.contains_key(&JobId(1)), "not CLEAN_PERIOD yet");
        book.clean(30 + 3600, 3600);
        assert!(book.jobs.is_empty() && book.envs.is_empty() && book.finished.is_empty());
    }
}
