//! A backfill pass (issue 5): 10,000 pending jobs considered against 5,000
//! hosts of 10 slots with 50,000 running jobs, in a queue with slot
//! reservation and backfill. A 1,024-slot job first in the queue holds a
//! reservation; 100 running jobs end before the pass, so it reserves
//! more, and every other pending job tries to backfill: 1 in 10 has a run
//! limit short enough. Target: under 200 ms.
//!
//! `cargo bench -p allot-engine --bench backfill`.

use allot_engine::model::{EngineConfig, HostSpec, Reserve};
use allot_engine::{Decision, Engine, Event, JobId, JobSpec, Time};
use divan::{Bencher, black_box};

const HOSTS: usize = 5_000;
const SLOTS: u32 = 10;
const PENDING: usize = 10_000;

fn main() {
    divan::main();
}

fn submit(e: &mut Engine, t: u64, slots: u32, limit: u64) -> JobId {
    let spec = JobSpec { user: "u".into(), slots, run_limit: Some(limit), ..JobSpec::default() };
    e.apply(Time(t), &Event::Submit(spec)).expect("accepted").expect("id")
}

/// The cluster full, the big job reserving, the pending jobs queued.
fn engine() -> (Engine, Vec<JobId>) {
    let hosts = (0..HOSTS).map(|i| HostSpec::new(format!("h{i:04}"), SLOTS, SLOTS)).collect();
    let mut config = EngineConfig::one_queue(hosts, false);
    config.queues[0].reserve = Some(Reserve { cycles: 1_000, memory: false });
    config.queues[0].backfill = true;
    let mut e = Engine::new(config);
    let mut running = Vec::new();
    for i in 0..HOSTS * SLOTS as usize {
        // Run limits from 10 minutes to about a day, spread over the hosts.
        let id = submit(&mut e, 0, 1, 600 + (i as u64 * 7_919) % 86_000);
        let alloc = vec![(allot_engine::HostIdx((i / SLOTS as usize) as u32), allot_engine::Slots(1))];
        e.apply(Time(0), &allot_engine::Event::Started { job: id, alloc }).expect("started");
        running.push(id);
    }
    let big = submit(&mut e, 0, 1_024, 3_600);
    for &id in &running[..200] {
        e.apply(Time(1), &Event::Finish { job: id, cpu_time: 0.0, exit: 0 }).expect("ends");
    }
    e.schedule(Time(1));
    assert!(e.reservation(big).is_some_and(|(_, hosts)| !hosts.is_empty()), "the big job reserves");
    for i in 0..PENDING {
        // 1 in 10 short enough to end before the big job can start.
        let limit = if i % 10 == 0 { 300 } else { 100_000 };
        submit(&mut e, 1, 1 + (i % 4) as u32, limit);
    }
    (e, running[200..300].to_vec())
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn backfill_pass_10k_pending_5k_hosts_50k_running(bencher: Bencher) {
    bencher.with_inputs(engine).bench_local_values(|(mut e, ending)| {
        for id in ending {
            e.apply(Time(2), &Event::Finish { job: id, cpu_time: 0.0, exit: 0 }).expect("ends");
        }
        let d = e.schedule(Time(2));
        assert!(d.iter().any(|d| matches!(d, Decision::Start { .. })), "some job backfills");
        black_box(d)
    });
}
