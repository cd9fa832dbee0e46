//! The share configuration both benchmarks use: a tree three levels deep,
//! `divisions` top-level groups of `departments` groups each, whose users
//! (named by `user(division, department, index)`) take `[default, 1]`.

use allot_engine::shares::assign::{Member, UserGroup};
use allot_engine::shares::{GroupTable, ShareAssignment, ShareTarget};

pub fn deep_tree(
    divisions: usize,
    departments: usize,
    users_per_department: usize,
    user: impl Fn(usize, usize, usize) -> String,
) -> (Vec<ShareAssignment>, GroupTable, Vec<String>) {
    let mut groups = Vec::new();
    let mut users = Vec::new();
    let mut top = Vec::new();
    for div in 0..divisions {
        let mut div_shares = Vec::new();
        let mut div_members = Vec::new();
        for dep in 0..departments {
            let name = format!("dep{div}_{dep}");
            let members: Vec<String> = (0..users_per_department).map(|u| user(div, dep, u)).collect();
            users.extend(members.iter().cloned());
            groups.push(UserGroup {
                name: name.clone(),
                members: members.into_iter().map(Member::User).collect(),
                shares: vec![ShareAssignment::new(ShareTarget::Default, 1)],
            });
            div_shares.push(ShareAssignment::new(ShareTarget::Group(name.clone()), 1 + dep as u32));
            div_members.push(Member::Group(name));
        }
        let name = format!("div{div}");
        groups.push(UserGroup { name: name.clone(), members: div_members, shares: div_shares });
        top.push(ShareAssignment::new(ShareTarget::Group(name), 10 + div as u32));
    }
    (top, GroupTable::new(groups), users)
}
