//! allot's scheduling engine.
//!
//! A state machine with no I/O: time comes in as a value, decisions go out as
//! data. Nothing here knows whether the daemon or the simulator drives it
//! (see `ARCHITECTURE.md`). It holds the cluster's state and decides from
//! it: share trees and priorities (`shares`, `multifactor`), admission
//! (`admission`), the dispatch pass (`dispatch`), placement (`placement`,
//! `cu`), reservation and backfill (`reserve`, `handover`, `predict`),
//! preemption (`preempt`),
//! limits and pools, and what the commands ask of it (`queries`,
//! `reasons`, `explain`).
//!
//! [`Engine`]'s fields are the state decisions depend on; apart from them,
//! four groups that decide nothing: `caches` (what a pass derives from the
//! state to go fast, with the counts that say when it went stale),
//! `counters` (what it counts for reports), `switches` (each a second way
//! to the same decisions, for the tests that check it) and `scratch` (a
//! pass's working memory, taken whole by the pass and kept for reuse).
//!
//! Invariants kept by every module:
//! - decisions never depend on hash-map order: maps that decide iterate in a
//!   fixed order (`BTreeMap`, `Vec` indexed by an id);
//! - floats are compared with `total_cmp`, and every tie ends in a documented
//!   total order.

mod admission;
pub mod alloc_limits;
mod array_tail;
mod arrays;
pub mod bench_scenario;
mod compound;
mod control;
mod cu;
pub mod deps;
pub mod dispatch;
mod ends;
pub mod engine;
mod event;
pub mod explain;
mod groups;
mod handover;
mod hosts;
pub mod job_groups;
mod job_set;
mod jobs;
mod limits;
pub mod model;
pub mod multifactor;
pub mod pend_limits;
pub(crate) mod placement;
mod plan;
pub mod pools;
mod predict;
mod preempt;
mod queries;
pub mod reasons;
pub mod reconfig;
mod rejection;
pub mod reserve;
mod resize;
pub mod resreq;
mod run_end;
pub mod shared_res;
pub mod shares;
mod skip;
pub mod slots;
mod snapshot;
mod start;
mod switch;
pub mod time;
mod windows;

pub use array_tail::MADE_AHEAD;
pub use deps::{CmpOp, DepKind, Dependency};
pub use engine::{Decision, Engine, Event, HostIdx, JobId, KillReason, Rejection, Slots};
pub use event::Setting;
pub use job_set::JobSet;
pub use jobs::JobTable;
pub use model::{
    ArrayShape, ComputeUnitSpec, EngineConfig, HostAttrs, HostPick, HostSpec, JobSpec, PreemptFor, PreemptionSpec,
    ProcLimit, QueueLimits, QueueSpec, Reserve, RunLimitSpec,
};
pub use reasons::PendingReason;
pub use reconfig::ReconfigError;
pub use resreq::ResReq;
pub use time::Time;
pub use windows::BackfillWindow;
