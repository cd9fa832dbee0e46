//! Invariants of share trees under random configurations and random usage.

use allot_engine::Time;
use allot_engine::shares::assign::{Member, UserGroup};
use allot_engine::shares::priority::PriorityInputs;
use allot_engine::shares::{
    GroupTable, JobCharge, LsfFactors, NodeId, Selector, ShareAssignment, ShareTarget, ShareTree,
};
use proptest::prelude::*;

/// A random two-level configuration: `n_groups` groups of users, some with
/// a share tree of their own; the top level names groups collectively, with
/// `@`, single users, `default` and `others`.
fn config() -> impl Strategy<Value = (Vec<ShareAssignment>, GroupTable, Vec<String>)> {
    (1usize..5, 1usize..6, prop::collection::vec((0u8..4, 1u32..50), 1..6), prop::collection::vec(any::<bool>(), 5))
        .prop_map(|(n_groups, per_group, top, subtree)| {
            let mut groups = Vec::new();
            let mut users = Vec::new();
            for (g, &has_subtree) in subtree.iter().enumerate().take(n_groups) {
                let members: Vec<String> = (0..per_group).map(|u| format!("u{g}_{u}")).collect();
                users.extend(members.clone());
                let shares = if has_subtree {
                    vec![
                        ShareAssignment::new(ShareTarget::User(members[0].clone()), 5),
                        ShareAssignment::new(ShareTarget::Default, 2),
                    ]
                } else {
                    Vec::new()
                };
                groups.push(UserGroup {
                    name: format!("g{g}"),
                    members: members.into_iter().map(Member::User).collect(),
                    shares,
                });
            }
            users.extend(["loner1".to_string(), "loner2".to_string()]);
            let top = top
                .into_iter()
                .enumerate()
                .map(|(i, (kind, shares))| {
                    let target = match kind {
                        0 => ShareTarget::Group(format!("g{}", i % n_groups)),
                        1 => ShareTarget::GroupEach(format!("g{}", i % n_groups)),
                        2 if i % 2 == 0 => ShareTarget::Default,
                        2 => ShareTarget::Others,
                        _ => ShareTarget::User(format!("loner{}", 1 + i % 2)),
                    };
                    ShareAssignment::new(target, shares)
                })
                .collect();
            (top, GroupTable::new(groups), users)
        })
}

fn all_nodes(tree: &ShareTree) -> Vec<NodeId> {
    (1..tree.len() as u32).map(NodeId).collect()
}

/// The brute-force choice: at each level the active child of highest
/// priority, first in sibling order on ties.
fn brute_force_next(tree: &ShareTree, sel: &Selector, active: &dyn Fn(NodeId) -> bool) -> Option<NodeId> {
    let mut node = NodeId::ROOT;
    loop {
        let mut best: Option<NodeId> = None;
        for &c in tree.children(node) {
            if !active(c) {
                continue;
            }
            if best.is_none_or(|b| sel.priority(c).total_cmp(&sel.priority(b)).is_gt()) {
                best = Some(c);
            }
        }
        match best {
            Some(b) => node = b,
            None => return (node != NodeId::ROOT).then_some(node),
        }
    }
}

fn subtree_has(tree: &ShareTree, node: NodeId, pending: &[(NodeId, u64)]) -> bool {
    pending.iter().any(|&(leaf, n)| n > 0 && (leaf == node || tree.path(leaf).any(|p| p == node)))
}

proptest! {
    #[test]
    fn entitlements_of_siblings_sum_to_their_parents((top, groups, users) in config()) {
        let tree = ShareTree::new("p", &top, groups, LsfFactors::default(), users);
        let mut parents: Vec<NodeId> = vec![NodeId::ROOT];
        parents.extend(all_nodes(&tree));
        for p in parents {
            let kids = tree.children(p);
            if kids.is_empty() {
                continue;
            }
            let parent_share = if p == NodeId::ROOT { 1.0 } else { tree.entitlement(p) };
            let sum: f64 = kids.iter().map(|&c| tree.entitlement(c)).sum();
            prop_assert!((sum - parent_share).abs() < 1e-9, "children of {p:?} sum to {sum}, parent {parent_share}");
        }
    }

    #[test]
    fn a_group_uses_what_its_members_use(
        (top, groups, users) in config(),
        jobs in prop::collection::vec((0usize..40, 1u32..8, 0u64..5000, any::<bool>()), 0..30),
    ) {
        let mut tree = ShareTree::new("p", &top, groups, LsfFactors::default(), users.clone());
        let mut started = Vec::new();
        for (u, slots, at, finish) in jobs {
            let user = &users[u % users.len()];
            let Ok(leaves) = tree.resolve(user, None) else { continue };
            let job = JobCharge { slots, run_weight: slots, committed: Some(3600), memory: 0.0, start: Time(at), shift: 0.0 };
            tree.start_job(leaves[0], &job);
            tree.add_cpu(leaves[0], Time(at), f64::from(slots) * 10.0);
            if finish {
                tree.finish_job(leaves[0], &job, Time(at + 100));
            } else {
                started.push(leaves[0]);
            }
        }
        let t = Time(10_000);
        for n in std::iter::once(NodeId::ROOT).chain(all_nodes(&tree)) {
            let kids = tree.children(n);
            if kids.is_empty() {
                continue;
            }
            let own = tree.usage(n, t);
            let sum_started: u32 = kids.iter().map(|&c| tree.usage(c, t).started).sum();
            let sum_run: f64 = kids.iter().map(|&c| tree.usage(c, t).run_time).sum();
            let sum_cpu: f64 = kids.iter().map(|&c| tree.usage(c, t).cpu_time).sum();
            prop_assert_eq!(own.started, sum_started);
            prop_assert!((own.run_time - sum_run).abs() < 1e-6);
            prop_assert!((own.cpu_time - sum_cpu).abs() < 1e-6 * (1.0 + sum_cpu));
        }
        let root = tree.usage(NodeId::ROOT, t);
        prop_assert!(root.started >= started.len() as u32);
    }

    #[test]
    fn the_selector_agrees_with_a_top_down_walk(
        (top, groups, users) in config(),
        pending in prop::collection::vec((0usize..40, 0u64..3), 1..20),
        rounds in 1usize..15,
    ) {
        let mut tree = ShareTree::new("p", &top, groups, LsfFactors::default(), users.clone());
        let inputs = PriorityInputs::default();
        let mut sel = Selector::new(&tree, Time(0), &inputs);
        let mut counts: Vec<(NodeId, u64)> = Vec::new();
        for (u, n) in pending {
            let Ok(leaves) = tree.resolve(&users[u % users.len()], None) else { continue };
            let leaf = leaves[0];
            match counts.iter_mut().find(|(l, _)| *l == leaf) {
                Some(c) => c.1 = n,
                None => counts.push((leaf, n)),
            }
            sel.set_pending(&tree, leaf, n);
        }
        for _ in 0..rounds {
            let snapshot = counts.clone();
            let expect = brute_force_next(&tree, &sel, &|n| subtree_has(&tree, n, &snapshot));
            let got = sel.choose();
            prop_assert_eq!(got, expect);
            let Some(leaf) = got else { break };
            let job = JobCharge { slots: 1, run_weight: 1, committed: None, memory: 0.0, start: Time(0), shift: 0.0 };
            tree.start_job(leaf, &job);
            sel.refresh_path(&tree, leaf, &inputs);
            let c = counts.iter_mut().find(|(l, _)| *l == leaf).expect("chosen leaves have pending work");
            c.1 -= 1;
            sel.set_pending(&tree, leaf, c.1);
        }
    }
}

/// Membership by its definition: listed, or `all`, or in a listed subgroup.
fn naive_contains(groups: &[UserGroup], group: &str, user: &str, seen: &mut Vec<String>) -> bool {
    if seen.iter().any(|g| g == group) {
        return false;
    }
    seen.push(group.to_string());
    let Some(g) = groups.iter().find(|g| g.name == group) else { return false };
    g.members.iter().any(|m| match m {
        Member::User(u) => u == user,
        Member::All => true,
        Member::Group(sub) => naive_contains(groups, sub, user, seen),
    })
}

proptest! {
    #[test]
    fn indexed_membership_matches_the_definition(
        edges in prop::collection::vec(prop::collection::vec((0u8..3, 0usize..6), 0..5), 1..6),
    ) {
        // Groups g0..gN whose members are users u0..u5, other groups (cycles
        // allowed) or `all`.
        let n = edges.len();
        let groups: Vec<UserGroup> = edges
            .iter()
            .enumerate()
            .map(|(i, ms)| UserGroup {
                name: format!("g{i}"),
                members: ms
                    .iter()
                    .map(|&(kind, x)| match kind {
                        0 => Member::User(format!("u{x}")),
                        1 => Member::Group(format!("g{}", x % n)),
                        _ if x == 0 => Member::All,
                        _ => Member::User(format!("u{x}")),
                    })
                    .collect(),
                shares: Vec::new(),
            })
            .collect();
        let table = GroupTable::new(groups.clone());
        for g in 0..n {
            for u in 0..7 {
                let (group, user) = (format!("g{g}"), format!("u{u}"));
                prop_assert_eq!(
                    table.contains(&group, &user),
                    naive_contains(&groups, &group, &user, &mut Vec::new()),
                    "{} in {}", user, group
                );
            }
        }
    }
}
