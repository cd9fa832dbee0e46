//! A simulated run written as allotd's event log and replayed from it
//! (`allot sim --from`, `allot bench replay`) starts every job when and
//! where the run did: the simulator and the replay of a history drive the
//! same engine the same way, with placement strings, slot ranges, `-m`,
//! job arrays with limits, run limits, fairshare, and a queue that
//! reserves and backfills.

use allot_config::model::Config;
use allot_sim::history::History;
use allot_sim::replay::Replayed;
use allot_sim::sim::{JobRecord, Outcome, SimOptions, run};
use allot_sim::workload::Workload;

/// allotd's event log: records with their times.
type Log = Vec<(allot_engine::Time, allot_store::Record)>;

const HOSTS: &str = "[[hosts]]\nname = \"h1\"\nncpus = 4\ntype = \"X86_64\"\n\n\
                     [[hosts]]\nname = \"h2\"\nncpus = 4\ntype = \"X86_64\"\n\n\
                     [[hosts]]\nname = \"h3\"\nncpus = 4\ntype = \"X86_64\"\n\n\
                     [[hosts]]\nname = \"h4\"\nncpus = 4\ntype = \"SGI\"\n";

const QUEUES: &str = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nFAIRSHARE = USER_SHARES[[default, 1]]\nEnd Queue\n\n\
                      Begin Queue\nQUEUE_NAME = wide\nPRIORITY = 40\nSLOT_RESERVE = MAX_RESERVE_TIME[5]\nBACKFILL = Y\n\
                      End Queue\n";

/// The configuration of HOSTS and `queues`: its files, and what they load.
fn configured(queues: &str) -> (Vec<(String, String)>, Config) {
    let files: Vec<(String, String)> =
        [("allot.toml", HOSTS), ("lsb.queues", queues)].iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
    let (config, _) = allot_config::load::load_texts(&files).expect("configuration");
    (files, config)
}

/// `w` simulated under `config` (run limits enforced), and the run
/// written as allotd's log.
fn simulated(files: &[(String, String)], config: &Config, w: &Workload) -> (Outcome, Log) {
    let mut engine = allot_engine::Engine::new(config.engine_config());
    let opts = SimOptions { kill_at_limit: true, record_events: true, ..SimOptions::default() };
    let out = run(&mut engine, w, &opts, &|_, _| serde_json::Value::Null, &mut |_| {});
    let log = allot_sim::record::as_log(w, &out, files, &allot_engine::Engine::new(config.engine_config()));
    (out, log)
}

/// `log` replayed under the configuration it recorded, which must make
/// every decision the run made: its history, and the replay.
fn replay_of(log: Log, seed: u64) -> (History, Replayed) {
    let h = History::from_records("simulated".into(), log).expect("a history");
    let (replayed, _) = allot_sim::replay::replay(&h, None).expect("replays");
    let differences = replayed.differences();
    assert!(differences.is_empty(), "seed {seed}: {differences:?}");
    (h, replayed)
}

/// Each run of `records` by `key`, in order.
fn runs<K: Ord>(records: &[JobRecord], key: impl Fn(&JobRecord) -> K) -> Vec<K> {
    let mut runs: Vec<K> = records.iter().map(key).collect();
    runs.sort_unstable();
    runs
}

fn workload(n: usize, seed: u64) -> String {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005) | 1;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let mut t = 0;
    (1..=n)
        .map(|k| {
            t += next(30);
            let user = ["u1", "u2", "u3"][next(3) as usize];
            // A fifth end within the second they start.
            let runtime = if next(5) == 0 { 0 } else { next(400) };
            let bsub = match next(9) {
                0 => format!("-n {} -R \\\"span[ptile=2]\\\"", 2 + 2 * next(3)),
                1 => "-n 2 -R \\\"select[type==SGI]\\\"".to_string(),
                2 => format!("-m h{}", 1 + next(4)),
                3 => format!("-n {},{}", 1 + next(3), 4 + next(12)),
                4 => format!("-q wide -n {} -W {}", 6 + next(8), 1 + (runtime + 60) / 60),
                5 => format!("-q wide -n 1 -W {}", 1 + (runtime + 10) / 60),
                6 => format!("-J \\\"a{k}[1-{}]%{}\\\"", 2 + next(5), 1 + next(2)),
                _ => format!("-n {}", 1 + next(4)),
            };
            format!(r#"{{"submit": {t}, "user": "{user}", "runtime": {runtime}, "bsub": "{bsub}"}}"#)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_simulated_run_replays_from_its_log_decision_for_decision() {
    let (files, config) = configured(QUEUES);
    for seed in 1..=8 {
        let w = allot_sim::jsonl::read(&workload(300, seed));
        assert!(w.skipped.is_empty(), "{:?}", w.skipped);
        let (out, log) = simulated(&files, &config, &w);
        assert!(out.rejected.is_empty(), "{:?}", out.rejected);
        let (h, replayed) = replay_of(log, seed);
        assert_eq!(replayed.recorded.len(), out.records.len(), "seed {seed}: every run is in the log");
        // What the replay reports is what the run did: each element of an
        // array by its index, each run's end.
        let key = |r: &JobRecord| (r.start, r.index, r.end, r.slots as u64);
        assert_eq!(runs(&out.records, key), runs(&replayed.outcome.records, key), "seed {seed}");
        // On another cluster (bigger, smaller) every run the log ended
        // ends again: nothing is left running or waiting (a run of under a
        // second started later in its second than in the log once ran on
        // for ever, the log's end of it already passed).
        for (name, hosts) in [
            ("bigger", format!("{HOSTS}\n[[hosts]]\nname = \"h5\"\nncpus = 4\n")),
            ("smaller", HOSTS.replace("name = \"h3\"\nncpus = 4", "name = \"h3\"\nncpus = 1")),
        ] {
            let files: Vec<(String, String)> = vec![("allot.toml".into(), hosts), ("lsb.queues".into(), QUEUES.into())];
            let other = allot_sim::history::Recorded::load(Some(name), &files).expect("loads");
            let (after, _) = allot_sim::replay::replay(&h, Some(other)).expect("replays");
            let stuck = (&after.running, &after.waiting, &after.outcome.never_started);
            assert!(stuck.0.is_empty() && stuck.1.is_empty(), "seed {seed}, {name}: {stuck:?}");
            assert_eq!(
                after.outcome.records.len() + after.outcome.rejected.len(),
                out.records.len(),
                "seed {seed}, {name}"
            );
        }
    }
}

/// With a preemptive queue: the run's suspensions and resumes are in its
/// log and the replay makes them again, job for job; replayed where the
/// queue does not preempt, every run still ends, each as long as it ran.
#[test]
fn a_run_with_preemption_replays_from_its_log() {
    let queues = format!(
        "{QUEUES}\nBegin Queue\nQUEUE_NAME = urgent\nPRIORITY = 50\nPREEMPTION = PREEMPTIVE[normal]\nEnd Queue\n"
    );
    let (files, config) = configured(&queues);
    let mut preempted = 0;
    for seed in 1..=6 {
        // Every third plain job is urgent.
        let text: Vec<String> = workload(300, seed)
            .lines()
            .enumerate()
            .map(|(i, l)| if i % 3 == 0 { l.replace(r#""bsub": "-n "#, r#""bsub": "-q urgent -n "#) } else { l.into() })
            .collect();
        let w = allot_sim::jsonl::read(&text.join("\n"));
        let (out, log) = simulated(&files, &config, &w);
        preempted += out.preempted;
        let (h, replayed) = replay_of(log, seed);
        let key = |r: &JobRecord| (r.start, r.index, r.end, r.suspended);
        assert_eq!(runs(&out.records, key), runs(&replayed.outcome.records, key), "seed {seed}");
        // Without preemption: the same runs, none suspended.
        let plain = queues.replace("PREEMPTION = PREEMPTIVE[normal]", "");
        let files: Vec<(String, String)> = vec![("allot.toml".into(), HOSTS.into()), ("lsb.queues".into(), plain)];
        let other = allot_sim::history::Recorded::load(Some("plain"), &files).expect("loads");
        let (after, _) = allot_sim::replay::replay(&h, Some(other)).expect("replays");
        assert!(after.running.is_empty() && after.waiting.is_empty(), "seed {seed}");
        assert_eq!(after.outcome.records.len(), out.records.len(), "seed {seed}");
        assert!(after.outcome.records.iter().all(|r| r.suspended == 0), "seed {seed}");
    }
    assert!(preempted > 10, "the workload preempts: {preempted}");
}

/// With users' commands (`bswitch` between the queues, of pending and
/// running jobs): the log has each as allotd's `Modified` record, and the
/// replay moves the same jobs and starts every one when and where the run
/// did.
#[test]
fn a_run_with_bswitch_replays_from_its_log() {
    let (files, config) = configured(QUEUES);
    for seed in 1..=6 {
        let text = workload(300, seed);
        let w = allot_sim::jsonl::read(&text);
        let switches: Vec<String> = w
            .jobs
            .iter()
            .filter(|j| j.id % 4 == 0)
            .map(|j| {
                let queue = if j.submission.queue.as_deref() == Some("wide") { "normal" } else { "wide" };
                format!(r#"{{"at": {}, "job": {}, "bswitch": "{queue}"}}"#, j.submit + 1 + j.id % 97, j.id)
            })
            .collect();
        let w = allot_sim::jsonl::read(&format!("{text}\n{}", switches.join("\n")));
        assert!(w.skipped.is_empty() && w.actions.len() == 75, "{:?}", w.skipped);
        let (out, log) = simulated(&files, &config, &w);
        let modified = log.iter().filter(|(_, r)| matches!(r, allot_store::Record::Modified { .. })).count();
        assert!(modified >= 40, "seed {seed}: the jobs switched are in the log: {modified}");
        let (_, replayed) = replay_of(log, seed);
        let key = |r: &JobRecord| (r.start, r.index, r.end, r.hosts.clone());
        assert_eq!(runs(&out.records, key), runs(&replayed.outcome.records, key), "seed {seed}");
    }
}
