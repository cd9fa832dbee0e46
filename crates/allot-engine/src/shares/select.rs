//! Choosing the next user (spec 000, "How hierarchical fairshare affects job
//! dispatch order"): from the top of the tree, at each level the child with
//! the highest dynamic priority among those with eligible pending work,
//! until a user or a collective leaf (whose members then go FCFS).
//!
//! A [`Selector`] lives for one dispatch pass. It computes every priority
//! once; afterwards only the path of an account whose usage or pending work
//! changed is recomputed and re-sorted, so a choice costs
//! `O(depth * log(siblings))` however many users the tree holds.
//!
//! Ties: equal priorities (compared with `total_cmp`) go to the sibling that
//! comes first in the tree's order, which is the share assignment's order in
//! the configuration, and for users placed through `default` or `group@`
//! the order in which they were placed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::priority::PriorityInputs;
use super::tree::{NodeId, ShareTree};
use crate::time::Time;

/// Highest priority first (as `total_cmp` orders floats), then sibling
/// position, then the node: packed in one integer, smallest first, so
/// that keeping siblings sorted compares integers.
type Key = u128;

fn key_of(prio: f64, pos: u32, node: NodeId) -> Key {
    // `total_cmp`'s order as unsigned integers, then reversed.
    let bits = prio.to_bits();
    let ordered = if bits >> 63 == 1 { !bits } else { bits | 1 << 63 };
    (u128::from(!ordered) << 64) | (u128::from(pos) << 32) | u128::from(node.0)
}

fn node_of(key: Key) -> NodeId {
    NodeId(key as u32)
}

/// Above this many ready siblings, a heap; below, a sorted vector, which
/// is faster to update for the small sibling sets most trees have.
const SMALL: usize = 64;

/// The ready children of one node, best first. A large set is a binary
/// heap of keys (smallest first) whose entries go stale rather than being
/// taken out: a key whose node has another key now, or no pending work,
/// is dropped when it comes to the top ([`Selector::best`]). A start
/// lowers its user's priority, so its new key goes in near the bottom and
/// its old one, the top, comes off at once: one push and one pop where a
/// B-tree removed and inserted.
#[derive(Clone, Debug)]
enum Siblings {
    Small(Vec<Key>),
    Large(BinaryHeap<Reverse<Key>>),
}

impl Default for Siblings {
    fn default() -> Self {
        Siblings::Small(Vec::new())
    }
}

impl Siblings {
    fn insert(&mut self, key: Key) {
        match self {
            Siblings::Small(v) => {
                if let Err(at) = v.binary_search(&key) {
                    v.insert(at, key);
                }
                if v.len() > SMALL {
                    *self = Siblings::Large(v.drain(..).map(Reverse).collect());
                }
            }
            Siblings::Large(heap) => heap.push(Reverse(key)),
        }
    }

    /// Takes `key` out of a small set; in a large one it goes stale.
    fn remove(&mut self, key: &Key) {
        if let Siblings::Small(v) = self {
            if let Ok(at) = v.binary_search(key) {
                v.remove(at);
            }
        }
    }
}

/// One dispatch pass's view of a share tree's priorities.
#[derive(Clone, Debug)]
pub struct Selector {
    t: Time,
    prio: Vec<f64>,
    /// Whether `prio` holds the node's priority ([`Selector::for_accounts`]
    /// computes only some).
    known: Vec<bool>,
    /// Position of each node among its siblings.
    pos: Vec<u32>,
    /// Pending work units in each node's subtree.
    pending: Vec<u64>,
    /// Per node, its children that have pending work, best first.
    ready: Vec<Siblings>,
    /// The nodes whose priority is known, the top's aside: all that a
    /// reuse has to set back (a node with pending work, or ready
    /// children, has its priority known).
    touched: Vec<u32>,
    /// Scratch of [`Selector::with_accounts`], kept for its memory.
    gained: Vec<(u32, Key)>,
}

impl Selector {
    /// Computes every account's priority at `t`; no account has pending
    /// work until [`Selector::set_pending`] says so.
    pub fn new(tree: &ShareTree, t: Time, inputs: &PriorityInputs<'_>) -> Self {
        let mut sel = Selector::blank(tree, t);
        for i in 1..tree.len() {
            sel.prio[i] = tree.priority(NodeId(i as u32), t, inputs);
        }
        sel.known.fill(true);
        sel.touched = (1..tree.len() as u32).collect();
        sel
    }

    /// No priority computed (but the top's) and no pending work.
    fn blank(tree: &ShareTree, t: Time) -> Self {
        let n = tree.len();
        let mut pos = vec![0; n];
        for i in 0..n {
            for (p, &c) in tree.children(NodeId(i as u32)).iter().enumerate() {
                pos[c.0 as usize] = p as u32;
            }
        }
        let mut known = vec![false; n];
        if let Some(top) = known.first_mut() {
            *top = true;
        }
        Selector {
            t,
            prio: vec![0.0; n],
            known,
            pos,
            pending: vec![0; n],
            ready: vec![Siblings::default(); n],
            touched: Vec::new(),
            gained: Vec::new(),
        }
    }

    /// As [`Selector::new`] followed by [`Selector::set_pending`] for each
    /// of `accounts` (leaf, pending work), computing only the priorities
    /// on their paths: a pass over a tree of many users of whom few wait
    /// costs what those few do.
    pub fn for_accounts(
        tree: &ShareTree,
        t: Time,
        inputs: &PriorityInputs<'_>,
        accounts: impl IntoIterator<Item = (NodeId, u64)>,
    ) -> Self {
        Selector::blank(tree, t).with_accounts(tree, inputs, accounts)
    }

    /// [`Selector::for_accounts`] in the memory of a selector of an earlier
    /// pass over the same tree (one that only grew since): a pass
    /// allocates nothing. Over another tree, a new one.
    pub fn reuse(
        mut self,
        tree: &ShareTree,
        t: Time,
        inputs: &PriorityInputs<'_>,
        accounts: impl IntoIterator<Item = (NodeId, u64)>,
    ) -> Self {
        if self.prio.len() > tree.len() {
            return Selector::for_accounts(tree, t, inputs, accounts);
        }
        self.grow(tree);
        self.t = t;
        // Only what the earlier pass touched, and the top.
        let mut touched = std::mem::take(&mut self.touched);
        for i in touched.drain(..).chain(std::iter::once(0)) {
            let i = i as usize;
            (self.prio[i], self.known[i], self.pending[i]) = (0.0, i == 0, 0);
            match &mut self.ready[i] {
                Siblings::Small(v) => v.clear(),
                r @ Siblings::Large(_) => *r = Siblings::default(),
            }
        }
        self.touched = touched;
        self.with_accounts(tree, inputs, accounts)
    }

    /// Computes the priorities on the paths of `accounts` and sets their
    /// pending work, on a selector with none.
    fn with_accounts(
        self,
        tree: &ShareTree,
        inputs: &PriorityInputs<'_>,
        accounts: impl IntoIterator<Item = (NodeId, u64)>,
    ) -> Self {
        let (n, t) = (tree.len(), self.t);
        let mut sel = self;
        sel.grow(tree);
        // Every list of ready children is empty here: the nodes that gain
        // pending work are sorted into their parents' lists at the end,
        // all at once, with the keys they would be inserted with (their
        // priorities do not change on the way).
        let mut ready = std::mem::take(&mut sel.gained);
        for (leaf, count) in accounts {
            for node in tree.path(leaf) {
                let i = node.0 as usize;
                if i < n && !sel.known[i] {
                    sel.prio[i] = tree.priority(node, t, inputs);
                    sel.know(i);
                }
            }
            sel.change_pending(tree, leaf, count, Some(&mut ready));
        }
        ready.sort_unstable();
        for run in ready.chunk_by(|a, b| a.0 == b.0) {
            let keys = run.iter().map(|r| r.1);
            let parent = run[0].0 as usize;
            sel.ready[parent] = match std::mem::take(&mut sel.ready[parent]) {
                _ if run.len() > SMALL => Siblings::Large(keys.map(Reverse).collect()),
                Siblings::Small(mut v) => {
                    v.extend(keys);
                    Siblings::Small(v)
                }
                Siblings::Large(_) => Siblings::Small(keys.collect()),
            };
        }
        ready.clear();
        sel.gained = ready;
        sel
    }

    /// Node `i`'s priority is now known.
    fn know(&mut self, i: usize) {
        self.known[i] = true;
        if i != 0 {
            self.touched.push(i as u32);
        }
    }

    fn key(&self, n: NodeId) -> Key {
        key_of(self.prio[n.0 as usize], self.pos[n.0 as usize], n)
    }

    /// The priority this pass uses for `node`.
    pub fn priority(&self, node: NodeId) -> f64 {
        self.prio[node.0 as usize]
    }

    /// Sets how many eligible pending jobs `leaf` has (0 removes it from
    /// consideration). Nodes the tree gained since this selector was made
    /// are added on the way.
    pub fn set_pending(&mut self, tree: &ShareTree, leaf: NodeId, count: u64) {
        self.grow(tree);
        self.change_pending(tree, leaf, count, None);
    }

    /// [`Selector::set_pending`] on a selector that holds every node of
    /// the tree. With `gained`, the nodes that gain pending work go there
    /// (parent, key) instead of into their parents' lists
    /// ([`Selector::with_accounts`] sorts them in at once).
    fn change_pending(&mut self, tree: &ShareTree, leaf: NodeId, count: u64, mut gained: Option<&mut Vec<(u32, Key)>>) {
        let old = self.pending[leaf.0 as usize];
        if old == count {
            return;
        }
        let mut node = leaf;
        loop {
            let i = node.0 as usize;
            if !self.known[i] {
                // A path no priority was computed on: as for nodes added
                // during the pass, with the recorded adjustment.
                self.prio[i] = tree.priority(node, self.t, &PriorityInputs::default());
                self.know(i);
            }
            let before = self.pending[i];
            let after = before - old + count;
            self.pending[i] = after;
            let Some(parent) = tree.parent(node) else { break };
            let key = self.key(node);
            if before == 0 && after > 0 {
                match gained.as_deref_mut() {
                    Some(g) => g.push((parent.0, key)),
                    None => self.ready[parent.0 as usize].insert(key),
                }
            } else if before > 0 && after == 0 {
                self.ready[parent.0 as usize].remove(&key);
            }
            node = parent;
        }
    }

    /// Adds the nodes the tree gained since this selector was made.
    #[inline]
    fn grow(&mut self, tree: &ShareTree) {
        if self.prio.len() < tree.len() {
            self.grow_to(tree);
        }
    }

    fn grow_to(&mut self, tree: &ShareTree) {
        let inputs = PriorityInputs::default();
        for i in self.prio.len()..tree.len() {
            let n = NodeId(i as u32);
            let parent = tree.parent(n).unwrap_or(NodeId::ROOT);
            let p = tree.children(parent).iter().position(|&c| c == n).unwrap_or(0);
            self.pos.push(p as u32);
            self.prio.push(tree.priority(n, self.t, &inputs));
            self.known.push(true);
            self.touched.push(i as u32);
            self.pending.push(0);
            self.ready.push(Siblings::default());
        }
    }

    /// The account to serve next: a user's account or a collective leaf.
    pub fn choose(&mut self) -> Option<NodeId> {
        let mut node = NodeId::ROOT;
        while let Some(best) = self.best(node) {
            node = node_of(best);
        }
        (node != NodeId::ROOT).then_some(node)
    }

    /// The best ready child of `parent`: in a large set, the stale keys
    /// above it dropped on the way ([`Siblings`]).
    fn best(&mut self, parent: NodeId) -> Option<Key> {
        let Selector { ready, prio, pos, pending, .. } = self;
        match &mut ready[parent.0 as usize] {
            Siblings::Small(v) => v.first().copied(),
            Siblings::Large(heap) => loop {
                let &Reverse(key) = heap.peek()?;
                let n = node_of(key);
                let i = n.0 as usize;
                if pending[i] > 0 && key_of(prio[i], pos[i], n) == key {
                    return Some(key);
                }
                heap.pop();
            },
        }
    }

    /// Recomputes the priorities on the path of `leaf` after its usage
    /// changed (a job started), and re-sorts them among their siblings.
    pub fn refresh_path(&mut self, tree: &ShareTree, leaf: NodeId, inputs: &PriorityInputs<'_>) {
        self.grow(tree);
        for node in tree.path(leaf) {
            let i = node.0 as usize;
            let parent = tree.parent(node).unwrap_or(NodeId::ROOT);
            let active = self.pending[i] > 0;
            let old_key = self.key(node);
            self.prio[i] = tree.priority(node, self.t, inputs);
            if !self.known[i] {
                self.know(i);
            }
            if active {
                let new_key = self.key(node);
                let siblings = &mut self.ready[parent.0 as usize];
                siblings.remove(&old_key);
                siblings.insert(new_key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shares::assign::{GroupTable, ShareAssignment, ShareTarget};
    use crate::shares::priority::LsfFactors;
    use crate::shares::usage::JobCharge;

    fn flat(assign: &[(&str, u32)], users: &[&str]) -> ShareTree {
        let top: Vec<ShareAssignment> = assign
            .iter()
            .map(|(n, s)| {
                let t = match *n {
                    "default" => ShareTarget::Default,
                    "others" => ShareTarget::Others,
                    n => ShareTarget::User(n.to_string()),
                };
                ShareAssignment::new(t, *s)
            })
            .collect();
        ShareTree::new("q", &top, GroupTable::default(), LsfFactors::default(), users.iter().map(|u| u.to_string()))
    }

    fn job(start: u64) -> JobCharge {
        JobCharge { slots: 1, run_weight: 1, committed: None, memory: 0.0, start: Time(start), shift: 0.0 }
    }

    #[test]
    fn the_user_with_the_highest_priority_goes_first_and_drops_after_a_start() {
        let mut tree = flat(&[("a", 10), ("b", 10)], &["a", "b"]);
        let inputs = PriorityInputs::default();
        let (a, b) = (tree.place("a")[0], tree.place("b")[0]);
        let mut sel = Selector::new(&tree, Time(0), &inputs);
        sel.set_pending(&tree, a, 3);
        sel.set_pending(&tree, b, 3);
        assert_eq!(sel.choose(), Some(a), "tie: configuration order");
        tree.start_job(a, &job(0));
        sel.refresh_path(&tree, a, &inputs);
        assert_eq!(sel.choose(), Some(b), "a's started slot lowers a below b");
        tree.start_job(b, &job(0));
        sel.refresh_path(&tree, b, &inputs);
        assert_eq!(sel.choose(), Some(a));
    }

    /// Computing only the waiting accounts' paths chooses as computing all.
    #[test]
    fn for_accounts_chooses_as_new_does() {
        let users = ["a", "b", "c", "d", "e"];
        let mut tree = flat(&[("a", 5), ("b", 3), ("c", 3), ("d", 1), ("e", 8)], &users);
        let inputs = PriorityInputs::default();
        let leaves: Vec<NodeId> = users.iter().map(|u| tree.leaves_for_test(u)).collect();
        for (i, &leaf) in leaves.iter().enumerate() {
            for _ in 0..i {
                tree.start_job(leaf, &job(0));
            }
        }
        let waiting = [(leaves[1], 2), (leaves[3], 1), (leaves[4], 4)];
        let mut all = Selector::new(&tree, Time(500), &inputs);
        for &(leaf, n) in &waiting {
            all.set_pending(&tree, leaf, n);
        }
        let mut some = Selector::for_accounts(&tree, Time(500), &inputs, waiting);
        let mut order = (Vec::new(), Vec::new());
        for (sel, out) in [(&mut all, &mut order.0), (&mut some, &mut order.1)] {
            while let Some(leaf) = sel.choose() {
                out.push((leaf, sel.priority(leaf)));
                sel.set_pending(&tree, leaf, 0);
            }
        }
        assert_eq!(order.0.len(), 3);
        assert_eq!(order.0, order.1);
    }

    /// More waiting siblings than a sorted vector holds: the accounts
    /// sorted in at once (a B-tree) choose as accounts set one by one.
    #[test]
    fn many_waiting_accounts_choose_as_one_by_one() {
        let users: Vec<String> = (0..100).map(|i| format!("u{i}")).collect();
        let assign: Vec<(&str, u32)> =
            users.iter().enumerate().map(|(i, u)| (u.as_str(), 1 + (i as u32 * 7) % 5)).collect();
        let names: Vec<&str> = users.iter().map(String::as_str).collect();
        let mut tree = flat(&assign, &names);
        let inputs = PriorityInputs::default();
        let leaves: Vec<NodeId> = names.iter().map(|u| tree.leaves_for_test(u)).collect();
        for (i, &leaf) in leaves.iter().enumerate() {
            for _ in 0..(i * 13) % 4 {
                tree.start_job(leaf, &job(0));
            }
        }
        let waiting: Vec<(NodeId, u64)> =
            leaves.iter().enumerate().filter(|(i, _)| i % 5 != 0).map(|(i, &l)| (l, 1 + i as u64 % 3)).collect();
        assert!(waiting.len() > SMALL);
        let mut one_by_one = Selector::new(&tree, Time(700), &inputs);
        for &(leaf, n) in &waiting {
            one_by_one.set_pending(&tree, leaf, n);
        }
        let mut at_once = Selector::for_accounts(&tree, Time(700), &inputs, waiting.iter().copied());
        let mut order = (Vec::new(), Vec::new());
        for (sel, out) in [(&mut one_by_one, &mut order.0), (&mut at_once, &mut order.1)] {
            while let Some(leaf) = sel.choose() {
                out.push(leaf);
                sel.set_pending(&tree, leaf, 0);
            }
        }
        assert_eq!(order.0.len(), waiting.len());
        assert_eq!(order.0, order.1);
    }

    /// A selector reused from an earlier pass (other accounts waiting, a
    /// user placed since, another time) chooses as a new one does.
    #[test]
    fn a_reused_selector_chooses_as_a_new_one() {
        let users = ["a", "b", "c", "d", "e"];
        let mut tree = flat(&[("a", 5), ("b", 3), ("c", 3), ("d", 1), ("default", 8)], &users[..4]);
        let inputs = PriorityInputs::default();
        let leaves: Vec<NodeId> = users[..4].iter().map(|u| tree.leaves_for_test(u)).collect();
        let mut old = Selector::for_accounts(&tree, Time(0), &inputs, [(leaves[0], 3), (leaves[2], 1)]);
        while let Some(leaf) = old.choose() {
            tree.start_job(leaf, &job(0));
            old.refresh_path(&tree, leaf, &inputs);
            old.set_pending(&tree, leaf, 0);
        }
        let e = tree.place("e")[0];
        let waiting = [(leaves[1], 2), (leaves[3], 1), (e, 4), (leaves[0], 1)];
        let fresh = Selector::for_accounts(&tree, Time(900), &inputs, waiting);
        let reused = old.reuse(&tree, Time(900), &inputs, waiting);
        let mut order = (Vec::new(), Vec::new());
        for (mut sel, out) in [(fresh, &mut order.0), (reused, &mut order.1)] {
            while let Some(leaf) = sel.choose() {
                out.push((leaf, sel.priority(leaf)));
                sel.set_pending(&tree, leaf, 0);
            }
        }
        assert_eq!(order.0.len(), 4);
        assert_eq!(order.0, order.1);
    }

    /// Packed keys order as (priority by `total_cmp`, highest first;
    /// position; node) would.
    #[test]
    fn keys_order_by_priority_then_position() {
        let prios = [f64::NEG_INFINITY, -2.5, -0.0, 0.0, 1e-300, 0.5, 3.0, f64::INFINITY];
        let mut all = Vec::new();
        for (i, &p) in prios.iter().enumerate() {
            for pos in [0u32, 7] {
                all.push((p, pos, NodeId(i as u32)));
            }
        }
        for &a in &all {
            for &b in &all {
                let want = b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.0.cmp(&b.2.0));
                assert_eq!(key_of(a.0, a.1, a.2).cmp(&key_of(b.0, b.1, b.2)), want, "{a:?} against {b:?}");
                assert_eq!(node_of(key_of(a.0, a.1, a.2)), a.2);
            }
        }
    }

    #[test]
    fn only_accounts_with_pending_work_are_chosen() {
        let tree = flat(&[("a", 100), ("b", 1)], &["a", "b"]);
        let inputs = PriorityInputs::default();
        let (a, b) = (tree.leaves_for_test("a"), tree.leaves_for_test("b"));
        let mut sel = Selector::new(&tree, Time(0), &inputs);
        assert_eq!(sel.choose(), None);
        sel.set_pending(&tree, b, 1);
        assert_eq!(sel.choose(), Some(b));
        sel.set_pending(&tree, a, 1);
        assert_eq!(sel.choose(), Some(a));
        sel.set_pending(&tree, a, 0);
        assert_eq!(sel.choose(), Some(b));
        sel.set_pending(&tree, b, 0);
        assert_eq!(sel.choose(), None);
    }

    #[test]
    fn users_placed_after_the_pass_began_can_be_chosen() {
        let mut tree = flat(&[("default", 1)], &["a"]);
        let inputs = PriorityInputs::default();
        let mut sel = Selector::new(&tree, Time(0), &inputs);
        let late = tree.place("late")[0];
        sel.set_pending(&tree, late, 1);
        assert_eq!(sel.choose(), Some(late));
    }

    impl ShareTree {
        fn leaves_for_test(&self, user: &str) -> NodeId {
            self.child(NodeId::ROOT, user).expect("user placed")
        }
    }

    /// Past SMALL ready siblings (a heap whose keys go stale): every
    /// choice is the best by priority then configuration order, checked
    /// against a look at every user, through starts, accounts emptied and
    /// filled again.
    #[test]
    fn a_large_sibling_set_chooses_the_best_through_every_change() {
        let names: Vec<String> = (0..200).map(|i| format!("u{i:03}")).collect();
        let assign: Vec<(&str, u32)> =
            names.iter().enumerate().map(|(i, n)| (n.as_str(), 1 + (i as u32 % 7))).collect();
        let mut tree = flat(&assign, &names.iter().map(String::as_str).collect::<Vec<_>>());
        let inputs = PriorityInputs::default();
        let leaves: Vec<NodeId> = names.iter().map(|n| tree.place(n)[0]).collect();
        let mut pending: Vec<u64> = (0..200).map(|i| 1 + i % 5).collect();
        let mut sel = Selector::new(&tree, Time(0), &inputs);
        for (&leaf, &n) in leaves.iter().zip(&pending) {
            sel.set_pending(&tree, leaf, n);
        }
        let mut seed = 7u64;
        for round in 0..2_000 {
            let best = (0..200)
                .filter(|&i| pending[i] > 0)
                .max_by(|&a, &b| sel.priority(leaves[a]).total_cmp(&sel.priority(leaves[b])).then(b.cmp(&a)));
            assert_eq!(sel.choose(), best.map(|i| leaves[i]), "round {round}");
            let Some(i) = best else { break };
            tree.start_job(leaves[i], &job(0));
            sel.refresh_path(&tree, leaves[i], &inputs);
            pending[i] -= 1;
            sel.set_pending(&tree, leaves[i], pending[i]);
            // Now and then an emptied account gets work again.
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let j = (seed >> 33) as usize % 200;
            if pending[j] == 0 && round % 3 == 0 {
                pending[j] = 2;
                sel.set_pending(&tree, leaves[j], 2);
            }
        }
    }
}
