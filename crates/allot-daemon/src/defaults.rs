//! The embedded defaults: with no configuration, this machine is the one
//! host (its CPUs as slots, its memory), and one queue `normal` with
//! `FAIRSHARE = USER_SHARES[[default, 1]]`.

use allot_engine::model::{EngineConfig, HostSpec};

pub fn this_host() -> String {
    nix::unistd::gethostname().ok().and_then(|h| h.into_string().ok()).unwrap_or_else(|| "localhost".into())
}

pub fn engine_config() -> EngineConfig {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    EngineConfig::one_queue(vec![HostSpec { name: this_host(), slots: cpus, cpus }], true)
}
