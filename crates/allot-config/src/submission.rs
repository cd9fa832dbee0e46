//! One path from what a user submitted to the engine's job: the strings
//! of `bsub`'s options that decide scheduling, parsed, checked and
//! resolved into a [`JobSpec`], with the queue chosen when none was named.
//! allotd (`bsub`) and the simulator (a workload's `bsub` options) both
//! come through [`resolve`]; only how `-w` names other jobs differs (the
//! daemon's job table, the workload's own jobs), and the caller says it.

use allot_engine::{ArrayShape, Dependency, Engine, JobId, JobSet, JobSpec};

use crate::array::JobArray;
use crate::deps::DepTarget;
use crate::lsf::values::ValueError;

/// What a user submitted, as typed (already split into options).
///
/// allotd records it in its event log with the job it became, so that a
/// replay (`allot sim --from`) can submit it again, as typed, under
/// another configuration. Fields left at their defaults are not written.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Submission {
    pub user: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// `-n min[,max]`: 0 when `-n` is not given (the queue's PROCLIMIT
    /// default applies).
    pub slots: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_slots: Option<u32>,
    /// `-R`, each occurrence as written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub res_req: Vec<String>,
    /// `-m`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<String>,
    /// `-W` and `-We`, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_limit: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_run_time: Option<u64>,
    /// `-G`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// `-J`, as written (`name[1-10]%2` for an array).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `-w`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depends: Option<String>,
    /// `-sp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// `-t`, resolved to seconds since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_time: Option<u64>,
    /// `-c`, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_limit: Option<u64>,
    /// `-x`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exclusive: bool,
    /// `-app`, `-qos`, `-uf`, `-P`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qos: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_factor: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// `-g`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_group: Option<String>,
    /// `-ar`: autoresizable; `-rnc`: its resize notification command.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub auto_resize: bool,
    /// `-H`: held at submission.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hold: bool,
    /// `-b`, resolved to seconds since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub begin_time: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resize_notify: Option<String>,
    /// LSB_DEFAULTQUEUE of the submitter's environment, split at blanks:
    /// with no `-q`, the candidates of automatic queue selection in place
    /// of DEFAULT_QUEUE (LSF: "the queues listed in the DEFAULT_QUEUE
    /// parameter in lsb.params or the LSB_DEFAULTQUEUE environment
    /// variable"; the variable, when set, is the user's choice).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub default_queues: Vec<String>,
}

/// A submission resolved: the engine's job, its name (`-J` without an
/// array's index list) and its array.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub spec: JobSpec,
    pub name: Option<String>,
    pub array: Option<JobArray>,
}

/// An option's value that failed to parse, where (columns from 1) and why.
pub fn at_column(option: &str, e: &ValueError) -> String {
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

/// Resolves a submission against `engine`: every option parsed (the error
/// names the option and the column), `-w`'s jobs found by `target` (the
/// caller's way of naming jobs; its error is said as it is), and, with no
/// queue named, the first default queue that takes the job, queues for
/// which `closed` holds left out (automatic queue selection). The error
/// is what `bsub` says before `Job not submitted.`. The engine's own
/// checks (PROCLIMIT, limits, users) are made when the job is submitted
/// to it.
pub fn resolve(
    s: &Submission,
    engine: &Engine,
    closed: &dyn Fn(&str) -> bool,
    target: &mut dyn FnMut(DepTarget) -> Result<Vec<JobId>, String>,
) -> Result<Resolved, String> {
    let res_req = match crate::resreq::parse_all_of(&s.res_req) {
        Ok(r) => r,
        Err((_, e)) if s.res_req.len() == 1 => return Err(at_column("-R", &e)),
        Err((i, e)) => return Err(at_column(&format!("-R (the {} one)", ordinal(i + 1)), &e)),
    };
    let depends: Option<Dependency<JobSet>> = match s.depends.as_deref() {
        Some(w) => Some(
            crate::deps::parse(w)
                .map_err(|e| at_column("-w", &e))?
                .try_map(&mut |t| target(t).map(JobSet::from_ids))?,
        ),
        None => None,
    };
    let max = engine.config().max_job_array_size;
    let job_name =
        s.name.as_deref().map(|n| crate::array::parse_job_name(n, max)).transpose().map_err(|e| at_column("-J", &e))?;
    let (name, array) = match job_name {
        Some(n) => (Some(n.name), n.array),
        None => (None, None),
    };
    let hosts = s
        .hosts
        .as_deref()
        .map(crate::engine::parse_host_picks)
        .transpose()
        .map_err(|e| at_column("-m", &e))?
        .unwrap_or_default();
    let mut spec = JobSpec {
        user: s.user.clone(),
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
        job_group: s.job_group.as_deref().map(|g| allot_engine::job_groups::normal(g).to_string()),
        auto_resize: s.auto_resize,
        hold: s.hold,
        begin_time: s.begin_time,
    };
    if spec.queue.is_none() {
        let chosen = match s.default_queues.is_empty() {
            true => engine.choose_queue(&spec, closed),
            false => engine.choose_queue_from(&spec, &s.default_queues, closed),
        };
        match chosen {
            Ok(q) => spec.queue = Some(q.to_string()),
            Err(e) => {
                return Err(match engine.default_queue().filter(|q| closed(q)) {
                    Some(q) => format!("Queue <{q}> is closed"),
                    None => e.to_string(),
                });
            }
        }
    }
    if let Some(q) = spec.queue.as_ref().filter(|q| closed(q)) {
        return Err(format!("Queue <{q}> is closed"));
    }
    Ok(Resolved { spec, name, array })
}
