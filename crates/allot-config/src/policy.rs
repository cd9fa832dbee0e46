//! The fairshare policies of a configuration: each fairshare queue or
//! cross-queue set, and each host partition, with its share tree.

use allot_engine::shares::priority::{Adjustment, ClusterMemory};
use allot_engine::shares::{
    FairshareSet, MemoryAdjustment, PolicyState, Scope, ShareAssignment, ShareTarget, ShareTree,
};
use std::collections::BTreeSet;

use crate::model::Config;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyKind {
    /// Queue-level fairshare: one queue, or a cross-queue set (master first).
    Queue { queues: Vec<String> },
    /// Host-partition fairshare over these hosts.
    Partition { hosts: Vec<String> },
}

/// One fairshare policy: named after its queue (a cross-queue set after its
/// master queue) or its host partition.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    pub name: String,
    pub kind: PolicyKind,
    pub shares: Vec<ShareAssignment>,
    /// Run time counts times the job's CPUs: LSB_NCPU_ENFORCE=1 for queues,
    /// always for host partitions (spec 004, "Parallel Fairshare").
    pub parallel_fairshare: bool,
}

impl Config {
    /// Queue policies in `lsb.queues` order, then host partitions in
    /// `lsb.hosts` order.
    pub fn fairshare_policies(&self) -> Vec<Policy> {
        let mut out = Vec::new();
        for q in &self.queues {
            let Some(shares) = &q.fairshare else { continue };
            let mut queues = vec![q.name.clone()];
            queues.extend(q.fairshare_queues.iter().filter(|s| **s != q.name && self.queue(s).is_some()).cloned());
            out.push(Policy {
                name: q.name.clone(),
                kind: PolicyKind::Queue { queues },
                shares: shares.clone(),
                parallel_fairshare: self.params.ncpu_enforce,
            });
        }
        for p in &self.partitions {
            out.push(Policy {
                name: p.name.clone(),
                kind: PolicyKind::Partition { hosts: self.resolve_hosts(&p.hosts) },
                shares: p.shares.clone(),
                parallel_fairshare: true,
            });
        }
        out
    }

    /// The policy a queue's jobs are charged to, if the queue is a
    /// fairshare queue or in a cross-queue set.
    pub fn policy_of_queue(&self, queue: &str) -> Option<Policy> {
        self.fairshare_policies()
            .into_iter()
            .find(|p| matches!(&p.kind, PolicyKind::Queue { queues } if queues.iter().any(|q| q == queue)))
    }

    /// Users the configuration names: group members, users with their own
    /// share assignment, and users of the User section, in that order.
    pub fn known_users(&self) -> Vec<String> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        let mut add = |u: &str| {
            if !self.groups.is_group(u) && !u.eq_ignore_ascii_case("default") && seen.insert(u.to_string()) {
                out.push(u.to_string());
            }
        };
        for u in self.groups.all_named_users() {
            add(&u);
        }
        let lists =
            self.queues.iter().filter_map(|q| q.fairshare.as_ref()).chain(self.partitions.iter().map(|p| &p.shares));
        for list in lists.chain(self.groups.iter().map(|g| &g.shares)) {
            for a in list {
                if let ShareTarget::User(u) = &a.target {
                    add(u);
                }
            }
        }
        for l in &self.user_limits {
            add(&l.name);
        }
        out
    }

    /// The share tree of `policy`, with the configuration's users and then
    /// `more_users` placed in it.
    pub fn share_tree(&self, policy: &Policy, more_users: impl IntoIterator<Item = String>) -> ShareTree {
        let users = self.known_users().into_iter().chain(more_users);
        ShareTree::new(&policy.name, &policy.shares, self.groups.clone(), self.params.factors.clone(), users)
            .with_parallel_fairshare(policy.parallel_fairshare)
    }

    /// Every policy with its share tree and scope, for the engine.
    pub fn fairshare_set(&self) -> FairshareSet {
        let policies = self
            .fairshare_policies()
            .into_iter()
            .map(|p| {
                let tree = self.share_tree(&p, Vec::new());
                let scope = match p.kind {
                    PolicyKind::Queue { queues } => Scope::Queues(queues),
                    PolicyKind::Partition { hosts } => Scope::Hosts(hosts.into_iter().collect()),
                };
                PolicyState { scope, tree }
            })
            .collect();
        FairshareSet { policies }
    }

    /// The fairshare adjustment `allot.toml` chose, told the configured
    /// hosts' memory per slot (and no memory in use: what a running
    /// engine knows, [`allot_engine::Engine::adjustment`], it does not).
    pub fn adjustment(&self) -> Adjustment {
        Adjustment {
            memory: self.settings.memory_adjustment_threshold.map(|threshold| MemoryAdjustment { threshold }),
            cluster: ClusterMemory {
                in_use: 0.0,
                slot_memory: ClusterMemory::slot_memory_of(&self.engine_config().hosts),
            },
        }
    }
}

impl Config {
    /// The multifactor fair-share of `[priority] policy`; `None` for `lsf`.
    pub fn multifactor_policy(&self) -> Option<allot_engine::multifactor::FairsharePolicy> {
        allot_engine::multifactor::FairsharePolicy::from_name(&self.settings.policy, self.settings.dampening)
    }

    /// The associations the multifactor policies rank: `[priority]
    /// accounts` when named; else the share tree of the default queue's
    /// fairshare policy (the first fairshare policy when the default queue
    /// has none), with `users` placed as LSF places them.
    pub fn account_tree(
        &self,
        users: impl IntoIterator<Item = String>,
    ) -> Result<allot_engine::multifactor::AccountTree, String> {
        self.associations(users).map(|(tree, _)| tree)
    }

    /// [`Config::account_tree`], and the fairshare policy whose share tree
    /// it was made from (`None`: `[priority] accounts`).
    pub fn associations(
        &self,
        users: impl IntoIterator<Item = String>,
    ) -> Result<(allot_engine::multifactor::AccountTree, Option<String>), String> {
        if let Some(tree) = &self.accounts {
            return Ok((tree.clone(), None));
        }
        let policies = self.fairshare_policies();
        let default = self.default_queues();
        let policy = policies
            .iter()
            .find(|p| matches!(&p.kind, PolicyKind::Queue { queues } if default.first().is_some_and(|d| queues.contains(d))))
            .or(policies.first())
            .ok_or("no associations: name a `sacctmgr dump` file in allot.toml ([priority] accounts) or give a queue FAIRSHARE")?;
        let tree = self.share_tree(policy, users);
        allot_engine::multifactor::AccountTree::from_share_tree(&tree)
            .map(|t| (t, Some(policy.name.clone())))
            .map_err(|e| format!("the share tree of `{}` as associations: {e}", policy.name))
    }
}
