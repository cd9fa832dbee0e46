//! Commands from the other hosts of the cluster, carried by their agents
//! (`allot_agent::commands`): each request is handled as one on allotd's
//! own socket would be, for the uid the agent vouches for, and its answer
//! goes back over the agent's link, frame by frame.
//!
//! Trust: the uid is taken from the connection of the agent that the
//! host's certificate names, never from another. A uid is the same user on
//! every host (the site's password database), looked up here, off the
//! dispatcher. Root on a host (or the user allotd runs as) is root to
//! allotd only from a host of `[cluster] admin_hosts`; from any other,
//! its requests are refused ([`refusal`]).

use allot_agent::wire::ToAgent;
use allot_proto::{Envelope, PROTOCOL_VERSION, Request};
use tokio::sync::{mpsc, oneshot};

use crate::serve::{Answer, Caller, Input, Message};
use crate::state::State;

/// The largest frame carried back through an agent (the agents' protocol
/// carries each frame escaped, within its own `MAX_FRAME`): a larger one
/// is replaced by an error saying so.
const MAX_CARRIED: usize = allot_agent::wire::MAX_FRAME / 3;

/// Handles command request `tag` of `host`'s agent, from `uid`, on a task
/// of its own; the answer goes to `link` while the agent's connection
/// lasts.
pub(crate) fn spawn(
    host: String,
    (tag, uid): (u64, u32),
    request: String,
    tx: mpsc::Sender<Input>,
    link: mpsc::WeakUnboundedSender<ToAgent>,
) {
    tokio::spawn(async move {
        let answer = |frames: Vec<String>, done: bool| {
            if let Some(l) = link.upgrade() {
                let _ = l.send(ToAgent::Answer { tag, frames, done });
            }
        };
        match ask(host, uid, &request, &tx).await {
            Ok(Answer::Response(r)) => answer(vec![frame(&r)], true),
            Ok(Answer::Frames(mut frames)) => {
                while let Some((bytes, _held)) = frames.recv().await {
                    answer(carried(&bytes), false);
                }
                answer(Vec::new(), true);
            }
            Ok(Answer::Stream(mut frames)) => {
                while let Some(bytes) = frames.recv().await {
                    answer(carried(&bytes), false);
                }
                answer(Vec::new(), true);
            }
            Err(why) => answer(vec![allot_agent::commands::error_frame(&why.to_string())], true),
        }
    });
}

/// Why a request relayed from another host is not handled.
#[derive(Debug, thiserror::Error)]
enum AskError {
    #[error("malformed request: {0}")]
    Malformed(serde_json::Error),
    #[error("protocol version {0} is not {PROTOCOL_VERSION}")]
    Version(u32),
    #[error("cannot look the caller up: {0}")]
    Lookup(tokio::task::JoinError),
    #[error("allotd is stopping")]
    Stopping,
}

/// The request, to the dispatcher as the caller `uid` of `host`.
async fn ask(host: String, uid: u32, request: &str, tx: &mpsc::Sender<Input>) -> Result<Answer, AskError> {
    let env = serde_json::from_str::<Envelope<Request>>(request).map_err(AskError::Malformed)?;
    if env.version != PROTOCOL_VERSION {
        return Err(AskError::Version(env.version));
    }
    let caller = tokio::task::spawn_blocking(move || crate::socket::caller_of(uid, Some(host)))
        .await
        .map_err(AskError::Lookup)?;
    let (reply, answer) = oneshot::channel();
    let message = Message { caller, request: env.body, reply };
    tx.send(Input::Request(Box::new(message))).await.map_err(|_| AskError::Stopping)?;
    answer.await.map_err(|_| AskError::Stopping)
}

/// A response as one frame's JSON.
fn frame(r: &allot_proto::Response) -> String {
    let text = serde_json::to_string(&Envelope { version: PROTOCOL_VERSION, body: r }).unwrap_or_default();
    if text.len() > MAX_CARRIED { too_large(text.len()) } else { text }
}

/// Frames the dispatcher wrote for a command, as their JSON texts, each no
/// larger than an agent carries.
fn carried(bytes: &[u8]) -> Vec<String> {
    let mut frames = allot_agent::commands::split_frames(bytes);
    for f in &mut frames {
        if f.len() > MAX_CARRIED {
            *f = too_large(f.len());
        }
    }
    frames
}

fn too_large(len: usize) -> String {
    allot_agent::commands::error_frame(&format!(
        "an answer of {len} bytes is larger than an agent carries ({MAX_CARRIED}): ask on allotd's host, or for less"
    ))
}

/// Why a request from another host is refused before it is handled: root
/// (or allotd's own user) on a host that is not one of `[cluster]
/// admin_hosts`.
pub(crate) fn refusal(state: &State, caller: &Caller, daemon_uid: u32) -> Option<String> {
    let host = caller.from.as_deref()?;
    let privileged = caller.uid == 0 || caller.uid == daemon_uid;
    let listed = state.cluster.as_ref().is_some_and(|c| c.settings.admin_hosts.iter().any(|h| h == host));
    (privileged && !listed).then(|| {
        format!(
            "root on host {host} is not an administrator of this cluster: run this on allotd's host, or list {host} \
             in [cluster] admin_hosts"
        )
    })
}
