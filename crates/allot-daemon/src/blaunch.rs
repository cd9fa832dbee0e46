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
pub(crate) fn launch(state: &mut State, origin: &str, launch: Launch) {
    send_tasks(state, origin, launch, false);
}

/// A `blaunch`'s tasks to their hosts. `resumed`: sent again after a
/// restart, to the hosts connected now only (a host that has the task
/// does not start it twice; one not connected sends all it has of its
/// tasks when it is back), and then every host of it sends again what it
/// has.
fn send_tasks(state: &mut State, origin: &str, Launch { tag, request: l }: Launch, resumed: bool) {
    let refuse = |state: &State, why: String| {
        if let Some(c) = &state.cluster {
            c.send(origin, ToAgent::LaunchRefused { tag, why });
        }
    };
    let job = JobId(l.job);
    let Some(j) = state.book.jobs.get(&job).filter(|j| state.book.running.contains(&job) && j.attempt == l.attempt)
    else {
        return refuse(state, format!("job {} is not running", state.book.job_ref(job)));
    };
    let in_alloc = |h: &str| j.alloc.iter().any(|(a, _)| a == h);
    if !in_alloc(origin) {
        return refuse(state, format!("host {origin} is not of job {}'s allocation", state.book.job_ref(job)));
    }
    if let Some(h) = l.hosts.iter().find(|h| !in_alloc(h)) {
        return refuse(state, format!("host {h} is not of job {}'s allocation", state.book.job_ref(job)));
    }
    let Some(c) = &state.cluster else { return };
    let connected = |h: &str| c.hosts.get(h).is_some_and(|live| live.link.is_some());
    if let Some(h) = l.hosts.iter().find(|h| !connected(h)).filter(|_| !resumed) {
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
            // `-hl`: each host's tasks are held to the job's memory limit
            // (the ceiling of their cgroup there).
            memory_limit_kb: j.record.extras().mem_limit_kb.filter(|_| j.record.extras().host_mem_limit),
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
            // A task runs as blaunch says (under /bin/sh), not the job's -L.
            login_shell: None,
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
        if connected(host) {
            c.send(host, task);
        }
    }
    if resumed {
        let mut told = std::collections::BTreeSet::new();
        for h in l.hosts.iter().filter(|h| connected(h)) {
            if told.insert(h.as_str()) {
                c.send(h, ToAgent::Resend { origin: origin.to_string(), tag });
            }
        }
    }
}

/// A task's output or end, from the host it runs on, for `origin`'s
/// `blaunch`.
pub(crate) fn forward(state: &State, origin: &str, message: ToAgent) {
    if let Some(c) = &state.cluster {
        c.send(origin, message);
    }
}

/// `origin`'s `blaunch` request goes on after its agent or allotd
/// restarted: checked as a new one is, its tasks sent again to the hosts
/// connected now (each starts a task it does not have: allotd may have
/// died before sending it), and each has all of its tasks' output and
/// ends sent again; its `blaunch` keeps each byte and each end once.
pub(crate) fn resume(state: &mut State, origin: &str, launch: Launch) {
    send_tasks(state, origin, launch, true);
}
