//! Fairshare: who is entitled to what, what they used, and who goes next.
//!
//! - [`assign`]: share assignments (`[user, n]`, `[group, n]`, `[group@, n]`,
//!   `[default, n]`, `[others, n]`) and the user groups of `lsb.users`.
//! - [`tree`]: one share tree per fairshare policy (a queue, a cross-queue
//!   set, a host partition), built from a top-level assignment and the
//!   groups' own share trees.
//! - [`usage`]: usage accumulated at every node of a tree, decayed lazily.
//! - [`priority`]: LSF's dynamic priority formula and the fairshare
//!   adjustment hook.
//! - [`select`]: choosing the next user, top-down through the tree, in
//!   `O(depth * log(siblings))` per choice.
//! - [`table`]: the share table of every level (`bhpart -r`).
//!
//! Invariants: a node's usage is the sum of its children's usage plus what
//! was charged to it directly (collective nodes: a group without a share
//! tree, `others`); charging a job touches only the path from its leaf to
//! the root; nothing is walked periodically to decay usage.

pub mod assign;
pub mod priority;
pub mod select;
pub mod set;
pub mod table;
pub mod tree;
pub mod usage;

pub use assign::{GroupTable, Member, ShareAssignment, ShareTarget, UserGroup};
pub use priority::{FairshareAdjustment, LsfFactors, MemoryAdjustment, RecordedAdjustment};
pub use select::Selector;
pub use set::{Admission, FairshareSet, PolicyState, Scope};
pub use table::{ShareRow, ShareTable};
pub use tree::{NodeId, NodeKind, ShareError, ShareTree};
pub use usage::{JobCharge, Usage};
