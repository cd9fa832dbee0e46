//! What a record means to the engine: the rules that turn a logged change
//! into the engine's events, written once for allotd's state (live and on
//! a restart's replay) and for the simulator's replay of a state
//! directory's history (`allot sim --from`), which must hear the same.
//! (Records about hosts and queues are the [`crate::Book`]'s.)

use allot_engine::{Engine, Event, JobId, Time};

use crate::Term;

/// How a job's run ended, as far as what comes next depends on it.
#[derive(Clone, Copy, Debug)]
pub struct RunEnd {
    pub exit: i32,
    pub cpu_time: f64,
    /// Who or what killed it, if anything did: its owner or an
    /// administrator (`bkill`), or allotd at a limit.
    pub killed: Option<Term>,
    /// It never ran its command (an output file its owner may not write,
    /// an owner gone).
    pub unrun: bool,
    /// `brequeue` asked for it while it ran: back to pending, held if
    /// `true`.
    pub requeue: Option<bool>,
    /// Its pre-execution command failed ([`crate::PreExecEnd`]).
    pub pre_exec: Option<crate::PreExecEnd>,
    /// It really ended this long before its end is applied (heard late;
    /// `Record::Finished`'s `ran_until`), seconds; 0 when heard at once.
    pub unheard: u64,
}

/// The engine's events for a run's end ([`end_event`]): the real end of
/// one heard late, then the end itself.
pub struct EndEvents {
    pub ran_until: Option<Event>,
    pub end: Event,
    /// Back to pending (held if `true`), or `None`: ended.
    pub requeued: Option<bool>,
}

impl EndEvents {
    /// The events, in the order they are applied, at the end's time.
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.ran_until.iter().chain(std::iter::once(&self.end))
    }
}

/// The engine's event for a run's end: pending again (`Requeue`) when
/// `brequeue` asked, when its pre-execution command failed and it was not
/// killed (held once it failed MAX_PREEXEC_RETRY times), or when its
/// queue's REQUEUE_EXIT_VALUES takes its exit code; else `Finish`; before
/// it, for an end heard late, `RanUntil` its real end (`t` is when the end
/// is applied).
///
/// By exit code, a job killed at a limit is requeued as one that ended
/// by itself: LSF documents that a job killed by a signal ends with 128
/// plus the signal, that such a value may be listed (`137` for SIGKILL),
/// and that an interruptible backfill queue needs it so ("killed upon
/// reaching its runtime limit, and requeued for the next run"; spec 004).
/// Not one its owner or an administrator killed (`bkill` asks for its
/// end, and would otherwise be unable to end a job whose code is listed;
/// `brequeue` asks for another run), nor one that could not start (it
/// would fail the same way again). allotd, its restart, the history
/// replay and the workload simulator all end runs here.
pub fn end_event(engine: &Engine, job: JobId, end: RunEnd, t: Time) -> EndEvents {
    let asked = end.killed.is_some_and(Term::by_request);
    let by_exit = !asked && !end.unrun && engine.requeues_on_exit(job, end.exit);
    let by_pre_exec = end.pre_exec.filter(|_| end.killed.is_none()).map(|p| p == crate::PreExecEnd::Hold);
    let ran_until = (end.unheard > 0).then(|| Event::RanUntil { job, at: Time(t.0.saturating_sub(end.unheard)) });
    match end.requeue.or(by_pre_exec).or(by_exit.then_some(false)) {
        Some(hold) => {
            EndEvents { ran_until, end: Event::Requeue { job, cpu_time: end.cpu_time, hold }, requeued: Some(hold) }
        }
        None => {
            EndEvents { ran_until, end: Event::Finish { job, cpu_time: end.cpu_time, exit: end.exit }, requeued: None }
        }
    }
}

/// The engine's event for a job's new record (`bmod`, `bswitch`): a
/// pending job's spec is replaced; a running one changes queue (`bswitch`)
/// or its run limit (`bmod -W`), which is all the daemon changes of a
/// running job.
pub fn modified_event(engine: &Engine, job: JobId, spec: &allot_engine::JobSpec) -> Event {
    if !engine.is_running(job) {
        return Event::Modify { job, spec: spec.clone() };
    }
    match spec.queue.as_deref() {
        Some(q) if engine.job_queue(job).is_some_and(|now| now != q) => Event::Switch { job, spec: spec.clone() },
        _ => Event::RunLimit { job, limit: spec.run_limit },
    }
}

/// The engine's event for a pending job removed (`bkill` before it
/// started): it ends, having used nothing, as killed (130).
pub fn removed_event(job: JobId) -> Event {
    Event::Finish { job, cpu_time: 0.0, exit: 130 }
}

/// The engine's events for a running job's measure: the CPU seconds not
/// charged yet (`charged` so far; a measure never takes back what was
/// charged) and its resident memory now. Returns them and what is charged
/// after.
pub fn usage_events(job: JobId, charged: f64, cpu_time: f64, mem_kb: u64) -> (Vec<Event>, f64) {
    let mut events = Vec::with_capacity(2);
    if cpu_time > charged {
        events.push(Event::Cpu { job, seconds: cpu_time - charged });
    }
    events.push(Event::Memory { job, mb: mem_kb as f64 / 1024.0 });
    (events, cpu_time.max(charged))
}

#[cfg(test)]
mod tests {
    use super::*;
    use allot_engine::model::{EngineConfig, HostSpec};

    #[test]
    fn an_end_requeues_by_exit_value_only_when_the_job_ran_its_course() {
        let mut config = EngineConfig::one_queue(vec![HostSpec::new("h", 1, 1)], false);
        config.queues[0].requeue_exit = vec![99];
        let mut engine = Engine::new(config);
        let job = engine.submit(&allot_engine::JobSpec { user: "u".into(), slots: 1, ..Default::default() });
        let job = job.expect("submitted");
        let end =
            RunEnd { exit: 99, cpu_time: 1.0, killed: None, unrun: false, requeue: None, pre_exec: None, unheard: 0 };
        for end in [end, RunEnd { killed: Some(Term::RunLimit), ..end }, RunEnd { killed: Some(Term::MemLimit), ..end }]
        {
            assert!(
                matches!(
                    end_event(&engine, job, end, Time(0)),
                    EndEvents { end: Event::Requeue { hold: false, .. }, requeued: Some(false), ran_until: None }
                ),
                "{end:?}"
            );
        }
        for end in [
            RunEnd { killed: Some(Term::Owner), ..end },
            RunEnd { killed: Some(Term::Admin), ..end },
            RunEnd { unrun: true, ..end },
            RunEnd { exit: 1, ..end },
        ] {
            assert!(
                matches!(
                    end_event(&engine, job, end, Time(0)),
                    EndEvents { end: Event::Finish { .. }, requeued: None, ran_until: None }
                ),
                "{end:?}"
            );
        }
        let asked = RunEnd { exit: 1, killed: Some(Term::Owner), requeue: Some(true), ..end };
        assert!(matches!(
            end_event(&engine, job, asked, Time(0)),
            EndEvents { end: Event::Requeue { hold: true, .. }, requeued: Some(true), ran_until: None }
        ));
    }

    /// A failed pre-execution command sends the job back to pending, held
    /// when allotd said so (the retries are used up); not when the job
    /// was killed meanwhile.
    #[test]
    fn a_failed_pre_exec_sends_the_job_back_unless_it_was_killed() {
        let mut engine = Engine::new(EngineConfig::one_queue(vec![HostSpec::new("h", 1, 1)], false));
        let job = engine.submit(&allot_engine::JobSpec { user: "u".into(), slots: 1, ..Default::default() });
        let job = job.expect("submitted");
        let retry = RunEnd {
            exit: 1,
            cpu_time: 0.0,
            killed: None,
            unrun: true,
            requeue: None,
            pre_exec: Some(crate::PreExecEnd::Retry),
            unheard: 0,
        };
        assert!(matches!(
            end_event(&engine, job, retry, Time(0)),
            EndEvents { end: Event::Requeue { hold: false, .. }, requeued: Some(false), ran_until: None }
        ));
        let hold = RunEnd { pre_exec: Some(crate::PreExecEnd::Hold), ..retry };
        assert!(matches!(
            end_event(&engine, job, hold, Time(0)),
            EndEvents { end: Event::Requeue { hold: true, .. }, requeued: Some(true), ran_until: None }
        ));
        let killed = RunEnd { killed: Some(Term::RunLimit), ..retry };
        assert!(matches!(
            end_event(&engine, job, killed, Time(0)),
            EndEvents { end: Event::Finish { exit: 1, .. }, requeued: None, ran_until: None }
        ));
    }

    /// An end heard late: its real end goes to the engine first, so the
    /// job is charged until then.
    #[test]
    fn an_end_heard_late_says_when_the_run_really_ended() {
        let engine = Engine::new(EngineConfig::one_queue(vec![HostSpec::new("h", 1, 1)], false));
        let end =
            RunEnd { exit: 0, cpu_time: 1.0, killed: None, unrun: false, requeue: None, pre_exec: None, unheard: 30 };
        let events = end_event(&engine, JobId(1), end, Time(100));
        let order: Vec<&Event> = events.events().collect();
        assert!(matches!(order[..], [Event::RanUntil { at: Time(70), .. }, Event::Finish { .. }]), "{order:?}");
    }

    #[test]
    fn a_measure_charges_only_what_is_new() {
        let (events, charged) = usage_events(JobId(1), 10.0, 12.5, 2048);
        assert_eq!(charged, 12.5);
        assert!(matches!(events[0], Event::Cpu { seconds, .. } if seconds == 2.5));
        assert!(matches!(events[1], Event::Memory { mb, .. } if mb == 2.0));
        let (events, charged) = usage_events(JobId(1), 10.0, 9.0, 0);
        assert_eq!((events.len(), charged), (1, 10.0));
    }
}
