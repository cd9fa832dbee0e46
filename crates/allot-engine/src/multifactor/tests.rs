use super::*;

fn close(a: f64, b: f64, eps: f64) -> bool {
    (a - b).abs() <= eps
}

#[track_caller]
fn assert_close(got: Option<f64>, want: f64, eps: f64, what: &str) {
    let g = got.unwrap_or_else(|| panic!("{what}: no value"));
    assert!(g == want || close(g, want, eps), "{what}: {g} is not {want} (±{eps})");
}

/// Slurm's classic example (also spec 001's): A 40 and D 60 under root; B
/// 30 and C 10 under A; E 25 and F 35 under D; user 1 in B, users 2 and 3
/// (one share each) in C, user 4 in E, user 5 in F. Users 1, 2 and 4 used
/// 0.2, 0.25 and 0.25 of the machine: the other 0.3 was used outside
/// these accounts, here by a user with no shares under root (the total is
/// the root's usage, as Slurm's).
struct Example {
    tree: AccountTree,
    users: [AssocId; 5],
    accounts: [AssocId; 6],
    usage: Vec<f64>,
}

fn example() -> Example {
    let mut t = AccountTree::new();
    let c = |n| RawShares::Count(n);
    let a = t.add_account(AssocId::ROOT, "A", c(40)).expect("A");
    let d = t.add_account(AssocId::ROOT, "D", c(60)).expect("D");
    let b = t.add_account(a, "B", c(30)).expect("B");
    let cc = t.add_account(a, "C", c(10)).expect("C");
    let e = t.add_account(d, "E", c(25)).expect("E");
    let f = t.add_account(d, "F", c(35)).expect("F");
    let u1 = t.add_user(b, "user1", c(1)).expect("u1");
    let u2 = t.add_user(cc, "user2", c(1)).expect("u2");
    let u3 = t.add_user(cc, "user3", c(1)).expect("u3");
    let u4 = t.add_user(e, "user4", c(1)).expect("u4");
    let u5 = t.add_user(f, "user5", c(1)).expect("u5");
    let other = t.add_user(AssocId::ROOT, "other", c(0)).expect("other");
    let mut usage = vec![0.0; t.len()];
    for (u, x) in [(u1, 20.0), (u2, 25.0), (u4, 25.0), (other, 30.0)] {
        usage[u.0 as usize] = x;
    }
    Example { tree: t, users: [u1, u2, u3, u4, u5], accounts: [a, b, cc, d, e, f], usage }
}

#[test]
fn classic_reproduces_slurms_worked_example() {
    let ex = example();
    let rows = compute(FairsharePolicy::Classic { dampening: 1.0 }, &ex.tree, &ex.usage, &[]);
    let row = |a: AssocId| &rows[a.0 as usize];
    let [a, b, c, d, e, f] = ex.accounts;
    for (acc, s, u) in [(a, 0.4, 0.45), (b, 0.3, 0.2), (c, 0.1, 0.25), (d, 0.6, 0.25), (e, 0.25, 0.25), (f, 0.35, 0.0)]
    {
        assert_close(Some(row(acc).norm_shares), s, 1e-12, "account S");
        assert_close(Some(row(acc).norm_usage), u, 1e-12, "account U");
    }
    // "Account A's effective usage is therefore equal to .45. Account D's
    // effective usage is equal to .25", then B .3875, C .3, E .25, F .1458.
    for (acc, ue) in [(a, 0.45), (d, 0.25), (b, 0.3875), (c, 0.3), (e, 0.25), (f, 0.145833)] {
        assert_close(Some(row(acc).effective_usage), ue, 1e-6, "account UE");
    }
    let shares = [0.3, 0.05, 0.05, 0.25, 0.35];
    let ue = [0.3875, 0.275, 0.15, 0.25, 0.145833];
    let factor = [0.408479, 0.022097, 0.125, 0.5, 0.749154];
    for (i, &u) in ex.users.iter().enumerate() {
        assert_close(Some(row(u).norm_shares), shares[i], 1e-12, "user S");
        assert_close(Some(row(u).effective_usage), ue[i], 1e-6, "user UE");
        assert_close(row(u).factor, factor[i], 1e-6, "user F");
        assert_eq!(row(u).fairshare, row(u).factor);
        assert_eq!((row(u).level_fs, row(u).tickets), (None, None));
    }
    // The dampening factor divides the exponent: F = 2^(-UE/S/d).
    let damped = compute(FairsharePolicy::Classic { dampening: 2.0 }, &ex.tree, &ex.usage, &[]);
    assert_close(damped[ex.users[3].0 as usize].factor, 2f64.powf(-0.5), 1e-12, "user 4, d = 2");
}

/// Spec 001's example: the classic example's tree and usage, only users 2
/// and 5 pending, 1000 tickets at the root.
#[test]
fn tickets_reproduce_the_multifactor2_example() {
    let ex = example();
    let mut pending = vec![0; ex.tree.len()];
    pending[ex.users[1].0 as usize] = 3;
    pending[ex.users[4].0 as usize] = 1;
    let rows = compute(FairsharePolicy::Tickets, &ex.tree, &ex.usage, &pending);
    let row = |a: AssocId| &rows[a.0 as usize];
    let [a, b, c, d, e, f] = ex.accounts;
    // "Account F effective usage: max(0, 0.01 * 0.35) = 0.0035".
    assert_close(Some(row(f).effective_usage), 0.0035, 1e-12, "F U_eff");
    for (acc, fs) in [(a, 0.4 / 0.45), (b, 1.5), (c, 0.4), (d, 2.4), (e, 1.0), (f, 100.0)] {
        assert_close(row(acc).fairshare, fs, 1e-9, "account F");
    }
    let ueff = [0.2, 0.25, 0.0005, 0.25, 0.0035];
    let fs = [1.5, 0.2, 100.0, 1.0, 100.0];
    for (i, &u) in ex.users.iter().enumerate() {
        assert_close(Some(row(u).effective_usage), ueff[i], 1e-12, "user U_eff");
        assert_close(row(u).fairshare, fs[i], 1e-9, "user F");
    }
    // A 198, D 802; all of A's to C, all of D's to F; user 2 198, user 5 802.
    assert_close(row(AssocId::ROOT).tickets, 1000.0, 0.0, "root");
    for (x, t) in [(a, 198.0), (d, 802.0), (c, 198.0), (f, 802.0), (ex.users[1], 198.0), (ex.users[4], 802.0)] {
        assert_eq!(row(x).tickets.map(f64::round), Some(t), "{:?}", ex.tree.get(x));
    }
    for x in [b, e, ex.users[0], ex.users[2], ex.users[3]] {
        assert_eq!(row(x).tickets, Some(0.0), "inactive: {:?}", ex.tree.get(x));
    }
    // "Priority_FS = 198 / 802 = 0.25" for user 2's jobs, 1.0 for user 5's.
    assert_close(row(ex.users[1]).factor, 0.25, 0.005, "user 2's jobs");
    assert_close(row(ex.users[1]).factor, 198.02 / 801.98, 1e-4, "user 2's jobs");
    assert_eq!(row(ex.users[4]).factor, Some(1.0));
    assert_eq!(row(ex.users[0]).factor, Some(0.0));
}

/// Spec 002: "A value of 0.5 represents a perfectly serviced account.
/// 0.0 is over-serviced; 1.0 is under-serviced", and at one level the
/// factor follows the degree of being over or under serviced. Two banks
/// of 3 and 1 shares; in each, users of equal shares.
#[test]
fn flux_follows_spec_002s_fair_share_factor() {
    let c = RawShares::Count;
    let mut t = AccountTree::new();
    let a = t.add_account(AssocId::ROOT, "A", c(3)).expect("");
    let b = t.add_account(AssocId::ROOT, "B", c(1)).expect("");
    let (a1, a2, a3) = (
        t.add_user(a, "a1", c(1)).expect(""),
        t.add_user(a, "a2", c(1)).expect(""),
        t.add_user(a, "a3", c(1)).expect(""),
    );
    let (b1, b2) = (t.add_user(b, "b1", c(1)).expect(""), t.add_user(b, "b2", c(1)).expect(""));
    let factor = |usage: &[(AssocId, f64)], policy: FairsharePolicy| {
        let mut u = vec![0.0; t.len()];
        for &(a, x) in usage {
            u[a.0 as usize] = x;
        }
        let rows = compute(policy, &t, &u, &[]);
        move |a: AssocId| rows[a.0 as usize].factor.expect("a user's factor")
    };
    // Every user used exactly their share of the machine (A's 3/4 in
    // thirds, B's 1/4 in halves): each is perfectly served, 0.5.
    let served = [(a1, 25.0), (a2, 25.0), (a3, 25.0), (b1, 12.5), (b2, 12.5)];
    let f = factor(&served, FairsharePolicy::FluxSpec);
    for u in [a1, a2, a3, b1, b2] {
        assert_close(Some(f(u)), 0.5, 1e-12, "perfectly served");
    }
    // flux-accounting's ranking gives the same users 1.0 down to 0.2, and
    // identical users different values: it does not read the spec so.
    let ranked = factor(&served, FairsharePolicy::Flux);
    assert!(ranked(a1) != ranked(a2) && [a1, a2, a3, b1, b2].iter().any(|&u| ranked(u) == 1.0));
    // No usage: under-served, 1.0. Over-served towards 0, under towards
    // 1, in order of the degree.
    let f = factor(&[(a1, 60.0), (a2, 20.0), (a3, 0.0), (b1, 10.0), (b2, 10.0)], FairsharePolicy::FluxSpec);
    assert_eq!(f(a3), 1.0);
    assert!(f(a1) < 0.5 && f(a1) < f(a2) && f(a2) < f(a3), "{} {} {}", f(a1), f(a2), f(a3));
    assert_close(Some(f(b1)), f(b2), 1e-12, "identical users, identical values");
}

/// flux-accounting's documented example ("Fair-Share Calculation"): the
/// weights and the users' fair-share values.
#[test]
fn flux_reproduces_the_flux_accounting_example() {
    let mut t = AccountTree::new();
    let c = RawShares::Count;
    let a1 = t.add_account(AssocId::ROOT, "account1", c(1000)).expect("a1");
    let l11 = t.add_user(a1, "leaf.1.1", c(10000)).expect("");
    let l12 = t.add_user(a1, "leaf.1.2", c(1000)).expect("");
    let l13 = t.add_user(a1, "leaf.1.3", c(100000)).expect("");
    let a2 = t.add_account(AssocId::ROOT, "account2", c(100)).expect("a2");
    let l21 = t.add_user(a2, "leaf.2.1", c(100000)).expect("");
    let l22 = t.add_user(a2, "leaf.2.2", c(10000)).expect("");
    let a3 = t.add_account(AssocId::ROOT, "account3", c(10)).expect("a3");
    let l31 = t.add_user(a3, "leaf.3.1", c(100)).expect("");
    let l32 = t.add_user(a3, "leaf.3.2", c(10)).expect("");
    let mut usage = vec![0.0; t.len()];
    for (u, x) in [(l11, 100.0), (l12, 11.0), (l13, 10.0), (l21, 8.0), (l22, 3.0), (l31, 0.0), (l32, 1.0)] {
        usage[u.0 as usize] = x;
    }
    let rows = compute(FairsharePolicy::Flux, &t, &usage, &[]);
    let row = |a: AssocId| &rows[a.0 as usize];
    assert_eq!(row(AssocId::ROOT).raw_usage, 133.0);
    // The document's weights. Its table gives leaf.3.2 0.909091 where its
    // own walk-through computes 0.0909091 (10/110 over 1/1), and leaf.3.1
    // (no usage) 1.84467; here no usage is an infinite weight, which ranks
    // it first all the same.
    for (x, w) in [
        (a1, 0.990246),
        (a2, 1.08927),
        (a3, 1.1982),
        (l11, 0.109009),
        (l12, 0.0990991),
        (l13, 10.9009),
        (l21, 1.25),
        (l22, 0.333333),
        (l32, 0.0909091),
    ] {
        assert_close(row(x).level_fs, w, 1e-5, t.get(x).user.as_deref().unwrap_or(&t.get(x).account));
    }
    assert_eq!(row(l31).level_fs, Some(f64::INFINITY));
    // Banks by weight (3, 2, 1), then each bank's users by weight.
    for (x, f) in [(l31, 7), (l32, 6), (l21, 5), (l22, 4), (l13, 3), (l11, 2), (l12, 1)] {
        assert_eq!(row(x).fairshare, Some(f64::from(f) / 7.0), "{}", t.get(x).user.as_deref().unwrap_or(""));
        assert_eq!(row(x).factor, row(x).fairshare);
    }
    assert_eq!(row(a1).fairshare, None, "accounts have no rank");
}

/// Fair tree, by hand. root: A (1 share), B (1). A: u1 (1), u2 (1).
/// B: u3 (1), account C (1). C: u4 (1). Usage u1 10, u2 30, u3 10, u4 0.
///
/// Under root: A has S = 1/2, U = 40/50 = 0.8, LF 0.625; B has S = 1/2,
/// U = 10/50 = 0.2, LF 2.5: B's users first. Under B: u3 has U = 10/10,
/// LF 0.5; C has no usage, LF infinite: u4 ranks 4, then u3 3. Under A:
/// u1 has U = 10/40, LF 2; u2 U = 30/40, LF 2/3: u1 2, u2 1. N = 4.
#[test]
fn fair_tree_ranks_depth_first_by_level_fairshare() {
    let mut t = AccountTree::new();
    let c = RawShares::Count;
    let a = t.add_account(AssocId::ROOT, "A", c(1)).expect("");
    let b = t.add_account(AssocId::ROOT, "B", c(1)).expect("");
    let u1 = t.add_user(a, "u1", c(1)).expect("");
    let u2 = t.add_user(a, "u2", c(1)).expect("");
    let u3 = t.add_user(b, "u3", c(1)).expect("");
    let cc = t.add_account(b, "C", c(1)).expect("");
    let u4 = t.add_user(cc, "u4", c(1)).expect("");
    let mut usage = vec![0.0; t.len()];
    for (u, x) in [(u1, 10.0), (u2, 30.0), (u3, 10.0)] {
        usage[u.0 as usize] = x;
    }
    let rows = compute(FairsharePolicy::FairTree, &t, &usage, &[]);
    let row = |x: AssocId| &rows[x.0 as usize];
    for (x, lf) in [(a, 0.625), (b, 2.5), (u3, 0.5), (cc, f64::INFINITY), (u1, 2.0), (u2, 2.0 / 3.0)] {
        assert_close(row(x).level_fs, lf, 1e-12, "LF");
    }
    assert_eq!((row(a).norm_shares, row(a).effective_usage), (0.5, 0.8));
    for (x, f) in [(u4, 1.0), (u3, 0.75), (u1, 0.5), (u2, 0.25)] {
        assert_eq!(row(x).factor, Some(f), "{:?}", t.get(x).user);
    }
}

/// Fair tree's three tie rules, by hand.
#[test]
fn fair_tree_ties_follow_slurms_rules() {
    let c = RawShares::Count;
    // Tied accounts are merged. A and B (1 share, 10 used each) tie. A:
    // u1 (1, 10 used, LF 1/2), u2 (1, none, LF inf); B: u3 and u4 (1 and 5
    // used each, LF 1). Merged: u2 4; u3 and u4 tied, 3 each; u1 1.
    let mut t = AccountTree::new();
    let a = t.add_account(AssocId::ROOT, "A", c(1)).expect("");
    let b = t.add_account(AssocId::ROOT, "B", c(1)).expect("");
    let u1 = t.add_user(a, "u1", c(1)).expect("");
    let u2 = t.add_user(a, "u2", c(1)).expect("");
    let u3 = t.add_user(b, "u3", c(1)).expect("");
    let u4 = t.add_user(b, "u4", c(1)).expect("");
    let mut usage = vec![0.0; t.len()];
    for (u, x) in [(u1, 10.0), (u3, 5.0), (u4, 5.0)] {
        usage[u.0 as usize] = x;
    }
    let rows = compute(FairsharePolicy::FairTree, &t, &usage, &[]);
    let f = |x: AssocId| rows[x.0 as usize].factor;
    assert_eq!([f(u2), f(u3), f(u4), f(u1)], [Some(1.0), Some(0.75), Some(0.75), Some(0.25)]);

    // A user tied with a sibling account: the user goes first, and the
    // account's first user shares its rank (Slurm's _calc_tree_fs). Under
    // root: u0 (1, 10 used) and A (1, 10 used), LF 1 each; A: u1 (2
    // shares, 2 used, LF 10/3), u2 (1 share, 8 used, LF 5/12).
    let mut t = AccountTree::new();
    let u0 = t.add_user(AssocId::ROOT, "u0", c(1)).expect("");
    let a = t.add_account(AssocId::ROOT, "A", c(1)).expect("");
    let u1 = t.add_user(a, "u1", c(2)).expect("");
    let u2 = t.add_user(a, "u2", c(1)).expect("");
    let mut usage = vec![0.0; t.len()];
    for (u, x) in [(u0, 10.0), (u1, 2.0), (u2, 8.0)] {
        usage[u.0 as usize] = x;
    }
    let rows = compute(FairsharePolicy::FairTree, &t, &usage, &[]);
    let f = |x: AssocId| rows[x.0 as usize].factor;
    // N = 3: u0 3, u1 tied with it 3; the count went down for both: u2 1.
    assert_eq!([f(u1), f(u2), f(u0)], [Some(1.0), Some(1.0 / 3.0), Some(1.0)]);

    // Equal ratios need not tie: shares 1, 3, 2 and usage 1, 3, 6. As
    // Slurm divides, S then U then S/U, (1/6)/(1/10) is a bit below
    // (3/6)/(3/10): y ranks first, then x (as Slurm's test24.4 ranks uD2
    // below uD3).
    let mut t = AccountTree::new();
    let x = t.add_user(AssocId::ROOT, "x", c(1)).expect("");
    let y = t.add_user(AssocId::ROOT, "y", c(3)).expect("");
    let z = t.add_user(AssocId::ROOT, "z", c(2)).expect("");
    let mut usage = vec![0.0; t.len()];
    for (u, v) in [(x, 1.0), (y, 3.0), (z, 6.0)] {
        usage[u.0 as usize] = v;
    }
    let rows = compute(FairsharePolicy::FairTree, &t, &usage, &[]);
    let f = |u: AssocId| rows[u.0 as usize].factor;
    assert_eq!([f(x), f(y), f(z)], [Some(2.0 / 3.0), Some(1.0), Some(1.0 / 3.0)]);
    // flux never ties users; here the weights differ as well.
    let rows = compute(FairsharePolicy::Flux, &t, &usage, &[]);
    let f = |u: AssocId| rows[u.0 as usize].factor;
    assert_eq!([f(x), f(y), f(z)], [Some(2.0 / 3.0), Some(1.0), Some(1.0 / 3.0)]);

    // Equal users tie: two users of the same shares and usage (and so the
    // same LF, bit for bit) share a rank, and the count goes on below both.
    let mut t = AccountTree::new();
    let v = t.add_user(AssocId::ROOT, "v", c(1)).expect("");
    let w = t.add_user(AssocId::ROOT, "w", c(1)).expect("");
    let x = t.add_user(AssocId::ROOT, "x", c(1)).expect("");
    let mut usage = vec![0.0; t.len()];
    for (u, q) in [(v, 1.0), (w, 1.0), (x, 5.0)] {
        usage[u.0 as usize] = q;
    }
    let rows = compute(FairsharePolicy::FairTree, &t, &usage, &[]);
    let f = |u: AssocId| rows[u.0 as usize].factor;
    assert_eq!([f(v), f(w), f(x)], [Some(1.0), Some(1.0), Some(1.0 / 3.0)]);
}

/// flux ranks sub-banks above the users beside them; fair tree by LF.
/// root: u0 (1 share, none used: LF inf) and bank A (1, 10 used: LF 0);
/// A: u1.
#[test]
fn flux_ranks_banks_before_users_and_fair_tree_does_not() {
    let c = RawShares::Count;
    let mut t = AccountTree::new();
    let u0 = t.add_user(AssocId::ROOT, "u0", c(1)).expect("");
    let a = t.add_account(AssocId::ROOT, "A", c(1)).expect("");
    let u1 = t.add_user(a, "u1", c(1)).expect("");
    let mut usage = vec![0.0; t.len()];
    usage[u1.0 as usize] = 10.0;
    let fair_tree = compute(FairsharePolicy::FairTree, &t, &usage, &[]);
    let flux = compute(FairsharePolicy::Flux, &t, &usage, &[]);
    assert_eq!((fair_tree[u0.0 as usize].factor, fair_tree[u1.0 as usize].factor), (Some(1.0), Some(0.5)));
    assert_eq!((flux[u0.0 as usize].factor, flux[u1.0 as usize].factor), (Some(0.5), Some(1.0)));
}

/// Zero shares, zero usage, an empty account, no pending jobs: every
/// factor a number in [0, 1], no NaN anywhere, infinity only as a level
/// fair-share.
#[test]
fn edge_cases_give_numbers_in_range() {
    let c = RawShares::Count;
    let mut t = AccountTree::new();
    let a = t.add_account(AssocId::ROOT, "A", c(0)).expect("");
    let _empty = t.add_account(AssocId::ROOT, "empty", c(5)).expect("");
    let b = t.add_account(AssocId::ROOT, "B", c(1)).expect("");
    let u1 = t.add_user(a, "u1", c(1)).expect("");
    let u2 = t.add_user(b, "u2", c(0)).expect("");
    let u3 = t.add_user(b, "u3", c(1)).expect("");
    let policies = [
        FairsharePolicy::Classic { dampening: 1.0 },
        FairsharePolicy::FairTree,
        FairsharePolicy::Tickets,
        FairsharePolicy::Flux,
        FairsharePolicy::FluxSpec,
    ];
    let no_usage = vec![0.0; t.len()];
    let mut some = vec![0.0; t.len()];
    some[u1.0 as usize] = 5.0;
    some[u2.0 as usize] = 7.0;
    let all_pending = vec![1; t.len()];
    for policy in policies {
        for usage in [&no_usage, &some] {
            for pending in [&[][..], &all_pending[..]] {
                let rows = compute(policy, &t, usage, pending);
                for r in &rows {
                    let finite = [Some(r.norm_shares), Some(r.raw_usage), Some(r.norm_usage), Some(r.effective_usage)]
                        .into_iter()
                        .chain([r.fairshare, r.tickets, r.factor]);
                    for v in finite.flatten() {
                        assert!(v.is_finite(), "{policy:?}: {r:?}");
                    }
                    assert!(r.level_fs.is_none_or(|v| !v.is_nan()), "{policy:?}: {r:?}");
                    assert!(r.factor.is_none_or(|f| (0.0..=1.0).contains(&f)), "{policy:?}: {r:?}");
                }
                let f = |u: AssocId| rows[u.0 as usize].factor.expect("a user's factor");
                // Zero shares: the lowest factor there is.
                match policy {
                    FairsharePolicy::Classic { .. } | FairsharePolicy::FluxSpec => {
                        assert_eq!((f(u1), f(u2)), (0.0, 0.0), "{policy:?}")
                    }
                    FairsharePolicy::Tickets => assert_eq!((f(u1), f(u2)), (0.0, 0.0), "{policy:?}"),
                    FairsharePolicy::FairTree | FairsharePolicy::Flux => {
                        assert!(f(u1) <= 1.0 / 3.0 && f(u3) > f(u2), "{policy:?}")
                    }
                }
                if policy == FairsharePolicy::Tickets && pending.is_empty() {
                    assert!(rows.iter().all(|r| r.tickets.is_none_or(|t| t == 0.0)), "no one is active");
                }
            }
        }
    }
    // With no usage at all, classic gives F = 1 to every user with shares.
    let rows = compute(FairsharePolicy::Classic { dampening: 1.0 }, &t, &no_usage, &[]);
    assert_eq!(rows[u3.0 as usize].factor, Some(1.0));
}

/// `Fairshare=parent`: a user so marked gets its account's normalized
/// shares and effective usage (classic), and takes no part in its
/// siblings' sums; an account so marked is flattened, its children
/// competing under its parent.
#[test]
fn fairshare_parent_users_stand_for_their_account_and_accounts_flatten() {
    let c = RawShares::Count;
    let mut t = AccountTree::new();
    let a = t.add_account(AssocId::ROOT, "A", c(1)).expect("");
    let b = t.add_account(AssocId::ROOT, "B", c(3)).expect("");
    let p = t.add_user(a, "p", RawShares::Parent).expect("");
    let q = t.add_user(a, "q", c(1)).expect("");
    let flat = t.add_account(b, "flat", RawShares::Parent).expect("");
    let r = t.add_user(flat, "r", c(1)).expect("");
    let s = t.add_user(b, "s", c(1)).expect("");
    let mut usage = vec![0.0; t.len()];
    for (u, x) in [(p, 10.0), (q, 10.0), (r, 20.0), (s, 40.0)] {
        usage[u.0 as usize] = x;
    }
    let rows = compute(FairsharePolicy::Classic { dampening: 1.0 }, &t, &usage, &[]);
    let row = |x: AssocId| &rows[x.0 as usize];
    // q alone shares A: S = 1/4; p stands for A: S = 1/4, UE = A's 0.25.
    assert_eq!(row(q).norm_shares, 0.25);
    assert_eq!((row(p).norm_shares, row(p).effective_usage), (0.25, 0.25));
    assert_eq!(row(p).factor, Some(0.5));
    // r and s share B's 3/4 (flat's children compete under B): 3/8 each.
    assert_eq!((row(r).norm_shares, row(s).norm_shares), (0.375, 0.375));
    assert_eq!(row(flat).norm_shares, row(b).norm_shares, "a flattened account shows its parent's values");
    // Fair tree: p ranks first in A, ahead of q; r and s compete directly.
    let rows = compute(FairsharePolicy::FairTree, &t, &usage, &[]);
    let row = |x: AssocId| &rows[x.0 as usize];
    // Under root: A S 1/4 U 20/80 LF 1; B S 3/4 U 60/80 LF 1: tied, merged.
    // U is over the parent's usage, p's included (Slurm's usage_efctv):
    // q (S 1, U 10/20, LF 2), r (S 1/2, U 20/60, LF 1.5), s (S 1/2, U
    // 40/60, LF 0.75); p first of all, as A's stand-in. N = 4.
    assert_eq!(
        [row(p).factor, row(q).factor, row(r).factor, row(s).factor],
        [Some(1.0), Some(0.75), Some(0.5), Some(0.25)]
    );
}

#[test]
fn the_tree_refuses_duplicates_and_children_of_users() {
    let mut t = AccountTree::new();
    let a = t.add_account(AssocId::ROOT, "A", RawShares::Count(1)).expect("");
    assert_eq!(t.add_account(AssocId::ROOT, "A", RawShares::Count(1)), Err(TreeError::DuplicateAccount("A".into())));
    let u = t.add_user(a, "u", RawShares::Count(1)).expect("");
    assert!(matches!(t.add_user(a, "u", RawShares::Count(1)), Err(TreeError::DuplicateUser { .. })));
    assert_eq!(t.add_user(u, "v", RawShares::Count(1)), Err(TreeError::UnderUser("u".into())));
    let b = t.add_account(AssocId::ROOT, "B", RawShares::Count(1)).expect("");
    let u2 = t.add_user(b, "u", RawShares::Count(1)).expect("a second association");
    assert_eq!(t.user_assocs("u"), [u, u2]);
    assert_eq!(t.assoc("B", "u"), Some(u2));
    assert_eq!(t.user_count(), 2);
    assert_eq!(t.tree_order(), [AssocId::ROOT, a, u, b, u2]);
}

/// An LSF share tree as associations: GroupA has a share tree (an
/// account), GroupB none (charged collectively: one association), users
/// are users, `others` one association.
#[test]
fn an_lsf_share_tree_gives_the_associations() {
    use crate::shares::{GroupTable, LsfFactors, Member, ShareAssignment, ShareTarget, ShareTree, UserGroup};
    let a = |t: ShareTarget, n| ShareAssignment::new(t, n);
    let group_a = UserGroup {
        name: "GroupA".into(),
        members: vec![Member::Group("GroupB".into()), Member::User("User5".into())],
        shares: vec![a(ShareTarget::Group("GroupB".into()), 6), a(ShareTarget::User("User5".into()), 2)],
    };
    let group_b = UserGroup {
        name: "GroupB".into(),
        members: vec![Member::User("User1".into()), Member::User("User2".into())],
        shares: vec![],
    };
    let top = [
        a(ShareTarget::Group("GroupA".into()), 10),
        a(ShareTarget::User("User9".into()), 5),
        a(ShareTarget::Others, 1),
    ];
    let lsf = ShareTree::new("q", &top, GroupTable::new(vec![group_a, group_b]), LsfFactors::default(), vec![]);
    let t = AccountTree::from_share_tree(&lsf).expect("converts");
    let rows: Vec<String> = t
        .tree_order()
        .into_iter()
        .map(|x| {
            let x = t.get(x);
            let RawShares::Count(n) = x.shares else { panic!("no parent shares in LSF") };
            format!("{}/{}={n}", x.account, x.user.as_deref().unwrap_or(""))
        })
        .collect();
    assert_eq!(rows, ["root/=1", "GroupA/=10", "GroupA/GroupB=6", "GroupA/User5=2", "root/User9=5", "root/others=1"]);
}
