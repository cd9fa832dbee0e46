//! The dispatch pass at the scale of issue 3: 100,000 pending jobs of
//! 10,000 users in a three-level share tree (10 divisions x 10 departments
//! x 100 users), onto 5,000 hosts of 32 slots.
//!
//! `cargo bench -p allot-engine --bench dispatch`; to see where a pass
//! spends its instructions: `valgrind --tool=callgrind
//! --toggle-collect='*schedule*' target/release/deps/dispatch-<hash>
//! --bench full_pass`.

use allot_engine::model::{EngineConfig, HostSpec, QueueSpec};
#[path = "common.rs"]
mod common;

use allot_engine::shares::{FairshareSet, LsfFactors, PolicyState, Scope, ShareTree};
use allot_engine::{Decision, Engine, Event, JobSpec, Time};
use divan::{AllocProfiler, Bencher, black_box};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

const HOSTS: usize = 5_000;
const SLOTS_PER_HOST: u32 = 32;
const USERS: usize = 10_000;
const JOBS: usize = 100_000;

fn main() {
    divan::main();
}

fn user(i: usize) -> String {
    format!("u{i}")
}

fn config() -> EngineConfig {
    let (top, groups, users) = common::deep_tree(10, 10, 100, |div, dep, u| user(div * 1000 + dep * 100 + u));
    assert_eq!(users.len(), USERS);
    let tree = ShareTree::new("batch", &top, groups.clone(), LsfFactors::default(), users);
    let mut queue = QueueSpec::new("batch", 30);
    queue.policy = Some("batch".into());
    EngineConfig {
        hosts: (0..HOSTS).map(|i| HostSpec::new(format!("h{i:04}"), SLOTS_PER_HOST, SLOTS_PER_HOST)).collect(),
        queues: vec![queue],
        fairshare: FairshareSet { policies: vec![PolicyState { scope: Scope::Queues(vec!["batch".into()]), tree }] },
        groups,
        mbd_sleep_time: 60,
        hist_hours: 5.0,
        default_queues: vec!["batch".into()],
        user_max_jobs: Default::default(),
        max_job_array_size: 1000,
        max_user_priority: None,
        ..EngineConfig::default()
    }
}

/// An engine with `JOBS` pending jobs, 10 per user, of 1 to 4 slots.
fn loaded() -> Engine {
    let mut e = Engine::new(config());
    for j in 0..JOBS {
        let spec = JobSpec { user: user(j % USERS), slots: 1 + (j % 4) as u32, ..JobSpec::default() };
        e.apply(Time(0), &Event::Submit(spec)).expect("accepted");
    }
    e
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
