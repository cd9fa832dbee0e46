//! Dates as LSF shows them, in a time zone: `Nov 21 20:55` in lists,
//! `Sat Nov 21 20:55:01` in the long forms, `Sat Nov 21 20:55:01 2026` in
//! a job's report. allotd keeps seconds since the epoch; the commands
//! (in the local zone of the machine they run on) and the job report (in
//! the execution host's) turn them into dates.

use jiff::Timestamp;
use jiff::tz::TimeZone;

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// This machine's local time zone, as the C library reads it: `TZ` when
/// set, else `/etc/localtime`, else UTC. `/etc/localtime` is read as the
/// zone file it is, named after its link's target; jiff's own
/// `TimeZone::system` looks that name up in its database instead, which
/// first lists the whole of `/usr/share/zoneinfo` (some 40 directory
/// reads), and every job's supervisor asks for the zone.
pub fn local_zone() -> TimeZone {
    if std::env::var_os("TZ").is_some() {
        return TimeZone::system();
    }
    let path = "/etc/localtime";
    let name = std::fs::read_link(path)
        .ok()
        .and_then(|t| t.to_str().and_then(|t| t.rsplit_once("zoneinfo/")).map(|(_, n)| n.to_string()))
        .unwrap_or_else(|| "Local".to_string());
    std::fs::read(path).ok().and_then(|bytes| TimeZone::tzif(&name, &bytes).ok()).unwrap_or(TimeZone::UTC)
}

/// [`local_zone`], read once in this process: what a job's supervisor
/// dates its report in. The zygote reads it before it forks the first
/// supervisor ([`warm`]), so each supervisor has it without reading
/// `/etc/localtime` again (six system calls a job); a zone changed while
/// allotd runs reaches the reports when allotd, and its zygote, restart,
/// as LSF's daemons read theirs when they start.
pub fn process_zone() -> TimeZone {
    static ZONE: std::sync::OnceLock<TimeZone> = std::sync::OnceLock::new();
    ZONE.get_or_init(local_zone).clone()
}

/// What a forked supervisor would otherwise read for itself, read once
/// before the forks: the zone, this process's groups and where the LSF
/// commands are.
pub(crate) fn warm() {
    let _ = process_zone();
    crate::owner::warm();
    crate::inherit::warm();
}

/// The zone's offset from UTC at `secs`, seconds east.
pub fn offset_in(secs: u64, tz: &TimeZone) -> i64 {
    i64::from(tz.to_offset(timestamp(secs)).seconds())
}

fn timestamp(secs: u64) -> Timestamp {
    i64::try_from(secs).ok().and_then(|s| Timestamp::from_second(s).ok()).unwrap_or(Timestamp::MAX)
}

fn civil(secs: u64, tz: &TimeZone) -> jiff::civil::DateTime {
    tz.to_datetime(timestamp(secs))
}

/// `Nov 21 20:55`: the minute of `secs` in `tz`.
pub fn minute_in(secs: u64, tz: &TimeZone) -> String {
    let d = civil(secs, tz);
    format!("{} {:>2} {:02}:{:02}", MONTHS[(d.month() - 1) as usize], d.day(), d.hour(), d.minute())
}

/// `11/21-20:55:01`: the second of `secs` in `tz`, as `bjobs -W` shows
/// it.
pub fn numeric_in(secs: u64, tz: &TimeZone) -> String {
    let d = civil(secs, tz);
    format!("{:02}/{:02}-{:02}:{:02}:{:02}", d.month(), d.day(), d.hour(), d.minute(), d.second())
}

/// `Sat Nov 21 20:55:01`: the second of `secs` in `tz`, with its weekday.
pub fn long_in(secs: u64, tz: &TimeZone) -> String {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    let d = civil(secs, tz);
    let day = DAYS[d.weekday().to_monday_zero_offset() as usize];
    format!("{day} {}:{:02}", minute_in(secs, tz), d.second())
}

/// `Sat Nov 21 20:55:01 2026`: [`long_in`] with the year, as `ctime`
/// writes a date (LSF's job report).
pub fn full_in(secs: u64, tz: &TimeZone) -> String {
    format!("{} {}", long_in(secs, tz), civil(secs, tz).year())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_shown_in_the_zone_asked_for() {
        assert_eq!(long_in(1_795_294_501, &TimeZone::UTC), "Sat Nov 21 20:55:01");
        assert_eq!(full_in(1_795_294_501, &TimeZone::UTC), "Sat Nov 21 20:55:01 2026");
        assert_eq!(long_in(0, &TimeZone::UTC), "Thu Jan  1 00:00:00");
        let tokyo = TimeZone::fixed(jiff::tz::offset(9));
        assert_eq!(long_in(1_795_294_501, &tokyo), "Sun Nov 22 05:55:01", "nine hours on: the next day");
        assert_eq!(minute_in(1_795_294_501, &tokyo), "Nov 22 05:55");
        let new_york = TimeZone::fixed(jiff::tz::offset(-5));
        assert_eq!(minute_in(0, &new_york), "Dec 31 19:00");
        assert_eq!(numeric_in(1_795_294_501, &tokyo), "11/22-05:55:01");
        // The local zone read from its file tells the same offsets as
        // jiff's lookup by name.
        if std::env::var_os("TZ").is_none() && std::path::Path::new("/etc/localtime").exists() {
            let (read, looked_up) = (local_zone(), TimeZone::system());
            for t in [0, 1_795_294_501, 1_800_000_000] {
                assert_eq!(offset_in(t, &read), offset_in(t, &looked_up));
            }
        }
        assert_eq!(full_in(0, &new_york), "Wed Dec 31 19:00:00 1969");
        assert_eq!((offset_in(0, &tokyo), offset_in(0, &new_york)), (9 * 3600, -5 * 3600));
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
