//! Share trees at the scale of ARCHITECTURE.md: 100,000 users in a tree
//! three levels deep (10 divisions, 10 departments each, 1,000 users per
//! department through `default`), and 100,000 users flat under `default`.
//!
//! `cargo bench -p allot-engine --bench shares`

use allot_engine::Time;

use allot_engine::shares::priority::PriorityInputs;
use allot_engine::shares::{GroupTable, JobCharge, LsfFactors, Selector, ShareAssignment, ShareTarget, ShareTree};
use divan::{AllocProfiler, Bencher, black_box};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

const DIVISIONS: usize = 10;
const DEPARTMENTS: usize = 10;
const USERS_PER_DEPARTMENT: usize = 1_000;

fn main() {
    divan::main();
}

fn user(div: usize, dep: usize, u: usize) -> String {
    format!("u{div}_{dep}_{u}")
}

/// The deep configuration (`allot_engine::bench_scenario::deep_tree`).
fn deep() -> (Vec<ShareAssignment>, GroupTable, Vec<String>) {
    allot_engine::bench_scenario::deep_tree(DIVISIONS, DEPARTMENTS, USERS_PER_DEPARTMENT, user)
}

fn deep_tree() -> (ShareTree, Vec<String>) {
    let (top, groups, users) = deep();
    (ShareTree::new("deep", &top, groups, LsfFactors::default(), users.clone()), users)
}

#[divan::bench(sample_count = 10)]
fn build_deep_100k(bencher: Bencher) {
    bencher.with_inputs(deep).bench_values(|(top, groups, users)| {
        black_box(ShareTree::new("deep", &top, groups, LsfFactors::default(), users))
    });
}

#[divan::bench(sample_count = 10)]
fn build_flat_100k(bencher: Bencher) {
    let users: Vec<String> = (0..100_000).map(|u| format!("u{u}")).collect();
    let top = vec![ShareAssignment::new(ShareTarget::Default, 1)];
    bencher.with_inputs(|| users.clone()).bench_values(|users| {
        black_box(ShareTree::new("flat", &top, GroupTable::default(), LsfFactors::default(), users))
    });
}

/// A job starts and ends: the path from the user's account to the root.
#[divan::bench]
fn start_and_finish_job(bencher: Bencher) {
    let (mut tree, users) = deep_tree();
    let leaf = tree.resolve(&users[54_321], None).expect("shares")[0];
    let job = JobCharge { slots: 4, run_weight: 4, committed: Some(3600), memory: 0.0, start: Time(100), shift: 0.0 };
    bencher.bench_local(|| {
        tree.start_job(leaf, &job);
        tree.add_cpu(leaf, Time(200), 40.0);
        tree.finish_job(leaf, &job, Time(300));
    });
}

/// The start of a dispatch pass: every account's priority, once.
#[divan::bench(sample_count = 10)]
fn selector_new_deep_100k(bencher: Bencher) {
    let (tree, _) = deep_tree();
    let inputs = PriorityInputs::default();
    bencher.bench_local(|| black_box(Selector::new(&tree, Time(1000), &inputs)));
}

/// One choice in a pass where every user has pending work: the next user,
/// charge the job, refresh that path.
#[divan::bench(sample_count = 20)]
fn choose_and_charge_deep_100k(bencher: Bencher) {
    let (mut tree, users) = deep_tree();
    let inputs = PriorityInputs::default();
    let mut sel = Selector::new(&tree, Time(1000), &inputs);
    for u in &users {
        let leaf = tree.resolve(u, None).expect("shares")[0];
        sel.set_pending(&tree, leaf, 1_000_000);
    }
    let job = JobCharge { slots: 1, run_weight: 1, committed: None, memory: 0.0, start: Time(1000), shift: 0.0 };
    bencher.bench_local(|| {
        let leaf = sel.choose().expect("pending work");
        tree.start_job(leaf, &job);
        sel.refresh_path(&tree, leaf, &inputs);
    });
}

/// Reading one user's usage at a later time (decay is lazy).
#[divan::bench]
fn read_usage(bencher: Bencher) {
    let (mut tree, users) = deep_tree();
    let leaf = tree.resolve(&users[7], None).expect("shares")[0];
    tree.add_cpu(leaf, Time(0), 3600.0);
    let div = tree.path(leaf).last().expect("a division");
    bencher.bench_local(|| black_box(tree.usage(black_box(div), Time(7200))));
}
