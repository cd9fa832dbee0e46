//! `bsub`: a submission's strings parsed and resolved into the engine's
//! job, which joins the cluster through [`State::apply`] as every change
//! does, live and on replay.

use allot_config::deps::DepTarget;
use allot_config::submission::{Resolved, Submission};
use allot_engine::{JobId, Time};
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
    if let Some(&job) = s.request.as_ref().and_then(|r| state.book.requests.get(r)) {
        if let Some(j) = state.book.jobs.get(&job).filter(|j| j.record.spec.user == caller.user) {
            let queue = j.record.spec.queue.clone().unwrap_or_default();
            return Response::Submitted { job: j.number, queue, warning: None };
        }
    }
    if let Err(why) = within_size(&s) {
        return Response::Error(format!("bsub: {why}. Job not submitted."));
    }
    if !caller.known {
        return Response::Error(format!(
            "bsub: uid {} has no user account on this host (no password database entry): a job runs as its owner. \
             Job not submitted.",
            caller.uid
        ));
    }
    // Checked here too: a client other than bsub may send anything.
    if let Some(to) =
        s.mail.as_ref().and_then(|m| m.to.as_deref()).filter(|to| !allot_config::bsub::mail_user_valid(to))
    {
        return Response::Error(format!(
            "{}. Job not submitted.",
            allot_config::bsub::BsubError::BadMailUser(to.to_string())
        ));
    }
    if let Some((signal, _)) = &s.warning {
        if crate::control::signal_named(signal).is_err() {
            return Response::Error(format!("-wa {signal}: unknown signal. Job not submitted."));
        }
    }
    // The owner is whoever is connected, whatever the request says.
    let submission = Submission { user: caller.user.clone(), ..s.submission };
    let closed = |q: &str| state.book.closed_queues.contains(q);
    let (mut terms, mut named) = (0usize, 0usize);
    let resolved = allot_config::submission::resolve(&submission, &state.engine, &closed, &mut |target| {
        terms += 1;
        if terms > MAX_DEP_TERMS {
            return Err(format!("-w: more than {MAX_DEP_TERMS} jobs or names in one expression"));
        }
        let ids = resolve_target(state, &caller.user, target, MAX_DEP_JOBS + 1 - named)?;
        named += ids.len();
        if named > MAX_DEP_JOBS {
            return Err(format!(
                "-w: the expression names more than {MAX_DEP_JOBS} jobs: name fewer (an array by its number)"
            ));
        }
        Ok(ids)
    });
    let Resolved { spec, name, array } = match resolved {
        Ok(r) => r,
        Err(e) => return Response::Error(format!("{e}. Job not submitted.")),
    };
    // Through `apply`, as a restart replays it: what is refused here is
    // never logged.
    let (job, number) = (state.engine.next_job_id(), state.book.numbers.next());
    let warning = mail_warning(state, s.mail.as_ref());
    // Kept with the job's record as well as in the submission as typed.
    let project = submission.project.clone();
    let (estimated_run_time, resize_notify) = (submission.estimated_run_time, submission.resize_notify.clone());
    let record = Record::Submitted {
        job,
        number: (number != job.0).then_some(number),
        typed: Some(Box::new(submission)),
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
            from_host: caller.from.clone().unwrap_or_else(|| state.host.clone()),
            project,
            estimated_run_time,
            array: array.as_ref().map(|a| a.spec.clone()),
            extras: {
                let extras = JobExtras {
                    request: s.request,
                    mem_limit_kb: s.mem_limit_kb,
                    host_mem_limit: s.host_mem_limit,
                    warning: s.warning,
                    rerunnable: s.rerunnable,
                    resize_notify,
                    limits: s.limits,
                    mail: s.mail,
                    pre_exec: s.pre_exec,
                    post_exec: s.post_exec,
                    description: s.description,
                    login_shell: s.login_shell,
                    interactive: s.interactive,
                    input: s.input,
                    umask: s.umask.map(|m| m & 0o777).filter(|&m| m != allot_exec::inherit::DEFAULT_UMASK),
                };
                (extras != JobExtras::default()).then(|| Box::new(extras))
            },
        }),
    };
    if let Err(e) = state.apply(t, &record) {
        if e.retry_later() {
            let retry_after = state.engine.sub_try_interval();
            return Response::Later { why: e.reason().to_string(), retry_after };
        }
        return Response::Error(format!("{}. Job not submitted.", e.reason()));
    }
    records.push(record);
    let queue = state.engine.job_queue(job).unwrap_or_default().to_string();
    Response::Submitted { job: number, queue, warning }
}

/// A job that asks for mail on a host with no mail program: accepted,
/// with the submitter told that its mail will not be sent.
/// The most job ids and names one `-w` expression may hold, and the most
/// jobs its names may match in all: each name is looked up among its
/// user's jobs, and every job it matches is kept with the dependency, so
/// both bound what one submission may cost allotd. LSF bounds a
/// dependency expression's length likewise; these figures are ours, far
/// above what a workflow writes (a step waits on a few jobs, or an array
/// by its number, which counts as one).
pub(crate) const MAX_DEP_TERMS: usize = 64;
pub(crate) const MAX_DEP_JOBS: usize = 10_000;

/// The most of a job's environment allotd takes: a process cannot be
/// started with more than 2 MiB of arguments and environment together
/// (Linux's ARG_MAX), so no job could use more.
pub(crate) const MAX_ENV: usize = 1 << 20;
/// The most a whole submission may take (its command or script, its
/// environment, its dependency expression...): what the log keeps of each
/// job, so that no user fills the state's disk with a few submissions.
pub(crate) const MAX_SUBMISSION: usize = 2 << 20;

/// Whether a submission is within [`MAX_ENV`] and [`MAX_SUBMISSION`].
fn within_size(s: &allot_proto::Submit) -> Result<(), String> {
    let env: usize = s.env.iter().map(|(k, v)| k.len() + v.len() + 2).sum();
    if env > MAX_ENV {
        return Err(format!(
            "the job's environment is {:.1} MiB; at most {} MiB is taken (no process starts with more than 2 MiB \
             of arguments and environment)",
            env as f64 / f64::from(1 << 20),
            MAX_ENV >> 20
        ));
    }
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut size = Count(0);
    let _ = serde_json::to_writer(&mut size, s);
    if size.0 > MAX_SUBMISSION {
        return Err(format!(
            "the submission is {:.1} MiB (its command or script, environment and options); at most {} MiB is taken",
            size.0 as f64 / f64::from(1 << 20),
            MAX_SUBMISSION >> 20
        ));
    }
    Ok(())
}

fn mail_warning(state: &State, mail: Option<&allot_proto::MailAsked>) -> Option<String> {
    let asked = mail.filter(|m| m.begin || m.end)?;
    let option = if asked.begin { "-B" } else { "-N" };
    state.mail_prog.is_none().then(|| {
        format!(
            "{option}: this cluster has no mail program (LSB_MAILPROG in lsf.conf, or sendmail): the job runs, and \
             its mail is not sent"
        )
    })
}

/// The elements not made yet ([`crate::array_tail`]) a `-w` name
/// stands for, while there is room: every one of an array by its name,
/// one by `name[index]`.
fn unmade_named(state: &State, user: &str, name: &str, room: usize, ids: &mut Vec<JobId>) {
    let element = name
        .strip_suffix(']')
        .and_then(|n| n.rsplit_once('['))
        .and_then(|(base, i)| Some((base, i.parse::<u32>().ok()?)));
    for (first, t) in state.book.tails.iter().filter(|(_, t)| t.template.record.spec.user == user) {
        let left = room.saturating_sub(ids.len());
        if allot_config::deps::name_matches(name, &t.template.record.name) {
            ids.extend(t.unmade.iter().take(left));
        } else if let Some((_, index)) =
            element.filter(|(base, _)| allot_config::deps::name_matches(base, &t.template.record.name))
        {
            let k = state.book.arrays.get(first).and_then(|ix| ix.binary_search(&index).ok());
            ids.extend(k.map(|k| first.offset(k as u64)).filter(|&id| t.unmade.contains(id)).into_iter().take(left));
        }
    }
}

/// A `-w` target's jobs: a name stands for every job of the caller with
/// that name (`*` matching any text), as LSF resolves it; an array's id or
/// name for every element of it, and `id[index]` or `name[index]` for one
/// element. A name that matches none is an error, as is a job id the
/// cluster never had. A name's matches are looked for until there are
/// `room` of them (past the bound, the caller refuses the expression).
fn resolve_target(state: &State, user: &str, target: DepTarget, room: usize) -> Result<Vec<JobId>, String> {
    let by_ref = |r: JobRef| {
        let ids = state.book.resolve(r);
        if ids.is_empty() { Err(format!("-w: job <{r}> is not a job of this cluster")) } else { Ok(ids) }
    };
    match target {
        DepTarget::Id(id) => by_ref(JobRef::job(id)),
        DepTarget::Element(id, index) => by_ref(JobRef { id, index }),
        DepTarget::Name(name) => {
            // Among the user's jobs under the pattern's prefix (`names`),
            // in id order as the job table lists them.
            let matches = |j: &crate::state::BookJob| {
                allot_config::deps::name_matches(&name, &j.record.name)
                    || (j.array.is_some() && allot_config::deps::name_matches(&name, &j.display_name()))
            };
            let mut ids: Vec<JobId> = state
                .book
                .names
                .candidates(user, &name)
                .map(|(_, id)| id)
                .filter(|id| state.book.jobs.get(id).is_some_and(|j| matches(j)))
                .take(room)
                .collect();
            unmade_named(state, user, &name, room, &mut ids);
            ids.sort_unstable();
            if ids.is_empty() { Err(format!("-w: no job of yours is named `{name}`")) } else { Ok(ids) }
        }
    }
}

#[cfg(test)]
mod tests {
    use allot_engine::{JobId, Time};
    use allot_proto::{Request, Submit};
    use allot_store::Record;
    use tokio::sync::mpsc;

    use crate::replay_check::{Twin, caller, one_host, open};
    use crate::serve::Input;

    /// The owner of a job is whoever is connected: the submission's own
    /// `user` (which a client other than bsub may fill in) is not read,
    /// in the job table, in the engine, or in the log's submission.
    #[test]
    fn a_submission_names_no_owner_but_the_callers() {
        let (root, config) = one_host("submit-owner", 1);
        let (wake, _heard) = mpsc::channel::<Input>(16);
        let t = Time(1_000_000);
        let dir = root.join("state");
        std::fs::create_dir_all(&dir).expect("state dir");
        let mut twin = Twin { state: open(&dir, &config, t, &wake), dir };
        let s = Submit {
            submission: allot_proto::Submission { user: "somebody-else".into(), slots: 1, ..Default::default() },
            command: "true".into(),
            cwd: "/".into(),
            ..Submit::default()
        };
        let said = twin.request(Request::Submit(Box::new(s)), t);
        assert!(said.contains("Submitted"), "{said}");
        let me = caller().user;
        let job = &twin.state.book.jobs[&JobId(1)];
        assert_eq!(job.record.spec.user, me);
        let typed = twin.log().into_iter().find_map(|(_, r)| match r {
            Record::Submitted { typed, .. } => typed,
            _ => None,
        });
        assert_eq!(typed.expect("the submission as typed").user, me);
        let _ = std::fs::remove_dir_all(&root);
    }
}
