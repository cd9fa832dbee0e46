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
    pub user: String,
    /// The group the workload names (SWF field 13); informational.
    pub group: Option<String>,
    /// The user group to charge through (`bsub -G`).
    pub charge_group: Option<String>,
    pub queue: Option<String>,
    pub slots: u32,
    /// Seconds it really runs.
    pub runtime: u64,
    /// Its run limit for scheduling (SWF: the requested time; `-W`).
    pub run_limit: Option<u64>,
    /// `-We`: its estimated run time, for scheduling only.
    pub run_estimate: Option<u64>,
    /// `bsub -x`.
    pub exclusive: bool,
    /// `bsub -app`.
    pub app: Option<String>,
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
    /// `bsub -sp`.
    pub priority: Option<u32>,
    /// `bsub -P`.
    pub project: Option<String>,
    /// `bsub -qos` and `-uf` (multifactor policies).
    pub qos: Option<String>,
    pub user_factor: Option<f64>,
}

/// A line that is not a job, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub line: u64,
    pub reason: String,
}

/// What a workload file's header says of the machine it ran on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Machine {
    pub max_procs: Option<u64>,
    /// `None` when missing or not a number (CTC's `338 (batch ...)`).
    pub max_nodes: Option<u64>,
}

/// A workload read from a file.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    pub jobs: Vec<WorkloadJob>,
    pub skipped: Vec<Skipped>,
    pub machine: Machine,
}

impl Workload {
    /// The users who submit its jobs, each once, in name order.
    pub fn users(&self) -> std::collections::BTreeSet<&str> {
        self.jobs.iter().map(|j| j.user.as_str()).collect()
    }
}
