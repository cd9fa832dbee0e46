//! `bacct`: accounting of finished jobs from the event log, and LSF's
//! summary of them.

use serde::{Deserialize, Serialize};

use crate::JobRef;

/// Which finished jobs `bacct` accounts: all of these must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcctQuery {
    /// `-u`: these users' (none: the caller's; `all`: everyone's).
    pub users: Vec<String>,
    /// `-q`: these queues' (none: all).
    pub queues: Vec<String>,
    /// Job ids (none: all).
    pub jobs: Vec<JobRef>,
    /// `-S`, `-D`, `-C`: submitted, dispatched, completed within these
    /// times (seconds since the epoch, both ends included).
    pub submitted: Option<(u64, u64)>,
    pub dispatched: Option<(u64, u64)>,
    pub completed: Option<(u64, u64)>,
    /// `-l`: each job, not only the summary.
    pub long: bool,
}

/// One finished run of a job, as `bacct -l` shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AcctRun {
    pub job: JobRef,
    pub user: String,
    pub queue: String,
    pub project: Option<String>,
    pub command: String,
    pub from_host: String,
    pub cwd: String,
    pub submitted: u64,
    /// When it started and on which hosts; `None` for a job killed while
    /// pending.
    pub started: Option<(u64, Vec<(String, u32)>)>,
    pub ended: u64,
    pub exit: i32,
    pub cpu_time: f64,
    pub max_mem_kb: u64,
}

impl AcctRun {
    pub fn done(&self) -> bool {
        self.exit == 0
    }
    /// Seconds in the queue before it started (all of its life when it
    /// never did).
    pub fn wait(&self) -> u64 {
        self.started.as_ref().map_or(self.ended, |s| s.0).saturating_sub(self.submitted)
    }
    pub fn turnaround(&self) -> u64 {
        self.ended.saturating_sub(self.submitted)
    }
    pub fn run_time(&self) -> u64 {
        self.started.as_ref().map_or(0, |s| self.ended.saturating_sub(s.0))
    }
    /// CPU time over turnaround time.
    pub fn hog_factor(&self) -> f64 {
        match self.turnaround() {
            0 => 0.0,
            t => self.cpu_time / t as f64,
        }
    }
}

/// Smallest, largest and sum of one figure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub count: u64,
    pub total: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn add(&mut self, v: f64) {
        if self.count == 0 {
            (self.min, self.max) = (v, v);
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.count += 1;
        self.total += v;
    }
    pub fn average(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.total / self.count as f64 }
    }
}

/// LSF's `bacct` summary of the runs accounted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AcctSummary {
    pub done: u64,
    pub exited: u64,
    pub cpu: Spread,
    /// Waits and turnarounds, seconds.
    pub wait: Spread,
    pub turnaround: Spread,
    pub hog: Spread,
    /// Turnaround over run time, of the runs that ran.
    pub expansion: Spread,
    pub run: Spread,
    /// The earliest submission and the latest end.
    pub begin: u64,
    pub end: u64,
}

impl AcctSummary {
    pub fn add(&mut self, r: &AcctRun) {
        let first = self.done + self.exited == 0;
        if r.done() {
            self.done += 1;
        } else {
            self.exited += 1;
        }
        self.cpu.add(r.cpu_time);
        self.wait.add(r.wait() as f64);
        self.turnaround.add(r.turnaround() as f64);
        self.hog.add(r.hog_factor());
        if r.started.is_some() {
            self.run.add(r.run_time() as f64);
            self.expansion.add(r.turnaround() as f64 / r.run_time().max(1) as f64);
        }
        self.begin = if first { r.submitted } else { self.begin.min(r.submitted) };
        self.end = self.end.max(r.ended);
    }

    pub fn jobs(&self) -> u64 {
        self.done + self.exited
    }

    /// Jobs an hour over the span from the first submission to the last
    /// end.
    pub fn throughput(&self) -> f64 {
        let hours = self.end.saturating_sub(self.begin) as f64 / 3600.0;
        if hours > 0.0 { self.jobs() as f64 / hours } else { 0.0 }
    }
}

/// `bacct`'s answer: the summary, and (`-l`) the runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AcctAnswer {
    pub summary: AcctSummary,
    pub runs: Vec<AcctRun>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// LSF's figures: wait is start less submission, turnaround end less
    /// submission, hog factor CPU over turnaround, throughput jobs an hour
    /// from the first submission to the last end.
    #[test]
    fn the_summary_counts_as_lsf_counts() {
        let ran = AcctRun {
            submitted: 1000,
            started: Some((1010, vec![("h".into(), 1)])),
            ended: 1110,
            exit: 0,
            cpu_time: 50.0,
            ..AcctRun::default()
        };
        let failed = AcctRun {
            submitted: 1200,
            started: Some((1300, vec![])),
            ended: 4600,
            exit: 2,
            cpu_time: 0.0,
            ..ran.clone()
        };
        let killed = AcctRun { submitted: 2000, started: None, ended: 2030, exit: 130, cpu_time: 0.0, ..ran.clone() };
        let mut s = AcctSummary::default();
        for r in [&ran, &failed, &killed] {
            s.add(r);
        }
        assert_eq!((s.done, s.exited, s.jobs()), (1, 2, 3));
        assert_eq!((ran.wait(), ran.turnaround(), ran.run_time()), (10, 110, 100));
        assert_eq!((killed.wait(), killed.run_time()), (30, 0));
        assert_eq!((s.wait.min, s.wait.max, s.wait.total), (10.0, 100.0, 140.0));
        assert_eq!((s.turnaround.min, s.turnaround.max), (30.0, 3400.0));
        assert!((s.hog.max - 50.0 / 110.0).abs() < 1e-12);
        assert_eq!((s.run.count, s.run.total), (2, 3400.0), "a job killed while pending did not run");
        assert_eq!((s.begin, s.end), (1000, 4600));
        assert!((s.throughput() - 3.0).abs() < 1e-12, "three jobs in one hour");
        assert_eq!(s.cpu.average(), 50.0 / 3.0);
    }
}
