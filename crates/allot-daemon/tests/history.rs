//! A recorded burst, replayed: the real allotd runs a few hundred mixed
//! jobs (several users under fairshare, a queue that reserves and
//! backfills, parallel jobs with placement strings, arrays with limits,
//! dependencies by name and by id, a bkill, a held job, a closed host),
//! and `allot sim --from` its state directory makes every decision again
//! (each start at the same second on the same hosts); `allot whatif`
//! compares it with a bigger cluster.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{Daemon, Throwaway, config_dir, stderr, stdout, submitted_id, tempdir};

const HOSTS: &str = "\
[[hosts]]\nname = \"h1\"\nncpus = 4\n
[[hosts]]\nname = \"h2\"\nncpus = 4\n
[[hosts]]\nname = \"h3\"\nncpus = 4\n
[[hosts]]\nname = \"h4\"\nncpus = 4\ntype = \"SGI\"\n";

const QUEUES: &str = "\
Begin Queue
QUEUE_NAME = normal
PRIORITY = 30
FAIRSHARE = USER_SHARES[[default, 1]]
End Queue

Begin Queue
QUEUE_NAME = wide
PRIORITY = 40
SLOT_RESERVE = MAX_RESERVE_TIME[20]
BACKFILL = Y
End Queue
";

/// Six hosts where the burst had four.
const BIGGER: &str = "\
[[hosts]]\nname = \"h5\"\nncpus = 4\n
[[hosts]]\nname = \"h6\"\nncpus = 4\n";

/// Each submission: who, and `bsub`'s arguments.
fn burst(users: usize, n: usize) -> Vec<(usize, Vec<String>)> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let mut out = Vec::new();
    // The names each user gave so far: `-w` names one of their own.
    let mut named: Vec<Vec<String>> = vec![Vec::new(); users];
    for k in 1..=n {
        let user = next(users as u64) as usize;
        let sleep = format!("sleep 0.{}", 1 + next(9));
        let args: Vec<String> = match next(12) {
            0 => vec!["-n".into(), format!("{}", 2 + 2 * next(3)), "-R".into(), "span[ptile=2]".into()],
            1 => vec!["-n".into(), "2".into(), "-R".into(), "select[type==SGI]".into()],
            2 => vec!["-q".into(), "wide".into(), "-n".into(), format!("{}", 6 + next(8)), "-W".into(), "1".into()],
            3 => vec!["-q".into(), "wide".into(), "-n".into(), "1".into(), "-W".into(), "1".into()],
            4 => vec!["-J".into(), format!("arr{k}[1-{}]%2", 2 + next(4))],
            5 => {
                named[user].push(format!("named{k}"));
                vec!["-J".into(), format!("named{k}"), "-n".into(), format!("{}", 1 + next(3))]
            }
            6 if !named[user].is_empty() => {
                let name = &named[user][next(named[user].len() as u64) as usize];
                vec!["-w".into(), format!("ended({name})")]
            }
            7 => vec!["-n".into(), format!("{},{}", 1 + next(2), 3 + next(6))],
            8 => vec!["-m".into(), format!("h{}", 1 + next(4))],
            9 => vec!["-R".into(), "span[hosts=1]".into(), "-n".into(), "3".into()],
            _ => vec!["-n".into(), format!("{}", 1 + next(4))],
        };
        let mut all = vec!["bsub".to_string(), "-o".into(), "/dev/null".into()];
        all.extend(args);
        all.extend(sleep.split(' ').map(str::to_string));
        out.push((user, all));
    }
    out
}

/// Polls until no job is pending or running.
fn drained(d: &Daemon, dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let out = stdout(&d.cmd(&["bjobs", "-u", "all", "-noheader"], dir));
        if out.trim().is_empty() || out.contains("No unfinished job found") {
            return;
        }
        assert!(Instant::now() < deadline, "the burst does not drain:\n{out}\n{}", d.log());
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn a_recorded_burst_replays_decision_for_decision() {
    let dir = tempdir("history-burst");
    let config = config_dir(&dir, &[("allot.toml", HOSTS), ("lsb.queues", QUEUES)]);
    let bigger = config_dir(
        &dir.join("bigger-parent"),
        &[("allot.toml", &format!("{HOSTS}\n{BIGGER}")), ("lsb.queues", QUEUES)],
    );
    // Several users when root can make them; this user alone otherwise.
    let throwaway: Vec<Throwaway> = ["ha", "hb", "hc"].iter().filter_map(|tag| Throwaway::if_root(tag)).collect();
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    if !throwaway.is_empty() {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&*dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    }
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let submit = |user: usize, args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = match throwaway.get(user) {
            Some(u) => d.cmd_as(u.ids(), &args, &work),
            None => d.cmd(&args, &work),
        };
        submitted_id(&out)
    };
    let users = throwaway.len().max(1);
    let jobs = burst(users, 240);
    let mut ids = Vec::new();
    for (k, (user, args)) in jobs.iter().enumerate() {
        ids.push(submit(*user, args));
        // What users and administrators do while it runs.
        match k {
            20 => {
                let out = d.cmd(&["badmin", "hclose", "h2"], &work);
                assert!(out.status.success(), "{}", common::stderr(&out));
            }
            60 => {
                let out = d.cmd(&["badmin", "hopen", "h2"], &work);
                assert!(out.status.success(), "{}", common::stderr(&out));
            }
            90 => {
                let held = submit(0, &["bsub", "-o", "/dev/null", "-n", "16", "sleep", "0.2"].map(String::from));
                let _ = d.cmd(&["bstop", &held.to_string()], &work);
                std::thread::sleep(Duration::from_millis(1500));
                let _ = d.cmd(&["bresume", &held.to_string()], &work);
            }
            120 => {
                let _ = d.cmd(&["bkill", &ids[k - 3].to_string()], &work);
            }
            150 => {
                let w = format!("done({})", ids[k - 10]);
                ids.push(submit(0, &["bsub", "-o", "/dev/null", "-w", &w, "sleep", "0.3"].map(String::from)));
            }
            _ => {}
        }
        if k % 40 == 39 {
            std::thread::sleep(Duration::from_millis(700));
        }
    }
    drained(&d, &work);

    // Under the configuration it recorded: every decision again.
    let out = d.cmd(&["sim", "--from", d.state.to_str().expect("utf-8"), "--out", "replayed"], &work);
    let said = stdout(&out);
    let problems = std::fs::read_to_string(work.join("replayed/problems.txt")).unwrap_or_default();
    assert!(out.status.success(), "{said}\n{}\n{problems}", common::stderr(&out));
    let made = said
        .lines()
        .find_map(|l| l.strip_prefix("under the configuration it recorded: "))
        .and_then(|l| l.split_whitespace().collect::<Vec<_>>().get(0..3).map(|w| (w[0].to_string(), w[2].to_string())))
        .expect("the count of decisions made again");
    assert_eq!(made.0, made.1, "{said}\n{problems}");
    assert!(made.0.parse::<usize>().expect("count") >= 240, "{said}");
    let csv = std::fs::read_to_string(work.join("replayed/jobs.csv")).expect("jobs.csv");
    assert!(csv.lines().count() > 240, "{csv}");

    // Under a bigger cluster: compared side by side.
    let plot = work.join("whatif.svg");
    let out = d.cmd(
        &[
            "whatif",
            "--from",
            d.state.to_str().expect("utf-8"),
            "--config",
            bigger.to_str().expect("utf-8"),
            "--json",
            "--plot",
            plot.to_str().expect("utf-8"),
        ],
        &work,
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let w: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(w["before"]["all"]["jobs"], w["after"]["all"]["jobs"], "the same jobs on both sides");
    let wait = |side: &str| w[side]["all"]["mean_wait"].as_f64().expect("mean wait");
    assert!(wait("after") < wait("before"), "more hosts, shorter waits: {w}");
    assert_eq!(w["before"]["users"].as_object().map(|u| u.len()), Some(users), "{w}");
    assert!(std::fs::read_to_string(&plot).expect("the plot").contains("<svg"));
    let table = stdout(&d.cmd(
        &["whatif", "--from", d.state.to_str().expect("utf-8"), "--config", bigger.to_str().expect("utf-8")],
        &work,
    ));
    assert!(table.contains("MEAN WAIT") && table.contains("utilization"), "{table}");
}

/// `bjobs -p -l` and `allot explain [--json]` on the real allotd: a job
/// that waits is explained host by host and level by level.
#[test]
fn a_waiting_job_is_explained_by_bjobs_p_l_and_allot_explain() {
    let dir = tempdir("explain");
    let hosts = "[[hosts]]\nname = \"h1\"\nncpus = 2\n\n[[hosts]]\nname = \"h2\"\nncpus = 2\n";
    let config = config_dir(&dir, &[("allot.toml", hosts), ("lsb.queues", QUEUES)]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    assert!(d.cmd(&["badmin", "hclose", "h2"], &dir).status.success());
    let busy = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "-n", "2", "sleep", "60"], &dir));
    d.wait_for(busy, "RUN", &dir);
    let waiting = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "-n", "2", "true"], &dir));
    let id = waiting.to_string();

    let long = stdout(&d.cmd(&["bjobs", "-p", "-l", &id], &dir));
    assert!(long.contains(&format!("Job <{id}>, Job Name <true>")), "{long}");
    assert!(
        long.contains(" PENDING REASONS:\n Not enough job slots: 2 needed, 0 free on the queue's hosts;"),
        "{long}"
    );
    assert!(long.contains(" Closed or unreachable: takes no new jobs: 1 host (h2);"), "{long}");
    assert!(long.contains(" Job slot limit reached: every slot in use: 1 host (h1);"), "{long}");
    assert!(long.contains(" SHARE TREE (from the top):\n "), "{long}");
    assert!(long.contains(" PREDICTED START: none predicted: it holds no reservation"), "{long}");

    let json = d.cmd(&["explain", &id, "--json"], &dir);
    assert!(json.status.success(), "{}", common::stderr(&json));
    let x: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(x["job"], waiting.to_string(), "named by its number");
    // By why, in host order: h1 first.
    assert_eq!(x["hosts"][0]["hosts"], serde_json::json!(["h1"]));
    assert_eq!(x["hosts"][1], serde_json::json!({"why": "Closed or unreachable: takes no new jobs", "hosts": ["h2"]}));
    let text = stdout(&d.cmd(&["explain", &id], &dir));
    assert!(text.contains("Queue <normal>, 2 slot(s)") && text.contains("1 host (h2)"), "{text}");
    let running = d.cmd(&["explain", &busy.to_string()], &dir);
    assert!(!running.status.success() && common::stderr(&running).contains("is not pending"), "{running:?}");
    let _ = d.cmd(&["bkill", &busy.to_string()], &dir);
}

/// `bacct` from the event log: the summary of the caller's finished jobs
/// (done, exited, killed while pending), `-l` for each, filters by queue
/// and completion time, job ids; and its jobs still counted after allotd
/// forgot them and restarted.
#[test]
fn bacct_accounts_finished_jobs_from_the_log() {
    let dir = common::tempdir("bacct");
    let config = common::config_dir(
        &dir,
        &[
            ("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 1\n"),
            (
                "lsb.queues",
                "Begin Queue\nQUEUE_NAME = normal\nEnd Queue\n\nBegin Queue\nQUEUE_NAME = other\nEnd Queue\n",
            ),
            ("lsb.params", "Begin Parameters\nDEFAULT_QUEUE = normal\nCLEAN_PERIOD = 5\nEnd Parameters\n"),
        ],
    );
    let d = common::Daemon::start_with(&dir.join("state"), Some(&config));
    let done = common::submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "true"], &dir));
    let failed = common::submitted_id(&d.cmd(&["bsub", "-q", "other", "-o", "/dev/null", "exit 3"], &dir));
    d.wait_for(done, "DONE", &dir);
    d.wait_for(failed, "EXIT", &dir);
    let holder = common::submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "sleep 30"], &dir));
    d.wait_for(holder, "RUN", &dir);
    let pending = common::submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "true"], &dir));
    assert!(d.cmd(&["bkill", &pending.to_string(), &holder.to_string()], &dir).status.success());
    d.wait_for(holder, "EXIT", &dir);

    // bacct reads the event log, where a job's end is written just after
    // bjobs shows it: on a loaded machine, a moment later.
    let counts = " Total number of done jobs:        1      Total number of exited jobs:       3\n";
    common::eventually("bacct counts the three ended jobs", || stdout(&d.cmd(&["bacct"], &dir)).contains(counts));
    let summary = stdout(&d.cmd(&["bacct"], &dir));
    assert!(summary.starts_with("Accounting information about jobs that are: \n  - submitted by users "), "{summary}");
    let other = stdout(&d.cmd(&["bacct", "-q", "other"], &dir));
    assert!(
        other.contains(" Total number of done jobs:        0      Total number of exited jobs:       1\n"),
        "{other}"
    );
    let long = stdout(&d.cmd(&["bacct", "-l", &failed.to_string()], &dir));
    assert!(
        long.contains(&format!("\nJob <{failed}>, User <")) && long.contains("Completed <exit>; exit code 3."),
        "{long}"
    );
    assert!(!long.contains(&format!("Job <{done}>")), "{long}");
    let killed = stdout(&d.cmd(&["bacct", "-l", &pending.to_string()], &dir));
    assert!(!killed.contains("Dispatched to") && killed.contains("exit code 130"), "killed while pending: {killed}");
    let future = d.cmd(&["bacct", "-C", "2099/1/1,"], &dir);
    assert!(stdout(&future).ends_with("\nNo matching job found\n"), "{}", stdout(&future));
    let bad = d.cmd(&["bacct", "-C", "13/1,"], &dir);
    assert!(
        !bad.status.success() && stderr(&bad).starts_with("bacct: -C 13/1,: column 1: expected "),
        "{}",
        stderr(&bad)
    );

    // Forgotten by allotd after CLEAN_PERIOD, and across a restart: the
    // log still accounts them. (CLEAN_PERIOD is long enough for the waits
    // above to see each job's end on a loaded machine: at 1 s, a job
    // ended while the test waited for another was forgotten unseen.)
    std::thread::sleep(std::time::Duration::from_secs(6));
    d.kill9();
    let d = common::Daemon::start_with(&dir.join("state"), Some(&config));
    assert!(stdout(&d.cmd(&["bjobs", "-a", &done.to_string()], &dir)).contains("is not found"));
    let again = stdout(&d.cmd(&["bacct"], &dir));
    assert!(
        again.contains(" Total number of done jobs:        1      Total number of exited jobs:       3\n"),
        "{again}"
    );
}
