//! Appending to the event log: one record per commit, and batches of 32
//! (group commit), with `synchronous=FULL`.
//!
//! `cargo bench -p allot-store --bench append`

use allot_engine::Time;
use allot_store::{Record, Store};
use divan::Bencher;

fn main() {
    divan::main();
}

fn store() -> Store {
    let dir = std::env::temp_dir().join(format!("allot-store-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    Store::open(&dir.join("state.db")).expect("open")
}

#[divan::bench(args = [1, 32])]
fn append_batch(bencher: Bencher, batch: usize) {
    let mut s = store();
    let records: Vec<(Time, Record)> =
        (0..batch).map(|i| (Time(i as u64), Record::HostChanged { host: format!("h{i}"), up: true })).collect();
    bencher.bench_local(|| s.append(&records).expect("append"));
}
