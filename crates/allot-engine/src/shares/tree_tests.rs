//! Share trees against the spec's examples (spec 000, "User Share
//! Assignments" and "Hierarchical User-based Fairshare"; spec 003).

use super::*;
use crate::shares::assign::{Member, UserGroup};
use crate::shares::priority::PriorityInputs;

/// `[name, n]` pairs as the configuration writes them: `x@`, `default`,
/// `others`; any other name is a user, or a group when `groups` defines it.
fn assignments(text: &[(&str, u32)]) -> Vec<ShareAssignment> {
    text.iter()
        .map(|(n, s)| {
            let target = match *n {
                "default" => ShareTarget::Default,
                "others" => ShareTarget::Others,
                n if n.ends_with('@') => ShareTarget::GroupEach(n.trim_end_matches('@').to_string()),
                n => ShareTarget::User(n.to_string()),
            };
            ShareAssignment::new(target, *s)
        })
        .collect()
}

fn group(name: &str, members: &[&str], shares: &[(&str, u32)], all_groups: &[&str]) -> UserGroup {
    let members = members
        .iter()
        .map(|m| match *m {
            "all" => Member::All,
            m if all_groups.contains(&m) => Member::Group(m.to_string()),
            m => Member::User(m.to_string()),
        })
        .collect();
    UserGroup { name: name.to_string(), members, shares: assignments(shares) }
}

fn users(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("User{i}")).collect()
}

fn tree(top: &[(&str, u32)], groups: Vec<UserGroup>, users: Vec<String>) -> ShareTree {
    ShareTree::new("q", &assignments(top), GroupTable::new(groups), LsfFactors::default(), users)
}

fn top_total(t: &ShareTree) -> u32 {
    t.children(NodeId::ROOT).iter().map(|&c| t.shares(c)).sum()
}

#[test]
fn default_gives_each_remaining_user_its_shares() {
    // spec 000: [User1, 10] [User2, 6] [default, 4]: 3 users -> 20 shares,
    // User1 has half; 12 users -> 56 shares, User1 about a fifth.
    let t3 = tree(&[("User1", 10), ("User2", 6), ("default", 4)], vec![], users(3));
    assert_eq!(top_total(&t3), 20);
    let user1 = t3.child(NodeId::ROOT, "User1").expect("User1");
    assert_eq!(t3.entitlement(user1), 0.5);
    let t12 = tree(&[("User1", 10), ("User2", 6), ("default", 4)], vec![], users(12));
    assert_eq!(top_total(&t12), 56);
    let user1 = t12.child(NodeId::ROOT, "User1").expect("User1");
    assert!((t12.entitlement(user1) - 10.0 / 56.0).abs() < 1e-12);
}

#[test]
fn others_share_their_shares_collectively() {
    // spec 000: [User1, 10] [User2, 9] [others, 8] assigns 27 shares; with 3
    // users the one remaining user has all 8; with 12, 10 users compete.
    let t3 = tree(&[("User1", 10), ("User2", 9), ("others", 8)], vec![], users(3));
    assert_eq!(top_total(&t3), 27);
    let others = t3.child(NodeId::ROOT, "others").expect("others");
    assert_eq!(t3.members(others), ["User3"]);
    let t12 = tree(&[("User1", 10), ("User2", 9), ("others", 8)], vec![], users(12));
    assert_eq!(top_total(&t12), 27);
    let others = t12.child(NodeId::ROOT, "others").expect("others");
    assert_eq!(t12.members(others).len(), 10);
}

#[test]
fn group_at_gives_each_member_its_shares() {
    // spec 000: [User1, 10] [GroupB@, 1] with 10 users in GroupB -> 20 shares.
    let members: Vec<String> = (1..=10).map(|i| format!("b{i}")).collect();
    let refs: Vec<&str> = members.iter().map(String::as_str).collect();
    let t = tree(&[("User1", 10), ("GroupB@", 1)], vec![group("GroupB", &refs, &[], &[])], vec![]);
    assert_eq!(top_total(&t), 20);
    assert_eq!(t.children(NodeId::ROOT).len(), 11);
}

#[test]
fn a_group_collectively_counts_once() {
    // spec 000: [User1, 1] [GroupB, 1] assigns 2 shares; User1 is as
    // important as all of GroupB together.
    let mut t = tree(&[("User1", 1), ("GroupB", 1)], vec![group("GroupB", &["u1", "u2"], &[], &[])], vec![]);
    assert_eq!(top_total(&t), 2);
    let gb = t.child(NodeId::ROOT, "GroupB").expect("GroupB");
    assert_eq!(t.place("u1"), [gb]);
    assert_eq!(t.place("u2"), [gb]);
    assert_eq!(t.members(gb), ["u1", "u2"], "FCFS members of the group");
}

#[test]
fn a_user_without_a_share_assignment_is_refused() {
    let mut t = tree(&[("User1", 10)], vec![], vec![]);
    let err = t.resolve("stranger", None).expect_err("no shares");
    assert_eq!(err.to_string(), "user `stranger` has no share assignment in `q`");
    assert!(t.resolve("User1", None).is_ok());
}

/// spec 000 and 003: GroupB (User1 User2) (); GroupC (User3 User4)
/// ([User3, 3] [User4, 4]); GroupA (GroupB GroupC User5) ([User5, 1]
/// [default, 10]): inside GroupA, `default` gives each direct member not
/// named, GroupB and GroupC, 10 shares; GroupB has no tree (FCFS).
fn group_abc() -> ShareTree {
    let gs = ["GroupA", "GroupB", "GroupC"];
    tree(
        &[("GroupA", 10), ("default", 1)],
        vec![
            group("GroupB", &["User1", "User2"], &[], &gs),
            group("GroupC", &["User3", "User4"], &[("User3", 3), ("User4", 4)], &gs),
            group("GroupA", &["GroupB", "GroupC", "User5"], &[("User5", 1), ("default", 10)], &gs),
        ],
        vec![],
    )
}

#[test]
fn hierarchical_tree_divides_group_shares() {
    let mut t = group_abc();
    let ga = t.child(NodeId::ROOT, "GroupA").expect("GroupA");
    let names: Vec<(String, u32)> = t.children(ga).iter().map(|&c| (t.name(c).to_string(), t.shares(c))).collect();
    assert_eq!(names, [("User5".into(), 1), ("GroupB".into(), 10), ("GroupC".into(), 10)]);
    let gc = t.child(ga, "GroupC").expect("GroupC");
    let u3 = t.child(gc, "User3").expect("User3");
    assert_eq!(t.place("User3"), [u3]);
    let gb = t.child(ga, "GroupB").expect("GroupB");
    assert_eq!(t.place("User1"), [gb], "GroupB has no share tree: FCFS leaf");
    // GroupA's members are named through GroupA, so `default` at the top
    // makes no leaf for them: only the top-level GroupA and no one else yet.
    assert_eq!(t.children(NodeId::ROOT).len(), 1);
    let tables = t.share_tables(Time(0), &PriorityInputs::default());
    let paths: Vec<&str> = tables.iter().map(|x| x.path.as_str()).collect();
    assert_eq!(paths, ["q/", "q/GroupA/", "q/GroupA/GroupC/"]);
}

#[test]
fn engineering_entitlements() {
    // spec 000: User1 is entitled to 10% (.50 x .80 x .25) and User3 to 4%
    // (.80 x .20 x .25). The figure is missing from the text; this tree is
    // the one those products describe: Research 25% of the top level
    // (Development 50%, Marketing 25%), ChipX 80% and ChipY 20% of Research,
    // User1 50% of ChipX, User3 80% of ChipY.
    let gs = ["Development", "Research", "Marketing", "Systems", "Application", "Test", "ChipX", "ChipY"];
    let t = tree(
        &[("Development", 50), ("Research", 25), ("Marketing", 25)],
        vec![
            group("Systems", &["s1"], &[], &gs),
            group("Application", &["a1"], &[], &gs),
            group("Test", &["t1"], &[], &gs),
            group(
                "Development",
                &["Systems", "Application", "Test"],
                &[("Systems", 15), ("Application", 35), ("Test", 50)],
                &gs,
            ),
            group("ChipX", &["User1", "User2"], &[("User1", 1), ("User2", 1)], &gs),
            group("ChipY", &["User3", "User4"], &[("User3", 4), ("User4", 1)], &gs),
            group("Research", &["ChipX", "ChipY"], &[("ChipX", 80), ("ChipY", 20)], &gs),
            group("Marketing", &["m1"], &[], &gs),
        ],
        vec![],
    );
    let research = t.child(NodeId::ROOT, "Research").expect("Research");
    let user1 = t.child(t.child(research, "ChipX").expect("ChipX"), "User1").expect("User1");
    let user3 = t.child(t.child(research, "ChipY").expect("ChipY"), "User3").expect("User3");
    assert!((t.entitlement(user1) - 0.10).abs() < 1e-12, "{}", t.entitlement(user1));
    assert!((t.entitlement(user3) - 0.04).abs() < 1e-12, "{}", t.entitlement(user3));
    let dev = t.child(NodeId::ROOT, "Development").expect("Development");
    let test = t.child(dev, "Test").expect("Test");
    assert!((t.entitlement(test) - 0.25).abs() < 1e-12, "50% of Development's 50%");
}

#[test]
fn group_at_stops_the_hierarchy() {
    // spec 000: with `group@`, members of the group and of all subgroups
    // get shares individually, regardless of the subgroups' share trees.
    let gs = ["outer", "inner"];
    let mut t = tree(
        &[("outer@", 2)],
        vec![
            group("inner", &["i1", "i2"], &[("i1", 100)], &gs),
            group("outer", &["inner", "o1"], &[("o1", 5), ("inner", 5)], &gs),
        ],
        vec![],
    );
    let names: Vec<(&str, u32)> = t.children(NodeId::ROOT).iter().map(|&c| (t.name(c), t.shares(c))).collect();
    assert_eq!(names, [("i1", 2), ("i2", 2), ("o1", 2)]);
    let i2 = t.child(NodeId::ROOT, "i2").expect("i2");
    assert_eq!(t.place("i2"), [i2]);
}

#[test]
fn a_user_in_two_groups_has_two_accounts_and_minus_g_picks_one() {
    // spec 000, bugroup -l: group1 (group2 group3) ([group2,20] [group3,10]);
    // group2 (user1 user2 user3) ([others,10] [user3,4]);
    // group3 (all) ([user2,10] [default,5]).
    let gs = ["group1", "group2", "group3"];
    let mut t = tree(
        &[("group1", 1)],
        vec![
            group("group2", &["user1", "user2", "user3"], &[("others", 10), ("user3", 4)], &gs),
            group("group3", &["all"], &[("user2", 10), ("default", 5)], &gs),
            group("group1", &["group2", "group3"], &[("group2", 20), ("group3", 10)], &gs),
        ],
        vec![],
    );
    let g1 = t.child(NodeId::ROOT, "group1").expect("group1");
    let g2 = t.child(g1, "group2").expect("group2");
    let g3 = t.child(g1, "group3").expect("group3");
    let others = t.child(g2, "others").expect("others");
    let u2_in_g3 = t.child(g3, "user2").expect("user2");
    assert_eq!(t.resolve("user2", None).expect("shares"), [others, u2_in_g3]);
    assert_eq!(t.resolve("user2", Some("group3")).expect("via group3"), [u2_in_g3]);
    assert_eq!(t.resolve("user2", Some("group2")).expect("via group2"), [others]);
    let err = t.resolve("user2", Some("group1")).expect_err("group1 has subgroups");
    assert!(matches!(err, ShareError::GroupHasSubgroups { .. }), "{err}");
    let err = t.resolve("user2", Some("nosuch")).expect_err("unknown");
    assert!(matches!(err, ShareError::UnknownGroup { .. }), "{err}");
    // user9 is in group3 (all) but not in group2.
    let err = t.resolve("user9", Some("group2")).expect_err("not a member");
    assert!(matches!(err, ShareError::NotMember { .. }), "{err}");
}

#[test]
fn minus_g_needs_a_share_path_through_the_group() {
    let mut t = tree(&[("u1", 5), ("g", 5)], vec![group("g", &["u1", "u2"], &[], &[])], vec![]);
    let via_user = t.child(NodeId::ROOT, "u1").expect("u1");
    let via_group = t.child(NodeId::ROOT, "g").expect("g");
    assert_eq!(t.resolve("u1", None).expect("shares"), [via_user, via_group]);
    assert_eq!(t.resolve("u1", Some("g")).expect("via g"), [via_group]);
    let mut only_user = tree(&[("u1", 5)], vec![group("g", &["u1"], &[], &[])], vec![]);
    let err = only_user.resolve("u1", Some("g")).expect_err("g has no shares here");
    assert!(matches!(err, ShareError::NotThroughGroup { .. }), "{err}");
}

#[test]
fn group_usage_aggregates_its_members_recursively() {
    let mut t = group_abc();
    let u3 = t.place("User3")[0];
    let gb = t.place("User1")[0];
    let job =
        |start| JobCharge { slots: 2, run_weight: 1, committed: None, memory: 0.0, start: Time(start), shift: 0.0 };
    t.start_job(u3, &job(0));
    t.start_job(gb, &job(100));
    t.add_cpu(u3, Time(200), 60.0);
    let ga = t.child(NodeId::ROOT, "GroupA").expect("GroupA");
    let u = t.usage(ga, Time(400));
    assert_eq!(u.started, 4);
    assert_eq!(u.run_time, 400.0 + 300.0);
    let decayed = 60.0 * (-std::f64::consts::LN_10 / (5.0 * 3600.0) * 200.0).exp();
    assert!((u.cpu_time - decayed).abs() < 1e-9, "{}", u.cpu_time);
    t.finish_job(u3, &job(0), Time(400));
    assert_eq!(t.usage(ga, Time(400)).started, 2);
}

#[test]
fn parallel_fairshare_weighs_run_time_by_cpus() {
    let t = tree(&[("default", 1)], vec![], vec![]);
    assert_eq!(t.run_weight(8), 1);
    let t = t.with_parallel_fairshare(true);
    assert_eq!(t.run_weight(8), 8);
}
