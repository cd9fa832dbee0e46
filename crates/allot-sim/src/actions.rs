//! Users' commands on a workload's jobs ([`crate::workload::Action`]):
//! `bswitch` and `bresize`, applied to the engine as allotd applies the
//! records those commands make. `bswitch` is a job's spec with the new
//! queue through [`allot_store::effects::modified_event`] (a pending job
//! is modified, a running one switched), as allotd's `Record::Modified`;
//! `bresize` is the engine's shrink or resize cancel, as its
//! `Record::Shrunk` and `Record::ResizeCancelled`.
//!
//! A command and a job's end at the same instant: the command acts first,
//! as allotd answers a command when it comes and hears an end at its
//! next tick.

use std::collections::{BTreeMap, BTreeSet};

use allot_engine::{Engine, Event, JobId, JobSpec, Time};

use crate::workload::{Action, ActionKind, Workload};

/// What the commands need of the jobs they name: the spec each workload
/// job a `bswitch` names was submitted with (the engine keeps none; an
/// array's, once for all its elements). A switch changes only the queue,
/// so the spec it gives the engine is that one in the new queue.
#[derive(Default)]
pub(crate) struct Acting {
    switched: BTreeSet<u64>,
    specs: BTreeMap<u64, JobSpec>,
}

impl Acting {
    pub(crate) fn new(w: &Workload) -> Acting {
        Acting { switched: w.switched_jobs(), specs: BTreeMap::new() }
    }

    /// Whether workload job `job`'s spec is to be kept as it is submitted.
    pub(crate) fn wants(&self, job: u64) -> bool {
        self.switched.contains(&job)
    }

    /// Workload job `job` was submitted with `spec`.
    pub(crate) fn submitted(&mut self, job: u64, spec: JobSpec) {
        self.specs.insert(job, spec);
    }

    /// Carries out `a` on `elements` (the workload job's engine jobs with
    /// their indices in its array, 0 for a job that is none): the jobs it
    /// changed, or why it changed none. A `bswitch` of an array moves each
    /// unfinished element that the engine lets move; `bresize` names one
    /// job, an array's element by its index.
    pub(crate) fn act(
        &mut self,
        engine: &mut Engine,
        t: Time,
        a: &Action,
        elements: &[(u32, JobId)],
    ) -> Result<Vec<JobId>, String> {
        let named: Vec<JobId> = match a.index {
            0 => elements.iter().map(|e| e.1).collect(),
            i => match elements.iter().find(|e| e.0 == i && i > 0) {
                Some(&(_, id)) => vec![id],
                None => return Err(format!("job {}[{i}]: no such element", a.job)),
            },
        };
        let one = || match named[..] {
            [id] => Ok(id),
            _ => Err(format!("job {}: a job array; name one element", a.job)),
        };
        match &a.what {
            ActionKind::Switch(queue) => {
                let spec = self.specs.get(&a.job).ok_or_else(|| format!("job {} was not submitted", a.job))?;
                switch(engine, t, &named, &JobSpec { queue: Some(queue.clone()), ..spec.clone() })
            }
            ActionKind::Release { hosts, cancel } => {
                let job = one()?;
                let release = allot_store::release_slots(engine, job, hosts).map_err(|e| e.reason())?;
                let ev = Event::Shrink { job, release, cancel: *cancel };
                engine.apply(t, &ev).map(|_| vec![job]).map_err(|e| e.to_string())
            }
            ActionKind::ResizeCancel => {
                let job = one()?;
                engine.apply(t, &Event::ResizeCancel(job)).map(|_| vec![job]).map_err(|e| e.to_string())
            }
        }
    }
}

/// Each of `named` still pending or running to the queue of `spec`, as
/// allotd's `bswitch` moves each: the first refusal is the answer when
/// none moved.
fn switch(engine: &mut Engine, t: Time, named: &[JobId], spec: &JobSpec) -> Result<Vec<JobId>, String> {
    let mut moved = Vec::new();
    let mut refused = None;
    for &id in named {
        // Pending (made or not yet, in an array) or running.
        if engine.job_queue(id).is_none() {
            continue;
        }
        match engine.apply(t, &allot_store::effects::modified_event(engine, id, spec)) {
            Ok(_) => moved.push(id),
            Err(e) => refused = refused.or(Some(e.to_string())),
        }
    }
    match (moved.is_empty(), refused) {
        (true, Some(why)) => Err(why),
        (true, None) => Err("no job of it is pending or running".into()),
        (false, _) => Ok(moved),
    }
}
