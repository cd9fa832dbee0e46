//! allotd: the allot daemon. One dispatcher task owns the engine and the
//! event log; connections, job ends and timers become messages to it. The
//! engine decides, allotd acts.

mod acct;
mod agents;
mod array_tail;
mod blaunch;
mod cluster;
mod cluster_view;
mod config;
mod confirm;
mod control;
mod daemon_job;
mod degraded;
mod dep_text;
#[cfg(test)]
mod fixture_check;
mod history;
mod job_groups;
mod job_view;
mod lists;
mod metrics;
mod numbers;
mod remote;
#[cfg(test)]
mod replay_check;
#[cfg(test)]
mod replay_cluster;
mod resize;
mod running;
mod serve;
#[cfg(test)]
mod sim_compare;
mod snapshot;
#[cfg(test)]
mod snapshot_check;
mod socket;
mod startup;
mod state;
mod state_lock;
mod state_log;
mod submit;

mod terminal;
mod tick;
mod unknown;
mod views;
mod writer;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "allotd",
    version,
    about = "The allot daemon (in the foreground; `allot start` runs it in the background)"
)]
struct Args {
    /// Configuration directory (read as LSF_ENVDIR: see the README);
    /// without it, `$LSF_ENVDIR` where the environment sets it, as LSF's
    /// daemons find theirs; without either, the embedded defaults (this
    /// machine, one queue `normal`).
    #[arg(long)]
    config: Option<PathBuf>,
}

/// allotd's TLS for the agents, from `[cluster] tls`.
fn tls_config(c: &allot_config::cluster::ClusterSettings) -> anyhow::Result<std::sync::Arc<rustls::ServerConfig>> {
    allot_agent::tls::server_config(std::path::Path::new(&c.tls))
        .map_err(|e| anyhow::anyhow!("[cluster] tls: {e} (make the site's certificates with `allot keygen`)"))
}

fn main() -> ExitCode {
    let args = Args::parse();
    // Nothing of whoever started allotd reaches a job, and a connection
    // (a command's, an agent's) is never refused for want of a
    // descriptor while the hard limit allows one.
    allot_exec::inherit::no_inherited_descriptors();
    match allot_exec::inherit::raise_open_files() {
        Ok(limit) => eprintln!("allotd: open files: up to {limit}"),
        Err(why) => {
            eprintln!("allotd: the open-file limit could not be raised ({why}): fewer agents and commands at once")
        }
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("allotd: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let config = args.config.or_else(|| std::env::var_os("LSF_ENVDIR").filter(|d| !d.is_empty()).map(PathBuf::from));
    match runtime.block_on(serve::run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("allotd: {e:#}");
            ExitCode::FAILURE
        }
    }
}
