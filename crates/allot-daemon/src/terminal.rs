//! Interactive jobs' terminals relayed through the agents: a job of
//! `bsub -I`, `-Ip` or `-Is` that runs on another host than bsub's has its
//! terminal made by that host's agent (`allot_agent::terminal`), and
//! allotd passes it on: what the job writes, to the `bsub` attached to it
//! (`Request::Attach`, answered by a stream of frames); what is typed at
//! `bsub` (`Request::TermInput`, `TermResize`), to the agent.
//!
//! Only the job's owner attaches or types; an attached `bsub` that reads
//! too slowly loses output beyond [`BUFFERED`] frames, and is told how
//! much (allotd never holds more for it, nor waits for it).

use allot_agent::wire::{FromAgent, ToAgent};
use allot_engine::JobId;
use allot_proto::{JobRef, Response, TYPING_TOO_FAST};
use tokio::sync::{mpsc, oneshot};

use crate::serve::{Answer, Caller};
use crate::state::State;

/// Frames (of at most 16 KiB of output each) held for an attached `bsub`.
const BUFFERED: usize = 64;

/// What is typed is passed on at most this fast, per job (bytes a second,
/// and at once): allotd's queue to an agent never grows faster than its
/// link, whatever a client sends.
const TYPED_PER_SECOND: f64 = 256.0 * 1024.0;
const TYPED_BURST: f64 = 1024.0 * 1024.0;

/// How long after its job's end an attachment waits for the rest of the
/// job's output (its agent reports the end and relays the last output
/// separately) before it is closed without the agent's word.
const AFTER_END: std::time::Duration = std::time::Duration::from_secs(5);

/// One attached `bsub`.
pub struct TermLink {
    frames: mpsc::Sender<Vec<u8>>,
    /// Output bytes dropped since the last frame that went.
    dropped: u64,
    /// When its job was first seen ended.
    ended: Option<std::time::Instant>,
    /// Bytes that may be typed now, as of when.
    typing: (f64, std::time::Instant),
}

/// The job a request names, if it is the caller's interactive job.
fn owned(state: &State, caller: &Caller, number: u64) -> Result<JobId, String> {
    let shown = JobRef::job(number);
    let Some(id) = state.book.resolve(shown).first().copied() else {
        return Err(format!("Job <{shown}>: No matching job found"));
    };
    let j = state.book.jobs.get(&id).ok_or_else(|| format!("Job <{shown}>: No matching job found"))?;
    if caller.uid != 0 && caller.user != j.record.spec.user {
        return Err(format!("Job <{shown}>: User permission denied"));
    }
    if j.record.extras().interactive.is_none() {
        return Err(format!("Job <{shown}>: not an interactive job"));
    }
    Ok(id)
}

fn frame(response: &Response) -> Vec<u8> {
    let mut bytes = Vec::new();
    let _ = crate::socket::frame_into(&mut bytes, response);
    bytes
}

/// `Attach`: the job's terminal from now on, as its agent relays it; at
/// once closed where nothing is relayed (no agents).
pub(crate) fn attach(state: &mut State, caller: &Caller, number: u64, reply: oneshot::Sender<Answer>) {
    let id = match owned(state, caller, number) {
        Ok(id) => id,
        Err(e) => {
            let _ = reply.send(Answer::Response(Response::Error(e)));
            return;
        }
    };
    let Some(c) = &mut state.cluster else {
        let _ = reply.send(Answer::Response(Response::TermClosed));
        return;
    };
    let (frames, rx) = mpsc::channel(BUFFERED);
    let typing = (TYPED_BURST, std::time::Instant::now());
    c.terminals.insert(id, TermLink { frames, dropped: 0, ended: None, typing });
    let _ = reply.send(Answer::Stream(rx));
}

/// `TermInput` and `TermResize`: to the agent of the job's host, from an
/// attached `bsub`, within [`TYPED_PER_SECOND`] (`bsub` sends again what
/// is refused for it).
pub(crate) fn typed(state: &mut State, caller: &Caller, number: u64, what: Typed) -> Response {
    let id = match owned(state, caller, number) {
        Ok(id) => id,
        Err(e) => return Response::Error(e),
    };
    let Some((host, attempt)) = crate::cluster::first_host(state, id) else {
        return Response::Error(format!("Job <{number}>: its terminal is not relayed"));
    };
    let Some(c) = &mut state.cluster else {
        return Response::Error(format!("Job <{number}>: its terminal is not relayed"));
    };
    let Some(link) = c.terminals.get_mut(&id) else {
        return Response::Error(format!("Job <{number}>: its terminal is not relayed"));
    };
    if let Typed::Input { data, .. } = &what {
        let now = std::time::Instant::now();
        let (left, since) = link.typing;
        let left = (left + now.duration_since(since).as_secs_f64() * TYPED_PER_SECOND).min(TYPED_BURST);
        if data.len() as f64 > TYPED_BURST {
            return Response::Error(format!("Job <{number}>: more than {TYPED_BURST} bytes typed at once"));
        }
        if data.len() as f64 > left {
            link.typing = (left, now);
            return Response::Error(format!("{TYPING_TOO_FAST}: wait and send it again"));
        }
        link.typing = (left - data.len() as f64, now);
    }
    let message = match what {
        Typed::Input { data, eof } => ToAgent::TermInput { job: id.0, attempt, data, eof },
        Typed::Resize { rows, cols } => ToAgent::TermResize { job: id.0, attempt, rows, cols },
    };
    if c.send(&host, message) { Response::Done } else { Response::Error(format!("host {host} cannot be reached now")) }
}

pub(crate) enum Typed {
    Input { data: Vec<u8>, eof: bool },
    Resize { rows: u16, cols: u16 },
}

/// What an agent says of a terminal it relays, for the attached `bsub`:
/// only of the job's run on that host.
pub(crate) fn heard(state: &mut State, host: &str, message: FromAgent) {
    let (job, attempt, response) = match message {
        FromAgent::TermStarted { job, attempt, pty } => (job, attempt, Response::TermStarted { pty }),
        FromAgent::TermOutput { job, attempt, stderr, data } => (job, attempt, Response::TermOutput { stderr, data }),
        FromAgent::TermClosed { job, attempt } => (job, attempt, Response::TermClosed),
        _ => return,
    };
    let id = JobId(job);
    if crate::cluster::first_host(state, id).is_none_or(|(h, a)| h != host || a != attempt) {
        return;
    }
    let closed = matches!(response, Response::TermClosed);
    let Some(c) = &mut state.cluster else { return };
    let Some(link) = c.terminals.get_mut(&id) else { return };
    if link.dropped > 0 {
        let note = format!(
            "\r\n[allot: {} bytes of the job's output dropped: this terminal read too slowly]\r\n",
            link.dropped
        );
        let said = Response::TermOutput { stderr: true, data: note.into_bytes() };
        if link.frames.try_send(frame(&said)).is_ok() {
            link.dropped = 0;
        }
    }
    let size = match &response {
        Response::TermOutput { data, .. } => data.len() as u64,
        _ => 0,
    };
    match link.frames.try_send(frame(&response)) {
        Ok(()) => {}
        Err(mpsc::error::TrySendError::Full(_)) if !closed => link.dropped += size,
        Err(_) => {
            c.terminals.remove(&id);
            return;
        }
    }
    if closed {
        c.terminals.remove(&id);
    }
}

/// At each tick: the attachments of jobs that are gone (ended
/// [`AFTER_END`] ago, or never relayed) are closed, and those whose `bsub`
/// went away forgotten.
pub(crate) fn sweep(state: &mut State) {
    let now = std::time::Instant::now();
    let ended: Vec<JobId> = match &state.cluster {
        Some(c) => c
            .terminals
            .keys()
            .filter(|id| state.book.jobs.get(id).is_none_or(|j| !j.status.unfinished()))
            .copied()
            .collect(),
        None => return,
    };
    let Some(c) = &mut state.cluster else { return };
    for id in ended {
        if let Some(link) = c.terminals.get_mut(&id) {
            link.ended.get_or_insert(now);
        }
    }
    c.terminals.retain(|_, link| {
        let over = link.frames.is_closed() || link.ended.is_some_and(|at| now.duration_since(at) >= AFTER_END);
        if over {
            let _ = link.frames.try_send(frame(&Response::TermClosed));
        }
        !over
    });
}
