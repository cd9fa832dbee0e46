//! What a user submitted, as typed: the scheduling options of one
//! `bsub`, one value from the command line (or a workload's line) to the
//! engine's job (`allot_config::submission::resolve`).

/// What a user submitted, as typed (already split into options): built
/// once from the parser's options (`allot_config::submission::from_bsub`),
/// sent by `bsub` in [`crate::Submit`], and read by allotd.
///
/// allotd records it in its event log with the job it became, so that a
/// replay (`allot sim --from`) can submit it again, as typed, under
/// another configuration. Fields left at their defaults are not written.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Submission {
    pub user: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// `-n min[,max]`: 0 when `-n` is not given (the queue's PROCLIMIT
    /// default applies).
    pub slots: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_slots: Option<u32>,
    /// `-R`, each occurrence as written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub res_req: Vec<String>,
    /// `-m`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<String>,
    /// `-W` and `-We`, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_limit: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_run_time: Option<u64>,
    /// `-G`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// `-J`, as written (`name[1-10]%2` for an array).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `-w`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depends: Option<String>,
    /// `-sp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// `-t`, resolved to seconds since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_time: Option<u64>,
    /// `-c`, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_limit: Option<u64>,
    /// `-x`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exclusive: bool,
    /// `-app`, `-qos`, `-uf`, `-P`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qos: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_factor: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// `-g`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_group: Option<String>,
    /// `-ar`: autoresizable; `-rnc`: its resize notification command.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub auto_resize: bool,
    /// `-H`: held at submission.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hold: bool,
    /// `-b`, resolved to seconds since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub begin_time: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resize_notify: Option<String>,
    /// LSB_DEFAULTQUEUE of the submitter's environment, split at blanks:
    /// with no `-q`, the candidates of automatic queue selection in place
    /// of DEFAULT_QUEUE (LSF: "the queues listed in the DEFAULT_QUEUE
    /// parameter in lsb.params or the LSB_DEFAULTQUEUE environment
    /// variable"; the variable, when set, is the user's choice).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub default_queues: Vec<String>,
}
