//! The events that change the engine's state ([`Engine::apply`]): what
//! its drivers (allotd, a restart's replay, the simulator) tell it.
//!
//! [`Engine::apply`]: crate::engine::Engine::apply

use crate::engine::{HostIdx, JobId, Slots};
use crate::model::JobSpec;
use crate::time::Time;

/// The events that change the engine's state.
#[derive(Clone, Debug)]
pub enum Event {
    Submit(JobSpec),
    /// A running job ended (or a pending job was removed), with the CPU
    /// time it used in all, seconds, and its exit code (0 is DONE, any
    /// other EXIT; what `bsub -w` conditions see).
    Finish {
        job: JobId,
        cpu_time: f64,
        exit: i32,
    },
    /// CPU time a running job used since it was last reported.
    Cpu {
        job: JobId,
        seconds: f64,
    },
    /// The memory a running job holds now, MB (what the memory-based
    /// fairshare adjustment counts, and what a multifactor policy bills).
    Memory {
        job: JobId,
        mb: f64,
    },
    /// The GPUs a running job holds now (what a multifactor policy bills;
    /// allot places no GPUs itself, a workload says what its jobs held).
    Gpus {
        job: JobId,
        count: u32,
    },
    /// Energy a job used since it last reported, joules (a multifactor
    /// policy bills it at once; for a job that ran, at its end).
    Energy {
        job: JobId,
        joules: f64,
    },
    /// A running job really ended at this time, before the `Finish` or
    /// `Requeue` that follows (heard late): see [`crate::run_end`].
    RanUntil {
        job: JobId,
        at: Time,
    },
    HostDown(HostIdx),
    HostUp(HostIdx),
    /// A pending job is held (`bstop`, LSF's PSUSP): it is not dispatched
    /// until it is released, and counts in no limit or pool meanwhile.
    Hold(JobId),
    /// A held job may be dispatched again (`bresume`).
    Release(JobId),
    /// A pending job's spec is replaced (`bmod`, `bswitch`), validated as
    /// a submission is; the job keeps its id, its place in submission
    /// order and its hold.
    Modify {
        job: JobId,
        spec: JobSpec,
    },
    /// A running job changes queue (`bswitch`; `spec` is its spec with
    /// the new queue): see `switch.rs` for what moves with it.
    Switch {
        job: JobId,
        spec: JobSpec,
    },
    /// A running job's run limit changes (`bmod -W`, which LSF allows on
    /// a running job; `None`: its queue's): it ends at the new one.
    RunLimit {
        job: JobId,
        limit: Option<u64>,
    },
    /// A running job goes back to pending with its id (`brequeue`),
    /// charged for what it used as if it had finished. It keeps its place
    /// in submission order: LSF requeues to the top of the queue by
    /// default. `hold` requeues it held (`brequeue -H`).
    Requeue {
        job: JobId,
        cpu_time: f64,
        hold: bool,
    },
    /// A job that finished comes back with its id (`brequeue` of a DONE or
    /// EXIT job), validated as a submission is.
    Resubmit {
        job: JobId,
        spec: JobSpec,
        hold: bool,
    },
    /// A job array's running element limit changes (`bmod -J "%n"`),
    /// named by the array's first element; `None` lifts it.
    ArrayLimit {
        array: JobId,
        limit: Option<u32>,
    },
    /// `bkill` of many elements of the array `array`: those pending leave,
    /// as [`Event::Finish`] with 130 takes one ([`crate::array_tail`]).
    RemoveElements {
        array: JobId,
        elements: crate::job_set::JobSet,
    },
    /// `bstop` (`hold`) or `bresume` of many elements of the array
    /// `array`: those pending are held or released, as [`Event::Hold`]
    /// and [`Event::Release`] do one ([`crate::array_tail`]).
    HoldElements {
        array: JobId,
        elements: crate::job_set::JobSet,
        hold: bool,
    },
    /// `bresize release`: a resizable job gives up slots, on each host
    /// named so many (`None`: all of them there); `cancel` cancels its
    /// pending resize request first (`-c`).
    Shrink {
        job: JobId,
        release: Vec<(HostIdx, Option<Slots>)>,
        cancel: bool,
    },
    /// `bresize cancel`: a resizable job's pending resize request goes.
    ResizeCancel(JobId),
    /// `bgadd`, `bgmod`, `bgdel` ([`crate::job_groups`]).
    JobGroup(crate::job_groups::JobGroupChange),
    /// A grow ([`crate::Decision::Grow`]) whose notification command failed: its
    /// slots go back and the request is tried again later.
    GrowFailed {
        job: JobId,
        alloc: Vec<(HostIdx, Slots)>,
    },
    /// A start the log records (a restart's replay): the pending job
    /// starts on `alloc` as the pass that wrote it placed it, with the
    /// same booking as a start decided here, whether or not a pass here
    /// would start it.
    Started {
        job: JobId,
        alloc: Vec<(HostIdx, Slots)>,
    },
    /// A preemption the log records where this engine's pass made none:
    /// the running job is suspended for `by`, booked as a pass does.
    Preempted {
        job: JobId,
        by: JobId,
    },
    /// The log's pass resumed a job suspended by preemption.
    Resumed(JobId),
    /// The next submission gets this id at least, the ids before it never
    /// given: a replay keeps the log's ids where its configuration
    /// refuses a job the log's took.
    SkipIdsTo(JobId),
    /// A reservation kept parked between passes lets go now
    /// ([`Setting::KeepParked`]): for a host query between passes.
    LetGoParked,
    /// How the engine reaches its decisions ([`Setting`]).
    Setting(Setting),
    /// A new configuration (`badmin reconfig`), taken as
    /// [`crate::reconfig`] says: refused, changing nothing, if a queue
    /// that holds jobs is gone.
    Reconfigure(Box<crate::model::EngineConfig>),
    /// A start this engine's pass made that the replayed log never
    /// recorded (a later release's pass deciding otherwise than the one
    /// that wrote the log) is undone: the job is pending again, having
    /// run for no time, with what it had before the start (its
    /// preemptions).
    Unstarted(JobId),
}

/// Second ways to the same decisions, each on by default but
/// `KeepParked`: tests turn one off to check that it decides as the
/// other way does, and the workload simulator keeps parked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// Whether expiring reservations may be handed over where they are
    /// ([`crate::handover`]). Off, every one lets go at once.
    Handover(bool),
    /// Whether a reservation parked in a pass may stay parked after it,
    /// until the next pass or event that looks at its hosts (off by
    /// default: every pass ends with its hosts let go). Taken back at the
    /// cycle after its expiry by the job that gave it up, or by the next
    /// job to reserve, it is handed over where it is instead of let go and
    /// reserved again host by host: the same decisions, as parking within
    /// a pass. While one is parked the hosts' own records still count it,
    /// so the host queries (reserved slots of a host, backfill windows,
    /// predicted starts) are wrong until it lets go
    /// ([`Event::LetGoParked`]): only a caller that asks none between
    /// passes, as the workload simulator, turns this on. Off, what is
    /// parked lets go at once.
    KeepParked(bool),
    /// Whether FCFS and fairshare units visit only the jobs whose ask may
    /// succeed (`skip.rs`). Off, every job is tried in turn.
    AskIndex(bool),
}
