//! A simulated run written as allotd's event log: what `allot bench
//! replay` replays to measure `allot sim --from` at the scale of a year's
//! trace, and checks against the run it came from. Everything in the
//! simulator's order: the runs that ended, the submissions (each as typed,
//! with the job it became), each dispatch pass, and the runs it started
//! (with what each reports as it starts).

use std::collections::BTreeMap;

use allot_engine::{Engine, JobId, Time};
use allot_store::{JobRecord, Record};

use crate::sim::{Outcome, SimEvent};
use crate::workload::{ActionKind, Workload};

/// The log of `out`, a run of `w` with [`crate::sim::SimOptions::
/// record_events`] on the configuration `files`; `engine` is a fresh
/// engine of it, to resolve submissions as allotd would have and to name
/// hosts. A workload's `-w` is not written (its jobs are named by the
/// workload's numbers, not allotd's): for traces, which have none.
pub fn as_log(w: &Workload, out: &Outcome, files: &[(String, String)], engine: &Engine) -> Vec<(Time, Record)> {
    // Each engine job's workload job.
    let mut line_of: BTreeMap<u64, usize> = BTreeMap::new();
    let mut numbers = 1;
    let first = out.events.first().map_or(0, |e| e.0);
    let mut log =
        vec![(Time(first), Record::Reconfigured { config_dir: Some("simulated".into()), files: files.to_vec() })];
    // The records of the jobs a command switches, for its `Modified`.
    let switched = w.switched_jobs();
    let mut kept: BTreeMap<u64, JobRecord> = BTreeMap::new();
    for (t, event) in &out.events {
        let t = Time(*t);
        match event {
            SimEvent::Submit { line, job: id } => {
                let job = &w.jobs[*line];
                line_of.insert(*id, *line);
                let typed = &job.submission;
                let resolved = allot_config::submission::resolve(typed, engine, &|_| false, &mut |_| Ok(Vec::new()));
                let Ok(resolved) = resolved else { continue };
                let record = JobRecord {
                    spec: resolved.spec,
                    name: resolved.name.unwrap_or_default(),
                    command: String::new(),
                    cwd: String::new(),
                    output: None,
                    error: None,
                    env: Vec::new().into(),
                    from_host: "simulated".into(),
                    project: None,
                    estimated_run_time: job.submission.estimated_run_time,
                    array: resolved.array.as_ref().map(|a| a.spec.clone()),
                    extras: None,
                };
                if switched.contains(&job.id) {
                    kept.insert(job.id, record.clone());
                }
                // Numbered as allotd numbers: one per submission.
                let number = numbers;
                numbers += 1;
                log.push((
                    t,
                    Record::Submitted {
                        job: JobId(*id),
                        number: (number != *id).then_some(number),
                        record: Box::new(record),
                        typed: Some(typed.clone()),
                    },
                ));
            }
            SimEvent::Pass => log.push((t, Record::Scheduled { full: false })),
            SimEvent::Start { job, alloc } => {
                let alloc = alloc.iter().map(|&(h, n)| (engine.host_name(h).to_string(), n.0)).collect();
                log.push((t, Record::Started { job: JobId(*job), alloc, backfill_limit: None }));
                // What it reports as it starts.
                let mb = line_of.get(job).and_then(|&l| w.jobs[l].memory_mb);
                if let Some(mb) = mb {
                    log.push((t, Record::Usage { job: JobId(*job), cpu_time: 0.0, mem_kb: (mb * 1024.0) as u64 }));
                }
            }
            SimEvent::Suspend { job, by } => log.push((t, Record::Preempted { job: JobId(*job), by: JobId(*by) })),
            SimEvent::Resume { job } => log.push((t, Record::Resumed { job: JobId(*job) })),
            SimEvent::Grow { .. } => {}
            SimEvent::Act { action, jobs } => {
                let a = &w.actions[*action];
                for &job in jobs {
                    let job = JobId(job);
                    let record = match &a.what {
                        ActionKind::Switch(queue) => {
                            let Some(r) = kept.get_mut(&a.job) else { continue };
                            r.spec.queue = Some(queue.clone());
                            Record::Modified { job, record: Box::new(r.clone()) }
                        }
                        ActionKind::Release { hosts, cancel } => {
                            Record::Shrunk { job, release: hosts.clone(), cancel: *cancel }
                        }
                        ActionKind::ResizeCancel => Record::ResizeCancelled { job },
                    };
                    log.push((t, record));
                }
            }
            SimEvent::End { job, exit } => {
                let cpu_time = line_of.get(job).map_or(0.0, |&l| w.jobs[l].cpu_time);
                log.push((
                    t,
                    Record::Finished {
                        job: JobId(*job),
                        exit: *exit,
                        cpu_time,
                        max_mem_kb: 0,
                        reason: None,
                        pre_exec: None,
                        ran_until: None,
                    },
                ));
            }
        }
    }
    log
}
