//! When a running job was UNKWN: a host of its allocation could not be
//! reached (`unreach`), as `bjobs` shows it and `bhist` counts it. Kept
//! with the job as the host states are applied, live and in a restart's
//! replay alike (they are the log's `HostReach` records, applied by
//! `allot_store::Book::host_reached`), and shown by
//! `bhist` as events between the job's own.

use allot_proto::HistoryEvent;
use allot_store::Spans;

/// The job's events with its spans of UNKWN among them, in time order
/// (a span's start after the events of the same second: a job starts,
/// then is unknown).
pub(crate) fn with_spans(mut events: Vec<(u64, HistoryEvent)>, spans: Option<&Spans>) -> Vec<(u64, HistoryEvent)> {
    let Some(spans) = spans else { return events };
    for &(from, until) in spans {
        events.push((from, HistoryEvent::Unknown));
        if let Some(until) = until {
            events.push((until, HistoryEvent::Reached));
        }
    }
    events.sort_by_key(|(at, _)| *at);
    events
}
