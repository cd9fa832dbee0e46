//! `blaunch` across hosts (with agents): a request from the agent of a
//! job's host is checked against the job's allocation and handed to the
//! agents of the hosts it names, one task each; the tasks' output and
//! ends go back to the agent that asked. A job's tasks end with its run
//! (`EndTasks` to every host of its allocation once its end is durable,
//! see `cluster::acknowledge`).

use allot_agent::wire::{Launch, ToAgent};

use allot_engine::JobId;

use crate::state::State;

/// A `blaunch` from `origin`'s agent. Refused whole (and said why to the
/// `blaunch`) unless the job's current run is on `origin` and every host
/// named is of its allocation and connected.
pub(crate) fn launch(state: &mut State, origin: &str, Launch { tag, request: l }: Launch) {
    let refuse = |state: &State, why: String| {
        if let Some(c) = &state.cluster {
            c.send(origin, ToAgent::LaunchRefused { tag, why });
        }
    };
    let job = JobId(l.job);
    let Some(j) = state.jobs.get(&job).filter(|j| state.running.contains(&job) && j.attempt == l.attempt) else {
        return refuse(state, format!("job {} is not running", state.job_ref(job)));
    };
    let in_alloc = |h: &str| j.alloc.iter().any(|(a, _)| a == h);
    if !in_alloc(origin) {
        return refuse(state, format!("host {origin} is not of job {}'s allocation", state.job_ref(job)));
    }
    if let Some(h) = l.hosts.iter().find(|h| !in_alloc(h)) {
        return refuse(state, format!("host {h} is not of job {}'s allocation", state.job_ref(job)));
    }
    let Some(c) = &state.cluster else { return };
    if let Some(h) = l.hosts.iter().find(|h| c.hosts.get(h.as_str()).is_none_or(|live| live.link.is_none())) {
        return refuse(state, format!("host {h} is not reachable now"));
    }
    let user = j.record.spec.user.clone();
    let nice = state.exec_of(job, j).nice;
    // A job's tasks are its processes: its limits are theirs.
    let limits = j.record.extras().limits;
    for (index, host) in l.hosts.iter().enumerate() {
        let spec = allot_exec::ExecSpec {
            job: l.job,
            nice,
            command: l.command.clone(),
            cwd: l.cwd.clone(),
            env: l.env.clone(),
            stdout: allot_exec::OutputFile { path: Default::default(), overwrite: false, named: false },
            stderr: allot_exec::OutputFile { path: Default::default(), overwrite: false, named: false },
            run_as: None,
            create_cwd: false,
            cgroup: None,
            memory_limit_kb: None,
            attempt: l.attempt,
            report: None,
            limits,
            // The job's own ran on its first host: a task has none.
            pre_exec: None,
            post_exec: None,
            interactive: None,
            input: None,
            mail: None,
            umask: j.record.extras().umask.unwrap_or(allot_exec::inherit::DEFAULT_UMASK),
        };
        let task = ToAgent::Task {
            origin: origin.to_string(),
            tag,
            index: index as u32,
            job: l.job,
            attempt: l.attempt,
            user: user.clone(),
            spec: Box::new(spec),
        };
        c.send(host, task);
    }
}

/// A task's output or end, from the host it runs on, for `origin`'s
/// `blaunch`.
pub(crate) fn forward(state: &State, origin: &str, message: ToAgent) {
    if let Some(c) = &state.cluster {
        c.send(origin, message);
    }
}

/// `origin`'s `blaunch` request `tag` goes on after its agent or allotd
/// restarted: each of its hosts (of the job's current run, connected) is
/// to send all it has of it again; its `blaunch` keeps each byte and each
/// end once. A request whose run is over is refused, as a new one would be.
pub(crate) fn resume(state: &State, origin: &str, (tag, job, attempt): (u64, u64, u32), hosts: &[String]) {
    let Some(c) = &state.cluster else { return };
    let id = JobId(job);
    let Some(j) = state.jobs.get(&id).filter(|j| state.running.contains(&id) && j.attempt == attempt) else {
        let why = format!("job {} is not running", state.job_ref(id));
        c.send(origin, ToAgent::LaunchRefused { tag, why });
        return;
    };
    let mut told = std::collections::BTreeSet::new();
    for h in hosts.iter().filter(|h| j.alloc.iter().any(|(a, _)| a == *h)) {
        if told.insert(h.as_str()) {
            c.send(h, ToAgent::Resend { origin: origin.to_string(), tag });
        }
    }
}
