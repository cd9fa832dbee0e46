//! What the reservation, backfill and run limit tests share: jobs and
//! queues from configuration text, and passes that end what they kill.

#![allow(dead_code)] // each test binary uses some of these

use allot_engine::{Decision, Engine, Event, JobId, JobSpec, ResReq, Time};
use allot_sim::testing::engine_from;
use allot_sim::workload::WorkloadJob;

pub fn res(text: &str) -> ResReq {
    allot_config::resreq::parse(text).expect("a valid requirement")
}

pub fn hm(h: u64, m: u64) -> Time {
    Time(h * 3600 + m * 60)
}

/// A job of `slots` slots in `queue`, with a run limit in minutes.
pub fn job(queue: &str, slots: u32, minutes: Option<u64>, r: Option<&str>) -> JobSpec {
    JobSpec {
        user: "u".into(),
        queue: Some(queue.into()),
        slots,
        run_limit: minutes.map(|m| m * 60),
        res_req: r.map(res),
        ..JobSpec::default()
    }
}

pub fn submit(e: &mut Engine, t: Time, spec: JobSpec) -> JobId {
    e.apply(t, &Event::Submit(spec)).expect("accepted").expect("a job id")
}

/// A pass at `t`; jobs it kills at their run limit end there, and the
/// pass runs again. The jobs started, by id.
pub fn pass(e: &mut Engine, t: Time) -> Vec<u64> {
    let mut started = Vec::new();
    loop {
        let decisions = e.schedule(t);
        let mut killed = false;
        for d in decisions {
            match d {
                Decision::Start { job, .. } => started.push(job.0),
                Decision::Kill { job, .. } => {
                    e.apply(t, &Event::Finish { job, cpu_time: 0.0, exit: 140 }).expect("a kill ends the job");
                    killed = true;
                }
                Decision::Suspend { .. } | Decision::Resume { .. } | Decision::Grow { .. } => {}
            }
        }
        if !killed {
            return started;
        }
    }
}

pub fn end(e: &mut Engine, t: Time, id: JobId) {
    e.apply(t, &Event::Finish { job: id, cpu_time: 0.0, exit: 0 }).expect("a job ends");
}

pub fn reserved_slots(e: &Engine, id: JobId) -> u32 {
    e.reservation(id).map_or(0, |(_, hosts)| hosts.iter().map(|h| h.1.0).sum())
}

pub fn queue(name: &str, priority: u32, extra: &str) -> String {
    format!("Begin Queue\nQUEUE_NAME = {name}\nPRIORITY = {priority}\n{extra}\nEnd Queue\n")
}

/// One host of 10 CPUs and 1 GB free.
pub const ONE_GB: &str = "Begin Host\nHOSTNAME model type server RESOURCES ncpus maxmem\n\
    hostA ! LINUX 1 () 10 1000\nEnd Host\n";

pub const FOUR_CPUS: &str = "Begin Host\nHOST_NAME MXJ\nhostA 4\nEnd Host\n";

pub fn four_cpu_engine() -> Engine {
    let q = queue("normal", 30, "SLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y");
    engine_from(&[("lsb.hosts", FOUR_CPUS), ("lsb.queues", &q)])
}

/// The jobs a pass at `t` kills.
pub fn kills(e: &mut Engine, t: Time) -> Vec<u64> {
    e.schedule(t)
        .into_iter()
        .filter_map(|d| match d {
            Decision::Kill { job, .. } => Some(job.0),
            _ => None,
        })
        .collect()
}

/// A job of `user` submitted at `submit` asking `slots`, running
/// `runtime` seconds, with run limit `limit`.
pub fn wjob(n: u64, user: &str, submit: u64, slots: u32, runtime: u64, limit: Option<u64>) -> WorkloadJob {
    WorkloadJob {
        id: n,
        line: n,
        submit,
        submission: Box::new(allot_config::submission::Submission {
            user: user.to_string(),
            slots,
            run_limit: limit,
            ..Default::default()
        }),
        group: None,
        runtime,
        cpu_time: runtime as f64,
        memory_mb: None,
        gpus: 0,
        energy: 0.0,
        exit: 0,
    }
}
