//! The cluster as allotd runs it: what `lsid`, `lsclusters`, `bparams`,
//! `badmin showconf mbd` and `badmin showstatus` show.

use serde::{Deserialize, Serialize};

/// How many of something are in each state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCounts {
    pub ok: u32,
    pub closed: u32,
    pub unreachable: u32,
    pub unavailable: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobCounts {
    pub running: u32,
    pub suspended: u32,
    pub pending: u32,
    /// Finished and still shown (for CLEAN_PERIOD).
    pub finished: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterInfo {
    pub name: String,
    /// allotd's host: LSF's master host.
    pub master: String,
    /// The user allotd runs as, then `[daemon] admins`.
    pub admins: Vec<String>,
    pub hosts: HostCounts,
    pub cpus: u64,
    pub slots: u64,
    pub jobs: JobCounts,
    /// Users with jobs shown, users with unfinished jobs, user groups.
    pub users: u32,
    pub active_users: u32,
    pub user_groups: u32,
    /// When allotd started and last read its configuration (seconds since
    /// the epoch), and its process id.
    pub started: u64,
    pub configured: u64,
    pub pid: u32,
    /// `lsb.params` in force, every parameter allot reads, by name.
    pub params: Vec<(String, String)>,
    /// Where things are, by LSF's names (`LSF_ENVDIR`, `LSB_SHAREDIR`...).
    pub dirs: Vec<(String, String)>,
    /// Host groups (`lsb.hosts`), each with its hosts, in name order.
    #[serde(default)]
    pub host_groups: Vec<(String, Vec<String>)>,
}
