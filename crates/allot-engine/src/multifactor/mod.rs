//! Multifactor fair-share: Slurm's classic, fair tree and ticket-based
//! (multifactor2, spec 001) factors and flux-accounting's weighted tree, on
//! one tree of associations.
//!
//! - [`AccountTree`]: accounts (Slurm) or banks (Flux) under `root`, and
//!   user associations (an account and a user) as leaves. A user may have
//!   several associations; each is charged and ranked on its own.
//! - [`compute`]: one policy's values for every association from the raw
//!   usage of the user associations (already decayed) and, for tickets,
//!   their pending job counts: the rows `sshare -l` prints, and each user
//!   association's fair-share factor in `[0, 1]` for the job priority.
//!
//! Invariants: an account's raw usage is the sum of its user associations'
//! (usage is charged to leaves only); sibling sums count only the siblings
//! that compete (not `Fairshare=parent` ones); no NaN or infinity reaches a
//! factor (zero shares give 0; zero usage gives the largest level
//! fair-share, which is infinite in [`FairshareRow::level_fs`] only, as
//! `sshare` shows it).
//!
//! `Fairshare=parent` ([`RawShares::Parent`]), in every policy:
//! - an account so marked is flattened: its children compete as children
//!   of its parent (Slurm's documentation: "disable the fairshare at
//!   certain levels"); its row shows its parent's values;
//! - a user so marked stands for its account: it takes no part in its
//!   siblings' share sums and gets its account's values (classic: the
//!   account's normalized shares and effective usage, as Slurm documents;
//!   tickets: the account's `S*F`, competing for the account's tickets
//!   with its siblings; fair tree and flux: it ranks first in its account,
//!   tied with the other such users, since the account's place among its
//!   siblings already holds its fair share).

mod classic;
pub mod ledger;
pub(crate) mod live;
pub use live::PendingPriority;
pub mod priority;
mod ranked;
#[cfg(test)]
mod tests;
mod tickets;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An association: an account (or bank), or a user in an account.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AssocId(pub u32);

impl AssocId {
    pub const ROOT: AssocId = AssocId(0);
}

/// The shares an association holds among its siblings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RawShares {
    Count(u32),
    /// `Fairshare=parent`.
    Parent,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Assoc {
    pub account: String,
    /// `None` on an account.
    pub user: Option<String>,
    pub shares: RawShares,
    pub parent: Option<AssocId>,
    pub children: Vec<AssocId>,
}

impl Assoc {
    pub fn is_user(&self) -> bool {
        self.user.is_some()
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TreeError {
    #[error("account `{0}` is defined twice")]
    DuplicateAccount(String),
    #[error("user `{user}` is in account `{account}` twice")]
    DuplicateUser { account: String, user: String },
    #[error("`{0}` is a user association; accounts and users go under accounts")]
    UnderUser(String),
}

/// Accounts under `root` and the users in them. Parents come before their
/// children (ids grow down the tree); children keep the order they were
/// added in, which is the tree order of `sshare` and the last tie-break.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct AccountTree {
    assocs: Vec<Assoc>,
    accounts: BTreeMap<String, AssocId>,
    users: BTreeMap<String, Vec<AssocId>>,
    /// What every computation walks, made once after the last change.
    #[serde(skip)]
    layout: std::sync::OnceLock<Layout>,
}

/// The tree's order and each account's sibling sets, flattening and
/// `Fairshare=parent` applied ([`AccountTree::competing`]).
#[derive(Clone, Debug, Default)]
struct Layout {
    order: Vec<AssocId>,
    /// The accounts whose children form a sibling set (not flattened), in
    /// tree order: parents before children.
    sibling_parents: Vec<AssocId>,
    competing: Vec<Vec<AssocId>>,
    stand_ins: Vec<Vec<AssocId>>,
    effective_parent: Vec<Option<AssocId>>,
}

/// Trees are equal when their associations are; the layout is a cache.
impl PartialEq for AccountTree {
    fn eq(&self, other: &Self) -> bool {
        self.assocs == other.assocs
    }
}

impl Default for AccountTree {
    fn default() -> Self {
        Self::new()
    }
}

impl AccountTree {
    /// A tree with only the account `root`.
    pub fn new() -> AccountTree {
        let root =
            Assoc { account: "root".into(), user: None, shares: RawShares::Count(1), parent: None, children: vec![] };
        AccountTree {
            assocs: vec![root],
            accounts: BTreeMap::from([("root".into(), AssocId::ROOT)]),
            users: BTreeMap::new(),
            layout: std::sync::OnceLock::new(),
        }
    }

    pub fn add_account(&mut self, parent: AssocId, name: &str, shares: RawShares) -> Result<AssocId, TreeError> {
        if self.accounts.contains_key(name) {
            return Err(TreeError::DuplicateAccount(name.into()));
        }
        let id = self
            .push(parent, Assoc { account: name.into(), user: None, shares, parent: Some(parent), children: vec![] })?;
        self.accounts.insert(name.into(), id);
        Ok(id)
    }

    pub fn add_user(&mut self, account: AssocId, user: &str, shares: RawShares) -> Result<AssocId, TreeError> {
        let name = self.assocs[account.0 as usize].account.clone();
        if self.assoc(&name, user).is_some() {
            return Err(TreeError::DuplicateUser { account: name, user: user.into() });
        }
        let a = Assoc { account: name, user: Some(user.into()), shares, parent: Some(account), children: vec![] };
        let id = self.push(account, a)?;
        self.users.entry(user.into()).or_default().push(id);
        Ok(id)
    }

    fn push(&mut self, parent: AssocId, a: Assoc) -> Result<AssocId, TreeError> {
        let p = &self.assocs[parent.0 as usize];
        if let Some(u) = &p.user {
            return Err(TreeError::UnderUser(u.clone()));
        }
        let id = AssocId(self.assocs.len() as u32);
        self.layout = std::sync::OnceLock::new();
        self.assocs.push(a);
        self.assocs[parent.0 as usize].children.push(id);
        Ok(id)
    }

    /// The associations of an LSF share tree (`lsb.users` groups below a
    /// queue's or partition's top-level assignment): a group with its own
    /// share tree is an account, a user a user association of the account
    /// above; a group charged collectively (no share tree of its own) and
    /// `others` are one association each, named after the group (or
    /// `others`), as if a user of the account above. Users placed on the
    /// tree (named, or placed by `default` when first seen) are the users.
    pub fn from_share_tree(tree: &crate::shares::ShareTree) -> Result<AccountTree, TreeError> {
        use crate::shares::{NodeId, NodeKind};
        let mut out = AccountTree::new();
        let mut stack: Vec<(NodeId, AssocId)> = vec![(NodeId::ROOT, AssocId::ROOT)];
        while let Some((n, into)) = stack.pop() {
            let mut below = Vec::new();
            for &c in tree.children(n) {
                let shares = RawShares::Count(tree.shares(c));
                match tree.kind(c) {
                    NodeKind::Group { name, subtree: true } => {
                        let a = out.add_account(into, name, shares)?;
                        below.push((c, a));
                    }
                    NodeKind::Group { name, subtree: false } | NodeKind::User(name) => {
                        out.add_user(into, name, shares)?;
                    }
                    NodeKind::Others => {
                        out.add_user(into, "others", shares)?;
                    }
                    NodeKind::Root => {}
                }
            }
            stack.extend(below.into_iter().rev());
        }
        Ok(out)
    }

    pub fn len(&self) -> usize {
        self.assocs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.assocs.is_empty()
    }
    pub fn get(&self, id: AssocId) -> &Assoc {
        &self.assocs[id.0 as usize]
    }
    pub fn account(&self, name: &str) -> Option<AssocId> {
        self.accounts.get(name).copied()
    }
    /// A user's associations, in the order they were added.
    pub fn user_assocs(&self, user: &str) -> &[AssocId] {
        self.users.get(user).map_or(&[], Vec::as_slice)
    }
    pub fn assoc(&self, account: &str, user: &str) -> Option<AssocId> {
        self.user_assocs(user).iter().copied().find(|&a| self.get(a).account == account)
    }
    /// How many user associations the tree has (`N` of fair tree's and
    /// flux's `rank/N`).
    pub fn user_count(&self) -> usize {
        self.users.values().map(Vec::len).sum()
    }

    /// Every association, depth first, children in the order added: the
    /// rows of `sshare`.
    pub fn tree_order(&self) -> Vec<AssocId> {
        self.order().to_vec()
    }

    fn layout(&self) -> &Layout {
        self.layout.get_or_init(|| {
            let mut order = Vec::with_capacity(self.assocs.len());
            let mut stack = vec![AssocId::ROOT];
            while let Some(a) = stack.pop() {
                order.push(a);
                stack.extend(self.get(a).children.iter().rev());
            }
            let ids = (0..self.assocs.len() as u32).map(AssocId);
            let sibling_parents =
                order.iter().copied().filter(|&a| !self.get(a).is_user() && !self.is_flattened(a)).collect();
            Layout {
                sibling_parents,
                order,
                competing: ids.clone().map(|a| self.find_competing(a)).collect(),
                stand_ins: ids.clone().map(|a| self.find_stand_ins(a)).collect(),
                effective_parent: ids.map(|a| self.find_effective_parent(a)).collect(),
            }
        })
    }

    fn order(&self) -> &[AssocId] {
        &self.layout().order
    }

    /// The accounts whose children compete as siblings, parents first.
    fn sibling_parents(&self) -> &[AssocId] {
        &self.layout().sibling_parents
    }

    /// The children of `a` that compete among themselves: flattened
    /// accounts give way to their own children, and `Fairshare=parent`
    /// users stand aside ([`AccountTree::stand_ins`]).
    fn competing(&self, a: AssocId) -> &[AssocId] {
        &self.layout().competing[a.0 as usize]
    }

    /// The `Fairshare=parent` users that stand for `a`, including those of
    /// accounts flattened into it.
    fn stand_ins(&self, a: AssocId) -> &[AssocId] {
        &self.layout().stand_ins[a.0 as usize]
    }

    /// The nearest ancestor of `a` that is not flattened.
    fn effective_parent(&self, a: AssocId) -> Option<AssocId> {
        self.layout().effective_parent[a.0 as usize]
    }

    fn is_flattened(&self, a: AssocId) -> bool {
        let x = self.get(a);
        !x.is_user() && x.shares == RawShares::Parent && a != AssocId::ROOT
    }

    fn find_competing(&self, a: AssocId) -> Vec<AssocId> {
        let mut out = Vec::new();
        for &c in &self.get(a).children {
            if self.is_flattened(c) {
                out.extend(self.find_competing(c));
            } else if self.get(c).shares != RawShares::Parent {
                out.push(c);
            }
        }
        out
    }

    fn find_stand_ins(&self, a: AssocId) -> Vec<AssocId> {
        let mut out = Vec::new();
        for &c in &self.get(a).children {
            if self.is_flattened(c) {
                out.extend(self.find_stand_ins(c));
            } else if self.get(c).is_user() && self.get(c).shares == RawShares::Parent {
                out.push(c);
            }
        }
        out
    }

    fn find_effective_parent(&self, a: AssocId) -> Option<AssocId> {
        let mut p = self.get(a).parent?;
        while self.is_flattened(p) {
            p = self.get(p).parent?;
        }
        Some(p)
    }

    fn raw_shares(&self, a: AssocId) -> f64 {
        match self.get(a).shares {
            RawShares::Count(n) => f64::from(n),
            RawShares::Parent => 0.0,
        }
    }

    /// Raw usage of every association: the given usage of user
    /// associations, summed up the tree.
    fn aggregate(&self, usage: &[f64]) -> Vec<f64> {
        let mut raw: Vec<f64> = (0..self.assocs.len())
            .map(|i| if self.assocs[i].is_user() { usage.get(i).copied().unwrap_or(0.0).max(0.0) } else { 0.0 })
            .collect();
        // Children have larger ids than their parents.
        for i in (1..self.assocs.len()).rev() {
            if let Some(p) = self.assocs[i].parent {
                raw[p.0 as usize] += raw[i];
            }
        }
        raw
    }

    /// Whether `a` or an association below it has pending jobs.
    fn active(&self, pending: &[u32]) -> Vec<bool> {
        let mut active: Vec<bool> = (0..self.assocs.len())
            .map(|i| self.assocs[i].is_user() && pending.get(i).is_some_and(|&n| n > 0))
            .collect();
        for i in (1..self.assocs.len()).rev() {
            if active[i] {
                if let Some(p) = self.assocs[i].parent {
                    active[p.0 as usize] = true;
                }
            }
        }
        active
    }
}

/// The fair-share policy of a cluster (`[priority] policy` of `allot.toml`,
/// but for `lsf`, which is the share trees of [`crate::shares`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum FairsharePolicy {
    /// Slurm's classic factor, `F = 2^(-UE/S/d)` with `d` the
    /// FairShareDampeningFactor (1 by default).
    Classic { dampening: f64 },
    /// Slurm's fair tree.
    FairTree,
    /// Slurm's multifactor2 tickets (spec 001).
    Tickets,
    /// flux-accounting's weighted tree.
    Flux,
    /// Spec 002's fair-share factor (Flux's "Job Priority Plugin"): "A
    /// value of 0.5 represents a perfectly serviced account. 0.0 is
    /// over-serviced; 1.0 is under-serviced", and "for accounts at the
    /// same level, the fair-share factor will be proportional to the
    /// degree of being over or under serviced", from usage decayed by a
    /// half-life. The spec gives no formula. allot computes `F = 2^(-U/S)`:
    /// an association's own share of the usage `U` against its share of
    /// the machine `S` (its shares divided down the tree, as "child
    /// accounts ... further divide the shares of their parent"). That is
    /// 0.5 where usage matches shares at any depth, 1 with no usage, and
    /// falls towards 0 with over-service, in order of the degree. (Slurm
    /// classic's `UE` would mix in the parent's usage, and give a
    /// perfectly served user below its account 0.31.) flux-accounting's own ranking ([`FairsharePolicy::Flux`],
    /// `rank/N`) reads otherwise: a perfectly served user may get anything
    /// from 1.0 down, and two identical users different values.
    FluxSpec,
}

impl FairsharePolicy {
    /// The policy `[priority] policy` names, with slurm-classic's
    /// dampening factor; `None` for `lsf` or an unknown name.
    pub fn from_name(name: &str, dampening: f64) -> Option<FairsharePolicy> {
        match name {
            "slurm-classic" => Some(FairsharePolicy::Classic { dampening }),
            "slurm-fairtree" => Some(FairsharePolicy::FairTree),
            "slurm-tickets" => Some(FairsharePolicy::Tickets),
            "flux-accounting" => Some(FairsharePolicy::Flux),
            "flux" => Some(FairsharePolicy::FluxSpec),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            FairsharePolicy::Classic { .. } => "slurm-classic",
            FairsharePolicy::FairTree => "slurm-fairtree",
            FairsharePolicy::Tickets => "slurm-tickets",
            FairsharePolicy::Flux => "flux-accounting",
            FairsharePolicy::FluxSpec => "flux",
        }
    }
}

/// One association's values under a policy: the columns of `sshare -l`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FairshareRow {
    pub assoc: AssocId,
    /// Classic and tickets: the share of the whole machine (the product
    /// down the tree); fair tree and flux: the share among its siblings.
    pub norm_shares: f64,
    pub raw_usage: f64,
    /// The share of all usage.
    pub norm_usage: f64,
    /// Classic: `UE`; tickets: `max(U, 0.01*S)`; fair tree and flux: the
    /// usage among its siblings.
    pub effective_usage: f64,
    /// Classic: `2^(-UE/S/d)`; tickets: `S/U_eff`; fair tree and flux:
    /// `rank/N`, on user associations only.
    pub fairshare: Option<f64>,
    /// Fair tree and flux: `S/U` among siblings (infinite without usage).
    pub level_fs: Option<f64>,
    /// Tickets only.
    pub tickets: Option<f64>,
    /// The job priority's fair-share factor, in `[0, 1]`: classic `F`,
    /// tickets `T/T_max`, fair tree and flux `rank/N`. Users only.
    pub factor: Option<f64>,
}

impl FairshareRow {
    fn new(assoc: AssocId) -> FairshareRow {
        FairshareRow {
            assoc,
            norm_shares: 0.0,
            raw_usage: 0.0,
            norm_usage: 0.0,
            effective_usage: 0.0,
            fairshare: None,
            level_fs: None,
            tickets: None,
            factor: None,
        }
    }
}

/// `policy`'s values for every association of `tree` (indexed by
/// [`AssocId`]). `usage[i]` is the raw (decayed) usage of user association
/// `i`, `pending[i]` its pending jobs; both may be shorter than the tree
/// (missing entries are 0), and entries of accounts are ignored.
pub fn compute(policy: FairsharePolicy, tree: &AccountTree, usage: &[f64], pending: &[u32]) -> Vec<FairshareRow> {
    let raw = tree.aggregate(usage);
    let total = raw[0];
    let mut rows: Vec<FairshareRow> = (0..tree.len())
        .map(|i| {
            let mut r = FairshareRow::new(AssocId(i as u32));
            r.raw_usage = raw[i];
            r.norm_usage = if total > 0.0 { raw[i] / total } else { 0.0 };
            r
        })
        .collect();
    rows[0].norm_shares = 1.0;
    rows[0].effective_usage = rows[0].norm_usage;
    match policy {
        FairsharePolicy::Classic { dampening } => classic::compute(tree, &mut rows, dampening, true),
        FairsharePolicy::FluxSpec => classic::compute(tree, &mut rows, 1.0, false),
        FairsharePolicy::Tickets => tickets::compute(tree, &mut rows, &tree.active(pending)),
        FairsharePolicy::FairTree => ranked::compute(tree, &mut rows, ranked::Ties::FairTree),
        FairsharePolicy::Flux => ranked::compute(tree, &mut rows, ranked::Ties::Flux),
    }
    // A flattened account shows the values of the account it is part of.
    for &a in tree.order() {
        if tree.is_flattened(a) {
            if let Some(p) = tree.effective_parent(a) {
                let mut r = rows[p.0 as usize].clone();
                r.assoc = a;
                r.raw_usage = rows[a.0 as usize].raw_usage;
                r.norm_usage = rows[a.0 as usize].norm_usage;
                // Fair tree, as Slurm shows it (test24.4's aDA): its own
                // usage over the account's, no level fair-share.
                if policy == FairsharePolicy::FairTree {
                    let parent_usage = rows[p.0 as usize].raw_usage;
                    r.effective_usage = if parent_usage > 0.0 { r.raw_usage / parent_usage } else { 0.0 };
                    r.level_fs = None;
                }
                rows[a.0 as usize] = r;
            }
        }
    }
    rows
}

/// The global normalized shares of classic and tickets:
/// `S = (S_self / S_siblings) * (S_parent / S_parent_siblings) * ...`.
fn global_shares(tree: &AccountTree, rows: &mut [FairshareRow]) {
    for &a in tree.sibling_parents() {
        let competing = tree.competing(a);
        let sum: f64 = competing.iter().map(|&c| tree.raw_shares(c)).sum();
        let s = rows[a.0 as usize].norm_shares;
        for &c in competing {
            rows[c.0 as usize].norm_shares = if sum > 0.0 { s * tree.raw_shares(c) / sum } else { 0.0 };
        }
        for &u in tree.stand_ins(a) {
            rows[u.0 as usize].norm_shares = s;
        }
    }
}
