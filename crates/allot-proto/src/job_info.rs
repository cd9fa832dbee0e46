//! One job as the commands see it ([`JobInfo`]), and borrowed from
//! allotd's job table as it is written ([`JobInfoRef`]): both cross the
//! wire as one JSON array of fields, in one order.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::messages::{JobRef, JobStatus};

/// One job as the commands see it. On the wire it is a JSON array of its
/// fields in this order, not an object: `bjobs -u all` on a backlog of
/// 100,000 jobs moves a third of the bytes, and parses that much faster.
/// A host of a job's allocation as LSF shows it: `hostA`, or `2*hostA`
/// for two slots.
pub fn exec_host((h, n): &(String, u32)) -> Cow<'_, str> {
    if *n > 1 { Cow::Owned(format!("{n}*{h}")) } else { Cow::Borrowed(h.as_str()) }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(from = "JobInfoWire")]
pub struct JobInfo {
    /// The job's number (LSF's: one per submission); an array element's
    /// is its array's.
    pub id: u64,
    /// An array element's index; 0 for a job that is no array element.
    pub index: u32,
    /// An array element's array as `bjobs -A` shows it, `name[1-10]`,
    /// when the query asked for it.
    pub array: Option<String>,
    pub user: String,
    pub status: JobStatus,
    pub queue: String,
    pub from_host: String,
    /// `hostA*2 hostB` style: hosts with their slots.
    pub exec_hosts: Vec<(String, u32)>,
    pub name: String,
    /// Seconds since the epoch.
    pub submit_time: u64,
    pub start_time: Option<u64>,
    pub end_time: Option<u64>,
    pub exit_code: Option<i32>,
    pub pending_reason: Option<String>,
    pub slots: u32,
    pub command: String,
    /// Where the job runs.
    pub cwd: String,
    pub project: Option<String>,
    /// CPU seconds, once the job ended.
    pub cpu_time: Option<f64>,
    /// `-W`, seconds.
    pub run_limit: Option<u64>,
    /// `-We`, seconds.
    pub estimated_run_time: Option<u64>,
    /// The user-assigned job priority (`-sp`), when job priorities are
    /// enabled.
    pub priority: Option<u32>,
    /// A running job's resident memory as last measured, KB.
    pub mem_kb: Option<u64>,
    /// The most resident memory it was seen to use, KB.
    pub max_mem_kb: Option<u64>,
    /// What a pending job holds reserved, when the query asked for
    /// pending reasons.
    pub reserved: Option<ReservedInfo>,
    /// Why a finished job ended without running its command, when it
    /// could not start (`bjobs -l`).
    pub exit_reason: Option<String>,
    /// The directory a started job runs (or ran) in: its `-cwd` with its
    /// patterns (`%J`, `%U`, ...) expanded.
    pub exec_cwd: Option<String>,
    /// Why a finished job was killed, as LSF words it
    /// (`TERM_RUNLIMIT: job killed after reaching LSF run time limit`).
    pub term_reason: Option<String>,
    /// `-M`: its memory limit, KB.
    pub mem_limit_kb: Option<u64>,
    /// A running autoresizable job's pending resize request: how many
    /// more slots it asks.
    pub resize_request: Option<u32>,
    /// `-Jd`: its description.
    pub description: Option<String>,
    /// Its submission's options, when the query asked for them.
    pub detail: Option<Box<JobDetail>>,
}

/// What `bjobs -o` shows of a job beyond the job lists (asked with
/// [`crate::JobQuery::detail`]): its submission's options.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobDetail {
    /// `-app`, `-G`.
    pub app: Option<String>,
    pub user_group: Option<String>,
    /// `-i`, `-o`, `-e` as written.
    pub input: Option<String>,
    pub output: Option<String>,
    pub error: Option<String>,
    /// `-n min,max` (after PROCLIMIT's default).
    pub min_slots: u32,
    pub max_slots: u32,
    /// The resource requirement it is placed by (its `-R` with its queue's
    /// RES_REQ), as written.
    pub res_req: Option<String>,
    /// `-b` and `-t`, seconds since the epoch.
    pub begin_time: Option<u64>,
    pub term_time: Option<u64>,
    /// `-E`, `-Ep`, `-rnc`.
    pub pre_exec: Option<String>,
    pub post_exec: Option<String>,
    pub resize_notify: Option<String>,
    /// `-C -D -F -S -v`, KB.
    pub limits: crate::ProcessLimits,
    /// `-wa` and `-wt` (seconds).
    pub warning: Option<(String, u64)>,
    /// `-g`: the job group's path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_group: Option<String>,
    /// `-w`: the condition, each job by its number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependency: Option<String>,
    /// `-x`, and `-I`/`-Ip`/`-Is`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclusive: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interactive: bool,
}

impl JobDetail {
    /// With its submitter's text escaped ([`shown`]).
    fn shown(self) -> JobDetail {
        let opt = |t: Option<String>| t.map(shown);
        JobDetail {
            app: opt(self.app),
            user_group: opt(self.user_group),
            input: opt(self.input),
            output: opt(self.output),
            error: opt(self.error),
            res_req: opt(self.res_req),
            pre_exec: opt(self.pre_exec),
            post_exec: opt(self.post_exec),
            resize_notify: opt(self.resize_notify),
            job_group: opt(self.job_group),
            warning: self.warning.map(|(s, t)| (shown(s), t)),
            ..self
        }
    }
}

/// What a pending job holds reserved (`bjobs -l`): since when (seconds
/// since the epoch), slots per host, and its predicted start, if one can
/// be predicted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservedInfo {
    pub since: u64,
    pub hosts: Vec<(String, u32)>,
    pub predicted_start: Option<u64>,
}

/// [`JobInfo`]'s fields in order, as the wire carries them.
#[derive(Deserialize)]
struct JobInfoWire(
    u64,
    u32,
    Option<String>,
    String,
    JobStatus,
    String,
    String,
    Vec<(String, u32)>,
    String,
    u64,
    Option<u64>,
    Option<u64>,
    Option<i32>,
    Option<String>,
    u32,
    String,
    String,
    Option<String>,
    Option<f64>,
    Option<u64>,
    Option<u64>,
    Option<u32>,
    Option<u64>,
    Option<u64>,
    Option<ReservedInfo>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<u64>,
    #[serde(default)] Option<u32>,
    #[serde(default)] Option<String>,
    #[serde(default)] Option<Box<JobDetail>>,
);

/// What came from a submitter, shown with its control characters
/// escaped ([`crate::text`]).
fn shown(text: String) -> String {
    match crate::text::escaped(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

/// A job as a command receives it, to show: whatever its submitter wrote
/// (its name, command, directories, project, and the reasons that quote
/// them) with its control characters escaped, so that no job can write
/// escape sequences or forge lines on the terminal of whoever lists it
/// (`-json` too: a list shows the same text in every form).
impl From<JobInfoWire> for JobInfo {
    fn from(w: JobInfoWire) -> JobInfo {
        let opt = |t: Option<String>| t.map(shown);
        JobInfo {
            id: w.0,
            index: w.1,
            array: opt(w.2),
            user: shown(w.3),
            status: w.4,
            queue: w.5,
            from_host: shown(w.6),
            exec_hosts: w.7,
            name: shown(w.8),
            submit_time: w.9,
            start_time: w.10,
            end_time: w.11,
            exit_code: w.12,
            pending_reason: opt(w.13),
            slots: w.14,
            command: shown(w.15),
            cwd: shown(w.16),
            project: opt(w.17),
            cpu_time: w.18,
            run_limit: w.19,
            estimated_run_time: w.20,
            priority: w.21,
            mem_kb: w.22,
            max_mem_kb: w.23,
            reserved: w.24,
            exit_reason: opt(w.25),
            exec_cwd: opt(w.26),
            term_reason: opt(w.27),
            mem_limit_kb: w.28,
            resize_request: w.29,
            description: opt(w.30),
            detail: w.31.map(|d| Box::new(d.shown())),
        }
    }
}

impl Serialize for JobInfo {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.borrowed().serialize(s)
    }
}

/// A [`JobInfo`] borrowed from whatever holds the job, serialized exactly
/// as the `JobInfo` it stands for: allotd writes a long job list straight
/// from its job table, with no string copied out of it first.
#[derive(Clone, Debug, PartialEq)]
pub struct JobInfoRef<'a> {
    pub id: u64,
    pub index: u32,
    pub array: Option<Cow<'a, str>>,
    pub user: &'a str,
    pub status: JobStatus,
    pub queue: &'a str,
    pub from_host: &'a str,
    pub exec_hosts: &'a [(String, u32)],
    pub name: Cow<'a, str>,
    pub submit_time: u64,
    pub start_time: Option<u64>,
    pub end_time: Option<u64>,
    pub exit_code: Option<i32>,
    pub pending_reason: Option<Cow<'a, str>>,
    pub slots: u32,
    pub command: &'a str,
    pub cwd: &'a str,
    pub project: Option<&'a str>,
    pub cpu_time: Option<f64>,
    pub run_limit: Option<u64>,
    pub estimated_run_time: Option<u64>,
    pub priority: Option<u32>,
    pub mem_kb: Option<u64>,
    pub max_mem_kb: Option<u64>,
    pub reserved: Option<Cow<'a, ReservedInfo>>,
    pub exit_reason: Option<&'a str>,
    pub exec_cwd: Option<Cow<'a, str>>,
    pub term_reason: Option<&'a str>,
    pub mem_limit_kb: Option<u64>,
    pub resize_request: Option<u32>,
    pub description: Option<&'a str>,
    pub detail: Option<Cow<'a, JobDetail>>,
}

impl JobInfoRef<'_> {
    pub fn to_owned(&self) -> JobInfo {
        JobInfo {
            id: self.id,
            index: self.index,
            array: self.array.as_deref().map(str::to_string),
            user: self.user.to_string(),
            status: self.status,
            queue: self.queue.to_string(),
            from_host: self.from_host.to_string(),
            exec_hosts: self.exec_hosts.to_vec(),
            name: self.name.to_string(),
            submit_time: self.submit_time,
            start_time: self.start_time,
            end_time: self.end_time,
            exit_code: self.exit_code,
            pending_reason: self.pending_reason.as_deref().map(str::to_string),
            slots: self.slots,
            command: self.command.to_string(),
            cwd: self.cwd.to_string(),
            project: self.project.map(str::to_string),
            cpu_time: self.cpu_time,
            run_limit: self.run_limit,
            estimated_run_time: self.estimated_run_time,
            priority: self.priority,
            mem_kb: self.mem_kb,
            max_mem_kb: self.max_mem_kb,
            reserved: self.reserved.as_deref().cloned(),
            exit_reason: self.exit_reason.map(str::to_string),
            exec_cwd: self.exec_cwd.as_deref().map(str::to_string),
            term_reason: self.term_reason.map(str::to_string),
            mem_limit_kb: self.mem_limit_kb,
            resize_request: self.resize_request,
            description: self.description.map(str::to_string),
            detail: self.detail.as_deref().map(|d| Box::new(d.clone())),
        }
    }
}

impl Serialize for JobInfoRef<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut t = s.serialize_tuple(32)?;
        t.serialize_element(&self.id)?;
        t.serialize_element(&self.index)?;
        t.serialize_element(&self.array)?;
        t.serialize_element(self.user)?;
        t.serialize_element(&self.status)?;
        t.serialize_element(self.queue)?;
        t.serialize_element(self.from_host)?;
        t.serialize_element(self.exec_hosts)?;
        t.serialize_element(&self.name)?;
        t.serialize_element(&self.submit_time)?;
        t.serialize_element(&self.start_time)?;
        t.serialize_element(&self.end_time)?;
        t.serialize_element(&self.exit_code)?;
        t.serialize_element(&self.pending_reason)?;
        t.serialize_element(&self.slots)?;
        t.serialize_element(self.command)?;
        t.serialize_element(self.cwd)?;
        t.serialize_element(&self.project)?;
        t.serialize_element(&self.cpu_time)?;
        t.serialize_element(&self.run_limit)?;
        t.serialize_element(&self.estimated_run_time)?;
        t.serialize_element(&self.priority)?;
        t.serialize_element(&self.mem_kb)?;
        t.serialize_element(&self.max_mem_kb)?;
        t.serialize_element(&self.reserved)?;
        t.serialize_element(&self.exit_reason)?;
        t.serialize_element(&self.exec_cwd)?;
        t.serialize_element(&self.term_reason)?;
        t.serialize_element(&self.mem_limit_kb)?;
        t.serialize_element(&self.resize_request)?;
        t.serialize_element(&self.description)?;
        t.serialize_element(&self.detail)?;
        t.end()
    }
}

impl JobInfo {
    /// The job borrowed, as it is serialized.
    pub fn borrowed(&self) -> JobInfoRef<'_> {
        JobInfoRef {
            id: self.id,
            index: self.index,
            array: self.array.as_deref().map(Cow::Borrowed),
            user: &self.user,
            status: self.status,
            queue: &self.queue,
            from_host: &self.from_host,
            exec_hosts: &self.exec_hosts,
            name: Cow::Borrowed(&self.name),
            submit_time: self.submit_time,
            start_time: self.start_time,
            end_time: self.end_time,
            exit_code: self.exit_code,
            pending_reason: self.pending_reason.as_deref().map(Cow::Borrowed),
            slots: self.slots,
            command: &self.command,
            cwd: &self.cwd,
            project: self.project.as_deref(),
            cpu_time: self.cpu_time,
            run_limit: self.run_limit,
            estimated_run_time: self.estimated_run_time,
            priority: self.priority,
            mem_kb: self.mem_kb,
            max_mem_kb: self.max_mem_kb,
            reserved: self.reserved.as_ref().map(Cow::Borrowed),
            exit_reason: self.exit_reason.as_deref(),
            exec_cwd: self.exec_cwd.as_deref().map(Cow::Borrowed),
            term_reason: self.term_reason.as_deref(),
            mem_limit_kb: self.mem_limit_kb,
            resize_request: self.resize_request,
            description: self.description.as_deref(),
            detail: self.detail.as_deref().map(Cow::Borrowed),
        }
    }

    /// The job as the commands name it: `123`, or `123[4]`.
    pub fn job_ref(&self) -> JobRef {
        JobRef { id: self.id, index: self.index }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_travels_as_an_array_and_comes_back_whole() {
        let job = JobInfo {
            id: 7,
            index: 3,
            array: Some("sims[1-10]".into()),
            user: "alice".into(),
            status: JobStatus::Exit,
            queue: "normal".into(),
            from_host: "hostA".into(),
            exec_hosts: vec![("hostA".into(), 2)],
            name: "sim".into(),
            submit_time: 10,
            start_time: Some(11),
            end_time: Some(12),
            exit_code: Some(3),
            pending_reason: None,
            slots: 2,
            command: "./sim".into(),
            cwd: "/tmp".into(),
            project: Some("climate".into()),
            cpu_time: Some(1.5),
            run_limit: Some(60),
            estimated_run_time: Some(30),
            priority: Some(7),
            mem_kb: Some(2048),
            max_mem_kb: Some(4096),
            reserved: Some(ReservedInfo { since: 9, hosts: vec![("hostB".into(), 3)], predicted_start: Some(20) }),
            exit_reason: Some("cannot open output file /x: Permission denied".into()),
            exec_cwd: Some("/scratch/7".into()),
            term_reason: Some("TERM_RUNLIMIT: job killed after reaching LSF run time limit".into()),
            mem_limit_kb: Some(976_563),
            resize_request: Some(2),
            description: Some("a sweep".into()),
            detail: Some(Box::new(JobDetail {
                app: Some("fluent".into()),
                output: Some("out.%J".into()),
                min_slots: 1,
                max_slots: 2,
                warning: Some(("USR1".into(), 300)),
                ..JobDetail::default()
            })),
        };
        let text = serde_json::to_string(&job).expect("json");
        assert!(text.starts_with("[7,3,\"sims[1-10]\",\"alice\",\"Exit\",\"normal\""), "{text}");
        assert_eq!(serde_json::from_str::<JobInfo>(&text).expect("parse"), job);
        assert!(serde_json::from_str::<JobInfo>("[7,\"alice\"]").is_err(), "too short");
        let borrowed = job.borrowed();
        assert_eq!(borrowed.to_owned(), job, "a borrowed job owns every field again");
        let owned_names = JobInfoRef { name: Cow::Owned("sim".into()), ..borrowed };
        assert_eq!(serde_json::to_string(&owned_names).expect("json"), text, "borrowed or not, the same bytes");
    }
}

/// One job array's elements by state, as `bjobs -A` shows them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArrayCount {
    /// Its job number.
    pub id: u64,
    /// `name[indices]` as submitted.
    pub spec: String,
    pub user: String,
    /// PEND DONE RUN EXIT SSUSP USUSP PSUSP.
    pub counts: [u32; 7],
}

impl ArrayCount {
    /// The column of [`ArrayCount::counts`] an element in `status` counts in.
    pub fn column(status: JobStatus) -> usize {
        match status {
            JobStatus::Pend => 0,
            JobStatus::Done => 1,
            JobStatus::Run | JobStatus::Unkwn => 2,
            JobStatus::Exit => 3,
            JobStatus::Ssusp => 4,
            JobStatus::Ususp => 5,
            JobStatus::Psusp => 6,
        }
    }
}
