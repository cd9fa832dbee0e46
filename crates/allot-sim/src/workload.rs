//! A workload: jobs to replay, whatever file they came from.

/// One job of a workload.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadJob {
    /// The job's number in the workload: the SWF job number, or the line
    /// number of a JSON-lines file.
    pub id: u64,
    /// Line of the file it came from, for messages.
    pub line: u64,
    /// Seconds from the workload's start.
    pub submit: u64,
    /// What it asks of the scheduler, as allotd takes a `bsub`'s: its user,
    /// queue, slots, requirements, run limit (SWF: the requested time),
    /// `-w`, `-J`... (a JSON-lines workload's `bsub` options, typed once by
    /// `allot_config::submission::from_bsub`). Boxed: a submission is
    /// 432 bytes, nearly all of them options a trace's job does not use,
    /// and a workload's jobs are moved as its reader builds them.
    pub submission: Box<allot_config::submission::Submission>,
    /// The group the workload names (SWF field 13); informational.
    pub group: Option<String>,
    /// Seconds it really runs.
    pub runtime: u64,
    /// CPU seconds it uses in all.
    pub cpu_time: f64,
    /// What it reports while it runs, for a multifactor policy's billing
    /// (and LSF's memory-based fairshare adjustment): the memory it uses,
    /// MB over all its processors, and the GPUs it holds.
    pub memory_mb: Option<f64>,
    pub gpus: u32,
    /// Energy it used, joules, reported at its end.
    pub energy: f64,
    /// Exit code when it ends by itself.
    pub exit: i32,
}

/// A user's command on a job of the workload at a time, as allotd takes
/// it from `bswitch` and `bresize` (JSON lines only).
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    /// Line of the file it came from: its place among actions at one time.
    pub line: u64,
    /// Seconds from the workload's start.
    pub at: u64,
    /// The workload job it names (its number), and the element of an
    /// array (0: the job, or every element of an array).
    pub job: u64,
    pub index: u32,
    pub what: ActionKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// `bswitch queue`: a pending or running job to another queue.
    Switch(String),
    /// `bresize release [-c] "1*hostA hostB"`: a running resizable job
    /// gives up slots (`None`: all of its slots on that host); `cancel`:
    /// its pending resize request first.
    Release { hosts: Vec<(String, Option<u32>)>, cancel: bool },
    /// `bresize cancel`: its pending resize request goes.
    ResizeCancel,
}

/// A line that is not a job, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub line: u64,
    pub reason: String,
}

/// The most seconds a workload's time may be (a submission time, a run
/// time, a limit): about 317 years. Beyond it a trace is damaged or
/// hostile, and the simulated clock (and every report over it) would run
/// for ever.
pub const MAX_SECONDS: u64 = 10_000_000_000;

/// The most a workload's measure may be (CPU seconds, MB, joules).
pub const MAX_MEASURE: f64 = 1e15;

/// The most hosts, and processors, a machine of a trace's header may ask
/// for: beyond, give a configuration (`--config`).
pub const MAX_HOSTS: u64 = 1_000_000;
pub const MAX_PROCS: u64 = 1_000_000_000;

impl WorkloadJob {
    /// Why the job is beyond what a simulation takes, if it is: a time
    /// past [`MAX_SECONDS`], or a measure that is not a number or past
    /// [`MAX_MEASURE`]. Both readers skip such a job with this reason.
    pub fn out_of_range(&self) -> Option<String> {
        let times = [
            ("submit time", Some(self.submit)),
            ("run time", Some(self.runtime)),
            ("run limit", self.submission.run_limit),
        ];
        for (what, t) in times {
            if let Some(t) = t.filter(|&t| t > MAX_SECONDS) {
                return Some(format!("{what} {t} s is more than {MAX_SECONDS} s (317 years)"));
            }
        }
        if let Some(t) = self.submission.estimated_run_time.filter(|&t| t > MAX_SECONDS) {
            return Some(format!("estimated run time {t} s is more than {MAX_SECONDS} s (317 years)"));
        }
        let measures =
            [("CPU time", self.cpu_time), ("memory", self.memory_mb.unwrap_or(0.0)), ("energy", self.energy)];
        measures.into_iter().find_map(|(what, v)| {
            (!v.is_finite() || v.abs() > MAX_MEASURE)
                .then(|| format!("{what} {v:e} is out of range (at most {MAX_MEASURE:e})"))
        })
    }
}

/// What a workload file's header says of the machine it ran on, with the
/// lines that said it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Machine {
    pub max_procs: Option<u64>,
    /// `None` when missing or not a number (CTC's `338 (batch ...)`).
    pub max_nodes: Option<u64>,
    pub procs_line: u64,
    pub nodes_line: u64,
}

impl Machine {
    /// Whether the machine the header describes can be simulated: at most
    /// [`MAX_PROCS`] processors on at most [`MAX_HOSTS`] hosts (MaxProcs
    /// one-slot hosts without MaxNodes). The error has the header line.
    pub fn check(&self) -> Result<(), (u64, String)> {
        if let Some(p) = self.max_procs.filter(|&p| p > MAX_PROCS) {
            return Err((
                self.procs_line,
                format!("MaxProcs: {p} is more than the {MAX_PROCS} processors allot simulates"),
            ));
        }
        match (self.max_procs.filter(|&p| p > 0), self.max_nodes.filter(|&n| n > 0)) {
            (_, Some(n)) if n > MAX_HOSTS => {
                Err((self.nodes_line, format!("MaxNodes: {n} is more than the {MAX_HOSTS} hosts allot simulates")))
            }
            (Some(p), None) if p > MAX_HOSTS => Err((
                self.procs_line,
                format!(
                    "MaxProcs: {p} without MaxNodes would be {p} one-slot hosts, more than the {MAX_HOSTS} allot \
                     simulates: give MaxNodes, or a configuration (--config)"
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// A workload read from a file.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    pub jobs: Vec<WorkloadJob>,
    /// Users' commands on its jobs, in time order (then line order).
    pub actions: Vec<Action>,
    pub skipped: Vec<Skipped>,
    pub machine: Machine,
}

impl Workload {
    /// The users who submit its jobs, each once, in name order.
    pub fn users(&self) -> std::collections::BTreeSet<&str> {
        self.jobs.iter().map(|j| j.submission.user.as_str()).collect()
    }

    /// The jobs (their numbers) a `bswitch` names: what the simulator
    /// keeps of them as submitted, and the log of a run keeps of their
    /// records, for the spec each switch gives.
    pub fn switched_jobs(&self) -> std::collections::BTreeSet<u64> {
        self.actions.iter().filter(|a| matches!(a.what, ActionKind::Switch(_))).map(|a| a.job).collect()
    }
}
