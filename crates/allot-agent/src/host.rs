//! What this host has and how loaded it is, as `lshosts` and `lsload`
//! show them: from `/proc` (Linux).

use crate::wire::{Load, Resources};

/// A `/proc/meminfo` field, MB.
fn meminfo(text: &str, field: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.split(':').next() == Some(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// Seconds since the epoch by this host's clock.
pub fn clock() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    now.saturating_add_signed(clock_offset())
}

/// For the test of a host whose clock is off (`ALLOT_TEST_CLOCK_OFFSET`,
/// seconds, debug builds only): what this host's clock says is that far
/// from the machine's.
pub fn clock_offset() -> i64 {
    if !cfg!(debug_assertions) {
        return 0;
    }
    std::env::var("ALLOT_TEST_CLOCK_OFFSET").ok().and_then(|v| v.parse().ok()).unwrap_or(0)
}

pub fn resources() -> Resources {
    let mem = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    Resources {
        ncpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        maxmem: meminfo(&mem, "MemTotal").unwrap_or(0),
        maxswp: meminfo(&mem, "SwapTotal").unwrap_or(0),
        host_type: std::env::consts::ARCH.to_uppercase(),
        clock: clock(),
    }
}

/// The CPU's busy and total time so far (`/proc/stat`, in ticks).
pub fn cpu_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = stat.lines().next()?.split_whitespace().skip(1).filter_map(|w| w.parse().ok()).collect();
    let total: u64 = fields.iter().sum();
    let idle = fields.get(3).copied().unwrap_or(0) + fields.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// The share of CPU time busy between two [`cpu_ticks`].
pub fn utilization(before: (u64, u64), now: (u64, u64)) -> Option<f64> {
    let total = now.1.checked_sub(before.1).filter(|t| *t > 0)?;
    Some((now.0.saturating_sub(before.0) as f64 / total as f64).clamp(0.0, 1.0))
}

pub fn load() -> Load {
    let mem = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let avg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut words = avg.split_whitespace();
    let mut next = || words.next().and_then(|w| w.parse::<f64>().ok()).unwrap_or(0.0);
    let (r1m, r5m, r15m) = (next(), next(), next());
    let procs = avg.split_whitespace().nth(3).and_then(|w| w.split('/').next()?.parse().ok()).unwrap_or(0);
    Load {
        r1m,
        r5m,
        r15m,
        mem: meminfo(&mem, "MemAvailable").unwrap_or(0),
        swp: meminfo(&mem, "SwapFree").unwrap_or(0),
        procs,
        ut: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_host_is_described() {
        let r = resources();
        assert!(r.ncpus >= 1 && r.maxmem > 0, "{r:?}");
        let l = load();
        assert!(l.mem > 0 && l.mem <= r.maxmem, "{l:?}");
        assert_eq!(meminfo("MemTotal:       24576000 kB\nSwapTotal: 0 kB\n", "MemTotal"), Some(24000));
        assert_eq!(meminfo("MemTotal:       24576000 kB\n", "SwapTotal"), None);
        assert_eq!(utilization((100, 1000), (150, 1100)), Some(0.5));
        assert_eq!(utilization((100, 1000), (100, 1000)), None, "no time passed");
        assert!(cpu_ticks().is_some_and(|(busy, total)| busy <= total));
    }
}
