//! The multifactor policies in the dispatch pass (issue 6), driven from
//! configuration text: jobs in spec 002's priority order, usage charged
//! while jobs run, associations chosen by `-G`, and jobs of users without
//! one refused.

mod common;

use allot_engine::{Engine, Event, JobSpec, Rejection, Time};
use allot_sim::testing::engine_from;
use common::*;

const ONE_CPU: &str = "Begin Host\nHOST_NAME MXJ\nhostA 1\nEnd Host\n";
const NORMAL: &str = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n";

/// Accounts `phys` (users alice and bob) and `chem` (carol, and bob
/// again), 1 share each.
const DUMP: &str = "Parent - 'root'\nAccount - 'phys'\nAccount - 'chem'\n\
                    Parent - 'phys'\nUser - 'alice'\nUser - 'bob'\n\
                    Parent - 'chem'\nUser - 'carol'\nUser - 'bob'\n";

fn engine(policy: &str, weights: &str) -> Engine {
    let toml = format!(
        "[priority]\npolicy = \"{policy}\"\naccounts = \"assoc.cfg\"\nmax_wait = 1000\n[priority.weights]\n{weights}"
    );
    engine_from(&[("lsb.hosts", ONE_CPU), ("lsb.queues", NORMAL), ("allot.toml", &toml), ("assoc.cfg", DUMP)])
}

fn by(user: &str, group: Option<&str>) -> JobSpec {
    JobSpec { user: user.into(), slots: 1, group: group.map(str::to_string), ..JobSpec::default() }
}

/// The one slot busy with alice's long job; alice, then bob (chem), then
/// carol submit. With the fair share weighing most, the next job is one
/// of chem's (phys has all the usage: fair tree ranks chem's users first,
/// tied as neither used anything), bob's as he waited longer, never
/// alice's, though she asked first; with only the wait time weighing,
/// the order is first come, first served.
#[test]
fn the_priority_orders_every_queue_and_fair_share_outranks_waiting() {
    for (weights, expect_first) in [("fair_share = 10000\nwait_time = 1", "bob"), ("wait_time = 1000", "alice")] {
        let mut e = engine("slurm-fairtree", weights);
        let long = submit(&mut e, Time(0), by("alice", None));
        assert_eq!(pass(&mut e, Time(0)), [long.0]);
        let a = submit(&mut e, Time(100), by("alice", None));
        let b = submit(&mut e, Time(110), by("bob", Some("chem")));
        let c = submit(&mut e, Time(120), by("carol", None));
        assert_eq!(pass(&mut e, Time(200)), Vec::<u64>::new(), "the slot is busy");
        let (pa, fa) = e.multifactor_priority(a).expect("a priority");
        let (pc, fc) = e.multifactor_priority(c).expect("a priority");
        // Waited 100 and 80 of max_wait 1000.
        assert_eq!((fa.wait_time, fc.wait_time), (0.1, 0.08));
        end(&mut e, Time(300), long);
        let next = pass(&mut e, Time(300));
        let first = match next[..] {
            [id] if id == a.0 => "alice",
            [id] if id == b.0 => "bob",
            [id] if id == c.0 => "carol",
            _ => panic!("one job starts: {next:?}"),
        };
        assert_eq!(first, expect_first, "{weights}: alice {pa} {fa:?}, carol {pc} {fc:?}");
    }
}

/// Usage counts while a job runs: alice's pending job loses fair-share
/// against carol's as alice's running job goes on (classic: F falls as
/// her usage grows), before any job ends.
#[test]
fn running_jobs_are_charged_as_they_run() {
    let mut e = engine("slurm-classic", "fair_share = 10000");
    let carol_first = submit(&mut e, Time(0), by("carol", None));
    assert_eq!(pass(&mut e, Time(0)), [carol_first.0]);
    let alice = submit(&mut e, Time(10), by("alice", None));
    let _ = pass(&mut e, Time(10));
    let early = e.multifactor_priority(alice).expect("priority").1.fair_share;
    // alice used nothing; carol's running job is all the usage so far.
    assert_eq!(early, 1.0);
    e.apply(Time(500), &Event::Finish { job: carol_first, cpu_time: 0.0, exit: 0 }).expect("ends");
    let started = pass(&mut e, Time(500));
    assert_eq!(started, [alice.0]);
    let carol = submit(&mut e, Time(600), by("carol", None));
    let _ = pass(&mut e, Time(600));
    let f600 = e.multifactor_priority(carol).expect("priority").1.fair_share;
    let _ = pass(&mut e, Time(5000));
    let f5000 = e.multifactor_priority(carol).expect("priority").1.fair_share;
    // As alice's job runs, carol's share of all usage falls, her factor
    // rises: usage charged while alice's job runs, not at its end.
    assert!(f5000 > f600, "{f600} -> {f5000}");
}

/// `-G` (else `-P`) names the account to charge; a user of no account, or
/// not of the account named, is refused.
#[test]
fn associations_come_from_g_and_strangers_are_refused() {
    let mut e = engine("flux-accounting", "fair_share = 1");
    assert!(e.apply(Time(0), &Event::Submit(by("bob", Some("chem")))).is_ok());
    assert!(e.apply(Time(0), &Event::Submit(by("bob", None))).is_ok(), "his first account, phys");
    // -P names the account when -G does not.
    let project = |p: &str| JobSpec { project: Some(p.into()), ..by("alice", None) };
    assert!(e.apply(Time(0), &Event::Submit(project("phys"))).is_ok());
    let refused = e.apply(Time(0), &Event::Submit(project("chem"))).expect_err("not in chem");
    assert_eq!(refused.to_string(), "user `alice` has no association in account `chem`");
    let refused = e.apply(Time(0), &Event::Submit(by("dave", None))).expect_err("no association");
    assert_eq!(refused, Rejection::NoAssociation { user: "dave".into(), account: None });
    assert_eq!(refused.to_string(), "user `dave` has no association");
    let refused = e.apply(Time(0), &Event::Submit(by("alice", Some("chem")))).expect_err("not in chem");
    assert_eq!(refused.to_string(), "user `alice` has no association in account `chem`");
    assert_eq!(e.multifactor_policy(), Some("flux-accounting"));
}

/// A reconfiguration keeps the usage history by account and user, and
/// the policy may change with it.
#[test]
fn a_reconfiguration_keeps_the_usage() {
    let mut e = engine("slurm-classic", "fair_share = 10000");
    let first = submit(&mut e, Time(0), by("alice", None));
    assert_eq!(pass(&mut e, Time(0)), [first.0]);
    end(&mut e, Time(1000), first);
    let next = allot_sim::testing::engine_config_from(&[
        ("lsb.hosts", ONE_CPU),
        ("lsb.queues", NORMAL),
        (
            "allot.toml",
            "[priority]\npolicy = \"slurm-fairtree\"\naccounts = \"assoc.cfg\"\n[priority.weights]\nfair_share = 1\n",
        ),
        ("assoc.cfg", DUMP),
    ]);
    e.apply(Time(1000), &Event::Reconfigure(Box::new(next))).expect("reconfigured");
    let hold = submit(&mut e, Time(1000), by("carol", None));
    assert_eq!(pass(&mut e, Time(1000)), [hold.0]);
    let a = submit(&mut e, Time(1001), by("alice", None));
    let c = submit(&mut e, Time(1001), by("carol", None));
    let _ = pass(&mut e, Time(1001));
    let fa = e.multifactor_priority(a).expect("priority").1.fair_share;
    let fc = e.multifactor_priority(c).expect("priority").1.fair_share;
    assert!(fc > fa, "alice's 1000 s before the reconfiguration still count: {fa} vs {fc}");
    assert_eq!(e.multifactor_policy(), Some("slurm-fairtree"));
}

/// QoS levels and the user factor (spec 002): expedite only for whom it
/// is granted, standby exempt from the queue's RUNLIMIT and PROCLIMIT
/// maximum, a user factor from 0 to 1 that lowers the job's priority;
/// on an LSF cluster neither option is taken.
#[test]
fn qos_levels_and_the_user_factor() {
    let queues = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nRUNLIMIT = 10\nPROCLIMIT = 1\nEnd Queue\n";
    let toml = "[priority]\npolicy = \"slurm-classic\"\naccounts = \"assoc.cfg\"\n\
                [priority.weights]\nqos = 1000\nuser = 100\n\
                [[priority.qos]]\nname = \"expedite\"\npriority = 2\nusers = [\"carol\"]\n\
                [[priority.qos]]\nname = \"normal\"\npriority = 1\n\
                [[priority.qos]]\nname = \"standby\"\npriority = 0\nexempt = true\n";
    let hosts = "Begin Host\nHOST_NAME MXJ\nhostA 2\nEnd Host\n";
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", queues), ("allot.toml", toml), ("assoc.cfg", DUMP)]);
    let with = |user: &str, qos: Option<&str>, uf: Option<f64>| JobSpec {
        qos: qos.map(str::to_string),
        user_factor: uf,
        ..by(user, None)
    };
    let refused =
        |e: &mut Engine, spec: JobSpec| e.apply(Time(0), &Event::Submit(spec)).expect_err("refused").to_string();
    assert_eq!(
        refused(&mut e, with("alice", Some("expedite"), None)),
        "-qos expedite: user `alice` may not use this QoS level"
    );
    assert_eq!(refused(&mut e, with("alice", Some("gold"), None)), "-qos gold: no such QoS level");
    assert_eq!(refused(&mut e, with("alice", None, Some(1.5))), "-uf 1.5: the user factor is a number from 0 to 1");
    // RUNLIMIT 10 minutes and PROCLIMIT 1 hold for normal jobs, not standby.
    let long = JobSpec { run_limit: Some(3600), ..with("alice", None, None) };
    assert_eq!(refused(&mut e, long), "-W 3600: more than the RUNLIMIT of queue `normal` (600 s)");
    let wide = JobSpec { slots: 2, ..with("alice", None, None) };
    assert!(refused(&mut e, wide).contains("PROCLIMIT"));
    let standby =
        submit(&mut e, Time(0), JobSpec { run_limit: Some(3600), slots: 2, ..with("alice", Some("standby"), None) });
    assert_eq!(e.job_run_limit(standby), Some(3600), "its own limit, not the queue's 10 minutes");
    // Priorities: expedite 1000 * 1 + 100 * 1; normal 500 + 100; normal
    // with -uf 0.25: 500 + 25; standby 0 + 100.
    let ex = submit(&mut e, Time(0), with("carol", Some("expedite"), None));
    let normal = submit(&mut e, Time(0), with("bob", None, None));
    let lowered = submit(&mut e, Time(0), with("bob", None, Some(0.25)));
    let order = pass(&mut e, Time(0));
    assert_eq!(order, [ex.0, normal.0], "two slots: expedite, then normal");
    assert_eq!(e.multifactor_priority(lowered).map(|p| p.0), Some(525.0));
    assert_eq!(e.multifactor_priority(standby).map(|p| p.0), Some(100.0));

    let mut lsf = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", queues)]);
    assert_eq!(
        refused(&mut lsf, with("alice", Some("standby"), None)),
        "-qos: the cluster's priority policy is lsf, which has no QoS or user factor"
    );
}

/// What a job holds is billed with `[priority.billing]`'s weights, as it
/// reports it. By hand, without decay: alice's `-n 2` job with
/// `rusage[mem=1024]` on one host starts at 0, billed 2 slots × 1 +
/// 1 GB × 2 + 1 node × 100 = 104 a second. At 100 it reports 3 GB in use
/// (2 + 6 + 100 = 108); at 200 it uses 512 MB, less than it reserved, so
/// 1 GB is billed again, and it holds 2 GPUs (+ 2 × 10: 124). At 300 it
/// reports 1,000 J at 0.5 and ends: 100 × 104 + 100 × 108 + 100 × 124 +
/// 500 = 34,100.
#[test]
fn memory_gpus_nodes_and_energy_are_billed_as_jobs_report_them() {
    let hosts = "Begin Host\nHOSTNAME model type server RESOURCES ncpus maxmem\nhostA ! LINUX 1 () 4 8192\nEnd Host\n";
    let toml = "[priority]\npolicy = \"slurm-classic\"\naccounts = \"assoc.cfg\"\nhalf_life = \"0\"\n\
                [priority.billing]\ncpu = 1.0\nmemory_gb = 2.0\ngpu = 10.0\nnode = 100.0\nenergy_joule = 0.5\n\
                [priority.weights]\nfair_share = 1000\n";
    let mut e =
        engine_from(&[("lsf.cluster.c", hosts), ("lsb.queues", NORMAL), ("allot.toml", toml), ("assoc.cfg", DUMP)]);
    let res = allot_config::resreq::parse("rusage[mem=1024]").expect("a requirement");
    let job = submit(&mut e, Time(0), JobSpec { slots: 2, res_req: Some(res), ..by("alice", None) });
    assert_eq!(pass(&mut e, Time(0)), [job.0]);
    let usage = |e: &Engine, t: u64| {
        let (_, tree, usage, _) = e.multifactor_inputs(Time(t)).expect("multifactor");
        usage[tree.assoc("phys", "alice").expect("alice in phys").0 as usize]
    };
    assert_eq!(usage(&e, 100), 10_400.0);
    e.apply(Time(100), &Event::Memory { job, mb: 3072.0 }).expect("applies");
    assert_eq!(usage(&e, 200), 10_400.0 + 10_800.0);
    e.apply(Time(200), &Event::Memory { job, mb: 512.0 }).expect("applies");
    e.apply(Time(200), &Event::Gpus { job, count: 2 }).expect("applies");
    assert_eq!(usage(&e, 300), 33_600.0);
    e.apply(Time(300), &Event::Energy { job, joules: 1000.0 }).expect("applies");
    end(&mut e, Time(300), job);
    assert_eq!(usage(&e, 1_000), 34_100.0);
    // A report about a job that is not running changes nothing.
    e.apply(Time(1_000), &Event::Gpus { job, count: 8 }).expect("applies");
    e.apply(Time(1_000), &Event::Energy { job, joules: 1e6 }).expect("applies");
    assert_eq!(usage(&e, 2_000), 34_100.0);
}

/// A replayed workload's jobs report what they used: `mem` and `gpus`
/// while they run, `energy` at their end. Without decay, memory billed
/// 1 per GB, GPUs 10 each, energy 0.01 per joule: alice's 100 s one-slot
/// job with 2,048 MB, 1 GPU and 5,000 J charges 100 × (1 + 2 + 10) + 50
/// = 1,350; carol's plain one, after it, 100.
#[test]
fn a_workload_reports_memory_gpus_and_energy() {
    let toml = "[priority]\npolicy = \"slurm-classic\"\naccounts = \"assoc.cfg\"\nhalf_life = \"0\"\n\
                [priority.billing]\nmemory_gb = 1.0\ngpu = 10.0\nenergy_joule = 0.01\n\
                [priority.weights]\nfair_share = 1000\n";
    let mut e =
        engine_from(&[("lsb.hosts", ONE_CPU), ("lsb.queues", NORMAL), ("allot.toml", toml), ("assoc.cfg", DUMP)]);
    let w = allot_sim::jsonl::read(
        "{\"submit\": 0, \"user\": \"alice\", \"runtime\": 100, \"mem\": 2048, \"gpus\": 1, \"energy\": 5000}\n\
         {\"submit\": 0, \"user\": \"carol\", \"runtime\": 100}\n",
    );
    assert!(w.skipped.is_empty(), "{:?}", w.skipped);
    let out = allot_sim::sim::run(
        &mut e,
        &w,
        &allot_sim::sim::SimOptions::default(),
        &|_, _| serde_json::Value::Null,
        &mut |_| {},
    );
    assert_eq!(out.records.len(), 2);
    let (_, tree, usage, _) = e.multifactor_inputs(Time(1_000)).expect("multifactor");
    let of = |account: &str, user: &str| usage[tree.assoc(account, user).expect("an association").0 as usize];
    assert_eq!((of("phys", "alice"), of("chem", "carol")), (1_350.0, 100.0));
}

/// `job_size = "nodes"`: on two 4-slot hosts (held busy), a pending
/// `-n 4` job fills one host (1/2), with `span[ptile=2]` both (1), and a
/// `-n 2` job one (1/2); by slots they are 4/8, 4/8 and 2/8.
#[test]
fn the_job_size_factor_counts_nodes_when_told() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nhostA 4\nhostB 4\nEnd Host\n";
    for (size_by, want) in [("nodes", [0.5, 1.0, 0.5]), ("slots", [0.5, 0.5, 0.25])] {
        let toml = format!(
            "[priority]\npolicy = \"slurm-classic\"\naccounts = \"assoc.cfg\"\njob_size = \"{size_by}\"\n\
             [priority.weights]\njob_size = 1000\n"
        );
        let mut e =
            engine_from(&[("lsb.hosts", hosts), ("lsb.queues", NORMAL), ("allot.toml", &toml), ("assoc.cfg", DUMP)]);
        let busy = submit(&mut e, Time(0), JobSpec { slots: 8, ..by("carol", None) });
        assert_eq!(pass(&mut e, Time(0)), [busy.0]);
        let ptile = allot_config::resreq::parse("span[ptile=2]").expect("a requirement");
        let jobs = [
            submit(&mut e, Time(1), JobSpec { slots: 4, ..by("alice", None) }),
            submit(&mut e, Time(1), JobSpec { slots: 4, res_req: Some(ptile), ..by("alice", None) }),
            submit(&mut e, Time(1), JobSpec { slots: 2, ..by("alice", None) }),
        ];
        let _ = pass(&mut e, Time(2));
        let got = jobs.map(|j| e.multifactor_priority(j).expect("a priority").1.job_size);
        assert_eq!(got, want, "{size_by}");
    }
}

/// Flux's half-life (spec 002: "a person who accrued a bunch of usage
/// weeks ago should receive slightly higher priority than the person who
/// accrued the same usage the day before"; "decay everyone's usage by
/// half over the course of a week", the default). alice runs 1,000 s in
/// the first week, carol the same a week later: two weeks in, alice's
/// usage is half carol's, to the digit, and her next job goes first.
/// With `reset = "weekly"`, both start the third week at 0.
#[test]
fn flux_half_life_decay_and_periodic_reset() {
    const WEEK: u64 = 7 * 86_400;
    let run = |reset: &str| {
        let toml = format!(
            "[priority]\npolicy = \"flux-accounting\"\naccounts = \"assoc.cfg\"\nreset = \"{reset}\"\n\
             [priority.weights]\nfair_share = 1000\n"
        );
        let mut e =
            engine_from(&[("lsb.hosts", ONE_CPU), ("lsb.queues", NORMAL), ("allot.toml", &toml), ("assoc.cfg", DUMP)]);
        assert_eq!(e.config().multifactor.as_ref().map(|m| m.half_life), Some(WEEK), "a week by default");
        let a = submit(&mut e, Time(0), by("alice", None));
        assert_eq!(pass(&mut e, Time(0)), [a.0]);
        end(&mut e, Time(1_000), a);
        let c = submit(&mut e, Time(WEEK), by("carol", None));
        assert_eq!(pass(&mut e, Time(WEEK)), [c.0]);
        end(&mut e, Time(WEEK + 1_000), c);
        let (_, tree, usage, _) = e.multifactor_inputs(Time(2 * WEEK)).expect("multifactor");
        let of = |account: &str, user: &str| usage[tree.assoc(account, user).expect("an association").0 as usize];
        let (alice, carol) = (of("phys", "alice"), of("chem", "carol"));
        // Held busy, then both ask at once.
        let hold = submit(&mut e, Time(2 * WEEK), by("bob", Some("phys")));
        assert_eq!(pass(&mut e, Time(2 * WEEK)), [hold.0]);
        let c2 = submit(&mut e, Time(2 * WEEK + 1), by("carol", None));
        let a2 = submit(&mut e, Time(2 * WEEK + 2), by("alice", None));
        end(&mut e, Time(2 * WEEK + 10), hold);
        let next = pass(&mut e, Time(2 * WEEK + 10));
        (alice, carol, next, a2, c2)
    };
    let (alice, carol, next, a2, _) = run("none");
    // carol's 1,000 s decayed over the week since: ∫ 2^(-s/h), s from
    // h - 1000 to h; alice's, the same a week further back: half of it.
    let h = WEEK as f64;
    let carol_expected = h / std::f64::consts::LN_2 * ((-(h - 1000.0) / h).exp2() - 0.5);
    assert!((carol - carol_expected).abs() < 1e-6 * carol_expected, "{carol} vs {carol_expected}");
    assert!((alice / carol - 0.5).abs() < 1e-12, "alice {alice}, carol {carol}");
    assert_eq!(next, [a2.0], "the older usage ranks higher");
    // 1970-01-15 is a Thursday: a weekly reset on Monday the 12th left
    // neither any usage.
    let (alice, carol, next, _, c2) = run("weekly");
    assert_eq!((alice, carol), (0.0, 0.0));
    assert_eq!(next, [c2.0], "tied: the first submitted");
}

/// Without an account file the associations are the default queue's
/// share tree, and `USER_SHARES[[default, 1]]` covers every user, as in
/// LSF: users no file names (root on the embedded defaults, a site's new
/// users) get an association at their first submission, are ranked by
/// their usage, and a reconfiguration keeps them.
#[test]
fn default_in_the_share_tree_gives_every_user_an_association() {
    let toml = "[priority]\npolicy = \"slurm-classic\"\nmax_wait = 1000\n[priority.weights]\nfair_share = 10000\n";
    let queues = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nFAIRSHARE = USER_SHARES[[default, 1]]\nEnd Queue\n";
    let files = [("lsb.hosts", ONE_CPU), ("lsb.queues", queues), ("allot.toml", toml)];
    let mut e = engine_from(&files);
    let long = submit(&mut e, Time(0), by("root", None));
    assert_eq!(pass(&mut e, Time(0)), [long.0]);
    let again = submit(&mut e, Time(100), by("root", None));
    let other = submit(&mut e, Time(110), by("newcomer", None));
    assert_eq!(pass(&mut e, Time(900)), Vec::<u64>::new(), "the slot is busy");
    let (p_root, _) = e.multifactor_priority(again).expect("root is ranked");
    let (p_new, _) = e.multifactor_priority(other).expect("newcomer is ranked");
    assert!(p_new > p_root, "the one without usage first: newcomer {p_new}, root {p_root}");
    end(&mut e, Time(1000), long);
    assert_eq!(pass(&mut e, Time(1000)), [other.0]);
    e.apply(Time(1001), &Event::Reconfigure(Box::new(allot_sim::testing::engine_config_from(&files))))
        .expect("reconfigured");
    assert_eq!(pass(&mut e, Time(1002)), Vec::<u64>::new(), "newcomer's job holds the slot");
    assert!(e.multifactor_priority(again).is_some(), "root's pending job keeps its association");
    // A named account file is all there is: a user it lacks is refused.
    let mut named = engine("slurm-classic", "fair_share = 1\n");
    let refused = named.apply(Time(0), &Event::Submit(by("root", None))).expect_err("no association");
    assert!(matches!(refused, Rejection::NoAssociation { .. }), "{refused}");
}

/// `policy = "flux"`: spec 002's factor in the dispatch pass. With no
/// usage every user is under-served (1.0); a user who used everything is
/// over-served and below 0.5, and waits behind the others.
#[test]
fn flux_policy_factors_in_the_pass() {
    let mut e = engine("flux", "fair_share = 10000");
    assert_eq!(e.multifactor_policy(), Some("flux"));
    let alice_first = submit(&mut e, Time(0), by("alice", None));
    assert_eq!(pass(&mut e, Time(0)), [alice_first.0]);
    let alice = submit(&mut e, Time(10), by("alice", None));
    let carol = submit(&mut e, Time(20), by("carol", None));
    let _ = pass(&mut e, Time(100));
    let f = |j| e.multifactor_priority(j).expect("priority").1.fair_share;
    assert_eq!(f(carol), 1.0);
    assert!(f(alice) < 0.5, "{}", f(alice));
    e.apply(Time(200), &Event::Finish { job: alice_first, cpu_time: 0.0, exit: 0 }).expect("ends");
    assert_eq!(pass(&mut e, Time(200)), [carol.0], "carol, under-served, before alice who asked first");
}
