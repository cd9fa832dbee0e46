//! Preemptive scheduling (`PREEMPTION` of lsb.queues, `PREEMPT_FOR` of
//! lsb.params; spec 004, "Optimized Preemption of Parallel Jobs"): which
//! queues preempt which, which jobs are suspended and how many, what a
//! suspended job's slots are for, and when it is resumed.

use allot_engine::shares::NodeId;
use allot_engine::{Decision, Engine, Event, HostIdx, JobId, JobSpec, PendingReason, Slots, Time};
use allot_sim::testing::engine_from;

fn queue(name: &str, priority: i32, extra: &str) -> String {
    format!("Begin Queue\nQUEUE_NAME = {name}\nPRIORITY = {priority}\n{extra}\nEnd Queue\n")
}

fn engine(hosts: &str, queues: &str, params: &str) -> Engine {
    let params = format!("Begin Parameters\n{params}\nEnd Parameters\n");
    engine_from(&[("lsb.hosts", hosts), ("lsb.queues", queues), ("lsb.params", &params)])
}

const ONE_HOST_8: &str = "Begin Host\nHOST_NAME MXJ\nh1 8\nEnd Host\n";

fn submit(e: &mut Engine, t: u64, user: &str, queue: &str, slots: u32) -> JobId {
    let spec = JobSpec { user: user.into(), queue: Some(queue.into()), slots, ..JobSpec::default() };
    e.apply(Time(t), &Event::Submit(spec)).expect("accepted").expect("id")
}

fn finish(e: &mut Engine, t: u64, job: JobId) {
    e.apply(Time(t), &Event::Finish { job, cpu_time: 0.0, exit: 0 }).expect("ends");
}

/// The jobs suspended, resumed and started by a pass, in order.
fn sorted(d: &[Decision]) -> (Vec<JobId>, Vec<JobId>, Vec<JobId>) {
    let (mut s, mut r, mut st) = (Vec::new(), Vec::new(), Vec::new());
    for x in d {
        match x {
            Decision::Suspend { job, .. } => s.push(*job),
            Decision::Resume { job } => r.push(*job),
            Decision::Start { job, .. } => st.push(*job),
            Decision::Kill { .. } | Decision::Grow { .. } => {}
        }
    }
    (s, r, st)
}

/// The spec's small-jobs-under-a-large-one situation: `low` fills the
/// 8-slot host with jobs of 4, 2, 1 and 1 slots (submitted in that
/// order), and a 4-slot job of the preemptive queue `high` comes.
fn parallel_over_smaller(preempt_for: &str) -> (Engine, [JobId; 4], JobId, Vec<Decision>) {
    let queues = queue("high", 40, "PREEMPTION = PREEMPTIVE") + &queue("low", 20, "");
    let mut e = engine(ONE_HOST_8, &queues, preempt_for);
    let low = [4, 2, 1, 1].map(|n| submit(&mut e, 0, "u", "low", n));
    assert_eq!(sorted(&e.schedule(Time(0))).2, low, "the low jobs fill the host");
    let high = submit(&mut e, 10, "v", "high", 4);
    let d = e.schedule(Time(10));
    (e, low, high, d)
}

#[test]
fn without_mini_job_a_parallel_job_preempts_one_job_per_slot_it_lacks() {
    let (_, low, high, d) = parallel_over_smaller("");
    let (suspended, _, started) = sorted(&d);
    // The last submitted first, one per slot lacking: all four, where the
    // last three (4 slots) would have done.
    assert_eq!(suspended, [low[3], low[2], low[1], low[0]]);
    assert_eq!(started, [high]);
    assert_eq!(d.last(), Some(&Decision::Start { job: high, alloc: vec![(HostIdx(0), Slots(4))] }));
    assert!(d.iter().all(|x| !matches!(x, Decision::Suspend { by, .. } if *by != high)), "{d:?}");
}

#[test]
fn an_over_preempted_job_resumes_a_cycle_later() {
    let (mut e, low, _, _) = parallel_over_smaller("");
    assert_eq!(e.next_wakeup(), Some(Time(70)), "MBD_SLEEP_TIME after");
    assert_eq!(sorted(&e.schedule(Time(70))), (vec![], vec![low[0]], vec![]), "its 4 slots were not needed");
    assert!(e.preempted_by(low[1]).is_some());
}

#[test]
fn mini_job_preempts_only_enough_jobs() {
    let (_, low, high, d) = parallel_over_smaller("PREEMPT_FOR = MINI_JOB");
    let (suspended, _, started) = sorted(&d);
    // 1 + 1 + 2 slots: three jobs, the 4-slot one keeps running.
    assert_eq!(suspended, [low[3], low[2], low[1]]);
    assert_eq!(started, [high]);
}

#[test]
fn optimal_mini_job_preempts_the_fewest_jobs() {
    let (_, low, high, d) = parallel_over_smaller("PREEMPT_FOR = OPTIMAL_MINI_JOB");
    let (suspended, _, started) = sorted(&d);
    assert_eq!(suspended, [low[0]], "the one 4-slot job");
    assert_eq!(started, [high]);
}

/// Across two hosts of 4 slots, full of `low` jobs: J1 of 4 slots, 2 on
/// each host (`span[ptile=2]`); J2 and J3 of 1 slot on hostA; J4 of 2 on
/// hostB. A `high` job of 4 slots, 2 per host, comes. Without MINI_JOB
/// one job per slot lacking: J3 and J2 on hostA, then J4 and J1 on hostB
/// (4). MINI_JOB preempts only enough on each host in turn: J3, J2, J4
/// (3). OPTIMAL_MINI_JOB the fewest: J1 alone frees 2 on each (1).
#[test]
fn across_two_hosts_each_mode_preempts_as_many_as_it_says() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nhostA 4\nhostB 4\nEnd Host\n";
    let queues = queue("high", 40, "PREEMPTION = PREEMPTIVE") + &queue("low", 20, "");
    for (params, expect) in
        [("", vec![3, 2, 4, 1]), ("PREEMPT_FOR = MINI_JOB", vec![3, 2, 4]), ("PREEMPT_FOR = OPTIMAL_MINI_JOB", vec![1])]
    {
        let mut e = engine(hosts, &queues, params);
        let on = |host: &str, n: u32, r: Option<&str>| JobSpec {
            user: "u".into(),
            queue: Some("low".into()),
            slots: n,
            hosts: if host.is_empty() {
                Vec::new()
            } else {
                vec![allot_engine::model::HostPick { name: host.into(), first: false, preference: None }]
            },
            res_req: r.map(|r| allot_config::resreq::parse(r).expect("resreq")),
            ..JobSpec::default()
        };
        let mut jobs = Vec::new();
        for spec in [on("", 4, Some("span[ptile=2]")), on("hostA", 1, None), on("hostA", 1, None), on("hostB", 2, None)]
        {
            jobs.push(e.apply(Time(0), &Event::Submit(spec)).expect("accepted").expect("id"));
            e.schedule(Time(0));
        }
        assert_eq!(e.preempted_jobs().len(), 0);
        assert!(jobs.iter().all(|&j| e.job_alloc(j).is_some()), "{params}: the low jobs fill both hosts");
        let spec = JobSpec {
            user: "v".into(),
            queue: Some("high".into()),
            slots: 4,
            res_req: Some(allot_config::resreq::parse("span[ptile=2]").expect("resreq")),
            ..JobSpec::default()
        };
        let high = e.apply(Time(10), &Event::Submit(spec)).expect("accepted").expect("id");
        let (suspended, _, started) = sorted(&e.schedule(Time(10)));
        let want: Vec<JobId> = expect.iter().map(|&k| jobs[k - 1]).collect();
        assert_eq!((suspended, started), (want, vec![high]), "{params}");
    }
}

#[test]
fn a_sequential_job_preempts_one_job_whatever_the_keywords() {
    for params in ["", "PREEMPT_FOR = MINI_JOB", "PREEMPT_FOR = OPTIMAL_MINI_JOB"] {
        let queues = queue("high", 40, "PREEMPTION = PREEMPTIVE") + &queue("low", 20, "");
        let mut e = engine(ONE_HOST_8, &queues, params);
        let low: Vec<JobId> = (0..8).map(|_| submit(&mut e, 0, "u", "low", 1)).collect();
        e.schedule(Time(0));
        let high = submit(&mut e, 5, "v", "high", 1);
        let (suspended, _, started) = sorted(&e.schedule(Time(5)));
        assert_eq!((suspended, started), (vec![low[7]], vec![high]), "{params}");
    }
}

#[test]
fn suspended_slots_go_only_to_jobs_that_may_preempt_and_the_job_resumes_when_they_free() {
    let (mut e, low, high, _) = parallel_over_smaller("PREEMPT_FOR = OPTIMAL_MINI_JOB");
    assert_eq!(e.preempted_by(low[0]), Some(high));
    // A low job waits: the suspended job's slots are not free to it.
    let waiting = submit(&mut e, 20, "u", "low", 1);
    assert_eq!(sorted(&e.schedule(Time(20))), (vec![], vec![], vec![]));
    // A second high job takes the suspended job's slots, preempting none.
    finish(&mut e, 30, high);
    let second = submit(&mut e, 30, "v", "high", 4);
    assert_eq!(sorted(&e.schedule(Time(30))), (vec![], vec![], vec![second]), "no resume to suspend again");
    assert_eq!(e.preempted_by(low[0]), Some(high), "still suspended");
    finish(&mut e, 40, second);
    let (suspended, resumed, started) = sorted(&e.schedule(Time(40)));
    assert_eq!((suspended, resumed, started), (vec![], vec![low[0]], vec![]), "resumed before the waiting job");
    assert!(e.is_running(low[0]) && e.preempted_by(low[0]).is_none());
    finish(&mut e, 50, low[1]);
    assert_eq!(sorted(&e.schedule(Time(50))).2, [waiting]);
}

#[test]
fn preemptable_lists_and_preference_levels_choose_the_queues() {
    // LSF's example: high preempts all; medium preempts normal and low,
    // low first (+1); normal preempts low and is preempted by high and
    // medium only; low, with no PREEMPTION, by every preemptive queue.
    let queues = queue("high", 99, "PREEMPTION = PREEMPTIVE")
        + &queue("medium", 10, "PREEMPTION = PREEMPTIVE[normal low+1]")
        + &queue("normal", 5, "PREEMPTION = PREEMPTIVE[low] PREEMPTABLE[high medium]")
        + &queue("low", 1, "")
        + &queue("other", 50, "");
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 2\nEnd Host\n";
    let mut e = engine(hosts, &queues, "");
    let n = submit(&mut e, 0, "u", "normal", 1);
    let l = submit(&mut e, 0, "u", "low", 1);
    assert_eq!(sorted(&e.schedule(Time(0))).2, [n, l]);
    // `other` is neither preemptive nor is `normal` preemptable by it.
    let o = submit(&mut e, 1, "u", "other", 1);
    assert_eq!(sorted(&e.schedule(Time(1))), (vec![], vec![], vec![]));
    // medium prefers low (+1) although normal was submitted... first.
    e.apply(Time(2), &Event::Finish { job: o, cpu_time: 0.0, exit: 0 }).expect("removed");
    let m = submit(&mut e, 2, "u", "medium", 1);
    assert_eq!(sorted(&e.schedule(Time(2))), (vec![l], vec![], vec![m]));
    // normal cannot preempt normal, nor medium.
    let n2 = submit(&mut e, 3, "u", "normal", 1);
    assert_eq!(sorted(&e.schedule(Time(3))), (vec![], vec![], vec![]));
    // high preempts normal (lower priority than medium: preempted first).
    let h = submit(&mut e, 4, "u", "high", 1);
    assert_eq!(sorted(&e.schedule(Time(4))), (vec![n], vec![], vec![h]));
    let _ = n2;
}

#[test]
fn least_run_time_preempts_the_job_started_last() {
    let queues = queue("high", 40, "PREEMPTION = PREEMPTIVE") + &queue("low", 20, "");
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 2\nEnd Host\n";
    for (params, expect) in [("", 1), ("PREEMPT_FOR = LEAST_RUN_TIME", 0)] {
        let mut e = engine(hosts, &queues, params);
        let first = submit(&mut e, 0, "u", "low", 1);
        let second = submit(&mut e, 0, "u", "low", 1);
        let third = submit(&mut e, 0, "u", "low", 1);
        e.apply(Time(0), &Event::Hold(first)).expect("pending");
        assert_eq!(sorted(&e.schedule(Time(0))).2, [second, third]);
        // The first submitted starts last.
        finish(&mut e, 100, second);
        e.apply(Time(100), &Event::Release(first)).expect("held");
        assert_eq!(sorted(&e.schedule(Time(100))).2, [first]);
        let high = submit(&mut e, 200, "v", "high", 1);
        let victims = [first, third];
        assert_eq!(sorted(&e.schedule(Time(200))), (vec![victims[expect]], vec![], vec![high]), "{params}");
    }
}

#[test]
fn lower_priority_and_plain_queues_do_not_preempt() {
    let queues = queue("high", 40, "") + &queue("low", 20, "PREEMPTION = PREEMPTIVE");
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 1\nEnd Host\n";
    let mut e = engine(hosts, &queues, "");
    let h = submit(&mut e, 0, "u", "high", 1);
    e.schedule(Time(0));
    submit(&mut e, 1, "u", "low", 1);
    assert_eq!(sorted(&e.schedule(Time(1))), (vec![], vec![], vec![]));
    assert!(e.is_running(h));
}

#[test]
fn a_suspended_job_s_run_limit_counts_only_its_running_time() {
    let queues = queue("high", 40, "PREEMPTION = PREEMPTIVE") + &queue("low", 20, "RUNLIMIT = 10");
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 1\nEnd Host\n";
    let mut e = engine(hosts, &queues, "");
    let low = submit(&mut e, 0, "u", "low", 1);
    e.schedule(Time(0));
    let high = submit(&mut e, 100, "v", "high", 1);
    assert_eq!(sorted(&e.schedule(Time(100))), (vec![low], vec![], vec![high]));
    finish(&mut e, 400, high);
    assert_eq!(sorted(&e.schedule(Time(400))).1, [low]);
    // 100 s run before, 500 s after: killed at 900, not at 600.
    assert!(e.schedule(Time(600)).is_empty());
    assert_eq!(e.job_run_limit(low), Some(600));
    assert_eq!(e.schedule(Time(900)), [Decision::Kill { job: low, reason: allot_engine::KillReason::RunLimit }],);
}

#[test]
fn a_suspended_job_is_charged_no_run_time_and_counts_in_queue_limits_not_user_limits() {
    let queues = queue("high", 40, "PREEMPTION = PREEMPTIVE")
        + &queue("low", 20, "QJOB_LIMIT = 1\nFAIRSHARE = USER_SHARES[[default, 1]]");
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 1\nh2 1\nEnd Host\n";
    let users = "Begin User\nUSER_NAME MAX_JOBS\nu 1\nEnd User\n";
    let params = "Begin Parameters\nEnd Parameters\n";
    let mut e =
        engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues), ("lsb.users", users), ("lsb.params", params)]);
    let low = submit(&mut e, 0, "u", "low", 1);
    let blocker = submit(&mut e, 0, "v", "high", 1);
    assert_eq!(sorted(&e.schedule(Time(0))).2, [blocker, low]);
    let high = submit(&mut e, 100, "v", "high", 1);
    assert_eq!(sorted(&e.schedule(Time(100))), (vec![low], vec![], vec![high]));
    let tree = &e.fairshare().policies[0].tree;
    let u = tree.child(NodeId::ROOT, "u").expect("u");
    let at = |e: &Engine, t: u64| e.fairshare().policies[0].tree.usage(u, Time(t));
    assert_eq!(at(&e, 500).started, 0, "no slots charged while suspended");
    let ran = at(&e, 500).run_time + at(&e, 500).hist_run_time;
    assert!(ran <= 100.0 + 1e-9, "no run time while suspended: {ran}");
    // u's MAX_JOBS = 1 does not count the suspended job; QJOB_LIMIT = 1 does.
    let other = JobSpec { user: "u".into(), queue: Some("high".into()), slots: 1, ..JobSpec::default() };
    let uh = e.apply(Time(500), &Event::Submit(other)).expect("accepted").expect("id");
    let waiting = submit(&mut e, 500, "w", "low", 1);
    finish(&mut e, 500, blocker);
    let (_, _, started) = sorted(&e.schedule(Time(500)));
    assert_eq!(started, [uh], "u's own high job starts beside its suspended one");
    assert!(
        matches!(e.pending_reason(waiting, Time(500)), Some(PendingReason::QueueLimit { limit: 1, .. })),
        "the queue's one job is the suspended one: {:?}",
        e.pending_reason(waiting, Time(500))
    );
    finish(&mut e, 600, high);
    let (_, resumed, _) = sorted(&e.schedule(Time(600)));
    assert_eq!(resumed, [low]);
    assert_eq!(at(&e, 700).started, 1, "charged again once resumed");
}

#[test]
fn the_simulator_delays_a_preempted_job_s_end_by_its_suspended_time() {
    use allot_engine::shares::priority::PriorityInputs;
    use allot_sim::report::{jobs_csv, share_tables_json, summary};
    use allot_sim::sim::{SimOptions, run};
    let text = r#"{"submit": 0, "user": "u", "runtime": 100, "bsub": "-q low ./long"}
{"submit": 30, "user": "v", "runtime": 50, "bsub": "-q high ./urgent"}
"#;
    let w = allot_sim::jsonl::read(text);
    let queues = queue("high", 40, "PREEMPTION = PREEMPTIVE") + &queue("low", 20, "");
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 1\nEnd Host\n";
    let mut e = engine(hosts, &queues, "");
    let report = |e: &Engine, t: Time| {
        share_tables_json(e.fairshare().policies.iter().map(|p| &p.tree), t, &PriorityInputs::default())
    };
    let out = run(&mut e, &w, &SimOptions::default(), &report, &mut |_| {});
    // The long job runs 0-30 and 80-150: its 100 s, 50 s suspended.
    assert_eq!(
        jobs_csv(&out.records),
        "id,user,queue,submit,start,end,slots,hosts,exit,priority\n\
         2,v,high,30,30,80,1,h1*1,0,\n\
         1,u,low,0,0,150,1,h1*1,0,\n"
    );
    assert_eq!(out.records[1].suspended, 50);
    let s = summary("lsf", &w, &out, &e);
    assert_eq!(s["preempted"].as_u64(), Some(1));
    // 150 slot-seconds used of 150: the suspended time is not counted twice.
    assert!((s["utilization"].as_f64().expect("number") - 1.0).abs() < 1e-12, "{}", s["utilization"]);
}

/// MAX_JOB_PREEMPT (lsb.params; a queue's own wins): a job preempted that
/// many times is not preempted again.
#[test]
fn max_job_preempt_protects_a_job_preempted_often_enough() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 1\nEnd Host\n";
    for (params, queue, again) in
        [("", "", true), ("MAX_JOB_PREEMPT = 1", "", false), ("MAX_JOB_PREEMPT = 1", "MAX_JOB_PREEMPT = 2", true)]
    {
        let queues = queue_text(&[("high", 40, "PREEMPTION = PREEMPTIVE"), ("low", 20, queue)]);
        let mut e = engine(hosts, &queues, params);
        let low = submit(&mut e, 0, "u", "low", 1);
        e.schedule(Time(0));
        let h1 = submit(&mut e, 10, "v", "high", 1);
        assert_eq!(sorted(&e.schedule(Time(10))).0, [low]);
        finish(&mut e, 20, h1);
        assert_eq!(sorted(&e.schedule(Time(20))).1, [low]);
        let h2 = submit(&mut e, 30, "v", "high", 1);
        let (suspended, _, started) = sorted(&e.schedule(Time(30)));
        assert_eq!(!suspended.is_empty(), again, "{params} / {queue}");
        assert_eq!(started == [h2], again);
    }
}

/// NO_PREEMPT_RUN_TIME and NO_PREEMPT_FINISH_TIME (minutes, or a share of
/// the run limit): a job that has run that long, or ends that soon, is
/// passed over for another.
#[test]
fn jobs_run_long_or_nearly_done_are_not_preempted() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 2\nEnd Host\n";
    let queues = queue_text(&[("high", 40, "PREEMPTION = PREEMPTIVE"), ("low", 20, "RUNLIMIT = 10")]);
    // The old job (submitted last: the one preempted by default) started
    // at 0; the young one at 400. At 500 the old has run 500 s of its 600
    // (100 left), the young 100 s (500 left).
    for (params, victim) in [
        ("", "old"),
        ("NO_PREEMPT_RUN_TIME = 2", "young"),
        ("NO_PREEMPT_RUN_TIME = 20%", "young"),
        ("NO_PREEMPT_FINISH_TIME = 8", "young"),
        ("NO_PREEMPT_FINISH_TIME = 1", "old"),
        ("NO_PREEMPT_FINISH_TIME = 5\nNO_PREEMPT_RUN_TIME = 1", "none"),
    ] {
        let mut e = engine(hosts, &queues, params);
        let young = submit(&mut e, 0, "u", "low", 1);
        e.apply(Time(0), &Event::Hold(young)).expect("pending");
        let old = submit(&mut e, 0, "u", "low", 1);
        e.schedule(Time(0));
        e.apply(Time(400), &Event::Release(young)).expect("held");
        e.schedule(Time(400));
        let high = submit(&mut e, 500, "v", "high", 1);
        let (suspended, _, started) = sorted(&e.schedule(Time(500)));
        let expect: Vec<JobId> = match victim {
            "old" => vec![old],
            "young" => vec![young],
            _ => vec![],
        };
        assert_eq!(suspended, expect, "{params}");
        assert_eq!(started == [high], !expect.is_empty(), "{params}");
    }
}

/// PREEMPT_JOBTYPE = BACKFILL: a job that backfilled reserved slots may be
/// preempted (without it, never).
#[test]
fn backfill_jobs_are_preempted_only_with_preempt_jobtype_backfill() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 2\nEnd Host\n";
    let queues = queue_text(&[
        ("high", 40, "PREEMPTION = PREEMPTIVE"),
        ("low", 20, "SLOT_RESERVE = MAX_RESERVE_TIME[100]\nBACKFILL = Y\nRUNLIMIT = 100"),
    ]);
    for (params, backfiller_goes) in [("", false), ("PREEMPT_JOBTYPE = BACKFILL", true)] {
        let mut e = engine(hosts, &queues, params);
        let long = submit(&mut e, 0, "u", "low", 1);
        e.schedule(Time(0));
        // The 2-slot job reserves h1's other slot; a short job backfills it.
        let wide = submit(&mut e, 1, "u", "low", 2);
        e.schedule(Time(1));
        let short = JobSpec {
            user: "u".into(),
            queue: Some("low".into()),
            slots: 1,
            run_limit: Some(60),
            ..JobSpec::default()
        };
        let short = e.apply(Time(2), &Event::Submit(short)).expect("accepted").expect("id");
        assert_eq!(sorted(&e.schedule(Time(2))).2, [short], "it backfills");
        let high = submit(&mut e, 3, "v", "high", 1);
        let (suspended, _, started) = sorted(&e.schedule(Time(3)));
        let victim = if backfiller_goes { short } else { long };
        assert_eq!((suspended, started), (vec![victim], vec![high]), "{params}");
        let _ = wide;
    }
}

fn queue_text(qs: &[(&str, i32, &str)]) -> String {
    qs.iter().map(|(n, p, x)| queue(n, *p, x)).collect()
}

/// A `-n min,max` job that preempts takes no more than its limits allow,
/// as any start does: under QJOB_LIMIT = 1 it preempts one job, not two.
#[test]
fn a_preempting_job_s_range_is_bound_by_its_limits() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nh1 2\nEnd Host\n";
    let queues = queue_text(&[("high", 40, "PREEMPTION = PREEMPTIVE\nQJOB_LIMIT = 1"), ("low", 20, "")]);
    let mut e = engine(hosts, &queues, "PREEMPT_FOR = MINI_JOB");
    let low = [submit(&mut e, 0, "u", "low", 1), submit(&mut e, 0, "u", "low", 1)];
    e.schedule(Time(0));
    let spec =
        JobSpec { user: "v".into(), queue: Some("high".into()), slots: 1, max_slots: Some(2), ..JobSpec::default() };
    let high = e.apply(Time(5), &Event::Submit(spec)).expect("accepted").expect("id");
    let d = e.schedule(Time(5));
    assert_eq!(sorted(&d).0, [low[1]]);
    assert_eq!(d.last(), Some(&Decision::Start { job: high, alloc: vec![(HostIdx(0), Slots(1))] }));
}
