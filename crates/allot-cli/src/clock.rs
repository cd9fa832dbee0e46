//! Dates as LSF's commands show them, in this machine's local time zone
//! (the `TZ` environment variable, else `/etc/localtime`, as `date` reads
//! them; UTC when neither says): `Nov 21 20:55` in lists, `Sat Nov 21
//! 20:55:01` in the long forms. allotd keeps seconds since the epoch; only
//! the commands turn them into dates.

use std::sync::OnceLock;

use jiff::tz::TimeZone;

pub use allot_exec::clock::{long_in, minute_in, numeric_in};

/// The local time zone, read once. The crate's own unit tests run in UTC,
/// whatever the machine's zone, so their expected dates hold anywhere.
pub fn zone() -> &'static TimeZone {
    static ZONE: OnceLock<TimeZone> = OnceLock::new();
    ZONE.get_or_init(|| if cfg!(test) { TimeZone::UTC } else { allot_exec::clock::local_zone() })
}

/// The local time zone's offset from UTC at `secs`, seconds east: what
/// `bsub -t` reads its local fields with.
pub fn offset_at(secs: u64) -> i64 {
    allot_exec::clock::offset_in(secs, zone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bsub -t 23:00` in Tokyo is 23:00 there: 14:00 UTC.
    #[test]
    fn a_termination_time_is_local() {
        let tokyo = TimeZone::fixed(jiff::tz::offset(9));
        let t = allot_config::bsub::parse_line("-t 23:00 true").expect("parses").term_time.expect("-t");
        // 2026-11-21 12:00 UTC = 21:00 in Tokyo: 23:00 there is 14:00 UTC.
        let now = 1_795_262_400;
        let at = t.resolve_in(now, &|s| allot_exec::clock::offset_in(s, &tokyo)).expect("resolves");
        assert_eq!(at, now + 2 * 3600);
        assert_eq!(t.resolve(now).expect("utc"), now + 11 * 3600, "on UTC: 23:00 UTC");
    }
}
