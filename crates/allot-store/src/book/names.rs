//! Jobs by their owner and name, for `-w`'s name terms (`done(name)`,
//! `ended(name*)`): a term looks among its user's jobs whose names begin
//! with the pattern's text before its first `*` or `[`, not the whole job
//! table. An array's elements are listed under the array's name (their
//! own names are `name[index]`).

use std::collections::BTreeSet;

use allot_engine::JobId;

/// (user, name, job): every job of the job table.
#[derive(Clone, Debug, Default)]
pub struct Names(BTreeSet<(String, String, JobId)>);

impl Names {
    pub fn insert(&mut self, user: &str, name: &str, job: JobId) {
        self.0.insert((user.to_string(), name.to_string(), job));
    }

    pub fn remove(&mut self, user: &str, name: &str, job: JobId) {
        self.0.remove(&(user.to_string(), name.to_string(), job));
    }

    /// The jobs of `user` whose names may match `pattern`: those whose
    /// names begin with its text before its first `*` or `[` (a superset
    /// of the matches, in name order), for the caller to match each.
    pub fn candidates<'a>(&'a self, user: &'a str, pattern: &'a str) -> impl Iterator<Item = (&'a str, JobId)> + 'a {
        let prefix = &pattern[..pattern.find(['*', '[']).unwrap_or(pattern.len())];
        let from = (user.to_string(), prefix.to_string(), JobId(0));
        self.0
            .range(from..)
            .take_while(move |(u, n, _)| u == user && n.starts_with(prefix))
            .map(|(_, n, id)| (n.as_str(), *id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_looks_only_at_its_users_jobs_under_its_prefix() {
        let mut names = Names::default();
        for (user, name, id) in
            [("u", "sim-a", 1), ("u", "sim-b", 2), ("u", "other", 3), ("v", "sim-c", 4), ("u", "many", 5)]
        {
            names.insert(user, name, JobId(id));
        }
        let ids = |names: &Names, pattern: &str| names.candidates("u", pattern).map(|(_, id)| id.0).collect::<Vec<_>>();
        assert_eq!(ids(&names, "sim*"), [1, 2]);
        assert_eq!(ids(&names, "sim-b"), [2]);
        assert_eq!(ids(&names, "many[3]"), [5], "an element by the array's name");
        assert_eq!(ids(&names, "*b"), [5, 3, 1, 2], "no prefix: every job of the user, in name order");
        names.remove("u", "sim-a", JobId(1));
        assert_eq!(ids(&names, "sim*"), [2]);
    }
}
