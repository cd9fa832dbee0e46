//! Job groups on the wire: `bgadd`, `bgmod`, `bgdel` and `bjgroup`
//! (`allot_engine::job_groups` says what a group is).

use serde::{Deserialize, Serialize};

/// What a job group command asks of allotd.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobGroupRequest {
    /// `bgadd [-L limit] group`.
    Add { group: String, limit: Option<u32> },
    /// `bgmod [-L limit | -Ln] [-u owner] group`: `limit` `Some(None)` is
    /// `-Ln`.
    Modify { group: String, limit: Option<Option<u32>>, owner: Option<String> },
    /// `bgdel`.
    Delete(GroupDeletion),
    /// `bjgroup`.
    List,
}

/// Which groups `bgdel` deletes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GroupDeletion {
    /// `bgdel group`: the group and its subgroups, which must hold no
    /// unfinished job.
    Group(String),
    /// `bgdel -c group`: every empty group under it, and it if empty.
    EmptyUnder(String),
    /// `bgdel 0`: the caller's empty groups.
    EmptyMine,
    /// `bgdel -u user` (administrators): a user's empty groups; `-u all`
    /// (`None`) everyone's.
    EmptyOf(Option<String>),
}

/// One job group as `bjgroup` shows it: its jobs (and their slots) by
/// state, counted over it and its subgroups.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobGroupInfo {
    pub path: String,
    pub owner: String,
    pub limit: Option<u32>,
    /// Jobs started under it (RUN, SSUSP, USUSP), which its limit caps.
    pub started: u32,
    /// Jobs, then slots: pending (PEND, PSUSP), running, suspended by the
    /// system, suspended by a user, finished.
    pub jobs: GroupCounts,
    pub slots: GroupCounts,
}

/// Counts by state (see [`JobGroupInfo`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupCounts {
    pub pend: u64,
    pub run: u64,
    pub ssusp: u64,
    pub ususp: u64,
    pub finish: u64,
}

impl GroupCounts {
    pub fn total(&self) -> u64 {
        self.pend + self.run + self.ssusp + self.ususp + self.finish
    }
}
