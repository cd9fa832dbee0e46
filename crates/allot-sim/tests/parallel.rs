//! Parallel jobs against spec 004 ("Running Parallel Jobs"): `-n min,max`,
//! PROCLIMIT and automatic queue selection, the CPU bound of parallel jobs,
//! and placement by resource requirements (select, span, same, rusage),
//! driven from configuration text.

use allot_engine::{Decision, Engine, Event, JobId, JobSpec, PendingReason, Rejection, ResReq, Time};
use allot_sim::testing::{engine_config_from, engine_from};

fn queue(name: &str, extra: &str) -> String {
    format!("Begin Queue\nQUEUE_NAME = {name}\nPRIORITY = 30\n{extra}\nEnd Queue\n")
}

/// `n` hosts `h1..` of `slots` slots and CPUs each.
fn hosts(n: usize, slots: u32) -> String {
    let rows: String = (1..=n).map(|i| format!("h{i} {slots}\n")).collect();
    format!("Begin Host\nHOST_NAME MXJ\n{rows}End Host\n")
}

fn res(text: &str) -> ResReq {
    allot_config::resreq::parse(text).expect("a valid requirement")
}

fn job(queue: &str, min: u32, max: Option<u32>) -> JobSpec {
    JobSpec { user: "u".into(), queue: Some(queue.into()), slots: min, max_slots: max, ..JobSpec::default() }
}

fn with_res(mut spec: JobSpec, r: &str) -> JobSpec {
    spec.res_req = Some(res(r));
    spec
}

fn submit(e: &mut Engine, spec: JobSpec) -> JobId {
    e.apply(Time(0), &Event::Submit(spec)).expect("accepted").expect("a job id")
}

/// The allocation each started job got, as `host*slots` words.
fn starts(e: &mut Engine) -> Vec<(u64, String)> {
    e.schedule(Time(0))
        .iter()
        .filter_map(|d| match d {
            Decision::Start { job, alloc } => {
                let a: Vec<String> = alloc.iter().map(|&(h, n)| format!("{}*{n}", e.host_name(h))).collect();
                Some((job.0, a.join(" ")))
            }
            _ => None,
        })
        .collect()
}

fn alloc_of(e: &mut Engine, spec: JobSpec) -> Option<String> {
    let id = submit(e, spec);
    starts(e).into_iter().find(|s| s.0 == id.0).map(|s| s.1)
}

// --- PROCLIMIT (spec 004, "Limiting the Number of Processors Allocated") ---

fn proclimit_engine(limit: &str) -> Engine {
    engine_from(&[("lsb.hosts", &hosts(4, 4)), ("lsb.queues", &queue("q", &format!("PROCLIMIT = {limit}")))])
}

#[test]
fn proclimit_maximum_only() {
    // PROCLIMIT = 3: the maximum; minimum and default are 1.
    let mut e = proclimit_engine("3");
    assert_eq!(alloc_of(&mut e, job("q", 2, None)).as_deref(), Some("h1*2"), "-n 2 runs on 2 processors");
    let err = e.submit(&job("q", 4, None)).expect_err("-n 4 is over the maximum");
    assert_eq!(err, Rejection::AboveProcLimit { asked: "4".into(), max: 3, of: "queue `q`".into() });
    let id = submit(&mut e, job("q", 2, Some(3)));
    assert_eq!(e.job_slots(id), Some((2, 3)), "-n 2,3 runs on 2 or 3");
    let id = submit(&mut e, job("q", 2, Some(5)));
    assert_eq!(e.job_slots(id), Some((2, 3)), "-n 2,5 runs on 2 or 3");
    let id = submit(&mut e, job("q", 0, None));
    assert_eq!(e.job_slots(id), Some((1, 1)), "no -n: 1 processor");
    // 2 slots left on h1 after the first job: -n 2,3 takes 3 (2 on h1 and 1
    // on h2, first fit), -n 2,5 takes 3 of the rest.
    let s = starts(&mut e);
    assert_eq!(s.iter().map(|x| x.1.as_str()).collect::<Vec<_>>(), ["h1*2 h2*1", "h2*3", "h3*1"]);
}

#[test]
fn proclimit_minimum_and_maximum() {
    // PROCLIMIT = 3 8.
    let mut e = proclimit_engine("3 8");
    let five = submit(&mut e, job("q", 5, None));
    assert_eq!(e.job_slots(five), Some((5, 5)));
    let err = e.submit(&job("q", 2, None)).expect_err("-n 2 is under the minimum");
    assert_eq!(err, Rejection::BelowProcLimit { asked: "2".into(), min: 3, of: "queue `q`".into() });
    let cases = [((4, 5), (4, 5)), ((2, 6), (3, 6)), ((4, 9), (4, 8))];
    for ((min, max), want) in cases {
        let id = submit(&mut e, job("q", min, Some(max)));
        assert_eq!(e.job_slots(id), Some(want), "-n {min},{max}");
    }
    let id = submit(&mut e, job("q", 0, None));
    assert_eq!(e.job_slots(id), Some((3, 3)), "no -n: the minimum, 3");
    assert!(e.submit(&job("q", 9, Some(12))).is_err(), "-n 9,12: the minimum over the maximum PROCLIMIT");
    assert!(e.submit(&job("q", 1, Some(2))).is_err(), "-n 1,2: the maximum under the minimum PROCLIMIT");
}

#[test]
fn proclimit_minimum_default_and_maximum() {
    // PROCLIMIT = 4 6 9: a job without -n runs on 6 processors.
    let mut e = proclimit_engine("4 6 9");
    assert_eq!(alloc_of(&mut e, job("q", 0, None)).as_deref(), Some("h1*4 h2*2"));
}

#[test]
fn a_job_takes_up_to_its_maximum_and_starts_with_its_minimum() {
    // bsub -n 4,16: at most 16, started as long as 4 are free.
    let mut e = engine_from(&[("lsb.hosts", &hosts(3, 4)), ("lsb.queues", &queue("q", ""))]);
    assert_eq!(alloc_of(&mut e, job("q", 2, None)).as_deref(), Some("h1*2"));
    assert_eq!(alloc_of(&mut e, job("q", 4, Some(16))).as_deref(), Some("h1*2 h2*4 h3*4"));
    let mut e = engine_from(&[("lsb.hosts", &hosts(3, 4)), ("lsb.queues", &queue("q", ""))]);
    assert!(alloc_of(&mut e, job("q", 9, None)).is_some());
    assert_eq!(alloc_of(&mut e, job("q", 4, Some(16))), None, "3 free, 4 needed");
    assert_eq!(alloc_of(&mut e, job("q", 3, Some(16))).as_deref(), Some("h3*3"));
}

/// The spec leaves out its table of the five queues' PROCLIMIT values; these
/// are chosen so its two outcomes hold: `-n 8` goes to queueD, and no queue
/// takes `-n 5`.
#[test]
fn automatic_queue_selection_by_proclimit() {
    let limits = [("queueA", "2"), ("queueB", "1 4"), ("queueC", "2 2 4"), ("queueD", "6 8 16"), ("queueE", "16 32")];
    let queues: String = limits.iter().map(|(n, l)| queue(n, &format!("PROCLIMIT = {l}"))).collect();
    let params = "Begin Parameters\nDEFAULT_QUEUE = queueA queueB queueC queueD queueE\nEnd Parameters\n";
    let mut e = engine_from(&[("lsb.hosts", &hosts(4, 8)), ("lsb.queues", &queues), ("lsb.params", params)]);
    let any = |slots| JobSpec { user: "u".into(), slots, ..JobSpec::default() };
    let eight = submit(&mut e, any(8));
    assert_eq!(e.job_queue(eight), Some("queueD"));
    let err = e.submit(&any(5)).expect_err("no default queue takes -n 5");
    assert_eq!(
        err.to_string(),
        "-n 5: no default queue takes this job (DEFAULT_QUEUE: queueA queueB queueC queueD queueE)"
    );
    let three = submit(&mut e, any(3));
    assert_eq!(e.job_queue(three), Some("queueB"));
    // -n 5,7: no queue up to queueC takes 5, queueD takes 6 to 7.
    let range = submit(&mut e, JobSpec { max_slots: Some(7), ..any(5) });
    assert_eq!((e.job_queue(range), e.job_slots(range)), (Some("queueD"), Some((6, 7))));
    // A submitter's LSB_DEFAULTQUEUE in place of DEFAULT_QUEUE.
    let names = ["queueE".to_string(), "queueB".to_string()];
    assert_eq!(e.choose_queue_from(&any(3), &names, &|_| false), Ok("queueB"));
    let neither = e.choose_queue_from(&any(5), &names, &|_| false).expect_err("neither takes -n 5");
    assert_eq!(neither.to_string(), "-n 5: no default queue takes this job (LSB_DEFAULTQUEUE: queueE queueB)");
    assert_eq!(e.choose_queue(&any(5), &|_| false).map(str::to_string), Err(err));
    assert_eq!(e.choose_queue(&any(3), &|q| q == "queueB"), Ok("queueC"), "a closed queue is passed over");
}

#[test]
fn a_new_proclimit_applies_to_pending_jobs() {
    let files = |limit: &str| {
        [
            ("lsb.hosts".to_string(), hosts(2, 4)),
            ("lsb.queues".to_string(), queue("q", &format!("PROCLIMIT = {limit}"))),
        ]
    };
    let cfg = |limit: &str| {
        let f = files(limit);
        let refs: Vec<(&str, &str)> = f.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        engine_config_from(&refs)
    };
    let mut e = Engine::new(cfg("1 2 8"));
    submit(&mut e, job("q", 8, None));
    starts(&mut e);
    let no_n = submit(&mut e, job("q", 0, None));
    let four = submit(&mut e, job("q", 4, None));
    assert_eq!(e.job_slots(no_n), Some((2, 2)));
    e.apply(Time(1), &Event::Reconfigure(Box::new(cfg("1 3 3")))).expect("reconfigured");
    assert_eq!(e.job_slots(no_n), Some((3, 3)), "the new default");
    assert_eq!(e.pending_reason(four, Time(1)), Some(PendingReason::ProcLimit));
    assert_eq!(PendingReason::ProcLimit.to_string(), "Job no longer satisfies PROCLIMIT configuration");
}

// --- CPUs and slots ---

/// Hosts with MXJ 8 and 4 CPUs.
const WIDE: &str = "Begin Host\nHOSTNAME model type server RESOURCES ncpus\n\
    h1 ! LINUX 1 () 4\nh2 ! LINUX 1 () 4\nEnd Host\n";
const WIDE_MXJ: &str = "Begin Host\nHOST_NAME MXJ\nh1 8\nh2 8\nEnd Host\n";

#[test]
fn a_parallel_job_takes_no_more_slots_on_a_host_than_its_cpus() {
    let q = queue("q", "");
    let files = [("lsf.cluster.c", WIDE), ("lsb.hosts", WIDE_MXJ), ("lsb.queues", q.as_str())];
    let mut e = engine_from(&files);
    assert_eq!(alloc_of(&mut e, job("q", 8, None)).as_deref(), Some("h1*4 h2*4"));
    let mut e = engine_from(&files);
    for _ in 0..8 {
        submit(&mut e, job("q", 1, None));
    }
    assert_eq!(starts(&mut e).len(), 8, "sequential jobs use every slot of MXJ");
    let params = "Begin Parameters\nPARALLEL_SCHED_BY_SLOT = Y\nEnd Parameters\n";
    let mut e = engine_from(&[files[0], files[1], files[2], ("lsb.params", params)]);
    assert_eq!(alloc_of(&mut e, job("q", 8, None)).as_deref(), Some("h1*8"), "by slot: CPUs do not bound it");
}

// --- span (spec 004, "Controlling Processor Allocation Across Hosts") ---

#[test]
fn span_examples_of_the_spec() {
    let run = |free: &[u32], n: u32, r: &str| {
        let mut e = engine_from(&[("lsb.hosts", &hosts(free.len(), 4)), ("lsb.queues", &queue("q", ""))]);
        // Fill each host to leave `free` slots.
        for (i, &f) in free.iter().enumerate() {
            if f < 4 {
                let spec = with_res(job("q", 4 - f, None), &format!("select[hname==h{}]", i + 1));
                alloc_of(&mut e, spec).expect("filler");
            }
        }
        alloc_of(&mut e, with_res(job("q", n, None), r))
    };
    // span[hosts=1]: a host with 4 processors eligible.
    assert_eq!(run(&[2, 4], 4, "span[hosts=1]").as_deref(), Some("h2*4"));
    assert_eq!(run(&[2, 3], 4, "span[hosts=1]"), None);
    // span[ptile=2]: 2 hosts, 2 on each, though each may have more.
    assert_eq!(run(&[4, 4], 4, "span[ptile=2]").as_deref(), Some("h1*2 h2*2"));
    // span[ptile=3]: 3 on the first host, 1 on the second.
    assert_eq!(run(&[4, 4], 4, "span[ptile=3]").as_deref(), Some("h1*3 h2*1"));
    // span[ptile=1]: 4 hosts, though some have more than one free.
    assert_eq!(run(&[4, 4, 4, 4], 4, "span[ptile=1]").as_deref(), Some("h1*1 h2*1 h3*1 h4*1"));
    // A host with fewer than the ptile free is passed over.
    assert_eq!(run(&[1, 4, 4], 4, "span[ptile=2]").as_deref(), Some("h2*2 h3*2"));
}

#[test]
fn a_job_span_replaces_the_queue_span_and_hosts_minus_one_removes_it() {
    let q = queue("q", "RES_REQ = \"span[ptile=1]\"");
    let mut e = engine_from(&[("lsb.hosts", &hosts(4, 4)), ("lsb.queues", &q)]);
    assert_eq!(alloc_of(&mut e, job("q", 2, None)).as_deref(), Some("h1*1 h2*1"), "the queue's span");
    assert_eq!(alloc_of(&mut e, with_res(job("q", 2, None), "span[ptile=2]")).as_deref(), Some("h1*2"));
    assert_eq!(alloc_of(&mut e, with_res(job("q", 4, None), "span[hosts=-1]")).as_deref(), Some("h1*1 h2*3"));
}

/// Hosts of three types and two models.
const MIXED: &str = "Begin Host\nHOSTNAME model type server RESOURCES ncpus\n\
    l1 PC233 LINUX 1 () 4\nl2 PC233 LINUX 1 () 4\nl3 PC233 LINUX 1 () 4\nl4 PC233 LINUX 1 () 4\n\
    s1 PC1133 SGI 1 () 8\nh1 PC1133 HP 1 () 8\nh2 PC1133 HP 1 () 8\nEnd Host\n";

fn mixed() -> Engine {
    engine_from(&[("lsf.cluster.c", MIXED), ("lsb.queues", &queue("q", ""))])
}

/// Takes every slot of the named hosts.
fn fill(e: &mut Engine, names: &[&str]) {
    for n in names {
        let slots = e.hosts().find(|h| h.0 == *n).map(|h| h.1).expect("a host");
        alloc_of(e, with_res(job("q", slots, None), &format!("select[hname=={n}]"))).expect("filled");
    }
}

#[test]
fn ptile_by_host_type() {
    let r = "type==any same[type] span[ptile='!',LINUX:2,SGI:4]";
    // 4 processors: 2 hosts of type LINUX, 2 each ...
    let mut e = mixed();
    assert_eq!(alloc_of(&mut e, with_res(job("q", 4, None), r)).as_deref(), Some("l1*2 l2*2"));
    // ... or a single host of type SGI ...
    let mut e = mixed();
    fill(&mut e, &["l1", "l2", "l3"]);
    assert_eq!(alloc_of(&mut e, with_res(job("q", 4, None), r)).as_deref(), Some("s1*4"));
    // ... or, for other types, their MXJ (8 on an HP host).
    let mut e = mixed();
    fill(&mut e, &["l1", "l2", "l3", "s1"]);
    assert_eq!(alloc_of(&mut e, with_res(job("q", 4, None), r)).as_deref(), Some("h1*4"));

    // 16 processors: 2 hosts of type HP or SGI (8 each), or 8 LINUX hosts.
    let r = "type==any same[type] span[ptile='!',HP:8,SGI:8,LINUX:2]";
    let mut e = mixed();
    assert_eq!(alloc_of(&mut e, with_res(job("q", 16, None), r)).as_deref(), Some("h1*8 h2*8"));
    let mut e = mixed();
    assert_eq!(alloc_of(&mut e, with_res(job("q", 8, None), r)).as_deref(), Some("l1*2 l2*2 l3*2 l4*2"));
}

#[test]
fn ptile_by_host_model() {
    // A single host of model PC1133 (4), or 2 hosts of model PC233 (2 each).
    let r = "same[model] span[ptile='!',PC1133:4,PC233:2]";
    let mut e = mixed();
    assert_eq!(alloc_of(&mut e, with_res(job("q", 4, None), r)).as_deref(), Some("l1*2 l2*2"));
    let mut e = mixed();
    fill(&mut e, &["l1", "l2", "l3"]);
    assert_eq!(alloc_of(&mut e, with_res(job("q", 4, None), r)).as_deref(), Some("s1*4"));
}

#[test]
fn ptile_kinds_are_checked_against_the_cluster() {
    let mut e = mixed();
    for (r, why) in [
        ("span[ptile='!',LINUX:2,PC1133:4] same[model]", "host types and host models cannot be mixed"),
        ("span[ptile='!',LINUX:2,PC1133:4] same[type]", "host types and host models cannot be mixed"),
        ("span[ptile='!',LINUX:2]", "needs same[type]"),
        ("span[ptile=CRAY:2] same[type]", "`CRAY` is no host type or model"),
    ] {
        let err = e.submit(&with_res(job("q", 4, None), r)).expect_err(r);
        assert!(err.to_string().contains(why), "{r}: {err}");
    }
}

#[test]
fn same_type_never_mixes_types() {
    // select[type==SGI6 || type==SOL7] same[type]: 4 processors on SGI IRIX
    // or on Solaris 7, not both.
    let cluster = "Begin Host\nHOSTNAME model type server RESOURCES ncpus\n\
        a ! SGI6 1 () 2\nb ! SOL7 1 () 2\nc ! HP 1 () 4\nd ! SOL7 1 () 2\nEnd Host\n";
    let mut e = engine_from(&[("lsf.cluster.c", cluster), ("lsb.queues", &queue("q", ""))]);
    let r = "select[type==SGI6 || type==SOL7] same[type]";
    assert_eq!(alloc_of(&mut e, with_res(job("q", 4, None), r)).as_deref(), Some("b*2 d*2"));
    assert_eq!(alloc_of(&mut e, with_res(job("q", 4, None), r)), None, "2 SGI6 slots are not 4");
    // select[type==any] same[type:model]: 6 on one type and model.
    let cluster = "Begin Host\nHOSTNAME model type server RESOURCES ncpus\n\
        a M1 LINUX 1 () 4\nb M2 LINUX 1 () 4\nc M1 LINUX 1 () 4\nEnd Host\n";
    let mut e = engine_from(&[("lsf.cluster.c", cluster), ("lsb.queues", &queue("q", ""))]);
    let r = "select[type==any] same[type:model]";
    assert_eq!(alloc_of(&mut e, with_res(job("q", 6, None), r)).as_deref(), Some("a*4 c*2"));
}

#[test]
fn hosts_in_one_high_speed_connection_group() {
    // The spec's hgconnect example: 12 processors in hg1, hg2 or hg3, never
    // across groups, all of one type.
    let cluster = "Begin Host\nHOSTNAME model type server RESOURCES ncpus maxmem\n\
        hostA ! LINUX 1 () 4 2000\nhostB ! LINUX 1 () 4 2000\nhostD ! LINUX 1 () 8 2000\nhostE ! LINUX 1 () 8 2000\n\
        hostF ! LINUX 1 () 4 2000\nhostG ! LINUX 1 () 4 2000\nhostX ! LINUX 1 () 4 500\nEnd Host\n\
        Begin ResourceMap\nRESOURCENAME LOCATION\n\
        hgconnect (hg1@[hostA hostB] hg2@[hostD hostE] hg3@[hostF hostG hostX])\nEnd ResourceMap\n";
    let q = queue(
        "My_test",
        "RES_REQ = \"select[mem > 1000 && type==any && (hgconnect==hg1 || hgconnect==hg2 || hgconnect=hg3)]same[hgconnect:type]\"",
    );
    let mut e = engine_from(&[("lsf.cluster.c", cluster), ("lsb.queues", &q)]);
    // hg1 has 8 CPUs, hg2 16, hg3 8 with more than 1000 MB (hostX has 500).
    assert_eq!(alloc_of(&mut e, job("My_test", 12, None)).as_deref(), Some("hostD*8 hostE*4"));
    assert_eq!(alloc_of(&mut e, job("My_test", 8, None)).as_deref(), Some("hostA*4 hostB*4"));
    assert_eq!(alloc_of(&mut e, job("My_test", 12, None)), None, "hg3 has 8 eligible, hg2 4 left");
    let waiting = JobId(3);
    assert_eq!(e.pending_reason(waiting, Time(0)), Some(PendingReason::ResReq));
}

#[test]
fn order_sorts_the_candidate_hosts() {
    let mut e = engine_from(&[("lsb.hosts", &hosts(3, 4)), ("lsb.queues", &queue("q", ""))]);
    fill(&mut e, &[]);
    alloc_of(&mut e, with_res(job("q", 3, None), "select[hname==h1]")).expect("h1 has 1 left");
    alloc_of(&mut e, with_res(job("q", 1, None), "select[hname==h2]")).expect("h2 has 3 left");
    // Most free slots first, then fewest (packing).
    assert_eq!(alloc_of(&mut e, with_res(job("q", 1, None), "order[slots]")).as_deref(), Some("h3*1"));
    assert_eq!(alloc_of(&mut e, with_res(job("q", 1, None), "order[-slots]")).as_deref(), Some("h1*1"));
}

// --- rusage[mem] ---

const MEM: &str = "Begin Host\nHOSTNAME model type server RESOURCES ncpus maxmem\n\
    m1 ! LINUX 1 () 4 1000\nm2 ! LINUX 1 () 4 1000\nEnd Host\n";

#[test]
fn memory_is_held_per_host_by_default() {
    let mut e = engine_from(&[("lsf.cluster.c", MEM), ("lsb.queues", &queue("q", ""))]);
    let r = "rusage[mem=400] span[hosts=1]";
    assert_eq!(alloc_of(&mut e, with_res(job("q", 2, None), r)).as_deref(), Some("m1*2"), "400 MB on m1");
    assert_eq!(alloc_of(&mut e, with_res(job("q", 2, None), r)).as_deref(), Some("m1*2"), "800 MB on m1");
    assert_eq!(alloc_of(&mut e, with_res(job("q", 1, None), r)).as_deref(), Some("m2*1"), "m1 has 200 MB left");
    assert_eq!(alloc_of(&mut e, job("q", 1, None)).as_deref(), Some("m2*1"), "no rusage: m1 is full of slots");
}

#[test]
fn memory_is_held_per_slot_with_resource_reserve_per_slot() {
    let params = "Begin Parameters\nRESOURCE_RESERVE_PER_SLOT = Y\nEnd Parameters\n";
    let mut e = engine_from(&[("lsf.cluster.c", MEM), ("lsb.queues", &queue("q", "")), ("lsb.params", params)]);
    // -n 4 rusage[mem=500]: 500 MB for each slot, 2 slots per 1000 MB host.
    assert_eq!(alloc_of(&mut e, with_res(job("q", 4, None), "rusage[mem=500]")).as_deref(), Some("m1*2 m2*2"));
    assert_eq!(alloc_of(&mut e, with_res(job("q", 1, None), "rusage[mem=1]")), None, "no memory left");
    assert_eq!(alloc_of(&mut e, job("q", 1, None)).as_deref(), Some("m1*1"));
}

#[test]
fn a_finished_job_gives_its_memory_back() {
    let mut e = engine_from(&[("lsf.cluster.c", MEM), ("lsb.queues", &queue("q", ""))]);
    let r = "rusage[mem=700]";
    let a = submit(&mut e, with_res(job("q", 1, None), r));
    let b = submit(&mut e, with_res(job("q", 1, None), r));
    let c = submit(&mut e, with_res(job("q", 1, None), r));
    assert_eq!(starts(&mut e).len(), 2);
    assert!(e.is_pending(c));
    e.apply(Time(1), &Event::Finish { job: a, cpu_time: 0.0, exit: 0 }).expect("finished");
    assert_eq!(e.schedule(Time(1)).len(), 1);
    assert!(e.is_running(b) && e.is_running(c));
}

#[test]
fn a_host_without_the_resource_fails_the_selection() {
    let mut e = engine_from(&[("lsb.hosts", &hosts(2, 4)), ("lsb.queues", &queue("q", ""))]);
    assert_eq!(alloc_of(&mut e, with_res(job("q", 1, None), "select[maxmem > 0]")), None);
    assert_eq!(alloc_of(&mut e, with_res(job("q", 1, None), "rusage[mem=10]")), None, "no known memory");
    assert_eq!(alloc_of(&mut e, with_res(job("q", 1, None), "select[!fast]")).as_deref(), Some("h1*1"));
}

// --- properties ---

mod properties {
    use super::*;
    use allot_engine::{ComputeUnitSpec, EngineConfig, HostAttrs, HostSpec, QueueSpec};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// A host: slots, CPUs (at most its slots), memory, type.
    fn host() -> impl Strategy<Value = (u32, u32, Option<u64>, bool)> {
        (1u32..9).prop_flat_map(|slots| (Just(slots), 1..=slots, prop::option::of(100u64..2000), any::<bool>()))
    }

    /// A job: min, extra up to max, requirement.
    fn job_shape() -> impl Strategy<Value = (u32, u32, String)> {
        let req = prop_oneof![
            Just(String::new()),
            Just("span[hosts=1]".to_string()),
            (1u32..4).prop_map(|p| format!("span[ptile={p}]")),
            Just("same[type]".to_string()),
            Just("select[type==A]".to_string()),
            (1u32..800).prop_map(|m| format!("rusage[mem={m}]")),
            (1u32..4, 1u32..500).prop_map(|(p, m)| format!("same[type] span[ptile={p}] rusage[mem={m}]")),
            (1u32..3).prop_map(|m| format!("cu[maxcus={m}]")),
            Just("cu[balance]".to_string()),
            Just("cu[balance:pref=maxavail:maxcus=2]".to_string()),
            Just("cu[pref=minavail:usablecuslots=2]".to_string()),
        ];
        (1u32..7, 0u32..4, req)
    }

    fn check(e: &Engine, alloc: &[(u32, u32)], min: u32, max: u32, req: &ResReq, types: &[bool]) {
        let total: u32 = alloc.iter().map(|a| a.1).sum();
        assert!(total >= min && total <= max, "{total} outside {min}..{max}");
        let mut seen = std::collections::BTreeSet::new();
        assert!(alloc.iter().all(|a| seen.insert(a.0) && a.1 > 0), "each host once, with slots");
        match &req.span {
            Some(allot_engine::resreq::Span::OneHost) => assert_eq!(alloc.len(), 1),
            Some(allot_engine::resreq::Span::Ptile(p)) => {
                let (last, rest) = alloc.split_last().expect("a host");
                assert!(rest.iter().all(|a| a.1 == *p) && last.1 <= *p, "ptile {p}: {alloc:?}");
            }
            _ => {}
        }
        if !req.same.is_empty() {
            assert!(alloc.iter().all(|a| types[a.0 as usize] == types[alloc[0].0 as usize]), "same[type]");
        }
        if req.select.is_some() {
            assert!(alloc.iter().all(|a| types[a.0 as usize]), "select[type==A]");
        }
        if let Some(cu) = &req.cu {
            // Units are hosts 0-2, 3-5, ...: slots by unit.
            let mut per_unit: BTreeMap<u32, u32> = BTreeMap::new();
            for a in alloc {
                *per_unit.entry(a.0 / 3).or_default() += a.1;
            }
            if let Some(m) = cu.maxcus {
                assert!(per_unit.len() as u32 <= m, "maxcus {m}: {alloc:?}");
            }
            if cu.balance {
                let (lo, hi) = (per_unit.values().min(), per_unit.values().max());
                assert!(hi.zip(lo).is_some_and(|(h, l)| h - l <= 1), "balance: {per_unit:?}");
                assert_eq!(total, min, "balance takes the minimum");
            }
        }
        let _ = e;
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// An allocation never exceeds a host's slots, CPUs (for a parallel
        /// job) or memory, and always satisfies the job's span, same and
        /// select.
        #[test]
        fn allocations_respect_hosts_and_requirements(
            cluster in prop::collection::vec(host(), 1..10),
            jobs in prop::collection::vec(job_shape(), 1..25),
            ends in prop::collection::vec(any::<bool>(), 25),
        ) {
            let types: Vec<bool> = cluster.iter().map(|h| h.3).collect();
            let hosts = cluster
                .iter()
                .enumerate()
                .map(|(i, &(slots, cpus, mem, a))| {
                    let attrs = HostAttrs {
                        host_type: Some(if a { "A" } else { "B" }.into()),
                        maxmem: mem,
                        ..HostAttrs::default()
                    };
                    HostSpec { attrs, ..HostSpec::new(format!("h{i}"), slots, cpus) }
                })
                .collect();
            let units = cluster.len().div_ceil(3);
            let mut config = EngineConfig::one_queue(hosts, false);
            config.compute_unit_types = vec!["u".into()];
            config.compute_units = (0..units)
                .map(|u| ComputeUnitSpec {
                    name: format!("u{u}"),
                    cu_type: "u".into(),
                    hosts: (3 * u..(3 * u + 3).min(cluster.len())).map(|h| format!("h{h}")).collect(),
                    condensed: false,
                })
                .collect();
            config.queues = vec![QueueSpec::new("q", 30)];
            config.default_queues = vec!["q".into()];
            let mut e = Engine::new(config);
            let mut specs = BTreeMap::new();
            for (min, extra, r) in &jobs {
                let mut spec = job("q", *min, Some(min + extra));
                if !r.is_empty() {
                    spec.res_req = Some(res(r));
                }
                if let Ok(id) = e.submit(&spec) {
                    specs.insert(id, (spec.res_req.clone().unwrap_or_default(), min + extra));
                }
            }
            // Slots and memory in use per host, by running job.
            let mut running: BTreeMap<JobId, Vec<(u32, u32)>> = BTreeMap::new();
            for round in 0..3u64 {
                for d in e.schedule(Time(round)) {
                    let Decision::Start { job, alloc } = d else { continue };
                    let alloc: Vec<(u32, u32)> = alloc.iter().map(|&(h, n)| (h.0, n.0)).collect();
                    let (req, max) = &specs[&job];
                    let (min, _) = e.job_slots(job).expect("a job");
                    check(&e, &alloc, min, *max, req, &types);
                    if *max > 1 {
                        for &(h, n) in &alloc {
                            prop_assert!(n <= cluster[h as usize].1, "a parallel job within a host's CPUs");
                        }
                    }
                    running.insert(job, alloc);
                }
                let mut used = vec![0u32; cluster.len()];
                let mut mem = vec![0f64; cluster.len()];
                for (id, alloc) in &running {
                    for &(h, n) in alloc {
                        used[h as usize] += n;
                        mem[h as usize] += specs[id].0.rusage_mem.unwrap_or(0.0);
                    }
                }
                for (h, c) in cluster.iter().enumerate() {
                    prop_assert!(used[h] <= c.0, "host {h}: {} slots of {}", used[h], c.0);
                    prop_assert!(mem[h] <= c.2.map_or(0.0, |m| m as f64), "host {h}: memory");
                }
                let done: Vec<JobId> =
                    running.keys().copied().enumerate().filter(|(i, _)| ends[*i % ends.len()]).map(|x| x.1).collect();
                for id in done {
                    running.remove(&id);
                    e.apply(Time(round), &Event::Finish { job: id, cpu_time: 0.0, exit: 0 }).expect("finished");
                }
            }
        }
    }
}

// --- -m and first execution hosts (spec 004, "Specifying a First Execution Host") ---

fn picks(text: &str) -> Vec<allot_engine::HostPick> {
    allot_config::engine::parse_host_picks(text).expect("a valid -m")
}

fn with_hosts(mut spec: JobSpec, m: &str) -> JobSpec {
    spec.hosts = picks(m);
    spec
}

fn three_hosts(queue_extra: &str) -> Engine {
    let groups = "Begin HostGroup\nGROUP_NAME GROUP_MEMBER\nhg (h1 h2)\nEnd HostGroup\n";
    engine_from(&[("lsb.hosts", &(hosts(3, 4) + groups)), ("lsb.queues", &queue("q", queue_extra))])
}

#[test]
fn the_first_host_comes_from_the_candidates() {
    // bsub -n 2 -m "hostA! hostB hostC": must start on hostA; with hostB!,
    // on hostB; with no `!`, on any.
    let mut e = three_hosts("");
    assert_eq!(alloc_of(&mut e, with_hosts(job("q", 6, None), "h2! h1 h3")).as_deref(), Some("h2*4 h1*2"));
    let mut e = three_hosts("");
    assert_eq!(alloc_of(&mut e, with_hosts(job("q", 2, None), "h1 h2! h3")).as_deref(), Some("h2*2"));
    assert_eq!(alloc_of(&mut e, with_hosts(job("q", 2, None), "h1 h2 h3")).as_deref(), Some("h1*2"));
    // A host group as candidates: the first host from it, and its other
    // hosts are not used for the rest of the job.
    let mut e = three_hosts("");
    assert_eq!(alloc_of(&mut e, with_hosts(job("q", 6, None), "hg! h3")).as_deref(), Some("h1*4 h3*2"));
    assert_eq!(alloc_of(&mut e, with_hosts(job("q", 6, None), "hg! h3")).as_deref(), Some("h2*4 h3*2"));
    assert_eq!(alloc_of(&mut e, with_hosts(job("q", 1, None), "hg! h3")), None, "hg is full");
}

#[test]
fn a_busy_candidate_keeps_the_job_waiting() {
    let mut e = three_hosts("");
    alloc_of(&mut e, with_hosts(job("q", 4, None), "h1")).expect("h1 is full");
    let id = submit(&mut e, with_hosts(job("q", 2, None), "h1! h2 h3"));
    assert!(starts(&mut e).is_empty());
    assert!(e.is_pending(id));
}

#[test]
fn queue_hosts_name_first_execution_hosts() {
    let mut e = three_hosts("HOSTS = h3! h1 h2");
    assert_eq!(alloc_of(&mut e, job("q", 6, None)).as_deref(), Some("h3*4 h1*2"));
    // The job's own candidates go before the queue's.
    assert_eq!(alloc_of(&mut e, with_hosts(job("q", 1, None), "h2! h1")).as_deref(), Some("h2*1"));
}

#[test]
fn m_restricts_and_orders_the_hosts() {
    let mut e = three_hosts("");
    assert_eq!(alloc_of(&mut e, with_hosts(job("q", 1, None), "h3")).as_deref(), Some("h3*1"));
    assert_eq!(alloc_of(&mut e, with_hosts(job("q", 1, None), "h1 h2+5")).as_deref(), Some("h2*1"), "preference");
    assert_eq!(alloc_of(&mut e, with_hosts(job("q", 8, None), "h1 others+1")).as_deref(), Some("h2*3 h3*3 h1*2"));
}

#[test]
fn incorrect_first_execution_hosts_reject_the_job() {
    let mut e = three_hosts("HOSTS = h1 h2");
    for (m, why) in [
        ("all!", "`all` cannot be a first execution host candidate"),
        ("nohost h1", "`nohost` is not a host, host group or compute unit"),
        ("h3 h1", "host `h3` is not used by queue `q`"),
    ] {
        let err = e.submit(&with_hosts(job("q", 1, None), m)).expect_err(m);
        assert!(err.to_string().contains(why), "{m}: {err}");
    }
    assert!(allot_config::engine::parse_host_picks("h1 ~h2").is_err(), "-m takes no exclusions");
}

#[test]
fn incorrect_queue_first_hosts_are_warned_about() {
    let texts = [("lsb.hosts".to_string(), hosts(2, 4)), ("lsb.queues".to_string(), queue("q", "HOSTS = all! h1"))];
    let mut diags = allot_config::Diagnostics::default();
    let config = allot_config::load::from_texts(&texts, &mut diags);
    assert!(!diags.has_errors(), "{diags}");
    assert!(diags.to_string().contains("`all!` cannot be a first execution host candidate; ignored"), "{diags}");
    assert!(config.engine_config().queues[0].first_hosts.is_empty());
}

#[test]
fn a_job_held_back_by_its_hosts_does_not_hold_back_the_next() {
    // A job that cannot start on the hosts it named says nothing of jobs
    // free to go anywhere: the next job of as many slots still starts.
    let mut e = three_hosts("");
    alloc_of(&mut e, with_hosts(job("q", 4, None), "h1")).expect("h1 is full");
    let named = submit(&mut e, with_hosts(job("q", 2, None), "h1"));
    let free = submit(&mut e, job("q", 2, None));
    let s = starts(&mut e);
    assert_eq!(s, [(free.0, "h2*2".to_string())]);
    assert!(e.is_pending(named));
}

// --- Deadline constraint (spec 004, "How Deadline Constraint Scheduling
// Works For Parallel Jobs") ---

/// Whether a job submitted at `now` with these limits starts then.
fn starts_by_deadline(
    slots: u32,
    cpu_minutes: Option<u64>,
    run_minutes: Option<u64>,
    left: u64,
) -> (bool, Engine, JobId) {
    let mut e = engine_from(&[("lsb.hosts", &hosts(1, 8)), ("lsb.queues", &queue("q", ""))]);
    let now = Time(10_000);
    let spec = JobSpec {
        cpu_limit: cpu_minutes.map(|m| m * 60),
        run_limit: run_minutes.map(|m| m * 60),
        term_time: Some(now.0 + left),
        ..job("q", slots, None)
    };
    let id = e.apply(now, &Event::Submit(spec)).expect("accepted").expect("a job id");
    let started = e.schedule(now).iter().any(|d| matches!(d, Decision::Start { job, .. } if *job == id));
    (started, e, id)
}

/// `(deadline - now) > CPU limit / minimum processors`: a 4-processor job
/// with 60 CPU minutes needs more than 15 minutes before its deadline;
/// sequentially, more than the whole hour.
#[test]
fn a_parallel_job_with_a_cpu_limit_starts_only_if_it_can_finish_by_its_deadline() {
    assert!(starts_by_deadline(4, Some(60), None, 15 * 60 + 1).0, "15 min 1 s left > 60 min / 4");
    let (started, e, id) = starts_by_deadline(4, Some(60), None, 15 * 60);
    assert!(!started, "15 min left is not more than 60 min / 4");
    assert_eq!(e.pending_reason(id, Time(10_000)), Some(PendingReason::Deadline));
    assert!(!starts_by_deadline(1, Some(60), None, 30 * 60).0, "a sequential job needs the whole hour");
    assert!(starts_by_deadline(1, Some(60), None, 60 * 60 + 1).0);
}

/// With a run limit, the run limit decides (the same strict comparison);
/// with neither limit, the job starts any time before its deadline.
#[test]
fn a_run_limit_or_no_limit_against_the_deadline() {
    assert!(!starts_by_deadline(4, Some(60), Some(30), 20 * 60).0, "the 30-minute run limit, not 60 / 4, counts");
    assert!(starts_by_deadline(4, Some(60), Some(30), 30 * 60 + 1).0);
    assert!(!starts_by_deadline(2, None, Some(10), 10 * 60).0);
    assert!(starts_by_deadline(2, None, None, 1).0, "no limit: no constraint before the deadline");
}

/// A running job without a run limit is killed at its termination
/// deadline, and the engine says why. (With a run limit, the constraint
/// makes the limit come first.)
#[test]
fn a_running_job_is_killed_at_its_deadline() {
    let (started, mut e, id) = starts_by_deadline(2, Some(60), None, 90 * 60);
    assert!(started);
    assert_eq!(e.schedule(Time(10_000 + 90 * 60 - 1)), Vec::new());
    assert_eq!(
        e.schedule(Time(10_000 + 90 * 60)),
        [Decision::Kill { job: id, reason: allot_engine::KillReason::TermTime }]
    );
    let (_, mut e, id) = starts_by_deadline(2, None, Some(30), 90 * 60);
    assert_eq!(
        e.schedule(Time(10_000 + 30 * 60)),
        [Decision::Kill { job: id, reason: allot_engine::KillReason::RunLimit }],
        "the run limit comes first"
    );
}

/// `bsub -x` (exclusive execution): only a queue with EXCLUSIVE takes it;
/// it starts on hosts where nothing runs, and nothing else starts on its
/// hosts while it runs (h1's free slot stays free).
#[test]
fn exclusive_jobs_take_idle_hosts_and_keep_them() {
    let mut e = engine_from(&[
        ("lsb.hosts", &hosts(2, 2)),
        ("lsb.queues", &(queue("x", "EXCLUSIVE = Y") + &queue("plain", ""))),
    ]);
    let exclusive = |q: &str, n: u32| JobSpec { exclusive: true, ..job(q, n, None) };
    assert_eq!(
        e.apply(Time(0), &Event::Submit(exclusive("plain", 1))),
        Err(Rejection::NotExclusiveQueue("plain".into()))
    );
    let busy = submit(
        &mut e,
        JobSpec { hosts: allot_config::engine::parse_host_picks("h1").expect("valid"), ..job("x", 1, None) },
    );
    assert_eq!(starts(&mut e), [(busy.0, "h1*1".to_string())]);
    let alone = submit(&mut e, exclusive("x", 1));
    assert_eq!(starts(&mut e), [(alone.0, "h2*1".to_string())], "h1 runs a job");
    let wide = submit(&mut e, exclusive("x", 2));
    assert_eq!(starts(&mut e), [], "no idle host left");
    let other = submit(&mut e, job("x", 2, None));
    assert_eq!(starts(&mut e), [], "h1 has one free slot, h2 is the exclusive job's");
    e.apply(Time(10), &Event::Finish { job: alone, cpu_time: 0.0, exit: 0 }).expect("ends");
    assert_eq!(starts(&mut e), [(wide.0, "h2*2".to_string())]);
    assert!(e.is_pending(other));
}
