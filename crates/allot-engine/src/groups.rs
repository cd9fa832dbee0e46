//! What the engine keeps beside the state its decisions depend on, in four
//! groups that decide nothing (see `lib.rs`): the caches that make a pass
//! fast, the counters for reports, the switches the property tests turn,
//! and a pass's working memory.

use crate::shares::NodeId;

/// What the engine counts, for reports and benchmarks: nothing is decided
/// by them. Kept across a reconfiguration.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub(crate) struct Counters {
    /// Passes that considered jobs (not those that found nothing changed).
    pub(crate) passes: u64,
    /// Pending jobs tried in passes, in all ([`Engine::tries`]).
    pub(crate) tries: u64,
    /// Expired reservations handed over where they were ([`crate::handover`]).
    pub(crate) handovers: u64,
    /// Reservations made from nothing, and given up at their reservation
    /// time ([`Engine::reservation_counts`]).
    pub(crate) rsv_made: u64,
    pub(crate) rsv_expired: u64,
    /// Reservations standing at the end of each pass, summed.
    pub(crate) rsv_standing: u64,
    /// Reserved slots × seconds, each pass's reserved slots counted until
    /// the next call of the pass; and of those, the slots of reservations
    /// known to have no predicted start, which no backfill job may use
    /// ([`Engine::reserved_slot_seconds`]).
    pub(crate) rsv_slot_seconds: f64,
    pub(crate) rsv_unpredicted_slot_seconds: f64,
    /// When the last pass ended, with its reserved and unpredicted slots.
    pub(crate) rsv_last: Option<(crate::time::Time, u64, u64)>,
}

/// Where the engine may work two ways to the same decisions: the faster
/// way by default, each switch off only in the tests that check just
/// that. Kept across a reconfiguration.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Switches {
    /// Expiring reservations park ([`crate::handover`]) rather than let
    /// go at once ([`crate::event::Setting::Handover`]).
    pub(crate) handover: bool,
    /// A parked reservation may stay parked between passes
    /// ([`crate::event::Setting::KeepParked`]).
    pub(crate) keep_parked: bool,
    /// Passes visit only the jobs whose ask may succeed rather than every
    /// job ([`crate::event::Setting::AskIndex`]).
    pub(crate) ask_index: bool,
}

impl Default for Switches {
    fn default() -> Self {
        Switches { handover: true, keep_parked: false, ask_index: true }
    }
}

/// A pass's working memory, kept between passes only so that its
/// allocations are reused: nothing in it outlives the turn that fills it.
/// A pass takes it out of the engine whole ([`Engine::schedule`]) and
/// lends its parts to the units it dispatches.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Each policy's selector of the last pass ([`crate::shares::Selector::reuse`]).
    pub(crate) selectors: Vec<Option<crate::shares::Selector>>,
    /// A fairshare unit's turn: the accounts that may start, reserve or
    /// backfill a job, with their pending jobs.
    pub(crate) live_accounts: Vec<(NodeId, u64)>,
    /// Per share account, the fairshare turn it was last tried in and the
    /// last job of the account tried then: entries of earlier turns are
    /// stale (nothing is cleared between turns); `turn` counts them.
    pub(crate) cursors: Vec<Option<(u64, crate::dispatch::Place)>>,
    pub(crate) turn: u64,
    /// Which asks may succeed in the unit dispatched ([`crate::skip::Verdicts`]).
    pub(crate) verdicts: crate::skip::Verdicts,
    /// What failed in the pass ([`crate::skip::Failed`]).
    pub(crate) failed: crate::skip::Failed,
}

/// A copy of the engine (a snapshot's, taken on the dispatcher and written
/// out on the log's writer) has a working memory of its own, empty.
impl Clone for Scratch {
    fn clone(&self) -> Scratch {
        Scratch::new(self.selectors.len())
    }
}

impl Scratch {
    pub(crate) fn new(policies: usize) -> Scratch {
        Scratch { selectors: vec![None; policies], ..Default::default() }
    }
}

/// What the engine keeps to make a pass fast: each is derived from the
/// state (and could be computed again from it) or says when what was
/// derived went stale. The decisions are those made without them; where a
/// cache may be bypassed, a switch does it for the tests that check so
/// ([`Switches::ask_index`] for the asks that may succeed). Not kept
/// across a reconfiguration: the engine built again derives afresh.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Caches {
    /// Counts of reservations given up (slots freed) and of changes that
    /// may move predicted starts: what a pass remembers of failures
    /// ([`crate::skip::Failed`]) holds while both stand.
    pub(crate) rsv_freed: u64,
    pub(crate) rsv_epoch: u64,
    /// Counts changes of what reservations hold; with `rsv_epoch`, the key
    /// of what [`crate::predict::RsvIndex`] keeps.
    pub(crate) rsv_changes: u64,
    /// Reservations by predicted start, and the slots they hold in all.
    pub(crate) rsv_index: crate::predict::RsvIndex,
    /// Share accounts whose reserved slots changed since the pass's
    /// selector (which keeps priorities) last looked: their priorities are
    /// computed again.
    pub(crate) share_touched: Vec<(usize, NodeId)>,
    /// Hosts down or held by an exclusive compute unit job (with none,
    /// predicted starts may count slots by host set).
    pub(crate) hosts_blocked: u32,
    /// Whether no host has more slots than CPUs (so the CPU cap of
    /// parallel jobs never binds).
    pub(crate) slots_within_cpus: bool,
    /// Whether a queue plans its reservations ([`crate::plan`]): then a
    /// running job's CPU limit stands in for a missing run limit
    /// ([`crate::Engine`]'s `expected_end`). Set with the configuration.
    #[serde(default)]
    pub(crate) planned: bool,
}

impl Caches {
    pub(crate) fn new(slots_within_cpus: bool, planned: bool) -> Caches {
        Caches {
            rsv_freed: 0,
            rsv_epoch: 0,
            rsv_changes: 0,
            rsv_index: Default::default(),
            share_touched: Vec::new(),
            hosts_blocked: 0,
            slots_within_cpus,
            planned,
        }
    }
}
