//! Jobs by their owner and name, for `-w`'s name terms (`done(name)`,
//! `ended(name*)`): a term looks among its user's jobs whose names begin
//! with the pattern's text before its first `*` or `[`, not the whole job
//! table. An array's elements are listed under the array's name (their
//! own names are `name[index]`).

use std::collections::{BTreeMap, BTreeSet};

use allot_engine::JobId;

/// Every job of the job table, by owner, then by name, then by id. Each
/// level apart: a job joins and leaves with one look-up of its owner and
/// one of its name (no copy of either but the first), its id compared as
/// a number among the jobs of the same name; a name term looks among its
/// own user's jobs only.
#[derive(Clone, Debug, Default)]
pub struct Names(BTreeMap<String, BTreeMap<Box<str>, BTreeSet<JobId>>>);

impl Names {
    /// Lists `job` of `user` under `name`. A job without a name is not
    /// listed: no name term can name it (allotd names every job, by `-J`
    /// or by its command; a workload's job without `-J` has none).
    pub fn insert(&mut self, user: &str, name: &str, job: JobId) {
        if name.is_empty() {
            return;
        }
        let names = match self.0.get_mut(user) {
            Some(names) => names,
            None => self.0.entry(user.to_string()).or_default(),
        };
        let jobs = match names.get_mut(name) {
            Some(jobs) => jobs,
            None => names.entry(Box::from(name)).or_default(),
        };
        jobs.insert(job);
    }

    pub fn remove(&mut self, user: &str, name: &str, job: JobId) {
        if name.is_empty() {
            return;
        }
        let Some(names) = self.0.get_mut(user) else { return };
        let Some(jobs) = names.get_mut(name) else { return };
        jobs.remove(&job);
        if jobs.is_empty() {
            names.remove(name);
            if names.is_empty() {
                self.0.remove(user);
            }
        }
    }

    /// The jobs of `user` whose names may match `pattern`: those whose
    /// names begin with its text before its first `*` or `[` (a superset
    /// of the matches, in name order), for the caller to match each.
    pub fn candidates<'a>(&'a self, user: &'a str, pattern: &'a str) -> impl Iterator<Item = (&'a str, JobId)> + 'a {
        let prefix = &pattern[..pattern.find(['*', '[']).unwrap_or(pattern.len())];
        (self.0.get(user).into_iter())
            .flat_map(move |names| {
                names.range::<str, _>((std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded))
            })
            .take_while(move |(n, _)| n.starts_with(prefix))
            .flat_map(|(n, ids)| ids.iter().map(move |id| (&**n, *id)))
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
        names.insert("u", "", JobId(6));
        assert_eq!(ids(&names, "*"), [5, 3, 1, 2], "a job without a name is named by no pattern");
        names.remove("u", "sim-a", JobId(1));
        assert_eq!(ids(&names, "sim*"), [2]);
    }
}
