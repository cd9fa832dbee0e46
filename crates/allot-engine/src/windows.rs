//! Backfill windows, as `bslots` shows them (spec 004, "Displaying
//! available slots for backfill jobs").
//!
//! A snapshot of the slots a job could use now that no running job holds:
//! the free slots, which a job may keep for as long as it runs (an
//! `UNLIMITED` window), and the slots reservations hold, which a backfill
//! job may use until the reservation's predicted start. Each distinct
//! predicted start gives one window: its run time is the time from now to
//! that start, and its slots are the free ones plus those of every
//! reservation predicted to start then or later. Longer windows come
//! first, so slots grow as run times shrink. Reservations with no
//! predicted start (they wait for a job with no run limit) lend nothing;
//! nor do hosts that are down or held by an exclusive compute unit job.

use std::collections::BTreeMap;

use crate::engine::Engine;
use crate::resreq::Expr;
use crate::time::Time;

/// What a reservation holds on a host: host, slots, MB.
type Held = (u32, u32, f64);

/// One window: `slots` slots for a job of at most `runtime` seconds
/// (`None`: as long as it likes), and where they are (host index, slots),
/// in host order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackfillWindow {
    pub slots: u32,
    pub runtime: Option<u64>,
    pub hosts: Vec<(crate::HostIdx, crate::Slots)>,
}

impl Engine {
    /// The backfill windows at `t` (module docs), on hosts where `select`
    /// holds (all without one).
    pub fn backfill_windows(&self, t: Time, select: Option<&Expr>) -> Vec<BackfillWindow> {
        debug_assert!(self.parked.is_none(), "a host query with a parked reservation");
        let usable = |h: u32| {
            let host = &self.hosts[h as usize];
            !host.blocked() && select.is_none_or(|s| s.holds(&|n| self.host_value(h, n)))
        };
        let mut free: BTreeMap<u32, u32> = BTreeMap::new();
        for (h, host) in self.hosts.iter().enumerate() {
            let n = host.unclaimed();
            if n > 0 && usable(h as u32) {
                free.insert(h as u32, n);
            }
        }
        // Reservations by predicted start, latest first.
        let mut lenders: Vec<(Time, &[Held])> = self
            .reservations
            .iter()
            .filter_map(|(&id, r)| {
                let p = r.predicted.unwrap_or_else(|| self.predicted_start(id, t))?;
                (p > t).then_some((p, r.hosts.as_slice()))
            })
            .collect();
        lenders.sort_by_key(|l| std::cmp::Reverse(l.0));
        let mut out = Vec::new();
        let row = |runtime: Option<u64>, hosts: &BTreeMap<u32, u32>| BackfillWindow {
            slots: hosts.values().sum(),
            runtime,
            hosts: hosts.iter().map(|(&h, &n)| (crate::HostIdx(h), crate::Slots(n))).collect(),
        };
        if !free.is_empty() {
            out.push(row(None, &free));
        }
        let mut hosts = free;
        for (i, &(p, held)) in lenders.iter().enumerate() {
            for &(h, n, _) in held.iter().filter(|x| x.1 > 0 && usable(x.0)) {
                *hosts.entry(h).or_default() += n;
            }
            let last_at_p = lenders.get(i + 1).is_none_or(|next| next.0 != p);
            let slots: u32 = hosts.values().sum();
            if last_at_p && slots > out.last().map_or(0, |w: &BackfillWindow| w.slots) {
                out.push(row(Some(p.0 - t.0), &hosts));
            }
        }
        out
    }
}
