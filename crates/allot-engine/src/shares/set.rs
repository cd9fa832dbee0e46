//! All the fairshare policies of a cluster, and who may submit where
//! (spec 000: "Users who have no shares cannot run jobs in the queue or
//! host partition"; "Even cluster and queue administrators cannot submit
//! jobs to a fairshare queue if they do not have a share assignment").

use std::collections::BTreeSet;

use super::tree::{NodeId, ShareError, ShareTree};

/// What a policy covers: some queues (queue-level and cross-queue
/// fairshare) or some hosts (host-partition fairshare).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Scope {
    Queues(Vec<String>),
    Hosts(BTreeSet<String>),
}

/// One policy: its scope and its share tree.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PolicyState {
    pub scope: Scope,
    pub tree: ShareTree,
}

/// Where a job's usage will be charged: per policy, the accounts it may be
/// charged to (one is chosen when it starts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admission {
    pub accounts: Vec<(usize, Vec<NodeId>)>,
}

/// The cluster's fairshare policies, in configuration order.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct FairshareSet {
    pub policies: Vec<PolicyState>,
}

impl FairshareSet {
    /// Checks that `user` may submit to `queue`, whose jobs may run on
    /// `queue_hosts`, charging through `group` if given (`bsub -G`).
    ///
    /// - Queue-level fairshare: the user needs an account in the queue's
    ///   policy; the job's identity decides, so an administrator is no
    ///   exception.
    /// - Host-partition fairshare: a job may run on a partition's hosts only
    ///   with an account there. The submission is refused when the user has
    ///   an account in none of the partitions the queue's hosts touch and
    ///   the queue has no host outside every partition (those are FCFS).
    ///   Partitions where the user has no account are left out of the
    ///   admission, so the job never runs there.
    pub fn admit(
        &mut self,
        user: &str,
        queue: &str,
        queue_hosts: &[String],
        group: Option<&str>,
    ) -> Result<Admission, ShareError> {
        let touched: Vec<usize> = self
            .policies
            .iter()
            .enumerate()
            .filter(|(_, p)| matches!(&p.scope, Scope::Hosts(h) if queue_hosts.iter().any(|q| h.contains(q))))
            .map(|(i, _)| i)
            .collect();
        let outside = queue_hosts
            .iter()
            .any(|h| !self.policies.iter().any(|p| matches!(&p.scope, Scope::Hosts(hs) if hs.contains(h))));
        self.admit_to(user, queue, &touched, outside, group)
    }

    /// [`FairshareSet::admit`] with the queue's hosts already summed up:
    /// the partition policies they touch, and whether any lies outside
    /// every partition.
    pub fn admit_to(
        &mut self,
        user: &str,
        queue: &str,
        partitions: &[usize],
        hosts_outside_partitions: bool,
        group: Option<&str>,
    ) -> Result<Admission, ShareError> {
        let mut accounts = Vec::new();
        if let Some(i) = self.queue_policy(queue) {
            let leaves = self.policies[i].tree.resolve(user, group)?;
            accounts.push((i, leaves));
            return Ok(Admission { accounts });
        }
        let mut first_error = None;
        for &i in partitions {
            match self.policies[i].tree.resolve(user, group) {
                Ok(leaves) => accounts.push((i, leaves)),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) if accounts.is_empty() && !hosts_outside_partitions => Err(e),
            _ => Ok(Admission { accounts }),
        }
    }

    /// The queue-level policy a queue belongs to.
    pub fn queue_policy(&self, queue: &str) -> Option<usize> {
        self.policies.iter().position(|p| matches!(&p.scope, Scope::Queues(q) if q.iter().any(|q| q == queue)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shares::{GroupTable, LsfFactors, ShareAssignment, ShareTarget};

    fn tree(name: &str, users: &[(&str, u32)]) -> ShareTree {
        let top: Vec<ShareAssignment> =
            users.iter().map(|(u, s)| ShareAssignment::new(ShareTarget::User(u.to_string()), *s)).collect();
        ShareTree::new(name, &top, GroupTable::default(), LsfFactors::default(), Vec::<String>::new())
    }

    fn hosts(h: &[&str]) -> Vec<String> {
        h.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_fairshare_queue_refuses_users_without_shares() {
        let mut set = FairshareSet {
            policies: vec![PolicyState {
                scope: Scope::Queues(vec!["normal".into(), "short".into()]),
                tree: tree("normal", &[("alice", 1)]),
            }],
        };
        assert!(set.admit("alice", "short", &[], None).is_ok());
        let err = set.admit("root", "short", &[], None).expect_err("root has no shares either");
        assert_eq!(err.to_string(), "user `root` has no share assignment in `normal`");
        let ok = set.admit("anyone", "fcfs", &[], None).expect("an FCFS queue takes anyone");
        assert!(ok.accounts.is_empty());
    }

    #[test]
    fn host_partitions_refuse_only_when_every_host_is_closed_to_the_user() {
        let p1 = PolicyState {
            scope: Scope::Hosts(["a", "b"].iter().map(|s| s.to_string()).collect()),
            tree: tree("p1", &[("alice", 1)]),
        };
        let p2 = PolicyState {
            scope: Scope::Hosts(["c"].iter().map(|s| s.to_string()).collect()),
            tree: tree("p2", &[("bob", 1)]),
        };
        let mut set = FairshareSet { policies: vec![p1, p2] };
        let adm = set.admit("alice", "q", &hosts(&["a", "c"]), None).expect("alice has p1");
        assert_eq!(adm.accounts.iter().map(|a| a.0).collect::<Vec<_>>(), [0]);
        let err = set.admit("carol", "q", &hosts(&["a", "c"]), None).expect_err("no shares in p1 or p2");
        assert!(matches!(err, ShareError::NoShares { .. }));
        let adm = set.admit("carol", "q", &hosts(&["a", "d"]), None).expect("d is in no partition: FCFS");
        assert!(adm.accounts.is_empty());
    }
}
