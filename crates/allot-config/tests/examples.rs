//! The spec's example configurations, read from `examples/` and turned into
//! share trees: the numbers the spec gives for them.

use std::path::Path;

use allot_config::{Config, load_dir};
use allot_engine::shares::{NodeId, ShareTree};

fn example(name: &str) -> Config {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name);
    match load_dir(&dir) {
        Ok((config, warnings)) => {
            // The spec's examples may carry what allot does not apply:
            // said so, and nothing else.
            assert!(warnings.0.iter().all(|w| w.to_string().contains("is not applied by allot")), "{warnings}");
            config
        }
        Err(d) => panic!("{name}: {d}"),
    }
}

fn path(tree: &ShareTree, names: &[&str]) -> NodeId {
    names.iter().fold(NodeId::ROOT, |n, name| tree.child(n, name).unwrap_or_else(|| panic!("no `{name}`")))
}

#[test]
fn engineering_user1_gets_ten_percent_and_user3_four() {
    let config = example("engineering");
    let policy = config.policy_of_queue("Engineering").expect("fairshare queue");
    let tree = config.share_tree(&policy, Vec::new());
    assert!((tree.entitlement(path(&tree, &["Research", "ChipX", "User1"])) - 0.10).abs() < 1e-12);
    assert!((tree.entitlement(path(&tree, &["Research", "ChipY", "User3"])) - 0.04).abs() < 1e-12);
    // Development's subgroups: 15%, 35% and 50% of it.
    let dev = tree.entitlement(path(&tree, &["Development"]));
    for (g, pct) in [("Systems", 0.15), ("Application", 0.35), ("Test", 0.50)] {
        assert!((tree.entitlement(path(&tree, &["Development", g])) - dev * pct).abs() < 1e-12, "{g}");
    }
}

#[test]
fn hierarchical_group_a_divides_among_user5_group_b_and_group_c() {
    let config = example("hierarchical");
    let policy = config.policy_of_queue("normal").expect("fairshare queue");
    let mut tree = config.share_tree(&policy, Vec::new());
    let ga = path(&tree, &["GroupA"]);
    let kids: Vec<(&str, u32)> = tree.children(ga).iter().map(|&c| (tree.name(c), tree.shares(c))).collect();
    assert_eq!(kids, [("User5", 1), ("GroupB", 10), ("GroupC", 10)]);
    assert_eq!(tree.resolve("User4", None).expect("shares"), [path(&tree, &["GroupA", "GroupC", "User4"])]);
    assert_eq!(tree.resolve("User2", None).expect("shares"), [path(&tree, &["GroupA", "GroupB"])]);
    // `default` at the top: a user outside GroupA gets 1 share of their own.
    let stranger = tree.resolve("stranger", None).expect("default");
    assert_eq!((tree.name(stranger[0]), tree.shares(stranger[0])), ("stranger", 1));
}

#[test]
fn cross_queue_set_shares_one_tree_and_refuses_users_without_shares_in_any_queue() {
    let config = example("cross-queue");
    let mut set = config.fairshare_set();
    assert_eq!(set.policies.len(), 1);
    for q in ["normal", "short", "license"] {
        let adm = set.admit("user1", q, &[], None).expect("user1 has shares");
        assert_eq!(adm.accounts[0].0, 0, "{q}: one policy for the whole set");
    }
    assert!(set.admit("user2", "short", &[], None).is_ok(), "[default, 1] gives everyone shares");
    assert!(set.admit("anyone", "night", &[], None).expect("FCFS").accounts.is_empty());
}

#[test]
fn partition_fairshare_refuses_users_without_shares() {
    let config = example("partition1");
    let mut set = config.fairshare_set();
    let hosts = vec!["HostA".to_string()];
    assert!(set.admit("user3", "normal", &hosts, None).is_ok(), "user3 is in group2: others");
    let err = set.admit("root", "normal", &hosts, None).expect_err("root is in no group");
    assert_eq!(err.to_string(), "user `root` has no share assignment in `Partition1`");
}
