//! allotd: the allot daemon. One dispatcher task owns the engine and the
//! event log; connections, job ends and timers become messages to it. The
//! engine decides, allotd acts.

mod defaults;
mod serve;
mod state;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "allotd",
    version,
    about = "The allot daemon (in the foreground; `allot start` runs it in the background)"
)]
struct Args {
    /// Configuration directory; without it, the embedded defaults (this
    /// machine, one queue `normal`).
    #[arg(long)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    mode: Option<Mode>,
}

#[derive(Subcommand)]
enum Mode {
    /// (internal) Hold one job: run it and record how it ended.
    Supervise { state_dir: PathBuf, job: u64 },
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(Mode::Supervise { state_dir, job }) = args.mode {
        return match allot_exec::JobFiles::new(&state_dir)
            .map_err(|e| e.to_string())
            .and_then(|f| f.supervise(job).map_err(|e| e.to_string()))
        {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("allotd supervise: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("allotd: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve::run(args.config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("allotd: {e:#}");
            ExitCode::FAILURE
        }
    }
}
