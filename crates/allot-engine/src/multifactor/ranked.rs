//! The two ranking policies: Slurm's fair tree and flux-accounting's
//! weighted tree. Both compute, per sibling set,
//!
//!   LF = S / U,  S = S_self / S_self+siblings,  U = U_self / U_self+siblings
//!
//! (flux calls it the weight), visit the tree depth first with the highest
//! LF first, and give each user association `rank / N`, with `rank`
//! counting down from `N`, the number of user associations. LF is 0 with
//! no shares and infinite with shares but no usage.
//!
//! Equality of LF values decides ties. LF is computed as one division,
//! `(S_self * U_siblings) / (U_self * S_siblings)`: two associations whose
//! shares and usage are in the same proportion (whole numbers, as shares
//! and usage in seconds are, below 2^53) get bit-identical LFs, and ties
//! are exact `==` of those values; no tolerance, which would not be
//! transitive.
//!
//! Ties, fair tree (Slurm's documentation, "Ties"): sibling users with the
//! same LF get the same rank; a user with the same LF as a sibling account
//! gets the rank of that account's highest ranked user; sibling accounts
//! with the same LF have their children merged before descending. A rank
//! given to tied users is the highest of the tie, and the count goes on
//! below all of them (5, 5, 3).
//!
//! flux-accounting ("Fair-Share Calculation"): banks are "sorted in
//! descending order by weight", then the users of each bank; so in a set
//! with both, the sub-banks (and everything under them) rank above the
//! users. Tied banks are merged as in fair tree; users never tie: equal
//! weights rank in tree order, each user its own rank.

use super::{AccountTree, AssocId, FairshareRow};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Ties {
    FairTree,
    Flux,
}

pub(super) fn compute(tree: &AccountTree, rows: &mut [FairshareRow], ties: Ties) {
    for &a in tree.sibling_parents() {
        let competing = tree.competing(a);
        let s_sum: f64 = competing.iter().map(|&c| tree.raw_shares(c)).sum();
        let u_sum: f64 = competing.iter().map(|&c| rows[c.0 as usize].raw_usage).sum();
        for &c in competing {
            let (s, u) = (tree.raw_shares(c), rows[c.0 as usize].raw_usage);
            let r = &mut rows[c.0 as usize];
            r.norm_shares = if s_sum > 0.0 { s / s_sum } else { 0.0 };
            r.effective_usage = if u_sum > 0.0 { u / u_sum } else { 0.0 };
            r.level_fs = Some(level_fs(s, u, s_sum, u_sum));
        }
        let own = &rows[a.0 as usize];
        let own = (own.norm_shares, own.effective_usage, own.level_fs);
        for &s in tree.stand_ins(a) {
            let r = &mut rows[s.0 as usize];
            (r.norm_shares, r.effective_usage, r.level_fs) = own;
        }
    }
    let n = tree.user_count();
    let mut counter = n;
    let mut ranks = vec![None; tree.len()];
    visit(tree, rows, ties, &[AssocId::ROOT], &mut counter, &mut ranks);
    for (i, rank) in ranks.into_iter().enumerate() {
        if let Some(rank) = rank {
            let f = rank as f64 / n as f64;
            rows[i].fairshare = Some(f);
            rows[i].factor = Some(f);
        }
    }
}

fn level_fs(s: f64, u: f64, s_sum: f64, u_sum: f64) -> f64 {
    if s <= 0.0 {
        0.0
    } else if u <= 0.0 {
        f64::INFINITY
    } else {
        (s * u_sum) / (u * s_sum)
    }
}

/// Ranks the users under `accounts` (one account, or tied ones merged).
fn visit(
    tree: &AccountTree,
    rows: &[FairshareRow],
    ties: Ties,
    accounts: &[AssocId],
    counter: &mut usize,
    ranks: &mut [Option<usize>],
) {
    let stand_ins: Vec<AssocId> = accounts.iter().flat_map(|&a| tree.stand_ins(a)).copied().collect();
    let top = *counter;
    for &s in &stand_ins {
        ranks[s.0 as usize] = Some(top);
    }
    *counter -= stand_ins.len();
    // Highest LF first; flux: banks before users; then the order of the
    // children (tree order; merged lists keep the accounts' order).
    let mut kids: Vec<(u8, f64, usize, AssocId)> = accounts
        .iter()
        .flat_map(|&a| tree.competing(a))
        .enumerate()
        .map(|(i, &a)| {
            let kind = match ties {
                Ties::FairTree => 0,
                Ties::Flux => u8::from(tree.get(a).is_user()),
            };
            (kind, rows[a.0 as usize].level_fs.unwrap_or(0.0), i, a)
        })
        .collect();
    kids.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut i = 0;
    while i < kids.len() {
        let mut j = i + 1;
        while j < kids.len() && kids[j].0 == kids[i].0 && kids[j].1 == kids[i].1 {
            j += 1;
        }
        let group = &kids[i..j];
        let accounts: Vec<AssocId> = group.iter().map(|k| k.3).filter(|&a| !tree.get(a).is_user()).collect();
        let users = group.iter().map(|k| k.3).filter(|&a| tree.get(a).is_user());
        let start = *counter;
        if !accounts.is_empty() {
            visit(tree, rows, ties, &accounts, counter, ranks);
        }
        for u in users {
            ranks[u.0 as usize] = Some(match ties {
                Ties::FairTree => start,
                Ties::Flux => *counter,
            });
            *counter -= 1;
        }
        i = j;
    }
}
