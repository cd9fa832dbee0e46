//! `bsub -I`, `-Ip`, `-Is` end to end: the real bsub against a real
//! allotd, on pipes and on a pseudo-terminal the test holds as a user's
//! terminal would be; Ctrl-C, exit codes, and who may reach the terminal.

mod common;

use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Daemon, Throwaway, allot, stderr, stdout, tempdir};

fn bsub(d: &Daemon, dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(allot());
    c.arg("bsub").args(args).env("ALLOT_STATE_DIR", &d.state).current_dir(dir);
    c
}

/// A terminal: bsub's standard input, output and error on a new
/// pseudo-terminal's slave (of `rows` x `cols`), the test holding the
/// master as a terminal emulator does.
struct Terminal {
    master: std::fs::File,
    child: Child,
    seen: String,
}

impl Terminal {
    fn start(mut cmd: Command, rows: u16, cols: u16) -> Terminal {
        let size = nix::pty::Winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
        let pty = nix::pty::openpty(Some(&size), None).expect("a pseudo-terminal");
        let slave = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("slave"));
        let child =
            cmd.stdin(slave(&pty.slave)).stdout(slave(&pty.slave)).stderr(slave(&pty.slave)).spawn().expect("bsub");
        drop(pty.slave);
        Terminal { master: std::fs::File::from(pty.master), child, seen: String::new() }
    }

    /// Reads until `text` shows (or fails after 20 s with what did).
    fn wait_for(&mut self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        let fd = self.master.as_fd().try_clone_to_owned().expect("master");
        let mut buf = [0u8; 4096];
        while !self.seen.contains(text) {
            assert!(Instant::now() < deadline, "never saw {text:?}: {:?}", self.seen);
            let mut fds = [nix::poll::PollFd::new(fd.as_fd(), nix::poll::PollFlags::POLLIN)];
            if nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(100u16)).unwrap_or(0) == 0 {
                continue;
            }
            match self.master.read(&mut buf) {
                Ok(n @ 1..) => self.seen.push_str(&String::from_utf8_lossy(&buf[..n])),
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    fn type_in(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).expect("typed");
    }

    fn exit_code(mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            // Keep reading so the job never blocks on a full terminal.
            let _ = nix::fcntl::fcntl(&self.master, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK));
            let mut buf = [0u8; 4096];
            let _ = self.master.read(&mut buf);
            if let Some(status) = self.child.try_wait().expect("bsub") {
                return status.code();
            }
            assert!(Instant::now() < deadline, "bsub did not end: {:?}", self.seen);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn bsub_i_gives_the_job_this_terminal_and_its_exit_code() {
    let dir = tempdir("interactive");
    let d = Daemon::start(&dir.join("state"));
    // Standard input reaches the job; its output and error are bsub's.
    let mut cat = bsub(&d, &dir, &["-I", "cat; echo to-stderr >&2; exit 3"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bsub");
    cat.stdin.take().expect("stdin").write_all(b"hello from the terminal\n").expect("typed");
    let out = cat.wait_with_output().expect("bsub ends");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("<<Waiting for dispatch ...>>\n<<Starting on "), "{text}");
    assert!(text.ends_with(">>\nhello from the terminal\n"), "{text}");
    assert_eq!(stderr(&out), "to-stderr\n");
    let done = stdout(&d.cmd(&["bjobs", "-a", "-noheader", "-o", "stat exit_code"], &dir));
    assert_eq!(done.trim(), "EXIT 3", "{done}");
    // -o: the output goes to its file, as LSF sends it.
    let out = bsub(&d, &dir, &["-I", "-o", "job.out", "echo into-the-file"]).output().expect("bsub");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains("into-the-file"), "{}", stdout(&out));
    let file = std::fs::read_to_string(dir.join("job.out")).expect("-o file");
    assert!(file.starts_with("into-the-file\n") && file.contains("Successfully completed."), "{file}");
    // -I with -K, or as an array: refused, nothing submitted.
    for args in [&["-I", "-K", "true"][..], &["-I", "-J", "a[1-2]", "true"][..]] {
        let out = bsub(&d, &dir, args).output().expect("bsub");
        assert!(!out.status.success() && stderr(&out).ends_with("Job not submitted.\n"), "{}", stderr(&out));
    }
}

#[test]
fn ctrl_c_reaches_the_interactive_job() {
    let dir = tempdir("interactive-ctrl-c");
    let d = Daemon::start(&dir.join("state"));
    let trap = "trap 'echo caught; exit 7' INT; echo ready; sleep 30 & wait";
    // -I: the terminal's SIGINT to bsub is passed on to the job.
    let mut t = Terminal::start(bsub(&d, &dir, &["-I", trap]), 24, 80);
    t.wait_for("ready");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(t.child.id() as i32), nix::sys::signal::Signal::SIGINT)
        .expect("Ctrl-C");
    t.wait_for("caught");
    assert_eq!(t.exit_code(), Some(7));
    // -Is: Ctrl-C is a key, typed into the job's own terminal, whose line
    // discipline signals the job.
    let mut t = Terminal::start(bsub(&d, &dir, &["-Is", trap]), 24, 80);
    t.wait_for("ready");
    t.type_in(b"\x03");
    t.wait_for("caught");
    assert_eq!(t.exit_code(), Some(7));
}

#[test]
fn bsub_ip_runs_the_job_on_a_terminal_of_its_own() {
    let dir = tempdir("interactive-pty");
    let d = Daemon::start(&dir.join("state"));
    let mut t = Terminal::start(
        bsub(&d, &dir, &["-Ip", "test -t 0 && test -t 1 && echo on-a-tty; stty size; read x; echo got $x; exit 4"]),
        33,
        101,
    );
    t.wait_for("on-a-tty");
    // The terminal's size, passed on.
    t.wait_for("33 101");
    t.type_in(b"typed words\r");
    t.wait_for("got typed words");
    assert_eq!(t.exit_code(), Some(4));
    // Standard input that is no terminal: read through, then the end of
    // file.
    let mut c = bsub(&d, &dir, &["-Ip", "cat; echo after-eof"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("bsub");
    c.stdin.take().expect("stdin").write_all(b"piped\n").expect("piped");
    let out = c.wait_with_output().expect("bsub");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out).replace('\r', "");
    assert!(text.contains("piped\n") && text.contains("after-eof"), "{text}");
}

/// The supervisor reaches bsub as the job's owner (bsub gives its
/// terminal to its own user only), and no other user reaches it.
#[test]
fn only_the_owner_reaches_the_terminal() {
    let (alice, mallory) = (Throwaway::new("interactive", "ia"), Throwaway::new("interactive", "im"));
    let dir = tempdir("interactive-owner");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o1777)).expect("chmod");
    std::fs::set_permissions(dir.as_ref() as &Path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let d = Daemon::start(&dir.join("state"));
    use std::os::unix::process::CommandExt;
    let mut c = bsub(&d, &tmp, &["-I", "echo ready; sleep 5; echo as $(id -un)"]);
    c.env("TMPDIR", &tmp).uid(alice.uid).gid(alice.gid).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().expect("bsub as alice");
    // Her socket's directory is hers alone.
    let deadline = Instant::now() + Duration::from_secs(20);
    let socket = loop {
        let found = std::fs::read_dir(&tmp)
            .expect("tmp")
            .flatten()
            .find(|e| e.file_name().to_string_lossy().starts_with("allot-bsub-"));
        if let Some(e) = found {
            break e.path().join("terminal.sock");
        }
        assert!(Instant::now() < deadline, "no socket directory");
        std::thread::sleep(Duration::from_millis(20));
    };
    let meta = std::fs::metadata(socket.parent().expect("dir")).expect("dir");
    assert_eq!(
        (std::os::unix::fs::MetadataExt::mode(&meta) & 0o777, std::os::unix::fs::MetadataExt::uid(&meta)),
        (0o700, alice.uid)
    );
    if Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success()) {
        let probe = format!("import socket; socket.socket(socket.AF_UNIX).connect({:?})", socket.display().to_string());
        let tried =
            Command::new("python3").args(["-c", &probe]).uid(mallory.uid).gid(mallory.gid).output().expect("python3");
        assert!(!tried.status.success() && stderr(&tried).contains("PermissionError"), "{}", stderr(&tried));
    }
    let out = child.wait_with_output().expect("bsub");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).ends_with(&format!("ready\nas {}\n", alice.name)), "{}", stdout(&out));
    assert!(!socket.exists(), "bsub removes its socket");
}

/// A job on another host than bsub's: its agent makes the terminal and
/// allotd relays it; input, output, its standard error, the exit code,
/// the terminal's size and Ctrl-C all cross.
#[test]
fn a_job_on_another_host_gets_its_terminal_through_the_agents() {
    let dir = tempdir("interactive-agents");
    let c = common::agents::TestCluster::start(&dir, 2, (1, 30, 60));
    let d = c.daemon();
    let mut cat = bsub(d, &dir, &["-I", "-m", "host2", "cat; hostname; echo to-stderr >&2; exit 3"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bsub");
    cat.stdin.take().expect("stdin").write_all(b"typed far away\n").expect("typed");
    let out = cat.wait_with_output().expect("bsub ends");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("<<Starting on host2>>\n"), "{text}");
    assert!(text.ends_with(">>\ntyped far away\nhost2\n"), "{text}");
    assert_eq!(stderr(&out), "to-stderr\n");
    // -Is on a terminal: the size, then Ctrl-C typed.
    let trap = "stty size; trap 'echo caught; exit 7' INT; echo ready; sleep 30 & wait";
    let mut t = Terminal::start(bsub(d, &dir, &["-Is", "-m", "host1", trap]), 33, 101);
    t.wait_for("33 101");
    t.wait_for("ready");
    // This terminal was raw before the job's first output showed (a line
    // end is the job terminal's \r\n, not translated again here): Ctrl-C
    // typed once "ready" shows reaches the job, not this line discipline.
    assert!(t.seen.contains("33 101\r\nready\r\n"), "{:?}", t.seen);
    t.type_in(b"\x03");
    t.wait_for("caught");
    assert_eq!(t.exit_code(), Some(7));
    // What is typed is passed on at most so fast: a flood is refused, to
    // be sent again (bsub does), and never queued without bound.
    let mut quiet = bsub(d, &dir, &["-I", "-m", "host1", "cat > /dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("bsub");
    let id = d.wait_for(3, "RUN", &dir);
    assert!(id.starts_with("3 "), "{id}");
    let client = std::cell::RefCell::new(allot_proto::Client::connect(&d.state.join("allotd.sock")).expect("allotd"));
    let typed = |bytes: usize| {
        let data = vec![b'x'; bytes];
        client.borrow_mut().call(allot_proto::Request::TermInput { job: 3, data, eof: false })
    };
    let huge = typed(2 << 20).expect("an answer");
    assert!(matches!(&huge, allot_proto::Response::Error(e) if e.contains("typed at once")), "{huge:?}");
    common::eventually("the relay starts", || matches!(typed(1), Ok(allot_proto::Response::Done)));
    assert_eq!(typed(512 << 10).expect("an answer"), allot_proto::Response::Done);
    let flood = typed(1 << 20).expect("an answer");
    assert!(
        matches!(&flood, allot_proto::Response::Error(e) if e.starts_with(allot_proto::TYPING_TOO_FAST)),
        "{flood:?}"
    );
    drop(quiet.stdin.take());
    assert!(quiet.wait().expect("bsub ends").success());
    // As a user of no standing: the agent gives the terminal to the job's
    // owner only, so the job's output here proves its supervisor came as
    // them; their socket on the host is theirs alone.
    {
        let user = Throwaway::new("interactive-agents", "ir");
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        use std::os::unix::process::CommandExt;
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).expect("tmp");
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
        std::fs::set_permissions(dir.as_ref() as &Path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let mut theirs = bsub(d, &tmp, &["-I", "-m", "host2", "id -un; cat"]);
        theirs.env("TMPDIR", &tmp).uid(user.uid).gid(user.gid).stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = theirs.spawn().expect("bsub as the user");
        // The fourth job: its run's socket.
        let file = c.agent_state("host2").join("term/4.1.sock");
        common::eventually("the agent's socket for the job", || file.exists());
        let meta = std::fs::metadata(&file).expect("socket");
        assert_eq!((meta.uid(), meta.mode() & 0o777), (user.uid, 0o600), "{}", file.display());
        drop(child.stdin.take());
        let out = child.wait_with_output().expect("bsub ends");
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).ends_with(&format!(">>\n{}\n", user.name)), "{}", stdout(&out));
    }
    // A job that is not interactive has no terminal to attach to.
    let plain = common::submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "true"], &dir));
    let mut client = allot_proto::Client::connect(&d.state.join("allotd.sock")).expect("allotd");
    let answer = client.call(allot_proto::Request::Attach { job: plain }).expect("an answer");
    assert_eq!(answer, allot_proto::Response::Error(format!("Job <{plain}>: not an interactive job")));
}
