//! Share assignments and user groups (spec 000, "User Share Assignments";
//! `lsb.users` UserGroup section).

use std::collections::{BTreeMap, BTreeSet};

/// Who a share assignment names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum ShareTarget {
    /// One user.
    User(String),
    /// A group, collectively (`group`): its members share the shares, by
    /// the group's own share tree if it has one, otherwise FCFS.
    Group(String),
    /// Every member of a group, recursively, each individually (`group@`);
    /// no further hierarchy below.
    GroupEach(String),
    /// Every user not otherwise named at this level, each individually.
    Default,
    /// Every user not otherwise named at this level, collectively (FCFS).
    Others,
}

/// `[target, shares]`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShareAssignment {
    pub target: ShareTarget,
    pub shares: u32,
}

impl ShareAssignment {
    pub fn new(target: ShareTarget, shares: u32) -> Self {
        ShareAssignment { target, shares }
    }
}

impl std::fmt::Display for ShareAssignment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.target {
            ShareTarget::User(n) | ShareTarget::Group(n) => write!(f, "[{n}, {}]", self.shares),
            ShareTarget::GroupEach(n) => write!(f, "[{n}@, {}]", self.shares),
            ShareTarget::Default => write!(f, "[default, {}]", self.shares),
            ShareTarget::Others => write!(f, "[others, {}]", self.shares),
        }
    }
}

/// A member of a user group, as `lsb.users` GROUP_MEMBER lists it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Member {
    User(String),
    Group(String),
    /// The keyword `all`: every user of the cluster.
    All,
}

/// One `lsb.users` UserGroup row.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UserGroup {
    pub name: String,
    pub members: Vec<Member>,
    /// The group's share tree (USER_SHARES); empty when the group has none,
    /// and then its members compete FCFS.
    pub shares: Vec<ShareAssignment>,
}

/// All user groups, in configuration order, indexed so that membership is
/// a short walk up from a user's own groups rather than a scan of members.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GroupTable {
    groups: Vec<UserGroup>,
    by_name: BTreeMap<String, usize>,
    /// The groups that list a user directly.
    direct_of_user: BTreeMap<String, Vec<usize>>,
    /// The groups that list a group as a member.
    parents: Vec<Vec<usize>>,
    /// Whether a group includes `all`, directly or through a subgroup.
    has_all: Vec<bool>,
}

impl GroupTable {
    /// Builds the table; a later group with the same name replaces the
    /// earlier one (configuration validation reports the duplicate).
    pub fn new(groups: Vec<UserGroup>) -> Self {
        let mut table = GroupTable::default();
        for g in groups {
            match table.by_name.get(&g.name) {
                Some(&i) => table.groups[i] = g,
                None => {
                    table.by_name.insert(g.name.clone(), table.groups.len());
                    table.groups.push(g);
                }
            }
        }
        table.parents = vec![Vec::new(); table.groups.len()];
        for (gi, g) in table.groups.iter().enumerate() {
            for m in &g.members {
                match m {
                    Member::User(u) => table.direct_of_user.entry(u.clone()).or_default().push(gi),
                    Member::Group(sub) => {
                        if let Some(&si) = table.by_name.get(sub) {
                            table.parents[si].push(gi);
                        }
                    }
                    Member::All => {}
                }
            }
        }
        table.has_all = vec![false; table.groups.len()];
        let mut stack: Vec<usize> =
            (0..table.groups.len()).filter(|&i| table.groups[i].members.contains(&Member::All)).collect();
        while let Some(i) = stack.pop() {
            if !std::mem::replace(&mut table.has_all[i], true) {
                stack.extend(table.parents[i].iter().copied());
            }
        }
        table
    }

    pub fn get(&self, name: &str) -> Option<&UserGroup> {
        self.by_name.get(name).map(|&i| &self.groups[i])
    }

    pub fn iter(&self) -> impl Iterator<Item = &UserGroup> {
        self.groups.iter()
    }

    pub fn is_group(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Whether `user` is a member of `group`, directly or through subgroups
    /// (or through `all`).
    pub fn contains(&self, group: &str, user: &str) -> bool {
        let Some(&target) = self.by_name.get(group) else { return false };
        if self.has_all[target] {
            return true;
        }
        let Some(direct) = self.direct_of_user.get(user) else { return false };
        let mut seen = BTreeSet::new();
        let mut stack = direct.clone();
        while let Some(g) = stack.pop() {
            if g == target {
                return true;
            }
            if seen.insert(g) {
                stack.extend(self.parents[g].iter().copied());
            }
        }
        false
    }

    /// Whether `user` is listed in `group` itself (not through a subgroup).
    pub fn is_direct_member(&self, group: &str, user: &str) -> bool {
        let Some(&gi) = self.by_name.get(group) else { return false };
        self.direct_of_user.get(user).is_some_and(|d| d.contains(&gi))
    }

    /// The subgroups a group lists, in order.
    pub fn subgroups<'a>(&'a self, group: &str) -> impl Iterator<Item = &'a str> + 'a {
        self.get(group).into_iter().flat_map(|g| {
            g.members.iter().filter_map(|m| match m {
                Member::Group(sub) => Some(sub.as_str()),
                _ => None,
            })
        })
    }

    /// Whether a group has subgroups (`bsub -G` wants a group without).
    pub fn has_subgroups(&self, group: &str) -> bool {
        self.subgroups(group).next().is_some()
    }

    /// Whether a group's membership includes `all`, directly or through
    /// subgroups: then every user is a member.
    pub fn includes_all(&self, group: &str) -> bool {
        self.by_name.get(group).is_some_and(|&i| self.has_all[i])
    }

    /// The users named in a group, recursively, in order of first mention
    /// (`all` names no one in particular).
    pub fn users_of(&self, group: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut seen_users = BTreeSet::new();
        self.collect_users(group, &mut out, &mut seen_users, &mut BTreeSet::new());
        out
    }

    fn collect_users<'a>(
        &'a self,
        group: &'a str,
        out: &mut Vec<String>,
        seen_users: &mut BTreeSet<String>,
        seen_groups: &mut BTreeSet<&'a str>,
    ) {
        if !seen_groups.insert(group) {
            return;
        }
        let Some(g) = self.get(group) else { return };
        for m in &g.members {
            match m {
                Member::User(u) => {
                    if seen_users.insert(u.clone()) {
                        out.push(u.clone());
                    }
                }
                Member::Group(sub) => self.collect_users(sub, out, seen_users, seen_groups),
                Member::All => {}
            }
        }
    }

    /// Every user named anywhere in the groups, in order of first mention.
    pub fn all_named_users(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        for g in &self.groups {
            for m in &g.members {
                if let Member::User(u) = m {
                    if seen.insert(u.clone()) {
                        out.push(u.clone());
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn group(name: &str, members: &[&str], groups: &[&str]) -> UserGroup {
        let members = members
            .iter()
            .map(|m| match *m {
                "all" => Member::All,
                m if groups.contains(&m) => Member::Group(m.to_string()),
                m => Member::User(m.to_string()),
            })
            .collect();
        UserGroup { name: name.to_string(), members, shares: Vec::new() }
    }

    #[test]
    fn membership_is_recursive_and_cycles_end() {
        let t = GroupTable::new(vec![
            group("B", &["u1", "u2"], &[]),
            group("C", &["u3", "A"], &["A"]),
            group("A", &["B", "C", "u5"], &["B", "C"]),
        ]);
        assert!(t.contains("A", "u1"));
        assert!(t.contains("A", "u3"));
        assert!(!t.contains("B", "u3"));
        assert!(t.has_subgroups("A"));
        assert!(!t.has_subgroups("B"));
        assert_eq!(t.users_of("A"), ["u1", "u2", "u3", "u5"]);
    }

    #[test]
    fn all_makes_everyone_a_member() {
        let t = GroupTable::new(vec![group("everyone", &["all"], &[]), group("outer", &["everyone"], &["everyone"])]);
        assert!(t.contains("outer", "anybody"));
        assert!(t.includes_all("outer"));
    }
}
