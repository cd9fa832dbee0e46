//! Resizable jobs (spec 004, "Job Allocations that Grow and Shrink";
//! spec 000, "Resizable jobs and fairshare"): autoresizable jobs grow as
//! slots free, resize requests go before the queue's pending jobs,
//! releases shrink, and the charges follow the allocation.

use allot_engine::shares::NodeId;
use allot_engine::{Decision, Engine, Event, HostIdx, JobId, JobSpec, Rejection, Slots, Time};
use allot_sim::testing::engine_from;

const APPS: &str = "Begin Application\nNAME = grow\nRESIZABLE_JOBS = auto\nEnd Application\n\
                    Begin Application\nNAME = shrink\nRESIZABLE_JOBS = Y\nEnd Application\n\
                    Begin Application\nNAME = plain\nEnd Application\n";

/// Hosts of `slots` slots each (and as many CPUs).
fn engine(hosts: &[u32], queue: &str) -> Engine {
    let mut h = String::from("Begin Host\nHOSTNAME model type server RESOURCES ncpus\n");
    for (i, n) in hosts.iter().enumerate() {
        h += &format!("h{} ! LINUX 1 () {n}\n", i + 1);
    }
    h += "End Host\n";
    let mut mxj = String::from("Begin Host\nHOST_NAME MXJ\n");
    for (i, n) in hosts.iter().enumerate() {
        mxj += &format!("h{} {n}\n", i + 1);
    }
    mxj += "End Host\n";
    let q = format!("Begin Queue\nQUEUE_NAME = q\nPRIORITY = 30\n{queue}\nEnd Queue\n");
    engine_from(&[("lsf.cluster.c", &h), ("lsb.hosts", &mxj), ("lsb.queues", &q), ("lsb.applications", APPS)])
}

fn spec(user: &str, min: u32, max: u32, app: Option<&str>) -> JobSpec {
    JobSpec {
        user: user.into(),
        queue: Some("q".into()),
        slots: min,
        max_slots: (max != min).then_some(max),
        app: app.map(str::to_string),
        ..JobSpec::default()
    }
}

fn submit(e: &mut Engine, t: u64, s: JobSpec) -> JobId {
    e.apply(Time(t), &Event::Submit(s)).expect("accepted").expect("id")
}

fn finish(e: &mut Engine, t: u64, job: JobId) {
    e.apply(Time(t), &Event::Finish { job, cpu_time: 0.0, exit: 0 }).expect("ends");
}

fn grows(d: &[Decision]) -> Vec<(JobId, Vec<(u32, u32)>)> {
    d.iter()
        .filter_map(|x| match x {
            Decision::Grow { job, alloc } => Some((*job, alloc.iter().map(|&(h, n)| (h.0, n.0)).collect())),
            _ => None,
        })
        .collect()
}

fn starts(d: &[Decision]) -> Vec<JobId> {
    d.iter().filter_map(|x| if let Decision::Start { job, .. } = x { Some(*job) } else { None }).collect()
}

#[test]
fn an_autoresizable_job_grows_as_slots_free_up_to_its_maximum() {
    // h1 4 slots, h2 4 slots. A blocker holds h1; the -n 2,6 job starts
    // on h2's 4 (its first host), then grows onto h1 as the blocker's
    // slots free, never past 6.
    let mut e = engine(&[4, 4], "");
    let blocker = submit(&mut e, 0, JobSpec { max_slots: None, ..spec("b", 4, 4, None) });
    assert_eq!(starts(&e.schedule(Time(0))), [blocker]);
    let job = submit(&mut e, 1, spec("u", 2, 6, Some("grow")));
    let d = e.schedule(Time(1));
    assert_eq!(starts(&d), [job]);
    assert!(grows(&d).is_empty(), "nothing free beyond its first allocation");
    assert_eq!(e.job_alloc(job), Some(vec![(HostIdx(1), Slots(4))]));
    finish(&mut e, 10, blocker);
    let d = e.schedule(Time(10));
    assert_eq!(grows(&d), [(job, vec![(0, 2)])], "2 more, to its maximum of 6");
    assert_eq!(e.job_alloc(job), Some(vec![(HostIdx(1), Slots(4)), (HostIdx(0), Slots(2))]));
    assert_eq!(e.queue_load("q").map(|l| l.1), Some(Slots(6)));
    assert!(grows(&e.schedule_full(Time(20))).is_empty(), "at its maximum it asks no more");
}

#[test]
fn a_resize_request_goes_before_the_queue_s_pending_jobs() {
    // Two 1-slot hosts: a blocker on h1, the -n 1,2 job on h2, a job
    // waiting. When h1 frees, the resize request takes it first.
    let mut e = engine(&[1, 1], "");
    let blocker = submit(&mut e, 0, spec("b", 1, 1, None));
    let job = submit(&mut e, 0, spec("u", 1, 2, Some("grow")));
    let waiting = submit(&mut e, 0, spec("w", 1, 1, None));
    assert_eq!(starts(&e.schedule(Time(0))), [blocker, job]);
    finish(&mut e, 5, blocker);
    let d = e.schedule(Time(5));
    assert_eq!(grows(&d), [(job, vec![(0, 1)])]);
    assert!(starts(&d).is_empty(), "the resize request took the slot: {d:?}");
    assert!(e.is_pending(waiting));
}

/// spec 004: "When a first execution host is specified ... LSF does not
/// include the first execution host ... in a job resize allocation
/// request": named with `!`, it is kept out.
#[test]
fn a_first_execution_host_named_is_kept_out_of_a_resize() {
    let on = |host: &str, n: u32| JobSpec {
        res_req: Some(allot_config::resreq::parse(&format!("select[hname=={host}]")).expect("valid")),
        ..spec("b", n, n, None)
    };
    // Blockers on half of h1 and all of h2: the -n 2,4 job, h1 its first
    // execution host, starts on h1's other 2.
    let mut e = engine(&[4, 2], "");
    let b1 = submit(&mut e, 0, on("h1", 2));
    let b2 = submit(&mut e, 0, on("h2", 2));
    let picks = allot_config::engine::parse_host_picks("h1! h2").expect("valid");
    let job = submit(&mut e, 0, JobSpec { hosts: picks, ..spec("u", 2, 4, Some("grow")) });
    assert_eq!(starts(&e.schedule(Time(0))), [b1, b2, job]);
    assert_eq!(e.job_alloc(job), Some(vec![(HostIdx(0), Slots(2))]));
    // h1's 2 free again: its first execution host, kept out.
    finish(&mut e, 3, b1);
    assert!(grows(&e.schedule(Time(3))).is_empty());
    finish(&mut e, 4, b2);
    assert_eq!(grows(&e.schedule(Time(4))), [(job, vec![(1, 2)])]);
}

/// spec 004: "if an autoresizable job requests 1 to 4 slots, on a 2 CPUs 4
/// slots box, an autoresizable job eventually will use up to 4 slots":
/// it starts on 2 (an allocation request is constrained by the CPUs) and
/// grows on the same host, which no `!` named its first.
#[test]
fn an_autoresizable_job_grows_on_its_own_host_as_the_spec_s_example() {
    let cluster = "Begin Host\nHOSTNAME model type server RESOURCES ncpus\nh1 ! LINUX 1 () 2\nEnd Host\n";
    let mxj = "Begin Host\nHOST_NAME MXJ\nh1 4\nEnd Host\n";
    let q = "Begin Queue\nQUEUE_NAME = q\nPRIORITY = 30\nEnd Queue\n";
    let mut e =
        engine_from(&[("lsf.cluster.c", cluster), ("lsb.hosts", mxj), ("lsb.queues", q), ("lsb.applications", APPS)]);
    let job = submit(&mut e, 0, spec("u", 1, 4, Some("grow")));
    assert_eq!(starts(&e.schedule(Time(0))), [job]);
    assert_eq!(e.job_alloc(job), Some(vec![(HostIdx(0), Slots(2))]), "its 2 CPUs to start");
    let grown = grows(&e.schedule_full(Time(60)));
    assert_eq!(grown, [(job, vec![(0, 2)])], "2 more on the same host");
    assert_eq!(e.job_alloc(job), Some(vec![(HostIdx(0), Slots(4))]), "eventually 4 slots");
}

#[test]
fn proclimit_caps_the_growth() {
    // spec 004: "-n 1,4 ... PROCLIMIT ... 2 2 3, the maximum slot request
    // for the job is 3 rather than 4".
    let mut e = engine(&[1, 8], "PROCLIMIT = 2 2 3");
    let job = submit(&mut e, 0, spec("u", 1, 4, Some("grow")));
    assert_eq!(e.job_slots(job), Some((2, 3)));
    let blocker = submit(&mut e, 0, spec("b", 2, 2, None));
    e.apply(Time(0), &Event::Hold(blocker)).expect("pending");
    let d = e.schedule(Time(0));
    assert_eq!(starts(&d), [job]);
    assert_eq!(e.job_alloc(job).map(|a| a.iter().map(|x| x.1.0).sum::<u32>()), Some(3));
}

#[test]
fn queue_limits_bound_a_grow() {
    // QJOB_LIMIT = 4: the job on h1's 2 grows by 2 on h2, not 6.
    let mut e = engine(&[2, 8], "QJOB_LIMIT = 4");
    let job = submit(&mut e, 0, spec("u", 2, 8, Some("grow")));
    let d = e.schedule(Time(0));
    assert_eq!(starts(&d), [job]);
    assert_eq!(e.queue_load("q").map(|l| l.1), Some(Slots(4)), "QJOB_LIMIT binds its start");
    assert_eq!(e.job_alloc(job), Some(vec![(HostIdx(0), Slots(2)), (HostIdx(1), Slots(2))]));
    assert!(grows(&e.schedule_full(Time(1))).is_empty(), "no room under QJOB_LIMIT");
}

#[test]
fn bsub_ar_needs_a_resizable_profile_and_resizable_jobs_take_no_compound() {
    let mut e = engine(&[4], "");
    let mut s = spec("u", 1, 4, Some("plain"));
    s.auto_resize = true;
    assert_eq!(
        e.apply(Time(0), &Event::Submit(s)),
        Err(Rejection::NotAutoResizable("application profile `plain` is not resizable (RESIZABLE_JOBS)".into()))
    );
    let mut s = spec("u", 1, 4, None);
    s.auto_resize = true;
    assert!(matches!(e.apply(Time(0), &Event::Submit(s)), Err(Rejection::NotAutoResizable(_))));
    // -ar with RESIZABLE_JOBS = Y: autoresizable.
    let mut s = spec("u", 1, 4, Some("shrink"));
    s.auto_resize = true;
    assert!(e.apply(Time(0), &Event::Submit(s)).is_ok());
    let mut s = spec("u", 0, 0, Some("grow"));
    s.res_req = Some(allot_config::resreq::parse("2*{} + {}").expect("compound"));
    assert_eq!(e.apply(Time(0), &Event::Submit(s)), Err(Rejection::ResizableWith("compound resource requirements")));
}

#[test]
fn a_release_shrinks_the_allocation_but_never_the_first_host() {
    let mut e = engine(&[2, 4, 4], "");
    let job = submit(&mut e, 0, spec("u", 10, 10, Some("shrink")));
    e.schedule(Time(0));
    assert_eq!(e.job_alloc(job).map(|a| a.len()), Some(3));
    let release = |h: u32, n: Option<u32>| (HostIdx(h), n.map(Slots));
    // "1*hostA 2*hostB hostC": 1 on h2, all of h3.
    e.apply(Time(5), &Event::Shrink { job, release: vec![release(1, Some(1)), release(2, None)], cancel: false })
        .expect("released");
    assert_eq!(e.job_alloc(job), Some(vec![(HostIdx(0), Slots(2)), (HostIdx(1), Slots(3))]));
    assert_eq!(e.queue_load("q").map(|l| l.1), Some(Slots(5)));
    let first = e.apply(Time(6), &Event::Shrink { job, release: vec![release(0, None)], cancel: false });
    assert_eq!(first, Err(Rejection::FirstHostRelease { job, host: "h1".into() }));
    let too_many = e.apply(Time(6), &Event::Shrink { job, release: vec![release(1, Some(4))], cancel: false });
    assert_eq!(too_many, Err(Rejection::BadRelease { job, host: "h2".into(), have: 3 }));
    // A plain job is not resizable.
    let plain = submit(&mut e, 7, spec("u", 1, 1, None));
    e.schedule(Time(7));
    let r = e.apply(Time(8), &Event::Shrink { job: plain, release: vec![release(2, None)], cancel: false });
    assert_eq!(r, Err(Rejection::NotResizable(plain)));
}

#[test]
fn a_pending_resize_request_must_be_cancelled_before_a_release() {
    let mut e = engine(&[2, 2], "");
    let blocker = submit(&mut e, 0, spec("b", 2, 2, None));
    e.schedule(Time(0));
    let job = submit(&mut e, 0, spec("u", 1, 4, Some("grow")));
    e.schedule(Time(0));
    let release = vec![(HostIdx(0), Some(Slots(1)))];
    let _ = blocker;
    // It holds h2's... it started on h2 (h1 is the blocker's).
    let alloc = e.job_alloc(job).expect("running");
    assert_eq!(alloc, [(HostIdx(1), Slots(2))]);
    let r = e.apply(Time(1), &Event::Shrink { job, release: release.clone(), cancel: false });
    assert_eq!(r, Err(Rejection::ResizePending(job)));
    assert_eq!(e.apply(Time(1), &Event::ResizeCancel(job)), Ok(None));
    assert_eq!(e.apply(Time(1), &Event::ResizeCancel(job)), Err(Rejection::NoResizeRequest(job)));
    // Cancelled, it no longer grows when h1 frees.
    finish(&mut e, 2, blocker);
    assert!(grows(&e.schedule(Time(2))).is_empty());
}

#[test]
fn a_failed_grow_gives_its_slots_back_and_is_tried_again_a_cycle_later() {
    let mut e = engine(&[1, 2], "");
    let blocker = submit(&mut e, 0, spec("b", 2, 2, None));
    let job = submit(&mut e, 0, spec("u", 1, 3, Some("grow")));
    e.schedule(Time(0));
    finish(&mut e, 5, blocker);
    let d = e.schedule(Time(5));
    let (_, added) = grows(&d).pop().expect("grew");
    let alloc: Vec<(HostIdx, Slots)> = added.iter().map(|&(h, n)| (HostIdx(h), Slots(n))).collect();
    assert_eq!(added, [(0, 1), (1, 1)], "h1's slot, and one more of its own host h2");
    e.apply(Time(6), &Event::GrowFailed { job, alloc }).expect("given back");
    assert_eq!(e.job_alloc(job), Some(vec![(HostIdx(1), Slots(1))]));
    assert!(grows(&e.schedule_full(Time(7))).is_empty(), "not before a cycle");
    assert_eq!(grows(&e.schedule_full(Time(66))), [(job, vec![(0, 1), (1, 1)])]);
}

#[test]
fn the_charges_follow_the_allocation() {
    // spec 000: "Resize add requests increase number of slots in use and
    // decrease user priority. Resize release requests decrease number of
    // slots in use, and increase user priority."
    let mut e = engine(&[1, 1, 1, 1], "FAIRSHARE = USER_SHARES[[default, 1]]");
    let blocker = submit(&mut e, 0, spec("b", 3, 3, None));
    let job = submit(&mut e, 0, spec("u", 1, 4, Some("grow")));
    e.schedule(Time(0));
    let slots_of = |e: &Engine| {
        let tree = &e.fairshare().policies[0].tree;
        tree.usage(tree.child(NodeId::ROOT, "u").expect("u"), Time(100)).started
    };
    assert_eq!(slots_of(&e), 1);
    finish(&mut e, 10, blocker);
    e.schedule(Time(10));
    assert_eq!(slots_of(&e), 4);
    e.apply(Time(20), &Event::ResizeCancel(job)).expect_err("at its maximum: no request");
    let release = vec![(HostIdx(0), None), (HostIdx(1), None)];
    e.apply(Time(20), &Event::Shrink { job, release, cancel: false }).expect("released");
    assert_eq!(slots_of(&e), 2);
    finish(&mut e, 30, job);
    assert_eq!(slots_of(&e), 0);
}

#[test]
fn a_resize_request_backfills_reserved_slots_for_its_remaining_run_time() {
    // spec 004: "Pending job resize allocation requests are supported by
    // backfill policies ... the run time of pending resize request is
    // equal to the remaining run time of the running resizable job". A
    // 2-slot job of a higher queue reserves h2's freed slot until the long
    // job there ends (1000); the resizable job on h1 may borrow it when it
    // ends before then (-W 1: 60 s), not when it runs longer.
    for (limit, borrows) in [(60, true), (4000, false)] {
        let hosts = "Begin Host\nHOST_NAME MXJ\nh1 1\nh2 2\nEnd Host\n";
        let queues = "Begin Queue\nQUEUE_NAME = hi\nPRIORITY = 40\nSLOT_RESERVE = MAX_RESERVE_TIME[100]\nEnd Queue\n\
                      Begin Queue\nQUEUE_NAME = q\nPRIORITY = 30\nBACKFILL = Y\nRUNLIMIT = 5000\nEnd Queue\n";
        let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", queues), ("lsb.applications", APPS)]);
        let on_h2 = |secs: u64| JobSpec {
            res_req: Some(allot_config::resreq::parse("select[hname==h2]").expect("valid")),
            run_limit: Some(secs),
            ..spec("b", 1, 1, None)
        };
        let long = submit(&mut e, 0, on_h2(1000));
        let short = submit(&mut e, 0, on_h2(10));
        let job = submit(&mut e, 0, JobSpec { run_limit: Some(limit), ..spec("u", 1, 2, Some("grow")) });
        assert_eq!(starts(&e.schedule(Time(0))), [long, short, job]);
        assert_eq!(e.job_alloc(job), Some(vec![(HostIdx(0), Slots(1))]));
        let big =
            submit(&mut e, 1, JobSpec { queue: Some("hi".into()), run_limit: Some(100), ..spec("p", 2, 2, None) });
        e.schedule(Time(1));
        finish(&mut e, 10, short);
        let d = e.schedule(Time(10));
        assert!(e.reservation(big).is_some(), "h2's freed slot is reserved for the 2-slot job");
        assert_eq!(grows(&d) == [(job, vec![(1, 1)])], borrows, "-W {limit}: {d:?}");
    }
}

#[test]
fn the_simulator_grows_an_autoresizable_workload_job() {
    use allot_sim::report::jobs_csv;
    use allot_sim::sim::{SimOptions, run};
    let w = allot_sim::jsonl::read(
        "{\"submit\": 0, \"user\": \"a\", \"runtime\": 50, \"bsub\": \"-q q -n 2 ./first\"}\n\
         {\"submit\": 0, \"user\": \"u\", \"runtime\": 100, \"bsub\": \"-q q -app grow -n 1,4 ./grows\"}\n",
    );
    assert!(w.skipped.is_empty(), "{:?}", w.skipped);
    let mut e = engine(&[2, 2], "");
    let out = run(&mut e, &w, &SimOptions::default(), &|_, _| serde_json::Value::Null, &mut |_| {});
    // It starts on h2's 2 and takes h1's once the first job ends.
    assert_eq!(
        jobs_csv(&out.records),
        "id,user,queue,submit,start,end,slots,hosts,exit,priority\n\
         1,a,q,0,0,50,2,h1*2,0,\n\
         2,u,q,0,0,100,4,h2*2 h1*2,0,\n"
    );
}

/// Where the seeds disagree (README, "Where the specification disagrees
/// with itself"): spec 004 gives a pending resize request "a higher
/// priority" than the queue's pending jobs; spec 000 says LSF "treats
/// pending resize allocation requests as a regular job and enforces the
/// fairshare user priority policy". allot follows 004 for the order, and
/// 000 through the charges: the grow goes first even against a user of
/// higher dynamic priority, and lowers its owner's priority as it grows.
#[test]
fn a_resize_request_goes_before_a_higher_priority_users_pending_job() {
    let mut e = engine(&[1, 1], "FAIRSHARE = USER_SHARES[[default, 1]]");
    let blocker = submit(&mut e, 0, spec("b", 1, 1, None));
    let job = submit(&mut e, 0, spec("heavy", 1, 2, Some("grow")));
    assert_eq!(starts(&e.schedule(Time(0))), [blocker, job]);
    let light = submit(&mut e, 1, spec("light", 1, 1, None));
    assert!(starts(&e.schedule(Time(100))).is_empty(), "both hosts busy");
    finish(&mut e, 200, blocker);
    let d = e.schedule(Time(200));
    assert_eq!(grows(&d), [(job, vec![(0, 1)])], "the grow first, onto the slot the blocker left: {d:?}");
    assert!(e.is_pending(light), "light waits though its user has no usage");
}
