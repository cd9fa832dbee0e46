//! The agent's side of `blaunch`: this host's requests (their `blaunch`
//! asks here, resumed after a restart of this agent or of allotd), and
//! the tasks this host runs for any host's request (under their own
//! supervisors, [`crate::spool`]).

use allot_exec::task::TaskFile;
use tokio::sync::mpsc;

use super::{Agent, Event};
use crate::spool::{Found, Run};
use crate::tasks::TaskEvent;
use crate::wire::{FromAgent, LaunchEvent};

impl Agent {
    /// Starts a task allotd sends for a `blaunch` (once: one this host
    /// already has is not started again); one that cannot start ends at
    /// once, 255, saying why on its standard error.
    pub(super) async fn start_task(
        &mut self,
        (origin, tag, index): (String, u64, u32),
        (job, attempt): (u64, u32),
        user: &str,
        spec: allot_exec::ExecSpec,
        tx: &mpsc::Sender<Event>,
    ) {
        if self.tasks.iter().any(|t| t.serves(&origin, tag) && t.run.index == index) {
            return;
        }
        let owner = match allot_exec::owner::is_root() {
            false => Ok(None),
            true => self
                .accounts
                .lookup(user)
                .map(|a| Some(a.owner))
                .ok_or_else(|| format!("user `{user}` does not exist on host {}", self.opts.host)),
        };
        let mut env = spec.env;
        self.on_this_host(job, &mut env);
        if let Some(c) = &self.cgroups {
            c.ensure();
        }
        let cgroup = self.cgroups.as_ref().map(|c| crate::tasks::cgroup_of(c.base(), (job, attempt)));
        let run = Run { job, attempt, origin: origin.clone(), tag, index };
        let started = owner.and_then(|owner| {
            let file = TaskFile {
                command: spec.command,
                cwd: spec.cwd,
                env,
                owner,
                umask: spec.umask,
                nice: spec.nice,
                limits: spec.limits,
                cgroup,
                memory_limit_kb: spec.memory_limit_kb,
                spool_max: self.opts.task_spool_max,
            };
            let tx = tx.clone();
            crate::spool::start(&self.opts.state_dir, &self.opts.supervisor, run, &file, move || {
                let _ = tx.try_send(Event::Task(TaskEvent::Settled));
            })
        });
        match started {
            Ok(task) => self.tasks.push(task),
            Err(why) => {
                let data = format!("blaunch: {}: {why}\n", self.opts.host).into_bytes();
                let out = FromAgent::TaskOutput { origin: origin.clone(), tag, index, stderr: true, data, offset: 0 };
                self.send(&out).await;
                self.send(&FromAgent::TaskEnded { origin, tag, index, exit: 255 }).await;
            }
        }
    }

    /// Passes on what is new in the tasks' spools, while allotd can be
    /// reached (what waits meanwhile stays on disk); a task's end after
    /// all of its output, and after its run's last measure here (all of
    /// its CPU time with it).
    pub(super) async fn tail(&mut self) {
        if !self.link.as_ref().is_some_and(|l| l.2) {
            return;
        }
        let mut said = Vec::new();
        let mut ended = false;
        for t in &mut self.tasks {
            let (origin, tag, index) = (t.run.origin.clone(), t.run.tag, t.run.index);
            for found in t.take(&self.opts.state_dir) {
                said.push(match found {
                    Found::Output { stderr, offset, data } => {
                        FromAgent::TaskOutput { origin: origin.clone(), tag, index, stderr, data, offset }
                    }
                    Found::Ended(exit) => {
                        ended = true;
                        FromAgent::TaskEnded { origin: origin.clone(), tag, index, exit }
                    }
                });
            }
        }
        if ended {
            self.beat().await;
        }
        for message in said {
            self.send(&message).await;
        }
    }

    /// Everything of the tasks here of `origin`'s request `tag`, again.
    pub(super) fn resend(&mut self, origin: &str, tag: u64) {
        for t in self.tasks.iter_mut().filter(|t| t.serves(origin, tag)) {
            t.resend();
        }
    }

    /// A job's run is over: its tasks here end (everything in their
    /// cgroup, or their process groups), and go with their spools.
    pub(super) async fn end_tasks(&mut self, job: u64, attempt: u32) {
        let state_dir = self.opts.state_dir.clone();
        let (ending, kept): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.tasks).into_iter().partition(|t| t.run.job == job && t.run.attempt == attempt);
        self.tasks = kept;
        if let Some(c) = &self.cgroups {
            crate::tasks::end_cgroup(c.base().to_path_buf(), (job, attempt)).await;
        }
        for t in &ending {
            if let Some(pgid) = t.pgid(&state_dir) {
                let _ = allot_exec::signal_group(pgid, nix::sys::signal::Signal::SIGKILL);
            }
            t.remove(&state_dir);
        }
        if !self.runs.contains_key(&job) {
            crate::tasks::remove_hostfile(&state_dir, job);
        }
    }

    /// A link to allotd (again): what was sent on the last one may have
    /// been lost with it, so every task here sends all it has again, and
    /// every request of this host's that waits is resumed.
    pub(super) async fn resume_all(&mut self) {
        for t in &mut self.tasks {
            t.resend();
        }
        for launch in self.launches.to_resume() {
            self.send(&FromAgent::Resume(Box::new(launch))).await;
        }
    }

    /// A `blaunch` asks (anew, or to resume its request), or a task's
    /// supervisor here ended.
    pub(super) async fn task_event(&mut self, event: TaskEvent) {
        let TaskEvent::Asked { uid, request, reply } = event else {
            return self.tail().await;
        };
        let refuse = |why: String| {
            let _ = reply.send(LaunchEvent::Refused { why });
        };
        if !self.runs.get(&request.job).is_some_and(|r| r.attempt == request.attempt && r.ended.is_none()) {
            return refuse(format!("job {} runs no such run on {}", request.job, self.opts.host));
        }
        // Only the job's owner (or root) launches its tasks.
        let owner_uid = match self.files.read_spec(request.job).ok().and_then(|s| s.run_as) {
            Some(o) => o.uid,
            None => nix::unistd::Uid::effective().as_raw(),
        };
        if uid != owner_uid && uid != 0 {
            return refuse(format!("job {} is not yours", request.job));
        }
        if request.hosts.is_empty() {
            return refuse("no host to launch on".into());
        }
        let linked = self.link.as_ref().is_some_and(|l| l.2);
        if let Some(tag) = request.resume {
            self.launches.adopt(tag, reply, request.clone());
            if linked {
                self.send(&FromAgent::Resume(Box::new(crate::wire::Launch { tag, request }))).await;
            }
            return;
        }
        if !linked {
            return refuse(crate::wire::UNREACHABLE.into());
        }
        let tag = self.launches.add(reply, request.clone());
        self.send(&FromAgent::Launch(Box::new(crate::wire::Launch { tag, request }))).await;
    }
}
