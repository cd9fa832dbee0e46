//! Starting a job: the booking a start makes (slots, hosts, per-host and
//! queue counts, limits and deadlines, charges to the share trees and the
//! multifactor ledger), the same whether the dispatch pass decided it or a
//! replayed log says it happened ([`crate::Event::Started`]).

use crate::Rejection;
use crate::engine::{Alloc, Charges, Decision, Engine, HostIdx, Job, JobId, JobState, Slots};
use crate::shares::{JobCharge, NodeId};
use crate::time::Time;

impl Engine {
    /// Starts `id` on `alloc`, `borrowed` (in part) from reservations.
    pub(crate) fn start(&mut self, id: JobId, alloc: Alloc, t: Time, borrowed: bool) -> Decision {
        self.settle();
        let compound = self.jobs.get(&id).and_then(|j| j.res.as_ref()).is_some_and(|r| !r.terms.is_empty());
        let shown = if compound { crate::compound::merged(&alloc) } else { alloc.to_vec() };
        let decision =
            Decision::Start { job: id, alloc: shown.into_iter().map(|(h, n)| (HostIdx(h), Slots(n))).collect() };
        self.commit(id, alloc, t, borrowed);
        decision
    }

    /// Starts a pending job on a given allocation, as a replayed log says
    /// it started ([`crate::Event::Started`]): the same booking as a start
    /// decided here, without placement. Refused if the job is not pending
    /// or a host is unknown.
    pub(crate) fn force_start(&mut self, id: JobId, alloc: &[(HostIdx, Slots)], t: Time) -> Result<(), Rejection> {
        // The pass that made this start had evaluated the dependencies
        // of the jobs whose dependencies changed; a replay, which runs no
        // pass, does it here, so a start recorded live replays.
        self.refresh_dependents();
        self.make_element(id);
        let Some(job) = self.jobs.get(&id) else { return Err(Rejection::NoSuchJob(id)) };
        if !matches!(job.state, JobState::Pending) || job.held || job.waiting {
            return Err(Rejection::NotDispatchable(id));
        }
        if let Some(&(h, _)) = alloc.iter().find(|&&(h, _)| h.0 as usize >= self.hosts.len()) {
            return Err(Rejection::UnknownHost { job: id, host: h.0 });
        }
        let job = job.clone();
        self.array_unpark_for_start(id);
        self.dequeue(id, &job);
        self.commit(id, alloc.iter().map(|&(h, n)| (h.0, n.0)).collect(), t, false);
        self.dirty = true;
        Ok(())
    }

    /// Undoes a start this engine's pass made that the replayed log never
    /// recorded ([`crate::Event::Unstarted`]).
    pub(crate) fn unstart(&mut self, id: JobId, t: Time) -> Result<(), Rejection> {
        let preempted = self.jobs.get(&id).map(|j| j.preempted);
        self.requeue(id, t, 0.0, false)?;
        if let (Some(j), Some(p)) = (self.jobs.get_mut(&id), preempted) {
            j.preempted = p;
        }
        Ok(())
    }

    /// Books a started job: hosts, limits, run-limit deadline, usage.
    /// What it takes of the free slots may move predicted starts
    /// ([`Engine::take_free`]); what it held reserved, given back for the
    /// others to see it ending, may too; what it `borrowed` was seen to.
    fn commit(&mut self, id: JobId, alloc: Alloc, t: Time, borrowed: bool) {
        let Some(job) = self.jobs.get(&id) else { return };
        let (queue, user, asked, limit) = (job.queue, job.user, job.slots, self.job_limit(job));
        let (end, expected) = (self.job_end(job, t), self.expected_end(job, t));
        let slots: u32 = alloc.iter().map(|a| a.1).sum();
        let accept = self.queues[queue].spec.accept_interval();
        let per_host = self.queues[queue].per_host_limits;
        let (res, exclusive) = (job.res.clone(), job.exclusive);
        // It leaves pending here, not through `remove_pending`.
        self.count_pending(user, queue, asked, false);
        if self.drop_reservation(id).is_none() && !borrowed {
            if res.is_some() {
                self.invalidate_predictions();
            } else {
                self.take_free(slots, expected);
            }
        }
        if per_host {
            for &(h, n) in &alloc {
                let e = self.hosts[h as usize].per_queue.entry(queue).or_insert((0, t));
                e.0 += n;
                e.1 = t;
            }
        }
        self.hold_hosts(res.as_deref(), exclusive, &alloc, true);
        if let Some(n) = accept {
            self.wakeups.insert(t.after(u64::from(n) * u64::from(self.config.mbd_sleep_time)));
        }
        let lambda = self.pool_lambda;
        let q = &mut self.queues[queue];
        q.accumulated.update(t.0, q.used, lambda);
        q.used += slots;
        q.pending -= 1;
        q.pending_slots = q.pending_slots.saturating_sub(u64::from(asked));
        if q.user_used.len() <= user as usize {
            q.user_used.resize(user as usize + 1, 0);
        }
        q.user_used[user as usize] += slots;
        self.user_used[user as usize] += slots;
        if let Some(end) = end {
            self.deadlines.insert((end, id));
        }
        if let Some(e) = expected {
            let by_set = self.slots_by_set(&alloc);
            self.expected_ends.insert((e, id), by_set);
            if Some(e) != end {
                // Past its estimate it has no end to count on.
                self.wakeups.insert(e);
            }
        }
        let charges = self.charge_start(id, &alloc, t, limit);
        if let Some(job) = self.jobs.get_mut(&id) {
            job.state = JobState::Running {
                start: t,
                alloc,
                charges,
                cpu_reported: 0.0,
                memory: 0.0,
                suspended: None,
                paused: 0,
            };
        }
        self.book_limits(id, true);
        self.hold_resources(id, t);
        self.array_starts(id);
        self.job_group_starts(id);
        self.dep_changed.push(id);
        self.track_growth(id);
    }

    /// The accounts a job's slots on hosts starting with `first` are
    /// charged to: its queue policy's account, and the account of the
    /// partition `first` is in.
    pub(crate) fn charged_accounts<'a>(
        &'a self,
        job: &'a Job,
        first: Option<u32>,
    ) -> impl Iterator<Item = (usize, NodeId)> + 'a {
        let policy = self.queues[job.queue].policy;
        let partition = first.and_then(|h| self.hosts[h as usize].partition);
        job.accounts.iter().copied().filter(move |&(p, _)| Some(p) == policy || Some(p) == partition)
    }

    /// Charges a started job to its accounts ([`Engine::charged_accounts`]).
    pub(crate) fn charge_start(&mut self, id: JobId, alloc: &[(u32, u32)], t: Time, limit: Option<u64>) -> Charges {
        self.mf_started(id, alloc, t);
        let Some(job) = self.jobs.get(&id) else { return Charges::new() };
        let slots: u32 = alloc.iter().map(|a| a.1).sum();
        let mut charges = Charges::new();
        for (p, leaf) in self.charged_accounts(job, alloc.first().map(|a| a.0)) {
            let tree = &self.fairshare.policies[p].tree;
            let committed = (tree.factors().committed_run_time_factor > 0.0).then_some(limit).flatten();
            let charge =
                JobCharge { slots, run_weight: tree.run_weight(slots), committed, memory: 0.0, start: t, shift: 0.0 };
            charges.push((p, leaf, charge));
        }
        for (p, leaf, charge) in &charges {
            self.fairshare.policies[*p].tree.start_job(*leaf, charge);
        }
        charges
    }
}
