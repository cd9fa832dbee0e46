//! Usage files for `allot sshare` and `allot sprio`: a JSON list of user
//! associations, each with its usage in billed seconds (already decayed)
//! and its pending jobs (which the ticket policy needs):
//!
//! ```json
//! [{"account": "B", "user": "User1", "usage": 20, "pending": 1},
//!  {"user": "User2", "usage": 5}]
//! ```
//!
//! `account` may be left out when the user has one association;
//! `pending` is 0 when left out. For `sprio`, an entry may list its
//! pending jobs, each with any of `id` (numbered on from the largest given
//! otherwise), `queue` (the default queue), `slots` (1), `waited` (seconds
//! since submission, 0), `qos` (`normal`) and `user_factor` (1):
//! `{"user": "u1", "usage": 5, "jobs": [{"id": 7, "slots": 4, "waited": 3600}]}`;
//! `pending` is then the number of jobs listed (a different one is an
//! error), and without `jobs`, `pending` jobs with every default. An association given twice, an unknown
//! user or account, or a usage that is negative or not a number is an
//! error that names the entry and its line.

use allot_engine::multifactor::{AccountTree, AssocId};
use serde::Deserialize;

use crate::diag::{Diagnostics, Location};
use crate::settings::line_col;

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub account: Option<String>,
    pub user: String,
    pub usage: f64,
    #[serde(default)]
    pub pending: Option<u32>,
    #[serde(default)]
    pub jobs: Vec<JobEntry>,
}

impl Entry {
    /// Its pending jobs: those listed, or `pending` of them.
    pub fn pending(&self) -> u32 {
        if self.jobs.is_empty() { self.pending.unwrap_or(0) } else { self.jobs.len() as u32 }
    }
}

/// A pending job of an association, for `sprio`.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct JobEntry {
    pub id: Option<u64>,
    pub queue: Option<String>,
    pub slots: Option<u32>,
    /// The hosts it asks for (job size by nodes); by default as many as
    /// its slots fill on the largest hosts.
    pub nodes: Option<u32>,
    #[serde(default)]
    pub waited: u64,
    pub qos: Option<String>,
    pub user_factor: Option<f64>,
}

/// The entries of a usage file, unchecked: their users are the ones an
/// account tree built from LSF share trees must place first.
pub fn entries(file: &str, text: &str) -> Result<Vec<Entry>, Diagnostics> {
    serde_json::from_str(text).map_err(|e| {
        let mut d = Diagnostics::default();
        let loc = Location { file: file.to_string(), line: e.line() as u32, col: e.column() as u32 };
        d.error(loc, format!("expected a list of {{\"account\", \"user\", \"usage\", \"pending\"}} objects: {e}"));
        d
    })
}

/// What a usage file charges to an account tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Charges {
    /// Usage and pending jobs per association (indexed by [`AssocId`]).
    pub usage: Vec<f64>,
    pub pending: Vec<u32>,
    /// Each entry's association, in the file's order.
    pub assocs: Vec<AssocId>,
}

/// What `entries`, read from `file`'s `text`, charge to `tree`.
pub fn charge(file: &str, text: &str, entries: &[Entry], tree: &AccountTree) -> Result<Charges, Diagnostics> {
    let mut diags = Diagnostics::default();
    let mut usage = vec![0.0; tree.len()];
    let mut pending = vec![0; tree.len()];
    let mut assocs = Vec::with_capacity(entries.len());
    let mut given = vec![false; tree.len()];
    // Entry i's place: the i-th `"user"` key of the text.
    let mut at = text.match_indices("\"user\"").map(|(i, _)| i);
    for (i, e) in entries.iter().enumerate() {
        let loc = line_col(file, text, at.next().unwrap_or(0));
        let what = format!("entry {} (user `{}`)", i + 1, e.user);
        let assoc: Result<AssocId, String> = match &e.account {
            Some(a) if tree.account(a).is_none() => Err(format!("{what}: no account `{a}`")),
            Some(a) => {
                tree.assoc(a, &e.user).ok_or_else(|| format!("{what}: `{}` is not a user of account `{a}`", e.user))
            }
            None => match tree.user_assocs(&e.user) {
                [] => Err(format!("{what}: no association for user `{}`", e.user)),
                [one] => Ok(*one),
                several => {
                    let names: Vec<&str> = several.iter().map(|&a| tree.get(a).account.as_str()).collect();
                    Err(format!("{what}: the user is in accounts {}: name one with \"account\"", names.join(", ")))
                }
            },
        };
        match assoc {
            Err(m) => diags.error(loc, m),
            Ok(_) if !e.jobs.is_empty() && e.pending.is_some_and(|n| n as usize != e.jobs.len()) => {
                diags.error(loc, format!("{what}: pending: {} jobs are listed", e.jobs.len()))
            }
            Ok(_) if !e.usage.is_finite() || e.usage < 0.0 => {
                diags.error(loc, format!("{what}: usage: expected a number, 0 or more, found {}", e.usage))
            }
            Ok(a) if given[a.0 as usize] => diags.error(loc, format!("{what}: the association is given twice")),
            Ok(a) => {
                given[a.0 as usize] = true;
                usage[a.0 as usize] = e.usage;
                pending[a.0 as usize] = e.pending();
                assocs.push(a);
            }
        }
    }
    if diags.has_errors() { Err(diags) } else { Ok(Charges { usage, pending, assocs }) }
}

#[cfg(test)]
mod tests {
    use allot_engine::multifactor::RawShares;

    use super::*;

    fn tree() -> AccountTree {
        let mut t = AccountTree::new();
        let a = t.add_account(AssocId::ROOT, "A", RawShares::Count(1)).expect("A");
        let b = t.add_account(AssocId::ROOT, "B", RawShares::Count(1)).expect("B");
        t.add_user(a, "u1", RawShares::Count(1)).expect("u1");
        t.add_user(a, "u2", RawShares::Count(1)).expect("u2");
        t.add_user(b, "u2", RawShares::Count(1)).expect("u2 in B");
        t
    }

    #[test]
    fn entries_charge_their_associations() {
        let t = tree();
        let text = r#"[{"user": "u1", "usage": 20, "pending": 2}, {"account": "B", "user": "u2", "usage": 5.5}]"#;
        let e = entries("u.json", text).expect("reads");
        let Charges { usage, pending, assocs } = charge("u.json", text, &e, &t).expect("charges");
        let u1 = t.assoc("A", "u1").expect("u1");
        let u2b = t.assoc("B", "u2").expect("u2");
        assert_eq!(assocs, [u1, u2b], "each entry's association");
        assert_eq!((usage[u1.0 as usize], pending[u1.0 as usize]), (20.0, 2));
        assert_eq!((usage[u2b.0 as usize], pending[u2b.0 as usize]), (5.5, 0));
        assert_eq!(usage.iter().sum::<f64>(), 25.5);
    }

    #[test]
    fn bad_entries_are_located() {
        let t = tree();
        let cases = [
            (
                "[{\"user\": \"nobody\", \"usage\": 1}]",
                "u.json:1:3: error: entry 1 (user `nobody`): no association for user `nobody`",
            ),
            (
                "[\n {\"user\": \"u2\", \"usage\": 1}]",
                "u.json:2:3: error: entry 1 (user `u2`): the user is in accounts A, B: name one with \"account\"",
            ),
            (
                "[{\"account\": \"C\", \"user\": \"u1\", \"usage\": 1}]",
                "u.json:1:19: error: entry 1 (user `u1`): no account `C`",
            ),
            (
                "[{\"account\": \"B\", \"user\": \"u1\", \"usage\": 1}]",
                "u.json:1:19: error: entry 1 (user `u1`): `u1` is not a user of account `B`",
            ),
            (
                "[{\"user\": \"u1\", \"usage\": -1}]",
                "u.json:1:3: error: entry 1 (user `u1`): usage: expected a number, 0 or more, found -1",
            ),
            (
                "[{\"user\": \"u1\", \"usage\": 1},\n{\"user\": \"u1\", \"usage\": 2}]",
                "u.json:2:2: error: entry 2 (user `u1`): the association is given twice",
            ),
        ];
        let more = [(
            "[{\"user\": \"u1\", \"usage\": 1, \"pending\": 3, \"jobs\": [{\"slots\": 2}]}]",
            "u.json:1:3: error: entry 1 (user `u1`): pending: 1 jobs are listed",
        )];
        for (text, want) in cases.into_iter().chain(more) {
            let e = entries("u.json", text).expect(text);
            let d = charge("u.json", text, &e, &t).expect_err(text);
            assert_eq!(d.0[0].to_string(), want);
        }
        let d = entries("u.json", "[{\"user\": \"u1\"}]").expect_err("no usage");
        assert!(d.0[0].to_string().starts_with("u.json:1:15: error: expected a list of"), "{}", d.0[0]);
    }
}
