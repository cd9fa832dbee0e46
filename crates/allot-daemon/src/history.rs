//! What a job did and wrote: `bhist` from the event log, `bpeek` from the
//! job's output files. Both only read.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use allot_engine::Time;
use allot_proto::{HistoryEvent, JobHistory, JobRef, JobStatus, Response};
use allot_store::Record;

use crate::running::owner_ids;
use crate::serve::{Caller, may_act};
use crate::state::State;

/// The most of a file `bpeek` shows: its end.
const PEEK_LIMIT: u64 = 4 << 20;

/// `bpeek`: the output so far of a job that started, running or ended (by
/// default the caller's most recently submitted running job).
pub fn peek(state: &State, caller: &Caller, job: Option<JobRef>) -> Response {
    let id = match job {
        Some(r) => match state.resolve(r)[..] {
            [id] => id,
            [] => return Response::Error(format!("Job <{r}>: No matching job found")),
            _ => return Response::Error(format!("Job <{r}>: a job array; name one element, as {r}[1]")),
        },
        None => {
            let mine = state.jobs.iter().rev().find(|(_, j)| {
                j.record.spec.user == caller.user && matches!(j.status, JobStatus::Run | JobStatus::Ususp)
            });
            match mine {
                Some((id, _)) => *id,
                None => return Response::Error("No unfinished job found".into()),
            }
        }
    };
    let Some(j) = state.jobs.get(&id) else { return Response::Error(format!("Job <{id}>: No matching job found")) };
    let id_shown = j.job_ref(id);
    if !may_act(state, caller, &j.record.spec.user) {
        return Response::Error(format!("Job <{id_shown}>: User permission denied"));
    }
    match j.status {
        JobStatus::Pend | JobStatus::Psusp => {
            return Response::Error(format!("Job <{id_shown}>: Job has not started yet"));
        }
        // A finished job's output stays readable to its owner: default
        // output is in the state directory, which only allotd reads.
        JobStatus::Run | JobStatus::Ususp | JobStatus::Done | JobStatus::Exit => {}
    }
    let owner = owner_ids(&j.record.spec.user);
    let (out, err) = state.output_files(id, j);
    let mut output = String::from("<< output from stdout >>\n");
    match read_tail(&out.path, owner, out.named) {
        Ok(text) => output.push_str(&text),
        Err(e) => return Response::Error(format!("Job <{id_shown}>: {}: {e}", out.path.display())),
    }
    if err.path != out.path {
        if let Ok(text) = read_tail(&err.path, owner, err.named) {
            if !text.is_empty() {
                output.push_str("\n<< output from stderr >>\n");
                output.push_str(&text);
            }
        }
    }
    Response::Peek { job: id_shown, output }
}

/// The last [`PEEK_LIMIT`] bytes of a file; nothing if it does not exist
/// yet. As root, only a file the job's owner owns is read: an output path
/// is the user's to choose, and allotd must not read what they cannot.
fn read_tail(path: &Path, owner: Option<(u32, u32)>, named: bool) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::fs::OpenOptionsExt;
    // Opened as the owner: a path they name reaches only what they could
    // open themselves, so no device, and nothing of root's, is ever
    // opened (opening some devices does something). Never waits: a FIFO
    // opens at once (and is then no regular file, so it is not read).
    // allotd's own output files (in its state directory, which the owner
    // may not enter) it opens itself: it chose their paths.
    let _as_owner = match owner.filter(|_| named) {
        Some((uid, gid)) => Some(AsOwner::switch(uid, gid).ok_or("cannot take the job's user's identity")?),
        None => None,
    };
    let nonblocking = nix::fcntl::OFlag::O_NONBLOCK.bits();
    let opened = std::fs::OpenOptions::new().read(true).custom_flags(nonblocking).open(path);
    drop(_as_owner);
    let mut f = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(e.to_string()),
    };
    let meta = f.metadata().map_err(|e| e.to_string())?;
    if owner.is_some_and(|(uid, _)| meta.uid() != uid) {
        return Err("not owned by the job's user".into());
    }
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let skip = meta.len().saturating_sub(PEEK_LIMIT);
    f.seek(SeekFrom::Start(skip)).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// This thread's file-system identity (`setfsuid`, `setfsgid`: per thread
/// on Linux, so allotd's other threads keep root's) switched to a job
/// owner's until dropped.
struct AsOwner {
    uid: nix::unistd::Uid,
    gid: nix::unistd::Gid,
}

impl AsOwner {
    fn switch(uid: u32, gid: u32) -> Option<AsOwner> {
        use nix::unistd::{Gid, Uid, setfsgid, setfsuid};
        let (to_uid, to_gid) = (Uid::from_raw(uid), Gid::from_raw(gid));
        let back = AsOwner { gid: setfsgid(to_gid), uid: setfsuid(to_uid) };
        // Each call answers the identity before it: asked again, it says
        // whether the switch took.
        let took = setfsuid(to_uid) == to_uid && setfsgid(to_gid) == to_gid;
        took.then_some(back)
    }
}

impl Drop for AsOwner {
    fn drop(&mut self) {
        nix::unistd::setfsuid(self.uid);
        nix::unistd::setfsgid(self.gid);
    }
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
    let ids: Vec<u64> = if refs.is_empty() {
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
        let Some(j) = state.jobs.get(&id) else { return Response::Error(format!("Job <{id}>: No matching job found")) };
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
                let e = match event(r)? {
                    HistoryEvent::Finished { exit, cpu_time, reason, .. } => HistoryEvent::Finished {
                        exit,
                        cpu_time,
                        reason,
                        term: term.take().map(|t| t.describe().to_string()),
                    },
                    e => e,
                };
                Some((at.0, e))
            })
            .collect();
        out.push(JobHistory { job: state.info(id, j, t, &allot_proto::JobQuery::default()), events });
    }
    Response::History(out)
}

fn event(r: Record) -> Option<HistoryEvent> {
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
