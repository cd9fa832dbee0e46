//! Every trace of `../shared/traces/` replayed under queue-level fairshare
//! (`FAIRSHARE = USER_SHARES[[default, 1]]` on the machine of the trace's
//! header), reading the gzip-compressed file included. Target: under 10 s
//! each on the project's 2-core machine.
//!
//! `replay_backfill`: the same with `allot sim --backfill --kill-at-limit`
//! (SLOT_RESERVE = MAX_RESERVE_TIME[5] and BACKFILL=Y in the queue, jobs
//! ending at their requested time at the latest). Target: under 20 s each
//! (issue 5).
//!
//! `replay_fcfs_backfill`: the same with `allot sim --policy fcfs
//! --backfill --kill-at-limit`, an FCFS queue (the configuration nearest
//! EASY backfilling).
//!
//! `read`: reading alone, the part of each that comes before the engine.
//!
//! `cargo bench -p allot-sim --bench traces`

use std::path::PathBuf;

use allot_engine::{Engine, Time};
use allot_sim::input::{ReadOptions, read_workload};
use allot_sim::machine::{Policy, default_engine};
use allot_sim::sim::{SimOptions, run};
use divan::Bencher;

fn main() {
    divan::main();
}

const TRACES: &[&str] =
    &["KTH-SP2-1996-2.1-cln", "CTC-SP2-1996-3.1-cln", "HPC2N-2002-2.2-cln", "CEA-Curie-2011-2.1-cln", "RICC-2010-2"];

#[divan::bench(args = TRACES, sample_count = 1, sample_size = 1)]
fn replay_fairshare(bencher: Bencher, trace: &str) {
    if let Some(path) = trace_path(trace) {
        bencher.bench_local(|| replay(&path, Policy::Fairshare, false));
    }
}

#[divan::bench(args = TRACES, sample_count = 1, sample_size = 1)]
fn replay_backfill(bencher: Bencher, trace: &str) {
    if let Some(path) = trace_path(trace) {
        bencher.bench_local(|| replay(&path, Policy::Fairshare, true));
    }
}

#[divan::bench(args = TRACES, sample_count = 1, sample_size = 1)]
fn replay_fcfs_backfill(bencher: Bencher, trace: &str) {
    if let Some(path) = trace_path(trace) {
        bencher.bench_local(|| replay(&path, Policy::Fcfs, true));
    }
}

/// Reading alone: decompressing and parsing the trace, as every replay
/// does first.
#[divan::bench(args = TRACES, sample_count = 5, sample_size = 1)]
fn read(bencher: Bencher, trace: &str) {
    if let Some(path) = trace_path(trace) {
        bencher.bench_local(|| read_workload(&path, &ReadOptions::default()).expect("trace reads").jobs.len());
    }
}

/// The trace's file, when `../shared/traces` is beside the repository.
fn trace_path(trace: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../../shared/traces/{trace}.swf.gz"));
    if !path.exists() {
        eprintln!("skipped: {} is not here", path.display());
        return None;
    }
    Some(path)
}

fn replay(path: &std::path::Path, policy: Policy, backfill: bool) -> usize {
    let w = read_workload(path, &ReadOptions::default()).expect("trace reads");
    let mut config = default_engine(&w, policy);
    if backfill {
        allot_sim::machine::reserve(&mut config, true, allot_sim::machine::BACKFILL_RESERVE_CYCLES);
    }
    let mut engine = Engine::new(config);
    let opts = SimOptions { kill_at_limit: backfill, ..SimOptions::default() };
    let out = run(&mut engine, &w, &opts, &|_: &Engine, _: Time| serde_json::Value::Null, &mut |_| {});
    assert!(out.never_started.is_empty());
    out.records.len()
}
