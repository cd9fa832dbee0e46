//! A job as the book has it ([`BookJob`]): its record as submitted, and
//! what the commands show of it as the records left it. The one truth
//! for a job beside the engine's (which has what scheduling needs):
//! allotd shows it, its snapshots save it, a restart's replay rebuilds it.

use std::borrow::Cow;

use allot_engine::JobId;
use allot_proto::{JobRef, JobStatus};

use crate::{JobRecord, Term};

/// A job's spans of UNKWN (a host of its allocation could not be
/// reached): from, and until (none while it lasts).
pub type Spans = Vec<(u64, Option<u64>)>;

/// What the book knows of a job beyond the engine.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct BookJob {
    /// As submitted; its environment is shared with every job submitted
    /// with the same one (see [`super::Book::envs`]).
    pub record: JobRecord,
    pub status: JobStatus,
    pub submit_time: u64,
    pub start_time: Option<u64>,
    pub end_time: Option<u64>,
    pub exit: Option<i32>,
    pub cpu_time: Option<f64>,
    pub alloc: Vec<(String, u32)>,
    /// `brequeue` of the running job: when its end is collected it goes
    /// back to pending, held if `true`.
    pub requeue: Option<bool>,
    /// Why it is being killed, when it is: `bkill`, or a limit. Its end
    /// shows the reason (a [`crate::Record::Killed`], so a restart knows
    /// it too), and after a `bkill` is not requeued by its queue's
    /// REQUEUE_EXIT_VALUES ([`crate::effects::end_event`]).
    pub killed: Option<Term>,
    /// A job array's element: its array's id (its first element's) and its
    /// index.
    pub array: Option<(JobId, u32)>,
    /// Its job number, as its user was told it (an array's elements share
    /// it; [`super::Numbers`]).
    pub number: u64,
    /// What it uses while it runs, as last measured: CPU seconds (all of
    /// them charged to fairshare by now) and resident memory, KB.
    pub usage: Option<(f64, u64)>,
    /// The largest resident memory seen, KB.
    pub max_mem_kb: u64,
    /// Why it ended without running its command, when it could not start.
    pub exit_reason: Option<Box<str>>,
    /// How many times it was started: its current (or last) run's number,
    /// by which an agent tells its runs apart.
    pub attempt: u32,
    /// How many times its pre-execution command (`-E`) failed.
    pub pre_exec_failures: u32,
    /// When it was UNKWN, if ever ([`super::Book::host_reached`]).
    pub unknown: Option<Box<Spans>>,
}

impl BookJob {
    /// The job as the commands name it: `123`, or `123[4]`.
    pub fn job_ref(&self) -> JobRef {
        JobRef { id: self.number, index: self.array.map_or(0, |a| a.1) }
    }

    /// Its name as `bjobs` shows it: an element's is `name[index]`.
    pub fn display_name(&self) -> Cow<'_, str> {
        match self.array {
            Some((_, index)) => Cow::Owned(format!("{}[{index}]", self.record.name)),
            None => Cow::Borrowed(&self.record.name),
        }
    }

    /// Pending again after a requeue, with nothing of its last run shown.
    pub fn back_to_pending(&mut self, hold: bool) {
        self.status = if hold { JobStatus::Psusp } else { JobStatus::Pend };
        self.start_time = None;
        self.end_time = None;
        self.exit = None;
        self.cpu_time = None;
        self.alloc.clear();
        self.usage = None;
        self.max_mem_kb = 0;
        self.killed = None;
        self.exit_reason = None;
    }
}
