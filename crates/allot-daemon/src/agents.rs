//! The agents' listener (with `[cluster]`): each connection is a TLS
//! handshake in which both sides show a certificate of the site CA (one
//! without a valid certificate is closed before anything is read from
//! it), then the agent's hello, whose host its certificate must name.
//! From there, what the agent says goes to the dispatcher
//! ([`AgentInput`]) and what the dispatcher says goes to the agent; a bad
//! frame closes this connection only.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use allot_agent::wire::{self, FromAgent, ToAgent};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;

use crate::cluster::AgentInput;
use crate::serve::Input;

/// How long a handshake and a hello may take.
const HELLO_WITHIN: Duration = Duration::from_secs(10);

/// Connections in their handshake or hello at once, at most.
const MAX_HANDSHAKES: usize = 4096;

/// How long an agent may take to take one message.
const WRITE_WITHIN: Duration = Duration::from_secs(30);

/// What allotd says of connections it refuses: one line a minute per peer
/// address and reason at most (then how many more it did not say), so that
/// a peer that fails its handshake in a loop cannot fill the log. It
/// remembers 4,096 of them at most.
#[derive(Default)]
pub(crate) struct Quiet {
    said: std::sync::Mutex<std::collections::BTreeMap<Said, (std::time::Instant, u64)>>,
}

/// A peer address and a reason its connection was refused.
type Said = (std::net::IpAddr, &'static str);

impl Quiet {
    const EVERY: Duration = Duration::from_secs(60);

    /// Says `line`, unless one of this `reason` was said of `peer` within
    /// the last minute.
    pub(crate) fn say(&self, peer: std::net::IpAddr, reason: &'static str, line: &str) {
        if let Some(line) = self.line((peer, reason), line, std::time::Instant::now()) {
            eprintln!("{line}");
        }
    }

    fn line(&self, key: Said, line: &str, now: std::time::Instant) -> Option<String> {
        let peer = key.0;
        let mut said = self.said.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, quiet)) = said.get_mut(&key) {
            if now.duration_since(*at) < Self::EVERY {
                *quiet += 1;
                return None;
            }
            let more = std::mem::take(quiet);
            *at = now;
            return Some(match more {
                0 => line.to_string(),
                n => format!("{line} (and {n} more from {peer} in the last minute, not said)"),
            });
        }
        if said.len() >= 4096 {
            said.retain(|_, (at, _)| now.duration_since(*at) < Self::EVERY);
            if said.len() >= 4096 {
                said.clear();
            }
        }
        said.insert(key, (now, 0));
        Some(line.to_string())
    }
}

/// Accepts agents until allotd stops.
pub(crate) async fn listen(listener: TcpListener, config: Arc<rustls::ServerConfig>, tx: mpsc::Sender<Input>) {
    let acceptor = TlsAcceptor::from(config);
    let quiet = Arc::new(Quiet::default());
    let conns = Arc::new(AtomicU64::new(0));
    let mut backoff = crate::socket::Backoff::default();
    // Connections not yet past their hello: at most MAX_HANDSHAKES at once
    // (one more is closed at once); an agent that said hello holds none.
    let shaking = Arc::new(tokio::sync::Semaphore::new(MAX_HANDSHAKES));
    loop {
        match listener.accept().await {
            Ok((tcp, peer)) => {
                backoff.reset();
                let Ok(permit) = shaking.clone().try_acquire_owned() else { continue };
                let conn = conns.fetch_add(1, Ordering::Relaxed) + 1;
                tokio::spawn(connection(tcp, (peer, quiet.clone()), conn, acceptor.clone(), tx.clone(), permit));
            }
            Err(e) => backoff.after("the agents' listener", &e).await,
        }
    }
}

async fn connection(
    tcp: TcpStream,
    (peer, quiet): (std::net::SocketAddr, Arc<Quiet>),
    conn: u64,
    acceptor: TlsAcceptor,
    tx: mpsc::Sender<Input>,
    handshake: tokio::sync::OwnedSemaphorePermit,
) {
    let _ = tcp.set_nodelay(true);
    let tls = match tokio::time::timeout(HELLO_WITHIN, acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(e)) => {
            quiet.say(peer.ip(), "handshake", &format!("allotd: agent connection from {peer} refused: {e}"));
            return;
        }
        Err(_) => return,
    };
    let Some(cert) = tls.get_ref().1.peer_certificates().and_then(|c| c.first()).cloned() else { return };
    let (mut reader, mut writer) = tokio::io::split(tls);
    let hello = match tokio::time::timeout(HELLO_WITHIN, wire::read::<FromAgent>(&mut reader)).await {
        Ok(Ok(FromAgent::Hello(hello))) => hello,
        Ok(Ok(_)) | Ok(Err(_)) | Err(_) => {
            quiet.say(peer.ip(), "hello", &format!("allotd: agent connection from {peer}: no hello; closed"));
            return;
        }
    };
    let host = hello.host.clone();
    if !allot_agent::tls::certificate_names(&cert, &host) {
        quiet.say(
            peer.ip(),
            "name",
            &format!(
                "allotd: agent connection from {peer} says it is {host}; its certificate does not name it; closed"
            ),
        );
        let why = format!("this certificate does not name host {host}");
        let _ = wire::write(&mut writer, &ToAgent::Refused { why }).await;
        return;
    }
    drop(handshake);
    let (link, mut outgoing) = mpsc::unbounded_channel::<ToAgent>();
    // Weak: the connection's writer ends when the dispatcher lets go.
    let answers = link.downgrade();
    let hello = AgentInput::Hello { conn, hello: Box::new(hello), link };
    if tx.send(Input::Agent(hello)).await.is_err() {
        return;
    }
    let reading = {
        let (tx, host) = (tx.clone(), host.clone());
        tokio::spawn(async move {
            let why = loop {
                match wire::read::<FromAgent>(&mut reader).await {
                    // A command run on the agent's host: handled apart,
                    // its answer straight to the agent.
                    Ok(FromAgent::Command { tag, uid, request }) => {
                        crate::remote::spawn(host.clone(), (tag, uid), request, tx.clone(), answers.clone());
                    }
                    Ok(message) => {
                        let said = AgentInput::Said { conn, host: host.clone(), message };
                        if tx.send(Input::Agent(said)).await.is_err() {
                            return;
                        }
                    }
                    Err(e) => break e.to_string(),
                }
            };
            let _ = tx.send(Input::Agent(AgentInput::Lost { conn, host, why })).await;
        })
    };
    // Until the dispatcher lets go of the link, a write fails, or an
    // agent takes nothing for WRITE_WITHIN (stopped, or cut off): then
    // the connection goes, and the agent says hello again when it can.
    while let Some(message) = outgoing.recv().await {
        let refused = matches!(message, ToAgent::Refused { .. });
        let wrote = tokio::time::timeout(WRITE_WITHIN, wire::write(&mut writer, &message)).await;
        if !matches!(wrote, Ok(Ok(()))) || refused {
            break;
        }
    }
    reading.abort();
    let _ = tx.send(Input::Agent(AgentInput::Lost { conn, host, why: "closed".into() })).await;
}

#[cfg(test)]
mod quiet_tests {
    use super::*;

    #[test]
    fn a_peer_failing_in_a_loop_is_said_once_a_minute() {
        let quiet = Quiet::default();
        let (a, b): (std::net::IpAddr, std::net::IpAddr) =
            ("10.0.0.1".parse().expect("ip"), "10.0.0.2".parse().expect("ip"));
        let t0 = std::time::Instant::now();
        assert_eq!(quiet.line((a, "handshake"), "refused", t0).as_deref(), Some("refused"));
        for k in 1..=1000 {
            assert_eq!(quiet.line((a, "handshake"), "refused", t0 + Duration::from_millis(k)), None);
        }
        assert_eq!(quiet.line((b, "handshake"), "refused", t0).as_deref(), Some("refused"), "another peer is said");
        assert_eq!(quiet.line((a, "name"), "named", t0).as_deref(), Some("named"), "another reason is said");
        let later = quiet.line((a, "handshake"), "refused", t0 + Duration::from_secs(61));
        assert_eq!(later.as_deref(), Some("refused (and 1000 more from 10.0.0.1 in the last minute, not said)"));
    }
}
