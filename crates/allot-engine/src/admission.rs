//! Submission: the checks a job passes to be queued (queue, USERS,
//! shares, PROCLIMIT, run limit, requirements, hosts, dependencies, user
//! priority) and automatic queue selection from DEFAULT_QUEUE.

use std::sync::Arc;

use crate::engine::{Engine, Job, JobId, JobState, Rejection};
use crate::model::JobSpec;
use crate::resreq::ResReq;

/// `-n` of a submission: none, or (min, max).
fn asked_slots(spec: &JobSpec) -> Result<Option<(u32, u32)>, Rejection> {
    if spec.slots == 0 {
        return Ok(None);
    }
    let max = spec.max_slots.unwrap_or(spec.slots);
    if max < spec.slots {
        return Err(Rejection::BadSlotRange { min: spec.slots, max });
    }
    Ok(Some((spec.slots, max)))
}

fn show_asked(min: u32, max: u32) -> String {
    if min == max { min.to_string() } else { format!("{min},{max}") }
}

/// The slots a job runs on in a queue with PROCLIMIT `limit` (spec 004,
/// "How PROCLIMIT affects submission of parallel jobs"):
/// - without `-n`: the PROCLIMIT default (which is its minimum when only
///   minimum and maximum are given), else 1;
/// - `-n n`: refused below the minimum or above the maximum;
/// - `-n min,max`: refused when `max` is below the PROCLIMIT minimum or
///   `min` above its maximum; otherwise the range is cut to the PROCLIMIT
///   (`-n 2,6` under `3 8` runs on 3 to 6).
///
/// `of` names whose limit it is, for the error.
pub(crate) fn proc_limit(
    limit: Option<crate::model::ProcLimit>,
    asked: Option<(u32, u32)>,
    of: impl Fn() -> String,
) -> Result<(u32, u32), Rejection> {
    let Some(pl) = limit else { return Ok(asked.unwrap_or((1, 1))) };
    let Some((min, max)) = asked else { return Ok((pl.default, pl.default)) };
    let shown = || show_asked(min, max);
    if max < pl.min {
        return Err(Rejection::BelowProcLimit { asked: shown(), min: pl.min, of: of() });
    }
    if min > pl.max {
        return Err(Rejection::AboveProcLimit { asked: shown(), max: pl.max, of: of() });
    }
    Ok((min.max(pl.min), max.min(pl.max)))
}

impl Engine {
    /// Validates and queues a job: the queue exists and admits the user
    /// (USERS), the user has shares where the queue's fairshare needs them,
    /// the job can ever fit, and `-W` is within RUNLIMIT. A job array's
    /// elements take consecutive ids; the first is returned. At time 0:
    /// [`crate::Event::Submit`] through [`Engine::apply`] at that time.
    pub fn submit(&mut self, spec: &JobSpec) -> Result<JobId, Rejection> {
        let id = self.apply(crate::time::Time(0), &crate::Event::Submit(spec.clone()))?;
        Ok(id.expect("a submission names its job"))
    }

    /// [`crate::Event::Submit`] at `t`: the time its wait counts from.
    pub(crate) fn submit_at(&mut self, spec: &JobSpec, t: crate::time::Time) -> Result<JobId, Rejection> {
        if let Some(shape) = spec.array {
            let max = self.config.max_job_array_size;
            if shape.size == 0 {
                return Err(Rejection::EmptyArray);
            }
            if shape.size > max {
                return Err(Rejection::ArrayTooLarge { size: shape.size, max });
            }
            if shape.limit == Some(0) {
                return Err(Rejection::ZeroArrayLimit);
            }
        }
        let mut job = self.admit(spec)?;
        self.within_pend_limits(&job, spec.array.map_or(1, |a| u64::from(a.size)))?;
        job.submitted = t;
        self.join_job_group(&job);
        let first = JobId(self.next_id);
        if let Some(shape) = spec.array {
            self.arrays.insert(first, crate::arrays::ArrayState::new(shape.size, shape.limit));
        }
        let size = spec.array.map_or(1, |a| a.size);
        for _ in 0..size.min(crate::array_tail::MADE_AHEAD) {
            let id = JobId(self.next_id);
            self.next_id += 1;
            self.add_pending(id, &job);
            self.jobs.insert(id, job.clone());
        }
        self.keep_tail(first, size, &job);
        self.next_id = first.0 + u64::from(size);
        Ok(first)
    }

    /// The engine's number for user `name`, given at the user's first job.
    pub(crate) fn user_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.user_ids.get(name) {
            return id;
        }
        let id = self.users.len() as u32;
        self.users.push(name.to_string());
        self.user_ids.insert(name.to_string(), id);
        self.user_used.push(0);
        id
    }

    /// The checks of a submission, and the job they admit.
    pub(crate) fn admit(&mut self, spec: &JobSpec) -> Result<Job, Rejection> {
        let asked = asked_slots(spec)?;
        let queue = match &spec.queue {
            Some(q) => {
                self.queues.iter().position(|s| s.spec.name == *q).ok_or_else(|| Rejection::NoSuchQueue(q.clone()))?
            }
            None => self.choose_queue_index(spec, &self.config.default_queues, "DEFAULT_QUEUE", &|_| false)?,
        };
        self.allows_user(queue, &spec.user)?;
        // A compound requirement says how many slots (module docs of
        // `compound`): `-n` may only repeat it.
        let compound = match &spec.res_req {
            Some(r) => r.compound_slots(),
            None => self.queues[queue].spec.res_req.as_ref().and_then(ResReq::compound_slots),
        };
        let asked = match (compound, asked) {
            (None, asked) => asked,
            (Some(n), None) => Some((n, n)),
            (Some(n), Some((a, b))) if a == n && b == n => asked,
            (Some(n), Some((a, b))) => {
                return Err(Rejection::BadResReq(format!(
                    "-n {}: the compound requirement asks {n} slots in all",
                    show_asked(a, b)
                )));
            }
        };
        let (qos, user_factor) = self.mf_qos(spec)?;
        // Job level over application level over queue level, as LSF
        // orders run limits.
        let app = match &spec.app {
            Some(name) => {
                *self.config.applications.get(name).ok_or_else(|| Rejection::NoSuchApplication(name.clone()))?
            }
            None => crate::model::AppSpec::default(),
        };
        let (min, max) = self.slots_for(queue, spec.app.as_deref(), asked, qos.1)?;
        let q = &self.queues[queue];
        let available = q.capacity;
        if u64::from(min) > available {
            return Err(Rejection::TooManySlots { slots: min, queue: q.spec.name.clone(), available });
        }
        if spec.exclusive && !q.spec.exclusive {
            return Err(Rejection::NotExclusiveQueue(q.spec.name.clone()));
        }
        self.check_run_limit(queue, spec.run_limit, qos.1)?;
        let res = self.job_res(spec.res_req.as_ref(), queue);
        if let Some(r) = &res {
            self.check_res(r, queue)?;
        }
        let resize = match (app.resizable, spec.auto_resize) {
            (None, false) => None,
            (None, true) => {
                return Err(Rejection::NotAutoResizable(match &spec.app {
                    Some(a) => format!("application profile `{a}` is not resizable (RESIZABLE_JOBS)"),
                    None => "an autoresizable job needs an application profile with RESIZABLE_JOBS = Y or auto (-app)"
                        .into(),
                }));
            }
            (Some(kind), ar) => {
                Some(crate::resize::Resize { auto: ar || kind == crate::model::Resizable::Auto, ..Default::default() })
            }
        };
        if resize.is_some() {
            if res.as_ref().is_some_and(|r| !r.terms.is_empty()) {
                return Err(Rejection::ResizableWith("compound resource requirements"));
            }
            if res.as_ref().is_some_and(|r| r.cu.is_some()) {
                return Err(Rejection::ResizableWith("compute unit requirements (cu[])"));
            }
        }
        let picks = self.resolve_picks(&spec.hosts, queue)?;
        let (queue_name, partitions, outside) = (q.spec.name.clone(), q.partitions.clone(), q.outside_partitions);
        let admission =
            self.fairshare.admit_to(&spec.user, &queue_name, &partitions, outside, spec.group.as_deref())?;
        let accounts = admission.accounts.iter().map(|(p, leaves)| (*p, leaves[0])).collect();
        let account = spec.group.clone().or_else(|| spec.project.clone());
        self.mf_place(&spec.user);
        let assoc = self.mf_assoc(&spec.user, account.as_deref())?;
        if let Some(id) = spec.depends.as_ref().and_then(|d| self.unknown_target(d)) {
            return Err(Rejection::UnknownDependency(id));
        }
        let waiting = spec.depends.as_ref().is_some_and(|d| !self.satisfied(d));
        let priority = match (spec.priority, self.config.max_user_priority) {
            (None, max) => max.map_or(0, |m| m / 2),
            (Some(_), None) => return Err(Rejection::UserPriorityDisabled),
            (Some(p), Some(max)) if p == 0 || p > max => {
                return Err(Rejection::BadUserPriority { priority: p, max });
            }
            (Some(p), Some(_)) => p,
        };
        if let Some(g) = &spec.job_group {
            self.may_join_group(g, &spec.user)?;
        }
        let user = self.user_id(&spec.user);
        // A pass when it may begin (`-b`).
        if let Some(b) = spec.begin_time {
            self.wakeups.insert(crate::time::Time(b));
        }
        let mut job = Job {
            user,
            queue,
            slots: min,
            max_slots: max,
            asked,
            outside_proclimit: false,
            own_res: spec.res_req.clone().map(Arc::new),
            res: res.filter(ResReq::constrains).map(Arc::new),
            picks: picks.map(Arc::new),
            run_limit: spec.run_limit.or(app.run_limit),
            backfill_limit: None,
            run_estimate: spec.run_estimate.or(app.runtime),
            exclusive: spec.exclusive,
            term_time: spec.term_time.map(crate::time::Time),
            cpu_limit: spec.cpu_limit,
            group: spec.group.clone(),
            app: spec.app.clone(),
            project: spec.project.clone(),
            job_group: spec.job_group.as_deref().map(|g| crate::job_groups::normal(g).to_string()),
            host_limited: false,
            accounts,
            state: JobState::Pending,
            held: spec.hold,
            depends: spec.depends.clone(),
            waiting,
            priority,
            submitted: crate::time::Time(0),
            assoc,
            account,
            mf_priority: None,
            qos,
            user_factor,
            resize,
            preempted: 0,
            begin: spec.begin_time.map(crate::time::Time),
        };
        job.host_limited = self.host_limited(&job);
        Ok(job)
    }

    /// The slots a job of application profile `app` runs on in `queue`
    /// ([`proc_limit`]) when it asked `asked`. Spec 004 lets PROCLIMIT be
    /// set "in lsb.queues or lsb.applications" without saying how the two
    /// meet; we follow LSF's order of limits (job over application over
    /// queue, within the queue's): the profile's PROCLIMIT refines what
    /// the job asked (its default standing for no `-n`), and the queue's
    /// bounds the result. So `-n 1,8` under a profile's `2 4` and a
    /// queue's `3 8` runs on 3 or 4, and a profile whose default is below
    /// the queue's minimum is refused there. A standby job (`exempt`) is
    /// exempt from both maxima.
    pub(crate) fn slots_for(
        &self,
        queue: usize,
        app: Option<&str>,
        asked: Option<(u32, u32)>,
        exempt: bool,
    ) -> Result<(u32, u32), Rejection> {
        let lift = |p: crate::model::ProcLimit| if exempt { crate::model::ProcLimit { max: u32::MAX, ..p } } else { p };
        let of_app = app.and_then(|a| Some((a, self.config.applications.get(a)?.proclimit?)));
        let asked = match of_app {
            Some((name, limit)) => {
                Some(proc_limit(Some(lift(limit)), asked, || format!("application profile `{name}`"))?)
            }
            None => asked,
        };
        let q = &self.queues[queue].spec;
        proc_limit(q.proclimit.map(lift), asked, || format!("queue `{}`", q.name))
    }

    /// USERS: whether the queue takes jobs of `user`.
    fn allows_user(&self, queue: usize, user: &str) -> Result<(), Rejection> {
        let q = &self.queues[queue];
        match &q.spec.users {
            Some(users) if !users.iter().any(|u| u == user || self.config.groups.contains(u, user)) => {
                Err(Rejection::UserNotAllowed { user: user.to_string(), queue: q.spec.name.clone() })
            }
            _ => Ok(()),
        }
    }

    /// Automatic queue selection (spec 004): the first queue of
    /// DEFAULT_QUEUE, skipping those `skip` names (closed queues), that
    /// admits the user (USERS) and whose PROCLIMIT the job's `-n` meets.
    /// With one candidate, its own reason is the answer.
    pub fn choose_queue(&self, spec: &JobSpec, skip: &dyn Fn(&str) -> bool) -> Result<&str, Rejection> {
        let q = self.choose_queue_index(spec, &self.config.default_queues, "DEFAULT_QUEUE", skip)?;
        Ok(&self.queues[q].spec.name)
    }

    /// [`Engine::choose_queue`] among `names` (a submitter's
    /// LSB_DEFAULTQUEUE) instead of DEFAULT_QUEUE.
    pub fn choose_queue_from(
        &self,
        spec: &JobSpec,
        names: &[String],
        skip: &dyn Fn(&str) -> bool,
    ) -> Result<&str, Rejection> {
        let q = self.choose_queue_index(spec, names, "LSB_DEFAULTQUEUE", skip)?;
        Ok(&self.queues[q].spec.name)
    }

    fn choose_queue_index(
        &self,
        spec: &JobSpec,
        names: &[String],
        from: &'static str,
        skip: &dyn Fn(&str) -> bool,
    ) -> Result<usize, Rejection> {
        let asked = asked_slots(spec)?;
        let exempt = self.mf_qos(spec).is_ok_and(|(qos, _)| qos.1);
        let mut last = Rejection::NoDefaultQueue;
        let mut tried = 0;
        for name in names.iter().filter(|n| !skip(n)) {
            let q = self.queues.iter().position(|s| s.spec.name == *name).ok_or(Rejection::NoSuchQueue(name.clone()));
            let fits = q.and_then(|q| {
                self.allows_user(q, &spec.user)?;
                self.slots_for(q, spec.app.as_deref(), asked, exempt)?;
                Ok(q)
            });
            tried += 1;
            match fits {
                Ok(q) => return Ok(q),
                Err(e) => last = e,
            }
        }
        if tried > 1 {
            let asked = asked.map_or("1".to_string(), |(a, b)| show_asked(a, b));
            return Err(Rejection::NoDefaultQueueFits { asked, queues: names.join(" "), from });
        }
        Err(last)
    }
}
