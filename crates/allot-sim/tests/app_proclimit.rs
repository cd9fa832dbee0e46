//! PROCLIMIT of an application profile (spec 004, "Use the PROCLIMIT
//! parameter in lsb.queues or lsb.applications"): the profile's limit
//! refines what the job asked, the queue's bounds the result.

use allot_engine::{Engine, Event, JobId, JobSpec, Rejection, Time};
use allot_sim::testing::engine_from;

const HOSTS: &str = "Begin Host\nHOST_NAME MXJ\nh1 8\nh2 8\nEnd Host\n";

const APPS: &str = "Begin Application\nNAME = mpi\nPROCLIMIT = 2 4\nEnd Application\n\n\
    Begin Application\nNAME = wide\nPROCLIMIT = 4 6 8\nEnd Application\n\n\
    Begin Application\nNAME = plain\nRUNLIMIT = 10\nEnd Application\n";

const QUEUES: &str = "Begin Queue\nQUEUE_NAME = q\nPRIORITY = 30\nPROCLIMIT = 3 8\nEnd Queue\n\n\
    Begin Queue\nQUEUE_NAME = free\nPRIORITY = 30\nEnd Queue\n";

fn engine() -> Engine {
    engine_from(&[("lsb.hosts", HOSTS), ("lsb.applications", APPS), ("lsb.queues", QUEUES)])
}

fn job(queue: &str, app: &str, n: Option<(u32, u32)>) -> JobSpec {
    let (slots, max_slots) = match n {
        Some((a, b)) => (a, (a != b).then_some(b)),
        None => (0, None),
    };
    JobSpec {
        user: "u".into(),
        queue: Some(queue.into()),
        app: Some(app.into()),
        slots,
        max_slots,
        ..JobSpec::default()
    }
}

fn slots(e: &mut Engine, spec: JobSpec) -> Result<(u32, u32), Rejection> {
    let id: JobId = e.apply(Time(0), &Event::Submit(spec))?.expect("a job");
    Ok(e.job_slots(id).expect("a job"))
}

#[test]
fn the_profiles_default_stands_for_no_n() {
    let mut e = engine();
    assert_eq!(slots(&mut e, job("free", "wide", None)), Ok((6, 6)), "PROCLIMIT = 4 6 8: default 6");
    assert_eq!(slots(&mut e, job("free", "mpi", None)), Ok((2, 2)), "two limits: the minimum");
    assert_eq!(slots(&mut e, job("q", "wide", None)), Ok((6, 6)), "6 is within the queue's 3 8");
    assert_eq!(slots(&mut e, job("q", "plain", None)), Ok((3, 3)), "a profile without PROCLIMIT: the queue's");
}

#[test]
fn a_range_is_cut_by_the_profile_then_by_the_queue() {
    let mut e = engine();
    assert_eq!(slots(&mut e, job("free", "mpi", Some((1, 8)))), Ok((2, 4)));
    assert_eq!(slots(&mut e, job("q", "mpi", Some((1, 8)))), Ok((3, 4)), "profile 2 4, queue 3 8");
}

#[test]
fn each_limit_refuses_with_its_name() {
    let mut e = engine();
    assert_eq!(
        slots(&mut e, job("q", "mpi", Some((6, 6)))),
        Err(Rejection::AboveProcLimit { asked: "6".into(), max: 4, of: "application profile `mpi`".into() })
    );
    assert_eq!(
        slots(&mut e, job("free", "wide", Some((2, 3)))).map_err(|r| r.to_string()),
        Err("-n 2,3: fewer processors than the minimum PROCLIMIT of application profile `wide` (4)".into())
    );
    // The profile's default (2) is below the queue's minimum (3).
    assert_eq!(
        slots(&mut e, job("q", "mpi", None)),
        Err(Rejection::BelowProcLimit { asked: "2".into(), min: 3, of: "queue `q`".into() })
    );
}

#[test]
fn automatic_queue_selection_counts_the_profile() {
    let params = "Begin Parameters\nDEFAULT_QUEUE = q free\nEnd Parameters\n";
    let mut e = engine_from(&[
        ("lsb.hosts", HOSTS),
        ("lsb.applications", APPS),
        ("lsb.queues", QUEUES),
        ("lsb.params", params),
    ]);
    // `-app mpi` without -n asks 2: below q's 3, so `free` takes it.
    let spec = JobSpec { queue: None, ..job("q", "mpi", None) };
    assert_eq!(e.choose_queue(&spec, &|_| false), Ok("free"));
    assert_eq!(slots(&mut e, spec), Ok((2, 2)));
}
