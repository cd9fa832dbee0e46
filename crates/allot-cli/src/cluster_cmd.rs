//! `allot keygen` and `allot start --test-hosts N`: a cluster's
//! certificates, and a cluster of N test hosts on this one machine.

use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};

use anyhow::{Context, bail};

use crate::test_net::{self, TestNet};

/// `allot keygen --dir DIR [--daemon-host NAME ...] HOST ...`.
pub fn keygen(dir: &Path, daemon_hosts: &[String], hosts: &[String]) -> anyhow::Result<ExitCode> {
    let made = allot_agent::keygen::keygen(dir, daemon_hosts, hosts).map_err(|e| anyhow::anyhow!("keygen: {e}"))?;
    for f in &made.files {
        println!("{}", f.display());
    }
    if made.files.is_empty() {
        println!("{}: every certificate asked for is there already", dir.display());
    }
    println!(
        "Copy ca.pem and allotd.pem, allotd-key.pem to allotd's machine; ca.pem and HOST.pem, HOST-key.pem to each \
         host. Keep ca-key.pem where certificates are made."
    );
    Ok(ExitCode::SUCCESS)
}

/// Seconds between a test host's heartbeats, and its silences that make
/// it `unreach` and `unavail`: short, so that a test cluster shows a
/// stopped agent within seconds.
const TEST_TIMEOUTS: (u64, u64, u64) = (2, 10, 60);

/// Where a test cluster's files are: `STATE/test-hosts/` (`config/`,
/// `tls/`, and `hostK/` with each agent's state and log).
pub fn test_dir(state: &Path) -> PathBuf {
    state.join("test-hosts")
}

/// Writes a test cluster of `n` hosts (`host1` ... `hostN`, each with this
/// machine's CPUs as slots, at least 2), its certificates and, as root,
/// its network (see [`crate::test_net`]); returns its configuration
/// directory, allotd's address for agents and the network.
pub fn write_test_cluster(state: &Path, n: u32) -> anyhow::Result<(PathBuf, String, Option<TestNet>)> {
    if n == 0 || n > 200 {
        bail!("--test-hosts: expected 1 to 200 hosts, found {n}");
    }
    let dir = test_dir(state);
    let config = dir.join("config");
    std::fs::create_dir_all(&config).with_context(|| format!("cannot create {}", config.display()))?;
    // What a cluster that was not stopped left.
    test_net::tear_down(&dir);
    let hosts: Vec<String> = (1..=n).map(|k| format!("host{k}")).collect();
    allot_agent::keygen::keygen(&dir.join("tls"), &[], &hosts).map_err(|e| anyhow::anyhow!("keygen: {e}"))?;
    let net = if test_net::available() { Some(test_net::set_up(&dir, n)?) } else { None };
    // A free port, this moment.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let listen = match &net {
        Some(net) => format!("{}:{port}", net.server()),
        None => format!("127.0.0.1:{port}"),
    };
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get() as u32).max(2);
    let (heartbeat, unreach, unavail) = TEST_TIMEOUTS;
    let mut toml = format!(
        "# A test cluster of {n} hosts on this machine (allot start --test-hosts {n}).\n\
         [cluster]\nlisten = \"{listen}\"\ntls = \"../tls\"\nheartbeat = {heartbeat}\n\
         unreach_after = {unreach}\nunavail_after = {unavail}\n"
    );
    for h in &hosts {
        toml.push_str(&format!("\n[[hosts]]\nname = \"{h}\"\nncpus = {cpus}\n"));
    }
    std::fs::write(config.join("allot.toml"), toml)?;
    std::fs::write(
        config.join("lsb.queues"),
        "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nFAIRSHARE = USER_SHARES[[default, 1]]\n\
         DESCRIPTION = the test cluster's queue\nEnd Queue\n",
    )?;
    Ok((config, listen, net))
}

/// Test host `k`'s address: its namespace's, or a loopback address.
fn host_address(net: Option<&TestNet>, k: u32) -> std::net::IpAddr {
    net.map_or_else(|| allot_agent::testhost::loopback(k), |net| net.host(k).into())
}

/// Starts the agents of a test cluster, each its own host: `hostK` in
/// its network namespace, or on 127.0.0.(K+1). Their process ids go to
/// `test-hosts/agents`, for `allot stop`.
pub fn start_test_agents(state: &Path, n: u32, listen: &str, net: Option<&TestNet>) -> anyhow::Result<()> {
    let dir = test_dir(state);
    let agent = std::env::current_exe()?.with_file_name("allot-agent");
    if !agent.exists() {
        bail!("{} is not there: build it with `cargo build -p allot-daemon`", agent.display());
    }
    // As root, each its own host by name too (see allot_agent::testhost).
    let hosts_file = dir.join("hosts");
    let root = nix::unistd::Uid::effective().is_root();
    if root {
        std::fs::write(&hosts_file, allot_agent::testhost::hosts_file_text(n, |k| host_address(net, k)))?;
    }
    let mut pids = String::new();
    for k in 1..=n {
        let host = format!("host{k}");
        let home = dir.join(&host);
        std::fs::create_dir_all(&home)?;
        let log = crate::daemon_cmd::log_file(&home.join("agent.log"))?;
        use std::os::unix::process::CommandExt;
        let mut cmd = std::process::Command::new(&agent);
        if root {
            cmd.arg("--test-host").arg(&hosts_file);
        }
        if let Some(net) = net {
            cmd.arg("--test-netns").arg(net.namespace(k));
        }
        let child = cmd
            .args(["--server", listen, "--host", &host, "--bind", &host_address(net, k).to_string()])
            .arg("--tls")
            .arg(dir.join("tls"))
            .arg("--state-dir")
            .arg(&home)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .process_group(0)
            .spawn()
            .with_context(|| format!("cannot start {}", agent.display()))?;
        pids.push_str(&format!("{}\n", child.id()));
    }
    std::fs::write(dir.join("agents"), pids)?;
    Ok(())
}

/// `allot stop`'s part: the test cluster's agents, if one runs, and then
/// its network.
pub fn stop_test_agents(state: &Path) {
    let dir = test_dir(state);
    let file = dir.join("agents");
    let Ok(text) = std::fs::read_to_string(&file) else { return };
    let pids: Vec<_> =
        text.lines().filter_map(|l| l.trim().parse::<i32>().ok()).map(nix::unistd::Pid::from_raw).collect();
    for &pid in &pids {
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    }
    let _ = std::fs::remove_file(file);
    if test_net::recorded(&dir).is_some() {
        // The namespaces go once nothing is in them: the agents first.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while pids.iter().any(|&p| nix::sys::signal::kill(p, None).is_ok()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        test_net::tear_down(&dir);
    }
}
