//! The socket: connections, their requests' frames, and what a
//! connection may cost. Each request goes, with the caller's identity from
//! the socket's peer credentials (never from the request), to the one
//! dispatcher; its answer comes back the same way.

use std::time::Duration;

use allot_proto::{Envelope, PROTOCOL_VERSION, Request, Response};
use anyhow::Context;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot};

use crate::serve::{Answer, Caller, Input, Message};

/// How long a connection may wait between requests, and how long a
/// request, once its length has come, may take to arrive whole: a
/// connection that stalls past either is closed, and its memory freed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(600);
const FRAME_TIMEOUT: Duration = Duration::from_secs(10);
/// How long writing one frame of an answer may take (the reader taking
/// nothing meanwhile) before its connection is closed.
const WRITE_STALL: Duration = Duration::from_secs(30);

/// Requests are read in pieces of this size, each but the first taken
/// from [`REQUEST_BUDGET`] as it comes.
const PIECE: usize = 64 << 10;
/// What all the requests being read at once may hold, in pieces (32 MiB):
/// a connection that has none to take waits for one (its frame timeout
/// still runs), so however many connections send large requests, what
/// they hold together stays bounded.
const REQUEST_BUDGET: usize = 512;

/// Accept errors in a row. Out of descriptors, or memory: the error stays
/// until something closes, so an accept loop waits instead of spinning,
/// longer while it lasts (up to a second).
#[derive(Default)]
pub(crate) struct Backoff(u32);

impl Backoff {
    /// The accept worked.
    pub(crate) fn reset(&mut self) {
        self.0 = 0;
    }

    /// The accept failed (`what` is the listener): said once, then waited.
    pub(crate) async fn after(&mut self, what: &str, e: &std::io::Error) {
        self.0 = self.0.saturating_add(1);
        if self.0 == 1 {
            eprintln!("allotd: {what}: cannot accept a connection: {e}; retrying");
        }
        tokio::time::sleep(Duration::from_millis(10 * u64::from(self.0.min(100)))).await;
    }
}

pub(crate) async fn accept_loop(listener: UnixListener, tx: mpsc::Sender<Input>) {
    let budget = std::sync::Arc::new(tokio::sync::Semaphore::new(REQUEST_BUDGET));
    let caps = allot_agent::caps::Caps::for_open_files(
        allot_exec::inherit::open_files_limit(),
        nix::unistd::geteuid().as_raw(),
    );
    let mut backoff = Backoff::default();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => {
                backoff.reset();
                stream
            }
            Err(e) => {
                backoff.after("the socket", &e).await;
                continue;
            }
        };
        let Ok(uid) = stream.peer_cred().map(|c| c.uid()) else { continue };
        let (tx, budget) = (tx.clone(), budget.clone());
        match caps.take(uid) {
            Ok(slot) => {
                tokio::spawn(async move {
                    let _ = connection(stream, uid, tx, budget).await;
                    drop(slot);
                });
            }
            // Told why, as a request's answer would be (the command reads
            // it after sending its request), then closed.
            Err(why) => {
                tokio::spawn(async move {
                    let mut stream = stream;
                    let r = Response::Error(why);
                    let _ = tokio::time::timeout(Duration::from_secs(1), write_frame(&mut stream, &r, 256)).await;
                });
            }
        }
    }
}

/// Reads a request's `len` bytes, piece by piece. The first piece is the
/// connection's own (every ordinary request fits in it, so a `bjobs` never
/// waits behind large requests); each further piece's memory is taken from
/// `budget` first, and the permits are held until the request is dropped
/// with them. Past the first piece, memory grows as bytes come, never with
/// the length announced.
async fn read_body(
    stream: &mut UnixStream,
    len: usize,
    budget: &std::sync::Arc<tokio::sync::Semaphore>,
) -> std::io::Result<(Vec<u8>, Option<tokio::sync::OwnedSemaphorePermit>)> {
    // The first piece is taken whole at once (one read for an ordinary
    // request); it is at most 64 KiB whatever the length says.
    let mut buf = Vec::with_capacity(len.min(PIECE));
    let mut held: Option<tokio::sync::OwnedSemaphorePermit> = None;
    while buf.len() < len {
        if !buf.is_empty() {
            let permit = budget.clone().acquire_owned().await.map_err(std::io::Error::other)?;
            match &mut held {
                Some(h) => h.merge(permit),
                None => held = Some(permit),
            }
            buf.reserve_exact(PIECE.min(len - buf.len()));
        }
        let piece = PIECE.min(len - buf.len());
        let n = (&mut *stream).take(piece as u64).read_to_end(&mut buf).await?;
        if n < piece {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
    }
    Ok((buf, held))
}

async fn connection(
    mut stream: UnixStream,
    uid: u32,
    tx: mpsc::Sender<Input>,
    budget: std::sync::Arc<tokio::sync::Semaphore>,
) -> anyhow::Result<()> {
    // The password database may be slow (LDAP, sssd): asked off the
    // runtime's thread, which every connection and the agents share.
    let caller = tokio::task::spawn_blocking(move || caller_of(uid, None)).await?;
    loop {
        let mut len = [0u8; 4];
        match tokio::time::timeout(IDLE_TIMEOUT, stream.read_exact(&mut len)).await {
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => return Ok(()),
        }
        let len = u32::from_be_bytes(len) as usize;
        let response = if len > allot_proto::MAX_FRAME {
            // Refused unread: the connection cannot go on after it.
            let r = Response::Error(format!(
                "request of {len} bytes is larger than the {} allowed",
                allot_proto::MAX_FRAME
            ));
            write_frame(&mut stream, &r, 256).await?;
            return Ok(());
        } else {
            // Memory grows with the bytes that come, not with the length
            // announced; a request that stops coming is given up.
            let (buf, _held) = match tokio::time::timeout(FRAME_TIMEOUT, read_body(&mut stream, len, &budget)).await {
                Ok(Ok(body)) => body,
                Ok(Err(_)) => return Ok(()),
                Err(_) => {
                    let r = Response::Error(format!(
                        "request of {len} bytes incomplete after {} s: the connection is closed",
                        FRAME_TIMEOUT.as_secs()
                    ));
                    let _ = write_frame(&mut stream, &r, 256).await;
                    return Ok(());
                }
            };
            match serde_json::from_slice::<Envelope<Request>>(&buf) {
                Ok(env) if env.version != PROTOCOL_VERSION => Answer::Response(Response::Error(format!(
                    "protocol version {} is not {PROTOCOL_VERSION}",
                    env.version
                ))),
                Ok(env) => {
                    let (reply, answer) = oneshot::channel();
                    tx.send(Input::Request(Box::new(Message { caller: caller.clone(), request: env.body, reply })))
                        .await?;
                    answer.await?
                }
                Err(e) => Answer::Response(Response::Error(format!("malformed request: {e}"))),
            }
        };
        match response {
            Answer::Response(r) => write_frame(&mut stream, &r, 256).await?,
            // A reader that takes nothing for WRITE_STALL is gone: its
            // connection closes, and what allotd held for it is freed.
            Answer::Frames(mut frames) => {
                while let Some((bytes, _held)) = frames.recv().await {
                    tokio::time::timeout(WRITE_STALL, stream.write_all(&bytes)).await??;
                }
            }
            Answer::Stream(mut frames) => {
                while let Some(bytes) = frames.recv().await {
                    stream.write_all(&bytes).await?;
                }
            }
        }
    }
}

/// Who a uid is, by the password database (NSS), asking from `from` (a
/// host whose agent carried the request, or allotd's own socket).
pub(crate) fn caller_of(uid: u32, from: Option<String>) -> Caller {
    let account = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)).ok().flatten();
    let known = account.is_some();
    let user = account.map_or_else(|| format!("uid:{uid}"), |u| u.name);
    Caller { uid, user, known, from }
}

/// Appends one frame: its length, then its JSON.
pub(crate) fn frame_into(bytes: &mut Vec<u8>, body: &impl serde::Serialize) -> anyhow::Result<()> {
    let at = bytes.len();
    bytes.extend_from_slice(&[0; 4]);
    serde_json::to_writer(&mut *bytes, &Envelope { version: PROTOCOL_VERSION, body })?;
    let len = u32::try_from(bytes.len() - at - 4).context("a frame of more than 4 GiB")?;
    bytes[at..at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// One frame, built in one buffer of about `size` bytes and written at
/// once.
async fn write_frame(stream: &mut UnixStream, body: &impl serde::Serialize, size: usize) -> anyhow::Result<()> {
    let mut bytes = Vec::with_capacity(size + 4);
    frame_into(&mut bytes, body)?;
    stream.write_all(&bytes).await?;
    Ok(())
}
