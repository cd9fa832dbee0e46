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
//! LF is computed as Slurm computes it: S and U first (the NormShares and
//! EffectvUsage `sshare` shows), then their quotient. Two associations
//! whose shares and usage are in the same proportion may then differ in
//! the last bit, and do not tie: Slurm's own regression test of fair tree
//! (testsuite/expect/test24.4) ranks uD2 (40/170 over 20/110) below uD3
//! (50/170 over 25/110) for exactly that reason, and ranks are what a
//! site compares. Ties are exact `==` of those values (Slurm keeps U and
//! the quotient in long double; in the cases we know, the double
//! quotients order alike).
//!
//! Ties, fair tree (Slurm's documentation, "Ties", and its
//! `_calc_tree_fs`): siblings are visited by LF, highest first, a user
//! before an account of the same LF. A user takes the count's current
//! value as its rank unless it ties with the sibling before it, whose rank
//! it shares; the count goes down by one for every user, tied or not (5,
//! 5, 3). An account tied with the sibling before it (a user, or an
//! account merged with it) passes that rank on: its first child starts
//! tied. Sibling accounts of the same LF have their children merged before
//! descending. A `Fairshare=parent` user ranks as a user of infinite LF
//! among its account's children.
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
        // U over the parent's usage, as Slurm's usage_efctv: with
        // `Fairshare=parent` users' usage in it (aD's 110 in test24.4,
        // where its competing children used 80).
        let u_sum: f64 = rows[a.0 as usize].raw_usage;
        for &c in competing {
            let (s, u) = (tree.raw_shares(c), rows[c.0 as usize].raw_usage);
            let r = &mut rows[c.0 as usize];
            r.norm_shares = if s_sum > 0.0 { s / s_sum } else { 0.0 };
            r.effective_usage = if u_sum > 0.0 { u / u_sum } else { 0.0 };
            r.level_fs = Some(level_fs(r.norm_shares, r.effective_usage));
        }
        let own = &rows[a.0 as usize];
        let own = (own.norm_shares, own.effective_usage, own.level_fs);
        for &s in tree.stand_ins(a) {
            let r = &mut rows[s.0 as usize];
            (r.norm_shares, r.effective_usage, r.level_fs) = own;
            // Slurm shows a `Fairshare=parent` user with its account's
            // normalized shares, its own usage over the account's, and no
            // level fair-share (test24.4's uD1: 0.240385, 20/110, blank).
            if ties == Ties::FairTree {
                r.effective_usage = if u_sum > 0.0 { r.raw_usage / u_sum } else { 0.0 };
                r.level_fs = None;
            }
        }
    }
    let n = tree.user_count();
    let mut ranks = vec![None; tree.len()];
    match ties {
        Ties::FairTree => {
            let (mut rank, mut count) = (n, n);
            visit_fair_tree(tree, rows, &[AssocId::ROOT], (&mut rank, &mut count), false, &mut ranks);
        }
        Ties::Flux => {
            let mut counter = n;
            visit_flux(tree, rows, &[AssocId::ROOT], &mut counter, &mut ranks);
        }
    }
    for (i, rank) in ranks.into_iter().enumerate() {
        if let Some(rank) = rank {
            let f = rank as f64 / n as f64;
            rows[i].fairshare = Some(f);
            rows[i].factor = Some(f);
        }
    }
}

/// Slurm's `_calc_assoc_fs`: 0 without shares, else S / U (infinite
/// without usage).
fn level_fs(norm_shares: f64, effective_usage: f64) -> f64 {
    if norm_shares <= 0.0 {
        0.0
    } else if effective_usage <= 0.0 {
        f64::INFINITY
    } else {
        norm_shares / effective_usage
    }
}

/// Fair tree: ranks the users under `accounts` (one account, or tied
/// ones merged), as Slurm's `_calc_tree_fs` does (module docs). `rank` is
/// the rank a tie shares, `count` the count that goes down by one for
/// every user; `tied`: the first child starts tied with what came before.
fn visit_fair_tree(
    tree: &AccountTree,
    rows: &[FairshareRow],
    accounts: &[AssocId],
    (rank, count): (&mut usize, &mut usize),
    tied: bool,
    ranks: &mut [Option<usize>],
) {
    // (is an account, LF, order): by LF, highest first; users before
    // accounts; then tree order (merged lists keep the accounts' order).
    let stand_ins = accounts.iter().flat_map(|&a| tree.stand_ins(a)).map(|&s| (s, f64::INFINITY));
    let competing =
        accounts.iter().flat_map(|&a| tree.competing(a)).map(|&c| (c, rows[c.0 as usize].level_fs.unwrap_or(0.0)));
    let mut kids: Vec<(bool, f64, usize, AssocId)> =
        stand_ins.chain(competing).enumerate().map(|(i, (a, lf))| (!tree.get(a).is_user(), lf, i, a)).collect();
    kids.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)).then(a.2.cmp(&b.2)));
    let mut prev: Option<f64> = None;
    let mut i = 0;
    while i < kids.len() {
        let (account, lf, _, a) = kids[i];
        let tied_here = if i == 0 { tied } else { prev == Some(lf) };
        if account {
            let mut j = i + 1;
            while j < kids.len() && kids[j].0 && kids[j].1 == lf {
                j += 1;
            }
            let merged: Vec<AssocId> = kids[i..j].iter().map(|k| k.3).collect();
            visit_fair_tree(tree, rows, &merged, (&mut *rank, &mut *count), tied_here, ranks);
            i = j;
        } else {
            if !tied_here {
                *rank = *count;
            }
            ranks[a.0 as usize] = Some(*rank);
            *count -= 1;
            i += 1;
        }
        prev = Some(lf);
    }
}

/// flux: ranks the users under `accounts` (one bank, or tied ones merged).
fn visit_flux(
    tree: &AccountTree,
    rows: &[FairshareRow],
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
    // Banks before users, then highest LF first, then the order of the
    // children (tree order; merged lists keep the accounts' order).
    let mut kids: Vec<(bool, f64, usize, AssocId)> = accounts
        .iter()
        .flat_map(|&a| tree.competing(a))
        .enumerate()
        .map(|(i, &a)| (tree.get(a).is_user(), rows[a.0 as usize].level_fs.unwrap_or(0.0), i, a))
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
        if !accounts.is_empty() {
            visit_flux(tree, rows, &accounts, counter, ranks);
        }
        // Users never tie: each its own rank.
        for u in users {
            ranks[u.0 as usize] = Some(*counter);
            *counter -= 1;
        }
        i = j;
    }
}
