//! The embedded defaults: with no configuration, this machine is the one
//! host (its CPUs as slots, its memory), and one queue `normal` with
//! `FAIRSHARE = USER_SHARES[[default, 1]]`. allotd runs on them without a
//! configuration, and a replay of its log (`allot sim --from`) takes them
//! up again.

use allot_engine::model::{EngineConfig, HostSpec};

/// This machine's host name (the kernel's, as `hostname` says it).
pub fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

pub fn engine_config() -> EngineConfig {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let mut host = HostSpec::new(this_host(), cpus, cpus);
    host.attrs.maxmem = memory_mb();
    EngineConfig::one_queue(vec![host], true)
}

/// This machine's memory, MB (MemTotal of /proc/meminfo).
fn memory_mb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kb / 1024)
}
