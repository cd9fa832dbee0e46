//! What a job did and wrote: `bhist` from the event log, `bpeek` from the
//! job's output files. Both only read.

use allot_engine::{JobId, Time};
use allot_exec::OutputFile;
use allot_proto::{HistoryEvent, JobHistory, JobRef, JobStatus, Response};
use allot_store::Record;

use crate::running::owner_ids;
use crate::serve::{Caller, may_act};
use crate::state::State;

/// `bpeek`'s answer: now, read here off the dispatcher, or from the agent
/// of the host the job ran on.
pub enum Peek {
    Now(Response),
    /// Read job `shown`'s output files here, as `user`, off the dispatcher
    /// ([`read_here`]): they may be large, or on a slow file system.
    Here {
        shown: JobRef,
        user: String,
        out: OutputFile,
        err: OutputFile,
    },
    /// Ask `host`'s agent for job `job`'s (shown as `shown`) output files.
    Agent {
        host: String,
        job: u64,
        shown: JobRef,
        user: String,
        out: OutputFile,
        err: OutputFile,
    },
}

/// `bpeek`: the output so far of a job that started, running or ended (by
/// default the caller's most recently submitted running job). With
/// agents, its files are on the first host it ran on, and that host's
/// agent reads them.
pub fn peek(state: &State, caller: &Caller, job: Option<JobRef>) -> Peek {
    match peek_here(state, caller, job) {
        Ok(peek) => peek,
        Err(e) => Peek::Now(Response::Error(e)),
    }
}

fn peek_here(state: &State, caller: &Caller, job: Option<JobRef>) -> Result<Peek, String> {
    let id = match job {
        Some(r) => match state.resolve(r)[..] {
            [id] => id,
            [] => return Err(format!("Job <{r}>: No matching job found")),
            _ => return Err(format!("Job <{r}>: a job array; name one element, as {r}[1]")),
        },
        None => {
            let mine = state.jobs.iter().rev().find(|(_, j)| {
                j.record.spec.user == caller.user
                    && matches!(j.status, JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp)
            });
            match mine {
                Some((id, _)) => *id,
                None => return Err("No unfinished job found".into()),
            }
        }
    };
    let Some(j) = state.jobs.get(&id) else {
        return Err(format!("Job <{}>: No matching job found", state.job_ref(id)));
    };
    let id_shown = j.job_ref();
    if !may_act(state, caller, &j.record.spec.user) {
        return Err(format!("Job <{id_shown}>: User permission denied"));
    }
    match j.status {
        JobStatus::Pend | JobStatus::Psusp => {
            return Err(format!("Job <{id_shown}>: Job has not started yet"));
        }
        // A finished job's output stays readable to its owner: default
        // output is in the state directory, which only allotd reads.
        JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp | JobStatus::Unkwn | JobStatus::Done | JobStatus::Exit => {
        }
    }
    let (out, err) = state.output_files(id, j);
    if let (Some(_), Some((host, _))) = (&state.cluster, j.alloc.first()) {
        let user = j.record.spec.user.clone();
        return Ok(Peek::Agent { host: host.clone(), job: id.0, shown: id_shown, user, out, err });
    }
    Ok(Peek::Here { shown: id_shown, user: j.record.spec.user.clone(), out, err })
}

/// [`Peek::Here`]: the files read (up to 4 MiB, on whatever file system
/// the job wrote) and the owner looked up on a blocking thread, the answer
/// sent to `reply` from there: a slow or huge `bpeek` stalls nobody.
pub fn read_here(
    (shown, user): (JobRef, String),
    (out, err): (OutputFile, OutputFile),
    reply: tokio::sync::oneshot::Sender<crate::serve::Answer>,
) {
    tokio::task::spawn_blocking(move || {
        let response = match allot_agent::peek::output_of(&out, &err, owner_ids(&user)) {
            Ok(output) => Response::Peek { job: shown, output },
            Err(e) => Response::Error(format!("Job <{shown}>: {e}")),
        };
        let _ = reply.send(crate::serve::Answer::Response(response));
    });
}

/// `bhist`: each job's events from the log. Without job ids, the jobs of
/// `user` (the caller by default, `all` for everyone), finished ones only
/// when `finished` asks for them.
pub fn history(
    state: &State,
    caller: &Caller,
    refs: &[JobRef],
    user: Option<&str>,
    finished: bool,
    t: Time,
) -> Response {
    let ids: Vec<JobId> = if refs.is_empty() {
        let user = user.unwrap_or(&caller.user);
        state
            .jobs
            .iter()
            .filter(|(_, j)| (user == "all" || j.record.spec.user == user) && (finished || j.status.unfinished()))
            .map(|(id, _)| *id)
            .collect()
    } else {
        let mut ids = Vec::new();
        for &r in refs {
            let found = state.resolve(r);
            if found.is_empty() {
                return Response::Error(format!("Job <{r}>: No matching job found"));
            }
            ids.extend(found);
        }
        ids
    };
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(j) = state.jobs.get(&id) else {
            return Response::Error(format!("Job <{}>: No matching job found", state.job_ref(id)));
        };
        let mut records = Vec::new();
        // An element's submission, and its limit's changes, are its array's
        // records.
        if let Some((first, _)) = j.array.filter(|&(first, _)| first != id) {
            match state.store.job_records(first) {
                Ok(r) => records.extend(
                    r.into_iter().filter(|(_, r)| matches!(r, Record::Submitted { .. } | Record::ArrayLimit { .. })),
                ),
                Err(e) => return Response::Error(e.to_string()),
            }
        }
        match state.store.job_records(id) {
            Ok(r) => records.extend(r),
            Err(e) => return Response::Error(e.to_string()),
        }
        // A kill's reason shows with the end it brought.
        let mut term = None;
        let events = records
            .into_iter()
            .filter_map(|(at, r)| {
                if let Record::Killed { term: t, .. } = &r {
                    term = Some(*t);
                }
                // An end heard late shows when it was.
                let at = match &r {
                    Record::Finished { ran_until: Some(e), .. } => (*e).min(at.0),
                    _ => at.0,
                };
                let e = match event(state, r)? {
                    HistoryEvent::Finished { exit, cpu_time, reason, .. } => HistoryEvent::Finished {
                        exit,
                        cpu_time,
                        reason,
                        term: term.take().map(|t| t.describe().to_string()),
                    },
                    e => e,
                };
                Some((at, e))
            })
            .collect();
        let events = crate::unknown::with_spans(events, j.unknown.as_deref());
        out.push(JobHistory { job: state.info(id, j, t, &allot_proto::JobQuery::default()), events });
    }
    Response::History(out)
}

fn event(state: &State, r: Record) -> Option<HistoryEvent> {
    Some(match r {
        Record::Submitted { record, .. } => HistoryEvent::Submitted {
            queue: record.spec.queue.unwrap_or_default(),
            from_host: record.from_host,
            cwd: record.cwd,
        },
        Record::Started { alloc, .. } => HistoryEvent::Started { hosts: alloc },
        Record::Finished { exit, cpu_time, reason, .. } => {
            HistoryEvent::Finished { exit, cpu_time, reason, term: None }
        }
        Record::Removed { .. } => HistoryEvent::Removed,
        Record::Suspended { stop: true, by, .. } => HistoryEvent::Suspended { by },
        Record::Suspended { stop: false, by, .. } => HistoryEvent::Resumed { by },
        Record::Preempted { by, .. } => HistoryEvent::Preempted { by: state.job_ref(by) },
        Record::Resumed { .. } => HistoryEvent::ResumedBySystem,
        Record::Grown { alloc, .. } => HistoryEvent::Grown { hosts: alloc },
        Record::GrowFailed { alloc, .. } => HistoryEvent::GrowFailed { hosts: alloc },
        Record::Shrunk { release, .. } => HistoryEvent::Released { hosts: release },
        Record::ResizeCancelled { .. } => HistoryEvent::ResizeCancelled,
        Record::Modified { record, .. } => HistoryEvent::Modified { queue: record.spec.queue.unwrap_or_default() },
        Record::Requeued { hold, .. } => HistoryEvent::Requeued { hold },
        Record::ArrayLimit { limit, .. } => HistoryEvent::ArrayLimit { limit },
        Record::HostChanged { .. }
        | Record::HostReach { .. }
        | Record::QueueChanged { .. }
        | Record::Reconfigured { .. }
        | Record::Usage { .. }
        | Record::Killed { .. }
        | Record::Scheduled { .. } => return None,
    })
}
