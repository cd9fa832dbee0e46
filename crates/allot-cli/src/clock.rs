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
