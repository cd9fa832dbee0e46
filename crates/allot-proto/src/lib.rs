//! The wire between the `allot` commands and `allotd`: versioned request
//! and response types, framed as a 4-byte big-endian length and that many
//! bytes of JSON, over a unix socket. Engine types never cross it: the
//! daemon converts at its boundary.
//!
//! Frames are at most [`MAX_FRAME`] bytes; a longer one is refused before
//! it is read, so a client cannot make the daemon allocate at will.

pub mod acct;
pub mod cluster;
pub mod frame;
pub mod hosts;
pub mod job_groups;
pub mod job_info;
pub mod limits;
pub mod messages;
pub mod paths;
pub mod shares;
mod submission;
pub mod text;

pub use frame::{FrameError, MAX_FRAME, MAX_RESPONSE, read_frame, read_frame_up_to, write_frame};
pub use job_info::*;
pub use limits::{Interactive, MailAsked, ProcessLimits};
pub use messages::*;
pub use shares::*;
pub use submission::Submission;

use std::os::unix::net::UnixStream;
use std::path::Path;

/// The protocol's version; a peer speaking another is refused.
pub const PROTOCOL_VERSION: u32 = 2;

/// What crosses the socket: the version, then the message.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Envelope<T> {
    pub version: u32,
    pub body: T,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The system's error is in the message, and is no source of it, so
    /// that it is printed once.
    #[error("cannot connect to allotd at {path}: {error} (is it running? `allot start` starts it)")]
    Connect { path: String, error: std::io::Error },
    /// The daemon at `path` runs as another user than the caller and
    /// root: never talked to (it could be one another user planted to
    /// catch commands and what they send).
    #[error("{path} is served by uid {uid}, neither you nor root: not used")]
    Untrusted { path: String, uid: u32 },
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("allotd speaks protocol version {theirs}, this command {ours}")]
    Version { theirs: u32, ours: u32 },
}

/// Whether the daemon at the other end of `stream` (connected to
/// `socket`) runs as this process's user or as root, by the connection's
/// peer credentials: a command talks to no other.
pub fn trusted(stream: &UnixStream, socket: &Path) -> Result<(), ClientError> {
    let path = || socket.display().to_string();
    let peer = nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
        .map_err(|e| ClientError::Connect { path: path(), error: e.into() })?;
    let uid = peer.uid();
    if uid != 0 && uid != nix::unistd::geteuid().as_raw() {
        return Err(ClientError::Untrusted { path: path(), uid });
    }
    Ok(())
}

/// A blocking client: one request, one response.
pub struct Client {
    stream: UnixStream,
}

impl Client {
    /// A client of the daemon at `socket`, if it runs as this process's
    /// user or as root (by the connection's peer credentials, which no
    /// file's owner or mode can fake).
    pub fn connect(socket: &Path) -> Result<Client, ClientError> {
        let path = || socket.display().to_string();
        let stream = UnixStream::connect(socket).map_err(|error| ClientError::Connect { path: path(), error })?;
        trusted(&stream, socket)?;
        Ok(Client { stream })
    }

    /// A client of the first of `sockets` that answers (each tried once,
    /// in order); when none does, the first one's error.
    pub fn connect_first(sockets: &[std::path::PathBuf]) -> Result<Client, ClientError> {
        let mut first = None;
        for socket in sockets {
            match Client::connect(socket) {
                Ok(client) => return Ok(client),
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        Err(first.unwrap_or_else(|| ClientError::Connect {
            path: String::new(),
            error: std::io::ErrorKind::NotFound.into(),
        }))
    }

    /// Sends a request and returns the answer; a long job list comes
    /// whole, as one `Jobs`.
    pub fn call(&mut self, request: Request) -> Result<Response, ClientError> {
        let mut all: Vec<JobInfo> = Vec::new();
        let mut streamed = false;
        let body = self.call_each(request, &mut |part| {
            streamed = true;
            if all.is_empty() {
                all = part;
            } else {
                all.extend(part);
            }
        })?;
        Ok(if streamed { Response::Jobs(all) } else { body })
    }

    /// Sends a request answered by a stream of frames (`Attach`), handing
    /// each to `each` until it returns `false` or the stream ends.
    pub fn call_stream(&mut self, request: Request, each: &mut dyn FnMut(Response) -> bool) -> Result<(), ClientError> {
        self.send(request)?;
        while each(self.next()?) {}
        Ok(())
    }

    fn send(&mut self, request: Request) -> Result<(), ClientError> {
        let bytes =
            serde_json::to_vec(&Envelope { version: PROTOCOL_VERSION, body: request }).map_err(FrameError::Json)?;
        Ok(write_frame(&mut self.stream, &bytes)?)
    }

    /// The next frame of an answer.
    fn next(&mut self) -> Result<Response, ClientError> {
        let reply = read_frame_up_to(&mut self.stream, MAX_RESPONSE)?;
        let envelope: Envelope<Response> = serde_json::from_slice(&reply).map_err(FrameError::Json)?;
        if envelope.version != PROTOCOL_VERSION {
            return Err(ClientError::Version { theirs: envelope.version, ours: PROTOCOL_VERSION });
        }
        Ok(envelope.body)
    }

    /// Sends a request; a job list is handed to `each` part by part as it
    /// arrives (so a command can show the first jobs while the rest are on
    /// their way, and never holds 100,000 of them at once), and the answer
    /// is then an empty `Jobs`. Any other answer is returned as it is.
    pub fn call_each(&mut self, request: Request, each: &mut dyn FnMut(Vec<JobInfo>)) -> Result<Response, ClientError> {
        self.send(request)?;
        loop {
            match self.next()? {
                Response::JobsPart(jobs) => each(jobs),
                Response::Jobs(jobs) => {
                    each(jobs);
                    return Ok(Response::Jobs(Vec::new()));
                }
                body => return Ok(body),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn a_client_and_a_server_over_a_unix_socket() {
        let dir = std::env::temp_dir().join(format!("allot-proto-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("allotd.sock");
        let listener = UnixListener::bind(&path).expect("bind");
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().expect("accept");
            let bytes = read_frame(&mut s).expect("request");
            let req: Envelope<Request> = serde_json::from_slice(&bytes).expect("json");
            assert_eq!(req.body, Request::Queues);
            let reply = Envelope { version: PROTOCOL_VERSION, body: Response::Error("closed".into()) };
            write_frame(&mut s, &serde_json::to_vec(&reply).expect("json")).expect("reply");
        });
        let mut client = Client::connect(&path).expect("connect");
        assert_eq!(client.call(Request::Queues).expect("call"), Response::Error("closed".into()));
        server.join().expect("server");
        let err = Client::connect(&dir.join("nothing.sock")).err().expect("no daemon");
        assert!(err.to_string().contains("is it running?"), "{err}");
        // A user with no allotd of their own reaches the site's; with none
        // at all, the error names their own.
        let (own, site) = (dir.join("own.sock"), dir.join("site.sock"));
        let _listening = UnixListener::bind(&site).expect("site");
        assert!(Client::connect_first(&[own.clone(), site.clone()]).is_ok());
        let none = Client::connect_first(&[own.clone(), dir.join("nobody.sock")]).err().expect("none");
        assert!(none.to_string().contains(&own.display().to_string()), "{none}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
