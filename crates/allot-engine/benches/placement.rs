//! Placement of a parallel job (issue 5): 1,024 slots with `span[ptile=32]`
//! and `cu[balance]` on 5,000 hosts of 32 slots in 100 compute units of 50
//! hosts, with every third host partly busy. Target: under 1 ms.
//!
//! `cargo bench -p allot-engine --bench placement`.

use allot_engine::model::{ComputeUnitSpec, EngineConfig, HostSpec};
use allot_engine::resreq::{CuPref, CuReq, ResReq, Span};
use allot_engine::{Decision, Engine, Event, JobSpec, Time};
use divan::{Bencher, black_box};

const HOSTS: usize = 5_000;
const UNITS: usize = 100;

fn main() {
    divan::main();
}

fn engine() -> Engine {
    let hosts = (0..HOSTS).map(|i| HostSpec::new(format!("h{i:04}"), 32, 32)).collect();
    let mut config = EngineConfig::one_queue(hosts, false);
    config.compute_unit_types = vec!["enclosure".into()];
    let per = HOSTS / UNITS;
    config.compute_units = (0..UNITS)
        .map(|u| ComputeUnitSpec {
            name: format!("enclosure{u}"),
            cu_type: "enclosure".into(),
            hosts: (u * per..(u + 1) * per).map(|i| format!("h{i:04}")).collect(),
            condensed: false,
        })
        .collect();
    let mut e = Engine::new(config);
    // Every third host runs an 8-slot job.
    for i in (0..HOSTS).step_by(3) {
        let spec = JobSpec { user: "busy".into(), slots: 8, ..JobSpec::default() };
        let id = e.apply(Time(0), &Event::Submit(spec)).expect("accepted").expect("id");
        let alloc = vec![(allot_engine::HostIdx(i as u32), allot_engine::Slots(8))];
        e.apply(Time(0), &allot_engine::Event::Started { job: id, alloc }).expect("started");
    }
    e.schedule(Time(0));
    e
}

fn job(pref: CuPref) -> JobSpec {
    let res = ResReq {
        text: "span[ptile=32] cu[balance]".into(),
        span: Some(Span::Ptile(32)),
        cu: Some(CuReq { balance: true, pref, ..CuReq::default() }),
        ..ResReq::default()
    };
    JobSpec { user: "u".into(), slots: 1024, res_req: Some(res), ..JobSpec::default() }
}

/// Submit and one pass: the job's placement, and booking its 32 hosts.
#[divan::bench(args = [CuPref::Config, CuPref::MaxAvail])]
fn place_1024_slots_ptile_32_cu_balance(bencher: Bencher, pref: CuPref) {
    bencher.with_inputs(engine).bench_local_values(|mut e| {
        e.apply(Time(1), &Event::Submit(job(pref))).expect("accepted");
        let d = e.schedule(Time(1));
        assert!(matches!(&d[..], [Decision::Start { alloc, .. }] if alloc.len() == 32));
        black_box(d)
    });
}
