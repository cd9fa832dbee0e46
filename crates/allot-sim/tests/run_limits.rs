//! Run limits and what scheduling counts on, against spec 004: interruptible
//! backfill ("Using interruptible backfill"), run time estimates (`-We`,
//! RUNTIME: "Backfill scheduling") and application profiles, driven from
//! configuration text.

mod common;

use allot_engine::{Engine, Event, JobSpec, Time};
use allot_sim::testing::engine_from;
use common::*;

// --- Interruptible backfill ---

/// The four-CPU host with the spec's interruptible backfill queue: BACKFILL,
/// INTERRUPTIBLE_BACKFILL = 60 (seconds), RUNLIMIT = 60 (minutes), the
/// lowest priority; `normal` reserves and backfills.
fn interruptible_engine() -> Engine {
    let queues = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y")
        + &queue("lazy", 1, "BACKFILL = Y\nINTERRUPTIBLE_BACKFILL = 60\nRUNLIMIT = 60");
    engine_from(&[("lsb.hosts", FOUR_CPUS), ("lsb.queues", &queues)])
}

/// Spec 004, "Using interruptible backfill": a job of the queue scheduled
/// regularly runs under the queue's limit, its own ignored; in the
/// backfill phase it takes reserved slots not needed for longer than the
/// queue's time slice, its limit cut to end when the reservation needs
/// them (and never beyond the queue's RUNLIMIT).
#[test]
fn interruptible_backfill_cuts_the_run_limit_to_the_reservation() {
    let mut e = interruptible_engine();
    let lazy = |e: &mut Engine, t: Time, minutes: Option<u64>| submit(e, t, job("lazy", 1, minutes, None));
    let regular = lazy(&mut e, hm(7, 0), Some(10));
    assert_eq!(pass(&mut e, hm(7, 0)), [regular.0]);
    assert_eq!(e.job_run_limit(regular), Some(3600), "the queue's RUNLIMIT, not the job's 10 minutes");
    end(&mut e, hm(7, 30), regular);

    let job1 = submit(&mut e, hm(8, 0), job("normal", 1, Some(120), None));
    assert_eq!(pass(&mut e, hm(8, 0)), [job1.0]);
    let job2 = submit(&mut e, hm(8, 0), job("normal", 4, None, None));
    assert_eq!(pass(&mut e, hm(8, 0)), Vec::<u64>::new());
    assert_eq!(e.predicted_start(job2, hm(8, 0)), Some(hm(10, 0)), "predicted at job1's limit");

    // 90 minutes to the predicted start: the queue's hour.
    let a = lazy(&mut e, hm(8, 30), Some(600));
    assert_eq!(pass(&mut e, hm(8, 30)), [a.0]);
    assert_eq!(e.job_run_limit(a), Some(3600));
    // 45 minutes left: cut to 45.
    let b = lazy(&mut e, hm(9, 15), None);
    assert_eq!(pass(&mut e, hm(9, 15)), [b.0]);
    assert_eq!(e.job_run_limit(b), Some(45 * 60));
    assert_eq!(e.predicted_start(job2, hm(9, 15)), Some(hm(10, 0)), "the backfill jobs do not delay job2");
    assert_eq!(kills(&mut e, hm(9, 30)), [a.0]);
    end(&mut e, hm(9, 30), a);
    // A minute and a half to go: longer than the 60-second slice.
    let c = lazy(&mut e, Time(hm(9, 58).0 + 30), None);
    assert_eq!(pass(&mut e, Time(hm(9, 58).0 + 30)), [c.0]);
    assert_eq!(e.job_run_limit(c), Some(90));
    // Exactly the slice left: not longer than it.
    let d = lazy(&mut e, hm(9, 59), None);
    assert_eq!(pass(&mut e, hm(9, 59)), Vec::<u64>::new());
    let mut killed = kills(&mut e, hm(10, 0));
    killed.sort_unstable();
    assert_eq!(killed, [job1.0, b.0, c.0], "job1 at its limit, b and c as job2 needs the slots");
    for id in [b, c, job1] {
        end(&mut e, hm(10, 0), id);
    }
    assert_eq!(pass(&mut e, hm(10, 0)), [job2.0], "d, lower in priority, waits: job2 takes all four");
    assert!(e.is_pending(d));
}

/// A requeued interruptible backfill job is pending again with no cut
/// limit: its next start computes its own.
#[test]
fn a_requeued_interruptible_job_loses_its_cut_limit() {
    let mut e = interruptible_engine();
    let job1 = submit(&mut e, hm(8, 0), job("normal", 1, Some(120), None));
    let job2 = submit(&mut e, hm(8, 0), job("normal", 4, None, None));
    assert_eq!(pass(&mut e, hm(8, 0)), [job1.0]);
    let b = submit(&mut e, hm(9, 15), job("lazy", 1, None, None));
    assert_eq!(pass(&mut e, hm(9, 15)), [b.0]);
    assert_eq!(e.job_run_limit(b), Some(45 * 60));
    e.apply(hm(10, 0), &Event::Requeue { job: b, cpu_time: 0.0, hold: false }).expect("requeued");
    assert_eq!(e.job_run_limit(b), Some(3600));
    end(&mut e, hm(10, 0), job1);
    assert_eq!(pass(&mut e, hm(10, 0)), [job2.0]);
}

// --- Run time estimates (`-We`, LSF's RUNTIME) ---

fn estimated(slots: u32, limit_minutes: Option<u64>, estimate_minutes: u64) -> JobSpec {
    JobSpec { run_estimate: Some(estimate_minutes * 60), ..job("normal", slots, limit_minutes, None) }
}

/// Spec 004, "Backfill scheduling": "LSF uses the RUNTIME estimate for
/// scheduling purposes only, and does not terminate jobs that exceed the
/// RUNTIME duration." On the 4-CPU example: job1 (limit 4 hours, estimate
/// 2) makes job2's predicted start 10:00; job3 with an estimate and no
/// limit backfills; job1 is not killed at its estimate, and once past it
/// has no end to count on, so job2 has no predicted start and lends
/// nothing; it is killed at its limit.
#[test]
fn estimates_schedule_but_do_not_kill() {
    let mut e = four_cpu_engine();
    let job1 = submit(&mut e, hm(8, 0), estimated(1, Some(240), 120));
    assert_eq!(pass(&mut e, hm(8, 0)), [job1.0]);
    let job2 = submit(&mut e, hm(8, 0), job("normal", 4, None, None));
    assert_eq!(pass(&mut e, hm(8, 0)), Vec::<u64>::new());
    assert_eq!(e.predicted_start(job2, hm(8, 0)), Some(hm(10, 0)), "job1's estimate, not its limit");
    let job3 = submit(&mut e, hm(8, 30), estimated(2, None, 60));
    assert_eq!(pass(&mut e, hm(8, 30)), [job3.0], "an estimate lets a job without a limit backfill");
    let late = submit(&mut e, hm(8, 30), estimated(1, None, 120));
    assert_eq!(pass(&mut e, hm(8, 30)), Vec::<u64>::new(), "ending at 10:30, after job2's predicted start");
    end(&mut e, hm(9, 30), job3);
    assert!(kills(&mut e, hm(10, 0)).is_empty(), "no kill at an estimate");
    assert_eq!(e.predicted_start(job2, hm(10, 0)), None, "job1 ran past its estimate");
    let short = submit(&mut e, hm(10, 1), job("normal", 1, Some(10), None));
    assert_eq!(pass(&mut e, hm(10, 1)), Vec::<u64>::new(), "no predicted start: nothing to lend");
    assert_eq!(kills(&mut e, hm(12, 0)), [job1.0]);
    end(&mut e, hm(12, 0), job1);
    assert_eq!(pass(&mut e, hm(12, 0)), [job2.0]);
    assert!(e.is_pending(late) && e.is_pending(short));
}

/// Application profiles (`lsb.applications`, `bsub -app`): RUNTIME is the
/// estimate and RUNLIMIT the limit of a job that gives neither `-We` nor
/// `-W` (job level over application level). On the 4-CPU example: an
/// `-app est` job with no limit backfills by its profile's hour, unless
/// its own `-We` says 3 hours; an `-app lim` job backfills and is killed
/// at its profile's hour; the estimate kills nothing.
#[test]
fn application_profiles_give_estimates_and_limits() {
    let apps = "Begin Application\nNAME = est\nRUNTIME = 60\nEnd Application\n\
                Begin Application\nNAME = lim\nRUNLIMIT = 60\nEnd Application\n";
    let q = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y");
    let mut e = engine_from(&[("lsb.hosts", FOUR_CPUS), ("lsb.queues", &q), ("lsb.applications", apps)]);
    let app = |name: &str, slots: u32| JobSpec { app: Some(name.into()), ..job("normal", slots, None, None) };
    assert_eq!(
        e.apply(hm(8, 0), &Event::Submit(app("nosuch", 1))),
        Err(allot_engine::Rejection::NoSuchApplication("nosuch".into()))
    );
    let job1 = submit(&mut e, hm(8, 0), job("normal", 1, Some(120), None));
    let job2 = submit(&mut e, hm(8, 0), job("normal", 4, None, None));
    assert_eq!(pass(&mut e, hm(8, 0)), [job1.0]);
    let longer = submit(&mut e, hm(8, 30), JobSpec { run_estimate: Some(180 * 60), ..app("est", 2) });
    assert_eq!(pass(&mut e, hm(8, 30)), Vec::<u64>::new(), "its own 3 hours go past job2's start");
    let est = submit(&mut e, hm(8, 30), app("est", 2));
    let lim = submit(&mut e, hm(8, 30), app("lim", 1));
    assert_eq!(pass(&mut e, hm(8, 30)), [est.0, lim.0]);
    assert_eq!((e.job_run_limit(est), e.job_run_limit(lim)), (None, Some(3600)));
    assert_eq!(kills(&mut e, hm(9, 30)), [lim.0], "the profile's RUNLIMIT kills, its RUNTIME does not");
    assert!(e.is_pending(longer) && e.is_pending(job2));
}
