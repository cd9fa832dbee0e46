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
        Some(r) => match state.book.resolve(r)[..] {
            [id] => id,
            [] => return Err(format!("Job <{r}>: No matching job found")),
            _ => return Err(format!("Job <{r}>: a job array; name one element, as {r}[1]")),
        },
        None => {
            let mine = state.book.jobs.iter().rev().find(|(_, j)| {
                j.record.spec.user == caller.user
                    && matches!(j.status, JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp)
            });
            match mine {
                Some((id, _)) => *id,
                None => return Err("No unfinished job found".into()),
            }
        }
    };
    let Some(j) = state.book.jobs.get(&id) else {
        return Err(format!("Job <{}>: No matching job found", state.book.job_ref(id)));
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

/// `bhist`'s jobs as the dispatcher knows them, to be read from the log
/// on a thread of their own ([`answer_off`]): a history of 150,000 jobs is
/// as many queries, which stalled every user for seconds on the
/// dispatcher.
pub(crate) struct Asked {
    log: std::path::PathBuf,
    jobs: Vec<AskedJob>,
}

struct AskedJob {
    id: JobId,
    /// An element's array: its submission is the array's.
    first: Option<JobId>,
    info: allot_proto::JobInfo,
    spans: Option<Box<allot_store::Spans>>,
}

/// `bhist`: each job's events from the log. Without job ids, the jobs of
/// `user` (the caller by default, `all` for everyone), finished ones only
/// when `finished` asks for them. What the dispatcher knows of them; an
/// unknown job is an error at once.
pub(crate) fn ask(
    state: &State,
    caller: &Caller,
    refs: &[JobRef],
    user: Option<&str>,
    finished: bool,
    t: Time,
) -> Result<Asked, Response> {
    let ids: Vec<JobId> = if refs.is_empty() {
        let user = user.unwrap_or(&caller.user);
        state
            .book
            .jobs
            .iter()
            .filter(|(_, j)| (user == "all" || j.record.spec.user == user) && (finished || j.status.unfinished()))
            .map(|(id, _)| *id)
            .collect()
    } else {
        let mut ids = Vec::new();
        for &r in refs {
            let found = state.book.resolve(r);
            if found.is_empty() {
                return Err(Response::Error(format!("Job <{r}>: No matching job found")));
            }
            ids.extend(found);
        }
        ids
    };
    let mut jobs = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(j) = state.book.job(id) else {
            return Err(Response::Error(format!("Job <{}>: No matching job found", state.book.job_ref(id))));
        };
        jobs.push(AskedJob {
            id,
            first: j.array.map(|(first, _)| first).filter(|&first| first != id),
            info: state.info(id, &j, t, &allot_proto::JobQuery::default()),
            spans: j.unknown.clone(),
        });
    }
    Ok(Asked { log: state.state_dir.join("state.db"), jobs })
}

/// Histories read at once: more are refused, so that many `bhist`s cannot
/// take a thread and a connection each.
const MAX_READING: usize = 2;
static READING: std::sync::LazyLock<std::sync::Arc<std::sync::atomic::AtomicUsize>> =
    std::sync::LazyLock::new(Default::default);

/// Reads `asked`'s events on a thread with a read-only connection to the
/// log and answers `reply` from there (`acct::on_thread`); the preempting
/// jobs' numbers are asked of the dispatcher (`Input::JobRefs`), which
/// alone knows them.
pub(crate) fn answer_off(
    asked: Asked,
    reply: tokio::sync::oneshot::Sender<crate::serve::Answer>,
    tx: tokio::sync::mpsc::Sender<crate::serve::Input>,
) {
    let busy = format!("bhist: {MAX_READING} histories are being read; try again when they are done");
    crate::acct::on_thread(("bhist", MAX_READING, busy), READING.clone(), reply, move || {
        read(asked, &tx).unwrap_or_else(Response::Error)
    });
}

/// An event as read, before the dispatcher names the preempting jobs.
enum Read {
    Event(u64, HistoryEvent),
    PreemptedBy(u64, JobId),
}

fn read(asked: Asked, tx: &tokio::sync::mpsc::Sender<crate::serve::Input>) -> Result<Response, String> {
    // The log's archives too (`allot_store::history_dir`): a job pending
    // for long has its first records there.
    let log = allot_store::LogReader::open(&asked.log).map_err(|e| e.to_string())?;
    let records_of = |job| log.job_records(job).map_err(|e| e.to_string());
    let mut read = Vec::with_capacity(asked.jobs.len());
    let mut preemptors = Vec::new();
    for job in &asked.jobs {
        let mut records = Vec::new();
        // An element's submission, its limit's changes, and its removal,
        // hold or release with others are its array's records.
        if let Some(first) = job.first {
            let r = records_of(first)?;
            let of_array = |r: &Record| {
                matches!(
                    r,
                    Record::Submitted { .. }
                        | Record::ArrayLimit { .. }
                        | Record::RemovedElements { .. }
                        | Record::SuspendedElements { .. }
                )
            };
            records.extend(r.into_iter().filter(|(_, r)| of_array(r)));
        }
        records.extend(records_of(job.id)?);
        records.retain(|(_, r)| match r {
            Record::RemovedElements { elements, .. } | Record::SuspendedElements { elements, .. } => {
                elements.contains(job.id)
            }
            _ => true,
        });
        records.sort_by_key(|(t, _)| *t);
        let events = events(records);
        preemptors.extend(events.iter().filter_map(|e| match e {
            Read::PreemptedBy(_, by) => Some(*by),
            Read::Event(..) => None,
        }));
        read.push(events);
    }
    preemptors.sort_unstable();
    preemptors.dedup();
    let refs: std::collections::BTreeMap<JobId, JobRef> = if preemptors.is_empty() {
        Default::default()
    } else {
        let (ask, answer) = tokio::sync::oneshot::channel();
        tx.blocking_send(crate::serve::Input::JobRefs(preemptors.clone(), ask)).map_err(|_| "allotd is stopping")?;
        preemptors.into_iter().zip(answer.blocking_recv().map_err(|_| "allotd is stopping")?).collect()
    };
    let out = asked
        .jobs
        .into_iter()
        .zip(read)
        .map(|(job, events)| {
            let events = events
                .into_iter()
                .map(|e| match e {
                    Read::Event(at, e) => (at, e),
                    Read::PreemptedBy(at, by) => {
                        (at, HistoryEvent::Preempted { by: refs.get(&by).copied().unwrap_or(JobRef::job(by.0)) })
                    }
                })
                .collect();
            JobHistory { job: job.info, events: crate::unknown::with_spans(events, job.spans.as_deref()) }
        })
        .collect();
    Ok(Response::History(out))
}

/// A job's records as `bhist` shows them.
fn events(records: Vec<(Time, Record)>) -> Vec<Read> {
    // A kill's reason shows with the end it brought.
    let mut term = None;
    records
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
            if let Record::Preempted { by, .. } = r {
                return Some(Read::PreemptedBy(at, by));
            }
            let e = match event(r)? {
                HistoryEvent::Finished { exit, cpu_time, reason, .. } => HistoryEvent::Finished {
                    exit,
                    cpu_time,
                    reason,
                    term: term.take().map(|t| t.describe().to_string()),
                },
                e => e,
            };
            Some(Read::Event(at, e))
        })
        .collect()
}

fn event(r: Record) -> Option<HistoryEvent> {
    Some(match r {
        Record::Submitted { record, .. } => HistoryEvent::Submitted {
            queue: record.spec.queue.unwrap_or_default(),
            from_host: record.from_host,
            cwd: record.cwd,
            run_limit: record.spec.run_limit,
        },
        Record::Started { alloc, backfill_limit, .. } => HistoryEvent::Started { hosts: alloc, backfill_limit },
        Record::Finished { exit, cpu_time, reason, .. } => {
            HistoryEvent::Finished { exit, cpu_time, reason, term: None }
        }
        Record::Removed { .. } | Record::RemovedElements { .. } => HistoryEvent::Removed,
        Record::Suspended { stop: true, by, .. } | Record::SuspendedElements { stop: true, by, .. } => {
            HistoryEvent::Suspended { by }
        }
        Record::Suspended { stop: false, by, .. } | Record::SuspendedElements { stop: false, by, .. } => {
            HistoryEvent::Resumed { by }
        }
        Record::Resumed { .. } => HistoryEvent::ResumedBySystem,
        Record::Grown { alloc, .. } => HistoryEvent::Grown { hosts: alloc },
        Record::GrowFailed { alloc, .. } => HistoryEvent::GrowFailed { hosts: alloc },
        Record::Shrunk { release, .. } => HistoryEvent::Released { hosts: release },
        Record::ResizeCancelled { .. } => HistoryEvent::ResizeCancelled,
        Record::Modified { record, .. } => HistoryEvent::Modified { queue: record.spec.queue.unwrap_or_default() },
        Record::Requeued { hold, .. } => HistoryEvent::Requeued { hold },
        Record::ArrayLimit { limit, .. } => HistoryEvent::ArrayLimit { limit },
        // Named by the dispatcher ([`read`]).
        Record::Preempted { .. }
        | Record::HostChanged { .. }
        | Record::HostReach { .. }
        | Record::QueueChanged { .. }
        | Record::Reconfigured { .. }
        | Record::JobGroup(_)
        | Record::Usage { .. }
        | Record::Killed { .. }
        | Record::Scheduled { .. } => return None,
    })
}
