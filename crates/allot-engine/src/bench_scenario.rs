//! The scenarios the dispatch benchmarks run, shared by `cargo bench`
//! (`benches/dispatch.rs`, `benches/shares.rs`) and `allot bench
//! dispatch`, which times the same passes in a prebuilt binary (an
//! installed allot): one definition, so both measure the same thing.
//!
//! The dispatch scenario is issue 3's scale: `jobs` pending jobs (10 per
//! user, of 1 to 4 slots) of `users` users in a share tree three levels
//! deep (10 divisions × 10 departments × the rest), on `hosts` hosts of 32
//! slots.

use crate::model::{EngineConfig, HostSpec, QueueSpec};
use crate::shares::assign::{Member, UserGroup};
use crate::shares::{
    FairshareSet, GroupTable, LsfFactors, PolicyState, Scope, ShareAssignment, ShareTarget, ShareTree,
};
use crate::{Engine, Event, JobSpec, Time};

/// Slots of each host of the dispatch scenario.
pub const SLOTS_PER_HOST: u32 = 32;

/// A share tree three levels deep: `divisions` top-level groups of
/// `departments` groups each, whose users (named by `user(division,
/// department, index)`) take `[default, 1]`; department `d` has `1 + d`
/// shares in its division, division `v` `10 + v` at the top. The top
/// level's assignments, the groups, and every user.
pub fn deep_tree(
    divisions: usize,
    departments: usize,
    users_per_department: usize,
    user: impl Fn(usize, usize, usize) -> String,
) -> (Vec<ShareAssignment>, GroupTable, Vec<String>) {
    let mut groups = Vec::new();
    let mut users = Vec::new();
    let mut top = Vec::new();
    for div in 0..divisions {
        let mut div_shares = Vec::new();
        let mut div_members = Vec::new();
        for dep in 0..departments {
            let name = format!("dep{div}_{dep}");
            let members: Vec<String> = (0..users_per_department).map(|u| user(div, dep, u)).collect();
            users.extend(members.iter().cloned());
            groups.push(UserGroup {
                name: name.clone(),
                members: members.into_iter().map(Member::User).collect(),
                shares: vec![ShareAssignment::new(ShareTarget::Default, 1)],
            });
            div_shares.push(ShareAssignment::new(ShareTarget::Group(name.clone()), 1 + dep as u32));
            div_members.push(Member::Group(name));
        }
        let name = format!("div{div}");
        groups.push(UserGroup { name: name.clone(), members: div_members, shares: div_shares });
        top.push(ShareAssignment::new(ShareTarget::Group(name), 10 + div as u32));
    }
    (top, GroupTable::new(groups), users)
}

/// The dispatch scenario's size.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    pub jobs: usize,
    /// A multiple of 100 (10 divisions × 10 departments).
    pub users: usize,
    pub hosts: usize,
}

impl Scale {
    /// Issue 3's: 100,000 jobs, 10,000 users, 5,000 hosts.
    pub const ISSUE_3: Scale = Scale { jobs: 100_000, users: 10_000, hosts: 5_000 };
}

/// User `i` of the dispatch scenario.
pub fn user(i: usize) -> String {
    format!("u{i}")
}

/// The dispatch scenario's configuration: one fairshare queue over the
/// three-level tree.
pub fn dispatch_config(scale: Scale) -> EngineConfig {
    let per_department = (scale.users / 100).max(1);
    let (top, groups, users) =
        deep_tree(10, 10, per_department, |div, dep, u| user(div * per_department * 10 + dep * per_department + u));
    let tree = ShareTree::new("batch", &top, groups.clone(), LsfFactors::default(), users);
    let mut queue = QueueSpec::new("batch", 30);
    queue.policy = Some("batch".into());
    EngineConfig {
        hosts: (0..scale.hosts).map(|i| HostSpec::new(format!("h{i:04}"), SLOTS_PER_HOST, SLOTS_PER_HOST)).collect(),
        queues: vec![queue],
        fairshare: FairshareSet { policies: vec![PolicyState { scope: Scope::Queues(vec!["batch".into()]), tree }] },
        groups,
        mbd_sleep_time: 60,
        hist_hours: 5.0,
        default_queues: vec!["batch".into()],
        user_max_jobs: Default::default(),
        max_job_array_size: 1000,
        max_user_priority: None,
        ..EngineConfig::default()
    }
}

/// An engine of the scenario with its jobs pending: job `j` is user `j %
/// users`'s, of `1 + j % 4` slots.
pub fn loaded(scale: Scale) -> Engine {
    let mut e = Engine::new(dispatch_config(scale));
    let users = (scale.users / 100).max(1) * 100;
    for j in 0..scale.jobs {
        let spec = JobSpec { user: user(j % users), slots: 1 + (j % 4) as u32, ..JobSpec::default() };
        // Every user has shares and the queue takes any size of at most 4.
        let _ = e.apply(Time(0), &Event::Submit(spec));
    }
    e
}
