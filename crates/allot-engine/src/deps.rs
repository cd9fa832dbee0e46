//! Job dependencies (`bsub -w`): a pending job is dispatched only while its
//! condition holds, evaluated on the states of the jobs it names.
//!
//! - `done(j)`: j ended with exit code 0; `exit(j)`: j ended with a
//!   non-zero code (`exit(j, op n)`: a code for which `op n` holds, e.g.
//!   `exit(7, >2)`; `exit(7, 0)` is never true, as a job exiting 0 is
//!   DONE); `ended(j)`: either; `started(j)`: j is running or ended.
//! - `&&`, `||`, `!` and parentheses combine conditions; `!` is true
//!   whenever its operand is not true now (`!done(j)` holds while j runs).
//! - A condition over a job name names every job of that name (resolved
//!   at submission), and holds when it holds for all of them.
//!
//! The condition is evaluated again whenever a job it names starts, ends,
//! or is requeued, not on every pass: a backlog of dependent jobs costs
//! nothing until one of their jobs changes. A job whose condition fails
//! and whose named jobs have all ended waits with the reason "never
//! satisfied" (LSF's "Dependency condition invalid or never satisfied");
//! it stays pending, as LSF keeps it, until it is killed or a named job is
//! requeued.

use serde::{Deserialize, Serialize};

use crate::engine::{Engine, JobId, JobState};
use crate::job_set::JobSet;

/// A dependency condition over targets `T`: job ids once resolved
/// (a [`JobSet`]: all the jobs of one name), ids or names as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dependency<T> {
    Cond { kind: DepKind, target: T },
    Not(Box<Dependency<T>>),
    And(Vec<Dependency<T>>),
    Or(Vec<Dependency<T>>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DepKind {
    Done,
    /// A non-zero exit, with a comparison the code must meet.
    Exit(Option<(CmpOp, i32)>),
    Ended,
    Started,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// `a op b`.
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

impl<T> Dependency<T> {
    /// The same condition over other targets, or the first error.
    pub fn try_map<U, E>(self, f: &mut impl FnMut(T) -> Result<U, E>) -> Result<Dependency<U>, E> {
        Ok(match self {
            Dependency::Cond { kind, target } => Dependency::Cond { kind, target: f(target)? },
            Dependency::Not(d) => Dependency::Not(Box::new(d.try_map(f)?)),
            Dependency::And(ds) => Dependency::And(ds.into_iter().map(|d| d.try_map(f)).collect::<Result<_, _>>()?),
            Dependency::Or(ds) => Dependency::Or(ds.into_iter().map(|d| d.try_map(f)).collect::<Result<_, _>>()?),
        })
    }

    /// Every target, in order.
    pub fn targets(&self) -> Vec<&T> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a T>) {
        match self {
            Dependency::Cond { target, .. } => out.push(target),
            Dependency::Not(d) => d.collect(out),
            Dependency::And(ds) | Dependency::Or(ds) => ds.iter().for_each(|d| d.collect(out)),
        }
    }
}

/// What a dependency can see of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seen {
    Pending,
    Running,
    Ended(i32),
}

impl DepKind {
    fn holds(self, seen: Seen) -> bool {
        match (self, seen) {
            (DepKind::Done, Seen::Ended(code)) => code == 0,
            (DepKind::Exit(None), Seen::Ended(code)) => code != 0,
            (DepKind::Exit(Some((op, n))), Seen::Ended(code)) => code != 0 && op.holds(code, n),
            (DepKind::Ended, Seen::Ended(_)) => true,
            (DepKind::Started, Seen::Running | Seen::Ended(_)) => true,
            _ => false,
        }
    }
}

impl Engine {
    /// What a dependency sees of job `id`; `None` for a job the engine
    /// never had.
    pub(crate) fn seen(&self, id: JobId) -> Option<Seen> {
        match self.job_or_template(id) {
            Some(j) => Some(match j.state {
                JobState::Pending => Seen::Pending,
                JobState::Running { .. } => Seen::Running,
            }),
            None => self.ended.get(&id).map(|&code| Seen::Ended(code)).or_else(|| {
                // An element removed before it was made ([`crate::array_tail`]).
                let a = self.arrays.get(&self.array_of(id)?)?;
                a.removed.contains(id).then_some(Seen::Ended(130))
            }),
        }
    }

    /// Whether the condition holds now.
    pub(crate) fn satisfied(&self, d: &Dependency<JobSet>) -> bool {
        match d {
            Dependency::Cond { kind, target } => target.iter().all(|id| self.seen(id).is_some_and(|s| kind.holds(s))),
            Dependency::Not(d) => !self.satisfied(d),
            Dependency::And(ds) => ds.iter().all(|d| self.satisfied(d)),
            Dependency::Or(ds) => ds.iter().any(|d| self.satisfied(d)),
        }
    }

    /// A condition that does not hold though every job it names has ended.
    pub(crate) fn never_satisfied(&self, d: &Dependency<JobSet>) -> bool {
        !self.satisfied(d)
            && d.targets().into_iter().flatten().all(|id| matches!(self.seen(id), Some(Seen::Ended(_)) | None))
    }

    /// The first job a condition names that the engine never had.
    pub(crate) fn unknown_target(&self, d: &Dependency<JobSet>) -> Option<JobId> {
        d.targets().into_iter().flatten().find(|&id| id.0 == 0 || id.0 >= self.next_id || self.seen(id).is_none())
    }

    /// Jobs whose dependencies name a job whose state changed get their
    /// condition evaluated again: a pending job waits or may be
    /// dispatched accordingly.
    pub(crate) fn refresh_dependents(&mut self) {
        if self.dependents.is_empty() {
            self.dep_changed.clear();
            return;
        }
        let mut changed = std::mem::take(&mut self.dep_changed);
        for &x in &changed {
            let Some(ds) = self.dependents.get_mut(&x) else { continue };
            let dependents: Vec<JobId> = ds.iter().copied().collect();
            for d in dependents {
                let Some(job) = self.jobs.get(&d) else {
                    if let Some(ds) = self.dependents.get_mut(&x) {
                        ds.remove(&d);
                    }
                    continue;
                };
                if !matches!(job.state, JobState::Pending) {
                    continue;
                }
                let Some(dep) = &job.depends else { continue };
                let waiting = !self.satisfied(dep);
                if waiting != job.waiting {
                    let mut job = job.clone();
                    self.remove_pending(d, &job);
                    job.waiting = waiting;
                    self.add_pending(d, &job);
                    if let Some(j) = self.jobs.get_mut(&d) {
                        j.waiting = waiting;
                    }
                }
            }
        }
        // Its memory for the next.
        changed.clear();
        if self.dep_changed.is_empty() {
            self.dep_changed = changed;
        }
    }
}
