//! A share tree: one per fairshare policy (spec 000, "Hierarchical
//! User-based Fairshare").
//!
//! The root holds the policy's top-level assignment (a queue's FAIRSHARE or
//! a host partition's USER_SHARES). A collective group with a share tree of
//! its own in `lsb.users` becomes an inner node whose children come from
//! that share tree, recursively. Leaves are:
//! - a user (named, or through `default`, or through `group@`);
//! - a collective group without a share tree, whose members compete FCFS;
//! - `others`, whose members compete FCFS.
//!
//! Users are placed lazily: a user first seen when they submit gets their
//! `default` leaves then. `group@` stops the hierarchy: its members get
//! leaves right there, whatever share trees their groups have.

use std::collections::BTreeMap;

use super::assign::{GroupTable, Member, ShareAssignment, ShareTarget};
use super::priority::{LsfFactors, PriorityInputs};
use super::usage::{JobCharge, NodeUsage, Usage};
use crate::time::Time;

/// A node of one share tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct NodeId(pub u32);

impl NodeId {
    pub const ROOT: NodeId = NodeId(0);

    fn idx(self) -> usize {
        self.0 as usize
    }
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum NodeKind {
    Root,
    /// A user's own share account.
    User(String),
    /// A group collectively; `subtree` when its own share tree divides it.
    Group {
        name: String,
        subtree: bool,
    },
    /// The users not otherwise named at this level, collectively.
    Others,
}

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ShareError {
    #[error("user `{user}` has no share assignment in `{policy}`")]
    NoShares { user: String, policy: String },
    #[error("-G {group}: user group `{group}` does not exist")]
    UnknownGroup { group: String },
    #[error("-G {group}: user `{user}` is not a member of group `{group}`")]
    NotMember { user: String, group: String },
    #[error("-G {group}: group `{group}` has subgroups; name a group without subgroups")]
    GroupHasSubgroups { group: String },
    #[error("-G {group}: user `{user}` has no share through group `{group}` in `{policy}`")]
    NotThroughGroup { user: String, group: String, policy: String },
}

/// Where the users of a level come from.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
enum Scope {
    Everyone,
    MembersOf(String),
}

/// The share assignment that divides an inner node among its children.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Level {
    assignments: Vec<ShareAssignment>,
    scope: Scope,
    /// The child made for assignment `i` when it names one account
    /// (a user, a collective group, `others`); `None` for `default`/`group@`.
    fixed: Vec<Option<NodeId>>,
    /// Per-user leaves made through `default` or `group@`, by (assignment, user).
    #[serde(with = "crate::snapshot::pairs")]
    per_user: BTreeMap<(usize, String), NodeId>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Node {
    kind: NodeKind,
    parent: Option<NodeId>,
    children: Vec<NodeId>,
    shares: u32,
    /// The group this account is reached through, for `bsub -G`: the group
    /// itself for a collective group, the group of a `group@` assignment.
    via_group: Option<String>,
    level: Option<Level>,
    /// Users placed here collectively (FCFS members of a group or `others`).
    members: Vec<String>,
    usage: NodeUsage,
}

/// One fairshare policy's share tree with its usage.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ShareTree {
    policy: String,
    nodes: Vec<Node>,
    groups: GroupTable,
    factors: LsfFactors,
    lambda: f64,
    /// Whether run time counts times the job's CPUs (parallel fairshare).
    counts_cpus: bool,
    leaves_of: BTreeMap<String, Vec<NodeId>>,
    /// The top-level assignment the tree was built from.
    top: Vec<ShareAssignment>,
}

impl ShareTree {
    /// Builds the tree of `policy` from its top-level assignment, and places
    /// every user in `users` (users known ahead; others are placed when they
    /// first appear). A `User` target that names a group is taken as the
    /// group, collectively.
    pub fn new(
        policy: impl Into<String>,
        top: &[ShareAssignment],
        groups: GroupTable,
        factors: LsfFactors,
        users: impl IntoIterator<Item = String>,
    ) -> Self {
        let root = Node {
            kind: NodeKind::Root,
            parent: None,
            children: Vec::new(),
            shares: 0,
            via_group: None,
            level: None,
            members: Vec::new(),
            usage: NodeUsage::default(),
        };
        let lambda = factors.decay_lambda();
        let mut tree = ShareTree {
            policy: policy.into(),
            nodes: vec![root],
            groups,
            factors,
            lambda,
            counts_cpus: false,
            leaves_of: BTreeMap::new(),
            top: top.to_vec(),
        };
        tree.build_level(NodeId::ROOT, top, Scope::Everyone);
        // group@ members named in the configuration get their leaves now, so
        // that the tree shows them before they submit.
        let named: Vec<String> = tree.groups.all_named_users();
        for user in named.into_iter().chain(users) {
            tree.place(&user);
        }
        tree
    }

    /// Run time counts times the job's CPUs: LSB_NCPU_ENFORCE=1 for queues,
    /// always for host partitions (spec 004, "Parallel Fairshare").
    pub fn with_parallel_fairshare(mut self, on: bool) -> Self {
        self.counts_cpus = on;
        self
    }

    fn build_level(&mut self, at: NodeId, assignments: &[ShareAssignment], scope: Scope) {
        let mut fixed = Vec::with_capacity(assignments.len());
        for a in assignments {
            let child = match &a.target {
                ShareTarget::User(g) | ShareTarget::Group(g) if self.groups.is_group(g) => {
                    Some(self.add_group(at, g, a.shares))
                }
                ShareTarget::User(u) => Some(self.add_node(at, NodeKind::User(u.clone()), a.shares, None)),
                ShareTarget::Group(g) => Some(self.add_group(at, g, a.shares)),
                ShareTarget::Others => Some(self.add_node(at, NodeKind::Others, a.shares, None)),
                ShareTarget::GroupEach(_) | ShareTarget::Default => None,
            };
            fixed.push(child);
        }
        self.nodes[at.idx()].level =
            Some(Level { assignments: assignments.to_vec(), scope, fixed, per_user: BTreeMap::new() });
    }

    fn add_node(&mut self, parent: NodeId, kind: NodeKind, shares: u32, via_group: Option<String>) -> NodeId {
        let id = NodeId(u32::try_from(self.nodes.len()).expect("fewer than 2^32 share accounts"));
        self.nodes.push(Node {
            kind,
            parent: Some(parent),
            children: Vec::new(),
            shares,
            via_group,
            level: None,
            members: Vec::new(),
            usage: NodeUsage::default(),
        });
        self.nodes[parent.idx()].children.push(id);
        id
    }

    /// The user's share accounts (leaves), placing the user first if new.
    /// Empty when the user has no share assignment in this policy.
    pub fn place(&mut self, user: &str) -> Vec<NodeId> {
        if let Some(leaves) = self.leaves_of.get(user) {
            return leaves.clone();
        }
        let mut leaves = Vec::new();
        self.place_at(NodeId::ROOT, user, &mut leaves);
        leaves.dedup();
        self.leaves_of.insert(user.to_string(), leaves.clone());
        leaves
    }

    fn place_at(&mut self, at: NodeId, user: &str, out: &mut Vec<NodeId>) {
        let Some(level) = &self.nodes[at.idx()].level else {
            return;
        };
        // The unit `default` and `others` count at this level: the user at
        // the top; in a group's share tree, the direct member of the group
        // that the user belongs through (the user, or a subgroup).
        let unit = match &level.scope {
            Scope::Everyone => Unit::User(user.to_string()),
            Scope::MembersOf(g) => match self.unit_in(g, user) {
                Some(unit) => unit,
                None => return,
            },
        };
        let mut named = false;
        let mut steps: Vec<Step> = Vec::new();
        let mut fallback = None;
        for (i, a) in level.assignments.iter().enumerate() {
            match &a.target {
                ShareTarget::User(u) if !self.groups.is_group(u) => {
                    if u == user {
                        named = true;
                        steps.extend(level.fixed[i].map(Step::Fixed));
                    }
                }
                ShareTarget::User(g) | ShareTarget::Group(g) => {
                    if self.groups.contains(g, user) {
                        named = true;
                        steps.extend(level.fixed[i].map(Step::Fixed));
                    }
                }
                ShareTarget::GroupEach(g) => {
                    if self.groups.contains(g, user) {
                        named = true;
                        steps.push(Step::PerUnit(i, a.shares, Some(g.clone()), Unit::User(user.to_string())));
                    }
                }
                ShareTarget::Default => fallback = fallback.or(Some(Step::PerUnit(i, a.shares, None, unit.clone()))),
                ShareTarget::Others => fallback = fallback.or(level.fixed[i].map(Step::Fixed)),
            }
        }
        if !named {
            steps.extend(fallback);
        }
        for step in steps {
            let node = match step {
                Step::Fixed(n) => n,
                Step::PerUnit(i, shares, via, unit) => self.per_unit_node(at, i, shares, via, unit),
            };
            self.enter(node, user, out);
        }
    }

    /// Places `user` in or below `node`: recursing into a share tree,
    /// joining a collective leaf's members, or taking a user leaf.
    fn enter(&mut self, node: NodeId, user: &str, out: &mut Vec<NodeId>) {
        if self.nodes[node.idx()].level.is_some() {
            self.place_at(node, user, out);
            return;
        }
        if !matches!(self.nodes[node.idx()].kind, NodeKind::User(_)) {
            self.nodes[node.idx()].members.push(user.to_string());
        }
        out.push(node);
    }

    /// The direct member of `group` through which `user` belongs to it:
    /// the user, when the group lists them (or lists `all`), otherwise the
    /// first subgroup, in the group's order, that contains them.
    fn unit_in(&self, group: &str, user: &str) -> Option<Unit> {
        let g = self.groups.get(group)?;
        if self.groups.is_direct_member(group, user) || g.members.contains(&Member::All) {
            return Some(Unit::User(user.to_string()));
        }
        self.groups.subgroups(group).find(|sub| self.groups.contains(sub, user)).map(|sub| Unit::Group(sub.to_string()))
    }

    /// The node a `default` or `group@` assignment makes for one unit: a
    /// user leaf, or a subgroup (with its own share tree, if it has one).
    fn per_unit_node(&mut self, at: NodeId, i: usize, shares: u32, via: Option<String>, unit: Unit) -> NodeId {
        let key = (i, unit.name().to_string());
        if let Some(&n) = self.nodes[at.idx()].level.as_ref().and_then(|l| l.per_user.get(&key)) {
            return n;
        }
        let n = match unit {
            Unit::User(u) => self.add_node(at, NodeKind::User(u), shares, via),
            Unit::Group(g) => self.add_group(at, &g, shares),
        };
        if let Some(level) = self.nodes[at.idx()].level.as_mut() {
            level.per_user.insert(key, n);
        }
        n
    }

    /// Adds a collective group below `at`, with its own share tree unless
    /// it has none or is already on the path (a cycle, which validation
    /// reports).
    fn add_group(&mut self, at: NodeId, group: &str, shares: u32) -> NodeId {
        let tree = self.groups.get(group).map(|g| g.shares.clone()).unwrap_or_default();
        let on_path = std::iter::successors(Some(at), |n| self.nodes[n.idx()].parent)
            .any(|n| matches!(&self.nodes[n.idx()].kind, NodeKind::Group { name, .. } if name == group));
        let subtree = !tree.is_empty() && !on_path;
        let kind = NodeKind::Group { name: group.to_string(), subtree };
        let node = self.add_node(at, kind, shares, Some(group.to_string()));
        if subtree {
            self.build_level(node, &tree, Scope::MembersOf(group.to_string()));
        }
        node
    }

    /// Users placed in the tree so far, in name order.
    pub fn placed_users(&self) -> impl Iterator<Item = &str> {
        self.leaves_of.keys().map(String::as_str)
    }

    /// The names from the top of the tree down to `n`.
    pub fn path_names(&self, n: NodeId) -> Vec<String> {
        let mut names: Vec<String> = self.path(n).map(|p| self.name(p).to_string()).collect();
        names.reverse();
        names
    }

    /// The node reached by following `names` from the top.
    pub fn find_path(&self, names: &[String]) -> Option<NodeId> {
        names.iter().try_fold(NodeId::ROOT, |n, name| self.child(n, name))
    }

    /// The accounts of a user already placed (empty if not placed or
    /// without shares).
    pub fn leaves(&self, user: &str) -> &[NodeId] {
        self.leaves_of.get(user).map_or(&[], Vec::as_slice)
    }

    /// The accounts a job of `user` may be charged to, restricted to those
    /// reached through `via_group` when the job names one (`bsub -G`).
    pub fn resolve(&mut self, user: &str, via_group: Option<&str>) -> Result<Vec<NodeId>, ShareError> {
        let leaves = self.place(user);
        if leaves.is_empty() {
            return Err(ShareError::NoShares { user: user.to_string(), policy: self.policy.clone() });
        }
        let Some(group) = via_group else { return Ok(leaves) };
        if !self.groups.is_group(group) {
            return Err(ShareError::UnknownGroup { group: group.to_string() });
        }
        if !self.groups.contains(group, user) {
            return Err(ShareError::NotMember { user: user.to_string(), group: group.to_string() });
        }
        if self.groups.has_subgroups(group) {
            return Err(ShareError::GroupHasSubgroups { group: group.to_string() });
        }
        let through: Vec<NodeId> = leaves
            .into_iter()
            .filter(|&leaf| self.path(leaf).any(|n| self.nodes[n.idx()].via_group.as_deref() == Some(group)))
            .collect();
        if through.is_empty() {
            return Err(ShareError::NotThroughGroup {
                user: user.to_string(),
                group: group.to_string(),
                policy: self.policy.clone(),
            });
        }
        Ok(through)
    }

    /// The node and its ancestors up to, not including, the root.
    pub fn path(&self, node: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(Some(node), |n| self.nodes[n.idx()].parent).filter(|n| *n != NodeId::ROOT)
    }

    /// The top-level share assignment, as configured (`USER_SHARES`).
    pub fn top_assignment(&self) -> &[ShareAssignment] {
        &self.top
    }
    pub fn policy(&self) -> &str {
        &self.policy
    }
    pub fn factors(&self) -> &LsfFactors {
        &self.factors
    }
    pub fn groups(&self) -> &GroupTable {
        &self.groups
    }
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.nodes.len() <= 1
    }
    pub fn kind(&self, n: NodeId) -> &NodeKind {
        &self.nodes[n.idx()].kind
    }
    pub fn shares(&self, n: NodeId) -> u32 {
        self.nodes[n.idx()].shares
    }
    pub fn parent(&self, n: NodeId) -> Option<NodeId> {
        self.nodes[n.idx()].parent
    }
    pub fn children(&self, n: NodeId) -> &[NodeId] {
        &self.nodes[n.idx()].children
    }
    /// The users who compete FCFS in a collective leaf.
    pub fn members(&self, n: NodeId) -> &[String] {
        &self.nodes[n.idx()].members
    }

    /// The account's name as share tables show it.
    pub fn name(&self, n: NodeId) -> &str {
        match &self.nodes[n.idx()].kind {
            NodeKind::Root => "",
            NodeKind::User(u) => u,
            NodeKind::Group { name, .. } => name,
            NodeKind::Others => "others",
        }
    }

    /// The first child named `name` of `parent`.
    pub fn child(&self, parent: NodeId, name: &str) -> Option<NodeId> {
        self.children(parent).iter().copied().find(|&c| self.name(c) == name)
    }

    /// A node's fraction of the whole: its shares over its siblings' total,
    /// multiplied down the path (spec 000: User1 gets .50 x .80 x .25).
    pub fn entitlement(&self, n: NodeId) -> f64 {
        self.path(n)
            .map(|node| {
                let parent = self.nodes[node.idx()].parent.unwrap_or(NodeId::ROOT);
                let total: u64 = self.children(parent).iter().map(|&c| u64::from(self.shares(c))).sum();
                if total == 0 { 0.0 } else { f64::from(self.shares(node)) / total as f64 }
            })
            .product()
    }

    /// Run-time weight of a job with `ncpus` CPUs in this policy.
    pub fn run_weight(&self, ncpus: u32) -> u32 {
        if self.counts_cpus { ncpus.max(1) } else { 1 }
    }

    pub fn usage(&self, n: NodeId, t: Time) -> Usage {
        self.nodes[n.idx()].usage.at(t, self.lambda)
    }

    /// LSF dynamic priority of an account at `t`.
    pub fn priority(&self, n: NodeId, t: Time, inputs: &PriorityInputs<'_>) -> f64 {
        let usage = self.usage(n, t);
        let adjustment = inputs.adjustment.adjustment(&usage, &inputs.cluster);
        self.factors.dynamic_priority(self.shares(n), &usage, adjustment)
    }

    /// Applies `f` to the usage of `leaf` and of each of its ancestors,
    /// root included: where a charge goes.
    fn for_path(&mut self, leaf: NodeId, mut f: impl FnMut(&mut NodeUsage, f64)) {
        let lambda = self.lambda;
        let mut node = Some(leaf);
        while let Some(n) = node {
            let entry = &mut self.nodes[n.idx()];
            f(&mut entry.usage, lambda);
            node = entry.parent;
        }
    }

    /// A job charged to `leaf` starts.
    pub fn start_job(&mut self, leaf: NodeId, job: &JobCharge) {
        self.for_path(leaf, |u, _| u.start(job));
    }

    /// A job charged to `leaf` ends at `t`.
    pub fn finish_job(&mut self, leaf: NodeId, job: &JobCharge, t: Time) {
        let keep = self.factors.enable_hist_run_time;
        self.for_path(leaf, |u, lambda| u.finish(job, t, lambda, keep));
    }

    /// A job charged to `leaf` leaves this tree with its run time (it
    /// changed queue): its slots and run time stop counting here, and
    /// none of its run joins this tree's history.
    pub fn drop_job(&mut self, leaf: NodeId, job: &JobCharge) {
        self.for_path(leaf, |u, lambda| u.finish(job, Time(0), lambda, false));
    }

    /// A job charged to `leaf` is resized at `t` to `slots` slots (see
    /// `NodeUsage::resize`); returns its charge from now on.
    pub fn resize_job(&mut self, leaf: NodeId, job: &JobCharge, slots: u32, t: Time) -> JobCharge {
        let weight = self.run_weight(slots);
        let mut charge = *job;
        self.for_path(leaf, |u, _| charge = u.resize(job, slots, weight, t));
        charge
    }

    /// CPU time used by a job charged to `leaf`, reported at `t`.
    pub fn add_cpu(&mut self, leaf: NodeId, t: Time, seconds: f64) {
        self.for_path(leaf, |u, lambda| u.add_cpu(t, lambda, seconds));
    }

    /// The memory of a running job charged to `leaf` changed by `delta` MB.
    pub fn add_memory(&mut self, leaf: NodeId, delta: f64) {
        self.for_path(leaf, |u, _| u.add_memory(delta));
    }

    /// Slots reserved (positive) or released (negative) for `leaf`.
    pub fn add_reserved(&mut self, leaf: NodeId, slots: i64) {
        self.for_path(leaf, |u, _| u.add_reserved(slots));
    }

    /// Charges an imported usage snapshot, valid at `t`, to `leaf`.
    pub fn add_usage(&mut self, leaf: NodeId, usage: &Usage, t: Time) {
        self.for_path(leaf, |u, lambda| u.add_snapshot(usage, t, lambda));
    }
}

enum Step {
    /// The node made for the assignment itself.
    Fixed(NodeId),
    /// A node per unit (`default`, `group@`), made on first use.
    PerUnit(usize, u32, Option<String>, Unit),
}

#[derive(Clone, Debug)]
enum Unit {
    User(String),
    Group(String),
}

impl Unit {
    fn name(&self) -> &str {
        match self {
            Unit::User(n) | Unit::Group(n) => n,
        }
    }
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;
