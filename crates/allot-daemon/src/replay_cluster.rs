//! Property: with agents, too, a restart at any point gives back the
//! state it left, and allotd carries on as if it had not stopped.
//!
//! The twins of `replay_check` on a `[cluster]` configuration, driven
//! through the same code as allotd (`cluster::heard` for what agents say,
//! `handle_batch` and `tick_once` for the rest): agents say hello (holding
//! every run allotd started on their host, as an agent that lost nothing
//! does), connections are lost, jobs end as their agents report it. The
//! host states (`Record::HostReach`) and the ends taken from agents must
//! replay to the same state and the same log. The restarted twin has no
//! connections after its restart until the next hello, as a restarted
//! allotd has none until its agents reconnect.

use std::collections::BTreeMap;

use allot_agent::wire::{FromAgent, Held, Hello, ToAgent, VERSION};
use allot_engine::{JobId, Time};
use allot_exec::ExitReport;
use allot_proto::{Request, Submit};
use proptest::prelude::*;
use tokio::sync::mpsc;

use crate::cluster::AgentInput;
use crate::replay_check::{Twin, open, pick, same_logs, settle, twins};
use crate::serve::Input;

const HOSTS: [&str; 2] = ["hostA", "hostB"];

const CONFIG: &str = "[cluster]\nlisten = \"127.0.0.1:1\"\ntls = \"tls\"\nheartbeat = 1\nunreach_after = 600\n\
                      unavail_after = 1200\n\n[[hosts]]\nname = \"hostA\"\nncpus = 2\n\n[[hosts]]\nname = \"hostB\"\nncpus = 2\n";

#[derive(Clone, Debug)]
enum Op {
    Submit {
        slots: u32,
        host: Option<u8>,
    },
    Hello(u8),
    Lost(u8),
    End(usize, i32),
    Kill(usize),
    Wait(u64),
    /// A stop and a start, from a snapshot taken first if `true`.
    Restart(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (1u32..4, prop::option::of(0u8..2)).prop_map(|(slots, host)| Op::Submit { slots, host }),
        3 => (0u8..2).prop_map(Op::Hello),
        2 => (0u8..2).prop_map(Op::Lost),
        4 => (0usize..64, prop_oneof![Just(0), Just(1)]).prop_map(|(k, e)| Op::End(k, e)),
        1 => (0usize..64).prop_map(Op::Kill),
        1 => (1u64..100).prop_map(Op::Wait),
        2 => any::<bool>().prop_map(Op::Restart),
    ]
}

/// A twin's connections to its agents: by host, the connection's id and
/// what allotd sent on it.
type Links = BTreeMap<String, (u64, mpsc::UnboundedReceiver<ToAgent>)>;

/// The runs allotd says run on `host`: job and attempt.
fn runs_on(twin: &Twin, host: &str) -> Vec<(JobId, u32)> {
    let s = &twin.state;
    s.book
        .running
        .iter()
        .filter_map(|id| {
            s.book.jobs.get(id).filter(|j| j.alloc.first().is_some_and(|a| a.0 == host)).map(|j| (*id, j.attempt))
        })
        .collect()
}

fn lose(twin: &mut Twin, links: &mut Links, host: &str) {
    if let Some((conn, _)) = links.remove(host) {
        crate::cluster::heard(&mut twin.state, AgentInput::Lost { conn, host: host.into(), why: "test".into() });
    }
}

/// `root` made afresh, with the twins' configuration (CONFIG and one
/// queue) in `root/config`, which is returned.
fn cluster_config(root: &std::path::Path) -> std::path::PathBuf {
    let _ = std::fs::remove_dir_all(root);
    let config = root.join("config");
    std::fs::create_dir_all(&config).expect("config");
    std::fs::write(config.join("allot.toml"), CONFIG).expect("allot.toml");
    std::fs::write(config.join("lsb.queues"), "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n")
        .expect("lsb.queues");
    config
}

fn check(ops: &[Op]) -> Result<(), TestCaseError> {
    let root = std::env::temp_dir().join(format!(
        "allot-replay-cluster-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let config = cluster_config(&root);
    let (wake, _heard) = mpsc::channel::<Input>(1 << 16);
    let mut t = Time(1_000_000);
    let mut twins: [(Twin, Links); 2] = twins(&root, &config, t, &wake).map(|t| (t, Links::new()));
    let mut conns = 0u64;
    for (step, op) in ops.iter().enumerate() {
        t = Time(t.0 + 7);
        let mut answers = Vec::new();
        match *op {
            Op::Restart(snapshot) => {
                let (twin, links) = &mut twins[1];
                if snapshot {
                    crate::snapshot::force(&mut twin.state);
                }
                twin.state.flush().expect("flushed");
                twin.state = open(&twin.dir, &config, t, &wake);
                // A restarted allotd waits (on the wall clock) for its
                // running jobs' agents before its first pass
                // (`cluster::recovering`, tested end to end in
                // tests/cluster_failures.rs); the twins step through
                // simulated time, as if every agent had said hello at once.
                if let Some(c) = &mut twin.state.cluster {
                    c.awaiting.clear();
                }
                links.clear();
            }
            Op::Wait(secs) => t = Time(t.0 + secs),
            Op::Hello(h) => {
                let host = HOSTS[h as usize];
                for (twin, links) in &mut twins {
                    lose(twin, links, host);
                    conns += 1;
                    let jobs = runs_on(twin, host)
                        .into_iter()
                        .map(|(job, attempt)| Held { job: job.0, attempt, ended: None })
                        .collect();
                    let hello = Hello {
                        version: VERSION,
                        host: host.into(),
                        resources: Default::default(),
                        jobs,
                        tasks: Vec::new(),
                    };
                    let (link, sent) = mpsc::unbounded_channel();
                    crate::cluster::heard(
                        &mut twin.state,
                        AgentInput::Hello { conn: conns, hello: Box::new(hello), link },
                    );
                    links.insert(host.into(), (conns, sent));
                }
            }
            Op::Lost(h) => {
                // A connection both have (a restarted allotd has none of
                // its earlier life's).
                let host = HOSTS[h as usize];
                if twins.iter().all(|(_, links)| links.contains_key(host)) {
                    for (twin, links) in &mut twins {
                        lose(twin, links, host);
                    }
                }
            }
            Op::End(k, exit) => {
                let running: Vec<JobId> = twins[0].0.state.book.running.iter().copied().collect();
                let Some(&job) = running.get(k % running.len().max(1)) else { continue };
                let Some((host, attempt)) =
                    twins[0].0.state.book.jobs.get(&job).and_then(|j| Some((j.alloc.first()?.0.clone(), j.attempt)))
                else {
                    continue;
                };
                // An agent reports only over a connection: both must have one.
                if !twins.iter().all(|(_, links)| links.contains_key(&host)) {
                    continue;
                }
                for (twin, links) in &mut twins {
                    let report =
                        ExitReport { exit, cpu_time: 1.0, max_rss_kb: 10, ended_at: t.0, ..Default::default() };
                    let said = FromAgent::Ended { job: job.0, attempt, report };
                    let conn = links[&host].0;
                    crate::cluster::heard(
                        &mut twin.state,
                        AgentInput::Said { conn, host: host.clone(), message: said },
                    );
                }
            }
            Op::Submit { slots, host } => {
                for (twin, _) in &mut twins {
                    let submit = Submit {
                        submission: allot_proto::Submission {
                            slots,
                            hosts: host.map(|h| HOSTS[h as usize].to_string()),
                            ..Default::default()
                        },
                        command: "true".into(),
                        cwd: root.display().to_string(),
                        ..Submit::default()
                    };
                    answers.push(twin.request(Request::Submit(Box::new(submit)), t));
                }
            }
            Op::Kill(k) => {
                for (twin, _) in &mut twins {
                    if let Some(id) = pick(&twin.state, k) {
                        let jobs = vec![twin.state.book.job_ref(id)];
                        answers.push(twin.request(Request::Kill { jobs, signal: None, job_group: None }, t));
                    }
                }
            }
        }
        let [(a, _), (b, _)] = &mut twins;
        settle([a, b], &answers, t, &wake, &format!("step {step}: {op:?}"))?;
    }
    let [(a, _), (b, _)] = &mut twins;
    same_logs([a, b])?;
    crate::replay_check::same_decisions_replayed(&twins[0].0)?;
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn with_agents_a_restart_anywhere_gives_back_the_state(ops in prop::collection::vec(op(), 1..60)) {
        check(&ops)?;
    }
}

/// Hosts come up, a job runs on one, its agent reconnects, allotd
/// restarts, the end comes through the new connection.
#[test]
fn an_end_after_a_restart_and_a_reconnect_replays() {
    let ops = [
        Op::Hello(0),
        Op::Hello(1),
        Op::Submit { slots: 1, host: Some(1) },
        Op::Lost(1),
        Op::Restart(true),
        Op::Hello(1),
        Op::End(0, 0),
        Op::Restart(false),
    ];
    check(&ops).expect("replays");
}

/// An agent's silence is measured on the dispatcher's clock (`State::now`),
/// not read from the wall clock: moved past `unreach_after` (600 s) its
/// host is `unreach`, past `unavail_after` (1,200 s) `unavail`, each
/// logged, with no time waited.
#[test]
fn an_agents_silence_is_measured_on_the_dispatchers_clock() {
    let root = std::env::temp_dir().join(format!("allot-silence-{}", std::process::id()));
    let config = cluster_config(&root);
    let (wake, _heard) = mpsc::channel::<Input>(1 << 16);
    let t = Time(1_000_000);
    let [mut twin, _] = twins(&root, &config, t, &wake);
    let hello = Hello {
        version: VERSION,
        host: "hostA".into(),
        resources: Default::default(),
        jobs: Vec::new(),
        tasks: Vec::new(),
    };
    let (link, _sent) = mpsc::unbounded_channel();
    crate::cluster::heard(&mut twin.state, AgentInput::Hello { conn: 1, hello: Box::new(hello), link });
    twin.tick(t, &wake);
    let reach = |twin: &Twin| twin.state.book.reach("hostA");
    assert_eq!(reach(&twin), allot_store::Reach::Ok);
    let heard_at = twin.state.now;
    twin.state.now = heard_at + std::time::Duration::from_secs(599);
    twin.tick(Time(t.0 + 599), &wake);
    assert_eq!(reach(&twin), allot_store::Reach::Ok, "within unreach_after");
    twin.state.now = heard_at + std::time::Duration::from_secs(601);
    twin.tick(Time(t.0 + 601), &wake);
    assert_eq!(reach(&twin), allot_store::Reach::Unreach);
    twin.state.now = heard_at + std::time::Duration::from_secs(1201);
    twin.tick(Time(t.0 + 1201), &wake);
    assert_eq!(reach(&twin), allot_store::Reach::Unavail);
    let logged = twin.log().iter().filter(|(_, r)| matches!(r, allot_store::Record::HostReach { .. })).count();
    assert_eq!(logged, 3, "ok, unreach, unavail: each logged");
    let _ = std::fs::remove_dir_all(&root);
}
