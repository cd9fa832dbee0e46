//! The LSF commands on every host with an agent: `bsub`, `bjobs`, `bkill`
//! ... run on a compute or login host talk to this host's agent, on its
//! local socket `commands.sock` (any user may connect; who they are comes
//! from the kernel, as with allotd's own socket), and the agent carries
//! each request over its mutual-TLS link to allotd, vouching for the
//! caller's uid as root on this host (as munge does for Slurm). allotd
//! takes the uid from the host its certificate names and from no other;
//! root on a host is root to allotd only on a host listed in `[cluster]
//! admin_hosts`. The answer comes back frame by frame, so streams (`bjobs`
//! of every job, `bpeek -f`, `bsub -K`'s waits) work through it.
//!
//! The frames are the commands' own (`allot_proto`), carried whole: the
//! agent neither reads nor changes a request. What one connection may hold
//! is bounded: one request at a time, of at most `allot_proto::MAX_FRAME`
//! bytes, read within [`FRAME_TIMEOUT`]; at most [`MAX_CONNECTIONS`] at
//! once (one more is closed at once). When allotd cannot be reached, the
//! command is told so at once.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// How many command connections one agent serves at once.
const MAX_CONNECTIONS: usize = 512;
/// How long a request may take to arrive, once begun; and how long a
/// connection may wait between requests.
const FRAME_TIMEOUT: Duration = Duration::from_secs(10);
const IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// The socket the commands find on a host with an agent (where
/// `allot_proto::paths::client_sockets` looks).
pub fn socket_path(state_dir: &Path) -> PathBuf {
    allot_proto::paths::agent_socket(state_dir)
}

/// How long writing an answer to a command may take (it reading nothing
/// meanwhile) before its connection is closed and what waits for it freed.
const WRITE_STALL: Duration = Duration::from_secs(30);

/// Frames of an answer on their way to a command, counted against its
/// user's unread answers ([`crate::answers`]) until written.
pub type Frames = (Vec<String>, Option<crate::answers::Held>);

/// A command's request, for the agent's loop to carry to allotd.
pub struct Asked {
    pub uid: u32,
    /// The request frame's JSON, as the command sent it.
    pub request: String,
    /// Where its answer's frames go; `None` after the last.
    pub reply: mpsc::UnboundedSender<Option<Frames>>,
}

/// The requests this agent carried to allotd whose answers are not all
/// back, by tag, with whose they are; and what they hold unread.
#[derive(Default)]
pub struct Pending {
    next: u64,
    waiting: std::collections::BTreeMap<u64, (u32, mpsc::UnboundedSender<Option<Frames>>)>,
    unread: std::sync::Arc<crate::answers::Budget>,
}

impl Pending {
    /// A request of `uid` to carry: its tag.
    pub fn add(&mut self, uid: u32, reply: mpsc::UnboundedSender<Option<Frames>>) -> u64 {
        self.next += 1;
        self.waiting.insert(self.next, (uid, reply));
        self.next
    }

    /// Frames of request `tag`'s answer; the last when `done`. Past what
    /// its user may have unread, the answer is cut with why, and the rest
    /// dropped as it comes.
    pub fn answer(&mut self, tag: u64, frames: Vec<String>, done: bool) {
        let Some((uid, reply)) = self.waiting.get(&tag) else { return };
        if !frames.is_empty() {
            let bytes = frames.iter().map(|f| f.len() + 4).sum();
            let sent = match self.unread.take(*uid, bytes) {
                Ok(held) => reply.send(Some((frames, Some(held)))),
                Err(why) => {
                    let _ = reply.send(Some((vec![error_frame(&why)], None)));
                    let _ = reply.send(None);
                    self.waiting.remove(&tag);
                    return;
                }
            };
            if sent.is_err() {
                // The command is gone: the rest is dropped as it comes.
                self.waiting.remove(&tag);
                return;
            }
        }
        if done {
            let _ = reply.send(None);
            self.waiting.remove(&tag);
        }
    }

    /// allotd was lost: every command waiting is told `why`.
    pub fn fail_all(&mut self, why: &str) {
        for (_, (_, reply)) in std::mem::take(&mut self.waiting) {
            let _ = reply.send(Some((vec![error_frame(why)], None)));
            let _ = reply.send(None);
        }
    }
}

/// Listens on [`socket_path`]; each request goes to `tx`.
pub fn listen<T: From<Asked> + Send + 'static>(state_dir: &Path, tx: mpsc::Sender<T>) -> Result<(), String> {
    crate::tasks::serve_local(&socket_path(state_dir), MAX_CONNECTIONS, move |stream| {
        let tx = tx.clone();
        async move {
            let _ = connection(stream, tx).await;
        }
    })
}

async fn connection<T: From<Asked> + Send + 'static>(
    mut stream: tokio::net::UnixStream,
    tx: mpsc::Sender<T>,
) -> std::io::Result<()> {
    let uid = stream.peer_cred()?.uid();
    loop {
        let len = match tokio::time::timeout(IDLE_TIMEOUT, stream.read_u32()).await {
            Ok(Ok(len)) => len as usize,
            _ => return Ok(()),
        };
        if len > allot_proto::MAX_FRAME {
            let why = format!("request of {len} bytes is larger than the {} allowed", allot_proto::MAX_FRAME);
            return write_frames(&mut stream, &[error_frame(&why)]).await;
        }
        let mut body = Vec::with_capacity(len.min(64 << 10));
        let mut piece = (&mut stream).take(len as u64);
        match tokio::time::timeout(FRAME_TIMEOUT, piece.read_to_end(&mut body)).await {
            Ok(Ok(n)) if n == len => {}
            _ => return Ok(()),
        }
        let Ok(request) = String::from_utf8(body) else {
            return write_frames(&mut stream, &[error_frame("malformed request: not UTF-8")]).await;
        };
        let (reply, mut answer) = mpsc::unbounded_channel();
        if tx.send(Asked { uid, request, reply }.into()).await.is_err() {
            return Ok(());
        }
        while let Some(Some((frames, _held))) = answer.recv().await {
            tokio::time::timeout(WRITE_STALL, write_frames(&mut stream, &frames)).await??;
        }
    }
}

async fn write_frames(stream: &mut tokio::net::UnixStream, frames: &[String]) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(frames.iter().map(|f| f.len() + 4).sum());
    for f in frames {
        bytes.extend_from_slice(&(f.len() as u32).to_be_bytes());
        bytes.extend_from_slice(f.as_bytes());
    }
    stream.write_all(&bytes).await
}

/// A command's frame saying `why` it got no answer.
pub fn error_frame(why: &str) -> String {
    let env = allot_proto::Envelope {
        version: allot_proto::PROTOCOL_VERSION,
        body: allot_proto::Response::Error(why.to_string()),
    };
    serde_json::to_string(&env).unwrap_or_default()
}

/// The frames of `bytes` (each a length, then JSON), as their JSON texts;
/// what is not a whole frame of UTF-8 ends the list.
pub fn split_frames(mut bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    while bytes.len() >= 4 {
        let len = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        let Some(body) = bytes.get(4..4 + len) else { break };
        let Ok(text) = std::str::from_utf8(body) else { break };
        out.push(text.to_string());
        bytes = &bytes[4 + len..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_split_as_they_were_written() {
        let mut bytes = Vec::new();
        for text in ["{\"a\":1}", "", "{\"b\":\"é\"}"] {
            bytes.extend_from_slice(&(text.len() as u32).to_be_bytes());
            bytes.extend_from_slice(text.as_bytes());
        }
        assert_eq!(split_frames(&bytes), ["{\"a\":1}", "", "{\"b\":\"é\"}"]);
        bytes.truncate(bytes.len() - 1);
        assert_eq!(split_frames(&bytes).len(), 2, "a partial frame is not one");
        assert!(error_frame("no").contains("\"Error\":\"no\""), "{}", error_frame("no"));
    }
}
