//! The book's job table: jobs join it at submission, are marked as they
//! run and end, and leave it CLEAN_PERIOD after they end; the numbers
//! its users know them by, and their names for `-w`.

use allot_engine::{Engine, HostIdx, JobId, Slots, Time};
use allot_proto::{JobRef, JobStatus};

use super::{ApplyError, Book, BookJob};
use crate::{Env, JobRecord, Reach};

impl Book {
    /// A submitted job, or each element of a job array (its `indices`,
    /// one per element the engine made), joins the job table.
    pub fn register(&mut self, job: JobId, number: u64, record: &JobRecord, t: Time, indices: Option<Vec<u32>>) {
        let env = self.intern(&record.env);
        let elements: Vec<(JobId, Option<(JobId, u32)>)> = match &indices {
            Some(ix) => ix
                .iter()
                .take(super::MADE_AHEAD)
                .enumerate()
                .map(|(k, &i)| (job.offset(k as u64), Some((job, i))))
                .collect(),
            None => vec![(job, None)],
        };
        let mut template = None;
        for (id, array) in elements {
            let info = BookJob {
                record: JobRecord { env: env.clone(), ..record.clone() },
                // `bsub -H`: held from the start.
                status: if record.spec.hold { JobStatus::Psusp } else { JobStatus::Pend },
                submit_time: t.0,
                start_time: None,
                end_time: None,
                exit: None,
                cpu_time: None,
                alloc: Vec::new(),
                requeue: None,
                killed: None,
                array,
                number,
                usage: None,
                max_mem_kb: 0,
                exit_reason: None,
                attempt: 0,
                pre_exec_failures: 0,
                unknown: None,
            };
            self.names.insert(&record.spec.user, &record.name, id);
            // An array's template: what its elements not made yet show.
            if indices.is_some() && template.is_none() {
                template = Some(BookJob { array: Some((job, 0)), ..info.clone() });
            }
            self.jobs.insert(id, Box::new(info));
        }
        if let Some(indices) = indices {
            if let Some(t) = template {
                self.keep_tail(job, indices.len(), t);
            }
            self.arrays.insert(job, indices);
        }
        // Checked by `apply` before the engine took the job.
        let _ = self.numbers.give(number, job);
        if let Some(request) = &record.extras().request {
            self.requests.insert(request.clone(), job);
        }
    }

    /// A job the engine started, as the commands see it.
    pub fn mark_running(&mut self, job: JobId, t: Time, alloc: &[(String, u32)]) {
        if let Some(j) = self.jobs.get_mut(&job) {
            j.status = JobStatus::Run;
            j.attempt += 1;
            j.start_time = Some(t.0);
            j.alloc = alloc.to_vec();
            // A reason a try before this one gave is no longer why.
            j.exit_reason = None;
            self.running.insert(job);
        }
    }

    /// Job `id` leaves the job table (and the names' index).
    fn forget(&mut self, id: JobId) {
        if let Some(j) = self.jobs.remove(&id) {
            self.names.remove(&j.record.spec.user, &j.record.name, id);
        }
    }

    /// Forgets the jobs that ended `period` (CLEAN_PERIOD) seconds or more
    /// before `now`, as LSF does: `bjobs -a` and `bhist` no longer find
    /// them (the log keeps their records). A job array goes when all its
    /// elements have; the environments no job holds any more go too.
    pub fn clean(&mut self, now: u64, period: u64) {
        let mut forgot = false;
        // Ended that long ago (a job that ran again since has a later end).
        let gone = |j: &BookJob| !j.status.unfinished() && j.end_time.is_some_and(|e| e.saturating_add(period) <= now);
        while let Some(&(end, id)) = self.finished.first() {
            if end.saturating_add(period) > now {
                break;
            }
            self.finished.pop_first();
            // A job of the table, or an element removed before it was made.
            let array = match self.jobs.get(&id) {
                Some(j) if gone(j) => j.array.map(|a| a.0),
                Some(_) => continue,
                None => match self
                    .tails
                    .range(..=id)
                    .next_back()
                    .filter(|(_, t)| t.removed.iter().any(|r| r.0.contains(id)))
                {
                    Some((&first, _)) => Some(first),
                    None => continue,
                },
            };
            match array {
                None => {
                    self.forget(id);
                    forgot = true;
                }
                Some(first) if self.array_gone(first, &gone) => {
                    let size = self.arrays.get(&first).map_or(0, |ix| ix.len() as u64);
                    for k in 0..size {
                        self.forget(first.offset(k));
                    }
                    self.arrays.remove(&first);
                    self.tails.remove(&first);
                    forgot = true;
                }
                Some(_) => {}
            }
        }
        if forgot {
            self.envs.retain(|e| std::sync::Arc::strong_count(e) > 1);
            let jobs = &self.jobs;
            self.requests.retain(|_, job| jobs.contains_key(job));
            if let Some(&first) = self.jobs.keys().next() {
                self.numbers.forget_before(first);
            }
        }
    }

    /// The one shared copy of an environment (see [`Book::envs`]).
    pub fn intern(&mut self, env: &Env) -> Env {
        match self.envs.get(env) {
            Some(shared) => shared.clone(),
            None => {
                self.envs.insert(env.clone());
                env.clone()
            }
        }
    }

    /// The job's allocation as the engine now has it, for the commands
    /// and `blaunch`.
    pub fn refresh_alloc(&mut self, engine: &Engine, job: JobId) {
        let Some(alloc) = engine.job_alloc(job) else { return };
        let named: Vec<(String, u32)> = alloc.iter().map(|&(h, n)| (engine.host_name(h).to_string(), n.0)).collect();
        if let Some(j) = self.jobs.get_mut(&job) {
            j.alloc = named;
        }
    }

    /// Whether a running job's hosts include one whose agent cannot be
    /// heard (`unreach`): LSF shows such a job UNKWN.
    pub fn unheard(&self, alloc: &[(String, u32)]) -> bool {
        self.agents && alloc.iter().any(|(h, _)| self.reach(h) == Reach::Unreach)
    }

    /// `host`'s state changed at `t`: each running job on it starts or
    /// ends a span of UNKWN as its hosts are all reached or not (as
    /// `bjobs` shows it and `bhist` counts it).
    pub fn host_reached(&mut self, t: Time, host: &str) {
        let on: Vec<JobId> = (self.running.iter().copied())
            .filter(|id| self.jobs.get(id).is_some_and(|j| j.alloc.iter().any(|(h, _)| h == host)))
            .collect();
        for id in on {
            let unheard = self.jobs.get(&id).is_some_and(|j| self.unheard(&j.alloc));
            let Some(j) = self.jobs.get_mut(&id) else { continue };
            let open = j.unknown.as_mut().and_then(|s| s.last_mut()).filter(|(_, until)| until.is_none());
            match (open, unheard) {
                (Some((_, until)), false) => *until = Some(t.0),
                (None, true) => j.unknown.get_or_insert_with(Default::default).push((t.0, None)),
                (Some(_), true) | (None, false) => {}
            }
        }
    }

    /// How job `id` is named to its user.
    pub fn job_ref(&self, id: JobId) -> JobRef {
        if let Some(j) = self.jobs.get(&id) {
            return j.job_ref();
        }
        // An element not made yet (`tail`).
        match (self.job_or_template(id), self.element_index(id)) {
            (Some(j), Some(index)) => JobRef { id: j.number, index },
            _ => JobRef::job(id.0),
        }
    }

    /// The jobs a reference names, by id: a job, every element of an
    /// array, or one element; none if there is no such job. An element's
    /// own id is no name for it: only `array[index]` is.
    pub fn resolve(&self, r: JobRef) -> Vec<JobId> {
        let Some(id) = self.numbers.first_id(r.id) else { return Vec::new() };
        if self.jobs.get(&id).is_none_or(|j| j.number != r.id || j.array.is_some_and(|(first, _)| first != id)) {
            return Vec::new();
        }
        match (r.index, self.arrays.get(&id)) {
            (0, Some(indices)) => (0..indices.len() as u64).map(|k| id.offset(k)).collect(),
            (0, None) => vec![id],
            (i, Some(indices)) => indices.binary_search(&i).map(|k| vec![id.offset(k as u64)]).unwrap_or_default(),
            (_, None) => Vec::new(),
        }
    }
}

/// Host names with slots, as the engine names them.
pub fn host_slots(engine: &Engine, job: JobId, named: &[(String, u32)]) -> Result<Vec<(HostIdx, Slots)>, ApplyError> {
    named.iter().map(|(h, n)| Ok((host_named(engine, job, h)?, Slots(*n)))).collect()
}

/// A `bresize release`'s hosts (`None`: all of the job's slots there), as
/// the engine names them.
pub fn release_slots(
    engine: &Engine,
    job: JobId,
    release: &[(String, Option<u32>)],
) -> Result<Vec<(HostIdx, Option<Slots>)>, ApplyError> {
    release.iter().map(|(h, n)| Ok((host_named(engine, job, h)?, n.map(Slots)))).collect()
}

/// A host of `job`'s record, by name; refused if it is not configured.
fn host_named(engine: &Engine, job: JobId, host: &str) -> Result<HostIdx, ApplyError> {
    engine.host_index(host).ok_or_else(|| ApplyError::Job { job, reason: format!("host `{host}` is not configured") })
}
