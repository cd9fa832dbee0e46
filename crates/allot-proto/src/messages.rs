//! Requests and responses.

use serde::{Deserialize, Serialize};

/// A job submission, as `bsub` sends it: what the engine needs, and what
/// running the job needs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submit {
    pub queue: Option<String>,
    /// `-n min[,max]`.
    pub slots: u32,
    pub max_slots: Option<u32>,
    /// `-W`, seconds.
    pub run_limit: Option<u64>,
    /// `-G`.
    pub group: Option<String>,
    /// `-J`.
    pub name: Option<String>,
    /// The command line, or the job script.
    pub command: String,
    /// The working directory (`-cwd`, or where `bsub` ran).
    pub cwd: String,
    /// `-o`/`-oo` (overwrite) and `-e`/`-eo`.
    pub output: Option<(String, bool)>,
    pub error: Option<(String, bool)>,
    /// The submission environment, passed on to the job.
    pub env: Vec<(String, String)>,
    /// `-P`.
    #[serde(default)]
    pub project: Option<String>,
    /// `-We`, seconds: the run time the user expects.
    #[serde(default)]
    pub estimated_run_time: Option<u64>,
}

/// Which jobs `bjobs` asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobQuery {
    /// A user, or `all`; `None` is the caller.
    pub user: Option<String>,
    pub queue: Option<String>,
    /// Finished jobs too (`-a`).
    pub finished: bool,
    /// These jobs only.
    pub jobs: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    Submit(Submit),
    Jobs(JobQuery),
    /// `bkill`: jobs (0 is every job of the caller), signal name.
    Kill {
        jobs: Vec<u64>,
        signal: Option<String>,
    },
    Queues,
    Hosts,
    /// `badmin reconfig`.
    Reconfig,
    /// `badmin qclose` (`open: false`) and `qopen`.
    QueueControl {
        queue: String,
        open: bool,
    },
    /// `badmin hclose` (`open: false`) and `hopen`.
    HostControl {
        host: String,
        open: bool,
    },
    Shutdown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobStatus {
    Pend,
    Run,
    Done,
    Exit,
}

impl JobStatus {
    /// As `bjobs` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pend => "PEND",
            JobStatus::Run => "RUN",
            JobStatus::Done => "DONE",
            JobStatus::Exit => "EXIT",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobInfo {
    pub id: u64,
    pub user: String,
    pub status: JobStatus,
    pub queue: String,
    pub from_host: String,
    /// `hostA*2 hostB` style: hosts with their slots.
    pub exec_hosts: Vec<(String, u32)>,
    pub name: String,
    /// Seconds since the epoch.
    pub submit_time: u64,
    pub start_time: Option<u64>,
    pub end_time: Option<u64>,
    pub exit_code: Option<i32>,
    pub pending_reason: Option<String>,
    pub slots: u32,
    pub command: String,
    /// Where the job runs.
    pub cwd: String,
    pub project: Option<String>,
    /// CPU seconds, once the job ended.
    pub cpu_time: Option<f64>,
    /// `-W`, seconds.
    pub run_limit: Option<u64>,
    /// `-We`, seconds.
    pub estimated_run_time: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueInfo {
    pub name: String,
    pub priority: i32,
    pub status: String,
    pub max: Option<u32>,
    pub jl_u: Option<u32>,
    pub jl_p: Option<f64>,
    pub jl_h: Option<u32>,
    pub njobs: u32,
    pub pend: u32,
    pub run: u32,
    pub susp: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub name: String,
    pub status: String,
    pub max: u32,
    pub njobs: u32,
    pub run: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Response {
    Submitted {
        job: u64,
        queue: String,
    },
    Jobs(Vec<JobInfo>),
    /// Per job: `Ok(())` or why not.
    Killed(Vec<(u64, Result<(), String>)>),
    Queues(Vec<QueueInfo>),
    Hosts(Vec<HostInfo>),
    /// The new configuration is running; its warnings, one per line.
    Reconfigured {
        warnings: String,
    },
    Done,
    /// The request was refused; the message says why, and nothing changed.
    Error(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Envelope;

    #[test]
    fn messages_round_trip_as_json() {
        let req = Envelope {
            version: 1,
            body: Request::Submit(Submit {
                slots: 4,
                command: "sleep 1".into(),
                cwd: "/tmp".into(),
                ..Submit::default()
            }),
        };
        let text = serde_json::to_string(&req).expect("json");
        let back: Envelope<Request> = serde_json::from_str(&text).expect("parse");
        assert_eq!(back, req);
        let resp = Response::Killed(vec![(3, Ok(())), (4, Err("Job <4>: Not owner".into()))]);
        let back: Response = serde_json::from_str(&serde_json::to_string(&resp).expect("json")).expect("parse");
        assert_eq!(back, resp);
    }

    #[test]
    fn unknown_requests_are_errors_not_panics() {
        assert!(serde_json::from_str::<Envelope<Request>>(r#"{"version":1,"body":{"Explode":{}}}"#).is_err());
        assert!(serde_json::from_str::<Envelope<Request>>(r#"{"version":1}"#).is_err());
    }
}
