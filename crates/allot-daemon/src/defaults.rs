//! The embedded defaults: with no configuration, this machine is the one
//! host (its CPUs as slots, its memory), and one queue `normal` with
//! `FAIRSHARE = USER_SHARES[[default, 1]]`.

use allot_engine::model::{EngineConfig, HostSpec, QueueSpec};
use allot_engine::shares::{
    FairshareSet, GroupTable, LsfFactors, PolicyState, Scope, ShareAssignment, ShareTarget, ShareTree,
};

pub fn this_host() -> String {
    nix::unistd::gethostname().ok().and_then(|h| h.into_string().ok()).unwrap_or_else(|| "localhost".into())
}

pub fn engine_config() -> EngineConfig {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let mut queue = QueueSpec::new("normal", 30);
    queue.policy = Some("normal".into());
    let top = [ShareAssignment::new(ShareTarget::Default, 1)];
    let tree = ShareTree::new("normal", &top, GroupTable::default(), LsfFactors::default(), Vec::<String>::new());
    EngineConfig {
        hosts: vec![HostSpec { name: this_host(), slots: cpus, cpus }],
        queues: vec![queue],
        fairshare: FairshareSet { policies: vec![PolicyState { scope: Scope::Queues(vec!["normal".into()]), tree }] },
        groups: GroupTable::default(),
        mbd_sleep_time: 60,
        hist_hours: 5.0,
        default_queues: vec!["normal".into()],
        user_max_jobs: Default::default(),
    }
}
