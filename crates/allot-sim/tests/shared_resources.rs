//! Site-defined numeric resources (LSF's `lsf.shared` Resource section and
//! the cluster file's ResourceMap): a license count the hosts share and a
//! host's own scratch space, in `rusage` (with duration and decay), in
//! `select` and in the spec's compound requirement.

mod common;

use allot_engine::{Engine, Event, JobId, JobSpec, Time};
use allot_sim::testing::engine_from;
use common::{end, pass, queue, res};

const CLUSTER: &str = "Begin Host\nHOSTNAME model type server RESOURCES ncpus maxmem\n\
                       hostA ! X86_64 1 () 4 8000\nhostB ! SGI 1 () 4 8000\nEnd Host\n\n\
                       Begin ResourceMap\nRESOURCENAME LOCATION\nlicA (2@[all])\nscratch (100@[default])\n\
                       End ResourceMap\n";

const SHARED: &str = "Begin Resource\nRESOURCENAME TYPE INTERVAL INCREASING CONSUMABLE DESCRIPTION\n\
                      licA Numeric () N () (licenses)\nscratch Numeric () N () (scratch space)\n\
                      bigmem Boolean () () () (big memory)\nload15 Numeric 60 Y N (not reserved)\nEnd Resource\n";

fn engine() -> Engine {
    let queues = queue("normal", 30, "");
    engine_from(&[("lsf.cluster.test", CLUSTER), ("lsf.shared", SHARED), ("lsb.queues", &queues)])
}

fn job(slots: u32, r: &str) -> JobSpec {
    JobSpec { user: "ann".into(), queue: Some("normal".into()), slots, res_req: Some(res(r)), ..JobSpec::default() }
}

fn submit(e: &mut Engine, t: Time, s: JobSpec) -> JobId {
    e.apply(t, &Event::Submit(s)).expect("accepted").expect("an id")
}

fn running(e: &Engine, jobs: &[JobId]) -> usize {
    jobs.iter().filter(|&&j| e.job_alloc(j).is_some()).count()
}

/// Two licenses for the whole cluster: two jobs run, the third waits for
/// one to end; `select` sees what is left.
#[test]
fn a_shared_license_count_bounds_the_jobs_that_hold_one() {
    let mut e = engine();
    let jobs: Vec<JobId> = (0..3).map(|_| submit(&mut e, Time(0), job(1, "rusage[licA=1]"))).collect();
    pass(&mut e, Time(0));
    assert_eq!(running(&e, &jobs), 2);
    assert_eq!(
        e.pending_reason(jobs[2], Time(0)).map(|r| r.to_string()).as_deref(),
        Some("Not enough hosts meet the job's resource requirements")
    );
    let picky = submit(&mut e, Time(0), job(1, "select[licA>0]"));
    pass(&mut e, Time(0));
    assert!(e.job_alloc(picky).is_none(), "no license left: licA is 0 on every host");
    let usage = e.shared_usage();
    assert_eq!((usage[0].name.as_str(), usage[0].total, usage[0].reserved), ("licA", 2.0, 2.0));
    assert_eq!(usage[0].hosts, ["hostA", "hostB"]);
    end(&mut e, Time(10), jobs[0]);
    pass(&mut e, Time(10));
    assert_eq!(running(&e, &jobs[1..]), 2);
}

/// A parallel job over both hosts takes its license once; a host's own
/// scratch space is taken on each of its hosts.
#[test]
fn a_shared_instance_gives_a_job_its_amount_once_and_a_hosts_own_on_each_host() {
    let mut e = engine();
    let wide = submit(&mut e, Time(0), job(8, "rusage[licA=1:scratch=60]"));
    pass(&mut e, Time(0));
    assert_eq!(e.job_alloc(wide).map(|a| a.len()), Some(2), "on both hosts");
    assert_eq!(e.shared_usage()[0].reserved, 1.0);
    end(&mut e, Time(1), wide);
    let a = submit(&mut e, Time(1), job(1, "rusage[scratch=60]"));
    let b = submit(&mut e, Time(1), job(1, "rusage[scratch=60]"));
    let c = submit(&mut e, Time(1), job(1, "rusage[scratch=60]"));
    pass(&mut e, Time(1));
    assert_eq!(running(&e, &[a, b, c]), 2, "100 of scratch on each host: one job of 60 each");
    let hosts: Vec<u32> = [a, b].iter().map(|&j| e.job_alloc(j).expect("runs")[0].0.0).collect();
    assert_ne!(hosts[0], hosts[1]);
}

/// `duration`: held that long from the start, then free to others while
/// the job runs on; `decay`: what is held falls linearly over it.
#[test]
fn duration_and_decay() {
    let mut e = engine();
    let first = submit(&mut e, Time(0), job(1, "rusage[licA=2:duration=10]"));
    pass(&mut e, Time(0));
    let next = submit(&mut e, Time(1), job(1, "rusage[licA=1]"));
    pass(&mut e, Time(599));
    assert!(e.job_alloc(next).is_none(), "both licenses held for 10 minutes");
    assert_eq!(e.next_wakeup(), Some(Time(600)), "a pass is due when the duration ends");
    pass(&mut e, Time(600));
    assert!(e.job_alloc(next).is_some() && e.job_alloc(first).is_some());

    let mut e = engine();
    submit(&mut e, Time(0), job(1, "rusage[licA=2:duration=10:decay=1]"));
    pass(&mut e, Time(0));
    let later = submit(&mut e, Time(1), job(1, "rusage[licA=1]"));
    pass(&mut e, Time(200));
    assert!(e.job_alloc(later).is_none(), "at 200 s, 2 * (1 - 200/600) = 1.33 held");
    pass(&mut e, Time(300));
    assert!(e.job_alloc(later).is_some(), "at 300 s, half decayed: one is free");
}

/// Spec 004's compound example: the first execution host's term holds
/// the license; the other term takes none.
#[test]
fn the_specs_compound_requirement_with_a_license() {
    let mut e = engine();
    let text = "1*{select[type==X86_64]rusage[licA=1]} + {select[type==any]}";
    let jobs: Vec<JobId> = (0..3).map(|_| submit(&mut e, Time(0), job(2, text))).collect();
    pass(&mut e, Time(0));
    assert_eq!(running(&e, &jobs), 2, "4 slots on hostA, but licenses for 2 jobs");
    let first = e.job_alloc(jobs[0]).expect("runs");
    assert_eq!(e.host_name(first[0].0), "hostA");
    assert_eq!(e.shared_usage()[0].reserved, 2.0);
}

/// A resource no host has, or one not consumable, is refused at
/// submission, named.
#[test]
fn asking_what_cannot_be_reserved_is_refused() {
    let mut e = engine();
    let refused = |e: &mut Engine, r: &str| e.apply(Time(0), &Event::Submit(job(1, r))).expect_err(r).to_string();
    assert!(refused(&mut e, "rusage[licZ=1]").contains("rusage[licZ]: no host has this resource"));
    assert!(refused(&mut e, "rusage[load15=1]").contains("rusage[load15]: the resource is not consumable"));
    assert!(refused(&mut e, "rusage[bigmem=1]").contains("not consumable"));
}

/// A Limit's RESOURCE bounds what its consumers hold of a site resource:
/// one license per user of the two, whatever is left of the count.
#[test]
fn a_limits_resource_bounds_each_users_licenses() {
    let queues = queue("normal", 30, "");
    let limits = "Begin Limit\nNAME = lic\nPER_USER = all\nRESOURCE = [licA,1]\nEnd Limit\n";
    let mut e = engine_from(&[
        ("lsf.cluster.test", CLUSTER),
        ("lsf.shared", SHARED),
        ("lsb.queues", &queues),
        ("lsb.resources", limits),
    ]);
    let by = |user: &str| JobSpec { user: user.into(), ..job(1, "rusage[licA=1]") };
    let ann: Vec<JobId> = (0..2).map(|_| submit(&mut e, Time(0), by("ann"))).collect();
    let bob = submit(&mut e, Time(0), by("bob"));
    pass(&mut e, Time(0));
    assert_eq!((running(&e, &ann), running(&e, &[bob])), (1, 1));
    assert_eq!(
        e.pending_reason(ann[1], Time(0)).map(|r| r.to_string()).as_deref(),
        Some("Resource (licA) limit defined on user or user group has been reached (Limit lic)")
    );
    let usage = e.limit_usage(false);
    assert_eq!(
        usage.iter().map(|u| u.resources.clone()).collect::<Vec<_>>(),
        vec![vec![("licA".to_string(), 1.0, 1.0)]; 2]
    );
    // A job that asks no license is not bound by it.
    let plain = submit(
        &mut e,
        Time(0),
        JobSpec { user: "ann".into(), queue: Some("normal".into()), slots: 1, ..JobSpec::default() },
    );
    pass(&mut e, Time(0));
    assert!(e.job_alloc(plain).is_some());
}
