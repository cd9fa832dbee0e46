//! A cluster for the tests: allotd with `[cluster]`, and the real
//! `allot-agent` for each of its hosts (host1 ... hostN), all on this
//! machine, with certificates made for the test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{Daemon, config_dir, stdout};

/// The `allot-agent` binary, built beside allotd by `cargo test
/// --workspace` (it is the agent crate's).
pub fn agent_exe() -> PathBuf {
    let path = super::allotd().with_file_name("allot-agent");
    assert!(path.exists(), "{} is missing: run `cargo test --workspace`, which builds it", path.display());
    path
}

/// Host state timeouts: heartbeat, unreach_after, unavail_after.
pub type Timeouts = (u64, u64, u64);

pub struct TestCluster {
    pub dir: PathBuf,
    pub tls: PathBuf,
    pub config: PathBuf,
    pub listen: String,
    pub daemon: Option<Daemon>,
    pub agents: BTreeMap<String, Child>,
    /// Environment for the agents started from now on.
    pub agent_env: Vec<(String, String)>,
    /// As root: each agent its own host by name (`--test-host`, a UTS and
    /// a mount namespace), with this file as its /etc/hosts.
    pub hosts_file: Option<PathBuf>,
    /// A host's agent started through this command (`ip netns exec NS`).
    pub agent_prefix: BTreeMap<String, Vec<String>>,
}

impl TestCluster {
    /// allotd on `n` hosts with these timeouts, each host's agent started
    /// and connected.
    pub fn start(dir: &Path, n: u32, timeouts: Timeouts) -> TestCluster {
        let mut c = TestCluster::configured(dir, n, timeouts, "");
        c.start_all(n);
        c
    }

    /// allotd and the agents of `host1` ... `hostN`, each waited for.
    pub fn start_all(&mut self, n: u32) {
        self.start_daemon();
        for k in 1..=n {
            self.start_agent(&format!("host{k}"));
        }
        for k in 1..=n {
            self.wait_host(&format!("host{k}"), "ok");
        }
    }

    /// The files only (configuration with `lsb_queues` added when not
    /// empty, certificates); nothing started.
    pub fn configured(dir: &Path, n: u32, timeouts: Timeouts, extra: &str) -> TestCluster {
        TestCluster::configured_at(dir, n, timeouts, extra, "127.0.0.1")
    }

    /// [`TestCluster::configured`] with allotd listening for agents on
    /// `ip` (an address of this machine).
    pub fn configured_at(
        dir: &Path,
        n: u32,
        (heartbeat, unreach, unavail): Timeouts,
        extra: &str,
        ip: &str,
    ) -> TestCluster {
        let hosts: Vec<String> = (1..=n).map(|k| format!("host{k}")).collect();
        let tls = dir.join("tls");
        allot_agent::keygen::keygen(&tls, &[], &hosts).expect("keygen");
        let port = std::net::TcpListener::bind((ip, 0)).expect("a port").local_addr().expect("addr").port();
        let listen = format!("{ip}:{port}");
        let mut toml = format!(
            "[cluster]\nlisten = \"{listen}\"\ntls = \"{}\"\nheartbeat = {heartbeat}\nunreach_after = {unreach}\n\
             unavail_after = {unavail}\n",
            tls.display()
        );
        for h in &hosts {
            toml.push_str(&format!("[[hosts]]\nname = \"{h}\"\nncpus = 2\n"));
        }
        let queues = format!("Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\n{extra}End Queue\n");
        let config = config_dir(dir, &[("allot.toml", &toml), ("lsb.queues", &queues)]);
        let hosts_file = nix::unistd::Uid::effective().is_root().then(|| {
            let path = dir.join("hosts");
            std::fs::write(&path, allot_agent::testhost::hosts_file_text(n, allot_agent::testhost::loopback))
                .expect("hosts file");
            path
        });
        TestCluster {
            dir: dir.to_path_buf(),
            tls,
            config,
            listen,
            daemon: None,
            agents: BTreeMap::new(),
            agent_env: Vec::new(),
            hosts_file,
            agent_prefix: BTreeMap::new(),
        }
    }

    /// The same files, nothing of it running.
    pub fn clone_paths(&self) -> TestCluster {
        TestCluster {
            dir: self.dir.clone(),
            tls: self.tls.clone(),
            config: self.config.clone(),
            listen: self.listen.clone(),
            daemon: None,
            agents: BTreeMap::new(),
            agent_env: self.agent_env.clone(),
            hosts_file: self.hosts_file.clone(),
            agent_prefix: self.agent_prefix.clone(),
        }
    }

    pub fn start_daemon(&mut self) {
        self.daemon = Some(Daemon::start_with(&self.dir.join("state"), Some(&self.config)));
    }

    pub fn daemon(&self) -> &Daemon {
        self.daemon.as_ref().expect("allotd runs")
    }

    pub fn agent_state(&self, host: &str) -> PathBuf {
        self.dir.join("agents").join(host)
    }

    pub fn agent_log(&self, host: &str) -> String {
        std::fs::read_to_string(self.agent_state(host).join("agent.log")).unwrap_or_default()
    }

    /// Starts `host`'s agent (its log appended to `agents/HOST/agent.log`).
    pub fn start_agent(&mut self, host: &str) {
        let child = self.spawn_agent(host, host);
        self.agents.insert(host.to_string(), child);
    }

    /// An agent that says it is `claimed` with `cert`'s certificate, its
    /// own state directory and log (`agents/NAME/`).
    pub fn spawn_agent(&self, name: &str, claimed: &str) -> Child {
        let state = self.agent_state(name);
        std::fs::create_dir_all(&state).expect("agent dir");
        let log = std::fs::OpenOptions::new().create(true).append(true).open(state.join("agent.log")).expect("log");
        let mut cmd = match self.agent_prefix.get(claimed).and_then(|p| p.split_first()) {
            Some((first, rest)) => {
                let mut cmd = Command::new(first);
                cmd.args(rest).arg(agent_exe());
                cmd
            }
            None => Command::new(agent_exe()),
        };
        if let Some(hosts) = &self.hosts_file {
            cmd.arg("--test-host").arg(hosts);
        }
        cmd.args(["--server", &self.listen, "--host", claimed])
            .arg("--tls")
            .arg(&self.tls)
            .arg("--state-dir")
            .arg(&state)
            .envs(self.agent_env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("allot-agent starts")
    }

    pub fn agent_pid(&self, host: &str) -> i32 {
        self.agents[host].id() as i32
    }

    pub fn kill9_agent(&mut self, host: &str) {
        if let Some(mut child) = self.agents.remove(host) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn signal_agent(&self, host: &str, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.agent_pid(host)), signal).expect("signalled");
    }

    /// `bhosts -w`: each host's status, with its reason (`closed_Adm`).
    pub fn statuses(&self) -> BTreeMap<String, String> {
        let out = self.daemon().cmd(&["bhosts", "-w"], &self.dir);
        stdout(&out)
            .lines()
            .skip(1)
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                Some((w.next()?.to_string(), w.next()?.to_string()))
            })
            .collect()
    }

    /// Waits (30 s at most) until `bhosts` shows `host` as `status`.
    pub fn wait_host(&self, host: &str, status: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let now = self.statuses();
            if now.get(host).map(String::as_str) == Some(status) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{host} never {status}: {now:?}\nallotd: {}\nagent: {}",
                self.daemon().log(),
                self.agent_log(host)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The jobs an agent holds files of now.
    pub fn held(&self, host: &str) -> Vec<u64> {
        let Ok(entries) = std::fs::read_dir(self.agent_state(host).join("jobs")) else { return Vec::new() };
        let mut ids: Vec<u64> =
            entries.filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".spec")?.parse().ok()).collect();
        ids.sort_unstable();
        ids
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        // The agents first (a stopped one is let go on), then allotd.
        for (_, mut child) in std::mem::take(&mut self.agents) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGCONT,
            );
            let _ = child.kill();
            let _ = child.wait();
        }
        self.daemon = None;
    }
}
