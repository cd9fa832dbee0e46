//! Reconfiguration: a new configuration takes effect without losing a job
//! or usage.
//!
//! - A queue that holds jobs must still exist; otherwise the new
//!   configuration is refused and nothing changes.
//! - Usage history (decayed CPU time, historical run time, adjustments)
//!   moves to the account at the same path in the new share tree of the
//!   policy with the same name; what no longer has an account is dropped.
//! - Running jobs keep running: their slots, limits and run-time charges
//!   are booked again from their original start, on the hosts that still
//!   exist.
//! - Pending jobs are admitted again; one whose user no longer has shares
//!   stays pending ("no share assignment") until a configuration gives
//!   them some.

use std::collections::BTreeMap;

use crate::engine::{Engine, Job, JobId, JobState};
use crate::model::EngineConfig;
use crate::resreq::ResReq;
use crate::shares::Usage;
use crate::time::Time;

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ReconfigError {
    #[error("queue `{queue}` holds {jobs} jobs and is not in the new configuration")]
    QueueInUse { queue: String, jobs: usize },
}

impl Engine {
    /// Replaces the configuration at `t`, keeping every job and the usage
    /// history (module docs).
    pub(crate) fn reconfigure(&mut self, t: Time, config: EngineConfig) -> Result<(), ReconfigError> {
        self.settle();
        let mut jobs_in: BTreeMap<String, usize> = BTreeMap::new();
        for (_, job) in self.jobs.iter() {
            *jobs_in.entry(self.queues[job.queue].spec.name.clone()).or_default() += 1;
        }
        for a in self.arrays.values() {
            if let Some(t) = &a.template {
                *jobs_in.entry(self.queues[t.queue].spec.name.clone()).or_default() += a.unmade.len();
            }
        }
        for (queue, jobs) in jobs_in {
            if !config.queues.iter().any(|q| q.name == queue) {
                return Err(ReconfigError::QueueInUse { queue, jobs });
            }
        }
        let mut next = Engine::new(config);
        self.move_usage(&mut next, t);
        let old = std::mem::replace(self, next);
        self.take_over(old);
        Ok(())
    }

    /// What this engine, new from the configuration, takes of the one
    /// before it. Every field is named, none left to `..`: a field added
    /// to the engine does not compile here until it is said whether it
    /// carries over, is built again from the jobs, or starts afresh.
    fn take_over(&mut self, old: Engine) {
        let Engine {
            // The cluster: the new configuration's (usage history moved
            // by `move_usage`).
            config: _,
            hosts,
            host_sets: _,
            cus: _,
            queues,
            units: _,
            queue_unit: _,
            pools: _,
            pool_lambda: _,
            fairshare: _,
            slot_memory: _,
            mf: _,
            // Carried whole: who and what was seen, what ended, what waits
            // on what, what the engine must wake for (a `-b` begin time).
            users,
            user_ids,
            next_id,
            ended,
            ran_until,
            dependents,
            dep_changed,
            wakeups,
            job_groups,
            counters,
            switches,
            // Built again as the jobs are taken over below.
            jobs,
            arrays,
            user_used: _,
            pend: _,
            memory_in_use: _,
            suspended: _,
            growing: _,
            to_make: _,
            deadlines: _,
            expected_ends: _,
            alloc_limits: _,
            resources: _,
            dirty: _,
            // Reservations start afresh: the next pass makes them again.
            reservations: _,
            rsv_hosts: _,
            rsv_expiry: _,
            rsv_cooldown: _,
            loans: _,
            cooldown_ends: _,
            parked: _,
            // Derived, deciding nothing.
            caches: _,
            scratch: _,
            host_names: _,
        } = old;
        self.user_used = vec![0; users.len()];
        (self.users, self.user_ids, self.next_id) = (users, user_ids, next_id);
        (self.ended, self.ran_until, self.dependents, self.dep_changed) = (ended, ran_until, dependents, dep_changed);
        self.wakeups.extend(wakeups);
        (self.counters, self.switches) = (counters, switches);
        self.arrays =
            arrays.iter().map(|(&first, a)| (first, crate::arrays::ArrayState::new(a.size, a.limit))).collect();
        let old_hosts: Vec<String> = hosts.iter().map(|h| h.name.clone()).collect();
        let old_queues: Vec<String> = queues.iter().map(|q| q.spec.name.clone()).collect();
        // Running jobs first: an array's running elements take their room
        // under its limit before its pending ones are admitted.
        let running = |j: &Job| matches!(j.state, JobState::Running { .. });
        for (id, job) in jobs.iter().filter(|(_, j)| running(j)) {
            self.adopt(id, job.clone(), &old_hosts, &old_queues);
        }
        for (id, job) in jobs.iter().filter(|(_, j)| !running(j)) {
            self.adopt(id, job.clone(), &old_hosts, &old_queues);
        }
        // The elements not made yet, from their template admitted again.
        for (first, a) in arrays {
            let Some(template) = a.template.and_then(|t| self.carry(*t, &old_queues)) else { continue };
            self.count_tail(&template, a.unmade.len() as u64, true);
            if let Some(n) = self.arrays.get_mut(&first) {
                (n.unmade, n.template) = (a.unmade, Some(Box::new(template)));
            }
            self.to_make.insert(first);
        }
        self.job_groups = job_groups;
        self.recount_job_groups();
        self.rebook_limits();
        self.rehold_resources();
        self.dirty = true;
    }

    /// Usage history, policy by policy and account by account path; the
    /// multifactor ledger's, association by account and user name.
    fn move_usage(&self, next: &mut Engine, t: Time) {
        if let (Some(old), Some(new)) = (&self.mf, &mut next.mf) {
            for (i, v) in old.ledger.settled(t).into_iter().enumerate().filter(|(_, v)| *v > 0.0) {
                let a = old.spec.tree.get(crate::multifactor::AssocId(i as u32));
                let Some(user) = &a.user else { continue };
                if let Some(to) = new.spec.tree.assoc(&a.account, user) {
                    new.ledger.add_settled(to, v, t);
                }
            }
        }
        for old in &self.fairshare.policies {
            let Some(np) = next.fairshare.policies.iter_mut().find(|p| p.tree.policy() == old.tree.policy()) else {
                continue;
            };
            for user in old.tree.placed_users() {
                np.tree.place(user);
            }
            for n in 1..old.tree.len() as u32 {
                let node = crate::shares::NodeId(n);
                if !old.tree.children(node).is_empty() {
                    continue;
                }
                let u = old.tree.usage(node, t);
                let history = Usage {
                    cpu_time: u.cpu_time,
                    hist_run_time: u.hist_run_time,
                    adjustment: u.adjustment,
                    ..Usage::default()
                };
                if history == Usage::default() {
                    continue;
                }
                if let Some(target) = np.tree.find_path(&old.tree.path_names(node)) {
                    np.tree.add_usage(target, &history, t);
                }
            }
        }
    }

    /// Takes over a job of the previous configuration.
    fn adopt(&mut self, id: JobId, job: Job, old_hosts: &[String], old_queues: &[String]) {
        let Some(mut job) = self.carry(job, old_queues) else { return };
        match std::mem::replace(&mut job.state, JobState::Pending) {
            JobState::Pending => {
                self.add_pending(id, &job);
                self.jobs.insert(id, job);
            }
            JobState::Running { start, alloc, cpu_reported, charges: _, memory, suspended, paused } => {
                let alloc: crate::engine::Alloc = alloc
                    .iter()
                    .filter_map(|&(h, n)| {
                        let name = &old_hosts[h as usize];
                        self.hosts.iter().position(|x| x.name == *name).map(|nh| (nh as u32, n))
                    })
                    .collect();
                let running = Running { start, alloc, cpu_reported, memory, suspended, paused };
                self.adopt_running(id, job, running);
            }
        }
    }

    /// A job of the previous configuration in this one: its queue (by
    /// name; `None` if it is gone), accounts and association again, and a
    /// pending job's slots, requirement and hosts.
    fn carry(&mut self, mut job: Job, old_queues: &[String]) -> Option<Job> {
        let queue_name = &old_queues[job.queue];
        let queue = self.queues.iter().position(|q| q.spec.name == *queue_name)?;
        job.queue = queue;
        let user = self.users[job.user as usize].clone();
        let q = &self.queues[queue];
        let (partitions, outside) = (q.partitions.clone(), q.outside_partitions);
        job.accounts = match self.fairshare.admit_to(&user, queue_name, &partitions, outside, job.group.as_deref()) {
            Ok(adm) => adm.accounts.iter().map(|(p, leaves)| (*p, leaves[0])).collect(),
            Err(_) => Vec::new(),
        };
        // A job whose association went waits with a fair-share factor of 0.
        self.mf_place(&user);
        job.assoc = self.mf_assoc(&user, job.account.as_deref()).ok().flatten();
        job.host_limited = self.host_limited(&job);
        if matches!(job.state, JobState::Pending) {
            // "Pending jobs with no processor requirements use the new
            // default PROCLIMIT value"; one the new PROCLIMIT refuses
            // stays pending, saying so.
            match self.slots_for(queue, job.app.as_deref(), job.asked, job.qos.1) {
                Ok((min, max)) => {
                    (job.slots, job.max_slots, job.outside_proclimit) = (min, max, false);
                }
                Err(_) => job.outside_proclimit = true,
            }
            job.res = self.job_res(job.own_res.as_deref(), queue).filter(ResReq::constrains).map(std::sync::Arc::new);
            // `-m` names hosts again; a job whose hosts are gone (or
            // left its queue) may use none until they come back.
            let given = job.picks.as_ref().map(|p| p.given.clone()).unwrap_or_default();
            job.picks = match self.resolve_picks(&given, queue) {
                Ok(p) => p.map(std::sync::Arc::new),
                Err(_) => Some(std::sync::Arc::new(crate::placement::Picks {
                    given,
                    allowed: Some(Vec::new()),
                    first: Vec::new(),
                })),
            };
        }
        Some(job)
    }

    /// A running job of the previous configuration booked again on the
    /// hosts of its allocation that still exist, from its own start.
    fn adopt_running(&mut self, id: JobId, job: Job, r: Running) {
        let Running { start, alloc, cpu_reported, memory, suspended, paused } = r;
        self.hold_hosts(job.res.as_deref(), job.exclusive, &alloc, true);
        let (user, slots) = (job.user, alloc.iter().map(|a| a.1).sum::<u32>());
        let q = &mut self.queues[job.queue];
        q.used += slots;
        if q.user_used.len() <= user as usize {
            q.user_used.resize(user as usize + 1, 0);
        }
        q.user_used[user as usize] += slots;
        self.user_used[user as usize] += slots;
        let limit = self.job_limit(&job);
        let origin = start.after(paused);
        if suspended.is_none() {
            if let Some(end) = self.job_end(&job, origin) {
                self.deadlines.insert((end, id));
            }
            if let Some(end) = self.expected_end(&job, origin) {
                let by_set = self.slots_by_set(&alloc);
                self.expected_ends.insert((end, id), by_set);
            }
        }
        self.jobs.insert(id, job);
        self.array_runs(id);
        // Booked from the job's own start: its run time goes on
        // (a suspended job's, once it is resumed).
        let charges = match suspended {
            None => self.charge_start(id, &alloc, start, limit),
            Some(_) => crate::engine::Charges::new(),
        };
        if suspended.is_some() {
            self.book_suspension(id, &alloc, user);
        }
        if let Some(j) = self.jobs.get_mut(&id) {
            j.state = JobState::Running { start, alloc, charges, cpu_reported, memory: 0.0, suspended, paused };
        }
        self.set_memory(id, memory);
        self.track_growth(id);
    }
}

/// What a running job carries across a reconfiguration.
struct Running {
    start: Time,
    alloc: crate::engine::Alloc,
    cpu_reported: f64,
    memory: f64,
    suspended: Option<crate::preempt::Suspension>,
    paused: u64,
}
