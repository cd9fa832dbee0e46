//! Every trace of `../shared/traces/` replayed under queue-level fairshare
//! (`FAIRSHARE = USER_SHARES[[default, 1]]` on the machine of the trace's
//! header), reading the gzip-compressed file included. Target: under 10 s
//! each on the project's 2-core machine.
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
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../../shared/traces/{trace}.swf.gz"));
    if !path.exists() {
        eprintln!("skipped: {} is not here", path.display());
        return;
    }
    bencher.bench_local(|| {
        let w = read_workload(&path, &ReadOptions::default()).expect("trace reads");
        let mut engine = Engine::new(default_engine(&w, Policy::Fairshare));
        let out =
            run(&mut engine, &w, &SimOptions::default(), &|_: &Engine, _: Time| serde_json::Value::Null, &mut |_| {});
        assert_eq!(out.never_started, 0);
        out.records.len()
    });
}
