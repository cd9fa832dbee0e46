//! `lsb.queues`: `Begin Queue` ... `End Queue` sections.

use super::read::{at, value};
use super::shares::convert_shares;
use super::text::{Line, Source, key_values, offset_in, sections, unquote};
use super::values::{
    exclusive, host_tokens, int, max_reserve_time, name, number, parse_all, preemption, requeue_exit_values,
    run_limits, uint, uints, user_shares, yes_no,
};
use crate::diag::Diagnostics;
use crate::model::{HostRef, ProcLimit, Queue, RunLimit};
use winnow::Parser;
use winnow::ascii::multispace1;
use winnow::combinator::separated;

fn names<'a>(input: &mut &'a str) -> winnow::ModalResult<Vec<&'a str>> {
    separated(1.., name, multispace1).parse_next(input)
}

/// Parameters of LSF queues whose behaviour allot does not have: a real
/// `lsb.queues` carries them, so each loads with a warning that says it
/// is not applied (not as an unknown word).
const NOT_APPLIED: &[&str] = &[
    "ADMINISTRATORS",
    "CHUNK_JOB_SIZE",
    "CORELIMIT",
    "CPULIMIT",
    "DATALIMIT",
    "DEFAULT_HOST_SPEC",
    "DISPATCH_WINDOW",
    "FILELIMIT",
    "MEMLIMIT",
    "MIG",
    "NEW_JOB_SCHED_DELAY",
    "POST_EXEC",
    "PRE_EXEC",
    "PROCESSLIMIT",
    "RUN_WINDOW",
    "STACKLIMIT",
    "SWAPLIMIT",
    "THREADLIMIT",
    "CHKPNT",
    "RESUME_COND",
    "STOP_COND",
    "JOB_CONTROLS",
    "TERMINATE_WHEN",
    "APS_PRIORITY",
    "QUEUE_GROUP",
    "SLOT_POOL_PRIORITY",
    "NO_PREEMPT_RUN_TIME",
    "NO_PREEMPT_FINISH_TIME",
    "PREEMPT_DELAY",
    "r15s",
    "r1m",
    "r15m",
    "ut",
    "pg",
    "io",
    "ls",
    "it",
    "tmp",
    "swp",
    "mem",
];

/// Reads every Queue section; a queue without QUEUE_NAME is an error.
pub fn read(src: &Source<'_>, diags: &mut Diagnostics) -> Vec<Queue> {
    let mut out = Vec::new();
    for section in sections(src, diags) {
        if !section.is("Queue") {
            diags.warning(at(&section.begin, &section.name), format!("unknown section `{}`, ignored", section.name));
            continue;
        }
        let kvs = key_values(&section, diags);
        let Some((line, name_kv)) = kvs.iter().find(|(_, kv)| kv.key.eq_ignore_ascii_case("QUEUE_NAME")) else {
            diags.error(section.begin.loc(0), "Queue: expected a `QUEUE_NAME` parameter");
            continue;
        };
        let Some(qname) = value(diags, line, "QUEUE_NAME", name_kv.value, name) else { continue };
        let mut q = Queue::new(qname.to_string(), at(line, name_kv.value));
        for (line, kv) in &kvs {
            let key = kv.key.to_ascii_uppercase();
            q.keys.insert(key.clone(), at(line, kv.value));
            set(&mut q, &key, line, kv.value, kv.key, diags);
        }
        if q.resource_reserve.is_some() && q.slot_reserve.is_some() {
            diags.warning(
                q.loc_of("SLOT_RESERVE"),
                format!("queue `{}`: RESOURCE_RESERVE overrides SLOT_RESERVE; SLOT_RESERVE is ignored", q.name),
            );
            q.slot_reserve = None;
        }
        out.push(q);
    }
    out
}

fn set(q: &mut Queue, key: &str, line: &Line, v: &str, raw_key: &str, diags: &mut Diagnostics) {
    match key {
        "QUEUE_NAME" => {}
        "PRIORITY" => q.priority = value(diags, line, key, v, int).unwrap_or(q.priority),
        // Taken as written (the spec's own example has NICE = 20): the
        // system holds a job's nice value within its range (-20 to 19 on
        // Linux) as it sets it.
        "NICE" => q.nice = value(diags, line, key, v, int).unwrap_or(q.nice),
        "JOB_STARTER" => q.job_starter = Some(v.trim().to_string()).filter(|s| !s.is_empty()),
        "DESCRIPTION" => q.description = unquote(v).to_string(),
        "USERS" => {
            let list = value(diags, line, key, v, names).unwrap_or_default();
            q.users = list.iter().filter(|u| !u.eq_ignore_ascii_case("all")).map(|u| u.to_string()).collect();
        }
        "HOSTS" => {
            let list = value(diags, line, key, v, host_tokens).unwrap_or_default();
            q.hosts = list
                .into_iter()
                .map(|t| HostRef {
                    name: t.name.to_string(),
                    exclude: t.exclude,
                    first_exec: t.first_exec,
                    preference: t.preference,
                })
                .collect();
        }
        "FAIRSHARE" => {
            if let Some(raw) = value(diags, line, key, v, user_shares) {
                if raw.is_empty() {
                    diags.error(at(line, v), "FAIRSHARE: expected at least one share assignment `[name, shares]`");
                } else {
                    q.fairshare = Some(convert_shares(&raw));
                }
            }
        }
        "FAIRSHARE_QUEUES" => {
            q.fairshare_queues =
                value(diags, line, key, v, names).unwrap_or_default().into_iter().map(str::to_string).collect()
        }
        "DISPATCH_ORDER" => {
            if v.eq_ignore_ascii_case("QUEUE") {
                q.dispatch_order_queue = true;
            } else {
                diags.error(at(line, v), format!("DISPATCH_ORDER: expected `QUEUE`, found `{v}`"));
            }
        }
        "SLOT_POOL" => q.slot_pool = value(diags, line, key, v, name).map(str::to_string),
        "SLOT_SHARE" => {
            if let Some(s) = value(diags, line, key, v, uint) {
                if s == 0 || s > 100 {
                    diags.error(
                        at(line, v),
                        format!("SLOT_SHARE: expected a percentage greater than 0 and at most 100, found `{v}`"),
                    );
                } else {
                    q.slot_share = Some(s);
                }
            }
        }
        "PROCLIMIT" => q.proclimit = proclimit(&format!("queue `{}`", q.name), line, v, diags),
        "RUNLIMIT" => {
            if let Some(mut limits) = value(diags, line, key, v, run_limits) {
                let max = limits.pop();
                q.runlimit = max.map(|max| RunLimit { default: limits.pop(), max });
            }
        }
        "BACKFILL" => q.backfill = value(diags, line, key, v, yes_no).unwrap_or(false),
        "SLOT_RESERVE" => q.slot_reserve = value(diags, line, key, v, max_reserve_time),
        "RESOURCE_RESERVE" => q.resource_reserve = value(diags, line, key, v, max_reserve_time),
        "PLAN" => q.plan = value(diags, line, key, v, super::values::plan),
        "INTERRUPTIBLE_BACKFILL" => q.interruptible_backfill = value(diags, line, key, v, uint),
        "RES_REQ" => {
            let text = unquote(v);
            match crate::resreq::parse(text) {
                Ok(r) => q.res_req = Some(r),
                Err(e) => {
                    diags.error(line.loc(offset_in(&line.text, text) + e.offset), format!("RES_REQ: {}", e.message))
                }
            }
        }
        "EXCLUSIVE" => q.exclusive = value(diags, line, key, v, exclusive).unwrap_or_default(),
        "UJOB_LIMIT" => q.ujob_limit = value(diags, line, key, v, uint),
        "PJOB_LIMIT" => q.pjob_limit = value(diags, line, key, v, number),
        "QJOB_LIMIT" => q.qjob_limit = value(diags, line, key, v, uint),
        "HJOB_LIMIT" => q.hjob_limit = value(diags, line, key, v, uint),
        "MAX_PEND_JOBS" => q.max_pend_jobs = value(diags, line, key, v, uint),
        "MAX_PEND_SLOTS" => q.max_pend_slots = value(diags, line, key, v, uint),
        "PREEMPTION" => q.preemption = value(diags, line, key, v, preemption).unwrap_or_default(),
        "REQUEUE_EXIT_VALUES" => {
            q.requeue_exit_values = value(diags, line, key, v, requeue_exit_values).unwrap_or_default()
        }
        "JOB_ACCEPT_INTERVAL" => q.job_accept_interval = value(diags, line, key, v, uint),
        "RERUNNABLE" => q.rerunnable = value(diags, line, key, v, crate::lsf::values::yes_no).unwrap_or_default(),
        "MAX_JOB_PREEMPT" => q.max_job_preempt = value(diags, line, key, v, uint),
        "JOB_WARNING_ACTION" => q.job_warning_action = value(diags, line, key, v, name).map(str::to_string),
        "JOB_ACTION_WARNING_TIME" => {
            q.job_action_warning_time =
                value(diags, line, key, v, run_limits).and_then(|l| l.first().map(|l| l.seconds))
        }
        _ if NOT_APPLIED.iter().any(|k| k.eq_ignore_ascii_case(key)) => diags
            .warning(at(line, raw_key), format!("queue `{}`: `{raw_key}` is not applied by allot, ignored", q.name)),
        _ => diags.warning(at(line, raw_key), format!("unknown queue parameter `{raw_key}`, ignored")),
    }
}

/// PROCLIMIT = [minimum [default]] maximum (spec 004): one value is the
/// maximum (minimum and default 1); two are minimum and maximum (default =
/// minimum); three are minimum, default, maximum. They must satisfy
/// 1 <= minimum <= default <= maximum; an incorrect PROCLIMIT is ignored
/// with a warning, as LSF does. `whose`: "queue `normal`", "application
/// `fluent`".
pub(super) fn proclimit(whose: &str, line: &Line, v: &str, diags: &mut Diagnostics) -> Option<ProcLimit> {
    let warn = |diags: &mut Diagnostics, why: String| {
        diags.warning(at(line, v), format!("{whose}: PROCLIMIT {why}; PROCLIMIT is ignored"));
    };
    let values = match parse_all(uints, v) {
        Ok(values) => values,
        Err(e) => {
            warn(diags, e.message);
            return None;
        }
    };
    let limit = match values[..] {
        [max] => ProcLimit { min: 1, default: 1, max },
        [min, max] => ProcLimit { min, default: min, max },
        [min, default, max] => ProcLimit { min, default, max },
        _ => {
            warn(diags, format!("has {} values, expected 1 to 3", values.len()));
            return None;
        }
    };
    if limit.min < 1 || limit.min > limit.default || limit.default > limit.max {
        warn(diags, "must satisfy 1 <= minimum <= default <= maximum".to_string());
        return None;
    }
    Some(limit)
}

#[cfg(test)]
#[path = "queues_tests.rs"]
mod tests;
