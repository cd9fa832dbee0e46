//! From share assignments as written to the engine's.

use allot_engine::shares::{ShareAssignment, ShareTarget};

use super::values::RawShare;

/// `default` and `others` are keywords, `name@` is every member of a group;
/// any other name is a user, or a group (the engine tells them apart by the
/// user groups of `lsb.users`).
pub fn convert_shares(raw: &[RawShare<'_>]) -> Vec<ShareAssignment> {
    raw.iter()
        .map(|r| {
            let target = match r.name {
                n if n.eq_ignore_ascii_case("default") => ShareTarget::Default,
                n if n.eq_ignore_ascii_case("others") => ShareTarget::Others,
                n => match n.strip_suffix('@') {
                    Some(g) => ShareTarget::GroupEach(g.to_string()),
                    None => ShareTarget::User(n.to_string()),
                },
            };
            ShareAssignment::new(target, r.shares)
        })
        .collect()
}
