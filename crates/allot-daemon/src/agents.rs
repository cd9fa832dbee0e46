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

/// Accepts agents until allotd stops.
pub(crate) async fn listen(listener: TcpListener, config: Arc<rustls::ServerConfig>, tx: mpsc::Sender<Input>) {
    let acceptor = TlsAcceptor::from(config);
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
                tokio::spawn(connection(tcp, peer, conn, acceptor.clone(), tx.clone(), permit));
            }
            Err(e) => backoff.after("the agents' listener", &e).await,
        }
    }
}

async fn connection(
    tcp: TcpStream,
    peer: std::net::SocketAddr,
    conn: u64,
    acceptor: TlsAcceptor,
    tx: mpsc::Sender<Input>,
    handshake: tokio::sync::OwnedSemaphorePermit,
) {
    let _ = tcp.set_nodelay(true);
    let tls = match tokio::time::timeout(HELLO_WITHIN, acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(e)) => {
            eprintln!("allotd: agent connection from {peer} refused: {e}");
            return;
        }
        Err(_) => return,
    };
    let Some(cert) = tls.get_ref().1.peer_certificates().and_then(|c| c.first()).cloned() else { return };
    let (mut reader, mut writer) = tokio::io::split(tls);
    let hello = match tokio::time::timeout(HELLO_WITHIN, wire::read::<FromAgent>(&mut reader)).await {
        Ok(Ok(FromAgent::Hello(hello))) => hello,
        Ok(Ok(_)) | Ok(Err(_)) | Err(_) => {
            eprintln!("allotd: agent connection from {peer}: no hello; closed");
            return;
        }
    };
    let host = hello.host.clone();
    if !allot_agent::tls::certificate_names(&cert, &host) {
        eprintln!("allotd: agent connection from {peer} says it is {host}; its certificate does not name it; closed");
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
