//! Job groups (`bsub -g /A/B`, `bgadd`, `bgmod`, `bgdel`), as LSF
//! documents them: a tree of paths under the root group `/`, each with an
//! owner and an optional job limit (`-L`).
//!
//! - A group's limit caps the jobs *started* under it and its subgroups
//!   (running, or suspended while running: RUN, SSUSP, USUSP), counted per
//!   job, not per slot ("If a parallel job requests 2 CPUs, the job group
//!   limit is per job"). A job starts only while every group on its path
//!   with a limit has room, so a group without a limit of its own
//!   "inherits any limits of existing parent job groups". A limit of 0
//!   lets no job of the group run.
//! - `bgadd` makes the whole path, each missing group owned by the caller;
//!   `bsub -g` to a group that does not exist makes it the same way
//!   (implicitly, owned by the job's user, without a limit).
//! - A limit may not exceed a limit above it, nor be below a limit under
//!   it (`bgmod`'s rule, applied to `bgadd -L` as well).
//! - `bgdel` deletes a group and its subgroups, refused while any of them
//!   holds an unfinished job. Finished jobs keep their group's name.
//!
//! Choices where LSF is silent: a group name is a `/`-separated path of
//! letters, digits, `_`, `-` and `.` (the characters LSF's dependency
//! expressions accept), at most [`MAX_DEPTH`] deep and [`MAX_PATH`]
//! characters long; and one owner holds at most [`MAX_PER_OWNER`] groups,
//! so that no user can grow allotd without bound by making groups.

use std::collections::BTreeMap;

use crate::engine::{Engine, Job, JobId, JobState};

/// The deepest a job group path goes.
pub const MAX_DEPTH: usize = 32;
/// The longest a job group path is, in characters.
pub const MAX_PATH: usize = 512;
/// The most job groups one owner holds.
pub const MAX_PER_OWNER: usize = 10_000;
/// The largest job limit LSF takes.
pub const MAX_LIMIT: u32 = 2_147_483_647;

/// A change to the job groups, as recorded.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum JobGroupChange {
    /// `bgadd [-L limit] path`: the group, and any missing group above it.
    Add { path: String, owner: String, limit: Option<u32> },
    /// `bgmod [-L limit | -Ln] [-u owner] path`: `limit` `Some(None)`
    /// removes the limit.
    Modify { path: String, limit: Option<Option<u32>>, owner: Option<String> },
    /// `bgdel path`: the group and its subgroups.
    Delete { path: String },
}

/// One job group as the engine keeps it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct GroupState {
    owner: String,
    limit: Option<u32>,
    /// Jobs started under it and its subgroups.
    started: u32,
}

/// Every job group but the root, by path.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct JobGroups {
    groups: BTreeMap<String, GroupState>,
}

/// One job group as queries see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobGroupView {
    pub path: String,
    pub owner: String,
    pub limit: Option<u32>,
    /// Jobs started under it and its subgroups.
    pub started: u32,
}

/// Why a job group change is refused.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum JobGroupError {
    #[error("job group `{path}`: {why}")]
    BadPath { path: String, why: &'static str },
    #[error("Job group <{0}> already exists")]
    Exists(String),
    #[error("Job group <{0}> does not exist")]
    NoSuchGroup(String),
    #[error("the root job group </> has no job limit and cannot be changed or deleted")]
    Root,
    #[error("-L {limit}: more than the limit of job group <{above}> ({above_limit})")]
    AboveParent { limit: u32, above: String, above_limit: u32 },
    #[error("-L {limit}: less than the limit of job group <{below}> ({below_limit})")]
    BelowChild { limit: u32, below: String, below_limit: u32 },
    #[error("-L {0}: a job limit is from 0 to 2147483647")]
    BadLimit(u64),
    #[error("Job group <{path}> holds {jobs} unfinished job(s): it cannot be deleted")]
    NotEmpty { path: String, jobs: usize },
    #[error("user `{0}` holds {MAX_PER_OWNER} job groups already")]
    TooMany(String),
}

/// Checks a job group path: `/`-separated names (see the module doc).
/// The root `/` is a path too.
pub fn check_path(path: &str) -> Result<(), JobGroupError> {
    let bad = |why| Err(JobGroupError::BadPath { path: path.to_string(), why });
    if !path.starts_with('/') {
        return bad("a job group is named by its full path, from `/`");
    }
    if path.len() > MAX_PATH {
        return bad("longer than 512 characters");
    }
    if path == "/" {
        return Ok(());
    }
    let names: Vec<&str> = path[1..].trim_end_matches('/').split('/').collect();
    if names.len() > MAX_DEPTH {
        return bad("deeper than 32 groups");
    }
    if names.iter().any(|n| n.is_empty()) {
        return bad("an empty group name (`//`)");
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if names.iter().any(|n| !n.chars().all(ok) || *n == "." || *n == "..") {
        return bad("a group name is letters, digits, `_`, `-` and `.`");
    }
    Ok(())
}

/// A group's path as kept, checked: not the root, which has no limit and
/// is neither made, changed nor deleted.
fn kept_path(path: &str) -> Result<&str, JobGroupError> {
    check_path(path)?;
    match normal(path) {
        "/" => Err(JobGroupError::Root),
        p => Ok(p),
    }
}

/// A path as kept: without a trailing `/` (but the root's).
pub fn normal(path: &str) -> &str {
    match path.trim_end_matches('/') {
        "" => "/",
        p => p,
    }
}

/// `path` and every group above it but the root, top first:
/// `/A/B` gives `/A`, `/A/B`.
pub fn lineage(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').skip(1).map(|(i, _)| &path[..i]).chain((path != "/").then_some(path))
}

/// Whether `path` is `group` or under it.
pub fn is_within(path: &str, group: &str) -> bool {
    group == "/" || path == group || path.strip_prefix(group).is_some_and(|rest| rest.starts_with('/'))
}

impl JobGroups {
    /// The groups under `path`, `path` itself first.
    fn subtree<'a>(&'a self, path: &'a str) -> impl Iterator<Item = (&'a String, &'a GroupState)> + 'a {
        self.groups
            .range(path.to_string()..)
            .take_while(move |(p, _)| p.starts_with(path))
            .filter(|(p, _)| is_within(p, path))
    }

    fn owned_by(&self, owner: &str) -> usize {
        self.groups.values().filter(|g| g.owner == owner).count()
    }

    /// Whether `owner` may hold the groups of `path`'s lineage that are
    /// missing ([`MAX_PER_OWNER`]).
    fn room(&self, path: &str, owner: &str) -> Result<(), JobGroupError> {
        let missing = lineage(path).filter(|p| !self.groups.contains_key(*p)).count();
        if missing > 0 && self.owned_by(owner) + missing > MAX_PER_OWNER {
            return Err(JobGroupError::TooMany(owner.to_string()));
        }
        Ok(())
    }

    /// Makes every missing group of `path`'s lineage, owned by `owner`.
    fn make(&mut self, path: &str, owner: &str) -> Result<(), JobGroupError> {
        self.room(path, owner)?;
        for p in lineage(path) {
            self.groups.entry(p.to_string()).or_insert_with(|| GroupState {
                owner: owner.to_string(),
                limit: None,
                started: 0,
            });
        }
        Ok(())
    }

    /// Whether `limit` fits between the limits above and below `path`.
    fn fits(&self, path: &str, limit: u32) -> Result<(), JobGroupError> {
        if limit > MAX_LIMIT {
            return Err(JobGroupError::BadLimit(u64::from(limit)));
        }
        for above in lineage(path).filter(|p| *p != path) {
            if let Some(l) = self.groups.get(above).and_then(|g| g.limit).filter(|&l| limit > l) {
                return Err(JobGroupError::AboveParent { limit, above: above.to_string(), above_limit: l });
            }
        }
        let below = self.subtree(path).skip(1).filter_map(|(p, g)| Some((p, g.limit?))).find(|&(_, l)| l > limit);
        if let Some((p, l)) = below {
            return Err(JobGroupError::BelowChild { limit, below: p.clone(), below_limit: l });
        }
        Ok(())
    }

    /// Counts a job started, or no longer started, under every group of
    /// its path.
    fn count(&mut self, path: &str, started: bool) {
        for p in lineage(path) {
            if let Some(g) = self.groups.get_mut(p) {
                g.started = if started { g.started + 1 } else { g.started.saturating_sub(1) };
            }
        }
    }

    /// The group of `path`'s lineage nearest to it whose limit is reached.
    fn full<'a>(&self, path: &'a str) -> Option<&'a str> {
        let full = |p: &&str| self.groups.get(*p).is_some_and(|g| g.limit.is_some_and(|l| g.started >= l));
        lineage(path).filter(full).last()
    }
}

impl Engine {
    /// Applies a job group change: see [`JobGroupChange`].
    pub(crate) fn change_job_group(&mut self, change: &JobGroupChange) -> Result<(), JobGroupError> {
        match change {
            JobGroupChange::Add { path, owner, limit } => {
                let path = kept_path(path)?;
                if self.job_groups.groups.contains_key(path) {
                    return Err(JobGroupError::Exists(path.to_string()));
                }
                if let Some(l) = *limit {
                    self.job_groups.fits(path, l)?;
                }
                self.job_groups.make(path, owner)?;
                if let Some(g) = self.job_groups.groups.get_mut(path) {
                    g.limit = *limit;
                }
            }
            JobGroupChange::Modify { path, limit, owner } => {
                let path = self.existing_group(path)?;
                if let Some(Some(l)) = *limit {
                    self.job_groups.fits(&path, l)?;
                }
                if let Some(o) = owner.as_deref().filter(|o| self.job_groups.owned_by(o) >= MAX_PER_OWNER) {
                    return Err(JobGroupError::TooMany(o.to_string()));
                }
                let Some(g) = self.job_groups.groups.get_mut(&path) else { return Ok(()) };
                if let Some(l) = *limit {
                    g.limit = l;
                }
                if let Some(o) = owner {
                    g.owner = o.clone();
                }
                // More room may start jobs.
                self.dirty = true;
            }
            JobGroupChange::Delete { path } => {
                let path = self.existing_group(path)?;
                let jobs =
                    self.job_groups_in_use().into_iter().filter(|(g, _)| is_within(g, &path)).map(|(_, n)| n).sum();
                if jobs > 0 {
                    return Err(JobGroupError::NotEmpty { path, jobs });
                }
                let doomed: Vec<String> = self.job_groups.subtree(&path).map(|(p, _)| p.clone()).collect();
                for p in doomed {
                    self.job_groups.groups.remove(&p);
                }
            }
        }
        Ok(())
    }

    /// A group that exists, by its kept path; not the root.
    fn existing_group(&self, path: &str) -> Result<String, JobGroupError> {
        let path = kept_path(path)?;
        match self.job_groups.groups.contains_key(path) {
            true => Ok(path.to_string()),
            false => Err(JobGroupError::NoSuchGroup(path.to_string())),
        }
    }

    /// Whether a job may be submitted to group `path` by `owner`: the path
    /// is good and, if it makes groups, the owner may hold them.
    pub(crate) fn may_join_group(&self, path: &str, owner: &str) -> Result<(), JobGroupError> {
        check_path(path)?;
        self.job_groups.room(normal(path), owner)
    }

    /// The groups this engine's jobs (pending and running, so unfinished)
    /// name, with how many name each: a group that holds one, or whose
    /// subgroup does, is not deleted.
    pub fn job_groups_in_use(&self) -> BTreeMap<&str, usize> {
        let mut out = BTreeMap::new();
        for (_, j) in self.jobs.iter() {
            if let Some(g) = j.job_group.as_deref() {
                *out.entry(g).or_default() += 1;
            }
        }
        out
    }

    /// A job admitted to a group joins it: the group is made if it is
    /// missing (owned by the job's user, without a limit).
    pub(crate) fn join_job_group(&mut self, job: &Job) {
        if let Some(path) = job.job_group.as_deref() {
            let owner = self.users[job.user as usize].clone();
            // `may_join_group` checked the room at admission.
            let _ = self.job_groups.make(path, &owner);
        }
    }

    /// Job `id` starts running: its groups count it.
    pub(crate) fn job_group_starts(&mut self, id: JobId) {
        if let Some(path) = self.jobs.get(&id).and_then(|j| j.job_group.as_deref()) {
            self.job_groups.count(path, true);
        }
    }

    /// A running job stops running (it ended or was requeued).
    pub(crate) fn job_group_stops(&mut self, job: &Job) {
        if let Some(path) = job.job_group.as_deref() {
            self.job_groups.count(path, false);
        }
    }

    /// The counts of started jobs again, from the running jobs (after a
    /// reconfiguration, which adopts every job anew).
    pub(crate) fn recount_job_groups(&mut self) {
        let Engine { jobs, job_groups, .. } = self;
        for g in job_groups.groups.values_mut() {
            g.started = 0;
        }
        for (_, j) in jobs.iter().filter(|(_, j)| matches!(j.state, JobState::Running { .. })) {
            if let Some(path) = j.job_group.as_deref() {
                job_groups.count(path, true);
            }
        }
    }

    /// The group whose job limit stops `job` now, if one does.
    pub(crate) fn job_group_full(&self, job: &Job) -> Option<String> {
        job.job_group.as_deref().and_then(|p| self.job_groups.full(p)).map(str::to_string)
    }

    /// Every job group but the root, in path order.
    pub fn job_groups(&self) -> Vec<JobGroupView> {
        self.job_groups
            .groups
            .iter()
            .map(|(path, g)| JobGroupView {
                path: path.clone(),
                owner: g.owner.clone(),
                limit: g.limit,
                started: g.started,
            })
            .collect()
    }

    /// One job group, by path (a trailing `/` allowed).
    pub fn job_group(&self, path: &str) -> Option<JobGroupView> {
        let path = normal(path);
        let g = self.job_groups.groups.get(path)?;
        Some(JobGroupView { path: path.to_string(), owner: g.owner.clone(), limit: g.limit, started: g.started })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lineage_runs_from_the_top() {
        assert_eq!(lineage("/A/B/C").collect::<Vec<_>>(), ["/A", "/A/B", "/A/B/C"]);
        assert_eq!(lineage("/A").collect::<Vec<_>>(), ["/A"]);
        assert_eq!(lineage("/").count(), 0);
    }

    #[test]
    fn within_is_by_whole_names() {
        assert!(is_within("/A/B", "/A"));
        assert!(is_within("/A", "/A"));
        assert!(is_within("/A", "/"));
        assert!(!is_within("/AB", "/A"));
        assert!(!is_within("/A", "/A/B"));
    }

    #[test]
    fn paths_are_checked() {
        assert!(check_path("/risk_group/consolidate").is_ok());
        assert!(check_path("/").is_ok());
        for bad in ["risk", "/a//b", "/a b", "/a/../b", &format!("/{}", "a/".repeat(40))] {
            assert!(check_path(bad).is_err(), "{bad}");
        }
        assert_eq!(normal("/X/"), "/X");
        assert_eq!(normal("/"), "/");
    }
}
