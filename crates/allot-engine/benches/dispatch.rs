//! The dispatch pass at the scale of issue 3: 100,000 pending jobs of
//! 10,000 users in a three-level share tree (10 divisions x 10 departments
//! x 100 users), onto 5,000 hosts of 32 slots.
//!
//! `cargo bench -p allot-engine --bench dispatch`; to see where a pass
//! spends its instructions: `valgrind --tool=callgrind
//! --toggle-collect='*schedule*' target/release/deps/dispatch-<hash>
//! --bench full_pass`.

use allot_engine::bench_scenario::{Scale, dispatch_config, user};
use allot_engine::{Decision, Engine, Event, JobSpec, Time};
use divan::{AllocProfiler, Bencher, black_box};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

const JOBS: usize = Scale::ISSUE_3.jobs;
const USERS: usize = Scale::ISSUE_3.users;

fn main() {
    divan::main();
}

fn config() -> allot_engine::EngineConfig {
    dispatch_config(Scale::ISSUE_3)
}

/// An engine with `JOBS` pending jobs, 10 per user, of 1 to 4 slots
/// (`allot_engine::bench_scenario`).
fn loaded() -> Engine {
    allot_engine::bench_scenario::loaded(Scale::ISSUE_3)
}

/// The cluster starts empty: the pass starts every job that fits (the
/// 160,000 slots take about 64,000 of the 100,000 jobs) and looks at all
/// of them.
#[divan::bench(sample_count = 5)]
fn full_pass_empty_cluster(bencher: Bencher) {
    bencher.with_inputs(loaded).bench_local_values(|mut e| {
        let d = e.schedule(Time(1));
        assert!(d.len() > 60_000);
        black_box(d)
    });
}

/// The cluster is full after a first pass; one job ends and its slots go
/// to the next user: a pass over 36,000 pending jobs that starts one or two.
#[divan::bench(sample_count = 5)]
fn pass_after_one_job_ends(bencher: Bencher) {
    bencher
        .with_inputs(|| {
            let mut e = loaded();
            let first = e.schedule(Time(1));
            let Some(Decision::Start { job, .. }) = first.first().cloned() else { panic!("started") };
            e.apply(Time(100), &Event::Finish { job, cpu_time: 99.0, exit: 0 }).expect("finish");
            e
        })
        .bench_local_values(|mut e| black_box(e.schedule(Time(100))));
}

/// A pass in which nothing changed.
#[divan::bench]
fn pass_with_nothing_new(bencher: Bencher) {
    let mut e = loaded();
    e.schedule(Time(1));
    bencher.bench_local(|| black_box(e.schedule(Time(2))));
}

/// Memory of 100,000 pending jobs (the allocation profile of this bench,
/// divided by 100,000, is the memory per pending job).
#[divan::bench(sample_count = 3)]
fn submit_100k_jobs(bencher: Bencher) {
    bencher.with_inputs(|| Engine::new(config())).bench_local_values(|mut e| {
        for j in 0..JOBS {
            let spec = JobSpec { user: user(j % USERS), slots: 1, ..JobSpec::default() };
            e.apply(Time(0), &Event::Submit(spec)).expect("accepted");
        }
        e
    });
}
