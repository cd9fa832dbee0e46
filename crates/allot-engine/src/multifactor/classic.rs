//! Slurm's classic fair-share factor (Slurm's "Classic Fairshare
//! Algorithm"):
//!
//!   S  = (S_self / S_siblings) * (S_parent / S_parent_siblings) * ...
//!   U  = U_self / U_total
//!   UE = U                                     just under root
//!   UE = U + (UE_parent - U) * S_self/S_all_siblings   deeper (raw shares)
//!   F  = 2^(-UE/S/d)                           0 when S is 0
//!
//! computed top-down, accounts before their users.
//!
//! Spec 002's factor ([`super::FairsharePolicy::FluxSpec`]) is the same
//! `F = 2^(-UE/S)` with `UE = U` at every depth (`inherit` false): an
//! association's own share of the usage against its share of the
//! machine, so that one whose usage matches its share is at 0.5 however
//! deep it is.

use super::{AccountTree, AssocId, FairshareRow, global_shares};

pub(super) fn compute(tree: &AccountTree, rows: &mut [FairshareRow], dampening: f64, inherit: bool) {
    global_shares(tree, rows);
    let d = if dampening > 0.0 { dampening } else { 1.0 };
    for &a in tree.sibling_parents().iter().filter(|_| inherit) {
        let competing = tree.competing(a);
        let sum: f64 = competing.iter().map(|&c| tree.raw_shares(c)).sum();
        let parent_ue = rows[a.0 as usize].effective_usage;
        for &c in competing {
            let u = rows[c.0 as usize].norm_usage;
            rows[c.0 as usize].effective_usage =
                if a == AssocId::ROOT || sum == 0.0 { u } else { u + (parent_ue - u) * tree.raw_shares(c) / sum };
        }
        for &s in tree.stand_ins(a) {
            rows[s.0 as usize].effective_usage = parent_ue;
        }
    }
    for &a in tree.order().iter().skip(1) {
        let r = &mut rows[a.0 as usize];
        if !inherit {
            r.effective_usage = r.norm_usage;
        }
        let f = if r.norm_shares > 0.0 { (-r.effective_usage / r.norm_shares / d).exp2() } else { 0.0 };
        r.fairshare = Some(f);
        if tree.get(a).is_user() {
            r.factor = Some(f);
        }
    }
}
