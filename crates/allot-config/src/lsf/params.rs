//! `lsb.params`: the Parameters section.

use super::read::{at, value};
use super::text::{Source, key_values, sections};
use super::values::{name, number, uint, yes_no};
use crate::diag::Diagnostics;
use crate::model::Params;
use winnow::Parser;
use winnow::ascii::multispace1;
use winnow::combinator::separated;

fn names<'a>(input: &mut &'a str) -> winnow::ModalResult<Vec<&'a str>> {
    separated(0.., name, multispace1).parse_next(input)
}

/// Reads `lsb.params`; parameters not given keep their defaults.
pub fn read(src: &Source<'_>, diags: &mut Diagnostics) -> Params {
    let mut p = Params::default();
    for section in sections(src, diags) {
        if !section.is("Parameters") {
            diags.warning(at(&section.begin, &section.name), format!("unknown section `{}`, ignored", section.name));
            continue;
        }
        for (line, kv) in key_values(&section, diags) {
            let key = kv.key.to_ascii_uppercase();
            p.keys.insert(key.clone(), at(line, kv.value));
            let f = &mut p.factors;
            let v = kv.value;
            let num = |d: &mut Diagnostics, what: &str| value(d, line, what, v, number);
            match key.as_str() {
                "CPU_TIME_FACTOR" => f.cpu_time_factor = num(diags, &key).unwrap_or(f.cpu_time_factor),
                "RUN_TIME_FACTOR" => f.run_time_factor = num(diags, &key).unwrap_or(f.run_time_factor),
                "RUN_JOB_FACTOR" => f.run_job_factor = num(diags, &key).unwrap_or(f.run_job_factor),
                "FAIRSHARE_ADJUSTMENT_FACTOR" => {
                    f.fairshare_adjustment_factor = num(diags, &key).unwrap_or(f.fairshare_adjustment_factor)
                }
                "COMMITTED_RUN_TIME_FACTOR" => {
                    let c = num(diags, &key).unwrap_or(f.committed_run_time_factor);
                    if !(0.0..=1.0).contains(&c) {
                        diags.error(at(line, v), format!("{key}: expected a value between 0.0 and 1.0, found `{v}`"));
                    } else {
                        f.committed_run_time_factor = c;
                    }
                }
                "HIST_HOURS" => f.hist_hours = num(diags, &key).unwrap_or(f.hist_hours),
                "ENABLE_HIST_RUN_TIME" => f.enable_hist_run_time = value(diags, line, &key, v, yes_no).unwrap_or(false),
                "MBD_SLEEP_TIME" => p.mbd_sleep_time = value(diags, line, &key, v, uint).unwrap_or(p.mbd_sleep_time),
                "CLEAN_PERIOD" => p.clean_period = value(diags, line, &key, v, uint).map_or(p.clean_period, u64::from),
                "MAX_JOB_NUM" => p.max_job_num = value(diags, line, &key, v, uint).map_or(p.max_job_num, u64::from),
                "MAX_PREEXEC_RETRY" => match value(diags, line, &key, v, uint) {
                    Some(0) => diags.error(at(line, v), format!("{key}: expected a number of tries, at least 1")),
                    Some(n) => p.max_preexec_retry = n,
                    None => {}
                },
                "JOB_TERMINATE_INTERVAL" => {
                    p.job_terminate_interval =
                        value(diags, line, &key, v, uint).map_or(p.job_terminate_interval, u64::from)
                }
                "DEFAULT_QUEUE" => {
                    p.default_queue =
                        value(diags, line, &key, v, names).unwrap_or_default().into_iter().map(str::to_string).collect()
                }
                "PARALLEL_SCHED_BY_SLOT" => {
                    p.parallel_sched_by_slot = value(diags, line, &key, v, yes_no).unwrap_or(false)
                }
                "RESOURCE_RESERVE_PER_SLOT" => {
                    p.resource_reserve_per_slot = value(diags, line, &key, v, yes_no).unwrap_or(false)
                }
                "PREEMPT_FOR" => preempt_for(&mut p, diags, line, v),
                "MAX_JOB_PREEMPT" => p.max_job_preempt = value(diags, line, &key, v, uint),
                "NO_PREEMPT_RUN_TIME" => p.no_preempt_run_time = preempt_time(diags, line, &key, v),
                "NO_PREEMPT_FINISH_TIME" => p.no_preempt_finish_time = preempt_time(diags, line, &key, v),
                "PREEMPT_JOBTYPE" => preempt_jobtype(&mut p, diags, line, v),
                "COMPUTE_UNIT_TYPES" => compute_unit_types(&mut p, diags, line, v),
                "MAX_JOB_ARRAY_SIZE" => match value(diags, line, &key, v, uint) {
                    Some(n) if (1..=crate::array::MAX_INDEX).contains(&n) => p.max_job_array_size = n,
                    Some(_) => diags.error(at(line, v), format!("{key}: expected 1 to 2147483646, found `{v}`")),
                    None => {}
                },
                "MAX_USER_PRIORITY" => match value(diags, line, &key, v, uint) {
                    Some(n) if n >= 1 => p.max_user_priority = Some(n),
                    Some(_) => {
                        diags.error(at(line, v), format!("{key}: expected a whole number of at least 1, found `{v}`"))
                    }
                    None => {}
                },
                "JOB_ACCEPT_INTERVAL" => p.job_accept_interval = value(diags, line, &key, v, uint),
                "MAX_PEND_JOBS" => p.max_pend_jobs = value(diags, line, &key, v, uint),
                "MAX_PEND_SLOTS" => p.max_pend_slots = value(diags, line, &key, v, uint),
                "SUB_TRY_INTERVAL" => match value(diags, line, &key, v, uint) {
                    Some(0) => diags.error(at(line, v), format!("{key}: expected seconds, at least 1")),
                    Some(n) => p.sub_try_interval = n,
                    None => {}
                },
                "ALLOCATION_PLANNER" => p.allocation_planner = value(diags, line, &key, v, yes_no).unwrap_or(false),
                "PLAN" => p.plan = value(diags, line, &key, v, super::values::plan),
                "LSB_NCPU_ENFORCE" => {
                    p.ncpu_enforce = value(diags, line, &key, v, uint).is_some_and(|n| n == 1);
                }
                _ if PARAMS_NOT_APPLIED.contains(&key.as_str()) => {
                    diags.warning(at(line, kv.key), format!("`{}` is not applied by allot, ignored", kv.key))
                }
                _ => diags.warning(at(line, kv.key), format!("unknown parameter `{}`, ignored", kv.key)),
            }
            if (key.ends_with("_FACTOR") || key == "HIST_HOURS") && p.factors_negative() {
                diags.error(at(line, v), format!("{key}: expected a number of at least 0, found `{v}`"));
                p.factors = Default::default();
            }
        }
    }
    p
}

/// Parameters of LSF's that allot reads and does not apply: said so, not
/// called unknown. (Preemption's refinements: exclusive and backfill jobs
/// are never preempted, as without PREEMPT_JOBTYPE; a job may be
/// preempted any number of times; slots are the only preemptable
/// resource.)
const PARAMS_NOT_APPLIED: [&str; 3] = ["PREEMPTABLE_RESOURCES", "PREEMPTION_WAIT_TIME", "PREEMPT_DELAY"];

/// NO_PREEMPT_RUN_TIME / NO_PREEMPT_FINISH_TIME: minutes, or a
/// percentage of the job's run time estimate or run limit (`50%`).
fn preempt_time(
    diags: &mut Diagnostics,
    line: &super::text::Line,
    key: &str,
    v: &str,
) -> Option<allot_engine::model::PreemptTime> {
    use allot_engine::model::PreemptTime;
    let text = v.trim();
    let parsed = match text.strip_suffix('%') {
        Some(pc) => pc.trim().parse::<f64>().ok().filter(|p| (0.0..=100.0).contains(p)).map(PreemptTime::Percent),
        None => text.parse::<u64>().ok().map(|m| PreemptTime::Seconds(m * 60)),
    };
    if parsed.is_none() {
        diags.error(at(line, v), format!("{key}: expected minutes, or a percentage from 0% to 100%, found `{v}`"));
    }
    parsed
}

/// PREEMPT_JOBTYPE: BACKFILL is applied; EXCLUSIVE and AFFINITY are read
/// and said not to apply (exclusive jobs are never preempted, nor
/// preempt).
fn preempt_jobtype(p: &mut Params, diags: &mut Diagnostics, line: &super::text::Line, v: &str) {
    let Some(words) = value(diags, line, "PREEMPT_JOBTYPE", v, names) else { return };
    for w in words {
        match w.to_ascii_uppercase().as_str() {
            "BACKFILL" => p.preempt_backfill = true,
            "EXCLUSIVE" | "AFFINITY" => diags.warning(
                at(line, w),
                format!("PREEMPT_JOBTYPE: `{w}` is not applied: allot never preempts exclusive jobs, nor by them"),
            ),
            _ => diags.error(
                at(line, w),
                format!("PREEMPT_JOBTYPE: unknown keyword `{w}` (expected BACKFILL, EXCLUSIVE or AFFINITY)"),
            ),
        }
    }
}

/// PREEMPT_FOR's keywords: MINI_JOB, OPTIMAL_MINI_JOB and LEAST_RUN_TIME
/// choose the jobs preempted; GROUP_JLP, GROUP_MAX, HOST_JLU and USER_JLP
/// would let a job preempt to get under a slot limit (counting only
/// running jobs against it), which allot's preemption never does (a job a
/// limit stops does not preempt: `allot_engine::alloc_limits`), so they
/// are read and said not to apply.
fn preempt_for(p: &mut Params, diags: &mut Diagnostics, line: &super::text::Line, v: &str) {
    const APPLIED: [&str; 3] = ["MINI_JOB", "OPTIMAL_MINI_JOB", "LEAST_RUN_TIME"];
    const NOT_APPLIED: [&str; 4] = ["GROUP_JLP", "GROUP_MAX", "HOST_JLU", "USER_JLP"];
    let Some(words) = value(diags, line, "PREEMPT_FOR", v, names) else { return };
    for w in words {
        let upper = w.to_ascii_uppercase();
        if APPLIED.contains(&upper.as_str()) {
            p.preempt_for.push(upper);
        } else if NOT_APPLIED.contains(&upper.as_str()) {
            diags.warning(
                at(line, w),
                format!("PREEMPT_FOR: `{w}` is not applied: allot never preempts to get a job under a slot limit"),
            );
        } else {
            diags.error(
                at(line, w),
                format!(
                    "PREEMPT_FOR: unknown keyword `{w}` (expected {} or {})",
                    APPLIED.join(", "),
                    NOT_APPLIED.join(", ")
                ),
            );
        }
    }
}

fn compute_unit_types(p: &mut Params, diags: &mut Diagnostics, line: &super::text::Line, v: &str) {
    let mut types = Vec::new();
    let mut default = None;
    for word in v.split_whitespace() {
        let (t, bang) = match word.strip_suffix('!') {
            Some(t) => (t, true),
            None => (word, false),
        };
        if t.is_empty() || !t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            diags.error(
                at(line, word),
                format!("COMPUTE_UNIT_TYPES: expected a compute unit type name, found `{word}`"),
            );
            continue;
        }
        if bang {
            if default.is_some() {
                diags.error(at(line, word), "COMPUTE_UNIT_TYPES: only one type can be the default (`!`)");
            } else {
                default = Some(t.to_string());
            }
        }
        types.push(t.to_string());
    }
    p.default_compute_unit_type = default.or_else(|| types.first().cloned());
    p.compute_unit_types = types;
}

impl Params {
    fn factors_negative(&self) -> bool {
        let f = &self.factors;
        [f.cpu_time_factor, f.run_time_factor, f.run_job_factor, f.fairshare_adjustment_factor, f.hist_hours]
            .iter()
            .any(|x| *x < 0.0)
    }
}

/// Every `lsb.params` parameter allot reads, with the value in force (its
/// default where the file sets none), by name: what `bparams -a` lists.
/// A parameter with no value and no default (MAX_USER_PRIORITY unset) is
/// left out, as it is in force nowhere.
pub fn shown(p: &Params) -> Vec<(&'static str, String)> {
    use allot_engine::model::PreemptTime;
    let yes_no = |b: bool| if b { "Y" } else { "N" }.to_string();
    let time = |t: PreemptTime| match t {
        PreemptTime::Seconds(s) => (s / 60).to_string(),
        PreemptTime::Percent(pc) => format!("{pc}%"),
    };
    let f = &p.factors;
    let units: Vec<String> = p
        .compute_unit_types
        .iter()
        .map(|t| if p.default_compute_unit_type.as_ref() == Some(t) { format!("{t}!") } else { t.clone() })
        .collect();
    let mut out: Vec<(&'static str, String)> = vec![
        ("CLEAN_PERIOD", p.clean_period.to_string()),
        ("COMMITTED_RUN_TIME_FACTOR", f.committed_run_time_factor.to_string()),
        ("CPU_TIME_FACTOR", f.cpu_time_factor.to_string()),
        ("DEFAULT_QUEUE", p.default_queue.join(" ")),
        ("ENABLE_HIST_RUN_TIME", yes_no(f.enable_hist_run_time)),
        ("FAIRSHARE_ADJUSTMENT_FACTOR", f.fairshare_adjustment_factor.to_string()),
        ("HIST_HOURS", f.hist_hours.to_string()),
        ("JOB_ACCEPT_INTERVAL", p.job_accept_interval.unwrap_or(0).to_string()),
        ("JOB_TERMINATE_INTERVAL", p.job_terminate_interval.to_string()),
        ("LSB_NCPU_ENFORCE", u8::from(p.ncpu_enforce).to_string()),
        ("MAX_JOB_ARRAY_SIZE", p.max_job_array_size.to_string()),
        ("MAX_JOB_NUM", p.max_job_num.to_string()),
        ("MAX_PREEXEC_RETRY", p.max_preexec_retry.to_string()),
        ("MBD_SLEEP_TIME", p.mbd_sleep_time.to_string()),
        ("PARALLEL_SCHED_BY_SLOT", yes_no(p.parallel_sched_by_slot)),
        ("RESOURCE_RESERVE_PER_SLOT", yes_no(p.resource_reserve_per_slot)),
        ("RUN_JOB_FACTOR", f.run_job_factor.to_string()),
        ("RUN_TIME_FACTOR", f.run_time_factor.to_string()),
        ("SUB_TRY_INTERVAL", p.sub_try_interval.to_string()),
    ];
    let optional = [
        ("COMPUTE_UNIT_TYPES", (!units.is_empty()).then(|| units.join(" "))),
        ("MAX_JOB_PREEMPT", p.max_job_preempt.map(|n| n.to_string())),
        ("MAX_PEND_JOBS", p.max_pend_jobs.map(|n| n.to_string())),
        ("MAX_PEND_SLOTS", p.max_pend_slots.map(|n| n.to_string())),
        ("MAX_USER_PRIORITY", p.max_user_priority.map(|n| n.to_string())),
        ("NO_PREEMPT_FINISH_TIME", p.no_preempt_finish_time.map(time)),
        ("NO_PREEMPT_RUN_TIME", p.no_preempt_run_time.map(time)),
        ("PREEMPT_FOR", (!p.preempt_for.is_empty()).then(|| p.preempt_for.join(" "))),
        ("PREEMPT_JOBTYPE", p.preempt_backfill.then(|| "BACKFILL".to_string())),
        ("ALLOCATION_PLANNER", p.allocation_planner.then(|| "Y".to_string())),
        ("PLAN", p.plan.map(|v| v.to_string())),
        ("LSB_TIME_RESERVE_NUMJOBS", p.time_reserve_numjobs.map(|n| n.to_string())),
    ];
    out.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))));
    out.sort_by_key(|(k, _)| *k);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the seeds disagree (README): spec 004 says both "! indicates
    /// the default compute unit type" and "The default is the compute
    /// unit type listed first". allot takes the `!` type when there is
    /// one, else the first (the two agree when `!` marks the first).
    #[test]
    fn the_default_compute_unit_type_is_the_marked_one_else_the_first() {
        let read_types = |types: &str| {
            let text = format!("Begin Parameters\nCOMPUTE_UNIT_TYPES = {types}\nEnd Parameters\n");
            let mut d = Diagnostics::default();
            let p = read(&Source { name: "lsb.params", text: &text }, &mut d);
            assert!(!d.has_errors(), "{d}");
            p.default_compute_unit_type
        };
        assert_eq!(read_types("enclosure! rack").as_deref(), Some("enclosure"));
        assert_eq!(read_types("enclosure rack!").as_deref(), Some("rack"));
        assert_eq!(read_types("enclosure rack").as_deref(), Some("enclosure"));
    }

    fn params(text: &str) -> (Params, Diagnostics) {
        let mut d = Diagnostics::default();
        let p = read(&Source { name: "lsb.params", text }, &mut d);
        (p, d)
    }

    #[test]
    fn defaults_are_the_specs() {
        let (p, d) = params("");
        assert!(d.0.is_empty());
        let f = &p.factors;
        assert_eq!(
            (f.cpu_time_factor, f.run_time_factor, f.run_job_factor, f.fairshare_adjustment_factor),
            (0.7, 0.7, 3.0, 0.0)
        );
        assert_eq!((f.committed_run_time_factor, f.hist_hours, f.enable_hist_run_time), (0.0, 5.0, false));
        assert_eq!(p.mbd_sleep_time, 60);
        assert!(!p.ncpu_enforce && !p.parallel_sched_by_slot);
        assert_eq!(p.max_job_array_size, 1000);
        assert_eq!(p.max_user_priority, None);
        assert_eq!(p.clean_period, 3600);
    }

    #[test]
    fn preempt_for_keywords_and_preemption_parameters() {
        let (p, d) = params(
            "Begin Parameters\nPREEMPT_FOR = mini_job LEAST_RUN_TIME GROUP_MAX BOGUS\n\
             PREEMPT_JOBTYPE = BACKFILL EXCLUSIVE\nMAX_JOB_PREEMPT = 3\nNO_PREEMPT_RUN_TIME = 50%\n\
             NO_PREEMPT_FINISH_TIME = 10\nPREEMPTION_WAIT_TIME = 5\nNO_PREEMPT_RUN_TIME = 150%\nEnd Parameters\n",
        );
        assert_eq!(p.preempt_for, ["MINI_JOB", "LEAST_RUN_TIME"]);
        use allot_engine::model::PreemptTime;
        assert!(p.preempt_backfill);
        assert_eq!(p.max_job_preempt, Some(3));
        assert_eq!(p.no_preempt_finish_time, Some(PreemptTime::Seconds(600)));
        assert_eq!(p.no_preempt_run_time, None, "the bad second one is refused");
        let d: Vec<String> = d.0.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            d,
            [
                "lsb.params:2:39: warning: PREEMPT_FOR: `GROUP_MAX` is not applied: allot never preempts to get a \
                 job under a slot limit",
                "lsb.params:2:49: error: PREEMPT_FOR: unknown keyword `BOGUS` (expected MINI_JOB, OPTIMAL_MINI_JOB, \
                 LEAST_RUN_TIME or GROUP_JLP, GROUP_MAX, HOST_JLU, USER_JLP)",
                "lsb.params:3:28: warning: PREEMPT_JOBTYPE: `EXCLUSIVE` is not applied: allot never preempts \
                 exclusive jobs, nor by them",
                "lsb.params:7:1: warning: `PREEMPTION_WAIT_TIME` is not applied by allot, ignored",
                "lsb.params:8:23: error: NO_PREEMPT_RUN_TIME: expected minutes, or a percentage from 0% to 100%, \
                 found `150%`",
            ]
        );
        let (p, _) = params("Begin Parameters\nNO_PREEMPT_RUN_TIME = 50%\nEnd Parameters\n");
        assert_eq!(p.no_preempt_run_time, Some(PreemptTime::Percent(50.0)));
    }

    #[test]
    fn every_parameter_reads() {
        let (p, d) = params(
            "Begin Parameters\nCPU_TIME_FACTOR = 0\nRUN_TIME_FACTOR=1\nRUN_JOB_FACTOR = 0\nFAIRSHARE_ADJUSTMENT_FACTOR = 0.5\n\
             COMMITTED_RUN_TIME_FACTOR = 1\nHIST_HOURS = 2\nENABLE_HIST_RUN_TIME = Y\nMBD_SLEEP_TIME = 20\n\
             DEFAULT_QUEUE = queueA queueB\nPARALLEL_SCHED_BY_SLOT = y\nRESOURCE_RESERVE_PER_SLOT = Y\n\
             PREEMPT_FOR = GROUP_JLP\nCOMPUTE_UNIT_TYPES = enclosure! rack\nLSB_NCPU_ENFORCE = 1\n\
             MAX_JOB_ARRAY_SIZE = 5000\nMAX_USER_PRIORITY = 100\nCLEAN_PERIOD = 600\nJOB_TERMINATE_INTERVAL = 3\n\
             MAX_PREEXEC_RETRY = 2\nEnd Parameters\n",
        );
        assert_eq!(
            d.to_string().trim(),
            "lsb.params:13:15: warning: PREEMPT_FOR: `GROUP_JLP` is not applied: allot never preempts to get a job \
             under a slot limit"
        );
        assert_eq!((p.clean_period, p.job_terminate_interval, p.max_preexec_retry), (600, 3, 2));
        // As `bparams -a` lists them: by name, what the file set and the
        // defaults of the rest.
        let listed = shown(&p);
        assert!(listed.windows(2).all(|w| w[0].0 < w[1].0), "{listed:?}");
        let get = |k: &str| listed.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("DEFAULT_QUEUE"), Some("queueA queueB"));
        assert_eq!(
            (get("MAX_PREEXEC_RETRY"), get("CLEAN_PERIOD"), get("MAX_USER_PRIORITY")),
            (Some("2"), Some("600"), Some("100"))
        );
        assert_eq!((get("COMPUTE_UNIT_TYPES"), get("LSB_NCPU_ENFORCE")), (Some("enclosure! rack"), Some("1")));
        let defaults = shown(&Params::default());
        let get = |k: &str| defaults.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        assert_eq!(
            (get("MBD_SLEEP_TIME"), get("MAX_USER_PRIORITY"), get("JOB_ACCEPT_INTERVAL")),
            (Some("60"), None, Some("0"))
        );
        assert_eq!(p.factors.cpu_time_factor, 0.0);
        assert_eq!(p.factors.fairshare_adjustment_factor, 0.5);
        assert!(p.factors.enable_hist_run_time);
        assert_eq!(p.default_queue, ["queueA", "queueB"]);
        assert_eq!(p.compute_unit_types, ["enclosure", "rack"]);
        assert_eq!(p.default_compute_unit_type.as_deref(), Some("enclosure"));
        assert!(p.ncpu_enforce && p.parallel_sched_by_slot && p.resource_reserve_per_slot);
        assert_eq!(p.mbd_sleep_time, 20);
        assert_eq!(p.max_job_array_size, 5000);
        assert_eq!(p.max_user_priority, Some(100));
    }

    #[test]
    fn bad_values_are_located() {
        let (p, d) = params(
            "Begin Parameters\nRUN_JOB_FACTOR = lots\nHIST_HOURS=-1\nCOMMITTED_RUN_TIME_FACTOR = 2\n\
             MAX_JOB_ARRAY_SIZE = 0\nMAX_USER_PRIORITY = 0\nEnd Parameters\n",
        );
        let msgs: Vec<String> = d.0.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            msgs,
            [
                "lsb.params:2:18: error: RUN_JOB_FACTOR: expected a number, found `lots`",
                "lsb.params:3:12: error: HIST_HOURS: expected a number of at least 0, found `-1`",
                "lsb.params:4:29: error: COMMITTED_RUN_TIME_FACTOR: expected a value between 0.0 and 1.0, found `2`",
                "lsb.params:5:22: error: MAX_JOB_ARRAY_SIZE: expected 1 to 2147483646, found `0`",
                "lsb.params:6:21: error: MAX_USER_PRIORITY: expected a whole number of at least 1, found `0`",
            ]
        );
        assert_eq!(p.factors.run_job_factor, 3.0);
        assert_eq!(p.max_job_array_size, 1000, "a bad value keeps the default");
        assert_eq!(p.max_user_priority, None, "a bad value leaves job priorities off");
    }
}
