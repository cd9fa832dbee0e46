//! Slurm's multifactor2 ticket-based fair-share (spec 001, "Fair-share
//! Factor"):
//!
//!   U_eff = max(U, 0.01 * S)        S, U: classic's normalized values
//!   F     = S / U_eff               0 when S is 0; at most 100
//!   T     = T_parent * S*F / SUM(S*F) over the active siblings
//!   factor of a user's jobs = T_user / T_max
//!
//! Only active associations (with pending jobs, or above one that has
//! some) get tickets; the root starts with [`ROOT_TICKETS`] ("the exact
//! value doesn't matter, only the proportions").

use super::{AccountTree, AssocId, FairshareRow, global_shares};

/// The tickets at the root: the spec's example's 1000.
pub const ROOT_TICKETS: f64 = 1000.0;

pub(super) fn compute(tree: &AccountTree, rows: &mut [FairshareRow], active: &[bool]) {
    global_shares(tree, rows);
    for &a in tree.order().iter().skip(1) {
        let r = &mut rows[a.0 as usize];
        r.effective_usage = r.norm_usage.max(0.01 * r.norm_shares);
        let f = if r.norm_shares > 0.0 { r.norm_shares / r.effective_usage } else { 0.0 };
        r.fairshare = Some(f);
        r.tickets = Some(0.0);
    }
    rows[0].tickets = Some(if active[0] { ROOT_TICKETS } else { 0.0 });
    // Each account's tickets go to its active children, in proportion to
    // S*F; a `Fairshare=parent` user competes with the account's own S*F.
    for &a in tree.sibling_parents() {
        let own = rows[a.0 as usize].clone();
        let weight = |c: AssocId, rows: &[FairshareRow]| -> f64 {
            let r = if tree.get(c).shares == super::RawShares::Parent { &own } else { &rows[c.0 as usize] };
            r.norm_shares * r.fairshare.unwrap_or(0.0)
        };
        let contenders: Vec<AssocId> =
            tree.competing(a).iter().chain(tree.stand_ins(a)).copied().filter(|c| active[c.0 as usize]).collect();
        let sum: f64 = contenders.iter().map(|&c| weight(c, rows)).sum();
        let t = own.tickets.unwrap_or(0.0);
        for c in contenders {
            let w = weight(c, rows);
            rows[c.0 as usize].tickets = Some(if sum > 0.0 { t * w / sum } else { 0.0 });
        }
        for &s in tree.stand_ins(a) {
            rows[s.0 as usize].effective_usage = own.effective_usage;
            rows[s.0 as usize].fairshare = own.fairshare;
        }
    }
    let max = tree
        .order()
        .iter()
        .copied()
        .filter(|&a| tree.get(a).is_user())
        .map(|a| rows[a.0 as usize].tickets.unwrap_or(0.0))
        .fold(0.0, f64::max);
    for &a in tree.order() {
        if tree.get(a).is_user() {
            let t = rows[a.0 as usize].tickets.unwrap_or(0.0);
            rows[a.0 as usize].factor = Some(if max > 0.0 { t / max } else { 0.0 });
        }
    }
}
