//! `bsub`: a submission's strings parsed and resolved into the engine's
//! job, which joins the cluster through [`State::apply`] as every change
//! does, live and on replay.

use allot_config::deps::DepTarget;
use allot_engine::{ArrayShape, Dependency, JobId, JobSpec, Time};
use allot_proto::{JobRef, Response};
use allot_store::{JobExtras, JobRecord, Record};

use crate::serve::Caller;
use crate::state::State;

pub(crate) fn submit(
    state: &mut State,
    caller: &Caller,
    s: allot_proto::Submit,
    t: Time,
    records: &mut Vec<Record>,
) -> Response {
    // The same request again (its answer was lost): the job it made.
    if let Some(&job) = s.request.as_ref().and_then(|r| state.requests.get(r)) {
        if state.jobs.get(&job).is_some_and(|j| j.record.spec.user == caller.user) {
            let queue = state.jobs.get(&job).and_then(|j| j.record.spec.queue.clone()).unwrap_or_default();
            return Response::Submitted { job, queue };
        }
    }
    if !caller.known {
        return Response::Error(format!(
            "bsub: uid {} has no user account on this host (no password database entry): a job runs as its owner. \
             Job not submitted.",
            caller.uid
        ));
    }
    if let Some((signal, _)) = &s.warning {
        if crate::control::signal_named(signal).is_err() {
            return Response::Error(format!("-wa {signal}: unknown signal. Job not submitted."));
        }
    }
    let res_req = match allot_config::resreq::parse_all_of(&s.res_req) {
        Ok(r) => r,
        Err((_, e)) if s.res_req.len() == 1 => {
            return Response::Error(format!("{}. Job not submitted.", at_column("-R", &e)));
        }
        Err((i, e)) => {
            let option = format!("-R (the {} one)", ordinal(i + 1));
            return Response::Error(format!("{}. Job not submitted.", at_column(&option, &e)));
        }
    };
    let depends = match s.depends.as_deref().map(|w| resolve_dependency(state, &caller.user, w)).transpose() {
        Ok(d) => d,
        Err(e) => return Response::Error(format!("{e}. Job not submitted.")),
    };
    let max = state.engine.config().max_job_array_size;
    let job_name = match s.name.as_deref().map(|n| allot_config::array::parse_job_name(n, max)).transpose() {
        Ok(n) => n,
        Err(e) => return Response::Error(format!("{}. Job not submitted.", at_column("-J", &e))),
    };
    let (name, array) = match job_name {
        Some(n) => (Some(n.name), n.array),
        None => (None, None),
    };
    let hosts = match s.hosts.as_deref().map(allot_config::engine::parse_host_picks).transpose() {
        Ok(h) => h.unwrap_or_default(),
        Err(e) => return Response::Error(format!("{}. Job not submitted.", at_column("-m", &e))),
    };
    let mut spec = JobSpec {
        user: caller.user.clone(),
        queue: s.queue.clone(),
        slots: s.slots,
        max_slots: s.max_slots.filter(|&m| m != s.slots),
        res_req,
        hosts,
        run_limit: s.run_limit,
        run_estimate: s.estimated_run_time,
        group: s.group.clone(),
        depends,
        array: array.as_ref().map(|a| ArrayShape { size: a.indices.len() as u32, limit: a.limit }),
        priority: s.priority,
        term_time: s.term_time,
        cpu_limit: s.cpu_limit,
        exclusive: s.exclusive,
        app: s.app.clone(),
        qos: s.qos.clone(),
        user_factor: s.user_factor,
        project: s.project.clone(),
    };
    // A job that names no queue goes to the first default queue that
    // takes it, closed queues left out (automatic queue selection).
    if spec.queue.is_none() {
        let closed = &state.closed_queues;
        match state.engine.choose_queue(&spec, &|q| closed.contains(q)) {
            Ok(q) => spec.queue = Some(q.to_string()),
            Err(e) => {
                let only = state.engine.default_queue().filter(|q| closed.contains(*q));
                return match only {
                    Some(q) => Response::Error(format!("Queue <{q}> is closed. Job not submitted.")),
                    None => Response::Error(format!("{e}. Job not submitted.")),
                };
            }
        }
    }
    if let Some(q) = spec.queue.as_ref().filter(|q| state.closed_queues.contains(*q)) {
        return Response::Error(format!("Queue <{q}> is closed. Job not submitted."));
    }
    // Through `apply`, as a restart replays it: what is refused here is
    // never logged.
    let job = state.engine.next_job_id().0;
    let record = Record::Submitted {
        job,
        record: Box::new(JobRecord {
            // Without -J, the command; a script's first line.
            name: name.unwrap_or_else(|| {
                let first = s.command.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
                first.chars().take(60).collect()
            }),
            spec,
            command: s.command,
            cwd: s.cwd,
            output: s.output,
            error: s.error,
            env: s.env.into(),
            from_host: state.host.clone(),
            project: s.project,
            estimated_run_time: s.estimated_run_time,
            array: array.as_ref().map(|a| a.spec.clone()),
            extras: {
                let extras = JobExtras {
                    request: s.request,
                    mem_limit_kb: s.mem_limit_kb,
                    warning: s.warning,
                    rerunnable: s.rerunnable,
                };
                (extras != JobExtras::default()).then(|| Box::new(extras))
            },
        }),
    };
    if let Err(e) = state.apply(t, &record) {
        return Response::Error(format!("{}. Job not submitted.", e.reason()));
    }
    records.push(record);
    let queue = state.engine.job_queue(JobId(job)).unwrap_or_default().to_string();
    Response::Submitted { job, queue }
}

/// An option's value that failed to parse, where (columns from 1) and why.
pub(crate) fn at_column(option: &str, e: &allot_config::lsf::values::ValueError) -> String {
    format!("{option}: column {}: {}", e.offset + 1, e.message)
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// A `-w` expression with its jobs resolved: a name stands for every job
/// of the caller with that name (`*` matching any text), as LSF resolves
/// it; an array's id or name for every element of it, and `id[index]` or
/// `name[index]` for one element. A name that matches none is an error, as
/// is a job id the cluster never had.
fn resolve_dependency(state: &State, user: &str, text: &str) -> Result<Dependency<Vec<JobId>>, String> {
    let parsed = allot_config::deps::parse(text).map_err(|e| at_column("-w", &e))?;
    let by_ref = |r: JobRef| {
        let ids = state.resolve(r);
        if ids.is_empty() {
            Err(format!("-w: job <{r}> is not a job of this cluster"))
        } else {
            Ok(ids.into_iter().map(JobId).collect())
        }
    };
    parsed.try_map(&mut |target| match target {
        DepTarget::Id(id) => by_ref(JobRef::job(id)),
        DepTarget::Element(id, index) => by_ref(JobRef { id, index }),
        DepTarget::Name(name) => {
            let matches = |j: &crate::state::DaemonJob| {
                allot_config::deps::name_matches(&name, &j.record.name)
                    || (j.array.is_some() && allot_config::deps::name_matches(&name, &j.display_name()))
            };
            let ids: Vec<JobId> = state
                .jobs
                .iter()
                .filter(|(_, j)| j.record.spec.user == user && matches(j))
                .map(|(id, _)| JobId(*id))
                .collect();
            if ids.is_empty() { Err(format!("-w: no job of yours is named `{name}`")) } else { Ok(ids) }
        }
    })
}
