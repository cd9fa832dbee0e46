//! Dates as LSF's commands show them, in this machine's local time zone
//! (the `TZ` environment variable, else `/etc/localtime`, as `date` reads
//! them; UTC when neither says): `Nov 21 20:55` in lists, `Sat Nov 21
//! 20:55:01` in the long forms. allotd keeps seconds since the epoch; only
//! the commands turn them into dates.

use std::sync::OnceLock;

use jiff::Timestamp;
use jiff::tz::TimeZone;

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// The local time zone, read once. The crate's own unit tests run in UTC,
/// whatever the machine's zone, so their expected dates hold anywhere.
pub fn zone() -> &'static TimeZone {
    static ZONE: OnceLock<TimeZone> = OnceLock::new();
    ZONE.get_or_init(|| if cfg!(test) { TimeZone::UTC } else { TimeZone::system() })
}

/// The local time zone's offset from UTC at `secs`, seconds east: what
/// `bsub -t` reads its local fields with.
pub fn offset_at(secs: u64) -> i64 {
    offset_in(secs, zone())
}

fn offset_in(secs: u64, tz: &TimeZone) -> i64 {
    let at = i64::try_from(secs).ok().and_then(|s| Timestamp::from_second(s).ok()).unwrap_or(Timestamp::MAX);
    i64::from(tz.to_offset(at).seconds())
}

fn civil(secs: u64, tz: &TimeZone) -> jiff::civil::DateTime {
    let at = i64::try_from(secs).ok().and_then(|s| Timestamp::from_second(s).ok()).unwrap_or(Timestamp::MAX);
    tz.to_datetime(at)
}

/// `Nov 21 20:55`: the minute of `secs` in `tz`.
pub fn minute_in(secs: u64, tz: &TimeZone) -> String {
    let d = civil(secs, tz);
    format!("{} {:>2} {:02}:{:02}", MONTHS[(d.month() - 1) as usize], d.day(), d.hour(), d.minute())
}

/// `Sat Nov 21 20:55:01`: the second of `secs` in `tz`, with its weekday.
pub fn long_in(secs: u64, tz: &TimeZone) -> String {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    let d = civil(secs, tz);
    let day = DAYS[d.weekday().to_monday_zero_offset() as usize];
    format!("{day} {}:{:02}", minute_in(secs, tz), d.second())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_shown_in_the_zone_asked_for() {
        assert_eq!(long_in(1_795_294_501, &TimeZone::UTC), "Sat Nov 21 20:55:01");
        assert_eq!(long_in(0, &TimeZone::UTC), "Thu Jan  1 00:00:00");
        let tokyo = TimeZone::fixed(jiff::tz::offset(9));
        assert_eq!(long_in(1_795_294_501, &tokyo), "Sun Nov 22 05:55:01", "nine hours on: the next day");
        assert_eq!(minute_in(1_795_294_501, &tokyo), "Nov 22 05:55");
        let new_york = TimeZone::fixed(jiff::tz::offset(-5));
        assert_eq!(minute_in(0, &new_york), "Dec 31 19:00");
        assert_eq!((offset_in(0, &tokyo), offset_in(0, &new_york)), (9 * 3600, -5 * 3600));
    }

    /// `bsub -t 23:00` in Tokyo is 23:00 there: 14:00 UTC.
    #[test]
    fn a_termination_time_is_local() {
        let tokyo = TimeZone::fixed(jiff::tz::offset(9));
        let t = allot_config::bsub::parse_line("-t 23:00 true").expect("parses").term_time.expect("-t");
        // 2026-11-21 12:00 UTC = 21:00 in Tokyo: 23:00 there is 14:00 UTC.
        let now = 1_795_262_400;
        let at = t.resolve_in(now, &|s| offset_in(s, &tokyo)).expect("resolves");
        assert_eq!(at, now + 2 * 3600);
        assert_eq!(t.resolve(now).expect("utc"), now + 11 * 3600, "on UTC: 23:00 UTC");
    }

    /// Summer time, where the machine has the zone's rules.
    #[test]
    fn summer_time_follows_the_zones_rules() {
        let Ok(paris) = TimeZone::get("Europe/Paris") else {
            eprintln!("no time zone database here: summer time not checked");
            return;
        };
        // 2026-07-01 12:00 UTC is 14:00 in Paris (UTC+2); 2026-01-01 12:00
        // UTC is 13:00 (UTC+1).
        assert_eq!(minute_in(1_782_907_200, &paris), "Jul  1 14:00");
        assert_eq!(minute_in(1_767_268_800, &paris), "Jan  1 13:00");
    }
}
