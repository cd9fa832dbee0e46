//! Planned reservation in the configuration: LSB_TIME_RESERVE_NUMJOBS
//! (`lsf.conf`), ALLOCATION_PLANNER and PLAN (`lsb.params`, `lsb.queues`),
//! as the engine applies them ([`allot_engine::model::Plan`]).
//!
//! - With ALLOCATION_PLANNER=Y a queue's PLAN, else `lsb.params`' (LSF's
//!   precedence: the queue's setting overrides the cluster's), says
//!   whether its jobs plan; DELAY comes from the queue's PLAN if it gives
//!   one, else the cluster's; MAX_JOBS of each applies to its own scope
//!   (the strictest holds). SLOT_RESERVE and RESOURCE_RESERVE are ignored
//!   with a warning, and LSB_TIME_RESERVE_NUMJOBS too.
//! - Without it, LSB_TIME_RESERVE_NUMJOBS makes every queue with
//!   SLOT_RESERVE or RESOURCE_RESERVE reserve by plan, for that many jobs
//!   at most; PLAN is ignored with a warning (LSF requires the planner).
//! - RSCHED_TIME is read and not applied: plans are made again at every
//!   pass, as RSCHED_TIME[0] asks.

use allot_engine::model::{Plan, Reserve};

use crate::diag::Diagnostics;
use crate::lsf::values::PlanValue;
use crate::model::{Config, Queue};

impl Config {
    /// `q`'s reservation and how it is planned (module docs).
    pub(crate) fn reservation_of(&self, q: &Queue) -> (Option<Reserve>, Option<Plan>) {
        if self.params.allocation_planner {
            let cluster = self.params.plan.unwrap_or_default();
            return planner_queue(PlanValue {
                on: q.plan.map_or(cluster.on, |p| p.on),
                delay: q.plan.and_then(|p| p.delay).or(cluster.delay),
                max_jobs: q.plan.and_then(|p| p.max_jobs),
                rsched_time: None,
            });
        }
        let reserve = match (q.resource_reserve, q.slot_reserve) {
            (Some(cycles), _) => Some(Reserve { cycles, memory: true }),
            (None, Some(cycles)) => Some(Reserve { cycles, memory: false }),
            (None, None) => None,
        };
        (reserve, self.params.time_reserve_numjobs.and_then(|_| time_based(reserve)))
    }

    /// The cluster's cap on jobs holding a plan at once.
    pub(crate) fn plan_max_jobs(&self) -> Option<u32> {
        match self.params.allocation_planner {
            true => self.params.plan.and_then(|p| p.max_jobs),
            false => self.params.time_reserve_numjobs,
        }
    }
}

/// The reservation and plan of a queue whose PLAN, with the cluster's
/// filled in, is `v`, under ALLOCATION_PLANNER: every job may plan, and a
/// plan has no reservation time.
pub fn planner_queue(v: PlanValue) -> (Option<Reserve>, Option<Plan>) {
    if !v.on {
        return (None, None);
    }
    let plan = Plan { delay: u64::from(v.delay.unwrap_or(0)) * 60, max_jobs: v.max_jobs, every_job: true };
    (Some(Reserve { cycles: Reserve::NEVER, memory: true }), Some(plan))
}

/// The plan of a queue reserving as `reserve` says, under time-based slot
/// reservation (LSB_TIME_RESERVE_NUMJOBS): a queue that reserves plans,
/// with its own MAX_RESERVE_TIME, no delay, and only for the jobs it
/// reserves for.
pub fn time_based(reserve: Option<Reserve>) -> Option<Plan> {
    reserve.map(|_| Plan::default())
}

/// Warnings for settings that the others make void (module docs).
pub(crate) fn plans(config: &Config, diags: &mut Diagnostics) {
    let params_at = |key: &str| config.params.loc_of(key);
    let planner = config.params.allocation_planner;
    if !planner && config.params.plan.is_some() {
        diags.warning(params_at("PLAN"), "PLAN applies only with ALLOCATION_PLANNER=Y; ignored");
    }
    if planner && config.params.time_reserve_numjobs.is_some() {
        diags.warning(
            params_at("ALLOCATION_PLANNER"),
            "ALLOCATION_PLANNER replaces time-based slot reservation: LSB_TIME_RESERVE_NUMJOBS is ignored",
        );
    }
    if config.params.plan.is_some_and(|p| p.rsched_time.is_some()) {
        diags.warning(params_at("PLAN"), "PLAN: RSCHED_TIME is not applied (plans are made again at every pass)");
    }
    for q in &config.queues {
        let name = &q.name;
        if let Some(p) = q.plan {
            if !planner {
                diags.warning(
                    q.loc_of("PLAN"),
                    format!("queue `{name}`: PLAN applies only with ALLOCATION_PLANNER=Y; ignored"),
                );
            } else if p.rsched_time.is_some() {
                diags.warning(
                    q.loc_of("PLAN"),
                    format!("queue `{name}`: PLAN: RSCHED_TIME is not applied (plans are made again at every pass)"),
                );
            }
        }
        for (key, set) in
            [("SLOT_RESERVE", q.slot_reserve.is_some()), ("RESOURCE_RESERVE", q.resource_reserve.is_some())]
        {
            if planner && set {
                diags.warning(
                    q.loc_of(key),
                    format!("queue `{name}`: {key} is ignored under ALLOCATION_PLANNER (PLAN replaces it)"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::load_texts;

    const HOSTS: &str = "Begin Host\nHOST_NAME MXJ\nhostA 4\nEnd Host\n";

    fn files(params: &str, queue: &str, conf: &str) -> Vec<(String, String)> {
        let queue = format!("Begin Queue\nQUEUE_NAME = q\nPRIORITY = 30\n{queue}\nEnd Queue\n");
        let mut files = vec![("lsb.hosts".to_string(), HOSTS.to_string()), ("lsb.queues".to_string(), queue)];
        if !params.is_empty() {
            files.push(("lsb.params".into(), format!("Begin Parameters\n{params}\nEnd Parameters\n")));
        }
        if !conf.is_empty() {
            files.push(("lsf.conf".into(), conf.into()));
        }
        files
    }

    /// The queue's reservation and plan, the cluster's cap, and the
    /// diagnostics.
    fn load(params: &str, queue: &str, conf: &str) -> (Option<Reserve>, Option<Plan>, Option<u32>, String) {
        let (config, diags) = load_texts(&files(params, queue, conf)).expect("a valid configuration");
        let e = config.engine_config();
        (e.queues[0].reserve, e.queues[0].plan, e.plan_max_jobs, diags.to_string())
    }

    fn errors(params: &str, queue: &str, conf: &str) -> String {
        load_texts(&files(params, queue, conf)).expect_err("refused").to_string()
    }

    #[test]
    fn lsb_time_reserve_numjobs_plans_the_reserving_queues() {
        let (reserve, plan, cap, _) = load("", "SLOT_RESERVE = MAX_RESERVE_TIME[5]", "LSB_TIME_RESERVE_NUMJOBS=4\n");
        assert_eq!(reserve, Some(Reserve { cycles: 5, memory: false }), "MAX_RESERVE_TIME still applies");
        assert_eq!((plan, cap), (Some(Plan::default()), Some(4)));
        // A queue that does not reserve does not plan.
        let (reserve, plan, _, _) = load("", "", "LSB_TIME_RESERVE_NUMJOBS=4\n");
        assert_eq!((reserve, plan), (None, None));
        // Without it, greedy reservation.
        let (_, plan, cap, _) = load("", "SLOT_RESERVE = MAX_RESERVE_TIME[5]", "");
        assert_eq!((plan, cap), (None, None));
    }

    #[test]
    fn lsb_time_reserve_numjobs_must_be_a_positive_number() {
        for bad in ["0", "-1", "four"] {
            let e = errors("", "", &format!("LSB_TIME_RESERVE_NUMJOBS={bad}\n"));
            assert!(e.contains("lsf.conf:1:") && e.contains("LSB_TIME_RESERVE_NUMJOBS: expected a positive"), "{e}");
        }
    }

    #[test]
    fn the_planner_plans_every_job_of_a_plan_queue_with_no_reservation_time() {
        let (reserve, plan, cap, warnings) =
            load("ALLOCATION_PLANNER = Y\nPLAN = \"DELAY[10] MAX_JOBS[3]\"", "SLOT_RESERVE = MAX_RESERVE_TIME[5]", "");
        assert_eq!(reserve, Some(Reserve { cycles: Reserve::NEVER, memory: true }));
        assert_eq!(plan, Some(Plan { delay: 600, max_jobs: None, every_job: true }), "the cluster's DELAY");
        assert_eq!(cap, Some(3), "the cluster's MAX_JOBS caps the cluster");
        assert!(
            warnings.contains("lsb.queues:4:16: warning: queue `q`: SLOT_RESERVE is ignored under ALLOCATION_PLANNER"),
            "{warnings}"
        );
        // The queue's PLAN overrides the cluster's, key by key.
        let (_, plan, _, _) = load("ALLOCATION_PLANNER = Y\nPLAN = DELAY[10]", "PLAN = MAX_JOBS[2]", "");
        assert_eq!(plan, Some(Plan { delay: 600, max_jobs: Some(2), every_job: true }));
        let (reserve, plan, _, _) = load("ALLOCATION_PLANNER = Y\nPLAN = Y", "PLAN = N", "");
        assert_eq!((reserve, plan), (None, None), "PLAN = N in the queue");
        let (reserve, plan, _, _) = load("ALLOCATION_PLANNER = Y", "", "");
        assert_eq!((reserve, plan), (None, None), "PLAN defaults to N");
    }

    #[test]
    fn plan_without_the_planner_is_ignored_with_a_warning() {
        let (reserve, plan, _, warnings) = load("PLAN = Y", "PLAN = DELAY[5]", "");
        assert_eq!((reserve, plan), (None, None));
        assert!(
            warnings.contains("lsb.params:2:8: warning: PLAN applies only with ALLOCATION_PLANNER=Y"),
            "{warnings}"
        );
        assert!(warnings.contains("lsb.queues:4:8: warning: queue `q`: PLAN applies only"), "{warnings}");
        let (_, _, _, warnings) = load("ALLOCATION_PLANNER = Y\nPLAN = \"RSCHED_TIME[0]\"", "", "");
        assert!(warnings.contains("RSCHED_TIME is not applied"), "{warnings}");
    }

    /// `bparams -a` shows them as written, and what it shows reads back.
    #[test]
    fn plans_are_shown_as_written() {
        let files =
            files("ALLOCATION_PLANNER = Y\nPLAN = \"MAX_JOBS[2] DELAY[5]\"", "", "LSB_TIME_RESERVE_NUMJOBS=3\n");
        let (config, _) = load_texts(&files).expect("a valid configuration");
        let shown = crate::lsf::params::shown(&config.params);
        let get = |k: &str| shown.iter().find(|s| s.0 == k).map(|s| s.1.as_str());
        assert_eq!(get("ALLOCATION_PLANNER"), Some("Y"));
        assert_eq!(get("PLAN"), Some("DELAY[5] MAX_JOBS[2]"));
        assert_eq!(get("LSB_TIME_RESERVE_NUMJOBS"), Some("3"));
        for text in ["Y", "N", "DELAY[5] MAX_JOBS[2]", "RSCHED_TIME[0]"] {
            let v = crate::lsf::values::parse_all(crate::lsf::values::plan, text).expect("a plan");
            assert_eq!(v.to_string(), text);
        }
        let shown = crate::lsf::params::shown(&crate::model::Params::default());
        assert!(!shown.iter().any(|s| s.0 == "PLAN" || s.0 == "ALLOCATION_PLANNER"), "shown only when set");
    }

    #[test]
    fn bad_plans_are_refused_where_they_are_written() {
        for (text, col, what) in [
            ("PLAN = MAYBE", 8, "expected `Y`, `N` or `DELAY[minutes]"),
            ("PLAN = DELAY[0]", 14, "a positive whole number"),
            ("PLAN = \"MAX_JOBS[2] DELAY[x]\"", 27, "a positive whole number"),
            ("PLAN = \"DELAY[1]", 17, "expected `\"`"),
            ("PLAN = MAX_JOBS 3", 17, "expected `[`, found `3`"),
        ] {
            let e = errors("ALLOCATION_PLANNER = Y", text, "");
            assert!(e.contains(&format!("lsb.queues:4:{col}: error: PLAN: ")) && e.contains(what), "{text}: {e}");
        }
    }
}
