//! What `lshosts` and `lsload` show of each host: as configured, and as
//! its agent reports it (with agents), or as allotd sees its own machine.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    pub name: String,
    /// `ok`, `unreach` or `unavail` (as `lsload` shows a host's state).
    pub status: String,
    pub host_type: Option<String>,
    pub model: Option<String>,
    pub ncpus: u32,
    /// MB.
    pub maxmem: Option<u64>,
    pub maxswp: Option<u64>,
    /// The host's boolean and string resources, as `lshosts` lists them.
    #[serde(default)]
    pub resources: Vec<String>,
    /// Its load now, when it is known.
    pub load: Option<Load>,
}

/// A host's load indices: run-queue lengths (1 and 15 minutes), CPU
/// utilization (0 to 1, when measured), processes that run, free memory
/// and swap (MB).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Load {
    pub r1m: f64,
    pub r15m: f64,
    pub ut: Option<f64>,
    pub procs: u32,
    pub mem: u64,
    pub swp: u64,
}
