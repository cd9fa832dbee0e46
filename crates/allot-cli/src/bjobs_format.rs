//! `bjobs -o` and `-json`: the fields LSF's `bjobs -o` documents, their
//! headers and widths, and each job's value of each.

use std::fmt::Write as _;

use allot_proto::JobInfo;
use anyhow::{anyhow, bail};

use crate::job_long::{mbytes, minutes};
use crate::lsf::{cut, exec_hosts, lsf_time};

/// `-o "field[:width] ... [delimiter='x']"`.
#[derive(Debug, PartialEq)]
pub(crate) struct Format {
    /// The field, its column header, its width.
    pub(crate) fields: Vec<(Field, &'static str, Option<usize>)>,
    pub(crate) delimiter: Option<String>,
}

/// The `-o` fields, with LSF's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    JobId,
    JobIndex,
    Stat,
    User,
    Queue,
    JobName,
    Command,
    FromHost,
    ExecHost,
    SubmitTime,
    StartTime,
    FinishTime,
    ExitCode,
    Slots,
    PendReason,
    CpuUsed,
    Project,
    Cwd,
    RunTimeLimit,
    Mem,
    MaxMem,
    Description,
    ExitReason,
    MemLimit,
    FirstHost,
    NexecHost,
    JobPriority,
    EstimatedRunTime,
    ExecCwd,
    UserGroup,
    Application,
    JobGroup,
    ServiceClass,
    PreExecCommand,
    PostExecCommand,
    ResizeCommand,
    InputFile,
    OutputFile,
    ErrorFile,
    MinReqProc,
    MaxReqProc,
    NallocSlot,
    SpecifiedStartTime,
    SpecifiedTerminateTime,
    EstimatedStartTime,
    RunTime,
    PendTime,
    EffectiveResreq,
    CombinedResreq,
    FileLimit,
    CoreLimit,
    StackLimit,
    WarningAction,
    ActionWarningTime,
    TimeLeft,
    Complete,
    AllocSlot,
    Dependency,
    Exclusive,
    Interactive,
    /// A field allot does not keep ([`NOT_KEPT`]): `-`.
    Unkept,
}

impl Field {
    /// Whether its value is among a job's submission options
    /// (`JobQuery::detail`).
    pub(crate) fn detail(self) -> bool {
        use Field::*;
        matches!(
            self,
            UserGroup
                | Application
                | PreExecCommand
                | PostExecCommand
                | ResizeCommand
                | InputFile
                | OutputFile
                | ErrorFile
                | MinReqProc
                | MaxReqProc
                | SpecifiedStartTime
                | SpecifiedTerminateTime
                | EffectiveResreq
                | CombinedResreq
                | FileLimit
                | CoreLimit
                | StackLimit
                | WarningAction
                | ActionWarningTime
                | JobGroup
                | Dependency
                | Exclusive
                | Interactive
        )
    }
}

/// Field names as `-o` takes them, and their column headers.
const FIELDS: &[(&str, Field, &str)] = &[
    ("jobid", Field::JobId, "JOBID"),
    ("jobindex", Field::JobIndex, "JOBINDEX"),
    ("stat", Field::Stat, "STAT"),
    ("user", Field::User, "USER"),
    ("queue", Field::Queue, "QUEUE"),
    ("job_name", Field::JobName, "JOB_NAME"),
    ("name", Field::JobName, "JOB_NAME"),
    ("command", Field::Command, "COMMAND"),
    ("from_host", Field::FromHost, "FROM_HOST"),
    ("exec_host", Field::ExecHost, "EXEC_HOST"),
    ("submit_time", Field::SubmitTime, "SUBMIT_TIME"),
    ("start_time", Field::StartTime, "START_TIME"),
    ("finish_time", Field::FinishTime, "FINISH_TIME"),
    ("exit_code", Field::ExitCode, "EXIT_CODE"),
    ("slots", Field::Slots, "SLOTS"),
    ("nreq_slot", Field::Slots, "NREQ_SLOT"),
    ("pend_reason", Field::PendReason, "PEND_REASON"),
    ("cpu_used", Field::CpuUsed, "CPU_USED"),
    ("proj_name", Field::Project, "PROJ_NAME"),
    ("project", Field::Project, "PROJ_NAME"),
    ("exec_cwd", Field::ExecCwd, "EXEC_CWD"),
    ("job_description", Field::Description, "JOB_DESCRIPTION"),
    ("exit_reason", Field::ExitReason, "EXIT_REASON"),
    ("memlimit", Field::MemLimit, "MEMLIMIT"),
    ("first_host", Field::FirstHost, "FIRST_HOST"),
    ("nexec_host", Field::NexecHost, "NEXEC_HOST"),
    ("job_priority", Field::JobPriority, "JOB_PRIORITY"),
    ("estimated_run_time", Field::EstimatedRunTime, "ESTIMATED_RUN_TIME"),
    ("sub_cwd", Field::Cwd, "SUB_CWD"),
    ("runtimelimit", Field::RunTimeLimit, "RUNTIMELIMIT"),
    ("mem", Field::Mem, "MEM"),
    ("max_mem", Field::MaxMem, "MAX_MEM"),
    ("user_group", Field::UserGroup, "USER_GROUP"),
    ("ugroup", Field::UserGroup, "USER_GROUP"),
    ("application", Field::Application, "APPLICATION"),
    ("app", Field::Application, "APPLICATION"),
    ("job_group", Field::JobGroup, "JOB_GROUP"),
    ("jgroup", Field::JobGroup, "JOB_GROUP"),
    ("service_class", Field::ServiceClass, "SERVICE_CLASS"),
    ("sla", Field::ServiceClass, "SERVICE_CLASS"),
    ("pre_exec_command", Field::PreExecCommand, "PRE_EXEC_COMMAND"),
    ("pre_cmd", Field::PreExecCommand, "PRE_EXEC_COMMAND"),
    ("post_exec_command", Field::PostExecCommand, "POST_EXEC_COMMAND"),
    ("post_cmd", Field::PostExecCommand, "POST_EXEC_COMMAND"),
    ("resize_notification_command", Field::ResizeCommand, "RESIZE_NOTIFICATION_COMMAND"),
    ("resize_cmd", Field::ResizeCommand, "RESIZE_NOTIFICATION_COMMAND"),
    ("input_file", Field::InputFile, "INPUT_FILE"),
    ("output_file", Field::OutputFile, "OUTPUT_FILE"),
    ("error_file", Field::ErrorFile, "ERROR_FILE"),
    ("min_req_proc", Field::MinReqProc, "MIN_REQ_PROC"),
    ("max_req_proc", Field::MaxReqProc, "MAX_REQ_PROC"),
    ("nalloc_slot", Field::NallocSlot, "NALLOC_SLOT"),
    ("specified_start_time", Field::SpecifiedStartTime, "SPECIFIED_START_TIME"),
    ("sstart_time", Field::SpecifiedStartTime, "SPECIFIED_START_TIME"),
    ("specified_terminate_time", Field::SpecifiedTerminateTime, "SPECIFIED_TERMINATE_TIME"),
    ("sterminate_time", Field::SpecifiedTerminateTime, "SPECIFIED_TERMINATE_TIME"),
    ("estimated_start_time", Field::EstimatedStartTime, "ESTIMATED_START_TIME"),
    ("estart_time", Field::EstimatedStartTime, "ESTIMATED_START_TIME"),
    ("run_time", Field::RunTime, "RUN_TIME"),
    ("pend_time", Field::PendTime, "PEND_TIME"),
    ("effective_resreq", Field::EffectiveResreq, "EFFECTIVE_RESREQ"),
    ("eresreq", Field::EffectiveResreq, "EFFECTIVE_RESREQ"),
    ("combined_resreq", Field::CombinedResreq, "COMBINED_RESREQ"),
    ("cresreq", Field::CombinedResreq, "COMBINED_RESREQ"),
    ("filelimit", Field::FileLimit, "FILELIMIT"),
    ("corelimit", Field::CoreLimit, "CORELIMIT"),
    ("stacklimit", Field::StackLimit, "STACKLIMIT"),
    ("warning_action", Field::WarningAction, "WARNING_ACTION"),
    ("warn_act", Field::WarningAction, "WARNING_ACTION"),
    ("action_warning_time", Field::ActionWarningTime, "ACTION_WARNING_TIME"),
    ("warn_time", Field::ActionWarningTime, "ACTION_WARNING_TIME"),
    ("time_left", Field::TimeLeft, "TIME_LEFT"),
    ("%complete", Field::Complete, "%COMPLETE"),
    ("alloc_slot", Field::AllocSlot, "ALLOC_SLOT"),
    ("dependency", Field::Dependency, "DEPENDENCY"),
    ("exclusive", Field::Exclusive, "EXCLUSIVE"),
    ("interactive", Field::Interactive, "INTERACTIVE"),
];

/// Fields LSF's `bjobs -o` documents whose values allot does not keep
/// (process ids, swap, CPU peaks and efficiencies, what a forwarding
/// cluster, a GPU, an energy meter or a license scheduler would say),
/// with their headers: taken, and shown as `-`, as LSF shows a field with
/// no value, so that a tool that asks for them all goes on.
const NOT_KEPT: &[(&str, &str)] = &[
    ("pids", "PIDS"),
    ("swap", "SWAP"),
    ("swaplimit", "SWAPLIMIT"),
    ("avg_mem", "AVG_MEM"),
    ("cpu_peak", "CPU_PEAK"),
    ("cpu_efficiency", "CPU_EFFICIENCY"),
    ("mem_efficiency", "MEM_EFFICIENCY"),
    ("average_cpu_efficiency", "AVERAGE_CPU_EFFICIENCY"),
    ("cpu_peak_reached_duration", "CPU_PEAK_REACHED_DURATION"),
    ("idle_factor", "IDLE_FACTOR"),
    ("exception_status", "EXCEPTION_STATUS"),
    ("forward_cluster", "FORWARD_CLUSTER"),
    ("forward_time", "FORWARD_TIME"),
    ("srcjobid", "SRCJOBID"),
    ("dstjobid", "DSTJOBID"),
    ("source_cluster", "SOURCE_CLUSTER"),
    ("energy", "ENERGY"),
    ("gpfsio", "GPFSIO"),
    ("licproject", "LICPROJECT"),
    ("gpu_num", "GPU_NUM"),
    ("gpu_mode", "GPU_MODE"),
    ("gpu_alloc", "GPU_ALLOC"),
    ("host_file", "HOST_FILE"),
    ("processlimit", "PROCESSLIMIT"),
    ("threadlimit", "THREADLIMIT"),
    ("plimit", "PLIMIT"),
    ("eplimit", "EPLIMIT"),
    ("effective_plimit", "EFFECTIVE_PLIMIT"),
    ("effective_eplimit", "EFFECTIVE_EPLIMIT"),
    ("plimit_remain", "PLIMIT_REMAIN"),
    ("eplimit_remain", "EPLIMIT_REMAIN"),
    ("ependtime", "EPENDTIME"),
    ("ipendtime", "IPENDTIME"),
    ("pendstate", "PENDSTATE"),
    ("ru_utime", "RU_UTIME"),
    ("ru_stime", "RU_STIME"),
    ("ask_hosts", "ASK_HOSTS"),
    ("exec_home", "EXEC_HOME"),
    ("output_dir", "OUTPUT_DIR"),
    ("network_req", "NETWORK_REQ"),
    ("charged_saap", "CHARGED_SAAP"),
    ("block", "BLOCK"),
];

/// The fields of `bjobs -json` without `-o`.
pub(crate) const DEFAULT_FIELDS: &[&str] =
    &["jobid", "user", "stat", "queue", "from_host", "exec_host", "job_name", "submit_time"];

pub(crate) fn parse_format(text: &str) -> anyhow::Result<Format> {
    let mut fields = Vec::new();
    let mut delimiter = None;
    for spec in text.split_whitespace() {
        if let Some(d) = spec.strip_prefix("delimiter=") {
            let d = d.trim_matches(|c| c == '\'' || c == '"');
            delimiter = Some(d.to_string());
            continue;
        }
        let mut parts = spec.split(':');
        let name = parts.next().unwrap_or("").to_ascii_lowercase();
        let known = FIELDS.iter().find(|(n, _, _)| *n == name).map(|(_, f, h)| (*f, *h));
        let unkept = || NOT_KEPT.iter().find(|(n, _)| *n == name).map(|(_, h)| (Field::Unkept, *h));
        let (field, header) = known.or_else(unkept).ok_or_else(|| anyhow!("bjobs: -o: unknown field `{name}`"))?;
        let width = match parts.next() {
            Some(w) if !w.is_empty() => {
                Some(w.parse::<usize>().map_err(|_| anyhow!("bjobs: -o: {spec}: expected a width after `:`"))?)
            }
            _ => None,
        };
        fields.push((field, header, width));
    }
    if fields.is_empty() {
        bail!("bjobs: -o: name at least one field");
    }
    Ok(Format { fields, delimiter })
}

/// One field's value, as `-o` and `-json` show it (`-` when none).
pub(crate) fn value(j: &JobInfo, f: Field) -> String {
    let dash = || "-".to_string();
    match f {
        Field::JobId => j.id.to_string(),
        Field::JobIndex => j.index.to_string(),
        Field::Stat => j.status.as_str().to_string(),
        Field::User => j.user.clone(),
        Field::Queue => j.queue.clone(),
        Field::JobName => j.name.clone(),
        Field::Command => j.command.clone(),
        Field::FromHost => j.from_host.clone(),
        Field::ExecHost => {
            let hosts = exec_hosts(j);
            if hosts.is_empty() { dash() } else { hosts.join(":") }
        }
        Field::SubmitTime => lsf_time(j.submit_time),
        Field::StartTime => j.start_time.map_or_else(dash, lsf_time),
        Field::FinishTime => j.end_time.map_or_else(dash, lsf_time),
        Field::ExitCode => j.exit_code.map_or_else(dash, |c| c.to_string()),
        Field::Slots => j.slots.to_string(),
        Field::PendReason => j.pending_reason.clone().unwrap_or_else(dash),
        Field::CpuUsed => j.cpu_time.map_or_else(dash, |c| format!("{c:.1} second(s)")),
        Field::Project => j.project.clone().unwrap_or_else(|| "default".into()),
        Field::Cwd => j.cwd.clone(),
        Field::RunTimeLimit => j.run_limit.map_or_else(dash, minutes),
        Field::Mem => j.mem_kb.map_or_else(dash, mbytes),
        Field::MaxMem => j.max_mem_kb.map_or_else(dash, mbytes),
        Field::Description => j.description.clone().unwrap_or_else(dash),
        // Why it ended: killed (TERM_...), or could not start.
        Field::ExitReason => j.term_reason.clone().or_else(|| j.exit_reason.clone()).unwrap_or_else(dash),
        Field::MemLimit => j.mem_limit_kb.map_or_else(dash, mbytes),
        Field::FirstHost => j.exec_hosts.first().map_or_else(dash, |(h, _)| h.clone()),
        Field::NexecHost => {
            if j.exec_hosts.is_empty() {
                dash()
            } else {
                j.exec_hosts.len().to_string()
            }
        }
        Field::JobPriority => j.priority.map_or_else(dash, |p| p.to_string()),
        Field::EstimatedRunTime => j.estimated_run_time.map_or_else(dash, |s| s.to_string()),
        Field::ExecCwd => j.exec_cwd.clone().unwrap_or_else(dash),
        // allot has no service classes.
        Field::ServiceClass => dash(),
        Field::NallocSlot => match j.exec_hosts.iter().map(|h| h.1).sum::<u32>() {
            0 => dash(),
            n => n.to_string(),
        },
        Field::EstimatedStartTime => j.reserved.as_ref().and_then(|r| r.predicted_start).map_or_else(dash, lsf_time),
        Field::RunTime => j
            .start_time
            .map_or_else(dash, |s| format!("{} second(s)", j.end_time.unwrap_or_else(now).saturating_sub(s))),
        Field::PendTime => j.start_time.unwrap_or_else(now).saturating_sub(j.submit_time).to_string(),
        Field::TimeLeft => crate::bjobs_wide::time_left(j, now()),
        Field::Complete => crate::bjobs_wide::complete(j, now()),
        // Each host's slots, as `bjobs -l` names them: `2*hostA 1*hostB`.
        Field::AllocSlot => match j.exec_hosts.is_empty() {
            true => dash(),
            false => j.exec_hosts.iter().map(|(h, n)| format!("{n}*{h}")).collect::<Vec<_>>().join(" "),
        },
        f => detail_value(j, f).unwrap_or_else(dash),
    }
}

use crate::bjobs_wide::now;

/// A field of the job's submission options ([`Field::detail`]).
fn detail_value(j: &JobInfo, f: Field) -> Option<String> {
    let d = j.detail.as_deref()?;
    let kb = |v: Option<u64>| v.map(mbytes);
    match f {
        Field::UserGroup => d.user_group.clone(),
        Field::Application => d.app.clone(),
        Field::PreExecCommand => d.pre_exec.clone(),
        Field::PostExecCommand => d.post_exec.clone(),
        Field::ResizeCommand => d.resize_notify.clone(),
        Field::InputFile => d.input.clone(),
        Field::OutputFile => d.output.clone(),
        Field::ErrorFile => d.error.clone(),
        Field::MinReqProc => Some(d.min_slots.to_string()),
        Field::MaxReqProc => Some(d.max_slots.to_string()),
        Field::SpecifiedStartTime => d.begin_time.map(lsf_time),
        Field::SpecifiedTerminateTime => d.term_time.map(lsf_time),
        Field::EffectiveResreq | Field::CombinedResreq => d.res_req.clone(),
        Field::FileLimit => kb(d.limits.file_kb),
        Field::CoreLimit => kb(d.limits.core_kb),
        Field::StackLimit => kb(d.limits.stack_kb),
        Field::WarningAction => d.warning.as_ref().map(|w| w.0.clone()),
        Field::ActionWarningTime => d.warning.as_ref().map(|w| minutes(w.1)),
        Field::JobGroup => d.job_group.clone(),
        Field::Dependency => d.dependency.clone(),
        Field::Exclusive => Some(if d.exclusive { "Y" } else { "N" }.to_string()),
        Field::Interactive => Some(if d.interactive { "Y" } else { "N" }.to_string()),
        _ => None,
    }
}

pub(crate) fn custom(f: &Format, jobs: &[JobInfo], with_header: bool) -> String {
    let mut out = String::new();
    let row = |cells: Vec<String>| -> String {
        match &f.delimiter {
            Some(d) => cells.join(d),
            None => cells
                .iter()
                .zip(&f.fields)
                .map(|(c, (_, _, w))| match w {
                    Some(w) => format!("{:<w$}", cut(c, *w, false), w = *w),
                    None => c.clone(),
                })
                .collect::<Vec<_>>()
                .join(" "),
        }
        .trim_end()
        .to_string()
    };
    if with_header {
        let _ = writeln!(out, "{}", row(f.fields.iter().map(|(_, h, _)| h.to_string()).collect()));
    }
    for j in jobs {
        let _ = writeln!(out, "{}", row(f.fields.iter().map(|(g, _, _)| value(j, *g)).collect()));
    }
    out
}

/// `bjobs -json`: LSF's layout, every value a string, fields in the order
/// asked.
pub(crate) fn json(f: &Format, jobs: &[JobInfo]) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let mut out = format!("{{\n  \"COMMAND\":\"bjobs\",\n  \"JOBS\":{},\n  \"RECORDS\":[\n", jobs.len());
    for (k, j) in jobs.iter().enumerate() {
        out.push_str("    {\n");
        for (n, (g, h, _)) in f.fields.iter().enumerate() {
            let comma = if n + 1 < f.fields.len() { "," } else { "" };
            let _ = writeln!(out, "      {}:{}{comma}", q(h), q(&value(j, *g)));
        }
        out.push_str(if k + 1 < jobs.len() { "    },\n" } else { "    }\n" });
    }
    out.push_str("  ]\n}\n");
    out
}
