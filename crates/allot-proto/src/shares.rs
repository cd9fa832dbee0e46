//! The fairshare views on the wire: LSF's share tables (`bqueues -l`,
//! `bhpart`, `allot shares --live`) and a multifactor cluster's
//! associations and job priorities (`allot sshare --live`, `allot sprio
//! --live`).

use serde::{Deserialize, Serialize};

/// A multifactor cluster's associations as the daemon holds them: the
/// command computes the policy's fair-share from these with the engine's
/// own code, as it does from a configuration and a usage file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveAssociations {
    /// `slurm-classic`, `slurm-fairtree`, `slurm-tickets` or `flux-accounting`.
    pub policy: String,
    /// slurm-classic's dampening factor.
    pub dampening: f64,
    /// Parents before children; the first is `root`.
    pub assocs: Vec<WireAssoc>,
    /// Per association: billed usage now (decayed, running jobs' so far)
    /// and pending jobs.
    pub usage: Vec<f64>,
    pub pending: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WireAssoc {
    pub account: String,
    /// `None` on an account.
    pub user: Option<String>,
    /// Index of the parent in the list; `None` for `root`.
    pub parent: Option<u32>,
    /// Raw shares; `None` for `Fairshare=parent`.
    pub shares: Option<u32>,
}

/// The pending jobs' multifactor priorities at the last pass, and the
/// weights they were computed with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LivePriorities {
    /// wait time, fair share, QoS, queue, job size, user.
    pub weights: [f64; 6],
    pub jobs: Vec<JobPriority>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobPriority {
    pub id: u64,
    pub user: String,
    pub account: String,
    pub priority: f64,
    /// Each factor in [0, 1], in the order of [`LivePriorities::weights`].
    pub factors: [f64; 6],
}

/// One fairshare policy and its share tables (`SHARE_INFO_FOR`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyShares {
    pub name: String,
    /// A host partition's hosts; `None` for a queue policy.
    pub partition_hosts: Option<Vec<String>>,
    /// The queues of a queue policy (more than one: cross-queue).
    pub queues: Vec<String>,
    /// The top-level assignment, `[user1, 100] [default, 1]`.
    pub user_shares: String,
    /// Whether the ADJUST column is shown (FAIRSHARE_ADJUSTMENT_FACTOR).
    pub show_adjust: bool,
    pub tables: Vec<ShareTableInfo>,
}

/// The rows of one level of a share tree, with its path (`normal/`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShareTableInfo {
    pub path: String,
    pub rows: Vec<ShareRowInfo>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShareRowInfo {
    pub name: String,
    pub shares: u32,
    pub priority: f64,
    pub started: u32,
    pub reserved: u32,
    pub cpu_time: f64,
    pub run_time: f64,
    pub adjust: f64,
}
