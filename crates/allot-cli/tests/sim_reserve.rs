//! `allot sim --max-reserve-time`: how long the reservation `--backfill`
//! and `--reserve` make stands before it is given up (MAX_RESERVE_TIME),
//! `never` for EASY backfill's reservation, which stands until its job
//! starts.

use std::path::Path;
use std::process::{Command, Output};

/// Four one-slot nodes: a 3-slot job runs an hour from 0; a 4-slot job
/// comes at 10 and waits for it, holding the one free slot reserved.
const SWF: &str = "; MaxNodes: 4\n; MaxProcs: 4\n\
    1 0 -1 3600 3 -1 -1 3 3600 -1 1 1 -1 -1 -1 -1 -1 -1\n\
    2 10 -1 100 4 -1 -1 4 200 -1 1 2 -1 -1 -1 -1 -1 -1\n";

fn sim(dir: &Path, name: &str, extra: &[&str]) -> Output {
    let out = dir.join(name);
    let mut args = vec!["sim", "w.swf", "--policy", "fcfs", "--out", out.to_str().expect("path")];
    args.extend_from_slice(extra);
    Command::new(env!("CARGO_BIN_EXE_allot")).current_dir(dir).args(&args).output().expect("allot runs")
}

fn summary(dir: &Path, name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(name).join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("JSON")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_reservation_stands_for_the_time_asked_or_until_its_job_starts() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("w.swf"), SWF).expect("write");
    for (name, extra) in [
        ("default", &["--backfill"][..]),
        ("half-hour", &["--backfill", "--max-reserve-time", "30"]),
        ("never", &["--backfill", "--max-reserve-time", "never"]),
        ("never-reserve", &["--reserve", "--max-reserve-time", "never"]),
    ] {
        let out = sim(dir.path(), name, extra);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
    }
    let expired = |name| summary(dir.path(), name)["reservations"]["expired"].as_u64();
    // Made at 10, given up at the first pass at or after 10 + 5 × 60 s,
    // made again at the next, a cycle (60 s) later (the job's end at 3600
    // is the only other event): MAX_RESERVE_TIME[5] expires at 310, 670,
    // ..., 3550, ten times; [30] at 1810 (and would again at 3670); never,
    // never.
    assert_eq!(expired("default"), Some(10));
    assert_eq!(expired("half-hour"), Some(1));
    assert_eq!(expired("never"), Some(0));
    assert_eq!(expired("never-reserve"), Some(0));
    assert_eq!(summary(dir.path(), "never")["reservations"]["made"].as_u64(), Some(1));
    assert_eq!(summary(dir.path(), "default")["policy"], "fcfs with slot reservation and backfill");
    assert_eq!(
        summary(dir.path(), "half-hour")["policy"],
        "fcfs with slot reservation (MAX_RESERVE_TIME[30]) and backfill"
    );
    assert_eq!(
        summary(dir.path(), "never")["policy"],
        "fcfs with slot reservation held until its job starts and backfill"
    );
    // The wide job starts when the hour is up, whatever its reservation.
    for name in ["default", "half-hour", "never"] {
        let csv = std::fs::read_to_string(dir.path().join(name).join("jobs.csv")).expect("jobs.csv");
        assert!(csv.lines().any(|l| l.starts_with("2,user2,normal,10,3600,3700,4,")), "{name}: {csv}");
    }
}

#[test]
fn a_reservation_time_is_refused_with_the_option_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("w.swf"), SWF).expect("write");
    let out = sim(dir.path(), "zero", &["--backfill", "--max-reserve-time", "0"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--max-reserve-time"), "{}", stderr(&out));
    assert!(stderr(&out).contains("`0` is neither a number of cycles (1 or more) nor `never`"), "{}", stderr(&out));
    let out = sim(dir.path(), "alone", &["--max-reserve-time", "5"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--max-reserve-time: times slot reservation: give --backfill or --reserve"));
    let out = sim(dir.path(), "planned", &["--backfill", "--plan", "Y", "--max-reserve-time", "5"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--max-reserve-time"), "{}", stderr(&out));
    assert!(!dir.path().join("zero").exists() && !dir.path().join("alone").exists());
}
