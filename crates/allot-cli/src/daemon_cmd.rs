//! `allot start` and `allot stop`.

use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use allot_proto::{Client, Request, Response, paths};
use anyhow::{Context, anyhow, bail};

/// Starts `allotd` (next to this binary) in the background and waits until
/// it answers.
pub fn start(config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let state = paths::state_dir();
    std::fs::create_dir_all(&state).with_context(|| format!("cannot create {}", state.display()))?;
    let socket = paths::socket(&state);
    if Client::connect(&socket).is_ok() {
        println!("allotd is already running (state in {})", state.display());
        return Ok(ExitCode::SUCCESS);
    }
    let exe = std::env::current_exe()?;
    let allotd = exe.with_file_name("allotd");
    if !allotd.exists() {
        bail!("{} is not there: build it with `cargo build -p allot-daemon`", allotd.display());
    }
    let log = log_file(&state.join("allotd.log"))?;
    let mut cmd = std::process::Command::new(&allotd);
    match config {
        Some(dir) => {
            cmd.arg("--config").arg(dir);
        }
        None => {
            cmd.arg("--config").arg(default_tree(&state)?);
        }
    }
    use std::os::unix::process::CommandExt;
    let mut child = cmd.stdin(Stdio::null()).stdout(log.try_clone()?).stderr(log).process_group(0).spawn()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    // Started is answering: a request answered, not a socket that accepts.
    let answers = || {
        Client::connect(&socket)
            .and_then(|mut c| c.call(Request::Queues))
            .is_ok_and(|r| matches!(r, Response::Queues(_)))
    };
    while Instant::now() < deadline {
        if answers() {
            println!("allotd started (state in {}, log in allotd.log)", state.display());
            return Ok(ExitCode::SUCCESS);
        }
        if let Some(status) = child.try_wait()? {
            bail!("allotd stopped at once ({status}): see {}", state.join("allotd.log").display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(anyhow!("allotd did not answer within 10 s: see {}", state.join("allotd.log").display()))
}

/// With no configuration: the embedded defaults as an LSF configuration
/// tree in the state directory's `conf` (written the first time, then
/// left for the administrator to edit; `allot_config::default_tree`).
fn default_tree(state: &Path) -> anyhow::Result<std::path::PathBuf> {
    let conf = state.join("conf");
    let me =
        nix::unistd::User::from_uid(nix::unistd::geteuid()).ok().flatten().map_or_else(|| "root".into(), |u| u.name);
    let written = allot_config::default_tree::write_default_tree(&conf, state, &me)
        .with_context(|| format!("cannot write the default configuration in {}", conf.display()))?;
    if written {
        println!("the default configuration is written in {} (edit it, then `badmin reconfig`)", conf.display());
    }
    Ok(conf)
}

/// `allot start --test-hosts N`: allotd on a test cluster of N hosts on
/// this machine, each with its agent (see `cluster_cmd`); ready once every
/// host's agent is connected.
pub fn start_test_cluster(n: u32) -> anyhow::Result<ExitCode> {
    let state = paths::state_dir();
    std::fs::create_dir_all(&state).with_context(|| format!("cannot create {}", state.display()))?;
    if Client::connect(&paths::socket(&state)).is_ok() {
        bail!("allotd is already running (state in {}): `allot stop` first", state.display());
    }
    let (config, listen, net) = crate::cluster_cmd::write_test_cluster(&state, n)?;
    start(Some(&config))?;
    crate::cluster_cmd::start_test_agents(&state, n, &listen, net.as_ref())?;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let hosts = Client::connect(&paths::socket(&state)).and_then(|mut c| c.call(Request::Hosts));
        let ok = match &hosts {
            Ok(Response::Hosts(h)) => h.iter().filter(|h| h.status != "unavail" && h.status != "unreach").count(),
            _ => 0,
        };
        if ok == n as usize {
            println!(
                "{n} test hosts connected (host1 ... host{n}; files in {})",
                crate::cluster_cmd::test_dir(&state).display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        if Instant::now() >= deadline {
            bail!(
                "{ok} of {n} test hosts connected after 20 s: see the agents' logs in {}",
                crate::cluster_cmd::test_dir(&state).display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn stop() -> anyhow::Result<ExitCode> {
    crate::cluster_cmd::stop_test_agents(&paths::state_dir());
    let socket = paths::socket(&paths::state_dir());
    let Ok(mut client) = Client::connect(&socket) else {
        println!("allotd is not running");
        return Ok(ExitCode::SUCCESS);
    };
    let pid = holder(&paths::state_dir());
    match client.call(Request::Shutdown)? {
        Response::Done => {
            wait_for_the_last_write(pid);
            println!("allotd stopped");
            Ok(ExitCode::SUCCESS)
        }
        Response::Error(e) => bail!("{e}"),
        other => bail!("unexpected answer {other:?}"),
    }
}

/// The pid of the allotd that holds `state_dir` (in its lock's file),
/// where this user may read it (root, and whoever runs their own allotd).
fn holder(state_dir: &std::path::Path) -> Option<i32> {
    std::fs::read_to_string(paths::state_lock(state_dir)).ok()?.trim().parse().ok()
}

/// Once allotd has answered a shutdown, it still writes what waited and a
/// snapshot of the state: done when its process has ended. Waits for that
/// (a minute at most).
fn wait_for_the_last_write(pid: Option<i32>) {
    let Some(pid) = pid.filter(|&p| p > 0) else { return };
    let began = std::time::Instant::now();
    while began.elapsed() < std::time::Duration::from_secs(60) {
        // Gone, or a zombie its parent has not reaped yet.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
        if matches!(state, None | Some("Z" | "X")) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A daemon's log, appended to: 0600 whatever the umask it is started
/// under, an existing one made so too (a log holds user names, commands
/// and paths of every user's jobs; another user neither reads nor writes
/// it).
pub(crate) fn log_file(path: &std::path::Path) -> anyhow::Result<std::fs::File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot make {} private", path.display()))?;
    Ok(file)
}
