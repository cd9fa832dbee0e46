//! One full dispatch pass at the scale of `benches/dispatch.rs`, for
//! profilers: `valgrind --tool=callgrind --toggle-collect='*schedule*'`.

use allot_engine::model::{EngineConfig, HostSpec, QueueSpec};
use allot_engine::shares::assign::{Member, UserGroup};
use allot_engine::shares::{
    FairshareSet, GroupTable, LsfFactors, PolicyState, Scope, ShareAssignment, ShareTarget, ShareTree,
};
use allot_engine::{Engine, Event, JobSpec, Time};

const HOSTS: usize = 5_000;
const SLOTS_PER_HOST: u32 = 32;
const USERS: usize = 10_000;
const JOBS: usize = 100_000;

fn user(i: usize) -> String {
    format!("u{i}")
}

fn config() -> EngineConfig {
    let mut groups = Vec::new();
    let mut top = Vec::new();
    for div in 0..10 {
        let mut div_shares = Vec::new();
        let mut div_members = Vec::new();
        for dep in 0..10 {
            let name = format!("dep{div}_{dep}");
            let members = (0..100).map(|u| Member::User(user(div * 1000 + dep * 100 + u))).collect();
            groups.push(UserGroup {
                name: name.clone(),
                members,
                shares: vec![ShareAssignment::new(ShareTarget::Default, 1)],
            });
            div_shares.push(ShareAssignment::new(ShareTarget::Group(name.clone()), 1 + dep as u32));
            div_members.push(Member::Group(name));
        }
        let name = format!("div{div}");
        groups.push(UserGroup { name: name.clone(), members: div_members, shares: div_shares });
        top.push(ShareAssignment::new(ShareTarget::Group(name), 10 + div as u32));
    }
    let groups = GroupTable::new(groups);
    let users: Vec<String> = (0..USERS).map(user).collect();
    let tree = ShareTree::new("batch", &top, groups.clone(), LsfFactors::default(), users);
    let mut queue = QueueSpec::new("batch", 30);
    queue.policy = Some("batch".into());
    EngineConfig {
        hosts: (0..HOSTS)
            .map(|i| HostSpec { name: format!("h{i:04}"), slots: SLOTS_PER_HOST, cpus: SLOTS_PER_HOST })
            .collect(),
        queues: vec![queue],
        fairshare: FairshareSet { policies: vec![PolicyState { scope: Scope::Queues(vec!["batch".into()]), tree }] },
        groups,
        mbd_sleep_time: 60,
        hist_hours: 5.0,
        default_queues: vec!["batch".into()],
        user_max_jobs: Default::default(),
    }
}

/// An engine with `JOBS` pending jobs, 10 per user, of 1 to 4 slots.
fn loaded() -> Engine {
    let mut e = Engine::new(config());
    for j in 0..JOBS {
        let spec = JobSpec { user: user(j % USERS), slots: 1 + (j % 4) as u32, ..JobSpec::default() };
        e.apply(Time(0), &Event::Submit(spec)).expect("accepted");
    }
    e
}

fn main() {
    let mut e = loaded();
    let t = std::time::Instant::now();
    let d = e.schedule(Time(1));
    println!("{} jobs started in {:?}", d.len(), t.elapsed());
}
