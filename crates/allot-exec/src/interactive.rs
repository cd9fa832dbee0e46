//! An interactive job's terminal (`bsub -I`, `-Ip`, `-Is`).
//!
//! `bsub` listens on a Unix socket in a directory only its user may
//! enter. When the job starts, its supervisor connects there as the job's
//! owner (never as root: the path is the user's to name) and is handed
//! three descriptors with SCM_RIGHTS: the job's standard input, output
//! and error. With `-I` they are `bsub`'s own (its terminal, or whatever
//! it was given); with `-Ip`/`-Is` each is the slave of a pseudo-terminal
//! whose master `bsub` keeps, which becomes the job's controlling
//! terminal (the job leads a session of its own, so Ctrl-C typed there
//! reaches its foreground processes as on any terminal).
//!
//! A `bsub` that does not answer is not waited for long: the connection
//! is tried for [`CONNECT_FOR`], the descriptors awaited for
//! [`HANDED_WITHIN`]; then the job ends without running, saying why.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use allot_proto::Interactive;
use nix::errno::Errno;
use nix::sys::socket::{AddressFamily, ControlMessageOwned, MsgFlags, SockFlag, SockType, UnixAddr};

use crate::owner::{Owner, as_owner};

/// How long a connection refused for a full backlog is tried again.
pub const CONNECT_FOR: Duration = Duration::from_secs(10);
/// How long `bsub` has to hand over its descriptors once connected.
pub const HANDED_WITHIN: Duration = Duration::from_secs(30);

/// The job's standard input, output and error, and whether they are a
/// pseudo-terminal's slave (to be made the job's controlling terminal).
#[derive(Debug)]
pub struct Terminal {
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    pub pty: bool,
}

/// Reaches the job's `bsub` and takes its terminal; `Err`: why not, as
/// the job's reason for not running.
pub fn reach(asked: &Interactive, owner: Option<&Owner>) -> Result<Terminal, String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| format!("cannot reach its bsub's terminal ({what}: {e})");
    let sock = as_owner(owner, || connect(&asked.socket))
        .map_err(|e| e.to_string())
        .and_then(|r| r)
        .map_err(|e| fail(&asked.socket, &e))?;
    let ready = nix::poll::poll(
        &mut [nix::poll::PollFd::new(std::os::fd::AsFd::as_fd(&sock), nix::poll::PollFlags::POLLIN)],
        nix::poll::PollTimeout::try_from(HANDED_WITHIN.as_millis() as i32).unwrap_or(nix::poll::PollTimeout::MAX),
    )
    .map_err(|e| fail("waiting for it", &e))?;
    if ready == 0 {
        return Err(fail("waiting for it", &"no answer"));
    }
    let fds = receive_fds(sock.as_raw_fd()).map_err(|e| fail("its answer", &e))?;
    let [stdin, stdout, stderr]: [OwnedFd; 3] =
        fds.try_into().map_err(|got: Vec<OwnedFd>| fail("its answer", &format!("{} descriptors, not 3", got.len())))?;
    Ok(Terminal { stdin, stdout, stderr, pty: asked.pty })
}

fn connect(path: &str) -> Result<OwnedFd, String> {
    let addr = UnixAddr::new(path).map_err(|e| e.desc().to_string())?;
    let deadline = Instant::now() + CONNECT_FOR;
    loop {
        let sock = nix::sys::socket::socket(
            AddressFamily::Unix,
            SockType::Stream,
            SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK,
            None,
        )
        .map_err(|e| e.desc().to_string())?;
        match nix::sys::socket::connect(sock.as_raw_fd(), &addr) {
            Ok(()) => return Ok(sock),
            // A full backlog: a Unix socket says so at once.
            Err(Errno::EAGAIN) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(e.desc().to_string()),
        }
    }
}

/// The descriptors of one message (as many as three).
fn receive_fds(sock: RawFd) -> Result<Vec<OwnedFd>, String> {
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 3]);
    let msg = nix::sys::socket::recvmsg::<()>(sock, &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC)
        .map_err(|e| e.desc().to_string())?;
    let mut fds = Vec::new();
    for c in msg.cmsgs().map_err(|e| e.desc().to_string())? {
        if let ControlMessageOwned::ScmRights(got) = c {
            // SAFETY: each descriptor was just received, and is owned by
            // nothing else in this process.
            #[allow(unsafe_code)]
            fds.extend(got.into_iter().map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }));
        }
    }
    if msg.bytes == 0 && fds.is_empty() {
        return Err("it closed the connection".into());
    }
    Ok(fds)
}

/// Hands `fds` (standard input, output and error) to the supervisor
/// connected on `sock`: what `bsub` does.
pub fn hand_over(sock: RawFd, fds: [RawFd; 3]) -> Result<(), String> {
    let iov = [std::io::IoSlice::new(b"t")];
    let cmsg = [nix::sys::socket::ControlMessage::ScmRights(&fds)];
    nix::sys::socket::sendmsg::<()>(sock, &iov, &cmsg, MsgFlags::empty(), None).map_err(|e| e.desc().to_string())?;
    Ok(())
}

/// The size of the terminal `fd` is, if it is one.
pub fn window_size(fd: std::os::fd::BorrowedFd<'_>) -> Option<nix::pty::Winsize> {
    let mut size = nix::pty::Winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one winsize into `size`.
    #[allow(unsafe_code)]
    let r = unsafe { nix::libc::ioctl(fd.as_raw_fd(), nix::libc::TIOCGWINSZ, &mut size) };
    (r == 0).then_some(size)
}

/// Gives the terminal `fd` is (a pseudo-terminal's master) that size.
pub fn set_window_size(fd: std::os::fd::BorrowedFd<'_>, size: &nix::pty::Winsize) {
    // SAFETY: TIOCSWINSZ reads one winsize.
    #[allow(unsafe_code)]
    unsafe {
        nix::libc::ioctl(fd.as_raw_fd(), nix::libc::TIOCSWINSZ, size);
    }
}

/// Runs `handler` on each of `signals`; the handler may only store to
/// atomics.
pub fn on_signals(signals: &[nix::sys::signal::Signal], handler: extern "C" fn(nix::libc::c_int)) -> nix::Result<()> {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, sigaction};
    let action = SigAction::new(SigHandler::Handler(handler), SaFlags::SA_RESTART, SigSet::empty());
    for &sig in signals {
        // SAFETY: the caller's handler is async-signal-safe (atomics only).
        #[allow(unsafe_code)]
        unsafe {
            sigaction(sig, &action)?;
        }
    }
    Ok(())
}

/// In the job's process, before its command: a session of its own with
/// its standard input (a pseudo-terminal's slave) as its controlling
/// terminal.
pub(crate) fn take_terminal() -> std::io::Result<()> {
    nix::unistd::setsid()?;
    // SAFETY: TIOCSCTTY takes an int argument (0: do not steal a terminal
    // another session has); fd 0 is the slave, open in this process.
    #[allow(unsafe_code)]
    let r = unsafe { nix::libc::ioctl(0, nix::libc::TIOCSCTTY, 0) };
    if r < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `bsub` on a socket, the supervisor's side reaching it: the three
    /// descriptors arrive, and write where `bsub`'s would.
    #[test]
    fn descriptors_are_handed_over() {
        let dir = std::env::temp_dir().join(format!("allot-interactive-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("t.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).expect("bind");
        let (mut reader, writer) = std::io::pipe().expect("pipe");
        let bsub = std::thread::spawn(move || {
            let (conn, _) = listener.accept().expect("accept");
            let w = writer.as_raw_fd();
            hand_over(conn.as_raw_fd(), [w, w, w]).expect("sent");
            drop(writer);
        });
        let asked =
            Interactive { socket: path.display().to_string(), pty: false, shell: false, relay: false, size: None };
        let t = reach(&asked, None).expect("reached");
        bsub.join().expect("bsub");
        let mut out = std::fs::File::from(t.stdout);
        std::io::Write::write_all(&mut out, b"hello\n").expect("write");
        drop((out, t.stdin, t.stderr));
        let mut got = String::new();
        std::io::Read::read_to_string(&mut reader, &mut got).expect("read");
        assert_eq!(got, "hello\n");
        let gone = Interactive { socket: dir.join("none.sock").display().to_string(), ..asked };
        let e = reach(&gone, None).expect_err("no bsub");
        assert!(e.starts_with("cannot reach its bsub's terminal ("), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
