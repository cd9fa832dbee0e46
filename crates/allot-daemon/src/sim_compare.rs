//! The simulator does what allotd does: one workload replayed through
//! `allot sim`'s loop and through allotd (in process: its request
//! handling, its tick, its log, on a clock the test moves), and every
//! decision compared: when each job started, on which hosts, how many
//! slots. The workload has placement strings, slot ranges, a PROCLIMIT
//! default, `-m`, job arrays (with running element limits), dependencies
//! by name, by id and on an array's element, several users under
//! fairshare, a queue that reserves and backfills, and resource
//! allocation limits (per user of a queue, jobs per host, slots per
//! project, licenses per user), a license count the hosts share,
//! reserved for the whole run or for a duration, a slot pool of two
//! queues, autoresizable jobs that grow as slots free (compared by the
//! hosts they hold at their end), and a queue whose jobs preempt two
//! others' (a suspended job's end moves by the time it spent suspended,
//! in both), and jobs that outrun their run limit: killed at it (137),
//! requeued by their queue's REQUEUE_EXIT_VALUES, and run again for what
//! they had left, as the simulator's `--kill-at-limit` models them (each
//! run compared). The simulator ends a killed run at its limit at once;
//! here its exit report comes at that moment, before allotd's pass would
//! decide the kill (a kill's own path to the same requeue is
//! `tests/limits.rs`'s).
//!
//! allotd's jobs do not run: their supervisors are only noted, and a job
//! ends when the test writes its exit report at the time the simulator
//! ends it (its start plus its run time), as a supervisor would.

use std::collections::{BTreeMap, BTreeSet};

use allot_engine::{JobId, Time};
use allot_exec::ExitReport;
use allot_proto::{Request, ResizeAction, Response, Submit};
use allot_sim::sim::SimOptions;
use allot_sim::workload::{Action, ActionKind, WorkloadJob};
use tokio::sync::mpsc;

use crate::replay_check::{Twin, open};
use crate::serve::{Caller, Input};

const HOSTS: &str = "\
[[hosts]]\nname = \"h1\"\nncpus = 4\ntype = \"X86_64\"\n
[[hosts]]\nname = \"h2\"\nncpus = 4\ntype = \"X86_64\"\n
[[hosts]]\nname = \"h3\"\nncpus = 4\ntype = \"X86_64\"\n
[[hosts]]\nname = \"h4\"\nncpus = 4\ntype = \"SGI\"\n";

const QUEUES: &str = "\
Begin Queue
QUEUE_NAME = normal
PRIORITY = 30
FAIRSHARE = USER_SHARES[[default, 1]]
EXCLUSIVE = Y
End Queue

Begin Queue
QUEUE_NAME = par
PRIORITY = 20
PROCLIMIT = 3 8
End Queue

Begin Queue
QUEUE_NAME = wide
PRIORITY = 40
SLOT_RESERVE = MAX_RESERVE_TIME[20]
BACKFILL = Y
REQUEUE_EXIT_VALUES = 137
End Queue

Begin Queue
QUEUE_NAME = pa
PRIORITY = 25
SLOT_POOL = p
SLOT_SHARE = 60
HOSTS = h1 h2
End Queue

Begin Queue
QUEUE_NAME = pb
PRIORITY = 24
SLOT_POOL = p
SLOT_SHARE = 40
HOSTS = h1 h2
End Queue

Begin Queue
QUEUE_NAME = urgent
PRIORITY = 50
PREEMPTION = PREEMPTIVE[normal par]
End Queue
";

/// Resource allocation limits that bind: per user in the reserving
/// queue, jobs per host on h4, slots per project of two projects.
const LIMITS: &str = "\
Begin Limit
NAME = wide_each
PER_USER = all
QUEUES = wide
SLOTS = 14
End Limit

Begin Limit
NAME      PER_HOST  JOBS
h4_jobs   h4        2
End Limit

Begin Limit
NAME = projects
PER_PROJECT = p0 p1
SLOTS = 4
End Limit

Begin Limit
NAME = licenses
PER_USER = all
RESOURCE = [licA,2]
End Limit
";

/// An application profile whose jobs grow as slots free.
const APPS: &str = "Begin Application\nNAME = grow\nRESIZABLE_JOBS = auto\nEnd Application\n";

/// Three licenses the hosts share.
const LICENSES: &str = "Begin ResourceMap\nRESOURCENAME LOCATION\nlicA (3@[all])\nEnd ResourceMap\n";

/// Users every Debian machine has, so that allotd (as root) finds their
/// accounts when it launches their jobs.
const USERS: [&str; 3] = ["bin", "daemon", "sys"];

/// A stream of numbers from `seed` (xorshift): each call, one below `m`.
fn stream(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed | 1;
    move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    }
}

/// A workload of `n` jobs from `seed`: mixed sizes, placement strings,
/// ranges, queues, users, run times, dependencies.
fn workload(n: usize, seed: u64) -> String {
    let mut next = stream(seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407));
    let mut lines = Vec::new();
    // The jobs named so far, with their users: `-w` names one of the
    // same user's.
    let mut named: Vec<(&str, usize)> = Vec::new();
    // The job arrays so far (each has an element 1).
    let mut arrays: Vec<(&str, usize)> = Vec::new();
    let mut t = 0;
    // Each job's submission time, whether it is resizable, whether an array.
    let mut made: Vec<(u64, bool, bool)> = Vec::new();
    for k in 1..=n {
        t += next(40);
        let user = USERS[next(3) as usize];
        let runtime = 30 + next(400);
        let theirs: Vec<usize> = named.iter().filter(|(u, _)| *u == user).map(|&(_, j)| j).collect();
        let bsub = match next(23) {
            // One that outruns its minute: killed at it, requeued, again.
            22 => "-q wide -W 1".to_string(),
            // Jobs that preempt the normal and par queues' jobs.
            21 => format!("-q urgent -n {}", 2 + next(5)),
            // Small jobs of the reserving queue, with limits: what backfills.
            14 | 15 => format!("-q wide -n {} -W {}", 1 + next(2), runtime + 10),
            11 => {
                arrays.push((user, k));
                format!("-J \"a{k}[1-{}]%{}\" -n {}", 2 + next(5), 1 + next(3), 1 + next(2))
            }
            12 if !arrays.is_empty() => {
                let (owner, a) = arrays[next(arrays.len() as u64) as usize];
                // By name only among the user's own jobs, as LSF names them.
                if owner == user {
                    format!("-w \"done({a}[1]) || exit(a{a})\"")
                } else {
                    format!("-w \"done({a}[1])\"")
                }
            }
            0 => format!("-n {} -R \"span[ptile=2]\"", 2 + 2 * next(3)),
            1 => "-n 2 -R \"select[type==SGI]\"".to_string(),
            2 => format!("-m h{}", 1 + next(4)),
            3 => format!("-n {},{}", 1 + next(3), 4 + next(12)),
            4 => "-q par".to_string(),
            5 => format!("-q wide -n {} -W {}", 6 + next(8), runtime + 60),
            6 => format!("-W {} -n {}", runtime + 30, 1 + next(2)),
            7 if k > 1 => format!("-w \"done({})\"", 1 + next(k as u64 - 1)),
            8 => {
                named.push((user, k));
                format!("-J j{k} -n {}", 1 + next(3))
            }
            9 if !theirs.is_empty() => format!("-w \"ended(j{})\"", theirs[next(theirs.len() as u64) as usize]),
            10 => "-R \"span[hosts=1]\" -n 3".to_string(),
            16 => format!("-R \"rusage[licA=1:duration={}]\"", 1 + next(5)),
            18 | 19 => format!("-q p{} -n {}", if next(2) == 0 { "a" } else { "b" }, 1 + next(2)),
            20 => format!("-app grow -n 1,{}", 2 + next(4)),
            17 => "-n 2 -R \"rusage[licA=1]\"".to_string(),
            13 => format!("-x -n {}", 1 + next(2)),
            _ => format!("-n {} -P p{}", 1 + next(4), next(3)),
        };
        made.push((t, bsub.starts_with("-app grow"), bsub.starts_with("-J")));
        let bsub = bsub.replace('"', "\\\"");
        lines.push(format!(r#"{{"submit": {t}, "user": "{user}", "runtime": {runtime}, "bsub": "{bsub}"}}"#));
    }
    lines.extend(commands(&made, seed));
    lines.join("\n")
}

/// Users' commands after their jobs' submissions: on each resizable job a
/// `bresize` of each host (its slots there, or one of them, released; its
/// first host's are refused, as those of a host it does not hold), and on
/// one job in eight its pending grow cancelled; on one other job in five
/// a `bswitch` (an array's, of each element, or of one). From a stream of
/// their own, so that the jobs are those of the seed without them.
fn commands(made: &[(u64, bool, bool)], seed: u64) -> Vec<String> {
    let mut next = stream(seed.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(3_037_000_493));
    let mut lines = Vec::new();
    let command = |t: u64, k: usize, what: String, lines: &mut Vec<String>| {
        lines.push(format!(r#"{{"at": {t}, "job": {}, {what}}}"#, k + 1));
    };
    for (k, &(t, resizable, array)) in made.iter().enumerate() {
        if resizable {
            for h in 1..=4 {
                let what = match next(2) {
                    0 => format!(r#""bresize": "release -c 1*h{h}""#),
                    _ => format!(r#""bresize": "release h{h}""#),
                };
                command(t + 1 + next(300), k, what, &mut lines);
            }
            if next(8) == 0 {
                command(t + 1 + next(300), k, r#""bresize": "cancel""#.into(), &mut lines);
            }
        } else if next(5) == 0 {
            let queue = ["normal", "par", "wide", "urgent", "pa", "pb"][next(6) as usize];
            let index = if array && next(2) == 0 { r#", "index": 1"# } else { "" };
            command(t + 1 + next(300), k, format!(r#""bswitch": "{queue}"{index}"#), &mut lines);
        }
    }
    lines
}

/// A `-w` expression with the workload's job numbers (`done(12)`,
/// `done(12[1])`) made allotd's numbers for the same jobs, as a user
/// writes the numbers allotd answered (a workload may number its jobs
/// otherwise).
fn with_ids(w: &str, id_of: &BTreeMap<u64, u64>) -> String {
    let mut out = String::new();
    let mut rest = w;
    while let Some(open) = rest.find('(') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        match rest[..digits].parse::<u64>().ok().and_then(|n| id_of.get(&n)) {
            Some(id) => out.push_str(&id.to_string()),
            None => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// What `allot bsub` sends for a workload job: its submission as typed,
/// every option of it (`-w` naming the jobs by allotd's numbers).
fn submit_of(j: &WorkloadJob, cwd: &str, id_of: &BTreeMap<u64, u64>) -> Submit {
    let j = &j.submission;
    let depends = j.depends.as_deref().map(|w| with_ids(w, id_of));
    Submit {
        submission: allot_proto::Submission { depends, ..(**j).clone() },
        command: "true".into(),
        cwd: cwd.into(),
        ..Submit::default()
    }
}

/// A job's run: its number in the workload, its index in its array (0:
/// no array), and which of its runs (0: the first).
type Key = (u64, u32, u32);

/// Each run's start and hosts.
type Runs = BTreeMap<Key, (u64, String)>;

/// What a run through the simulator met: grows, preemptions, requeues,
/// the users' commands it carried out (`bswitch`, `bresize`) and those it
/// refused.
#[derive(Default)]
struct Met {
    grows: usize,
    suspends: usize,
    requeues: u64,
    switched: usize,
    resized: usize,
    refused: usize,
}

/// Each run's (start, hosts as jobs.csv writes them: what it held at its
/// end, as it grew and shrank): through the simulator; and what it met.
fn through_sim(config: &std::path::Path, text: &str) -> (Runs, Met) {
    let files = allot_config::load::read_dir(config).expect("config");
    let refs: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    let mut engine = allot_sim::testing::engine_from(&refs);
    let w = allot_sim::jsonl::read(text);
    assert!(w.skipped.is_empty(), "{:?}", w.skipped);
    let opts = SimOptions { let_go_each_pass: true, record_events: true, kill_at_limit: true, ..SimOptions::default() };
    let out = allot_sim::sim::run(&mut engine, &w, &opts, &|_, _| serde_json::Value::Null, &mut |_| {});
    assert!(out.rejected.is_empty(), "{:?}", out.rejected);
    let count = |what: fn(&allot_sim::sim::SimEvent) -> bool| out.events.iter().filter(|e| what(&e.1)).count();
    let acted = |e: &allot_sim::sim::SimEvent| match e {
        allot_sim::sim::SimEvent::Act { action, .. } => Some(&w.actions[*action].what),
        _ => None,
    };
    let switched = out.events.iter().filter_map(|e| acted(&e.1)).filter(|a| matches!(a, ActionKind::Switch(_))).count();
    let met = Met {
        grows: count(|e| matches!(e, allot_sim::sim::SimEvent::Grow { .. })),
        suspends: count(|e| matches!(e, allot_sim::sim::SimEvent::Suspend { .. })),
        requeues: out.requeued,
        switched,
        resized: out.events.iter().filter_map(|e| acted(&e.1)).count() - switched,
        refused: out.refused_actions.len(),
    };
    // Each job's runs in the order they ended: the order they started.
    let mut runs: BTreeMap<(u64, u32), u32> = BTreeMap::new();
    let mut starts = BTreeMap::new();
    for r in &out.records {
        let k = runs.entry((r.id, r.index)).or_default();
        starts.insert((r.id, r.index, *k), (r.start, r.hosts.clone()));
        *k += 1;
    }
    (starts, met)
}

/// `request` from `user` handled by allotd at `t`: what it answered.
fn ask(twin: &mut Twin, user: &str, request: Request, t: u64, wake: &mpsc::Sender<Input>) -> Option<Response> {
    let caller = Caller { uid: 0, user: user.to_string(), known: true, from: None };
    match twin.answer(caller, request, Time(t), wake) {
        Some(crate::serve::Answer::Response(r)) => Some(r),
        _ => None,
    }
}

/// A workload's command as its user types it to allotd (a release runs
/// no notification command, as the simulator runs none), on allotd's
/// number for the job.
fn command_of(a: &Action, number: u64) -> Request {
    let job = allot_proto::JobRef { id: number, index: a.index };
    match &a.what {
        ActionKind::Switch(queue) => Request::Switch { jobs: vec![job], queue: queue.clone() },
        ActionKind::Release { hosts, cancel } => Request::Resize {
            job,
            action: ResizeAction::Release { hosts: hosts.clone(), cancel: *cancel, notify: false, command: None },
        },
        ActionKind::ResizeCancel => Request::Resize { job, action: ResizeAction::Cancel },
    }
}

/// The same through allotd, moving its clock from event to event as the
/// simulator does: job ends, submissions, users' commands, the engine's
/// own wake-ups; with how many commands allotd refused.
fn through_allotd(root: &std::path::Path, config: &std::path::Path, text: &str) -> (Runs, usize) {
    let w = allot_sim::jsonl::read(text);
    let (wake, _heard) = mpsc::channel::<Input>(1 << 16);
    let dir = root.join("allotd");
    std::fs::create_dir_all(&dir).expect("state dir");
    let mut twin = Twin { state: open(&dir, config, Time(0), &wake), dir };
    let runtime: BTreeMap<u64, u64> = w.jobs.iter().map(|j| (j.id, j.runtime)).collect();
    // What each job has left to run, and how a run that outruns its limit
    // ends: killed at it, with 137 (the simulator's `--kill-at-limit`).
    let mut left: BTreeMap<JobId, u64> = BTreeMap::new();
    let mut exits: BTreeMap<JobId, i32> = BTreeMap::new();
    // Each of allotd's jobs as the workload names it.
    let mut key_of: BTreeMap<JobId, (u64, u32)> = BTreeMap::new();
    let mut first_id: BTreeMap<u64, u64> = BTreeMap::new();
    let mut ends: BTreeSet<(u64, JobId)> = BTreeSet::new();
    // A running job's planned end, and since when a suspended one is
    // (its end moves by the time it spends suspended, as the simulator's).
    let mut planned: BTreeMap<JobId, u64> = BTreeMap::new();
    let mut suspended: BTreeMap<JobId, u64> = BTreeMap::new();
    let mut started: BTreeMap<Key, (u64, String)> = BTreeMap::new();
    let mut next = 0;
    let (mut next_action, mut refused) = (0, 0);
    let mut last = 0;
    loop {
        let t_submit = w.jobs.get(next).map(|j| j.submit);
        let t_end = ends.first().map(|e| e.0);
        let t_wake = twin.state.engine.next_wakeup().map(|t| t.0).filter(|&t| t >= last);
        let t_action = w.actions.get(next_action).map(|a| a.at);
        let Some(t) = [t_submit, t_end, t_wake, t_action].into_iter().flatten().min() else { break };
        last = t;
        while let Some(&(end, job)) = ends.first().filter(|e| e.0 == t) {
            ends.pop_first();
            let exit = exits.remove(&job).unwrap_or(0);
            let report = ExitReport { exit, cpu_time: 0.0, max_rss_kb: 0, ended_at: end, ..Default::default() };
            twin.state.files.write_report(job.0, &report).expect("report");
            twin.state.supervisors_ended.insert(job);
        }
        while let Some(j) = w.jobs.get(next).filter(|j| j.submit == t) {
            let request = Request::Submit(Box::new(submit_of(j, &root.display().to_string(), &first_id)));
            let before = twin.state.engine.next_job_id();
            let said = ask(&mut twin, &j.submission.user, request, t, &wake);
            assert!(
                twin.state.book.jobs.contains_key(&before),
                "line {}: allotd refused what the simulator took: {said:?}",
                j.line
            );
            first_id.insert(j.id, twin.state.book.jobs[&before].number);
            for id in (before.0..twin.state.engine.next_job_id().0).map(JobId) {
                let index = twin.state.book.jobs.get(&id).and_then(|d| d.array).map_or(0, |a| a.1);
                key_of.insert(id, (j.id, index));
            }
            next += 1;
        }
        while let Some(a) = w.actions.get(next_action).filter(|a| a.at == t) {
            next_action += 1;
            let owner = &w.jobs.iter().find(|j| j.id == a.job).expect("a job of the workload").submission.user;
            let answer = ask(&mut twin, owner, command_of(a, first_id[&a.job]), t, &wake);
            match answer {
                Some(Response::Each(each)) if each.iter().any(|(_, r)| r.is_ok()) => {}
                _ => refused += 1,
            }
        }
        twin.tick(Time(t), &wake);
        for (&id, j) in &twin.state.book.jobs {
            if let (Some(start), true) = (j.start_time, twin.state.book.running.contains(&id)) {
                let (n, index) = key_of[&id];
                let key = (n, index, j.attempt.saturating_sub(1));
                // Its hosts as they are now, to its end: a job that grew
                // holds more, one that released fewer.
                let hosts: Vec<String> = j.alloc.iter().map(|(h, n)| format!("{h}*{n}")).collect();
                if started.insert(key, (start, hosts.join(" "))).is_none() {
                    let more = *left.entry(id).or_insert(runtime[&n]);
                    let run = match twin.state.engine.job_run_limit(id).filter(|&l| more > l) {
                        Some(limit) => {
                            exits.insert(id, 137);
                            left.insert(id, more - limit);
                            limit
                        }
                        None => more,
                    };
                    ends.insert((start + run, id));
                    planned.insert(id, start + run);
                }
            }
            let preempted = j.status == allot_proto::JobStatus::Ssusp;
            match (preempted, suspended.get(&id).copied()) {
                (true, None) => {
                    suspended.insert(id, t);
                    if let Some(&end) = planned.get(&id) {
                        ends.remove(&(end, id));
                    }
                }
                (false, Some(since)) => {
                    suspended.remove(&id);
                    if let Some(end) = planned.get_mut(&id) {
                        *end += t - since;
                        ends.insert((*end, id));
                    }
                }
                _ => {}
            }
        }
    }
    (started, refused)
}

/// Compares the two on a workload of `n` jobs from `seed`; whether a job
/// of the reserving queue passed an earlier one (backfilled), whether the
/// limits changed a decision (the simulator without them differs),
/// whether an autoresizable job grew, and whether a job was preempted.
fn compare(n: usize, seed: u64) -> Compared {
    let root = std::env::temp_dir().join(format!("allot-sim-compare-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let config = root.join("config");
    std::fs::create_dir_all(&config).expect("config");
    std::fs::write(config.join("allot.toml"), HOSTS).expect("allot.toml");
    std::fs::write(config.join("lsb.queues"), QUEUES).expect("lsb.queues");
    std::fs::write(config.join("lsb.resources"), LIMITS).expect("lsb.resources");
    std::fs::write(config.join("lsf.cluster.cmp"), LICENSES).expect("lsf.cluster.cmp");
    std::fs::write(config.join("lsb.applications"), APPS).expect("lsb.applications");
    let text = workload(n, seed);
    let (sim, met) = through_sim(&config, &text);
    let (daemon, refused) = through_allotd(&root, &config, &text);
    std::fs::remove_file(config.join("lsb.resources")).expect("lsb.resources");
    let limited = through_sim(&config, &text).0 != sim;
    let _ = std::fs::remove_dir_all(&root);
    assert!(sim.len() >= n, "every job ran in the simulator");
    // A later job of the reserving queue started before an earlier one
    // (a small one backfilled past a large one).
    let w = allot_sim::jsonl::read(&text);
    let wide: Vec<(u64, u64)> = w
        .jobs
        .iter()
        .filter(|j| j.submission.queue.as_deref() == Some("wide"))
        .filter_map(|j| Some((j.submit, sim.get(&(j.id, 0, 0))?.0)))
        .collect();
    for (key, s) in &sim {
        assert_eq!(Some(s), daemon.get(key), "seed {seed}, job {key:?}: the simulator, then allotd\n{text}");
    }
    assert_eq!(sim, daemon, "seed {seed}");
    assert_eq!(met.refused, refused, "seed {seed}: commands refused by the simulator, then allotd");
    let backfilled = wide.iter().any(|&(s1, t1)| wide.iter().any(|&(s2, t2)| s2 > s1 && t2 < t1));
    Compared { backfilled, limited, met }
}

/// What a comparison's workload met.
struct Compared {
    backfilled: bool,
    limited: bool,
    met: Met,
}

#[test]
fn allotd_and_the_simulator_make_the_same_decisions() {
    let runs: Vec<Compared> = (1..=16).map(|seed| compare(150, seed)).collect();
    let backfilled = runs.iter().filter(|r| r.backfilled).count();
    assert!(backfilled >= 8, "the workloads exercise backfill: {backfilled} of 16");
    let limited = runs.iter().filter(|r| r.limited).count();
    assert!(limited >= 8, "the workloads meet the limits: {limited} of 16");
    let met = |what: fn(&Met) -> bool| runs.iter().filter(|r| what(&r.met)).count();
    let grew = met(|m| m.grows > 0);
    assert!(grew >= 4, "autoresizable jobs grow: in {grew} of 16");
    let preempted = met(|m| m.suspends > 0);
    assert!(preempted >= 8, "urgent jobs preempt: in {preempted} of 16");
    let requeued = met(|m| m.requeues > 0);
    assert!(requeued >= 8, "jobs killed at their limit are requeued: in {requeued} of 16");
    let switched = met(|m| m.switched > 0);
    assert!(switched >= 8, "bswitch moves jobs: in {switched} of 16");
    let resized = met(|m| m.resized > 0);
    assert!(resized >= 4, "bresize changes running jobs: in {resized} of 16");
    let refused = met(|m| m.refused > 0);
    assert!(refused >= 8, "some commands are refused, by both alike: in {refused} of 16");
}
