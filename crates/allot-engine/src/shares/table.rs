//! Share tables: what `bhpart -r` and `bqueues -l` show for each level of a
//! share tree (spec 000 and 003, "SHARE_INFO_FOR").

use super::priority::PriorityInputs;
use super::tree::{NodeId, ShareTree};
use crate::time::Time;

/// One row: an account at one level.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareRow {
    pub name: String,
    pub shares: u32,
    pub priority: f64,
    pub started: u32,
    pub reserved: u32,
    /// CPU time, seconds, decayed.
    pub cpu_time: f64,
    /// Run time as displayed: actual plus historical, seconds.
    pub run_time: f64,
    /// The fairshare adjustment in the denominator.
    pub adjust: f64,
}

/// The rows of one level, with the level's path (`Partition1/group2/`).
#[derive(Clone, Debug, PartialEq)]
pub struct ShareTable {
    pub path: String,
    pub rows: Vec<ShareRow>,
}

impl ShareTree {
    /// Every level that divides shares among children, top first, then
    /// depth-first in the tree's order.
    pub fn share_tables(&self, t: Time, inputs: &PriorityInputs<'_>) -> Vec<ShareTable> {
        let mut out = Vec::new();
        self.collect_tables(NodeId::ROOT, format!("{}/", self.policy()), t, inputs, &mut out);
        out
    }

    fn collect_tables(
        &self,
        node: NodeId,
        path: String,
        t: Time,
        inputs: &PriorityInputs<'_>,
        out: &mut Vec<ShareTable>,
    ) {
        let children = self.children(node);
        if children.is_empty() {
            return;
        }
        let rows = children.iter().map(|&c| self.row(c, t, inputs)).collect();
        out.push(ShareTable { path: path.clone(), rows });
        for &c in children {
            if !self.children(c).is_empty() {
                self.collect_tables(c, format!("{path}{}/", self.name(c)), t, inputs, out);
            }
        }
    }

    fn row(&self, n: NodeId, t: Time, inputs: &PriorityInputs<'_>) -> ShareRow {
        let u = self.usage(n, t);
        let adjust = inputs.adjustment.adjustment(&u, &inputs.cluster);
        ShareRow {
            name: self.name(n).to_string(),
            shares: self.shares(n),
            priority: self.factors().dynamic_priority(self.shares(n), &u, adjust),
            started: u.started,
            reserved: u.reserved,
            cpu_time: u.cpu_time,
            run_time: u.displayed_run_time(),
            adjust,
        }
    }
}
