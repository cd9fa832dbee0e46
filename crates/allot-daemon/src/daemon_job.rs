//! Where a job runs and what files it names, as allotd starts it: its
//! directory and files as its patterns (`%J`, `%I`, ...) expand (the job
//! itself is the book's, [`allot_store::BookJob`]).

use std::path::PathBuf;

use allot_proto::JobRef;
use allot_store::BookJob;

/// A job's directory and files, as its patterns expand.
pub trait JobPaths {
    /// The directory it runs in: `-cwd` (or where it was submitted from)
    /// with its dynamic patterns (`%J`, `%I`, `%U`, `%P`, `%G`, `%H`)
    /// expanded.
    fn cwd(&self) -> PathBuf;

    /// A file its submission names (`-o`, `-e`, `-i`): `%J` and `%I`
    /// expanded, relative to its working directory ([`JobPaths::cwd`]).
    fn named_file(&self, name: &str) -> PathBuf;
}

impl JobPaths for BookJob {
    fn cwd(&self) -> PathBuf {
        let JobRef { id: job, index } = self.job_ref();
        let r = &self.record;
        let patterns = allot_exec::Patterns {
            job,
            index,
            user: &r.spec.user,
            project: r.project.as_deref().unwrap_or("default"),
            group: r.spec.group.as_deref().unwrap_or(""),
            host: self.alloc.first().map_or("", |(h, _)| h.as_str()),
        };
        PathBuf::from(allot_exec::expand_patterns(&r.cwd, &patterns))
    }

    fn named_file(&self, name: &str) -> PathBuf {
        let JobRef { id, index } = self.job_ref();
        let p = PathBuf::from(allot_exec::expand_name(name, id, index));
        if p.is_absolute() { p } else { self.cwd().join(p) }
    }
}
