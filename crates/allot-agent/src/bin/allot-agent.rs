//! allot-agent: allotd's agent on a compute host (see `allot_agent::agent`).
//! Started by systemd (`examples/allot-agent.service`) or by `allot start
//! --test-hosts N`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(name = "allot-agent", version, about = "allot's agent on a compute host (in the foreground)")]
struct Args {
    /// allotd's address for agents, HOST:PORT (`[cluster] listen` of its allot.toml).
    #[arg(long)]
    server: String,
    /// This host's name, as the configuration and its certificate name it
    /// (default: this machine's host name).
    #[arg(long)]
    host: Option<String>,
    /// The directory of `allot keygen`'s files: ca.pem, HOST.pem, HOST-key.pem.
    #[arg(long)]
    tls: PathBuf,
    /// The agent's state directory (default /var/lib/allot-agent, or
    /// ~/.local/state/allot-agent when not root).
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// The local address to connect from.
    #[arg(long)]
    bind: Option<std::net::IpAddr>,
    /// MiB of each stream of a `blaunch` task that its spool keeps at
    /// most (what waits while allotd is out of reach included); a task's
    /// output past it is dropped, and said in its job's output. Default
    /// 1024, or $ALLOT_TASK_SPOOL_MB.
    #[arg(long, value_name = "MIB")]
    task_spool_mb: Option<u64>,
    /// A load generator instead of an agent: N simulated hosts (host1 ...
    /// hostN, each with its certificate in --tls), see bench/agents-load.sh.
    #[arg(long, value_name = "N", hide = true)]
    simulate: Option<u32>,
    /// With --simulate: how long each job "runs", milliseconds.
    #[arg(long, default_value_t = 1000, hide = true)]
    run_ms: u64,
    /// With --simulate: seconds between heartbeats.
    #[arg(long, default_value_t = 10, hide = true)]
    heartbeat: u64,
    /// A test host of `allot start --test-hosts` (as root): this host's
    /// name in a UTS namespace of its own, and this file as /etc/hosts.
    #[arg(long, value_name = "HOSTS_FILE", hide = true)]
    test_host: Option<PathBuf>,
    /// With --test-host: the network namespace (a name in /run/netns) to
    /// enter first.
    #[arg(long, value_name = "NAME", hide = true, requires = "test_host")]
    test_netns: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    // Nothing of whoever started it reaches a job; a descriptor for every
    // job's task pipes (and, simulating, for every host).
    allot_exec::inherit::no_inherited_descriptors();
    if let Err(why) = allot_exec::inherit::raise_open_files() {
        eprintln!("allot-agent: the open-file limit could not be raised ({why})");
    }
    if let Some(hosts) = args.simulate {
        let sim = allot_agent::simulate::Simulation {
            server: args.server,
            tls_dir: args.tls,
            hosts,
            heartbeat: std::time::Duration::from_secs(args.heartbeat.max(1)),
            run_ms: args.run_ms,
        };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        return match runtime.map_err(|e| e.to_string()).and_then(|r| r.block_on(allot_agent::simulate::simulate(sim))) {
            Ok(report) => {
                println!("{report}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("allot-agent: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let host = args
        .host
        .unwrap_or_else(|| nix::unistd::gethostname().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default());
    let state_dir = args.state_dir.unwrap_or_else(|| {
        if nix::unistd::Uid::effective().is_root() {
            PathBuf::from("/var/lib/allot-agent")
        } else {
            let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
            home.join(".local/state/allot-agent")
        }
    });
    // Before any thread: namespaces are each thread's own.
    if let Some(hosts_file) = &args.test_host {
        if let Err(e) = allot_agent::testhost::become_test_host(&host, hosts_file, args.test_netns.as_deref()) {
            eprintln!("allot-agent: {e}");
            return ExitCode::FAILURE;
        }
    }
    let supervisor = match std::env::current_exe() {
        Ok(exe) => exe.with_file_name("allot-supervise"),
        Err(e) => {
            eprintln!("allot-agent: cannot find itself: {e}");
            return ExitCode::FAILURE;
        }
    };
    if !supervisor.is_file() {
        eprintln!("allot-agent: {} is missing: it is installed with allot-agent, next to it", supervisor.display());
        return ExitCode::FAILURE;
    }
    let opts = allot_agent::agent::Options {
        server: args.server,
        host,
        tls_dir: args.tls,
        state_dir,
        supervisor,
        bind: args.bind,
        task_spool_max: match args
            .task_spool_mb
            .map(Ok)
            .or_else(|| std::env::var("ALLOT_TASK_SPOOL_MB").ok().map(|v| v.parse::<u64>().map_err(|_| v)))
        {
            Some(Ok(mb)) => mb << 20,
            Some(Err(v)) => {
                eprintln!("allot-agent: ALLOT_TASK_SPOOL_MB: expected a number of MiB, found `{v}`");
                return ExitCode::FAILURE;
            }
            None => allot_exec::task::SPOOL_MAX,
        },
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("allot-agent: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(allot_agent::agent::run(opts)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("allot-agent: {e}");
            ExitCode::FAILURE
        }
    }
}
