//! What the end-to-end tests share: the real allotd in a temporary state
//! directory, the real `allot` commands, and polling for what they show.

#![allow(dead_code)] // each test binary uses some of these

pub mod agents;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn allotd() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_allotd"))
}

/// The `allot` command, built beside allotd by `cargo test --workspace`
/// (allot-cli's own tests need it).
pub fn allot() -> PathBuf {
    let path = allotd().with_file_name("allot");
    assert!(path.exists(), "{} is missing: run `cargo test --workspace`, which builds it", path.display());
    path
}

pub struct Daemon {
    pub state: PathBuf,
    child: Child,
}

impl Daemon {
    pub fn start(state: &Path) -> Daemon {
        Daemon::start_with(state, None)
    }

    /// allotd on a configuration directory, or on its embedded defaults.
    pub fn start_with(state: &Path, config: Option<&Path>) -> Daemon {
        Daemon::start_env(state, config, &[])
    }

    /// [`Daemon::start_with`] with more environment for allotd.
    pub fn start_env(state: &Path, config: Option<&Path>, env: &[(&str, &str)]) -> Daemon {
        std::fs::create_dir_all(state).expect("state dir");
        let log = std::fs::File::create(state.join("test-allotd.log")).expect("log");
        let mut command = Command::new(allotd());
        if let Some(dir) = config {
            command.arg("--config").arg(dir);
        }
        // Only what the test sets: an LSF_ENVDIR of the machine's is not
        // the test's configuration.
        command.env_remove("LSF_ENVDIR").envs(env.iter().copied());
        let child =
            command.env("ALLOT_STATE_DIR", state).stdout(Stdio::null()).stderr(log).spawn().expect("allotd starts");
        let d = Daemon { state: state.to_path_buf(), child };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(state.join("allotd.sock")).is_err() {
            assert!(Instant::now() < deadline, "allotd did not listen: {}", d.log());
            std::thread::sleep(Duration::from_millis(20));
        }
        d
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.state.join("test-allotd.log")).unwrap_or_default()
    }

    pub fn cmd(&self, args: &[&str], cwd: &Path) -> Output {
        Command::new(allot())
            .args(args)
            .env("ALLOT_STATE_DIR", &self.state)
            .current_dir(cwd)
            .output()
            .expect("allot runs")
    }

    /// Polls `bjobs -a` until `job` shows `status`.
    pub fn wait_for(&self, job: u64, status: &str, cwd: &Path) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let out = self.cmd(&["bjobs", "-a", "-noheader", &job.to_string()], cwd);
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            if text.split_whitespace().nth(2) == Some(status) {
                return text;
            }
            assert!(Instant::now() < deadline, "job {job} never reached {status}: {text} {}", self.log());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// allotd's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// allotd's resident memory now, KB (`VmRSS`).
    pub fn rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The daemon's cgroup for its jobs, when no job of it runs on.
        if let Some(own) = allot_exec::cgroup::current() {
            let tag = allot_exec::cgroup::tag_of(&self.state);
            let _ = std::fs::remove_dir(own.join(format!("allot-{tag}")));
        }
    }
}

/// A test's directory, removed with everything in it when the test ends
/// (after its allotd, declared later, is stopped).
pub struct TestDir(tempfile::TempDir);

impl std::ops::Deref for TestDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for TestDir {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<std::ffi::OsStr> for TestDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.path().as_os_str()
    }
}

pub fn tempdir(name: &str) -> TestDir {
    TestDir(tempfile::Builder::new().prefix(&format!("allot-daemon-{name}-")).tempdir().expect("a temporary directory"))
}

/// A configuration directory `config` in `dir` holding `files` (name,
/// text).
pub fn config_dir(dir: &Path, files: &[(&str, &str)]) -> PathBuf {
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("config dir");
    for (name, text) in files {
        std::fs::write(config.join(name), text).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    config
}

pub fn submitted_id(out: &Output) -> u64 {
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "bsub failed: {text} {}", String::from_utf8_lossy(&out.stderr));
    let rest = text.strip_prefix("Job <").unwrap_or_else(|| panic!("{text}"));
    rest[..rest.find('>').expect(">")].parse().expect("id")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub const ONE_HOST: &str = "[[hosts]]\nname = \"hostA\"\nncpus = 1\n";

pub fn queues(names: &[&str]) -> String {
    names.iter().map(|q| format!("Begin Queue\nQUEUE_NAME = {q}\nPRIORITY = 30\nEnd Queue\n\n")).collect()
}

/// A user of this machine for the multi-user tests (made if missing):
/// uid and gid.
pub fn test_user(name: &str) -> (u32, u32) {
    if nix::unistd::User::from_name(name).ok().flatten().is_none() {
        let made = Command::new("useradd").args(["--no-create-home", "--shell", "/bin/sh", name]).status();
        assert!(made.is_ok_and(|s| s.success()), "useradd {name}");
    }
    let u = nix::unistd::User::from_name(name).ok().flatten().expect("user exists");
    (u.uid.as_raw(), u.gid.as_raw())
}

impl Daemon {
    /// The `allot` command run as a throwaway user from `/`, and how long
    /// it took (its start included).
    pub fn timed_as(&self, user: &Throwaway, args: &[&str]) -> (Output, Duration) {
        use std::os::unix::process::CommandExt;
        let began = Instant::now();
        let out = Command::new(allot())
            .args(args)
            .env("ALLOT_STATE_DIR", &self.state)
            .current_dir("/")
            .uid(user.uid)
            .gid(user.gid)
            .output()
            .expect("allot runs");
        (out, began.elapsed())
    }

    /// The `allot` command run as another user.
    pub fn cmd_as(&self, user: (u32, u32), args: &[&str], cwd: &Path) -> Output {
        use std::os::unix::process::CommandExt;
        Command::new(allot())
            .args(args)
            .env("ALLOT_STATE_DIR", &self.state)
            .current_dir(cwd)
            .uid(user.0)
            .gid(user.1)
            .output()
            .expect("allot runs")
    }
}

/// Bytes in a file so far (0 if it does not exist yet).
pub fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// `bjobs -noheader` lines of these jobs (finished ones too).
pub fn lines(d: &Daemon, job: &str, dir: &Path, flags: &[&str]) -> Vec<String> {
    let mut args = vec!["bjobs", "-a", "-noheader"];
    args.extend_from_slice(flags);
    args.push(job);
    stdout(&d.cmd(&args, dir)).lines().map(str::to_string).collect()
}

/// Polls until `check` holds of the `bjobs` lines of `job`.
pub fn wait_until(d: &Daemon, job: &str, dir: &Path, flags: &[&str], check: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let l = lines(d, job, dir, flags);
        if check(&l) {
            return l;
        }
        assert!(Instant::now() < deadline, "{job}: {l:?} {}", d.log());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A user (and a group of its own) made for one test and removed after
/// it: as a hostile local user would be, with nothing of a real account.
/// Needs root: a test that makes one fails, saying so, when not root (CI
/// runs as root).
pub struct Throwaway {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// An extra group the user is in, for supplementary-group checks.
    pub group: String,
    pub group_gid: u32,
}

/// Fails the test, loudly, unless it runs as root (CI runs as root): a
/// test that needs root never passes without having run.
pub fn needs_root(test: &str, why: &str) {
    assert!(
        nix::unistd::Uid::effective().is_root(),
        "{test}: needs root {why} (CI runs as root; as another user this test fails rather than pass unrun)"
    );
}

impl Throwaway {
    pub fn new(test: &str, tag: &str) -> Throwaway {
        needs_root(test, "to make throwaway users");
        Throwaway::made(tag)
    }

    /// For a test that proves what it can as any user and more with other
    /// users: a throwaway user as root, `None` otherwise.
    pub fn if_root(tag: &str) -> Option<Throwaway> {
        nix::unistd::Uid::effective().is_root().then(|| Throwaway::made(tag))
    }

    fn made(tag: &str) -> Throwaway {
        // Short and unique: user names have at most 32 characters.
        let name = format!("al{tag}{}", std::process::id() % 100_000);
        let group = format!("{name}g");
        let _ = Command::new("userdel").arg(&name).output();
        let _ = Command::new("groupdel").arg(&group).output();
        let made = Command::new("groupadd").arg(&group).status();
        assert!(made.is_ok_and(|s| s.success()), "groupadd {group}");
        let made = Command::new("useradd")
            .args(["--no-create-home", "--shell", "/bin/sh", "--groups", &group, &name])
            .status();
        assert!(made.is_ok_and(|s| s.success()), "useradd {name}");
        let u = nix::unistd::User::from_name(&name).ok().flatten().expect("user exists");
        let g = nix::unistd::Group::from_name(&group).ok().flatten().expect("group exists");
        Throwaway { name, uid: u.uid.as_raw(), gid: u.gid.as_raw(), group, group_gid: g.gid.as_raw() }
    }

    pub fn ids(&self) -> (u32, u32) {
        (self.uid, self.gid)
    }

    /// Removes the user now (as an administrator would, jobs or not).
    pub fn remove(&self) {
        let _ = Command::new("userdel").args(["--force", &self.name]).output();
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        self.remove();
        let _ = Command::new("groupdel").arg(&self.group).output();
        // A group of the user's own name, made by useradd.
        let _ = Command::new("groupdel").arg(&self.name).output();
    }
}

/// Waits until `check` holds, or fails with `what` after 20 s.
pub fn eventually(what: &str, check: impl Fn() -> bool) {
    eventually_within(what, Duration::from_secs(20), check);
}

/// [`eventually`], waiting up to `within` (for what a loaded machine may
/// take long to do).
pub fn eventually_within(what: &str, within: Duration, check: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !check() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The lines of a file (none when it is not there yet).
pub fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_string).collect()
}

/// Whether a process runs (not a zombie).
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
}

/// The rule that starts LSF's job report at the end of an `-o` file.
pub const REPORT_START: &str = "\n------------------------------------------------------------\nSender: LSF System <";

/// What a job wrote to its `-o` file, without the job report allotd
/// adds after it (an ended job's file has one; `None` for a file that has
/// none, or none yet).
pub fn job_output(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.find(REPORT_START).map(|at| text[..at].to_string())
}

/// `perl -e SCRIPT SOCKET N` as `user` (perl-base's IO::Socket::UNIX makes
/// connections as that user, whose uid the daemon sees by the peer
/// credentials), and the first line it prints; kill it when done.
pub fn perl_as(user: &Throwaway, script: &str, socket: &Path, n: u32) -> (std::process::Child, String) {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("perl")
        .args(["-e", script])
        .arg(socket)
        .arg(n.to_string())
        .uid(user.uid)
        .gid(user.gid)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("perl (perl-base)");
    let mut said = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut said).expect("perl says");
    (child, said.trim().to_string())
}
