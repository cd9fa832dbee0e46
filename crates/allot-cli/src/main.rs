//! `allot`: the command users type.

mod bacct;
mod bench_cmd;
mod bench_dispatch;
mod bench_restart;
mod bhist;
mod bjobs;
mod bjobs_format;
mod bjobs_wide;
mod blaunch;
mod blimits;
mod bslots;
mod clock;
mod cluster_cmd;
mod cluster_info;
mod config_cmd;
mod control;
mod daemon_cmd;
mod explain_cmd;
mod help;
mod history_cmd;
mod host_long;
mod hosts_cmd;
mod install_cmd;
mod interactive;
mod job_groups_cmd;
mod job_long;
mod lsf;
mod manpage;
mod shares_cmd;
mod sim_cmd;
mod sprio_cmd;
mod sshare_cmd;
mod test_net;
mod views;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(name = "allot", version, about = "allot: a batch job scheduler with LSF, Slurm and Flux fairshare")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Starts allotd in the background (state in ALLOT_STATE_DIR, or the
    /// user's state directory); `--config DIR` passes a configuration
    /// (without it, allotd reads $LSF_ENVDIR if set, else its defaults).
    Start {
        #[arg(long, conflicts_with = "test_hosts")]
        config: Option<PathBuf>,
        /// A cluster of N hosts on this machine (host1 ... hostN, each with
        /// its agent), as `flux start --test-size=N`.
        #[arg(long, value_name = "N")]
        test_hosts: Option<u32>,
    },
    /// Makes a site's certificates for allotd and its agents (mutual TLS):
    /// the site CA, allotd's, and one per HOST, in DIR.
    Keygen {
        #[arg(long)]
        dir: PathBuf,
        /// A name of allotd's machine, for its certificate (may be repeated).
        #[arg(long = "daemon-host")]
        daemon_hosts: Vec<String>,
        /// The hosts, as the configuration names them.
        hosts: Vec<String>,
    },
    /// Stops allotd; running jobs go on under their supervisors.
    Stop,
    /// Makes links named bsub, bjobs, ... to this binary in DIR.
    InstallLinks { dir: PathBuf },
    /// Installs allot under PREFIX: the binaries and the LSF commands'
    /// links in PREFIX/bin, their man pages in PREFIX/share/man/man1, and
    /// bash completion in PREFIX/share/bash-completion/completions.
    Install { prefix: PathBuf },
    /// Prints the shell completion of `allot` (for bash, of the LSF
    /// commands too): `source <(allot completion bash)`.
    Completion {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
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
        /// The tables of the running allotd, with its usage now.
        #[arg(long)]
        live: bool,
    },
    /// The fair-share of the multifactor policies (slurm-classic,
    /// slurm-fairtree, slurm-tickets, flux-accounting, flux), as Slurm's `sshare -l`.
    Sshare(MultifactorArgs),
    /// The multi-factor priority (spec 002) of the pending jobs a usage
    /// file lists, each factor weighted, as Slurm's `sprio`.
    Sprio(MultifactorArgs),
    /// Replays a workload (SWF, gzip-compressed or not, or JSON lines), or
    /// allotd's own history (--from), through the engine and writes
    /// jobs.csv, summary.json and plots.
    Sim {
        /// The workload: *.swf[.gz] or *.jsonl.
        #[arg(required_unless_present = "from")]
        workload: Option<PathBuf>,
        /// Replay what allotd recorded in this state directory (its event
        /// log): each submission as typed, each job's real run time, what
        /// users and administrators did. Without --config, under the
        /// configuration it recorded, making again every decision allotd
        /// made (exit 3 when one differs, listed in problems.txt).
        #[arg(long, conflicts_with_all = ["workload", "policy", "kill_at_limit", "backfill", "reserve", "time_reserve", "max_reserve_time", "plan", "report_at"])]
        from: Option<PathBuf>,
        /// Configuration directory; without it, the machine of the SWF header
        /// and one queue `normal` (with --from: the configuration recorded).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Without --config: an FCFS queue, FAIRSHARE = USER_SHARES[[default, 1]] (the default), or
        /// a multifactor policy over the same shares (every user one share under root).
        #[arg(long, value_enum)]
        policy: Option<PolicyArg>,
        /// Output directory (default: a new directory named after the workload).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write shares-T.json at these times (seconds from the workload's start).
        #[arg(long = "report-at", num_args = 1..)]
        report_at: Vec<u64>,
        /// With --report-at: at each report time, write why this job (its
        /// number in the workload, `12` or `12[3]`) waits, if it does, to
        /// explain-JOB-T.txt and .json.
        #[arg(long, requires = "report_at")]
        explain: Option<String>,
        /// End a job at its run limit when it ran longer in the trace.
        #[arg(long)]
        kill_at_limit: bool,
        /// Without --config: the queue reserves slots for parallel jobs
        /// (SLOT_RESERVE) and backfills (BACKFILL=Y).
        #[arg(long)]
        backfill: bool,
        /// Without --config: the queue reserves slots for parallel jobs
        /// (SLOT_RESERVE), without backfill: what --backfill is measured
        /// against.
        #[arg(long, conflicts_with = "backfill")]
        reserve: bool,
        /// With --backfill or --reserve: time-based slot reservation for at
        /// most N jobs at once (LSB_TIME_RESERVE_NUMJOBS=N in lsf.conf).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        time_reserve: Option<u32>,
        /// With --backfill or --reserve: the reservation time,
        /// MAX_RESERVE_TIME[CYCLES] in MBD_SLEEP_TIME cycles (default 5),
        /// or `never`: a reservation held until its job starts, as EASY
        /// backfill's is.
        #[arg(long, value_name = "CYCLES", value_parser = sim_cmd::reserve_cycles)]
        max_reserve_time: Option<u32>,
        /// Without --config: plan-based reservation (ALLOCATION_PLANNER=Y)
        /// with the queue's PLAN, `Y` or `"DELAY[minutes] MAX_JOBS[n]"`;
        /// with --backfill the queue backfills too.
        #[arg(long, value_name = "PLAN", conflicts_with_all = ["reserve", "time_reserve", "max_reserve_time"])]
        plan: Option<String>,
        /// SWF: send each job to the queue named after its queue number
        /// (`queue1`, ...; field 15) or its partition number (`partition1`,
        /// ...; field 16); by default every job goes to the default queue.
        #[arg(long, value_enum, default_value = "none")]
        swf_queues: SwfQueuesArg,
    },
    /// Why a pending job waits, all of it: its pending reason and every
    /// limit it is over, its queue's hosts by why they give it no slot,
    /// its place in the share tree at each level, the reservations ahead
    /// of it and its predicted start (what `bjobs -p -l` shows).
    Explain {
        /// The job: `12`, or `12[3]` for an element of an array.
        job: String,
        /// Print JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// What-if: allotd's history (its state directory) replayed under the
    /// configuration it ran with and under another, compared per user and
    /// per queue (wait, 95th percentile wait, slowdown), with utilization,
    /// share error and the jobs that move most.
    Whatif {
        /// allotd's state directory (or its state.db).
        #[arg(long)]
        from: PathBuf,
        /// The configuration directory to try.
        #[arg(long)]
        config: PathBuf,
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
        /// Where to draw each user's mean wait before and after (SVG;
        /// default whatif.svg).
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// Benchmarks of the running system.
    Bench {
        #[command(subcommand)]
        command: BenchCommand,
    },
}

/// What `sshare` and `sprio` read.
#[derive(Args)]
struct MultifactorArgs {
    /// Configuration directory: allot.toml's [priority] policy, weights and
    /// QoS levels, and its associations ([priority] accounts, or the
    /// lsb.users share trees).
    #[arg(long, required_unless_present = "live", requires = "usage")]
    config: Option<PathBuf>,
    /// Usage per association: a JSON list of {"account", "user", "usage",
    /// "pending"} (sprio: with the pending "jobs", or a "pending" count).
    #[arg(long, required_unless_present = "live", requires = "config")]
    usage: Option<PathBuf>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// The running allotd's state now, instead of --config and --usage.
    #[arg(long, conflicts_with_all = ["config", "usage"])]
    live: bool,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// `allot sim --from` at a trace's scale: the trace simulated on its
    /// machine, written as allotd's event log, and replayed from it under
    /// the configuration it records (read and replay timed, every start
    /// checked).
    Replay {
        /// The trace (SWF, gzip-compressed or not).
        trace: PathBuf,
        /// One FCFS queue instead of FAIRSHARE = USER_SHARES[[default, 1]].
        #[arg(long)]
        fcfs: bool,
        /// The queue reserves slots (MAX_RESERVE_TIME[5]) and backfills.
        #[arg(long)]
        backfill: bool,
        /// Keep the state directory written (it says where).
        #[arg(long)]
        keep: bool,
    },
    /// How long allotd takes to come back on a long history: the trace
    /// (repeated up to `--jobs`) written as allotd's event log, allotd
    /// started on it and timed to its first answer.
    Restart {
        /// The trace (SWF, gzip-compressed or not).
        trace: PathBuf,
        /// Repeat the trace end to end up to this many jobs.
        #[arg(long)]
        jobs: Option<usize>,
        /// How many times allotd is started on the log.
        #[arg(long, default_value_t = 2)]
        restarts: u32,
        /// Keep the state directory written (it says where).
        #[arg(long)]
        keep: bool,
    },
    /// allotd with a large backlog: submission rate over the protocol,
    /// `bjobs -u all` time and allotd's memory (a fresh daemon on its
    /// embedded defaults, removed afterwards).
    Daemon {
        #[arg(long, default_value_t = 100_000)]
        jobs: u64,
        #[arg(long, default_value_t = 8)]
        connections: u64,
        /// Leave allotd running with its jobs (for profiling); it says where.
        #[arg(long)]
        keep: bool,
    },
    /// The dispatch pass at issue 3's scale, as `cargo bench -p
    /// allot-engine --bench dispatch` runs it, in this binary: a pass that
    /// starts every job that fits on an empty cluster, one after a job
    /// ends, and one with nothing new (median of `--samples`).
    Dispatch {
        #[arg(long, default_value_t = 100_000)]
        jobs: usize,
        /// Users (a multiple of 100).
        #[arg(long, default_value_t = 10_000)]
        users: usize,
        #[arg(long, default_value_t = 5_000)]
        hosts: usize,
        #[arg(long, default_value_t = 5)]
        samples: usize,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum PolicyArg {
    Fcfs,
    Fairshare,
    SlurmClassic,
    SlurmFairtree,
    SlurmTickets,
    FluxAccounting,
    /// Spec 002's fair-share factor (0.5: perfectly served).
    Flux,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SwfQueuesArg {
    None,
    Queue,
    Partition,
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Reads a configuration directory and prints every problem found,
    /// located; exits non-zero if there is an error.
    Check { dir: PathBuf },
}

/// `allot`'s own completion for `shell`, as clap makes it.
fn completion(shell: clap_complete::Shell) -> String {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "allot", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn main() -> ExitCode {
    // Called as `bsub`, `bjobs`, ... (a link), or as `allot bsub ...`: LSF's
    // own option syntax, which clap does not parse.
    let argv: Vec<String> = std::env::args().collect();
    let called_as =
        argv.first().and_then(|a| std::path::Path::new(a).file_name()).map(|n| n.to_string_lossy().into_owned());
    let lsf = match called_as.as_deref() {
        Some(name) if lsf::is_command(name) => Some((name.to_string(), &argv[1..])),
        _ => argv.get(1).filter(|c| lsf::is_command(c)).map(|c| (c.clone(), &argv[2..])),
    };
    if let Some((cmd, args)) = lsf {
        return match lsf::run(&cmd, args) {
            Ok(code) => code,
            Err(e) => {
                // An error may quote what a user wrote (a job's name).
                eprintln!("{}", allot_proto::text::escaped_lines(&format!("{e:#}")));
                ExitCode::FAILURE
            }
        };
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Config { command: ConfigCommand::Check { dir } } => config_cmd::check(&dir),
        Command::Start { config, test_hosts: None } => daemon_cmd::start(config.as_deref()),
        Command::Start { test_hosts: Some(n), .. } => daemon_cmd::start_test_cluster(n),
        Command::Keygen { dir, daemon_hosts, hosts } => cluster_cmd::keygen(&dir, &daemon_hosts, &hosts),
        Command::Stop => daemon_cmd::stop(),
        Command::Bench { command: BenchCommand::Replay { trace, fcfs, backfill, keep } } => {
            bench_cmd::replay(&trace, fcfs, backfill, keep)
        }
        Command::Bench { command: BenchCommand::Restart { trace, jobs, restarts, keep } } => {
            bench_restart::restart(&trace, jobs, restarts, keep)
        }
        Command::Bench { command: BenchCommand::Daemon { jobs, connections, keep } } => {
            bench_cmd::daemon(jobs, connections, keep)
        }
        Command::Bench { command: BenchCommand::Dispatch { jobs, users, hosts, samples } } => {
            bench_dispatch::dispatch(allot_engine::bench_scenario::Scale { jobs, users, hosts }, samples)
        }
        Command::InstallLinks { dir } => install_cmd::install_links(&dir),
        Command::Install { prefix } => install_cmd::install(&prefix, &completion(clap_complete::Shell::Bash)),
        Command::Completion { shell } => {
            let mut text = completion(shell);
            if shell == clap_complete::Shell::Bash {
                text.push('\n');
                text.push_str(&manpage::bash_completion());
            }
            lsf::emit(&text).map(|()| ExitCode::SUCCESS)
        }
        Command::Sshare(a) => sshare_cmd::run(a.config.as_deref().zip(a.usage.as_deref()), a.json),
        Command::Sprio(a) => sprio_cmd::run(a.config.as_deref().zip(a.usage.as_deref()), a.json),
        Command::Shares { config, usage, json, live } => {
            shares_cmd::run(config.as_deref(), usage.as_deref(), json, live)
        }
        Command::Explain { job, json } => explain_cmd::run(&job, json),
        Command::Whatif { from, config, json, plot } => history_cmd::whatif(&from, &config, json, plot),
        Command::Sim { from: Some(from), config, out, .. } => history_cmd::sim_from(&from, config.as_deref(), out),
        Command::Sim {
            workload,
            config,
            policy,
            out,
            report_at,
            explain,
            kill_at_limit,
            backfill,
            reserve,
            time_reserve,
            max_reserve_time,
            plan,
            swf_queues,
            ..
        } => sim_cmd::run(sim_cmd::SimArgs {
            workload: workload.unwrap_or_default(),
            config,
            policy: policy.map(|p| {
                use allot_engine::multifactor::FairsharePolicy as F;
                use allot_sim::machine::Policy;
                match p {
                    PolicyArg::Fcfs => Policy::Fcfs,
                    PolicyArg::Fairshare => Policy::Fairshare,
                    PolicyArg::SlurmClassic => Policy::Multifactor(F::Classic { dampening: 1.0 }),
                    PolicyArg::SlurmFairtree => Policy::Multifactor(F::FairTree),
                    PolicyArg::SlurmTickets => Policy::Multifactor(F::Tickets),
                    PolicyArg::FluxAccounting => Policy::Multifactor(F::Flux),
                    PolicyArg::Flux => Policy::Multifactor(F::FluxSpec),
                }
            }),
            out,
            report_at,
            explain,
            kill_at_limit,
            backfill,
            reserve,
            time_reserve,
            max_reserve_time,
            plan,
            swf_queues: match swf_queues {
                SwfQueuesArg::None => allot_sim::swf::QueueField::None,
                SwfQueuesArg::Queue => allot_sim::swf::QueueField::Queue,
                SwfQueuesArg::Partition => allot_sim::swf::QueueField::Partition,
            },
        }),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("allot: {e:#}");
            ExitCode::FAILURE
        }
    }
}
