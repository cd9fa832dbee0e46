//! Planned reservation on the live daemon: `LSB_TIME_RESERVE_NUMJOBS` in
//! the configuration directory's `lsf.conf`, through the real commands.

mod common;

use common::*;

/// A 4-CPU host runs a 3-slot job with a 2-hour run limit; a 3-slot job
/// waits for it. Its plan needs none of the one free slot (the 3 slots
/// come back at its predicted start), so a job with no run limit, which
/// may not backfill, starts there at once. Under greedy reservation the
/// wide job holds the free slot, and the job waits.
#[test]
fn a_plan_leaves_free_the_slots_it_does_not_need() {
    for planned in [true, false] {
        let dir = tempdir(if planned { "planned" } else { "greedy" });
        let queue = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nSLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y\nEnd Queue\n";
        let conf = if planned { "LSB_TIME_RESERVE_NUMJOBS=1\n" } else { "" };
        let config = config_dir(
            &dir,
            &[("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 4\n"), ("lsb.queues", queue), ("lsf.conf", conf)],
        );
        let d = Daemon::start_with(&dir.join("state"), Some(&config));
        if planned {
            let all = stdout(&d.cmd(&["bparams", "-a"], &dir));
            assert!(all.contains("\n    LSB_TIME_RESERVE_NUMJOBS = 1\n"), "{all}");
        }
        let long = submitted_id(&d.cmd(&["bsub", "-W", "120", "-n", "3", "sleep", "600"], &dir));
        d.wait_for(long, "RUN", &dir);
        let wide = submitted_id(&d.cmd(&["bsub", "-n", "3", "sleep", "1"], &dir));
        d.wait_for(wide, "PEND", &dir);
        let free = submitted_id(&d.cmd(&["bsub", "sleep", "600"], &dir));
        if planned {
            d.wait_for(free, "RUN", &dir);
        } else {
            // Passes come at once on a submission: a few seconds leave it
            // every chance to start, which it must not.
            std::thread::sleep(std::time::Duration::from_secs(3));
            let shown = stdout(&d.cmd(&["bjobs", &free.to_string()], &dir));
            assert!(shown.contains(" PEND "), "{shown}");
        }
        assert!(d.cmd(&["bkill", "0"], &dir).status.success());
    }
}
