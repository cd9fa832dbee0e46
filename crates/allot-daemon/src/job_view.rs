//! What the commands see of a job: its output files, and the views the
//! job lists and long forms are written from.

use std::borrow::Cow;

use allot_engine::{JobId, Time};
use allot_exec::OutputFile;
use allot_proto::{JobInfo, JobInfoRef, JobQuery, JobStatus, ReservedInfo};

use crate::daemon_job::JobPaths;
use crate::state::{BookJob, State};

impl State {
    /// Where a job's standard output and error go, and whether each is
    /// overwritten: `-o`/`-oo` and `-e`/`-eo` (relative to its working
    /// directory, `%J` and `%I` expanded), else files of the state
    /// directory. With `-o` and no `-e` both go to the output file, as
    /// in LSF.
    pub fn output_files(&self, job: JobId, j: &BookJob) -> (OutputFile, OutputFile) {
        let r = &j.record;
        let file = |given: &Option<(String, bool)>, ext: &str| match given {
            Some((name, overwrite)) => OutputFile { path: j.named_file(name), overwrite: *overwrite, named: true },
            None => OutputFile {
                path: allot_exec::default_output(&self.state_dir, job.0, ext),
                overwrite: true,
                named: false,
            },
        };
        let out = file(&r.output, "out");
        let err = if r.error.is_none() && r.output.is_some() { out.clone() } else { file(&r.error, "err") };
        (out, err)
    }

    /// What the commands show of a job, as `q` asks: its pending reason
    /// only with `reasons`, its array's spec only with `arrays`, and none of
    /// what the default list does not show with `brief`.
    pub fn info(&self, id: JobId, j: &BookJob, now: Time, q: &JobQuery) -> JobInfo {
        self.info_ref(id, j, now, q).to_owned()
    }

    /// The slots a job holds (running or ended: its allocation) or asks
    /// for (pending: its `-n` minimum, after PROCLIMIT).
    pub fn slots_of(&self, id: JobId, j: &BookJob) -> u32 {
        if !j.alloc.is_empty() && !matches!(j.status, JobStatus::Pend | JobStatus::Psusp) {
            return j.alloc.iter().map(|a| a.1).sum();
        }
        self.engine.job_slots(id).map_or(j.record.spec.slots.max(1), |s| s.0)
    }

    /// [`State::info`] borrowed from the job table: what a long job list
    /// is written from.
    pub fn info_ref<'a>(&'a self, id: JobId, j: &'a BookJob, now: Time, q: &JobQuery) -> JobInfoRef<'a> {
        let (reasons, arrays, brief) = (q.reasons, q.arrays, q.brief);
        let pending = reasons && matches!(j.status, JobStatus::Pend | JobStatus::Psusp);
        let pending_reason = match j.status {
            // A preempted job's reason is why it is suspended.
            JobStatus::Ssusp if reasons => self
                .engine
                .preempted_by(id)
                .map(|by| Cow::Owned(format!("Preempted by job <{}>", self.book.job_ref(by)))),
            // Held by its pre-execution command's failures, not its user.
            JobStatus::Psusp if reasons && j.pre_exec_failures >= self.max_preexec_retry => {
                j.exit_reason.as_deref().map(|why| {
                    Cow::Owned(format!(
                        "Held after {} failed tries (MAX_PREEXEC_RETRY): {why}; bresume lets it try again",
                        j.pre_exec_failures
                    ))
                })
            }
            _ => pending.then(|| self.engine.pending_reason(id, now).map(|r| Cow::Owned(r.to_string()))).flatten(),
        };
        let reserved = pending.then(|| self.engine.reservation(id)).flatten().map(|(since, hosts)| {
            Cow::Owned(ReservedInfo {
                since: since.0,
                hosts: hosts.iter().map(|&(h, n)| (self.engine.host_name(h).to_string(), n.0)).collect(),
                predicted_start: self.engine.predicted_start(id, now).map(|t| t.0),
            })
        });
        let shown = j.job_ref();
        let r = &j.record;
        JobInfoRef {
            id: shown.id,
            index: shown.index,
            array: (arrays && j.array.is_some())
                .then(|| Cow::Owned(format!("{}[{}]", r.name, r.array.as_deref().unwrap_or_default()))),
            user: &r.spec.user,
            status: match j.status {
                JobStatus::Run | JobStatus::Ususp if self.book.unheard(&j.alloc) => JobStatus::Unkwn,
                status => status,
            },
            queue: self.engine.job_queue(id).or(r.spec.queue.as_deref()).unwrap_or_default(),
            from_host: &r.from_host,
            exec_hosts: &j.alloc,
            name: j.display_name(),
            submit_time: j.submit_time,
            start_time: j.start_time,
            end_time: j.end_time,
            exit_code: j.exit,
            pending_reason,
            slots: self.slots_of(id, j),
            command: if brief { "" } else { &r.command },
            cwd: if brief { "" } else { &r.cwd },
            project: if brief { None } else { r.project.as_deref() },
            cpu_time: j.cpu_time.or(j.usage.map(|u| u.0)),
            // A running job shows the limit in force: its queue's when it
            // gave none, or what an interruptible backfill start cut it to.
            run_limit: match j.status {
                JobStatus::Run | JobStatus::Ususp | JobStatus::Ssusp => self.engine.job_run_limit(id),
                _ => r.spec.run_limit,
            },
            estimated_run_time: r.estimated_run_time,
            priority: self.engine.job_priority(id).filter(|_| self.engine.config().max_user_priority.is_some()),
            mem_kb: j.usage.map(|u| u.1),
            max_mem_kb: (j.max_mem_kb > 0).then_some(j.max_mem_kb),
            reserved,
            exit_reason: j.exit_reason.as_deref(),
            term_reason: j.killed.filter(|_| !j.status.unfinished()).map(allot_store::Term::describe),
            mem_limit_kb: r.extras().mem_limit_kb,
            resize_request: self.engine.resize_request(id),
            description: if brief { None } else { r.extras().description.as_deref() },
            exec_cwd: (!brief && j.start_time.is_some()).then(|| Cow::Owned(j.cwd().display().to_string())),
            detail: q.detail.then(|| Cow::Owned(self.detail_of(id, j))),
        }
    }

    /// A job's submission options, as `bjobs -o` shows them.
    fn detail_of(&self, id: JobId, j: &BookJob) -> allot_proto::JobDetail {
        let (r, x) = (&j.record, j.record.extras());
        let (min, max) = self.engine.job_slots(id).unwrap_or((r.spec.slots.max(1), r.spec.max_slots.unwrap_or(1)));
        allot_proto::JobDetail {
            app: r.spec.app.clone(),
            user_group: r.spec.group.clone(),
            input: x.input.clone(),
            output: r.output.as_ref().map(|o| o.0.clone()),
            error: r.error.as_ref().map(|e| e.0.clone()),
            min_slots: min,
            max_slots: max.max(min),
            res_req: self.engine.job_res_text(id).or_else(|| r.spec.res_req.as_ref().map(|q| q.text.clone())),
            begin_time: r.spec.begin_time,
            term_time: r.spec.term_time,
            pre_exec: x.pre_exec.clone(),
            post_exec: x.post_exec.clone(),
            resize_notify: x.resize_notify.clone(),
            limits: x.limits,
            warning: x.warning.clone(),
            job_group: r.spec.job_group.clone(),
            dependency: r.spec.depends.as_ref().map(|d| crate::dep_text::text(self, d)),
            exclusive: r.spec.exclusive,
            interactive: x.interactive.is_some(),
        }
    }
}
