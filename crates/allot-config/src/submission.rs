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

/// What a user submitted, as typed: `allot_proto`'s, which `bsub` sends
/// and allotd logs with the job it became.
pub use allot_proto::Submission;

/// What `bsub`'s options ask of the scheduler, for `user`: the one way
/// from the parser's options to a submission, for `bsub` (which sends it
/// to allotd in `allot_proto::Submit`) and a workload's lines (the
/// simulator). `-t` and `-b` name times of the submitter's clock and
/// zone, and LSB_DEFAULTQUEUE is the submitter's: their caller sets them. Options that are not the
/// scheduler's (output, mail, the command) stay with the caller.
pub fn from_bsub(user: String, opts: crate::bsub::BsubOptions) -> Submission {
    // Every option named, none left to `..`: one added to the parser
    // does not compile here until it is carried or said not to be the
    // scheduler's.
    let crate::bsub::BsubOptions {
        slots,
        queue,
        run_limit,
        group,
        project,
        job_group,
        name,
        res_req,
        hosts,
        exclusive,
        app,
        estimated_run_time,
        depends,
        priority,
        cpu_limit,
        qos,
        user_factor,
        auto_resize,
        hold,
        resize_notify,
        // Times of the submitter's clock: the caller resolves them.
        term_time: _,
        begin_time: _,
        // Not the scheduler's: how the job runs and what it says.
        output: _,
        error: _,
        host_mem_limit: _,
        cwd: _,
        wait: _,
        mem_limit: _,
        process_limits: _,
        mail_begin: _,
        mail_end: _,
        mail_user: _,
        pre_exec: _,
        post_exec: _,
        description: _,
        login_shell: _,
        env: _,
        warning_action: _,
        warning_time: _,
        rerunnable: _,
        interactive: _,
        input: _,
        other: _,
        command: _,
    } = opts;
    Submission {
        user,
        queue,
        slots: slots.map_or(0, |s| s.min),
        max_slots: slots.map(|s| s.max),
        res_req,
        hosts,
        run_limit,
        estimated_run_time,
        group,
        name,
        depends,
        priority,
        term_time: None,
        cpu_limit,
        exclusive,
        app,
        qos,
        user_factor,
        project,
        job_group,
        auto_resize,
        hold,
        begin_time: None,
        resize_notify,
        default_queues: Vec::new(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every scheduling option of a `bsub` line reaches the submission;
    /// the others (output, mail) do not, and the times of the submitter's
    /// clock are left to the caller.
    #[test]
    fn a_bsub_line_becomes_its_submission() {
        let line = "-q short -n 2,4 -R 'select[mem>1]' -R 'span[hosts=1]' -m hostA -W 30 -We 20 -G g \
                    -J 'a[1-3]' -w 'done(1)' -sp 5 -c 10 -x -app fluent -P proj -g /grp -ar -rnc /bin/true \
                    -qos high -uf 0.5 -H -o out -B cmd";
        let opts = crate::bsub::parse_line(line).expect("parses");
        let s = from_bsub("u".into(), opts);
        let want = Submission {
            user: "u".into(),
            queue: Some("short".into()),
            slots: 2,
            max_slots: Some(4),
            res_req: vec!["select[mem>1]".into(), "span[hosts=1]".into()],
            hosts: Some("hostA".into()),
            run_limit: Some(1800),
            estimated_run_time: Some(1200),
            group: Some("g".into()),
            name: Some("a[1-3]".into()),
            depends: Some("done(1)".into()),
            priority: Some(5),
            term_time: None,
            cpu_limit: Some(600),
            exclusive: true,
            app: Some("fluent".into()),
            qos: Some("high".into()),
            user_factor: Some(0.5),
            project: Some("proj".into()),
            job_group: Some("/grp".into()),
            auto_resize: true,
            hold: true,
            begin_time: None,
            resize_notify: Some("/bin/true".into()),
            default_queues: Vec::new(),
        };
        assert_eq!(s, want);
    }
}
