//! Running jobs: starting their supervisors, measuring them while they
//! run, and taking them back after a restart.

use std::collections::BTreeMap;

use allot_engine::{JobId, Time};
use allot_exec::ExecSpec;
use allot_store::{PreExecEnd, Record};
use anyhow::anyhow;
use tokio::sync::mpsc;

use crate::daemon_job::JobPaths;
use crate::serve::Input;
use crate::state::State;

/// Running jobs' CPU time and memory, measured every `usage_interval`
/// seconds, as records: the measure is in the log, so a restart charges
/// fairshare as the running daemon did.
///
/// With cgroup v2 (detected at start), from each job's cgroup: every
/// process the job started counts, whatever its process group. Without
/// it, or for memory when the cgroup has no memory controller, from
/// `/proc` over the job's process group (the processes alive in it, with
/// what their waited-for children used); a process that leaves the group
/// escapes that measure until the job ends.
pub(crate) fn measure(state: &mut State, wake: &mpsc::Sender<Input>, records: &mut Vec<Record>) {
    if let Some(samples) = state.measured.take() {
        usage_records(state, &samples, records);
    }
    // With agents, each measures its own jobs (see `cluster`).
    if state.cluster.is_some() {
        return;
    }
    let due =
        state.last_usage.is_none_or(|at| state.now.saturating_duration_since(at).as_secs() >= state.usage_interval);
    if !due || state.book.running.is_empty() {
        return;
    }
    state.last_usage = Some(state.now);
    let plan = allot_agent::measure::Sampling {
        jobs: state.book.running.iter().map(|j| j.0).collect(),
        files: state.files.clone(),
        cgroups: state.cgroups.as_ref().map(|c| c.base().to_path_buf()),
        tasks: Vec::new(),
        state_dir: state.state_dir.clone(),
    };
    // The reads (cgroup files, every process of /proc) go to a blocking
    // thread, off the one that answers requests; their figures come back
    // as an input, and are recorded at the next tick.
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            let wake = wake.clone();
            runtime.spawn_blocking(move || {
                let _ = wake.blocking_send(Input::Measured(plan.sample()));
            });
        }
        Err(_) => usage_records(state, &plan.sample(), records),
    }
}

/// The measures that changed, as records, for the jobs still running.
fn usage_records(state: &State, samples: &[allot_agent::measure::Sample], records: &mut Vec<Record>) {
    for &(job, cpu_time, mem_kb) in samples {
        let job = JobId(job);
        if !state.book.running.contains(&job) {
            continue;
        }
        let last = state.book.jobs.get(&job).and_then(|j| j.usage);
        if last != Some((cpu_time, mem_kb)) {
            records.push(Record::Usage { job, cpu_time, mem_kb });
        }
    }
}

/// Jobs found over their memory limit by the last measure: each is ended,
/// TERM_MEMLIMIT, as LSF ends them (SIGINT, SIGTERM, SIGKILL).
pub(crate) fn enforce_memory(state: &mut State, records: &mut Vec<Record>) {
    for job in over_memory(state) {
        start_terminating(state, job, allot_store::Term::MemLimit, records);
    }
}

/// The signals that end a job at a limit, JOB_TERMINATE_INTERVAL apart,
/// as LSF sends them: SIGINT, SIGTERM, then SIGKILL.
const TERMINATE: [nix::sys::signal::Signal; 3] =
    [nix::sys::signal::Signal::SIGINT, nix::sys::signal::Signal::SIGTERM, nix::sys::signal::Signal::SIGKILL];

/// Starts ending `job` at a limit: the kill is recorded with its reason
/// (unless the job is being killed already) and the signals begin.
pub(crate) fn start_terminating(state: &mut State, job: JobId, term: allot_store::Term, records: &mut Vec<Record>) {
    if state.book.jobs.get(&job).is_none_or(|j| j.killed.is_some()) {
        return;
    }
    records.push(Record::Killed { job, term });
    state.terminating.insert(job, (0, state.now));
}

/// Sends the warning actions that are due (`-wa` at `-wt` before the run
/// limit), once each; a job whose process group is not known yet gets its
/// warning when it is.
pub(crate) fn warn(state: &mut State, t: allot_engine::Time) {
    let due: Vec<JobId> = state.warnings.iter().filter(|(_, (at, _))| *at <= t.0).map(|(&job, _)| job).collect();
    for job in due {
        if !state.book.running.contains(&job) {
            state.warnings.remove(&job);
            continue;
        }
        let Some(sig) = state.warnings.get(&job).and_then(|(_, s)| crate::control::signal_named(s).ok()) else {
            state.warnings.remove(&job);
            continue;
        };
        if !matches!(send_signal(state, job, sig), Ok(false)) {
            state.warnings.remove(&job);
        }
    }
}

/// Sends the jobs being ended at a limit their next signal when it is due.
/// A job whose process group is not known yet gets it when it is.
pub(crate) fn terminate(state: &mut State) {
    let interval = std::time::Duration::from_secs(state.terminate_interval);
    let now = state.now;
    let due: Vec<JobId> = state.terminating.iter().filter(|(_, (_, at))| *at <= now).map(|(&job, _)| job).collect();
    for job in due {
        if !state.book.running.contains(&job) {
            state.terminating.remove(&job);
            continue;
        }
        let Some(&(step, _)) = state.terminating.get(&job) else { continue };
        if matches!(send_signal(state, job, TERMINATE[step]), Ok(false)) {
            continue;
        }
        let Some((step, at)) = state.terminating.get_mut(&job) else { continue };
        *step += 1;
        *at = now + interval;
        if *step == TERMINATE.len() {
            state.terminating.remove(&job);
        }
    }
}

/// The running jobs over their memory limit (`-M`), as last measured:
/// the job's memory on all its hosts together, or with `-hl` each host's
/// part ([`measured_kb`]).
fn over_memory(state: &State) -> Vec<JobId> {
    state
        .book
        .running
        .iter()
        .copied()
        .filter(|id| {
            state.book.jobs.get(id).is_some_and(|j| {
                let x = j.record.extras();
                let per_host = state.cluster.as_ref().and_then(|c| c.usage.get(id));
                x.mem_limit_kb.is_some_and(|limit| measured_kb(j.usage, per_host, x.host_mem_limit) > limit)
            })
        })
        .collect()
}

/// The memory a job's `-M` is held to: its resident memory on all its
/// hosts together (`total`), or with `-hl` (`host_based`) the most any one
/// host's part of it uses, as each host's agent measured it (`per_host`;
/// without agents the job has one host, whose part is all of it). LSF
/// enforces `-hl` through each host's cgroup; allotd does both: the
/// ceiling in each host's cgroups, and this measure between.
pub(crate) fn measured_kb(
    total: Option<(f64, u64)>,
    per_host: Option<&BTreeMap<String, (f64, u64)>>,
    host_based: bool,
) -> u64 {
    match per_host.filter(|_| host_based) {
        Some(hosts) => hosts.values().map(|u| u.1).max().unwrap_or(0),
        None => total.map_or(0, |u| u.1),
    }
}

/// After a restart, the jobs the log says are running: a job with an exit
/// report is collected by the next pass; one whose supervisor holds its
/// lock is still running; one whose supervisor never started gets one now
/// (the job never ran); one whose supervisor died after starting it ends
/// as [`orphans`] says, and is not run again.
pub(crate) fn recover_running(state: &mut State, wake: &mpsc::Sender<Input>, t: Time) -> anyhow::Result<()> {
    // With agents, each says what it holds when it connects (`cluster`).
    if state.cluster.is_some() {
        return Ok(());
    }
    let mut lost = Vec::new();
    for id in state.book.running.clone() {
        if state.files.read_exit(id.0).is_some() {
            continue;
        }
        if !state.files.started(id.0) && state.files.try_lock(id.0)?.is_some() {
            let alloc = state.book.jobs.get(&id).map(|j| j.alloc.clone()).unwrap_or_default();
            lost.extend(start_job(state, id, &alloc, wake));
        }
    }
    state.last_sweep = None;
    lost.extend(orphans(state, Default::default()));
    state.commit(t, lost).map_err(|e| anyhow!(e))
}

/// Seconds between looks for the supervisor of every running job; a
/// supervisor that ends is looked at at once.
const SWEEP_SECONDS: u64 = 10;

/// The running jobs whose supervisor is gone without an exit report
/// (killed, or the machine's OOM killer): nobody can hear how they end,
/// so their processes still alive are ended (SIGKILL to the job's process
/// group) and the job ends EXIT with the reason, its slots free. Looked
/// for among `ended` (jobs whose supervisor was heard to end), and every
/// [`SWEEP_SECONDS`] among all running jobs (a supervisor whose zygote
/// died is not heard of). Only a job whose command started is judged: its
/// supervisor took the lock before starting it and holds it to the end,
/// while one not started may have a supervisor about to take it (a
/// supervisor that fails before the start writes an exit report).
pub(crate) fn orphans(state: &mut State, mut candidates: std::collections::BTreeSet<JobId>) -> Vec<Record> {
    if state.cluster.is_some() {
        return Vec::new();
    }
    if state.last_sweep.is_none_or(|at| state.now.saturating_duration_since(at).as_secs() >= SWEEP_SECONDS) {
        state.last_sweep = Some(state.now);
        candidates.extend(state.book.running.iter().copied());
    }
    let mut out = Vec::new();
    for id in candidates {
        if !state.book.running.contains(&id) {
            continue;
        }
        if let Some((exit, reason)) = state.files.orphan_end(id.0) {
            eprintln!("allotd: job {id}: {reason}");
            out.push(finished_unrun(id, exit, reason.into()));
        }
    }
    out
}

/// A job's end as its supervisor reported it, on allotd's clock at
/// `ended`, into `out`: TERM_MEMLIMIT first when the kernel ended it at its
/// memory ceiling (as when allotd ends it), then its end. Both are logged
/// when it ended, never before what the state has already seen nor after
/// now (`t`); an end so heard late says when the run ended (`ran_until`,
/// never before it started), and the job is charged until then.
pub(crate) fn ended(
    state: &State,
    job: JobId,
    report: allot_exec::ExitReport,
    ended: u64,
    t: Time,
    out: &mut Vec<(Time, Record)>,
) {
    let at = Time(ended.clamp(state.clock.0, t.0.max(state.clock.0)));
    if report.oom_killed && state.book.jobs.get(&job).is_some_and(|j| j.killed.is_none()) {
        out.push((at, Record::Killed { job, term: allot_store::Term::MemLimit }));
    }
    // A failed pre-execution command: pending again, or held once it has
    // failed MAX_PREEXEC_RETRY times; its code 99 ends the job.
    let pre_exec = (report.pre_exec_failed && report.exit != allot_exec::PRE_EXEC_ABORT).then(|| {
        let failures = state.book.jobs.get(&job).map_or(0, |j| j.pre_exec_failures) + 1;
        if failures >= state.max_preexec_retry { PreExecEnd::Hold } else { PreExecEnd::Retry }
    });
    let started = state.book.jobs.get(&job).and_then(|j| j.start_time).unwrap_or(0);
    let ran_until = Some(ended.max(started)).filter(|&e| e < at.0);
    let finished = Record::Finished {
        job,
        exit: report.exit,
        cpu_time: report.cpu_time,
        max_mem_kb: report.max_rss_kb,
        reason: report.reason,
        pre_exec,
        ran_until,
    };
    out.push((at, finished));
}

/// Sends `sig` to a running job: through its host's agent, or here to its
/// process group. `Ok(false)`: it cannot be sent yet (its command has not
/// started here, or its host's agent is not connected); send it later.
pub(crate) fn send_signal(state: &State, job: JobId, sig: nix::sys::signal::Signal) -> Result<bool, nix::errno::Errno> {
    if state.cluster.is_some() {
        return Ok(crate::cluster::signal(state, job, sig));
    }
    match state.files.read_pgid(job.0) {
        Some(pgid) => allot_exec::signal_group(pgid, sig).map(|()| true),
        None => Ok(false),
    }
}

/// A job's end without its command having run (or without its end being
/// known): exit code and why.
pub(crate) fn finished_unrun(job: JobId, exit: i32, reason: String) -> Record {
    Record::Finished { job, exit, cpu_time: 0.0, max_mem_kb: 0, reason: Some(reason), pre_exec: None, ran_until: None }
}

/// Launches a job the log says started; one that cannot be launched ends
/// EXIT with the reason (the record returned, to commit), and allotd goes
/// on with the others.
pub(crate) fn start_job(
    state: &mut State,
    job: JobId,
    alloc: &[(String, u32)],
    wake: &mpsc::Sender<Input>,
) -> Option<Record> {
    if state.cluster.is_some() {
        crate::cluster::start(state, job);
        return None;
    }
    let reason = launch(state, job, alloc, wake).err()?;
    eprintln!("allotd: job {job} cannot start: {reason}");
    state.files.clean_alone(job.0);
    Some(finished_unrun(job, 1, reason.to_string()))
}

/// Why a job cannot be started on this machine: its end's reason (what
/// `bjobs -l` and `bhist -l` show).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CannotStart {
    #[error("user `{0}` does not exist on this host")]
    NoAccount(String),
    #[error("cannot write its spec: {}", allot_exec::os_message(.0))]
    Spec(std::io::Error),
    #[error("cannot start its supervisor {}: {}", .exe.display(), allot_exec::os_message(.error))]
    Supervisor { exe: std::path::PathBuf, error: std::io::Error },
}

/// Writes the job's spec and starts its supervisor.
fn launch(
    state: &mut State,
    job: JobId,
    alloc: &[(String, u32)],
    wake: &mpsc::Sender<Input>,
) -> Result<(), CannotStart> {
    let Some(user) = state.book.jobs.get(&job).map(|j| j.record.spec.user.clone()) else { return Ok(()) };
    // As root, a job runs as its owner, and only as them: an owner who is
    // gone by now ends the job, never runs it as root.
    let account = state.accounts.lookup(&user);
    let run_as = match (allot_exec::owner::is_root(), &account) {
        (false, _) => None,
        (true, Some(a)) => Some(a.owner.clone()),
        (true, None) => return Err(CannotStart::NoAccount(user)),
    };
    let Some(mut spec) = exec_spec(state, job, alloc, account) else { return Ok(()) };
    spec.run_as = run_as;
    spec.cgroup = state.cgroups.as_ref().map(|c| c.job_dir(job.0));
    let hosts = alloc.iter().flat_map(|(h, n)| std::iter::repeat_n(h.as_str(), *n as usize)).collect::<Vec<_>>();
    if let Ok(path) = allot_agent::tasks::write_hostfile(&state.state_dir, job.0, &hosts.join(" ")) {
        spec.env.push(("LSB_DJOB_HOSTFILE".into(), path.display().to_string()));
    }
    state.files.write_spec(&spec).map_err(CannotStart::Spec)?;
    // `allot-<tag>` gone (the last job removed it as it left, or allotd
    // while idle) is made again by the supervisor as it enters its job's
    // cgroup (`allot_exec::cgroup::enter_job`), not looked for here.
    let supervisors = &mut state.supervisors;
    supervisors
        .start(job.0, wake)
        .map_err(|error| CannotStart::Supervisor { exe: supervisors.exe().to_path_buf(), error })
}

/// What running job `job` on `alloc` takes, wherever it runs: its
/// command, directory, output files, and its environment with the
/// `LSB_*` variables and who it is (from `account`, the password
/// database, never from the submission's environment). Its owner to run
/// as and its cgroup are the host's to fill in. `None`: no such job.
pub(crate) fn exec_spec(
    state: &State,
    job: JobId,
    alloc: &[(String, u32)],
    account: Option<allot_agent::accounts::Account>,
) -> Option<ExecSpec> {
    let j = state.book.jobs.get(&job)?;
    let r = &j.record;
    let user = &r.spec.user;
    let shown = j.job_ref();
    let hosts: Vec<String> = alloc.iter().flat_map(|(h, n)| std::iter::repeat_n(h.clone(), *n as usize)).collect();
    let mcpu: Vec<String> = alloc.iter().map(|(h, n)| format!("{h} {n}")).collect();
    let mut env = r.env.to_vec();
    let home = account.map_or_else(|| "/".to_string(), |a| a.home);
    for (k, v) in [
        ("USER", user.clone()),
        ("LOGNAME", user.clone()),
        ("HOME", home.clone()),
        ("LSB_JOBID", shown.id.to_string()),
        ("LSB_JOBINDEX", shown.index.to_string()),
        ("LSB_JOBNAME", j.display_name().into_owned()),
        ("LSB_QUEUE", r.spec.queue.clone().unwrap_or_default()),
        ("LSB_HOSTS", hosts.join(" ")),
        ("LSB_MCPU_HOSTS", mcpu.join(" ")),
        ("LSB_DJOB_NUMPROC", hosts.len().to_string()),
        ("LS_SUBCWD", r.cwd.clone()),
        // Which job and run this is, by allotd's own numbering (an array
        // element's LSB_JOBID is its array's): what `blaunch` names.
        ("ALLOT_JOB", job.to_string()),
        ("ALLOT_ATTEMPT", j.attempt.to_string()),
    ] {
        env.retain(|(name, _)| name != k);
        env.push((k.to_string(), v));
    }
    let (stdout, stderr) = state.output_files(job, j);
    let exec = state.exec_of(job, j);
    let cwd = j.cwd();
    let first = alloc.first().map_or(state.host.as_str(), |(h, _)| h.as_str());
    let admin = state.admins.first().map_or("root", String::as_str);
    let head = || allot_exec::report::ReportHead {
        job: shown.to_string(),
        name: j.display_name().into_owned(),
        user: user.clone(),
        cluster: state.cluster_name.clone(),
        sender: format!("{admin}@{first}"),
        from_host: r.from_host.clone(),
        submitted: j.submit_time,
        queue: state.engine.job_queue(job).or(r.spec.queue.as_deref()).unwrap_or_default().to_string(),
        hosts: alloc.iter().map(|a| allot_proto::exec_host(a).into_owned()).collect(),
        home: home.clone(),
        cwd: cwd.display().to_string(),
        command: r.command.clone(),
    };
    // LSF's job report ends an output file given with `-o`.
    let report = r.output.as_ref().map(|_| Box::new(head()));
    // `-B`/`-N` (a job asking with no mail program was told at submission).
    let mail = match (&r.extras().mail, &state.mail_prog) {
        (Some(m), Some(program)) if m.begin || m.end => Some(Box::new(allot_exec::mail::MailSpec {
            program: program.clone(),
            to: m.to.clone().unwrap_or_else(|| user.clone()),
            begin: m.begin,
            end: m.end,
            head: head(),
        })),
        _ => None,
    };
    // `-i`, as `-o` is named.
    let input = r.extras().input.as_deref().map(|name| j.named_file(name));
    Some(ExecSpec {
        job: job.0,
        command: exec.command(&r.command),
        nice: exec.nice,
        cwd,
        create_cwd: allot_exec::has_patterns(&r.cwd),
        env,
        stdout,
        stderr,
        run_as: None,
        cgroup: None,
        memory_limit_kb: r.extras().mem_limit_kb,
        attempt: j.attempt,
        report,
        limits: r.extras().limits,
        pre_exec: r.extras().pre_exec.clone(),
        post_exec: r.extras().post_exec.clone(),
        mail,
        interactive: r.extras().interactive.clone(),
        input,
        umask: r.extras().umask.unwrap_or(allot_exec::inherit::DEFAULT_UMASK),
        login_shell: r.extras().login_shell.clone(),
    })
}

/// Whose a job's files are, as root: its owner's uid and gid (`None` when
/// allotd is not root, and runs as the owner already).
pub(crate) fn owner_ids(user: &str) -> Option<(u32, u32)> {
    if !allot_exec::owner::is_root() {
        return None;
    }
    // An owner gone: nobody's, which no file is.
    let u = nix::unistd::User::from_name(user).ok().flatten();
    Some(u.map_or((u32::MAX - 1, u32::MAX - 1), |u| (u.uid.as_raw(), u.gid.as_raw())))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_host_based_limit_holds_each_hosts_part() {
        let hosts: std::collections::BTreeMap<String, (f64, u64)> =
            [("h1".to_string(), (0.0, 120_000)), ("h2".to_string(), (0.0, 130_000))].into();
        let total = Some((0.0, 250_000));
        assert_eq!(super::measured_kb(total, Some(&hosts), false), 250_000, "-M alone: the job in all");
        assert_eq!(super::measured_kb(total, Some(&hosts), true), 130_000, "-hl: the largest host's part");
        assert_eq!(super::measured_kb(total, None, true), 250_000, "one host: its part is all of it");
        assert_eq!(super::measured_kb(None, None, false), 0, "not measured yet");
    }
}
