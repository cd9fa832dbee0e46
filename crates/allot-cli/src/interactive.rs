//! `bsub -I`, `-Ip`, `-Is`: an interactive job, met at this terminal.
//!
//! `bsub` listens on a Unix socket in a directory of its own (mode 0700,
//! removed when it ends), named in the submission. When the job starts,
//! its supervisor connects there as the job's owner and `bsub` hands it
//! the job's standard input, output and error (see
//! `allot_exec::interactive`): with `-I` its own, so the job reads and
//! writes this terminal itself; with `-Ip`/`-Is` a pseudo-terminal's
//! slave, the master staying here, relayed to and from this terminal
//! (put in raw mode while the job runs, and its size passed on as it
//! changes).
//!
//! A job on another host than this one has its terminal made by that
//! host's agent and relayed through allotd: `bsub` attaches to it at once
//! (`Request::Attach`), and once the relay starts writes what comes as the
//! job's output and sends what is typed (`Request::TermInput`), as it
//! would on a pseudo-terminal of its own.
//!
//! Ctrl-C: with `-I` and `-Ip` it reaches `bsub` as SIGINT, passed on to
//! the job as SIGINT (SIGQUIT likewise); with `-Is` the terminal passes
//! every key through, and the job's own terminal makes Ctrl-C a signal
//! to its foreground processes. Before the job starts, Ctrl-C kills it
//! (LSF asks; a script cannot answer, so allot does not ask). `bsub`
//! exits with the job's exit code, as `-K` does; a job that ended
//! without reaching the terminal says why.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use allot_config::bsub::InteractiveMode;
use allot_proto::{JobQuery, JobRef, JobStatus, Request, Response, TYPING_TOO_FAST};
use anyhow::{Context, anyhow, bail};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static QUIT: AtomicBool = AtomicBool::new(false);
static RESIZED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: nix::libc::c_int) {
    match sig {
        nix::libc::SIGINT => INTERRUPTED.store(true, Ordering::SeqCst),
        nix::libc::SIGQUIT => QUIT.store(true, Ordering::SeqCst),
        _ => RESIZED.store(true, Ordering::SeqCst),
    }
}

/// Where `bsub` waits for its job: the socket, in a directory only its
/// user may enter, removed with it.
pub struct Session {
    dir: PathBuf,
    listener: UnixListener,
    mode: InteractiveMode,
}

impl Session {
    pub fn listen(mode: InteractiveMode) -> anyhow::Result<Session> {
        use std::os::unix::fs::DirBuilderExt;
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("allot-bsub-{}-{nanos}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .with_context(|| format!("cannot make {} for the job's terminal", dir.display()))?;
        let listener = UnixListener::bind(dir.join("terminal.sock"))
            .with_context(|| format!("cannot listen in {}", dir.display()))?;
        listener.set_nonblocking(true)?;
        Ok(Session { dir, listener, mode })
    }

    /// What the submission says of it.
    pub fn asked(&self) -> allot_proto::Interactive {
        allot_proto::Interactive {
            socket: self.dir.join("terminal.sock").display().to_string(),
            pty: self.mode != InteractiveMode::Plain,
            shell: self.mode == InteractiveMode::Shell,
            relay: false,
            size: window_size().map(|s| (s.ws_row, s.ws_col)),
        }
    }

    /// Follows the job to its end, giving it this terminal when it starts;
    /// the job's exit code.
    pub fn run(self, job: u64) -> anyhow::Result<ExitCode> {
        catch_signals()?;
        say("<<Waiting for dispatch ...>>");
        let (remote_tx, remote) = std::sync::mpsc::channel::<Remote>();
        attach(job, self.mode, remote_tx)?;
        let mut relay: Option<Relay> = None;
        let mut relayed: Option<Relayed> = None;
        let mut reached = false;
        let mut next_look = Instant::now();
        loop {
            if let Ok(Remote::Started { pty, raw }) = remote.try_recv() {
                relayed = Some(Relayed::start(job, pty, raw?)?);
                reached = true;
            }
            if let Ok((conn, _)) = self.listener.accept() {
                // Only the job's owner, this user, is given the terminal:
                // its supervisor connects as the owner, even as root.
                let peer = nix::sys::socket::getsockopt(&conn, nix::sys::socket::sockopt::PeerCredentials)?;
                if peer.uid() == nix::unistd::getuid().as_raw() {
                    if let Some(host) = exec_host(job)? {
                        say(&format!("<<Starting on {host}>>"));
                    }
                    relay = self.hand_over(&conn, relay)?;
                    reached = true;
                }
            }
            let interrupted = INTERRUPTED.swap(false, Ordering::SeqCst);
            let quit = QUIT.swap(false, Ordering::SeqCst);
            if (interrupted || quit) && !reached {
                let _ = crate::lsf::call(Request::Kill { jobs: vec![JobRef::job(job)], signal: None, job_group: None });
                say(&format!("<<Job <{job}> is killed before it started>>"));
                return Ok(ExitCode::from(130));
            }
            if interrupted || quit {
                let signal = if interrupted { "INT" } else { "QUIT" };
                let _ = crate::lsf::call(Request::Kill {
                    jobs: vec![JobRef::job(job)],
                    signal: Some(signal.into()),
                    job_group: None,
                });
            }
            if RESIZED.swap(false, Ordering::SeqCst) {
                if let Some(r) = &relay {
                    r.copy_size();
                }
                if let Some(r) = &relayed {
                    r.send_size();
                }
            }
            if Instant::now() >= next_look {
                next_look = Instant::now() + Duration::from_millis(250);
                if let Some(end) = ended(job)? {
                    if let Some(r) = relay.take() {
                        r.finish();
                    }
                    if relayed.take().is_some() {
                        // The last of its output, relayed.
                        let until = Instant::now() + Duration::from_secs(2);
                        while Instant::now() < until && !matches!(remote.try_recv(), Ok(Remote::Closed)) {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    }
                    if !reached {
                        let why = end.1.unwrap_or_else(|| "it ended before it started".into());
                        eprintln!("bsub: job <{job}> did not reach this terminal: {why}");
                    }
                    return Ok(ExitCode::from(u8::try_from(end.0).unwrap_or(255)));
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Gives the connected supervisor the job's descriptors: this
    /// process's own (`-I`), or a new pseudo-terminal's slave, relayed.
    /// A job started again (requeued) gets a new one.
    fn hand_over(&self, conn: &std::os::unix::net::UnixStream, old: Option<Relay>) -> anyhow::Result<Option<Relay>> {
        if self.mode == InteractiveMode::Plain {
            allot_exec::interactive::hand_over(conn.as_raw_fd(), [0, 1, 2]).map_err(|e| anyhow!("bsub: {e}"))?;
            return Ok(None);
        }
        if let Some(r) = old {
            r.finish();
        }
        let size = window_size();
        let pty = nix::pty::openpty(size.as_ref(), None).context("bsub: cannot open a pseudo-terminal")?;
        let slave = pty.slave.as_raw_fd();
        allot_exec::interactive::hand_over(conn.as_raw_fd(), [slave, slave, slave])
            .map_err(|e| anyhow!("bsub: {e}"))?;
        drop(pty.slave);
        Ok(Some(Relay::start(pty.master, self.mode)?))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.dir.join("terminal.sock"));
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn catch_signals() -> anyhow::Result<()> {
    use nix::sys::signal::Signal;
    allot_exec::interactive::on_signals(&[Signal::SIGINT, Signal::SIGQUIT, Signal::SIGWINCH], on_signal)?;
    Ok(())
}

/// The job as allotd shows it now (`None`: it is gone).
fn job_info(job: u64) -> anyhow::Result<Option<allot_proto::JobInfo>> {
    let query = JobQuery { jobs: vec![JobRef::job(job)], finished: true, ..JobQuery::default() };
    let Response::Jobs(jobs) = crate::lsf::call(Request::Jobs(query))? else { bail!("bsub: unexpected answer") };
    Ok(jobs.into_iter().next())
}

/// The first host the job runs on, once it runs.
fn exec_host(job: u64) -> anyhow::Result<Option<String>> {
    Ok(job_info(job)?.and_then(|j| j.exec_hosts.into_iter().next()).map(|(host, _)| host))
}

/// The job's exit code and why it did not run, once it has ended.
fn ended(job: u64) -> anyhow::Result<Option<(i32, Option<String>)>> {
    let Some(j) = job_info(job)? else { bail!("bsub: job {job} is gone") };
    if j.status.unfinished() || matches!(j.status, JobStatus::Unkwn) {
        return Ok(None);
    }
    Ok(Some((j.exit_code.unwrap_or(0), j.exit_reason)))
}

/// This terminal's size, if standard input is one.
fn window_size() -> Option<nix::pty::Winsize> {
    allot_exec::interactive::window_size(std::os::fd::AsFd::as_fd(&std::io::stdin()))
}

/// What the attached relay says (a job on another host).
enum Remote {
    /// The job's terminal is relayed; `raw`: this terminal, made raw
    /// for a pseudo-terminal's.
    Started {
        pty: bool,
        raw: anyhow::Result<Option<RawMode>>,
    },
    Closed,
}

/// Attaches to the job's terminal as allotd relays it: what the job
/// writes is written here as it comes; the relay's start and end go to
/// `said`. Nothing comes for a job whose terminal is this one's own.
fn attach(job: u64, mode: InteractiveMode, said: std::sync::mpsc::Sender<Remote>) -> anyhow::Result<()> {
    let mut client = crate::lsf::client()?;
    std::thread::spawn(move || {
        let mut out = std::io::stdout();
        let mut err = std::io::stderr();
        let _ = client.call_stream(Request::Attach { job }, &mut |r| match r {
            Response::TermStarted { pty } => {
                // Before any of the job's output, which this thread writes.
                if let Ok(Some(host)) = exec_host(job) {
                    say(&format!("<<Starting on {host}>>"));
                }
                // This terminal raw before the job's first output shows
                // (this thread writes it): what is typed once it shows,
                // Ctrl-C included, reaches the job, not this terminal's
                // own line discipline.
                let raw = if pty { RawMode::set(mode).map(Some) } else { Ok(None) };
                said.send(Remote::Started { pty, raw }).is_ok()
            }
            Response::TermOutput { stderr, data } => {
                let to: &mut dyn Write = if stderr { &mut err } else { &mut out };
                let _ = to.write_all(&data).and_then(|()| to.flush());
                true
            }
            _ => false,
        });
        let _ = said.send(Remote::Closed);
    });
    Ok(())
}

/// This terminal raw while a job's pseudo-terminal is relayed (with
/// `-Ip`, Ctrl-C and Ctrl-Z still signal `bsub`); as it was when dropped.
struct RawMode {
    saved: Option<nix::sys::termios::Termios>,
}

impl RawMode {
    fn set(mode: InteractiveMode) -> anyhow::Result<RawMode> {
        use nix::sys::termios::{LocalFlags, SetArg, cfmakeraw, tcgetattr, tcsetattr};
        let stdin = std::io::stdin();
        let saved = tcgetattr(&stdin).ok();
        if let Some(t) = &saved {
            let mut raw = t.clone();
            cfmakeraw(&mut raw);
            if mode == InteractiveMode::Pty {
                raw.local_flags |= LocalFlags::ISIG;
            }
            tcsetattr(&stdin, SetArg::TCSADRAIN, &raw)?;
        }
        Ok(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        if let Some(t) = &self.saved {
            let _ = nix::sys::termios::tcsetattr(std::io::stdin(), nix::sys::termios::SetArg::TCSADRAIN, t);
        }
    }
}

/// A job's terminal relayed from its host: what is typed here goes to it
/// (this terminal raw for a pseudo-terminal), and this terminal's size.
struct Relayed {
    job: u64,
    pty: bool,
    _raw: Option<RawMode>,
}

impl Relayed {
    /// `raw`: this terminal made raw for a pseudo-terminal's relay.
    fn start(job: u64, pty: bool, raw: Option<RawMode>) -> anyhow::Result<Relayed> {
        let relayed = Relayed { job, pty, _raw: raw };
        relayed.send_size();
        let mut client = crate::lsf::client()?;
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            let mut input = std::io::stdin();
            loop {
                let (data, eof) = match input.read(&mut buf) {
                    Ok(0) | Err(_) => (Vec::new(), true),
                    Ok(n) => (buf[..n].to_vec(), false),
                };
                // Refused when typed faster than allotd passes it on:
                // sent again a moment later.
                let sent = loop {
                    match client.call(Request::TermInput { job, data: data.clone(), eof }) {
                        Ok(Response::Error(e)) if e.starts_with(TYPING_TOO_FAST) => {
                            std::thread::sleep(Duration::from_millis(50));
                        }
                        Ok(Response::Error(_)) | Err(_) => break false,
                        Ok(_) => break true,
                    }
                };
                if !sent || eof {
                    break;
                }
            }
        });
        Ok(relayed)
    }

    /// This terminal's size, for the job's.
    fn send_size(&self) {
        if let Some(size) = window_size().filter(|_| self.pty) {
            let resize = Request::TermResize { job: self.job, rows: size.ws_row, cols: size.ws_col };
            let _ = crate::lsf::client().and_then(|mut c| Ok(c.call(resize)?));
        }
    }
}

/// The pseudo-terminal's master, relayed to and from this terminal, which
/// is raw meanwhile.
struct Relay {
    master: OwnedFd,
    output_done: std::sync::mpsc::Receiver<()>,
    _raw: RawMode,
}

impl Relay {
    fn start(master: OwnedFd, mode: InteractiveMode) -> anyhow::Result<Relay> {
        let raw = RawMode::set(mode)?;
        let (done, output_done) = std::sync::mpsc::channel();
        let mut from_job = std::fs::File::from(master.try_clone()?);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            let mut out = std::io::stdout();
            // EIO: every descriptor of the slave is closed (the job ended).
            while let Ok(n @ 1..) = from_job.read(&mut buf) {
                if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
                    break;
                }
            }
            let _ = done.send(());
        });
        let mut to_job = std::fs::File::from(master.try_clone()?);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            let mut input = std::io::stdin();
            loop {
                match input.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        // Standard input ended: the terminal's end of file
                        // (Ctrl-D) to the job.
                        let _ = to_job.write_all(&[4]);
                        break;
                    }
                    Ok(n) => {
                        if to_job.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Ok(Relay { master, output_done, _raw: raw })
    }

    /// Passes this terminal's size on to the job's.
    fn copy_size(&self) {
        if let Some(size) = window_size() {
            allot_exec::interactive::set_window_size(std::os::fd::AsFd::as_fd(&self.master), &size);
        }
    }

    /// The job's last output shown (a moment at most, as processes it left
    /// behind may hold its terminal), and this terminal as it was.
    fn finish(self) {
        let _ = self.output_done.recv_timeout(Duration::from_secs(2));
    }
}
