//! `lsb.users`: the UserGroup section (GROUP_NAME, GROUP_MEMBER,
//! USER_SHARES) and the User section (USER_NAME, MAX_JOBS, JL/P,
//! MAX_PEND_JOBS, MAX_PEND_SLOTS).

use allot_engine::shares::assign::Member;
use allot_engine::shares::{GroupTable, UserGroup};
use std::collections::BTreeMap;

use super::read::{at, value};
use super::shares::convert_shares;
use super::text::{Source, sections, table, unparen};
use super::values::{number, share_list, uint};
use crate::diag::{Diagnostics, Location};
use crate::model::UserLimits;

/// Reads `lsb.users`. A member that names a group defined later in the
/// file is an error (spec 000: groups must be defined before they are used).
pub fn read(src: &Source<'_>, diags: &mut Diagnostics) -> (GroupTable, Vec<UserLimits>) {
    let mut groups: Vec<UserGroup> = Vec::new();
    let mut defined: BTreeMap<String, Location> = BTreeMap::new();
    let mut later_uses: Vec<(String, Location)> = Vec::new();
    let mut each_uses: Vec<(String, Location)> = Vec::new();
    let mut limits = Vec::new();
    let secs = sections(src, diags);
    for section in &secs {
        if section.is("UserGroup") {
            let Some(t) = table(section, diags) else { continue };
            t.warn_unapplied("UserGroup", &["GROUP_NAME", "GROUP_MEMBER", "USER_SHARES"], diags);
            for col in ["GROUP_NAME", "GROUP_MEMBER"] {
                if !t.columns.iter().any(|c| c == col) {
                    diags.error(t.header.loc(0), format!("UserGroup: expected a `{col}` column"));
                }
            }
            for row in &t.rows {
                let (Some(name), Some(members)) = (row.get(&t, "GROUP_NAME"), row.get(&t, "GROUP_MEMBER")) else {
                    continue;
                };
                if let Some(first) = defined.get(name) {
                    diags.error(at(row.line, name), format!("user group `{name}` is already defined at {first}"));
                    continue;
                }
                let mut list = Vec::new();
                for m in unparen(members).split_whitespace() {
                    if m.eq_ignore_ascii_case("all") {
                        list.push(Member::All);
                    } else if defined.contains_key(m) {
                        list.push(Member::Group(m.to_string()));
                    } else {
                        later_uses.push((m.to_string(), at(row.line, m)));
                        list.push(Member::User(m.to_string()));
                    }
                }
                let raw = match row.get(&t, "USER_SHARES") {
                    Some(s) => value(diags, row.line, "USER_SHARES", unparen(s), share_list).unwrap_or_default(),
                    None => Vec::new(),
                };
                for r in &raw {
                    if let Some(g) = r.name.strip_suffix('@') {
                        each_uses.push((g.to_string(), at(row.line, r.name)));
                    }
                }
                let shares = convert_shares(&raw);
                defined.insert(name.to_string(), at(row.line, name));
                groups.push(UserGroup { name: name.to_string(), members: list, shares });
            }
        } else if section.is("User") {
            let Some(t) = table(section, diags) else { continue };
            // JL/P of a user is read (and checked) but not applied.
            t.warn_unapplied("User", &["USER_NAME", "MAX_JOBS", "MAX_PEND_JOBS", "MAX_PEND_SLOTS"], diags);
            for row in &t.rows {
                let Some(name) = row.get(&t, "USER_NAME") else {
                    diags.error(t.header.loc(0), "User: expected a `USER_NAME` column");
                    break;
                };
                let field = |c: &str| row.get(&t, c).map(unparen).filter(|v| !v.is_empty());
                let max_jobs = field("MAX_JOBS").and_then(|v| value(diags, row.line, "MAX_JOBS", v, uint));
                let jl_p = field("JL/P").and_then(|v| value(diags, row.line, "JL/P", v, number));
                let max_pend_jobs =
                    field("MAX_PEND_JOBS").and_then(|v| value(diags, row.line, "MAX_PEND_JOBS", v, uint));
                let max_pend_slots =
                    field("MAX_PEND_SLOTS").and_then(|v| value(diags, row.line, "MAX_PEND_SLOTS", v, uint));
                limits.push(UserLimits { name: name.to_string(), max_jobs, jl_p, max_pend_jobs, max_pend_slots });
            }
        } else {
            diags.warning(at(&section.begin, &section.name), format!("unknown section `{}`, ignored", section.name));
        }
    }
    for (name, loc) in later_uses {
        if let Some(def) = defined.get(&name) {
            diags.error(loc, format!("user group `{name}` is used before it is defined (at {def})"));
        }
    }
    for (name, loc) in each_uses {
        if !defined.contains_key(&name) {
            diags.error(loc, format!("`{name}@`: user group `{name}` is not defined"));
        }
    }
    (GroupTable::new(groups), limits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use allot_engine::shares::{ShareAssignment, ShareTarget};

    fn users(text: &str) -> (GroupTable, Diagnostics) {
        let mut d = Diagnostics::default();
        let (g, _) = read(&Source { name: "lsb.users", text }, &mut d);
        (g, d)
    }

    #[test]
    fn the_specs_share_tree_reads() {
        let (g, d) = users(
            "Begin UserGroup\nGROUP_NAME GROUP_MEMBER USER_SHARES\nGroupB (User1 User2) ()\n\
             GroupC (User3 User4) ([User3, 3] [User4, 4])\nGroupA (GroupB GroupC User5) ([User5, 1] [default, 10])\nEnd UserGroup\n",
        );
        assert!(d.0.is_empty(), "{d}");
        let a = g.get("GroupA").expect("GroupA");
        assert_eq!(
            a.members,
            [Member::Group("GroupB".into()), Member::Group("GroupC".into()), Member::User("User5".into())]
        );
        assert_eq!(
            a.shares,
            [
                ShareAssignment::new(ShareTarget::User("User5".into()), 1),
                ShareAssignment::new(ShareTarget::Default, 10)
            ]
        );
        assert!(g.get("GroupB").expect("GroupB").shares.is_empty());
    }

    #[test]
    fn groups_must_be_defined_before_use() {
        let (_, d) = users("Begin UserGroup\nGROUP_NAME GROUP_MEMBER\nA (B u1)\nB (u2)\nEnd UserGroup\n");
        let msgs: Vec<String> = d.0.iter().map(|x| x.to_string()).collect();
        assert_eq!(msgs, ["lsb.users:3:4: error: user group `B` is used before it is defined (at lsb.users:4:1)"]);
    }

    #[test]
    fn user_section_and_located_share_errors() {
        let mut d = Diagnostics::default();
        let (_, limits) = read(
            &Source {
                name: "lsb.users",
                text: "Begin User\nUSER_NAME MAX_JOBS JL/P\nuser1 10 2\ndefault () ()\nEnd User\n\
                       Begin UserGroup\nGROUP_NAME GROUP_MEMBER USER_SHARES\ng (a b) ([a 1])\nEnd UserGroup\n",
            },
            &mut d,
        );
        assert_eq!(
            limits[0],
            UserLimits {
                name: "user1".into(),
                max_jobs: Some(10),
                jl_p: Some(2.0),
                max_pend_jobs: None,
                max_pend_slots: None
            }
        );
        assert_eq!(limits[1].max_jobs, None);
        let msgs: Vec<String> = d.0.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            msgs,
            [
                "lsb.users:2:20: warning: User: the `JL/P` column is not applied by allot, ignored",
                "lsb.users:8:13: error: USER_SHARES: expected `,`, found `1]`"
            ]
        );
    }
}
