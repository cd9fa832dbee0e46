//! The agents' protocol: what an agent and allotd say to each other over
//! their one TLS connection (the agent connects), as length-prefixed JSON
//! frames (a 4-byte big-endian length, then the message), the framing of
//! the commands' socket.
//!
//! An agent opens with [`FromAgent::Hello`]: its host, what the host has,
//! and every job it holds (running, or ended with an end allotd has not
//! acknowledged). allotd answers [`ToAgent::Welcome`] or
//! [`ToAgent::Refused`], and from then on either side speaks when it has
//! something to say; the agent sends a [`FromAgent::Heartbeat`] every
//! `heartbeat` seconds.
//!
//! A job's run on a host is keyed by its id and its attempt (how many
//! times it was started: a job requeued runs again as the next attempt),
//! so an old attempt's end, or its start sent again, is told apart from
//! the job's current run. An end is sent until allotd acknowledges it
//! ([`ToAgent::Acked`], once it is in allotd's log), and again after a
//! lost connection; allotd takes it once.

use allot_exec::{ExecSpec, ExitReport};
use serde::{Deserialize, Serialize};

/// The largest frame either side takes: 16 MiB (a start carries the job's
/// environment; a hello, every job the host holds).
pub const MAX_FRAME: usize = 16 << 20;

/// The protocol's version: an agent and an allotd of different versions
/// do not talk (the hello is refused, saying both).
pub const VERSION: u32 = 2;

/// The name allotd's certificate carries, which an agent asks for: only
/// allotd may give an agent work, and no host's certificate names it.
pub const DAEMON_NAME: &str = "allotd";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum FromAgent {
    Hello(Hello),
    Heartbeat(Heartbeat),
    /// The job's supervisor is started (the job runs, or is about to).
    Started {
        job: u64,
        attempt: u32,
    },
    /// The job ended (or could not start: the report says why).
    Ended {
        job: u64,
        attempt: u32,
        report: ExitReport,
    },
    /// `blaunch` in a job here asks for tasks on hosts of its allocation;
    /// `tag` is this agent's name for the request.
    Launch(Box<Launch>),
    /// Output of a task started here for `origin`'s request `tag`: its
    /// bytes from `offset` on, in its stream (sent again from 0 after a
    /// restart or a [`ToAgent::Resend`]; the `blaunch` keeps each byte once).
    TaskOutput {
        origin: String,
        tag: u64,
        index: u32,
        stderr: bool,
        data: Vec<u8>,
        #[serde(default)]
        offset: u64,
    },
    /// A task started here for `origin`'s request `tag` ended.
    TaskEnded {
        origin: String,
        tag: u64,
        index: u32,
        exit: i32,
    },
    /// `bpeek`'s request `tag`: the output as `bpeek` shows it, or why not.
    Peeked {
        tag: u64,
        output: Result<String, String>,
    },
    /// An interactive job's terminal, relayed (see `crate::terminal`): the
    /// job's supervisor took it, on a pseudo-terminal when `pty`.
    TermStarted {
        job: u64,
        attempt: u32,
        pty: bool,
    },
    /// What the job wrote to it.
    TermOutput {
        job: u64,
        attempt: u32,
        stderr: bool,
        data: Vec<u8>,
    },
    /// The job's side of it closed (every process let go of it), or it
    /// could not be made.
    TermClosed {
        job: u64,
        attempt: u32,
    },
    /// This host's `blaunch` request goes on after its agent or allotd
    /// restarted: its tasks are sent again to their hosts (a host that has
    /// one does not start it twice), and the hosts send all they have of
    /// it again.
    Resume(Box<Launch>),
    /// A command run on this host (`bsub`, `bjobs`...) asks allotd
    /// (see `crate::commands`): `request` is its frame's JSON as it sent
    /// it, `uid` who it is by this host's kernel, which this agent vouches
    /// for; `tag` this agent's name for the request.
    Command {
        tag: u64,
        uid: u32,
        request: String,
    },
}

/// A `blaunch` request (`tag` is its agent's name for it): its command on
/// each of its hosts, one task each.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    pub tag: u64,
    pub request: LaunchRequest,
}

/// What `blaunch` says to its host's agent, over the agent's local socket.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaunchRequest {
    pub job: u64,
    pub attempt: u32,
    pub hosts: Vec<String>,
    /// Run by `/bin/sh -c` on each host, as rsh and ssh run theirs.
    pub command: String,
    pub cwd: std::path::PathBuf,
    pub env: Vec<(String, String)>,
    /// The request's tag, when a `blaunch` whose agent went away asks
    /// again for what its tasks say, instead of starting them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<u64>,
}

/// What a new `blaunch` request is told while its agent has no link to
/// allotd: the `blaunch` asks again a little later.
pub const UNREACHABLE: &str = "allotd cannot be reached from this host now";

/// What `blaunch` hears back: its tasks' output and ends, or a refusal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum LaunchEvent {
    /// The request's tag, by which it is resumed.
    Accepted {
        tag: u64,
    },
    /// Task `index`'s bytes from `offset` of its stream (some may have
    /// been had before: each is written once).
    Output {
        index: u32,
        stderr: bool,
        data: Vec<u8>,
        offset: u64,
    },
    Ended {
        index: u32,
        exit: i32,
    },
    Refused {
        why: String,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub version: u32,
    pub host: String,
    pub resources: Resources,
    /// The jobs it holds: running, or ended and not acknowledged.
    pub jobs: Vec<Held>,
    /// The job runs it has `blaunch` tasks of (job, attempt).
    #[serde(default)]
    pub tasks: Vec<(u64, u32)>,
}

/// A job an agent holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Held {
    pub job: u64,
    pub attempt: u32,
    /// How it ended, when it has.
    pub ended: Option<ExitReport>,
}

/// What a host has, as `lshosts` shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    pub ncpus: u32,
    /// MB.
    pub maxmem: u64,
    pub maxswp: u64,
    /// `uname -m`, as LSF's host type for hosts it does not know.
    pub host_type: String,
    /// The agent's clock when it said so, seconds since the epoch: allotd
    /// says when a host's clock is off.
    pub clock: u64,
}

/// A host's load, as `lsload` shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// Run-queue lengths over 1, 5 and 15 minutes (the load averages).
    pub r1m: f64,
    pub r5m: f64,
    pub r15m: f64,
    /// Free memory and swap, MB.
    pub mem: u64,
    pub swp: u64,
    /// Processes that run.
    pub procs: u32,
    /// CPU utilization since the last heartbeat, 0 to 1.
    #[serde(default)]
    pub ut: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Heartbeat {
    pub load: Load,
    /// Running jobs' measures: job, CPU seconds, resident memory KB.
    pub usage: Vec<(u64, f64, u64)>,
    /// The agent's clock, seconds since the epoch.
    pub clock: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ToAgent {
    /// The hello is taken: heartbeat this often (seconds).
    Welcome {
        heartbeat: u64,
    },
    /// The hello is not taken, and why; the agent tries again later.
    Refused {
        why: String,
    },
    /// Start this job's run. The spec's unnamed output files and cgroup
    /// are the agent's to place; its owner is `user`, looked up on the
    /// agent's host.
    Start {
        attempt: u32,
        user: String,
        spec: Box<ExecSpec>,
        /// When allotd decided it (microseconds since the epoch), for the
        /// load generator's latency figures.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decided_us: Option<u64>,
    },
    /// Send the job's processes this signal (its number).
    Signal {
        job: u64,
        attempt: u32,
        signal: i32,
    },
    /// What the job's other hosts (its `blaunch` tasks there) used so
    /// far, CPU seconds and KB of memory: for its report here, which
    /// tells the job's whole use.
    OtherHosts {
        job: u64,
        attempt: u32,
        cpu_time: f64,
        max_rss_kb: u64,
    },
    /// The job's end is in allotd's log: forget it.
    Acked {
        job: u64,
        attempt: u32,
    },
    /// allotd has no such run (ended, or never of this host): end it,
    /// report nothing.
    Forget {
        job: u64,
        attempt: u32,
    },
    /// Start task `index` of `origin`'s `blaunch` (its request `tag`) for
    /// the job's run: as `user`, in the job's environment.
    Task {
        origin: String,
        tag: u64,
        index: u32,
        job: u64,
        attempt: u32,
        user: String,
        spec: Box<ExecSpec>,
    },
    /// For this agent's `blaunch` request `tag`: a task's output, its end,
    /// or the refusal of the whole request.
    TaskOutput {
        tag: u64,
        index: u32,
        stderr: bool,
        data: Vec<u8>,
        #[serde(default)]
        offset: u64,
    },
    TaskEnded {
        tag: u64,
        index: u32,
        exit: i32,
    },
    /// Send again everything of the tasks here of `origin`'s request
    /// `tag` (its `blaunch` resumed).
    Resend {
        origin: String,
        tag: u64,
    },
    LaunchRefused {
        tag: u64,
        why: String,
    },
    /// The job's run is over: end its tasks here (and its run, if any).
    EndTasks {
        job: u64,
        attempt: u32,
    },
    /// What is typed at an interactive job's terminal (`eof`: its input
    /// ended, after `data`).
    TermInput {
        job: u64,
        attempt: u32,
        data: Vec<u8>,
        eof: bool,
    },
    /// The terminal's new size.
    TermResize {
        job: u64,
        attempt: u32,
        rows: u16,
        cols: u16,
    },
    /// The answer to this agent's command request `tag`: frames' JSON, in
    /// order; `done` after the last.
    Answer {
        tag: u64,
        frames: Vec<String>,
        done: bool,
    },
    /// `bpeek`: read job `job`'s output files (the unnamed ones are this
    /// agent's own), as `user`.
    Peek {
        tag: u64,
        job: u64,
        user: String,
        out: allot_exec::OutputFile,
        err: allot_exec::OutputFile,
    },
}

/// Why a frame could not be had.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("a frame of {0} bytes, more than {MAX_FRAME}")]
    TooLarge(usize),
    #[error("a malformed message: {0}")]
    Json(#[from] serde_json::Error),
}

#[cfg(feature = "runtime")]
mod io {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

    use super::{MAX_FRAME, WireError};

    /// Reads one message; a length over [`MAX_FRAME`] is refused before
    /// any of it is read, and memory grows only with the bytes that came.
    pub async fn read<T: DeserializeOwned>(r: &mut (impl AsyncRead + Unpin)) -> Result<T, WireError> {
        read_up_to(r, MAX_FRAME).await
    }

    /// [`read`] of a frame of at most `max` bytes.
    pub async fn read_up_to<T: DeserializeOwned>(r: &mut (impl AsyncRead + Unpin), max: usize) -> Result<T, WireError> {
        let len = r.read_u32().await? as usize;
        if len > max {
            return Err(WireError::TooLarge(len));
        }
        let mut buf = Vec::with_capacity(len.min(64 << 10));
        let got = r.take(len as u64).read_to_end(&mut buf).await?;
        if got < len {
            return Err(WireError::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        Ok(serde_json::from_slice(&buf)?)
    }

    /// Writes one message.
    pub async fn write<T: Serialize>(w: &mut (impl AsyncWrite + Unpin), message: &T) -> Result<(), WireError> {
        let bytes = serde_json::to_vec(message)?;
        if bytes.len() > MAX_FRAME {
            return Err(WireError::TooLarge(bytes.len()));
        }
        w.write_u32(bytes.len() as u32).await?;
        w.write_all(&bytes).await?;
        w.flush().await?;
        Ok(())
    }
}

#[cfg(feature = "runtime")]
pub use io::{read, read_up_to, write};

/// Blocking frames, for `blaunch` (a command: no async runtime).
pub mod blocking {
    use std::io::{Read, Write};

    use serde::Serialize;
    use serde::de::DeserializeOwned;

    use super::{MAX_FRAME, WireError};

    pub fn read<T: DeserializeOwned>(r: &mut impl Read) -> Result<T, WireError> {
        let mut len = [0u8; 4];
        r.read_exact(&mut len)?;
        let len = u32::from_be_bytes(len) as usize;
        if len > MAX_FRAME {
            return Err(WireError::TooLarge(len));
        }
        let mut buf = Vec::with_capacity(len.min(64 << 10));
        r.take(len as u64).read_to_end(&mut buf)?;
        if buf.len() < len {
            return Err(WireError::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        Ok(serde_json::from_slice(&buf)?)
    }

    pub fn write<T: Serialize>(w: &mut impl Write, message: &T) -> Result<(), WireError> {
        let bytes = serde_json::to_vec(message)?;
        if bytes.len() > MAX_FRAME {
            return Err(WireError::TooLarge(bytes.len()));
        }
        w.write_all(&(bytes.len() as u32).to_be_bytes())?;
        w.write_all(&bytes)?;
        w.flush()?;
        Ok(())
    }
}

#[cfg(all(test, feature = "runtime"))]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn messages_go_through_and_a_huge_frame_is_refused_unread() {
        let (mut a, mut b) = tokio::io::duplex(1 << 20);
        let hello = FromAgent::Hello(Hello {
            version: VERSION,
            host: "host1".into(),
            resources: Resources { ncpus: 4, ..Resources::default() },
            jobs: vec![Held { job: 7, attempt: 2, ended: None }],
            tasks: Vec::new(),
        });
        write(&mut a, &hello).await.expect("written");
        assert_eq!(read::<FromAgent>(&mut b).await.expect("read"), hello);
        use tokio::io::AsyncWriteExt;
        a.write_u32(u32::MAX).await.expect("written");
        assert!(matches!(read::<FromAgent>(&mut b).await, Err(WireError::TooLarge(n)) if n == u32::MAX as usize));
        a.write_u32(3).await.expect("written");
        a.write_all(b"{x}").await.expect("written");
        assert!(matches!(read::<FromAgent>(&mut b).await, Err(WireError::Json(_))));
    }
}
