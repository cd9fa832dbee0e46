//! Property: a restart at any point gives back the state it left, and
//! allotd carries on as if it had not stopped.
//!
//! Two dispatchers (twins) get the same requests, job ends and clock
//! through the same code allotd runs (`handle_batch`, `tick_once`): one
//! never stops; the other is restarted at random points, its state taken
//! up again from its own event log (`open_state`, `recover_running`).
//! After every step they must answer alike and show the same state: every
//! job as `bjobs -l` sees it (status, allocation, pending reason,
//! reservation, exit), the engine's view of each job, queues, hosts and
//! share tables; and at the end their event logs must be the same. Jobs
//! do not run: their supervisors are only noted, and a job ends when the
//! test writes its exit report, as a supervisor would.

use std::path::{Path, PathBuf};

use allot_engine::{JobId, Time};
use allot_exec::ExitReport;
use allot_proto::job_groups::JobGroupRequest;
use allot_proto::{Changes, JobQuery, JobRef, Request, RequeueStates, Submit};
use proptest::prelude::*;
use tokio::sync::{mpsc, oneshot};

use crate::config::Source;
use crate::running::recover_running;
use crate::serve::{Answer, Caller, Input, Message, handle_batch};
use crate::startup::open_state;
use crate::state::State;
use crate::tick::tick_once;
use allot_agent::supervisors::Supervisors;

const QUEUES: &str = "\
Begin Queue
QUEUE_NAME = normal
PRIORITY = 30
FAIRSHARE = USER_SHARES[[default, 1]]
REQUEUE_EXIT_VALUES = 99
End Queue

Begin Queue
QUEUE_NAME = short
PRIORITY = 40
RUNLIMIT = 5
End Queue

Begin Queue
QUEUE_NAME = wide
PRIORITY = 20
SLOT_RESERVE = MAX_RESERVE_TIME[5]
BACKFILL = Y
End Queue
";

const HOSTS: &str = "[[hosts]]\nname = \"hostA\"\nncpus = 2\n\n[[hosts]]\nname = \"hostB\"\nncpus = 2\n";

/// One thing that happens to the cluster.
#[derive(Clone, Debug)]
enum Op {
    Submit {
        queue: u8,
        slots: u32,
        max: u32,
        limit: Option<u64>,
        dep: Option<(u8, usize)>,
        array: u8,
        flags: u8,
    },
    Kill(usize),
    Stop(usize),
    Resume(usize),
    Switch(usize, u8),
    Modify(usize, u32),
    ArrayLimit(usize, u32),
    /// A job group's limit (`bgadd -L` the first time, `bgmod -L` then).
    GroupLimit(u8, u32),
    Requeue(usize, bool),
    End(usize, i32),
    QueueControl(u8, bool),
    HostControl(u8, bool),
    Reconfig,
    Wait(u64),
    Restart,
    /// The restarted twin takes a snapshot: its next restart starts there.
    Snapshot,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..3, 0u32..4, 0u32..3, prop::option::of(60u64..600), prop::option::of((0u8..3, 0usize..64)), 0u8..4, 0u8..16)
            .prop_map(|(queue, slots, max, limit, dep, array, flags)| Op::Submit { queue, slots, max, limit, dep, array, flags }),
        1 => (0usize..64).prop_map(Op::Kill),
        1 => (0usize..64).prop_map(Op::Stop),
        1 => (0usize..64).prop_map(Op::Resume),
        1 => (0usize..64, 0u8..3).prop_map(|(k, q)| Op::Switch(k, q)),
        1 => (0usize..64, 1u32..4).prop_map(|(k, n)| Op::Modify(k, n)),
        1 => (0usize..64, 1u32..3).prop_map(|(k, n)| Op::ArrayLimit(k, n)),
        1 => (0u8..3, 0u32..3).prop_map(|(g, n)| Op::GroupLimit(g, n)),
        1 => (0usize..64, any::<bool>()).prop_map(|(k, h)| Op::Requeue(k, h)),
        5 => (0usize..64, prop_oneof![Just(0), Just(1), Just(99)]).prop_map(|(k, e)| Op::End(k, e)),
        1 => (0u8..3, any::<bool>()).prop_map(|(q, o)| Op::QueueControl(q, o)),
        1 => (0u8..2, any::<bool>()).prop_map(|(h, o)| Op::HostControl(h, o)),
        1 => Just(Op::Reconfig),
        2 => (1u64..400).prop_map(Op::Wait),
        2 => Just(Op::Restart),
        2 => Just(Op::Snapshot),
    ]
}

const QUEUE_NAMES: [&str; 3] = ["normal", "short", "wide"];
/// Job groups, one under another.
const GROUPS: [&str; 3] = ["/g", "/g/a", "/h"];

/// One dispatcher with its state directory.
pub(crate) struct Twin {
    pub(crate) dir: PathBuf,
    pub(crate) state: State,
}

pub(crate) fn caller() -> Caller {
    let uid = nix::unistd::Uid::effective();
    let user = nix::unistd::User::from_uid(uid).ok().flatten().map_or_else(|| "root".to_string(), |u| u.name);
    Caller { uid: uid.as_raw(), user, known: true, from: None }
}

/// A test's own fresh directory, `allot-{name}-{pid}` under the temporary
/// one, with a configuration (`config/`) of one host, `hostA`, of `ncpus`:
/// the directory and the configuration's.
pub(crate) fn one_host(name: &str, ncpus: u32) -> (PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!("allot-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let config = root.join("config");
    std::fs::create_dir_all(&config).expect("config");
    let hosts = format!("[[hosts]]\nname = \"hostA\"\nncpus = {ncpus}\n");
    std::fs::write(config.join("allot.toml"), hosts).expect("allot.toml");
    (root, config)
}

pub(crate) fn open(dir: &Path, config: &Path, t: Time, wake: &mpsc::Sender<Input>) -> State {
    let current = Source::read(config).expect("configuration");
    let loaded = current.load().expect("loads");
    let mut state = open_state(dir, current, loaded, Supervisors::recording(dir), t).expect("the log replays");
    // No cgroups for jobs that never run.
    state.cgroups = None;
    recover_running(&mut state, wake, t).expect("recovers");
    state
}

impl Twin {
    /// `request` from this test's own user, handled at `t`: its answer,
    /// as text.
    pub(crate) fn request(&mut self, request: Request, t: Time) -> String {
        let (wake, _heard) = mpsc::channel::<Input>(16);
        match self.answer(caller(), request, t, &wake) {
            Some(Answer::Response(r)) => format!("{r:?}"),
            Some(Answer::Frames(_) | Answer::Stream(_)) => "frames".into(),
            None => "no answer".into(),
        }
    }

    /// `request` from `caller`, handled by allotd at `t` in a batch of its
    /// own: the answer, if one was given.
    pub(crate) fn answer(
        &mut self,
        caller: Caller,
        request: Request,
        t: Time,
        wake: &mpsc::Sender<Input>,
    ) -> Option<Answer> {
        let (reply, answer) = oneshot::channel();
        let batch = vec![Message { caller, request, reply }];
        let handled = handle_batch(&mut self.state, batch, &mut Vec::new(), t, wake);
        assert!(handled.failed.is_none(), "{:?}", handled.failed);
        answer.blocking_recv().ok()
    }

    pub(crate) fn tick(&mut self, t: Time, wake: &mpsc::Sender<Input>) {
        assert!(matches!(tick_once(&mut self.state, wake, t), crate::tick::Logged::Yes), "the tick's log");
    }

    /// Everything the commands and the engine show, as text.
    pub(crate) fn view(&self, t: Time) -> String {
        let s = &self.state;
        let query = JobQuery { reasons: true, arrays: true, ..JobQuery::default() };
        let mut out = String::new();
        for (&id, j) in &s.book.jobs {
            let info = serde_json::to_string(&s.info(id, j, t, &query)).expect("json");
            let e = &s.engine;
            let job = id;
            out.push_str(&format!(
                "{id}: {info} killed={:?} requeue={:?} running={} pending={} held={} slots={:?} queue={:?} limit={:?}\n",
                j.killed,
                j.requeue,
                e.is_running(job),
                e.is_pending(job),
                e.is_held(job),
                e.job_slots(job),
                e.job_queue(job),
                e.job_run_limit(job),
            ));
        }
        out.push_str(&serde_json::to_string(&crate::views::queues(s)).expect("json"));
        out.push_str(&serde_json::to_string(&crate::views::hosts(s)).expect("json"));
        out.push_str(&serde_json::to_string(&crate::views::shares(&s.engine, t)).expect("json"));
        out.push_str(&format!(
            "\nrunning={:?} closed={:?} {:?} reach={:?} agents={} arrays={:?} unmade={:?} next={} number={}",
            s.book.running,
            s.book.closed_hosts,
            s.book.closed_queues,
            s.book.reaches().collect::<Vec<_>>(),
            s.book.agents,
            s.book.arrays,
            s.book.tails.iter().map(|(id, t)| (id, &t.unmade)).collect::<Vec<_>>(),
            s.engine.next_job_id(),
            s.book.numbers.next()
        ));
        out
    }

    pub(crate) fn log(&self) -> Vec<(Time, allot_store::Record)> {
        let mut out = Vec::new();
        self.state.store.replay(|_, t, r| out.push((t, r))).expect("replays");
        out
    }
}

/// The steady twin and the one to restart, each in its directory under
/// `root`, on `config` from `t`.
pub(crate) fn twins(root: &Path, config: &Path, t: Time, wake: &mpsc::Sender<Input>) -> [Twin; 2] {
    ["steady", "restarted"].map(|name| {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).expect("state dir");
        Twin { state: open(&dir, config, t, wake), dir }
    })
}

/// The end of a step at `t`: the twins' answers were the same, both tick,
/// and both show the same.
pub(crate) fn settle(
    [steady, restarted]: [&mut Twin; 2],
    answers: &[String],
    t: Time,
    wake: &mpsc::Sender<Input>,
    step: &str,
) -> Result<(), TestCaseError> {
    if let [a, b] = answers {
        prop_assert_eq!(a, b, "{}", step);
    }
    steady.tick(t, wake);
    restarted.tick(t, wake);
    let (a, b) = (steady.view(t), restarted.view(t));
    prop_assert!(a == b, "{step}\n{}", differences(&a, &b));
    Ok(())
}

/// The end of a run: both event logs, written out, are the same.
pub(crate) fn same_logs([steady, restarted]: [&mut Twin; 2]) -> Result<(), TestCaseError> {
    steady.state.flush().expect("flushed");
    restarted.state.flush().expect("flushed");
    prop_assert_eq!(steady.log(), restarted.log(), "the event logs");
    Ok(())
}

/// The lines that differ, each as the steady twin and the restarted one
/// show it.
pub(crate) fn differences(steady: &str, restarted: &str) -> String {
    let mut out = String::new();
    for (a, b) in steady.split(['\n', ']']).zip(restarted.split(['\n', ']'])) {
        if a != b {
            out.push_str(&format!("steady:    {a}\nrestarted: {b}\n"));
        }
    }
    out
}

/// The job the `k`-th pick names: one of the jobs there are, in id order.
pub(crate) fn pick(state: &State, k: usize) -> Option<JobId> {
    let ids: Vec<JobId> = state.book.jobs.keys().copied().collect();
    (!ids.is_empty()).then(|| ids[k % ids.len()])
}

fn submission(state: &State, op: &Op, cwd: &Path) -> Option<Submit> {
    let Op::Submit { queue, slots, max, limit, dep, array, flags } = *op else { return None };
    let depends = dep.and_then(|(kind, k)| {
        let id = pick(state, k)?;
        Some(format!("{}({})", ["done", "ended", "exit"][kind as usize], state.book.job_ref(id)))
    });
    let submission = allot_proto::Submission {
        queue: Some(QUEUE_NAMES[queue as usize].to_string()),
        slots,
        max_slots: (max > 0).then_some(slots.max(1) + max),
        res_req: if flags & 1 == 1 { vec!["span[hosts=1]".into()] } else { Vec::new() },
        hosts: (flags & 2 == 2).then(|| "hostB! hostA".into()),
        run_limit: limit,
        name: (array > 0).then(|| format!("a[1-{array}]")),
        depends,
        exclusive: flags & 4 == 4,
        job_group: (flags & 8 == 8).then(|| GROUPS[queue as usize].to_string()),
        ..Default::default()
    };
    Some(Submit {
        submission,
        command: "true".into(),
        cwd: cwd.display().to_string(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        ..Submit::default()
    })
}

fn all() -> RequeueStates {
    RequeueStates { done: true, exit: true, running: true }
}

/// Runs `ops` on both twins; restarts the second one where they say.
fn check(ops: &[Op]) -> Result<(), TestCaseError> {
    let root =
        std::env::temp_dir().join(format!("allot-replay-{}-{:?}", std::process::id(), std::thread::current().id()));
    let _ = std::fs::remove_dir_all(&root);
    let config = root.join("config");
    std::fs::create_dir_all(&config).expect("config");
    std::fs::write(config.join("allot.toml"), HOSTS).expect("allot.toml");
    std::fs::write(config.join("lsb.queues"), QUEUES).expect("lsb.queues");
    std::fs::write(config.join("lsb.params"), "Begin Parameters\nCLEAN_PERIOD = 900\nEnd Parameters\n")
        .expect("lsb.params");
    let (wake, _heard) = mpsc::channel::<Input>(1 << 16);
    let mut t = Time(1_000_000);
    let mut twins = twins(&root, &config, t, &wake);
    for (step, op) in ops.iter().enumerate() {
        t = Time(t.0 + 7);
        let mut answers = Vec::new();
        if let Op::Restart = op {
            // A stop, then a start: the stop writes what waited.
            let restarted = &mut twins[1];
            restarted.state.flush().expect("flushed");
            let fresh = open(&restarted.dir, &config, t, &wake);
            restarted.state = fresh;
        } else if let Op::Snapshot = op {
            crate::snapshot::force(&mut twins[1].state);
            twins[1].state.flush().expect("flushed with a snapshot");
            let store = &twins[1].state.store;
            let at = store.last_snapshot().expect("read").map(|s| s.seq as u64);
            prop_assert_eq!(at, Some(store.len().expect("len")), "a snapshot of every record");
        } else if let Op::Wait(secs) = op {
            t = Time(t.0 + secs);
        } else if let Op::End(k, exit) = op {
            let running: Vec<JobId> = twins[0].state.book.running.iter().copied().collect();
            if !running.is_empty() {
                let job = running[k % running.len()];
                for twin in &mut twins {
                    let report =
                        ExitReport { exit: *exit, cpu_time: 1.5, max_rss_kb: 100, ended_at: t.0, ..Default::default() };
                    twin.state.files.write_report(job.0, &report).expect("report");
                    // As the zygote says a supervisor ended.
                    twin.state.supervisors_ended.insert(job);
                }
            }
        } else {
            for twin in &mut twins {
                let request = match *op {
                    Op::Submit { .. } => submission(&twin.state, op, &root).map(|s| Request::Submit(Box::new(s))),
                    Op::Kill(k) => pick(&twin.state, k).map(|id| Request::Kill {
                        jobs: vec![twin.state.book.job_ref(id)],
                        signal: None,
                        job_group: None,
                    }),
                    Op::Stop(k) | Op::Resume(k) => pick(&twin.state, k).map(|id| Request::Suspend {
                        jobs: vec![twin.state.book.job_ref(id)],
                        stop: matches!(op, Op::Stop(_)),
                        job_group: None,
                    }),
                    Op::Switch(k, q) => pick(&twin.state, k).map(|id| Request::Switch {
                        jobs: vec![twin.state.book.job_ref(id)],
                        queue: QUEUE_NAMES[q as usize].into(),
                    }),
                    Op::Modify(k, n) => pick(&twin.state, k).map(|id| Request::Modify {
                        job: twin.state.book.job_ref(id),
                        changes: Box::new(Changes { slots: Some(n), ..Changes::default() }),
                    }),
                    Op::ArrayLimit(k, n) => pick(&twin.state, k).map(|id| Request::Modify {
                        job: JobRef::job(
                            twin.state.book.jobs.get(&id).and_then(|j| j.array).map_or(id, |(first, _)| first).0,
                        ),
                        changes: Box::new(Changes { array_limit: Some(n), ..Changes::default() }),
                    }),
                    Op::GroupLimit(g, n) => {
                        let group = GROUPS[g as usize].to_string();
                        Some(Request::JobGroup(match twin.state.engine.job_group(&group) {
                            Some(_) => JobGroupRequest::Modify { group, limit: Some(Some(n)), owner: None },
                            None => JobGroupRequest::Add { group, limit: Some(n) },
                        }))
                    }
                    Op::Requeue(k, hold) => pick(&twin.state, k).map(|id| Request::Requeue {
                        jobs: vec![twin.state.book.job_ref(id)],
                        states: all(),
                        hold,
                    }),
                    Op::QueueControl(q, open) => {
                        Some(Request::QueueControl { queue: QUEUE_NAMES[q as usize].into(), open })
                    }
                    Op::HostControl(h, open) => {
                        Some(Request::HostControl { host: ["hostA", "hostB"][h as usize].into(), open })
                    }
                    Op::Reconfig => Some(Request::Reconfig),
                    Op::End(..) | Op::Wait(_) | Op::Restart | Op::Snapshot => None,
                };
                if let Some(request) = request {
                    answers.push(twin.request(request, t));
                }
            }
        }
        let [a, b] = &mut twins;
        settle([a, b], &answers, t, &wake, &format!("step {step}: {op:?}"))?;
    }
    let [a, b] = &mut twins;
    same_logs([a, b])?;
    same_decisions_replayed(&twins[0])?;
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}

/// The simulator's replay of the log (`allot sim --from`), under the
/// configuration it recorded, starts every job when and where allotd did:
/// the same engine, from the submissions as typed.
pub(crate) fn same_decisions_replayed(twin: &Twin) -> Result<(), TestCaseError> {
    let history = allot_sim::history::History::from_records(twin.dir.join("state.db"), twin.log())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let (replayed, _) = allot_sim::replay::replay(&history, None).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let differences = replayed.differences();
    prop_assert!(
        differences.is_empty(),
        "the replay of the log decided otherwise than allotd (job, run: allotd's, the replay's): {differences:?}\n{}",
        replayed.notes.join("\n")
    );
    prop_assert!(replayed.outcome.rejected.is_empty(), "{:?}", replayed.outcome.rejected);
    // Under another configuration (a third host): it ends.
    let allot_store::Record::Reconfigured { files, .. } = &history.first.1 else {
        return Err(TestCaseError::fail("the log starts with its configuration"));
    };
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(name, text)| match name.as_str() {
            "allot.toml" => (name.clone(), format!("{text}\n[[hosts]]\nname = \"hostC\"\nncpus = 4\n")),
            _ => (name.clone(), text.clone()),
        })
        .collect();
    let other =
        allot_sim::history::Recorded::load(Some("bigger"), &files).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let (after, _) =
        allot_sim::replay::replay(&history, Some(other)).map_err(|e| TestCaseError::fail(e.to_string()))?;
    // Nothing is both running and waiting at the end.
    let running: std::collections::BTreeSet<(u64, u32)> = after.running.iter().map(|r| (r.id, r.index)).collect();
    prop_assert!(after.waiting.iter().all(|w| !running.contains(&(w.id, w.index))));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_restart_anywhere_gives_back_the_state_and_allotd_carries_on(ops in prop::collection::vec(op(), 1..80)) {
        check(&ops)?;
    }
}

/// The report's case: a dependency met before `allot stop`.
#[test]
fn a_met_dependency_replays() {
    let ops = [
        Op::Submit { queue: 0, slots: 1, max: 0, limit: None, dep: None, array: 0, flags: 0 },
        Op::Submit { queue: 0, slots: 1, max: 0, limit: None, dep: Some((0, 0)), array: 0, flags: 0 },
        Op::End(0, 0),
        Op::Wait(10),
        Op::Restart,
        Op::End(0, 0),
        Op::Restart,
    ];
    check(&ops).expect("replays");
}
