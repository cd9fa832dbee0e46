//! `bacct`'s time windows (`-C`, `-D`, `-S`): `time0,time1`, each end
//! `.` (now), `.-N` (N days before now), or a date
//! `[[year/]month/]day[/hour:minute]` in the local time zone, the year and
//! month now's where not given. A date without a time of day is the
//! start of that day as `time0` and its end (23:59:59) as `time1`; an end
//! left out is open (`time0,` until now, `,time1` from the first job);
//! one time alone is its day, or from it until now when it is `.-N`.

use winnow::ModalResult;
use winnow::ascii::{dec_uint, digit1};
use winnow::combinator::{alt, not, opt, peek, preceded, separated, terminated};
use winnow::error::{StrContext, StrContextValue};
use winnow::prelude::*;

use allot_engine::time::days_from_civil;

use crate::lsf::values::{ValueError, parse_all};

/// One end of a window, as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcctTime {
    Now,
    DaysAgo(u32),
    Date { year: Option<u32>, month: Option<u32>, day: u32, time: Option<(u32, u32)> },
}

fn number(input: &mut &str) -> ModalResult<u32> {
    digit1.try_map(str::parse::<u32>).parse_next(input)
}

/// The fields of a date as written: up to three numbers, then a time.
type Fields = (Vec<u32>, Option<(u32, u32)>);

fn fields(input: &mut &str) -> ModalResult<Fields> {
    // A number followed by `:` is the hour, not a part of the date.
    let part = terminated(number, not(':'));
    let parts: Vec<u32> = separated(1..=3, part, terminated('/', not(peek((number, ':'))))).parse_next(input)?;
    let time = opt(preceded('/', (number, preceded(':', number)))).parse_next(input)?;
    Ok((parts, time))
}

fn date(input: &mut &str) -> ModalResult<AcctTime> {
    fields
        .verify_map(|(parts, time): Fields| {
            let (year, month, day) = match parts[..] {
                [d] => (None, None, d),
                [m, d] => (None, Some(m), d),
                [y, m, d] => (Some(y), Some(m), d),
                _ => return None,
            };
            let valid = (1..=31).contains(&day)
                && month.is_none_or(|m| (1..=12).contains(&m))
                && year.is_none_or(|y| y >= 1970)
                && time.is_none_or(|(h, m)| h <= 23 && m <= 59);
            valid.then_some(AcctTime::Date { year, month, day, time })
        })
        .parse_next(input)
}

fn end(input: &mut &str) -> ModalResult<AcctTime> {
    alt((preceded(".-", dec_uint).map(AcctTime::DaysAgo), '.'.value(AcctTime::Now), date))
        .context(StrContext::Expected(StrContextValue::Description(
            "`.`, `.-days` or `[[year/]month/]day[/hour:minute]`",
        )))
        .parse_next(input)
}

fn window(input: &mut &str) -> ModalResult<(Option<AcctTime>, Option<AcctTime>, bool)> {
    let from = opt(end).parse_next(input)?;
    let comma = opt(',').parse_next(input)?.is_some();
    let to = if comma { opt(end).parse_next(input)? } else { None };
    Ok((from, to, comma))
}

/// A window `time0,time1` resolved at `now` with the local zone's
/// `offset`: seconds since the epoch, both ends included.
pub fn parse_window(text: &str, now: u64, offset: &dyn Fn(u64) -> i64) -> Result<(u64, u64), ValueError> {
    let (from, to, comma) = parse_all(window, text)?;
    if from.is_none() && to.is_none() {
        return Err(ValueError { offset: 0, message: "expected `time0,time1`, found nothing".into() });
    }
    let at = |t: AcctTime, last: bool| resolve(t, now, offset, last);
    Ok(match (from, to, comma) {
        (Some(AcctTime::DaysAgo(n)), None, false) => (at(AcctTime::DaysAgo(n), false), now),
        (Some(t), None, false) => (at(t, false), at(t, true)),
        (from, to, _) => (from.map_or(0, |t| at(t, false)), to.map_or(now, |t| at(t, true))),
    })
}

fn resolve(t: AcctTime, now: u64, offset: &dyn Fn(u64) -> i64, last: bool) -> u64 {
    match t {
        AcctTime::Now => now,
        AcctTime::DaysAgo(n) => now.saturating_sub(u64::from(n) * 86_400),
        AcctTime::Date { year, month, day, time } => {
            let local_now = now.saturating_add_signed(offset(now));
            let (y, m, _) = allot_engine::time::civil_from_days((local_now / 86_400) as i64);
            let (y, m) = (year.map_or(y, i64::from), month.unwrap_or(m));
            let (h, min, s) = match time {
                Some((h, min)) => (h, min, if last { 59 } else { 0 }),
                None if last => (23, 59, 59),
                None => (0, 0, 0),
            };
            let local = days_from_civil(y, m, day) * 86_400 + i64::from(h * 3600 + min * 60 + s);
            crate::bsub::utc_of_local(local.max(0) as u64, now, offset)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-11-26 09:00 UTC.
    const NOW: u64 = 1_795_683_600;

    fn utc(_: u64) -> i64 {
        0
    }

    #[test]
    fn windows_as_bacct_reads_them() {
        let day = |d: u32| (days_from_civil(2026, 11, d) * 86_400) as u64;
        assert_eq!(parse_window("11/20,11/25", NOW, &utc), Ok((day(20), day(26) - 1)));
        assert_eq!(parse_window("2026/11/20/08:30,.", NOW, &utc), Ok((day(20) + 8 * 3600 + 1800, NOW)));
        assert_eq!(parse_window(".-7,", NOW, &utc), Ok((NOW - 7 * 86_400, NOW)));
        assert_eq!(parse_window("11/20/08:30,", NOW, &utc), Ok((day(20) + 8 * 3600 + 1800, NOW)), "month/day/time");
        assert_eq!(parse_window(".-1", NOW, &utc), Ok((NOW - 86_400, NOW)), "from a day ago until now");
        assert_eq!(parse_window(",20", NOW, &utc), Ok((0, day(21) - 1)), "the day of this month");
        assert_eq!(parse_window("25", NOW, &utc), Ok((day(25), day(26) - 1)), "one day");
        let tokyo = |_: u64| 9 * 3600;
        assert_eq!(parse_window("11/26,11/26", NOW, &tokyo), Ok((day(26) - 9 * 3600, day(27) - 9 * 3600 - 1)));
    }

    #[test]
    fn a_bad_window_is_named_where_it_is() {
        for (bad, at) in [("", 0), ("11/32", 0), ("x", 0), ("1,2,3", 3), ("13/1,", 0), ("5/5/99:00", 0)] {
            let e = parse_window(bad, NOW, &utc).expect_err(bad);
            assert_eq!(e.offset, at, "{bad}: {}", e.message);
        }
    }
}
