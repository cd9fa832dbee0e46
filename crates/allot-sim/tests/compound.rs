//! Compound resource requirements (spec 004, "Compound resource
//! requirements"): each term's requirement for its slots, the first
//! term's for the first execution host.

use allot_engine::{Decision, Engine, Event, HostIdx, JobId, JobSpec, Rejection, Slots, Time};
use allot_sim::testing::engine_from;

/// s1 (SGI, 8 CPUs), x1 and x2 (X86_64, 4 CPUs, 1,500 MB).
const CLUSTER: &str = "Begin Host\nHOSTNAME model type server RESOURCES ncpus maxmem\n\
    s1 M1 SGI 1 () 8 8000\nx1 M2 X86_64 1 () 4 1500\nx2 M2 X86_64 1 () 4 1500\nEnd Host\n";

fn queue(extra: &str) -> String {
    format!("Begin Queue\nQUEUE_NAME = q\nPRIORITY = 30\n{extra}\nEnd Queue\n")
}

fn engine(queue_extra: &str) -> Engine {
    engine_from(&[("lsf.cluster.c", CLUSTER), ("lsb.queues", &queue(queue_extra))])
}

fn spec(slots: u32, r: &str) -> JobSpec {
    let res = allot_config::resreq::parse(r).expect("a requirement");
    JobSpec { user: "u".into(), queue: Some("q".into()), slots, res_req: Some(res), ..JobSpec::default() }
}

/// Submits and runs a pass: where the job started, if it did.
fn start(e: &mut Engine, t: u64, spec: JobSpec) -> (JobId, Option<Vec<(String, u32)>>) {
    let id = e.apply(Time(t), &Event::Submit(spec)).expect("accepted").expect("id");
    let alloc = e.schedule(Time(t)).into_iter().find_map(|d| match d {
        Decision::Start { job, alloc } if job == id => {
            Some(alloc.iter().map(|&(h, n)| (e.host_name(h).to_string(), n.0)).collect())
        }
        _ => None,
    });
    (id, alloc)
}

fn hosts(a: &[(&str, u32)]) -> Option<Vec<(String, u32)>> {
    Some(a.iter().map(|&(h, n)| (h.to_string(), n)).collect())
}

#[test]
fn each_term_takes_its_slots_where_its_requirement_holds_the_first_first() {
    let mut e = engine("");
    // s1 comes first in host order, but the first term asks X86_64: its
    // host is the first execution host.
    let (_, at) = start(&mut e, 0, spec(0, "1*{select[type==X86_64]} + 4*{select[type==SGI]}"));
    assert_eq!(at, hosts(&[("x1", 1), ("s1", 4)]));
    // A host serves two terms: x1 has 3 left, the first term takes 1 of
    // them and the second the other 2, then x2.
    let (_, at) = start(&mut e, 1, spec(5, "{select[type==X86_64]} + 4*{select[type==X86_64]}"));
    assert_eq!(at, hosts(&[("x1", 3), ("x2", 2)]), "one row per host outside the engine");
}

#[test]
fn the_first_execution_host_candidates_bind_the_first_term() {
    let mut e = engine("");
    let mut s = spec(0, "1*{select[type==X86_64]} + 2*{select[type==any]}");
    s.hosts = vec![
        allot_engine::HostPick { name: "x2".into(), first: true, preference: None },
        allot_engine::HostPick { name: "others".into(), first: false, preference: None },
    ];
    let (_, at) = start(&mut e, 0, s);
    // x2 first; the other terms take hosts in host order.
    assert_eq!(at, hosts(&[("x2", 1), ("s1", 2)]));
}

#[test]
fn the_slots_are_the_terms_sum_and_n_may_only_repeat_it() {
    let mut e = engine("");
    let submit = |e: &mut Engine, s: JobSpec| e.apply(Time(0), &Event::Submit(s));
    let id = submit(&mut e, spec(0, "2*{select[type==SGI]} + {}")).expect("accepted").expect("id");
    assert_eq!(e.job_slots(id), Some((3, 3)), "a term without n* is one slot");
    assert!(submit(&mut e, spec(3, "2*{select[type==SGI]} + {}")).is_ok());
    assert_eq!(
        submit(&mut e, spec(4, "2*{select[type==SGI]} + {}")),
        Err(Rejection::BadResReq("-n 4: the compound requirement asks 3 slots in all".into()))
    );
    // PROCLIMIT binds the sum.
    let mut e = engine("PROCLIMIT = 2");
    let refused = submit(&mut e, spec(0, "2*{select[type==SGI]} + {}"));
    assert!(matches!(refused, Err(Rejection::AboveProcLimit { max: 2, .. })), "{refused:?}");
}

#[test]
fn each_term_holds_its_own_memory_on_its_own_hosts() {
    let mut e = engine("");
    // The first term holds 1,000 MB on x1; the second none on s1.
    let (big, at) = start(&mut e, 0, spec(0, "1*{select[type==X86_64] rusage[mem=1000]} + 4*{select[type==SGI]}"));
    assert_eq!(at, hosts(&[("x1", 1), ("s1", 4)]));
    // 1,000 MB more fits on x2 only; 100 MB on x1 still.
    let (_, at) = start(&mut e, 1, spec(1, "select[type==X86_64] rusage[mem=1000]"));
    assert_eq!(at, hosts(&[("x2", 1)]));
    let (_, at) = start(&mut e, 2, spec(1, "select[hname==x1] rusage[mem=400]"));
    assert_eq!(at, hosts(&[("x1", 1)]));
    // Once the compound job ends, its memory on x1 is free again.
    e.apply(Time(3), &Event::Finish { job: big, cpu_time: 0.0, exit: 0 }).expect("ends");
    let (_, at) = start(&mut e, 3, spec(1, "select[hname==x1] rusage[mem=1000]"));
    assert_eq!(at, hosts(&[("x1", 1)]));
}

#[test]
fn a_simple_queue_requirement_joins_every_term() {
    // RES_REQ keeps every term on X86_64 hosts.
    let mut e = engine("RES_REQ = select[type==X86_64]");
    let (_, at) = start(&mut e, 0, spec(0, "1*{select[ncpus>=4]} + 4*{}"));
    assert_eq!(at, hosts(&[("x1", 4), ("x2", 1)]));
    // A compound RES_REQ is the requirement of jobs that give none.
    let mut e = engine("RES_REQ = 1*{select[type==SGI]} + 1*{select[type==X86_64]}");
    let id =
        e.apply(Time(0), &Event::Submit(JobSpec { user: "u".into(), queue: Some("q".into()), ..JobSpec::default() }));
    let id = id.expect("accepted").expect("id");
    assert_eq!(e.job_slots(id), Some((2, 2)));
    assert_eq!(
        e.schedule(Time(0)),
        [Decision::Start { job: id, alloc: vec![(HostIdx(0), Slots(1)), (HostIdx(1), Slots(1))] }]
    );
}

#[test]
fn a_term_that_cannot_be_placed_keeps_the_job_pending() {
    let mut e = engine("");
    let (id, at) = start(&mut e, 0, spec(0, "1*{select[type==SGI]} + 9*{select[type==X86_64]}"));
    assert_eq!(at, None, "8 X86_64 slots in all");
    assert!(e.is_pending(id));
}
