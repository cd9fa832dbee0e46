//! An interactive job's terminal on an agent's host, relayed: a job of
//! `bsub -I`, `-Ip` or `-Is` running on another host than its `bsub`'s.
//!
//! The agent listens for the job's supervisor on a socket of the job's
//! own (`term/JOB.ATTEMPT.sock`, its owner's, mode 0600, in a directory
//! only entered); the supervisor connects there as the job's owner, as it
//! would to `bsub`'s own socket (see `allot_exec::interactive`), and is
//! handed the job's standard input, output and error: a pseudo-terminal's
//! slave made here (`-Ip`, `-Is`), or three pipes (`-I`). The agent keeps
//! the other ends and relays them: what the job writes goes to allotd
//! (and on to `bsub`) as [`TermEvent::Output`]; what is typed at `bsub`
//! comes back as [`TermIn`]. A connection from anyone but the owner is
//! closed unanswered.
//!
//! Each relay is a thread of its own (and one per output stream), as long
//! as the job's terminal lives: at most one per job running here.

use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::mpsc;

/// How long the job's supervisor has to connect once the job is started.
const CONNECT_WITHIN: Duration = Duration::from_secs(120);

/// What a relay tells the agent's loop.
#[derive(Debug)]
pub enum TermEvent {
    Started { job: u64, attempt: u32, pty: bool },
    Output { job: u64, attempt: u32, stderr: bool, data: Vec<u8> },
    Closed { job: u64, attempt: u32 },
}

/// What the agent's loop sends into a relay.
#[derive(Debug)]
pub enum TermIn {
    /// Typed input, and whether the input ended after it.
    Data(Vec<u8>, bool),
    Resize(u16, u16),
}

/// A job's relay, as the agent holds it: dropping it ends the relay's
/// input side.
pub struct Relay {
    pub attempt: u32,
    input: std::sync::mpsc::Sender<TermIn>,
}

impl Relay {
    pub fn send(&self, what: TermIn) {
        let _ = self.input.send(what);
    }
}

/// The socket a job's supervisor reaches its terminal on.
fn socket_path(state_dir: &Path, job: u64, attempt: u32) -> PathBuf {
    state_dir.join("term").join(format!("{job}.{attempt}.sock"))
}

/// Opens job `job`'s terminal (a pseudo-terminal of `size` when `pty`) for its
/// owner (`owner`: uid and gid; this agent's own when it is not root):
/// the socket the supervisor is to connect to, and the relay.
pub fn open<T: From<TermEvent> + Send + 'static>(
    state_dir: &Path,
    (job, attempt): (u64, u32),
    (pty, size): (bool, Option<(u16, u16)>),
    owner: (u32, u32),
    tx: mpsc::Sender<T>,
) -> Result<(PathBuf, Relay), String> {
    let pty =
        pty.then(|| size.map(|(ws_row, ws_col)| nix::pty::Winsize { ws_row, ws_col, ws_xpixel: 0, ws_ypixel: 0 }));
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let dir = state_dir.join("term");
    if !dir.is_dir() {
        std::fs::DirBuilder::new().mode(0o711).create(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let path = socket_path(state_dir, job, attempt);
    let _ = std::fs::remove_file(&path);
    let listener = std::os::unix::net::UnixListener::bind(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let own = || -> std::io::Result<()> {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::chown(&path, Some(owner.0), Some(owner.1))?;
        }
        Ok(())
    };
    own().map_err(|e| format!("{}: {e}", path.display()))?;
    let (input, typed) = std::sync::mpsc::channel();
    let socket = path.clone();
    std::thread::Builder::new()
        .name(format!("term-{job}"))
        .spawn(move || {
            let said = |e: TermEvent| {
                let _ = tx.blocking_send(e.into());
            };
            match serve(listener, owner.0, pty, (job, attempt), &said) {
                Ok(ends) => relay(ends, typed, (job, attempt), &said),
                Err(why) => eprintln!("allot-agent: job {job}: its terminal: {why}"),
            }
            let _ = std::fs::remove_file(&socket);
            said(TermEvent::Closed { job, attempt });
        })
        .map_err(|e| e.to_string())?;
    Ok((path, Relay { attempt, input }))
}

/// The agent's ends of a job's terminal.
struct Ends {
    /// Where typed input goes: the master, or the standard input pipe.
    input: std::fs::File,
    /// What the job writes: the master alone, or its standard output and
    /// error pipes.
    outputs: Vec<(std::fs::File, bool)>,
    /// The master, for its size.
    master: Option<OwnedFd>,
}

/// Waits for the owner's supervisor, makes the terminal and hands it
/// over.
fn serve(
    listener: std::os::unix::net::UnixListener,
    owner: u32,
    pty: Option<Option<nix::pty::Winsize>>,
    (job, attempt): (u64, u32),
    said: &dyn Fn(TermEvent),
) -> Result<Ends, String> {
    let deadline = std::time::Instant::now() + CONNECT_WITHIN;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let millis = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
        let mut fds = [nix::poll::PollFd::new(listener.as_fd(), nix::poll::PollFlags::POLLIN)];
        let timeout = nix::poll::PollTimeout::try_from(millis).unwrap_or(nix::poll::PollTimeout::ZERO);
        if nix::poll::poll(&mut fds, timeout).map_err(|e| e.to_string())? == 0 {
            return Err("its supervisor never came for it".into());
        }
        let (conn, _) = listener.accept().map_err(|e| e.to_string())?;
        let peer = nix::sys::socket::getsockopt(&conn, nix::sys::socket::sockopt::PeerCredentials)
            .map_err(|e| e.to_string())?;
        if peer.uid() != owner {
            continue;
        }
        let ends = if let Some(size) = pty {
            let p =
                nix::pty::openpty(size.as_ref(), None).map_err(|e| format!("cannot open a pseudo-terminal: {e}"))?;
            let s = p.slave.as_raw_fd();
            allot_exec::interactive::hand_over(conn.as_raw_fd(), [s, s, s])?;
            let master = p.master;
            let input = std::fs::File::from(master.try_clone().map_err(|e| e.to_string())?);
            let output = std::fs::File::from(master.try_clone().map_err(|e| e.to_string())?);
            Ends { input, outputs: vec![(output, false)], master: Some(master) }
        } else {
            let (stdin_r, stdin_w) = nix::unistd::pipe().map_err(|e| e.to_string())?;
            let (out_r, out_w) = nix::unistd::pipe().map_err(|e| e.to_string())?;
            let (err_r, err_w) = nix::unistd::pipe().map_err(|e| e.to_string())?;
            allot_exec::interactive::hand_over(
                conn.as_raw_fd(),
                [stdin_r.as_raw_fd(), out_w.as_raw_fd(), err_w.as_raw_fd()],
            )?;
            Ends { input: stdin_w.into(), outputs: vec![(out_r.into(), false), (err_r.into(), true)], master: None }
        };
        said(TermEvent::Started { job, attempt, pty: pty.is_some() });
        return Ok(ends);
    }
}

/// Relays until the job's side closes: each output by a thread of its
/// own, input from `typed` here.
fn relay(ends: Ends, typed: std::sync::mpsc::Receiver<TermIn>, (job, attempt): (u64, u32), said: &dyn Fn(TermEvent)) {
    let (done_tx, done) = std::sync::mpsc::channel::<()>();
    let mut readers = Vec::new();
    let (events_tx, events) = std::sync::mpsc::channel::<TermEvent>();
    for (mut from, stderr) in ends.outputs {
        let (events_tx, done_tx) = (events_tx.clone(), done_tx.clone());
        readers.push(std::thread::spawn(move || {
            let mut buf = vec![0u8; 16 << 10];
            // EIO from a master: every descriptor of its slave is closed.
            while let Ok(n @ 1..) = from.read(&mut buf) {
                let data = buf[..n].to_vec();
                if events_tx.send(TermEvent::Output { job, attempt, stderr, data }).is_err() {
                    break;
                }
            }
            drop(done_tx);
        }));
    }
    drop((events_tx, done_tx));
    let mut input = Some(ends.input);
    loop {
        // Output first, as it comes; input as it is typed; until every
        // output has ended.
        while let Ok(e) = events.try_recv() {
            said(e);
        }
        if let Err(std::sync::mpsc::TryRecvError::Disconnected) = done.try_recv() {
            while let Ok(e) = events.try_recv() {
                said(e);
            }
            break;
        }
        match typed.recv_timeout(Duration::from_millis(20)) {
            Ok(TermIn::Data(data, eof)) => {
                if let Some(w) = input.as_mut() {
                    if w.write_all(&data).is_err() {
                        input = None;
                    }
                }
                if eof {
                    match &ends.master {
                        // A terminal's end of file is Ctrl-D, typed.
                        Some(_) => {
                            if let Some(w) = input.as_mut() {
                                let _ = w.write_all(&[4]);
                            }
                        }
                        None => input = None,
                    }
                }
            }
            Ok(TermIn::Resize(rows, cols)) => {
                if let Some(m) = &ends.master {
                    let size = nix::pty::Winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
                    allot_exec::interactive::set_window_size(m.as_fd(), &size);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            // The agent let the job go: only its output is left to read.
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => input = None,
        }
    }
    for r in readers {
        let _ = r.join();
    }
}
