//! allot's scheduling engine.
//!
//! A state machine with no I/O: time comes in as a value, decisions go out as
//! data. Nothing here knows whether the daemon or the simulator drives it
//! (see `ARCHITECTURE.md`). This first part holds the fairshare core of
//! spec 000 ("Fairshare Scheduling"): share assignments, share trees, usage
//! with lazy decay, LSF's dynamic priority, and choosing the next user.
//!
//! Invariants kept by every module:
//! - decisions never depend on hash-map order: maps that decide iterate in a
//!   fixed order (`BTreeMap`, `Vec` indexed by an id);
//! - floats are compared with `total_cmp`, and every tie ends in a documented
//!   total order.

mod admission;
mod arrays;
mod control;
mod cu;
pub mod deps;
pub mod dispatch;
pub mod engine;
pub mod explain;
mod handover;
mod hosts;
mod jobs;
mod limits;
pub mod model;
pub mod multifactor;
pub(crate) mod placement;
pub mod pools;
mod predict;
mod queries;
pub mod reasons;
pub mod reconfig;
pub mod reserve;
pub mod resreq;
pub mod shares;
mod skip;
pub mod slots;
mod start;
pub mod time;
mod windows;

pub use deps::{CmpOp, DepKind, Dependency};
pub use engine::{Decision, Engine, Event, JobId, KillReason, Rejection};
pub use model::{
    ArrayShape, ComputeUnitSpec, EngineConfig, HostAttrs, HostPick, HostSpec, JobSpec, ProcLimit, QueueLimits,
    QueueSpec, Reserve, RunLimitSpec,
};
pub use reasons::PendingReason;
pub use reconfig::ReconfigError;
pub use resreq::ResReq;
pub use time::Time;
pub use windows::BackfillWindow;
