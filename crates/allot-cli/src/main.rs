//! `allot`: the command users type.

mod config_cmd;
mod shares_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "allot", version, about = "allot: a batch job scheduler with LSF, Slurm and Flux fairshare")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Configuration directories.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// The share tables of every fairshare policy (the layout of `bhpart -r`).
    ///
    /// Without --config, the spec's own `bhpart -r Partition1` example, built in.
    Shares {
        /// Configuration directory (lsb.params, lsb.queues, lsb.users, lsb.hosts, allot.toml, ...).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Usage by policy and user (JSON); without it, no usage.
        #[arg(long)]
        usage: Option<PathBuf>,
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Reads a configuration directory and prints every problem found,
    /// located; exits non-zero if there is an error.
    Check { dir: PathBuf },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Config { command: ConfigCommand::Check { dir } } => config_cmd::check(&dir),
        Command::Shares { config, usage, json } => shares_cmd::run(config.as_deref(), usage.as_deref(), json),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("allot: {e:#}");
            ExitCode::FAILURE
        }
    }
}
