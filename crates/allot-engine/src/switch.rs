//! A running job changes queue (`bswitch`), as LSF's bswitch documents
//! it: "The switch operation can be done only if a specified job is
//! acceptable to the new queue as if it were submitted to it, and, in
//! case the job that was dispatched to a host, if the host can be used by
//! the new queue. If the switch operation is unsuccessful, the job stays
//! where it is."
//!
//! What moves with it: its slots, from the old queue's counts (slots in
//! use, per user and per host) to the new queue's; its charge, from the
//! old queue's fairshare tree to the new one's, with the run time it has
//! accrued ("when switching jobs between fair share queues, the decayed
//! run time is switched"; a queue without a tree of its own has nothing
//! to give, and the new tree counts the job's run from its start). The
//! CPU time it was already charged stays where it was charged; what it
//! uses from now on goes to the new tree. A host partition's charge does
//! not move: its hosts are the same.
//!
//! What stays: its run limit, as it was in force ("its nice value and
//! resource limits remain the same"): a job without `-W` keeps its old
//! queue's RUNLIMIT, pinned. The new queue's RUNLIMIT maximum still
//! bounds a `-W` it was given, as at submission.

use crate::engine::{Engine, JobId, JobState, Rejection};
use crate::model::JobSpec;
use crate::shares::JobCharge;
use crate::time::Time;

impl Engine {
    /// Moves the running job `id` to the queue `spec` names (its spec as
    /// it was, with the new queue), or changes nothing and says why.
    pub(crate) fn switch_running(&mut self, id: JobId, spec: &JobSpec, t: Time) -> Result<(), Rejection> {
        let old = self.jobs.get(&id).ok_or(Rejection::NoSuchJob(id))?;
        let JobState::Running { alloc, start, paused, suspended, .. } = &old.state else {
            return Err(Rejection::NotRunning(id));
        };
        let (alloc, origin, counted) = (alloc.clone(), start.after(*paused), suspended.is_none());
        let pinned = if old.qos.1 { old.run_limit } else { self.effective_run_limit(old.queue, old.run_limit) };
        let mut new = self.admit(spec)?;
        let old = self.jobs.get(&id).ok_or(Rejection::NoSuchJob(id))?.clone();
        let (from, to) = (old.queue, new.queue);
        if from == to {
            return self.change_run_limit(id, spec.run_limit, t);
        }
        let members = &self.host_sets[self.queues[to].host_set].0;
        if let Some(&(h, _)) = alloc.iter().find(|(h, _)| !members.contains(h)) {
            return Err(Rejection::HostNotInQueue {
                host: self.hosts[h as usize].name.clone(),
                queue: self.queues[to].spec.name.clone(),
            });
        }
        if counted {
            self.uncount_ends(id, origin);
        }
        let slots: u32 = alloc.iter().map(|a| a.1).sum();
        self.book_limits(id, false);
        self.move_slots(&alloc, old.user, from, to, t);
        // The queue tree's charge, with its run time, to the new tree.
        let (old_policy, new_policy) = (self.queues[from].policy, self.queues[to].policy);
        let mut charges = match &old.state {
            JobState::Running { charges, .. } => charges.clone(),
            _ => Default::default(),
        };
        let moved = charges.iter().position(|(p, _, _)| Some(*p) == old_policy).map(|i| charges.remove(i));
        if let Some((p, leaf, charge)) = &moved {
            self.fairshare.policies[*p].tree.drop_job(*leaf, charge);
        }
        let leaf = new_policy.and_then(|p| new.accounts.iter().find(|(q, _)| *q == p).copied());
        if let (true, Some((p, leaf))) = (counted, leaf) {
            let tree = &self.fairshare.policies[p].tree;
            let (start, shift, memory) =
                moved.as_ref().map_or((origin, 0.0, 0.0), |m| (m.2.start, m.2.shift, m.2.memory));
            let committed = (tree.factors().committed_run_time_factor > 0.0).then_some(pinned).flatten();
            let charge = JobCharge { slots, run_weight: tree.run_weight(slots), committed, memory, start, shift };
            self.fairshare.policies[p].tree.start_job(leaf, &charge);
            charges.push((p, leaf, charge));
        }
        // The job as the new queue admits it, with what is its own: its
        // state and history, and its run limit as in force.
        new.state = match old.state {
            JobState::Running { start, alloc, cpu_reported, memory, suspended, paused, .. } => {
                JobState::Running { start, alloc, charges, cpu_reported, memory, suspended, paused }
            }
            other => other,
        };
        new.run_limit = pinned;
        new.submitted = old.submitted;
        new.held = old.held;
        new.depends = old.depends;
        new.waiting = old.waiting;
        new.assoc = old.assoc;
        new.account = old.account;
        new.mf_priority = old.mf_priority;
        new.resize = old.resize;
        new.preempted = old.preempted;
        new.backfill_limit = old.backfill_limit;
        new.begin = old.begin;
        self.jobs.insert(id, new);
        self.book_limits(id, true);
        if counted {
            self.recount_ends(id, origin, t);
        }
        self.invalidate_predictions();
        self.dirty = true;
        Ok(())
    }

    /// A running job's slots leave queue `from`'s counts (in use, its
    /// user's, per host) for queue `to`'s.
    fn move_slots(&mut self, alloc: &[(u32, u32)], user: u32, from: usize, to: usize, t: Time) {
        let slots: u32 = alloc.iter().map(|a| a.1).sum();
        let per_host = self.queues[to].per_host_limits;
        for &(h, n) in alloc {
            let host = &mut self.hosts[h as usize];
            if let Some(e) = host.per_queue.get_mut(&from) {
                e.0 = e.0.saturating_sub(n);
            }
            if per_host {
                host.per_queue.entry(to).or_insert((0, t)).0 += n;
            }
        }
        let lambda = self.pool_lambda;
        let q = &mut self.queues[from];
        q.accumulated.update(t.0, q.used, lambda);
        q.used = q.used.saturating_sub(slots);
        if let Some(u) = q.user_used.get_mut(user as usize) {
            *u = u.saturating_sub(slots);
        }
        let q = &mut self.queues[to];
        q.accumulated.update(t.0, q.used, lambda);
        q.used += slots;
        if q.user_used.len() <= user as usize {
            q.user_used.resize(user as usize + 1, 0);
        }
        q.user_used[user as usize] += slots;
    }
}
