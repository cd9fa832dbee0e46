//! allotd end to end: the real daemon in a temporary state directory,
//! driven through the real commands: running jobs, surviving kill -9,
//! reconfiguration, users and their rights, limits, metrics and the live
//! fairshare views. Job control and job features are in `jobs.rs`.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;

#[test]
fn submit_run_output_environment_and_kill() {
    let dir = tempdir("run");
    let d = Daemon::start(&dir.join("state"));
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let out = d.cmd(
        &["bsub", "-o", "out.%J", "-J", "hello", "echo", "$LSB_JOBID", "$LSB_QUEUE", "$LSB_JOBNAME", "$LS_SUBCWD"],
        &work,
    );
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("is submitted to queue <normal>.\n"));
    let id = submitted_id(&out);
    let line = d.wait_for(id, "DONE", &work);
    assert!(line.contains("hello"), "{line}");
    let text = std::fs::read_to_string(work.join(format!("out.{id}"))).expect("output file");
    let (output, report) = text.split_once(REPORT_START).expect("the job report ends the output file");
    assert_eq!(output, format!("{id} normal hello {}\n", work.display()));
    // LSF's job report, as LSF lays it out (allot-exec's report.rs checks
    // the whole layout): what ran, where, and how it ended.
    let me = nix::unistd::User::from_uid(nix::unistd::getuid()).ok().flatten().expect("me").name;
    for line in [
        format!("Subject: Job {id}: <hello> in cluster <allot> Done\n"),
        format!(
            "\nJob was executed on host(s) <{}>, in queue <normal>, as user <{me}> in cluster <allot> at ",
            allot_config::defaults::this_host()
        ),
        format!("\n<{}> was used as the working directory.\n", work.display()),
        "\n# LSBATCH: User input\necho $LSB_JOBID $LSB_QUEUE $LSB_JOBNAME $LS_SUBCWD\n".to_string(),
        "\nSuccessfully completed.\n\nResource usage summary:\n\n    CPU time :".to_string(),
    ] {
        assert!(report.contains(&line), "{line:?} in {report}");
    }
    let failed = submitted_id(&d.cmd(&["bsub", "-oo", "failed.%J", "echo partial; exit 3"], &work));
    d.wait_for(failed, "EXIT", &work);
    let text = std::fs::read_to_string(work.join(format!("failed.{failed}"))).expect("output file");
    assert!(text.starts_with(&format!("partial\n{REPORT_START}")), "{text}");
    assert!(text.contains(&format!("Subject: Job {failed}: <echo partial; exit 3> in cluster <allot> Exited\n")));
    assert!(text.contains("\nExited with exit code 3.\n"), "{text}");

    let long = submitted_id(&d.cmd(&["bsub", "sleep", "60"], &work));
    d.wait_for(long, "RUN", &work);
    let killed = d.cmd(&["bkill", &long.to_string()], &work);
    assert_eq!(String::from_utf8_lossy(&killed.stdout), format!("Job <{long}> is being terminated\n"));
    d.wait_for(long, "EXIT", &work);
    let missing = d.cmd(&["bkill", "999"], &work);
    assert!(!missing.status.success());
    assert_eq!(String::from_utf8_lossy(&missing.stderr), "Job <999>: No matching job found\n");

    let none = d.cmd(&["bjobs"], &work);
    assert_eq!(String::from_utf8_lossy(&none.stdout), "No unfinished job found\n");
    let bad = d.cmd(&["bsub", "-q", "nosuch", "true"], &work);
    assert!(!bad.status.success());
    assert_eq!(String::from_utf8_lossy(&bad.stderr), "bsub: queue `nosuch` does not exist. Job not submitted.\n");
    let q = d.cmd(&["bqueues"], &work);
    assert!(String::from_utf8_lossy(&q.stdout).starts_with("QUEUE_NAME      PRIO STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN  SUSP\nnormal            30  Open:Active"));
}

#[test]
fn pending_jobs_say_why() {
    let dir = tempdir("pending");
    let d = Daemon::start(&dir.join("state"));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ids: Vec<u64> = (0..=cpus).map(|_| submitted_id(&d.cmd(&["bsub", "sleep", "30"], &dir))).collect();
    let last = *ids.last().expect("one more job than CPUs");
    d.wait_for(ids[0], "RUN", &dir);
    let p = d.cmd(&["bjobs", "-p"], &dir);
    let text = String::from_utf8_lossy(&p.stdout);
    assert!(text.contains(&format!("\n{last} ")), "{text}");
    assert!(text.contains("Not enough job slots: 1 needed, 0 free"), "{text}");
    let k = d.cmd(&["bkill", "0"], &dir);
    assert!(k.status.success());
}

/// kill -9 of allotd in the middle of a submission burst, then a restart:
/// every acknowledged job is there, and no job ran twice.
#[test]
fn kill_9_during_a_burst_loses_no_acknowledged_job() {
    let dir = tempdir("kill9");
    let state = dir.join("state");
    let ran = dir.join("ran");
    let d = Daemon::start(&state);
    let command = format!("echo $LSB_JOBID >> {}", ran.display());
    let submitter = {
        let state = state.clone();
        let dir = dir.to_path_buf();
        std::thread::spawn(move || {
            let mut acked = Vec::new();
            for _ in 0..400 {
                let out = Command::new(allot())
                    .args(["bsub", "sh", "-c", &format!("'{command}'")])
                    .env("ALLOT_STATE_DIR", &state)
                    .current_dir(&dir)
                    .output()
                    .expect("runs");
                if out.status.success() {
                    acked.push(submitted_id(&out));
                } else if !acked.is_empty() {
                    break;
                }
            }
            acked
        })
    };
    std::thread::sleep(Duration::from_millis(600));
    d.kill9();
    let acked = submitter.join().expect("submitter");
    assert!(acked.len() >= 3, "some submissions before the kill: {}", acked.len());
    let d = Daemon::start(&state);
    for &id in &acked {
        d.wait_for(id, "DONE", &dir);
    }
    let ran_ids: Vec<u64> =
        std::fs::read_to_string(&ran).unwrap_or_default().lines().map(|l| l.trim().parse().expect("id")).collect();
    for &id in &acked {
        assert_eq!(ran_ids.iter().filter(|&&r| r == id).count(), 1, "job {id} ran once: {ran_ids:?}");
    }
    let mut sorted = ran_ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), ran_ids.len(), "no job ran twice");
}

/// `badmin reconfig` applies a good configuration without losing a job,
/// refuses a bad one with its located errors and keeps the running one;
/// `qclose`/`qopen` and `hclose`/`hopen` act and survive a restart.
#[test]
fn reconfig_good_and_bad_and_closing_queues_and_hosts() {
    let dir = tempdir("reconfig");
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("allot.toml"), ONE_HOST).expect("allot.toml");
    std::fs::write(config.join("lsb.queues"), queues(&["normal"])).expect("lsb.queues");
    let state = dir.join("state");
    let d = Daemon::start_with(&state, Some(&config));
    let running = submitted_id(&d.cmd(&["bsub", "sleep", "60"], &dir));
    let pending = submitted_id(&d.cmd(&["bsub", "sleep", "60"], &dir));
    d.wait_for(running, "RUN", &dir);

    // A bad configuration: refused, located, and nothing changes.
    std::fs::write(config.join("lsb.queues"), "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = high\nEnd Queue\n")
        .expect("bad");
    let bad = d.cmd(&["badmin", "reconfig"], &dir);
    assert!(!bad.status.success());
    assert!(stderr(&bad).starts_with("lsb.queues:3:"), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("PRIORITY"), "{}", stderr(&bad));
    assert!(stderr(&bad).ends_with("No reconfiguration: the running configuration is kept.\n"), "{}", stderr(&bad));
    // A configuration dropping the queue that holds the jobs: refused.
    std::fs::write(config.join("lsb.queues"), queues(&["other"])).expect("drop");
    let dropped = d.cmd(&["badmin", "reconfig"], &dir);
    assert!(!dropped.status.success());
    assert!(stderr(&dropped).starts_with("queue `normal` holds 2 jobs"), "{}", stderr(&dropped));
    assert!(!stdout(&d.cmd(&["bqueues"], &dir)).contains("other"));

    // A good one: applied, and the jobs are where they were.
    std::fs::write(config.join("lsb.queues"), queues(&["normal", "short"])).expect("good");
    let good = d.cmd(&["badmin", "reconfig"], &dir);
    assert!(good.status.success(), "{}", stderr(&good));
    assert_eq!(stdout(&good), "\nChecking configuration files ...\n\nNo errors found.\n\nReconfiguration initiated\n");
    assert!(stdout(&d.cmd(&["bqueues"], &dir)).contains("\nshort "));
    d.wait_for(running, "RUN", &dir);
    d.wait_for(pending, "PEND", &dir);

    // A closed queue takes no submission; an opened one does.
    assert_eq!(stdout(&d.cmd(&["badmin", "qclose", "short"], &dir)), "Queue <short> is closed\n");
    let refused = d.cmd(&["bsub", "-q", "short", "true"], &dir);
    assert!(!refused.status.success());
    assert_eq!(stderr(&refused), "bsub: Queue <short> is closed. Job not submitted.\n");
    assert!(stdout(&d.cmd(&["bqueues", "short"], &dir)).contains("Closed:Active"));
    let nosuch = d.cmd(&["badmin", "qclose", "nosuch"], &dir);
    assert!(!nosuch.status.success());
    assert_eq!(stderr(&nosuch), "Queue <nosuch>: No such queue\n");

    // A closed host takes no new job: the pending one waits after the
    // running one ends, and starts once the host is open.
    assert_eq!(stdout(&d.cmd(&["badmin", "hclose", "hostA"], &dir)), "Close <hostA> ...... done\n");
    assert!(stdout(&d.cmd(&["bhosts", "-w"], &dir)).contains("hostA              closed_Adm"));
    assert!(stdout(&d.cmd(&["bhosts"], &dir)).contains("hostA              closed  "));
    assert!(d.cmd(&["bkill", &running.to_string()], &dir).status.success());
    d.wait_for(running, "EXIT", &dir);
    std::thread::sleep(Duration::from_millis(300));
    d.wait_for(pending, "PEND", &dir);

    // A restart keeps the configuration, the closed queue and host.
    d.kill9();
    let d = Daemon::start_with(&state, Some(&config));
    assert!(stdout(&d.cmd(&["bqueues", "short"], &dir)).contains("Closed:Active"));
    assert!(stdout(&d.cmd(&["bhosts", "-w"], &dir)).contains("closed_Adm"));
    d.wait_for(pending, "PEND", &dir);
    assert_eq!(stdout(&d.cmd(&["badmin", "hopen", "hostA"], &dir)), "Open <hostA> ...... done\n");
    d.wait_for(pending, "RUN", &dir);
    assert_eq!(stdout(&d.cmd(&["badmin", "qopen", "short"], &dir)), "Queue <short> is opened\n");
    submitted_id(&d.cmd(&["bsub", "-q", "short", "true"], &dir));
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// On its embedded defaults there is no directory to read again.
#[test]
fn reconfig_on_the_embedded_defaults_says_why_not() {
    let dir = tempdir("reconfig-defaults");
    let d = Daemon::start(&dir.join("state"));
    let out = d.cmd(&["badmin", "reconfig"], &dir);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no configuration directory to read again"), "{}", stderr(&out));
}

/// allotd as root with two users: jobs run as their owners, in fairshare
/// order (3 shares to 1); a user kills their own jobs and not another's;
/// only administrators (`[daemon] admins`) act on others' jobs and run
/// `badmin`. Needs root (as CI runs) to make users and run as them.
#[test]
fn two_users_fairshare_order_ownership_and_administrators() {
    common::needs_root("two_users_fairshare_order_ownership_and_administrators", "to act as two users");
    use std::os::unix::fs::PermissionsExt;
    let alice = test_user("allotalice");
    let bob = test_user("allotbob");
    let dir = tempdir("users");
    let open = |p: &Path, mode: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    open(&dir, 0o777);
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("config");
    std::fs::write(config.join("allot.toml"), format!("{ONE_HOST}[daemon]\nadmins = [\"allotalice\"]\n"))
        .expect("allot.toml");
    std::fs::write(
        config.join("lsb.queues"),
        "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\n\
         FAIRSHARE = USER_SHARES[[allotalice, 3] [allotbob, 1] [default, 1]]\nEnd Queue\n",
    )
    .expect("lsb.queues");
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let order = dir.join("order");
    std::fs::write(&order, "").expect("order");
    open(&order, 0o666);
    let record = format!("id -un >> {}", order.display());

    // The one slot is busy while both users submit, Bob first.
    let blocker = submitted_id(&d.cmd(&["bsub", "sleep", "60"], &dir));
    d.wait_for(blocker, "RUN", &dir);
    let mut ids = Vec::new();
    for user in [bob, bob, alice, alice] {
        ids.push(submitted_id(&d.cmd_as(user, &["bsub", "-o", "/dev/null", &record], &dir)));
    }
    // Each sees their own jobs by default.
    let bobs = stdout(&d.cmd_as(bob, &["bjobs", "-w", "-noheader"], &dir));
    assert_eq!(bobs.lines().count(), 2, "{bobs}");
    assert!(bobs.lines().all(|l| l.split_whitespace().nth(1) == Some("allotbob")), "{bobs}");
    assert!(d.cmd(&["bkill", &blocker.to_string()], &dir).status.success());
    for &id in &ids {
        d.wait_for(id, "DONE", &dir);
    }
    let ran = std::fs::read_to_string(&order).expect("order");
    assert_eq!(ran, "allotalice\nallotalice\nallotbob\nallotbob\n", "run as their owners, in fairshare order");

    // Kill by the owner; refused for another user; an administrator may.
    let a1 = submitted_id(&d.cmd_as(alice, &["bsub", "sleep", "60"], &dir));
    let b1 = submitted_id(&d.cmd_as(bob, &["bsub", "sleep", "60"], &dir));
    let a = a1.to_string();
    for args in [
        vec!["bkill", &a],
        vec!["bstop", &a],
        vec!["bresume", &a],
        vec!["bswitch", "normal", &a],
        vec!["bmod", "-J", "mine", &a],
        vec!["brequeue", &a],
        vec!["bpeek", &a],
    ] {
        let refused = d.cmd_as(bob, &args, &dir);
        assert!(!refused.status.success(), "{args:?}");
        assert_eq!(stderr(&refused), format!("Job <{a1}>: User permission denied\n"), "{args:?}");
    }
    let not_admin = d.cmd_as(bob, &["badmin", "qclose", "normal"], &dir);
    assert!(!not_admin.status.success());
    assert!(stderr(&not_admin).starts_with("User permission denied"), "{}", stderr(&not_admin));
    let by_admin = d.cmd_as(alice, &["bkill", &b1.to_string()], &dir);
    assert!(by_admin.status.success(), "{}", stderr(&by_admin));
    d.wait_for(b1, "EXIT", &dir);
    let own = d.cmd_as(alice, &["bkill", &a1.to_string()], &dir);
    assert_eq!(stdout(&own), format!("Job <{a1}> is being terminated\n"));
    d.wait_for(a1, "EXIT", &dir);
}

/// A queue's per-user limit holds a user's second job while a slot is
/// free, and says so in `bjobs -p`.
#[test]
fn limits_hold_jobs_and_say_which() {
    let dir = tempdir("limits");
    let config = config_dir(
        &dir,
        &[
            ("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 2\n"),
            ("lsb.queues", "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nUJOB_LIMIT = 1\nEnd Queue\n"),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let first = submitted_id(&d.cmd(&["bsub", "sleep", "60"], &dir));
    let second = submitted_id(&d.cmd(&["bsub", "sleep", "60"], &dir));
    d.wait_for(first, "RUN", &dir);
    std::thread::sleep(Duration::from_millis(300));
    d.wait_for(second, "PEND", &dir);
    let why = stdout(&d.cmd(&["bjobs", "-p"], &dir));
    assert!(why.contains("(UJOB_LIMIT 1 in queue normal)"), "{why}");
    assert!(stdout(&d.cmd(&["bhosts"], &dir)).contains("hostA              ok"));
    assert!(d.cmd(&["bkill", &first.to_string()], &dir).status.success());
    d.wait_for(second, "RUN", &dir);
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// `GET /metrics` on the `[daemon] metrics` address.
fn scrape(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("metrics listens");
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").expect("request");
    let mut text = String::new();
    s.read_to_string(&mut text).expect("response");
    text
}

#[test]
fn metrics_show_jobs_per_queue_and_user_slots_and_pass_times() {
    let dir = tempdir("metrics");
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let addr = format!("127.0.0.1:{port}");
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("config");
    std::fs::write(config.join("allot.toml"), format!("{ONE_HOST}[daemon]\nmetrics = \"{addr}\"\n")).expect("toml");
    std::fs::write(config.join("lsb.queues"), queues(&["normal"])).expect("lsb.queues");
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let first = submitted_id(&d.cmd(&["bsub", "sleep", "60"], &dir));
    submitted_id(&d.cmd(&["bsub", "sleep", "60"], &dir));
    d.wait_for(first, "RUN", &dir);
    let me = nix::unistd::User::from_uid(nix::unistd::Uid::effective()).ok().flatten().expect("me").name;
    let text = scrape(&addr, "/metrics");
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.contains("content-type: application/openmetrics-text; version=1.0.0; charset=utf-8"), "{text}");
    assert!(text.trim_end().ends_with("# EOF"), "{text}");
    for line in [
        format!("allot_jobs{{queue=\"normal\",user=\"{me}\",state=\"pending\"}} 1"),
        format!("allot_jobs{{queue=\"normal\",user=\"{me}\",state=\"running\"}} 1"),
        "allot_queue_slots_used{queue=\"normal\"} 1".to_string(),
        "allot_slots_used 1".to_string(),
        "allot_slots_total 1".to_string(),
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
    let passes: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("allot_scheduling_passes_total "))
        .and_then(|n| n.parse().ok())
        .expect("pass count");
    assert!(passes >= 1, "{text}");
    assert!(scrape(&addr, "/other").starts_with("HTTP/1.1 404 Not Found"));
    // 200 connections held open by whoever reaches the port: those past
    // the cap are closed at once, so they draw no more descriptors; the
    // commands are answered meanwhile, and the scrape once they let go.
    let held: Vec<std::net::TcpStream> = (0..200).filter_map(|_| std::net::TcpStream::connect(&addr).ok()).collect();
    let is_closed = |s: &std::net::TcpStream| {
        use std::io::Read;
        let _ = s.set_read_timeout(Some(std::time::Duration::from_millis(5)));
        matches!((&mut &*s).read(&mut [0u8; 1]), Ok(0))
    };
    // Closed as allotd accepts them (however busy the machine is).
    let mut closed = vec![false; held.len()];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while closed.iter().filter(|c| **c).count() < 200 - 32 && std::time::Instant::now() < deadline {
        for (c, s) in closed.iter_mut().zip(&held) {
            *c = *c || is_closed(s);
        }
    }
    let closed = closed.iter().filter(|c| **c).count();
    assert!(closed >= 200 - 32, "the metrics port holds 32 connections at most: {closed} of 200 closed");
    assert!(d.cmd(&["bjobs"], &dir).status.success());
    drop(held);
    assert!(scrape(&addr, "/metrics").starts_with("HTTP/1.1 200 OK\r\n"));
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// The live fairshare views: `bqueues -l` (and `-r`) with the queue's
/// share tables, `allot shares --live`, `bugroup -l`, `busers`, and
/// `bhpart` on a cluster without host partitions.
#[test]
fn fairshare_views_on_the_live_state() {
    let me = nix::unistd::User::from_uid(nix::unistd::Uid::effective()).ok().flatten().expect("me").name;
    let dir = tempdir("views");
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("allot.toml"), ONE_HOST).expect("allot.toml");
    std::fs::write(
        config.join("lsb.users"),
        format!(
            "Begin UserGroup\nGROUP_NAME GROUP_MEMBER USER_SHARES\ngroup1 ({me} someone) ([{me}, 3] [others, 1])\n\
             End UserGroup\n\nBegin User\nUSER_NAME MAX_JOBS\n{me} 5\nEnd User\n"
        ),
    )
    .expect("lsb.users");
    std::fs::write(
        config.join("lsb.queues"),
        "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nRUNLIMIT = 60\n\
         FAIRSHARE = USER_SHARES[[group1, 10] [default, 1]]\nEnd Queue\n",
    )
    .expect("lsb.queues");
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let running = submitted_id(&d.cmd(&["bsub", "sleep", "60"], &dir));
    submitted_id(&d.cmd(&["bsub", "sleep", "60"], &dir));
    d.wait_for(running, "RUN", &dir);

    let long = stdout(&d.cmd(&["bqueues", "-l", "normal"], &dir));
    for part in [
        "QUEUE: normal\n\nPARAMETERS/STATISTICS\n",
        "SCHEDULING POLICIES:  FAIRSHARE\n",
        "USER_SHARES:  [group1, 10] [default, 1]\n",
        "SHARE_INFO_FOR: normal/\nUSER/GROUP   SHARES  PRIORITY  STARTED RESERVED   CPU_TIME   RUN_TIME\n",
        " RUNLIMIT\n 60.0 min\n",
        "USERS: all users\nHOSTS:  all\n",
    ] {
        assert!(long.contains(part), "{part}: {long}");
    }
    let group_row = long.lines().find(|l| l.starts_with("group1 ")).unwrap_or_else(|| panic!("{long}"));
    let cells: Vec<&str> = group_row.split_whitespace().collect();
    assert_eq!((cells[1], cells[3]), ("10", "1"), "10 shares, 1 job started: {group_row}");
    assert!(!long.contains("SHARE_INFO_FOR: normal/group1/"), "only the top level without -r: {long}");
    let recursive = stdout(&d.cmd(&["bqueues", "-l", "-r", "normal"], &dir));
    let mine = format!("\n{me} ");
    let sub = recursive.split("SHARE_INFO_FOR: normal/group1/\n").nth(1).unwrap_or_else(|| panic!("{recursive}"));
    assert!(sub.contains(&mine), "{sub}");
    let unknown = d.cmd(&["bqueues", "nosuch"], &dir);
    assert_eq!(stderr(&unknown), "nosuch: No such queue\n");

    let shares = stdout(&d.cmd(&["shares", "--live"], &dir));
    assert!(shares.starts_with("QUEUE: normal\n\nSHARE_INFO_FOR: normal/\n"), "{shares}");
    assert!(shares.contains("SHARE_INFO_FOR: normal/group1/\n"), "{shares}");

    let groups = stdout(&d.cmd(&["bugroup", "-l"], &dir));
    assert_eq!(groups, format!("GROUP_NAME: group1\nUSERS: {me} someone\nSHARES: [{me},3] [others,1]\n\n"));
    let users = stdout(&d.cmd(&["busers"], &dir));
    let row: Vec<String> = users.lines().nth(1).expect("my row").split_whitespace().map(str::to_string).collect();
    assert_eq!(row, [me.as_str(), "-", "5", "2", "1", "1", "0", "0", "0"], "{users}");
    assert_eq!(stdout(&d.cmd(&["bhpart"], &dir)), "No host partition found\n");
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// `bslots` on the live state: a 4-CPU host running a 2-hour job, and a
/// 4-slot job reserving the other 3 slots until that job's run limit.
#[test]
fn bslots_shows_the_reserved_slots_until_the_predicted_start() {
    let dir = tempdir("bslots");
    let queue = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nSLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y\nEnd Queue\n";
    let config = config_dir(&dir, &[("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 4\n"), ("lsb.queues", queue)]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    assert_eq!(stdout(&d.cmd(&["bslots"], &dir)), "SLOTS  RUNTIME\n4      UNLIMITED\n");
    let long = submitted_id(&d.cmd(&["bsub", "-W", "120", "sleep", "600"], &dir));
    d.wait_for(long, "RUN", &dir);
    let wide = submitted_id(&d.cmd(&["bsub", "-n", "4", "sleep", "1"], &dir));
    d.wait_for(wide, "PEND", &dir);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let shown = loop {
        let out = stdout(&d.cmd(&["bslots", "-l"], &dir));
        if out.starts_with("SLOTS: 3\n") || std::time::Instant::now() > deadline {
            break out;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // The window ends at the long job's run limit, 2 hours after its start.
    assert!(
        shown == "SLOTS: 3\nRUNTIME: 1 hour 59 minutes\nHOSTS: 3*hostA\n"
            || shown == "SLOTS: 3\nRUNTIME: 2 hours 0 minutes\nHOSTS: 3*hostA\n",
        "{shown}"
    );
    assert_eq!(stdout(&d.cmd(&["bslots", "-n", "4"], &dir)), "No reserved slots available.\n");
    assert_eq!(stdout(&d.cmd(&["bslots", "-R", "hname==hostB"], &dir)), "No reserved slots available.\n");
    assert!(stdout(&d.cmd(&["bslots", "-W", "1:30", "-R", "select[ncpus>2]"], &dir)).contains("3      "));
    let refused = d.cmd(&["bslots", "-R", "span[hosts=1]"], &dir);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("select string only"), "{}", stderr(&refused));
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// Reserved slots on the live state: a 4-CPU host in a host partition
/// running a 2-hour job, and a 4-slot job reserving the other 3. They
/// show in the RSV columns of `bhosts` (in NJOBS too, and the host is
/// full), `bqueues -l` and `busers`, in the RESERVED column of `bhpart`,
/// and with the predicted start in `bjobs -l`.
#[test]
fn reserved_slots_show_in_every_view() {
    let dir = tempdir("rsv");
    let queue = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nSLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y\nEnd Queue\n";
    let partition =
        "Begin HostPartition\nHPART_NAME = part\nHOSTS = hostA\nUSER_SHARES = [default, 1]\nEnd HostPartition\n";
    let config = config_dir(
        &dir,
        &[("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 4\n"), ("lsb.hosts", partition), ("lsb.queues", queue)],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let long = submitted_id(&d.cmd(&["bsub", "-W", "120", "sleep", "600"], &dir));
    d.wait_for(long, "RUN", &dir);
    let wide = submitted_id(&d.cmd(&["bsub", "-n", "4", "sleep", "1"], &dir));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let hosts = loop {
        let out = stdout(&d.cmd(&["bhosts"], &dir));
        if out.contains(" 3\n") || std::time::Instant::now() > deadline {
            break out;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        hosts.lines().nth(1),
        Some("hostA              closed          -      4      4      1      0      0      3"),
        "{hosts}"
    );
    let queues = stdout(&d.cmd(&["bqueues", "-l", "normal"], &dir));
    let stats = queues.lines().skip_while(|l| !l.starts_with("PRIO")).nth(1).unwrap_or_default();
    assert_eq!(
        stats.split_whitespace().collect::<Vec<_>>(),
        ["30", "0", "Open:Active", "-", "-", "-", "-", "5", "4", "1", "0", "0", "3"]
    );
    let users = stdout(&d.cmd(&["busers"], &dir));
    assert_eq!(
        users.lines().nth(1).map(|l| l.split_whitespace().skip(3).collect::<Vec<_>>()),
        Some(vec!["5", "4", "1", "0", "0", "3"]),
        "{users}"
    );
    let part = stdout(&d.cmd(&["bhpart"], &dir));
    let row = part.lines().skip_while(|l| !l.contains("RESERVED")).nth(1).unwrap_or_default();
    let columns: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(columns.get(3..5), Some(&["1", "3"][..]), "STARTED 1, RESERVED 3: {part}");

    let job = stdout(&d.cmd(&["bjobs", "-l", &wide.to_string()], &dir));
    assert!(job.contains(": Reserved <3> job slot(s) on host(s) <3*hostA>;\n"), "{job}");
    // The predicted start is the long job's run limit: 2 hours after its
    // start, to the second.
    let running = stdout(&d.cmd(&["bjobs", "-l", &long.to_string()], &dir));
    let clock = |text: &str, marker: &str| -> Option<(u64, u64)> {
        let line = text.lines().find(|l| l.contains(marker))?;
        let hms = line.split_whitespace().find(|w| w.matches(':').count() >= 2)?;
        let mut parts = hms.trim_matches(|c: char| !c.is_ascii_digit()).split(':').map(|p| p.parse::<u64>().ok());
        let (h, m, s) = (parts.next()??, parts.next()??, parts.next()??);
        Some((h, m * 60 + s))
    };
    let (start_h, start_ms) = clock(&running, ": Started").expect(&running);
    let (at_h, at_ms) = clock(&job, "Predicted start time").expect(&job);
    assert_eq!((at_h, at_ms), ((start_h + 2) % 24, start_ms), "{running}{job}");
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// Interruptible backfill on the live state: with a 2-hour job running and
/// a 4-slot job reserving the other 3 slots, a job of the `lazy` queue
/// (INTERRUPTIBLE_BACKFILL, RUNLIMIT = 180 minutes) backfills a reserved
/// slot with its run limit cut to the predicted start, and `bjobs -l`
/// shows the cut limit.
#[test]
fn interruptible_backfill_jobs_show_their_cut_run_limit() {
    let dir = tempdir("interruptible");
    let queues = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nSLOT_RESERVE = MAX_RESERVE_TIME[1000]\nBACKFILL = Y\nEnd Queue\n\
                  Begin Queue\nQUEUE_NAME = lazy\nPRIORITY = 1\nBACKFILL = Y\nINTERRUPTIBLE_BACKFILL = 60\nRUNLIMIT = 180\n\
                  REQUEUE_EXIT_VALUES = 137\nEnd Queue\n";
    let config =
        config_dir(&dir, &[("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 4\n"), ("lsb.queues", queues)]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let long = submitted_id(&d.cmd(&["bsub", "-W", "120", "sleep", "600"], &dir));
    d.wait_for(long, "RUN", &dir);
    let wide = submitted_id(&d.cmd(&["bsub", "-n", "4", "sleep", "1"], &dir));
    d.wait_for(wide, "PEND", &dir);
    // Its own 5 hours are ignored, not refused.
    let lazy = submitted_id(&d.cmd(&["bsub", "-q", "lazy", "-W", "300", "sleep", "600"], &dir));
    d.wait_for(lazy, "RUN", &dir);
    let shown = stdout(&d.cmd(&["bjobs", "-l", &lazy.to_string()], &dir));
    assert!(
        shown.contains("RUNLIMIT\n 119.") || shown.contains("RUNLIMIT\n 120.0 min"),
        "the 2 hours to the predicted start, not 180 or 300 minutes: {shown}"
    );
    // bhist -l as spec 004 shows it: the job's own limit under its
    // submission, the cut one after its dispatch.
    let history = stdout(&d.cmd(&["bhist", "-l", &lazy.to_string()], &dir));
    assert!(history.contains(" RUNLIMIT\n 300.0 min of "), "{history}");
    assert!(
        history.contains(": Interruptible backfill runtime limit is 119.")
            || history.contains(": Interruptible backfill runtime limit is 120.0 minutes;"),
        "{history}"
    );
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// A multifactor policy on the real daemon: `bsub -G` picks the account,
/// `-uf` lowers a job's priority and the job runs, `-qos` a level the
/// user may not use is refused, and a user of no account too.
#[test]
fn a_multifactor_cluster_takes_jobs_by_association() {
    let me = nix::unistd::User::from_uid(nix::unistd::Uid::effective()).ok().flatten().expect("me").name;
    let dir = tempdir("multifactor");
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("config dir");
    let toml = format!("{ONE_HOST}\n[priority]\npolicy = \"slurm-fairtree\"\naccounts = \"assoc.cfg\"\n");
    std::fs::write(config.join("allot.toml"), toml).expect("allot.toml");
    std::fs::write(
        config.join("assoc.cfg"),
        format!("Parent - 'root'\nAccount - 'phys'\nAccount - 'chem'\nParent - 'chem'\nUser - '{me}'\n"),
    )
    .expect("assoc.cfg");
    std::fs::write(config.join("lsb.queues"), "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n")
        .expect("lsb.queues");
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let job = submitted_id(&d.cmd(&["bsub", "-G", "chem", "-uf", "0.5", "-o", "/dev/null", "/bin/true"], &dir));
    d.wait_for(job, "DONE", &dir);
    let refused = d.cmd(&["bsub", "-qos", "expedite", "/bin/true"], &dir);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("-qos expedite: user"), "{}", stderr(&refused));
    let refused = d.cmd(&["bsub", "-G", "phys", "/bin/true"], &dir);
    assert!(
        stderr(&refused).contains(&format!("user `{me}` has no association in account `phys`")),
        "{}",
        stderr(&refused)
    );
    let refused = d.cmd(&["bsub", "-uf", "2", "/bin/true"], &dir);
    assert!(stderr(&refused).contains("-uf 2: expected a user factor"), "{}", stderr(&refused));
    // The live state: one job runs on the one CPU, one waits with -uf 0.5.
    let running = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "sleep", "30"], &dir));
    d.wait_for(running, "RUN", &dir);
    let waiting = submitted_id(&d.cmd(&["bsub", "-uf", "0.5", "-o", "/dev/null", "/bin/true"], &dir));
    // Engine time is whole seconds: the running job's charge shows after one.
    let mine = || {
        let out = d.cmd(&["sshare", "--live", "--json"], &dir);
        assert!(out.status.success(), "{}", stderr(&out));
        let rows: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        rows.as_array().expect("rows").iter().find(|r| r["user"] == me.as_str()).expect("my association").clone()
    };
    eventually("the running job is charged", || mine()["raw_usage"].as_f64().is_some_and(|u| u > 0.0));
    let mine = mine();
    assert_eq!(mine["account"], "chem");
    assert!(mine["raw_usage"].as_f64().is_some_and(|u| u > 0.0), "charged while it runs: {mine}");
    let out = d.cmd(&["sprio", "--live", "--json"], &dir);
    assert!(out.status.success(), "{}", stderr(&out));
    let jobs: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let jobs = jobs.as_array().expect("jobs");
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0]["id"].as_u64(), Some(waiting));
    assert_eq!(jobs[0]["factors"]["user"], 0.5);
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// Dates show in the local time zone, as LSF's commands show them: the
/// same job's submission, nine hours on under `TZ=JST-9` from `TZ=UTC0`.
#[test]
fn dates_show_in_the_local_time_zone() {
    let dir = tempdir("timezone");
    let d = Daemon::start(&dir.join("state"));
    let job = submitted_id(&d.cmd(&["bsub", "sleep", "30"], &dir)).to_string();
    let submitted = |tz: &str| {
        let out = std::process::Command::new(allot())
            .args(["bjobs", "-o", "submit_time", "-noheader", &job])
            .env("ALLOT_STATE_DIR", &d.state)
            .env("TZ", tz)
            .output()
            .expect("bjobs");
        stdout(&out).trim().to_string()
    };
    let (utc, tokyo) = (submitted("UTC0"), submitted("JST-9"));
    let hour = |text: &str| -> u32 { text.rsplit(' ').next().and_then(|hm| hm[..2].parse().ok()).expect("HH:MM") };
    assert_eq!((hour(&utc) + 9) % 24, hour(&tokyo), "{utc} then {tokyo}");
    assert!(d.cmd(&["bkill", &job], &dir).status.success());
}

/// The commands tools use to find the cluster: its name from its
/// `lsf.cluster.<name>`, allotd's host as the master, `lsb.params` in
/// force (defaults included), where the configuration and the state are,
/// and the runtime counts.
#[test]
fn lsid_lsclusters_bparams_and_badmin_show_the_cluster() {
    let dir = tempdir("lsid");
    let cluster = "Begin Host\nHOSTNAME model type server RESOURCES ncpus\nh1 ! ! 1 () 2\nh2 ! ! 1 () 2\nEnd Host\n";
    let config = config_dir(
        &dir,
        &[
            // lsf.shared names the cluster, as LSF's does.
            ("lsf.shared", "Begin Cluster\nClusterName Servers\nmycluster (h1)\nEnd Cluster\n"),
            ("lsf.cluster.mycluster", cluster),
            ("lsb.queues", "Begin Queue\nQUEUE_NAME = normal\nEnd Queue\n"),
            ("lsb.params", "Begin Parameters\nDEFAULT_QUEUE = normal\nMAX_PREEXEC_RETRY = 4\nEnd Parameters\n"),
        ],
    );
    // Without --config, allotd finds its configuration in $LSF_ENVDIR, as
    // LSF's daemons do.
    let envdir = config.display().to_string();
    let d = Daemon::start_env(&dir.join("state"), None, &[("LSF_ENVDIR", envdir.as_str())]);
    let host = allot_config::defaults::this_host();
    let id = stdout(&d.cmd(&["lsid"], &dir));
    assert!(id.ends_with(&format!("\nMy cluster name is mycluster\nMy master name is {host}\n")), "{id}");
    let clusters = stdout(&d.cmd(&["lsclusters", "-w"], &dir));
    let row: Vec<&str> = clusters.lines().nth(1).expect("a row").split_whitespace().collect();
    assert_eq!((row[0], row[1], row[2], row[4], row[5]), ("mycluster", "ok", host.as_str(), "2", "2"), "{clusters}");
    let params = stdout(&d.cmd(&["bparams"], &dir));
    assert!(params.starts_with("Default Queues:  normal\nMBD_SLEEP_TIME used for calculations:  60 seconds\n"));
    let all = stdout(&d.cmd(&["bparams", "-a"], &dir));
    assert!(all.starts_with("lsb.params configuration at "), "{all}");
    assert!(all.contains("\n    MAX_PREEXEC_RETRY = 4\n") && all.contains("\n    CLEAN_PERIOD = 3600\n"), "{all}");
    let conf = stdout(&d.cmd(&["badmin", "showconf", "mbd"], &dir));
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()).display().to_string();
    assert!(
        conf.contains(&format!("\n    LSF_ENVDIR = {}\n", config.display()))
            || conf.contains(&format!("\n    LSF_ENVDIR = {}\n", canonical(&config))),
        "{conf}"
    );
    assert!(conf.contains("\n    LSB_SHAREDIR = "), "{conf}");
    // What is in force, as loaded: an lsf.conf changed on disk since is
    // not, until a reconfiguration reads it.
    std::fs::write(config.join("lsf.conf"), "LSF_CONFDIR=/elsewhere\n").expect("lsf.conf");
    let again = stdout(&d.cmd(&["badmin", "showconf", "mbd"], &dir));
    assert!(!again.contains("/elsewhere"), "{again}");
    let job = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "true"], &dir));
    d.wait_for(job, "DONE", &dir);
    let status = stdout(&d.cmd(&["badmin", "showstatus"], &dir));
    for line in ["     Number of servers:                2\n", "         Finished:                     1\n"] {
        assert!(status.contains(line), "{line:?} in {status}");
    }
    let bad = d.cmd(&["badmin", "showconf", "sbd"], &dir);
    assert!(!bad.status.success() && stderr(&bad).contains("expected `mbd`"), "{}", stderr(&bad));
}
