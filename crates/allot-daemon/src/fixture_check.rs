//! A state directory written by an earlier release, kept in
//! `tests/fixtures/state-0.1/` (its event log and its configuration), that
//! every later release must take up: restarted on it, allotd shows the
//! same jobs in the same states (`jobs.txt`, written with it: pending,
//! running, done and exited jobs, an array, a dependency, a held job, a
//! reservation), its engine agrees, and it carries on (a new job is taken
//! and started).
//!
//! The fixture is written once per format by
//! `cargo test -p allot-daemon --bin allotd write_the_state_fixture -- --ignored`
//! and never again for the same directory: a new format gets a new
//! directory beside it, and both stay.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use allot_agent::supervisors::Supervisors;
use allot_engine::{JobId, Time};
use allot_exec::ExitReport;
use allot_proto::{Request, Submit};
use tokio::sync::mpsc;

use crate::config::Source;
use crate::replay_check::{Twin, open};
use crate::serve::Input;
use crate::startup::open_state;
use crate::state::State;

pub(crate) const QUEUES: &str = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nFAIRSHARE = USER_SHARES[[default, 1]]\n\
                      End Queue\n\nBegin Queue\nQUEUE_NAME = wide\nPRIORITY = 20\n\
                      SLOT_RESERVE = MAX_RESERVE_TIME[50]\nBACKFILL = Y\nEnd Queue\n";
pub(crate) const HOSTS: &str = "[[hosts]]\nname = \"hostA\"\nncpus = 2\n\n[[hosts]]\nname = \"hostB\"\nncpus = 2\n";
/// When the fixture's jobs were submitted; it was taken up at `T0 + 100`.
const T0: u64 = 1_700_000_000;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/state-0.1")
}

/// Each job as the commands see it, and what the engine believes of it.
fn jobs_of(state: &State) -> String {
    let mut out = String::new();
    for (id, j) in &state.book.jobs {
        let reserved = state.engine.reservation(*id).map(|(_, hosts)| {
            hosts.iter().map(|&(h, n)| format!("{}*{}", state.engine.host_name(h), n.0)).collect::<Vec<_>>().join(" ")
        });
        let _ = writeln!(
            out,
            "{} {} {:?} queue={} alloc={:?} exit={:?} engine_running={} reserved={:?}",
            j.number,
            j.display_name(),
            j.status,
            j.record.spec.queue.as_deref().unwrap_or("-"),
            j.alloc,
            j.exit,
            state.engine.is_running(*id),
            reserved,
        );
    }
    out
}

pub(crate) fn submit(twin: &mut Twin, t: Time, args: Submit) {
    let cwd = std::env::temp_dir().display().to_string();
    let answer = twin.request(Request::Submit(Box::new(Submit { command: "sleep 100".into(), cwd, ..args })), t);
    assert!(answer.contains("Submitted"), "{answer}");
}

pub(crate) fn end(twin: &mut Twin, job: u64, exit: i32, t: Time) {
    let report = ExitReport { exit, cpu_time: 1.5, max_rss_kb: 100, ended_at: t.0, ..Default::default() };
    twin.state.files.write_report(job, &report).expect("report");
    twin.state.supervisors_ended.insert(JobId(job));
}

/// A request to submit with `typed`'s scheduling options ([`submit`]
/// gives it its command and directory).
pub(crate) fn with(typed: allot_proto::Submission) -> Submit {
    Submit { submission: typed, ..Submit::default() }
}

/// Jobs of every kind, from `t0`: three that start, two of which end (one
/// done, one not: fairshare usage), a wide job's reservation for the
/// slots left, an array behind it, a job waiting on job 3, a held job.
pub(crate) fn jobs_of_every_kind(twin: &mut Twin, wake: &mpsc::Sender<Input>, t0: u64) {
    let q = |name: &str| Some(name.to_string());
    for _ in 0..3 {
        submit(twin, Time(t0 + 1), with(allot_proto::Submission { queue: q("normal"), ..Default::default() }));
    }
    twin.tick(Time(t0 + 2), wake);
    end(twin, 1, 0, Time(t0 + 10));
    end(twin, 2, 3, Time(t0 + 10));
    twin.tick(Time(t0 + 10), wake);
    let wide = allot_proto::Submission { queue: q("wide"), slots: 4, run_limit: Some(600), ..Default::default() };
    submit(twin, Time(t0 + 11), with(wide));
    twin.tick(Time(t0 + 12), wake);
    submit(twin, Time(t0 + 13), with(allot_proto::Submission { name: q("sweep[1-4]"), ..Default::default() }));
    submit(twin, Time(t0 + 13), with(allot_proto::Submission { depends: q("done(3)"), ..Default::default() }));
    submit(twin, Time(t0 + 13), with(allot_proto::Submission { hold: true, ..Default::default() }));
}

#[test]
#[ignore = "writes the fixture: run once for a new log format"]
fn write_the_state_fixture() {
    let dir = fixture();
    assert!(!dir.join("state.db").exists(), "{} is written already: a new format gets a new directory", dir.display());
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("fixture dir");
    std::fs::write(config.join("allot.toml"), HOSTS).expect("allot.toml");
    std::fs::write(config.join("lsb.queues"), QUEUES).expect("lsb.queues");
    let work = std::env::temp_dir().join(format!("allot-fixture-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("work dir");
    let (wake, _heard) = mpsc::channel::<Input>(1 << 10);
    let mut twin = Twin { state: open(&work, &config, Time(T0), &wake), dir: work.clone() };
    jobs_of_every_kind(&mut twin, &wake, T0);
    twin.tick(Time(T0 + 14), &wake);
    twin.state.flush().expect("flushed");
    let expected = jobs_of(&twin.state);
    drop(twin);
    // The log alone, checkpointed: what a stopped allotd leaves.
    let store = allot_store::Store::open(&work.join("state.db")).expect("log");
    let mut copy = allot_store::Store::open(&dir.join("state.db")).expect("fixture log");
    let mut records = Vec::new();
    store.replay(|_, t, r| records.push((t, r))).expect("read");
    copy.append(&records).expect("written");
    drop(copy);
    std::fs::write(dir.join("jobs.txt"), expected).expect("jobs.txt");
    let _ = std::fs::remove_dir_all(&work);
}

/// The fixture's state, taken up by this release.
#[test]
fn this_release_takes_up_the_state_an_earlier_one_wrote() {
    let fixture = fixture();
    let work = std::env::temp_dir().join(format!("allot-fixture-up-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("work dir");
    std::fs::copy(fixture.join("state.db"), work.join("state.db")).expect("the fixture's log");
    // The configuration from another directory than the one the log
    // names, as on any machine but the one that wrote the fixture.
    let config = work.join("config");
    std::fs::create_dir_all(&config).expect("config dir");
    for f in std::fs::read_dir(fixture.join("config")).expect("the fixture's config") {
        let f = f.expect("entry");
        std::fs::copy(f.path(), config.join(f.file_name())).expect("copied");
    }
    let current = Source::read(&config).expect("configuration");
    let loaded = current.load().expect("loads");
    let t = Time(T0 + 100);
    let state = open_state(&work, current, loaded, Supervisors::recording(&work), t).expect("the log replays");
    let expected = std::fs::read_to_string(fixture.join("jobs.txt")).expect("jobs.txt");
    assert_eq!(jobs_of(&state), expected, "the same jobs in the same states");
    drop(state);
    // And it carries on: its running jobs judged by their (absent)
    // files, a new job taken and started.
    let (wake, _heard) = mpsc::channel::<Input>(1 << 10);
    let mut twin = Twin { state: open(&work, &config, t, &wake), dir: work.clone() };
    let before = twin.state.book.jobs.len();
    submit(
        &mut twin,
        Time(t.0 + 1),
        Submit {
            submission: allot_proto::Submission { queue: Some("normal".into()), ..Default::default() },
            ..Submit::default()
        },
    );
    assert_eq!(twin.state.book.jobs.len(), before + 1);
    twin.tick(Time(t.0 + 2), &wake);
    let _ = std::fs::remove_dir_all(&work);
}
