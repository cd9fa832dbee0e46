//! Job lists (`bjobs`): written straight from the job table, frame by
//! frame, after the batch that asked for them is committed.

use allot_engine::Time;
use allot_proto::{JobInfoRef, JobQuery, Response};
use tokio::sync::{mpsc, oneshot};

use crate::serve::{Answer, Caller, now};
use crate::socket::frame_into;
use crate::state::State;

/// A job list asked for in a batch, written once the batch is answered.
pub(crate) struct JobList {
    pub(crate) reply: oneshot::Sender<Answer>,
    pub(crate) caller: Caller,
    pub(crate) query: JobQuery,
}

/// Jobs per frame of a long job list: the command parses one part while
/// allotd writes the next.
const JOBS_PER_FRAME: usize = 2000;

/// A long job list's frames, serialized from slices of it exactly as
/// [`Response::JobsPart`] and a last [`Response::Jobs`] are.
#[derive(serde::Serialize)]
enum JobsFrame<'a, T> {
    Jobs(&'a [T]),
    JobsPart(&'a [T]),
}

/// A job list as its frames, written straight from the jobs it is given
/// (borrowed from the job table), [`JOBS_PER_FRAME`] to a frame: no
/// `JobInfo` is built and no string copied to answer `bjobs -u all`.
struct JobFrames<'a, I: Iterator<Item = JobInfoRef<'a>>> {
    jobs: std::iter::Peekable<I>,
    part: Vec<JobInfoRef<'a>>,
    done: bool,
}

impl<'a, I: Iterator<Item = JobInfoRef<'a>>> JobFrames<'a, I> {
    fn new(jobs: I) -> Self {
        JobFrames { jobs: jobs.peekable(), part: Vec::with_capacity(JOBS_PER_FRAME), done: false }
    }
}

impl<'a, I: Iterator<Item = JobInfoRef<'a>>> Iterator for JobFrames<'a, I> {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        if self.done {
            return None;
        }
        self.part.clear();
        self.part.extend(self.jobs.by_ref().take(JOBS_PER_FRAME));
        self.done = self.jobs.peek().is_none();
        let frame = if self.done { JobsFrame::Jobs(&self.part) } else { JobsFrame::JobsPart(&self.part) };
        let mut bytes = Vec::with_capacity(self.part.len() * 128 + 64);
        if let Err(e) = frame_into(&mut bytes, &frame) {
            // The command stops at an error, whatever parts came before.
            self.done = true;
            bytes.clear();
            let _ = frame_into(&mut bytes, &Response::Error(format!("cannot write the job list: {e}")));
        }
        Some(bytes)
    }
}

/// Writes a job list frame by frame, letting its connection send each
/// frame as it is made: the command parses the first part while allotd
/// writes the rest. Nothing changes the state in between, as only this
/// loop does. Each frame counts against what its user and all users may
/// have unread ([`crate::answers`]); a list that would go past it ends
/// with an error saying so.
pub(crate) async fn write_job_list(
    state: &State,
    JobList { reply, caller, query }: JobList,
    answers: &std::sync::Arc<allot_agent::answers::Budget>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    if reply.send(Answer::Frames(rx)).is_err() {
        return;
    }
    for frame in JobFrames::new(listed(state, &caller, &query, now())) {
        let sent = match answers.take(caller.uid, frame.len()) {
            Ok(held) => tx.send((frame, Some(held))),
            Err(why) => {
                let mut bytes = Vec::new();
                let _ = frame_into(&mut bytes, &Response::Error(why));
                let _ = tx.send((bytes, None));
                return;
            }
        };
        if sent.is_err() {
            return;
        }
        tokio::task::yield_now().await;
    }
}

/// The jobs a query lists: the ones it names, or the caller's (`-u`'s)
/// unfinished (or all, `-a`) jobs, in id order.
fn listed<'a>(
    state: &'a State,
    caller: &'a Caller,
    q: &'a JobQuery,
    t: Time,
) -> Box<dyn Iterator<Item = JobInfoRef<'a>> + 'a> {
    // `-g`: a group's jobs and its subgroups'.
    let in_group = move |j: &crate::state::BookJob| {
        q.job_group.as_deref().is_none_or(|g| {
            let g = allot_engine::job_groups::normal(g);
            j.record.spec.job_group.as_deref().is_some_and(|jg| allot_engine::job_groups::is_within(jg, g))
        })
    };
    if !q.jobs.is_empty() {
        return Box::new(q.jobs.iter().flat_map(|&r| state.book.resolve(r)).filter_map(move |id| {
            state.book.job_or_template(id).filter(|j| in_group(j)).map(|j| state.info_of(id, j, t, q))
        }));
    }
    let user = q.user.as_deref().unwrap_or(&caller.user);
    let wanted = move |j: &crate::state::BookJob| {
        (user == "all" || j.record.spec.user == user)
            && (q.finished || j.status.unfinished())
            && q.queue.as_ref().is_none_or(|qq| j.record.spec.queue.as_deref() == Some(qq))
            && in_group(j)
    };
    Box::new(state.book.each_job().filter(move |(_, j)| wanted(j)).map(move |(id, j)| state.info_of(id, j, t, q)))
}

#[cfg(test)]
mod tests {
    use allot_proto::{Envelope, PROTOCOL_VERSION};

    use super::*;

    #[test]
    fn job_list_frames_are_the_responses_they_stand_for() {
        let job = allot_proto::JobInfo {
            id: 3,
            index: 0,
            array: None,
            user: "alice".into(),
            status: allot_proto::JobStatus::Pend,
            queue: "normal".into(),
            from_host: "h".into(),
            exec_hosts: Vec::new(),
            name: "n".into(),
            submit_time: 1,
            start_time: None,
            end_time: None,
            exit_code: None,
            pending_reason: None,
            slots: 1,
            command: "true".into(),
            cwd: "/".into(),
            project: None,
            cpu_time: None,
            run_limit: None,
            estimated_run_time: None,
            priority: None,
            mem_kb: None,
            max_mem_kb: None,
            reserved: None,
            exit_reason: None,
            exec_cwd: None,
            term_reason: None,
            mem_limit_kb: None,
            resize_request: None,
            description: None,
            detail: None,
        };
        // Split as allotd splits a long list: whole frames, then the rest.
        let jobs = vec![job; JOBS_PER_FRAME + 1];
        let frames = |jobs: &[allot_proto::JobInfo]| {
            let bytes: Vec<u8> = JobFrames::new(jobs.iter().map(allot_proto::JobInfo::borrowed)).flatten().collect();
            let mut out = Vec::new();
            let mut rest = &bytes[..];
            while !rest.is_empty() {
                let len = u32::from_be_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
                out.push(String::from_utf8(rest[4..4 + len].to_vec()).expect("utf-8"));
                rest = &rest[4 + len..];
            }
            out
        };
        let envelope =
            |body: Response| serde_json::to_string(&Envelope { version: PROTOCOL_VERSION, body }).expect("serializes");
        assert_eq!(
            frames(&jobs),
            [
                envelope(Response::JobsPart(jobs[..JOBS_PER_FRAME].to_vec())),
                envelope(Response::Jobs(jobs[JOBS_PER_FRAME..].to_vec()))
            ]
        );
        assert_eq!(frames(&[]), [envelope(Response::Jobs(Vec::new()))], "no job: one empty last frame");
    }
}
