//! When a running job was UNKWN: a host of its allocation could not be
//! reached (`unreach`), as `bjobs` shows it and `bhist` counts it. Kept
//! with the job as the host states are applied, live and in a restart's
//! replay alike (they are the log's `HostReach` records), and shown by
//! `bhist` as events between the job's own.

use allot_engine::{JobId, Time};
use allot_proto::HistoryEvent;

use crate::state::State;

/// A job's spans of UNKWN: from, and until (none while it lasts).
pub type Spans = Vec<(u64, Option<u64>)>;

/// `host`'s state changed at `t`: each running job on it starts or ends a
/// span of UNKWN as its hosts are all reached or not.
pub(crate) fn host_changed(state: &mut State, t: Time, host: &str) {
    let on: Vec<JobId> = state
        .running
        .iter()
        .copied()
        .filter(|id| state.jobs.get(id).is_some_and(|j| j.alloc.iter().any(|(h, _)| h == host)))
        .collect();
    for id in on {
        let unheard = state.jobs.get(&id).is_some_and(|j| state.unheard(&j.alloc));
        let Some(j) = state.jobs.get_mut(&id) else { continue };
        let open = j.unknown.as_mut().and_then(|s| s.last_mut()).filter(|(_, until)| until.is_none());
        match (open, unheard) {
            (Some((_, until)), false) => *until = Some(t.0),
            (None, true) => j.unknown.get_or_insert_with(Default::default).push((t.0, None)),
            (Some(_), true) | (None, false) => {}
        }
    }
}

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
