//! The reservation counts `summary.json` reports (`reservations`: made,
//! expired, mean standing per pass): what shows whether reservations let
//! their jobs start or only hold slots idle until MAX_RESERVE_TIME.

use allot_sim::sim::{SimOptions, run};
use allot_sim::testing::engine_from;

#[test]
fn a_reservation_that_expires_is_counted_made_expired_and_standing() {
    let hosts = "[[hosts]]\nname = \"h1\"\nncpus = 1\n\n[[hosts]]\nname = \"h2\"\nncpus = 1\n";
    // MBD_SLEEP_TIME 60 s: a reservation lasts 60 s.
    let queues = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nSLOT_RESERVE = MAX_RESERVE_TIME[1]\nEnd Queue\n";
    let mut e = engine_from(&[("allot.toml", hosts), ("lsb.queues", queues)]);
    let w = allot_sim::jsonl::read(
        &[
            r#"{"submit": 0, "user": "a", "runtime": 100, "bsub": "-n 1"}"#,
            r#"{"submit": 10, "user": "a", "runtime": 10, "bsub": "-n 2"}"#,
        ]
        .join("\n"),
    );
    let out = run(&mut e, &w, &SimOptions::default(), &|_, _| serde_json::Value::Null, &mut |_| {});
    // The 2-slot job reserves h2 at 10, gives it up at 70 (its 60 s),
    // and starts when h1 frees at 100.
    let (made, expired, standing) = e.reservation_counts();
    assert_eq!((made, expired), (1, 1));
    assert!(standing >= 1 && standing < out.passes, "{standing} of {} passes", out.passes);
    let started: Vec<(u64, u64)> = out.records.iter().map(|r| (r.id, r.start)).collect();
    assert!(started.contains(&(2, 100)), "{started:?}");
    let summary = allot_sim::report::summary("fcfs", &w, &out, &e);
    assert_eq!(summary["reservations"]["made"], 1);
    assert_eq!(summary["reservations"]["expired"], 1);
}
