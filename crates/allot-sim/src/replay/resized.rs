//! The replay's part in preemption and resizing: runs the replay's pass
//! suspends, resumes or grows, and runs whose log shows a suspension the
//! replay's pass did not make (or the other way round), which move.

use allot_engine::{HostIdx, JobId, Slots};

use super::{Due, RecordedRun, Replay};
use crate::history::hosts_text;

impl Replay<'_> {
    /// The replay's pass grew an autoresizable job: its run's record shows
    /// the allocation it has.
    pub(super) fn grown(&mut self, job: u64, alloc: &[(HostIdx, Slots)]) {
        let names: Vec<(String, u32)> =
            alloc.iter().map(|&(h, n)| (self.engine.host_name(h).to_string(), n.0)).collect();
        let Some(live) = self.jobs.get_mut(&JobId(job)).and_then(|j| j.run.as_mut()) else { return };
        let mut hosts: Vec<(String, u32)> = live
            .hosts
            .split_whitespace()
            .filter_map(|e| e.rsplit_once('*').and_then(|(h, n)| Some((h.to_string(), n.parse().ok()?))))
            .collect();
        for (h, n) in names {
            match hosts.iter_mut().find(|e| e.0 == h) {
                Some(e) => e.1 += n,
                None => hosts.push((h, n)),
            }
        }
        live.slots = hosts.iter().map(|e| e.1).sum();
        live.hosts = hosts_text(hosts.iter().map(|(h, n)| (h.as_str(), *n)));
    }

    /// The replay's pass suspended (`stop`) or resumed a job. A run in
    /// step stays so where the log did the same then; otherwise it moves:
    /// it runs, in all, as long as the log's run ran, and a suspension
    /// holds its end back.
    pub(super) fn suspended(&mut self, t: u64, job: u64, stop: bool) {
        let in_step = self.in_step(job);
        let last = self.runs_seen(job).checked_sub(1);
        let recorded = last.and_then(|k| self.h.run(job, k));
        let logged = recorded
            .is_some_and(|r| r.suspended.iter().any(|&(at, until)| if stop { at == t } else { until == Some(t) }));
        let length = recorded.and_then(RecordedRun::length);
        let Some(live) = self.jobs.get_mut(&JobId(job)).and_then(|j| j.run.as_mut()) else { return };
        if in_step && !logged {
            // Out of step from here: what it has left is the log's run's
            // running time less what it ran here.
            live.in_sync = false;
            self.diverged = true;
            let left = length.map(|l| l.saturating_sub(live.ran(t)));
            live.end_at = left.map(|l| t.saturating_add(l));
        }
        if stop {
            live.suspended = Some(t);
            live.left = live.end_at.take().map(|e| e.saturating_sub(t));
        } else if let Some(since) = live.suspended.take() {
            live.paused += t.saturating_sub(since);
            if let Some(left) = live.left.take() {
                live.end_at = Some(t.saturating_add(left));
            }
        }
        if let Some(end) = live.end_at.filter(|_| !live.in_sync) {
            let attempt = self.jobs.get(&JobId(job)).map_or(0, |j| j.attempts.saturating_sub(1));
            self.due.push((end, job, Due::End(attempt)));
        }
    }

    /// A run in step whose log's run was suspended or resumed where the
    /// replay's was not: it moves, to end when it has run as long as the
    /// log's run did.
    pub(super) fn log_moved(&mut self, t: u64, job: u64) {
        let last = self.runs_seen(job).checked_sub(1);
        let length = last.and_then(|k| self.h.run(job, k)).and_then(RecordedRun::length);
        let Some(j) = self.jobs.get_mut(&JobId(job)) else { return };
        let attempt = j.attempts.saturating_sub(1);
        let Some(live) = j.run.as_mut() else { return };
        live.in_sync = false;
        self.diverged = true;
        let left = length.map(|l| l.saturating_sub(live.ran(t)));
        match live.suspended {
            Some(_) => live.left = left,
            None => {
                live.end_at = left.map(|l| t.saturating_add(l));
                if let Some(end) = live.end_at {
                    self.due.push((end, job, Due::End(attempt)));
                }
            }
        }
    }
}
