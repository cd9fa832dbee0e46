//! allotd end to end: the real daemon in a temporary state directory,
//! driven through the real commands.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn allotd() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_allotd"))
}

/// The `allot` command, built beside allotd by `cargo test --workspace`
/// (allot-cli's own tests need it).
fn allot() -> PathBuf {
    let path = allotd().with_file_name("allot");
    assert!(path.exists(), "{} is missing: run `cargo test --workspace`, which builds it", path.display());
    path
}

struct Daemon {
    state: PathBuf,
    child: Child,
}

impl Daemon {
    fn start(state: &Path) -> Daemon {
        Daemon::start_with(state, None)
    }

    /// allotd on a configuration directory, or on its embedded defaults.
    fn start_with(state: &Path, config: Option<&Path>) -> Daemon {
        std::fs::create_dir_all(state).expect("state dir");
        let log = std::fs::File::create(state.join("test-allotd.log")).expect("log");
        let mut command = Command::new(allotd());
        if let Some(dir) = config {
            command.arg("--config").arg(dir);
        }
        let child =
            command.env("ALLOT_STATE_DIR", state).stdout(Stdio::null()).stderr(log).spawn().expect("allotd starts");
        let d = Daemon { state: state.to_path_buf(), child };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(state.join("allotd.sock")).is_err() {
            assert!(Instant::now() < deadline, "allotd did not listen: {}", d.log());
            std::thread::sleep(Duration::from_millis(20));
        }
        d
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.state.join("test-allotd.log")).unwrap_or_default()
    }

    fn cmd(&self, args: &[&str], cwd: &Path) -> Output {
        Command::new(allot())
            .args(args)
            .env("ALLOT_STATE_DIR", &self.state)
            .current_dir(cwd)
            .output()
            .expect("allot runs")
    }

    /// Polls `bjobs -a` until `job` shows `status`.
    fn wait_for(&self, job: u64, status: &str, cwd: &Path) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let out = self.cmd(&["bjobs", "-a", "-noheader", &job.to_string()], cwd);
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            if text.split_whitespace().nth(2) == Some(status) {
                return text;
            }
            assert!(Instant::now() < deadline, "job {job} never reached {status}: {text} {}", self.log());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("allot-daemon-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

fn submitted_id(out: &Output) -> u64 {
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "bsub failed: {text} {}", String::from_utf8_lossy(&out.stderr));
    let rest = text.strip_prefix("Job <").unwrap_or_else(|| panic!("{text}"));
    rest[..rest.find('>').expect(">")].parse().expect("id")
}

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
    assert_eq!(text, format!("{id} normal hello {}\n", work.display()));

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
    assert_eq!(String::from_utf8_lossy(&bad.stderr), "queue `nosuch` does not exist\n");
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
        let dir = dir.clone();
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

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const ONE_HOST: &str = "[[hosts]]\nname = \"hostA\"\nncpus = 1\n";

fn queues(names: &[&str]) -> String {
    names.iter().map(|q| format!("Begin Queue\nQUEUE_NAME = {q}\nPRIORITY = 30\nEnd Queue\n\n")).collect()
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
    assert_eq!(stderr(&refused), "Queue <short> is closed. Job not submitted.\n");
    assert!(stdout(&d.cmd(&["bqueues", "short"], &dir)).contains("Closed:Active"));
    let nosuch = d.cmd(&["badmin", "qclose", "nosuch"], &dir);
    assert!(!nosuch.status.success());
    assert_eq!(stderr(&nosuch), "Queue <nosuch>: No such queue\n");

    // A closed host takes no new job: the pending one waits after the
    // running one ends, and starts once the host is open.
    assert_eq!(stdout(&d.cmd(&["badmin", "hclose", "hostA"], &dir)), "Close <hostA> ...... done\n");
    assert!(stdout(&d.cmd(&["bhosts"], &dir)).contains("hostA              closed_Adm"));
    assert!(d.cmd(&["bkill", &running.to_string()], &dir).status.success());
    d.wait_for(running, "EXIT", &dir);
    std::thread::sleep(Duration::from_millis(300));
    d.wait_for(pending, "PEND", &dir);

    // A restart keeps the configuration, the closed queue and host.
    d.kill9();
    let d = Daemon::start_with(&state, Some(&config));
    assert!(stdout(&d.cmd(&["bqueues", "short"], &dir)).contains("Closed:Active"));
    assert!(stdout(&d.cmd(&["bhosts"], &dir)).contains("closed_Adm"));
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

/// A user of this machine for the multi-user tests (made if missing):
/// uid and gid.
fn test_user(name: &str) -> (u32, u32) {
    if nix::unistd::User::from_name(name).ok().flatten().is_none() {
        let made = Command::new("useradd").args(["--no-create-home", "--shell", "/bin/sh", name]).status();
        assert!(made.is_ok_and(|s| s.success()), "useradd {name}");
    }
    let u = nix::unistd::User::from_name(name).ok().flatten().expect("user exists");
    (u.uid.as_raw(), u.gid.as_raw())
}

impl Daemon {
    /// The `allot` command run as another user.
    fn cmd_as(&self, user: (u32, u32), args: &[&str], cwd: &Path) -> Output {
        use std::os::unix::process::CommandExt;
        Command::new(allot())
            .args(args)
            .env("ALLOT_STATE_DIR", &self.state)
            .current_dir(cwd)
            .uid(user.0)
            .gid(user.1)
            .output()
            .expect("allot runs")
    }
}

/// allotd as root with two users: jobs run as their owners, in fairshare
/// order (3 shares to 1); a user kills their own jobs and not another's;
/// only administrators (`[daemon] admins`) act on others' jobs and run
/// `badmin`. Needs root (as CI runs) to make users and run as them.
#[test]
fn two_users_fairshare_order_ownership_and_administrators() {
    if !nix::unistd::Uid::effective().is_root() {
        eprintln!("two_users_fairshare_order_ownership_and_administrators: needs root to act as two users; not run");
        return;
    }
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
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("config");
    std::fs::write(config.join("allot.toml"), "[[hosts]]\nname = \"hostA\"\nncpus = 2\n").expect("allot.toml");
    std::fs::write(
        config.join("lsb.queues"),
        "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nUJOB_LIMIT = 1\nEnd Queue\n",
    )
    .expect("lsb.queues");
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
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").expect("request");
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
    assert!(text.starts_with("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4"), "{text}");
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
        .find_map(|l| l.strip_prefix("allot_scheduling_pass_seconds_count "))
        .and_then(|n| n.parse().ok())
        .expect("pass count");
    assert!(passes >= 1, "{text}");
    assert!(scrape(&addr, "/other").starts_with("HTTP/1.1 404 Not Found"));
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// `bsub -K` waits and exits with the job's code; `-cwd` and `-P` reach the
/// job and `bjobs -l`/`-json`; options this allot cannot honour yet are
/// refused, not ignored.
#[test]
fn bsub_waits_sets_the_directory_and_refuses_what_it_cannot_honour() {
    let dir = tempdir("bsub");
    let d = Daemon::start(&dir.join("state"));
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let waited = d.cmd(&["bsub", "-K", "-cwd", "work", "-P", "climate", "-J", "probe", "pwd > where; exit 3"], &dir);
    assert_eq!(waited.status.code(), Some(3), "{}", stderr(&waited));
    let text = stdout(&waited);
    assert!(text.contains("<<Waiting for dispatch ...>>\n<<Starting on "), "{text}");
    assert!(text.ends_with("<<Job is finished>>\n"), "{text}");
    assert_eq!(std::fs::read_to_string(work.join("where")).expect("ran in -cwd").trim(), work.display().to_string());
    let id: u64 = text["Job <".len()..text.find('>').expect(">")].parse().expect("id");
    let long = stdout(&d.cmd(&["bjobs", "-l", &id.to_string()], &dir));
    assert!(long.contains(&format!("Job <{id}>, Job Name <probe>, User <")), "{long}");
    assert!(long.contains("Project <climate>, Status <EXIT>"), "{long}");
    assert!(long.contains("Exited with exit code 3."), "{long}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&d.cmd(&["bjobs", "-a", "-json", "-o", "jobid stat exit_code proj_name"], &dir)))
            .expect("bjobs -json is JSON");
    assert_eq!(json["RECORDS"][0]["JOBID"], id.to_string());
    assert_eq!(json["RECORDS"][0]["EXIT_CODE"], "3");
    assert_eq!(json["RECORDS"][0]["PROJ_NAME"], "climate");
    let sp = d.cmd(&["bsub", "-sp", "10", "true"], &dir);
    assert_eq!(
        stderr(&sp),
        "-sp: user-assigned job priority is not enabled (MAX_USER_PRIORITY in lsb.params)\n",
        "the embedded defaults have no MAX_USER_PRIORITY"
    );
    for (opt, args) in [("-R", vec!["-R", "span[hosts=1]"]), ("-x", vec!["-x"])] {
        let mut full = vec!["bsub"];
        full.extend(args);
        full.push("true");
        let out = d.cmd(&full, &dir);
        assert!(!out.status.success());
        assert!(
            stderr(&out).starts_with(&format!("bsub: {opt}: not supported by this allot yet.")),
            "{}",
            stderr(&out)
        );
    }
    // A -cwd with patterns is made (0700); one without runs in /tmp.
    let made = d.cmd(&["bsub", "-K", "-P", "climate", "-cwd", "scratch/%P/%J", "pwd > where"], &dir);
    assert!(made.status.success(), "{}", stderr(&made));
    let made_id = submitted_id(&made);
    let made_dir = dir.join(format!("scratch/climate/{made_id}"));
    assert_eq!(
        std::fs::read_to_string(made_dir.join("where")).expect("ran there").trim(),
        made_dir.display().to_string()
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&made_dir).expect("made").permissions().mode() & 0o777, 0o700);
    let lost = d.cmd(&["bsub", "-K", "-cwd", "nowhere", "-o", "/tmp/allot-e2e-lost.%J", "pwd"], &dir);
    let lost_id = submitted_id(&lost);
    let out = std::fs::read_to_string(format!("/tmp/allot-e2e-lost.{lost_id}")).expect("output");
    assert!(out.ends_with("\n/tmp\n") && out.contains("does not exist; the job runs in /tmp"), "{out}");
    let _ = std::fs::remove_file(format!("/tmp/allot-e2e-lost.{lost_id}"));
    assert!(!dir.join("nowhere").exists());
    assert!(stdout(&d.cmd(&["bjobs", "-J", "pro*", "-a", "-noheader"], &dir)).contains("probe"));
    assert_eq!(stdout(&d.cmd(&["bjobs", "-J", "nothing*", "-a"], &dir)), "No job found\n");
}

/// Bytes in a file so far (0 if it does not exist yet).
fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// `bstop`/`bresume` of pending and running jobs (a stopped job really
/// stops), `bswitch`, `bmod`, `brequeue` of running and finished jobs,
/// `bpeek` and `bhist`; holds and stops survive a kill -9 of allotd.
#[test]
fn stop_resume_switch_modify_requeue_peek_and_history() {
    let dir = tempdir("control");
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("allot.toml"), ONE_HOST).expect("allot.toml");
    std::fs::write(config.join("lsb.queues"), queues(&["normal", "short"])).expect("lsb.queues");
    std::fs::write(config.join("lsb.params"), "Begin Parameters\nMAX_USER_PRIORITY = 20\nEnd Parameters\n")
        .expect("lsb.params");
    let state = dir.join("state");
    let d = Daemon::start_with(&state, Some(&config));
    let ticks = dir.join("ticks");
    let ticker = format!("echo started; while true; do echo x >> {}; sleep 0.05; done", ticks.display());
    let a = submitted_id(&d.cmd(&["bsub", "-o", "out.%J", &ticker], &dir));
    let b = submitted_id(&d.cmd(&["bsub", "sleep", "60"], &dir));
    d.wait_for(a, "RUN", &dir);
    let (sa, sb) = (a.to_string(), b.to_string());

    // bstop: the pending job is held, the running one stops ticking.
    assert_eq!(stdout(&d.cmd(&["bstop", &sb], &dir)), format!("Job <{b}> is being stopped\n"));
    assert_eq!(stdout(&d.cmd(&["bstop", &sa], &dir)), format!("Job <{a}> is being stopped\n"));
    d.wait_for(b, "PSUSP", &dir);
    d.wait_for(a, "USUSP", &dir);
    std::thread::sleep(Duration::from_millis(300));
    let stopped_at = size(&ticks);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(size(&ticks), stopped_at, "a stopped job does not run");
    let again = d.cmd(&["bstop", &sa], &dir);
    assert_eq!(stderr(&again), format!("Job <{a}>: Job has already been suspended\n"));
    let q = stdout(&d.cmd(&["bqueues", "normal"], &dir));
    assert!(q.trim_end().ends_with("2     1     0     1"), "PSUSP counts as pending, USUSP as suspended: {q}");
    let h = stdout(&d.cmd(&["bhosts"], &dir));
    let row: Vec<&str> = h.lines().nth(1).unwrap_or("").split_whitespace().collect();
    assert_eq!(row[4..], ["1", "0", "0", "1", "0"], "NJOBS RUN SSUSP USUSP RSV: {h}");
    let why = stdout(&d.cmd(&["bjobs", "-l", &sb], &dir));
    assert!(why.contains("The job was suspended by the user while pending"), "{why}");

    // Both survive a kill -9 and restart of allotd, still suspended.
    d.kill9();
    let d = Daemon::start_with(&state, Some(&config));
    d.wait_for(b, "PSUSP", &dir);
    d.wait_for(a, "USUSP", &dir);

    // bresume: the job ticks again; the held one may run again.
    assert_eq!(stdout(&d.cmd(&["bresume", &sa], &dir)), format!("Job <{a}> is being resumed\n"));
    d.wait_for(a, "RUN", &dir);
    let deadline = Instant::now() + Duration::from_secs(10);
    while size(&ticks) == stopped_at {
        assert!(Instant::now() < deadline, "a resumed job runs again");
        std::thread::sleep(Duration::from_millis(50));
    }
    let not = d.cmd(&["bresume", &sa], &dir);
    assert_eq!(stderr(&not), format!("Job <{a}>: Job is not suspended\n"));
    assert!(d.cmd(&["bresume", &sb], &dir).status.success());
    d.wait_for(b, "PEND", &dir);

    // bswitch and bmod change a pending job, and refuse what cannot be.
    assert_eq!(stdout(&d.cmd(&["bswitch", "short", &sb], &dir)), format!("Job <{b}> is switched to queue <short>\n"));
    let nosuch = d.cmd(&["bswitch", "nosuch", &sb], &dir);
    assert_eq!(stderr(&nosuch), format!("Job <{b}>: queue `nosuch` does not exist\n"));
    let changed = d.cmd(&["bmod", "-J", "renamed", "-W", "5", &sb], &dir);
    assert_eq!(stdout(&changed), format!("Parameters of job <{b}> are being changed\n"), "{}", stderr(&changed));
    let fields = stdout(&d.cmd(&["bjobs", "-noheader", "-o", "queue job_name runtimelimit", &sb], &dir));
    assert_eq!(fields.split_whitespace().collect::<Vec<_>>(), ["short", "renamed", "5.0", "min"], "{fields}");
    let running = d.cmd(&["bmod", "-J", "x", &sa], &dir);
    assert_eq!(stderr(&running), format!("Job <{a}>: Job has already started; only pending jobs are changed\n"));
    let long = stdout(&d.cmd(&["bjobs", "-l", &sb], &dir));
    assert!(long.contains("Job Priority <10>,"), "MAX_USER_PRIORITY / 2 by default: {long}");
    assert!(d.cmd(&["bmod", "-sp", "15", &sb], &dir).status.success());
    assert!(stdout(&d.cmd(&["bjobs", "-l", &sb], &dir)).contains("Job Priority <15>,"));
    let over = d.cmd(&["bmod", "-sp", "21", &sb], &dir);
    assert_eq!(stderr(&over), format!("Job <{b}>: -sp 21: a job priority is from 1 to MAX_USER_PRIORITY (20)\n"));
    // Back to the default, so the requeue below keeps submission order.
    assert!(d.cmd(&["bmod", "-spn", &sb], &dir).status.success());
    assert!(stdout(&d.cmd(&["bjobs", "-l", &sb], &dir)).contains("Job Priority <10>,"));
    let too_big = d.cmd(&["bmod", "-n", "2", &sb], &dir);
    assert_eq!(stderr(&too_big), format!("Job <{b}>: -n 2: queue `short` has 1 job slots on its hosts\n"));

    // bpeek shows the running job's output so far.
    let peek = stdout(&d.cmd(&["bpeek", &sa], &dir));
    assert_eq!(peek, "<< output from stdout >>\nstarted\n");
    let pending_peek = d.cmd(&["bpeek", &sb], &dir);
    assert_eq!(stderr(&pending_peek), format!("Job <{b}>: Job has not started yet\n"));

    // brequeue of the running job: killed, pending again, and (submitted
    // first) runs again before the other.
    assert_eq!(stdout(&d.cmd(&["brequeue", &sa], &dir)), format!("Job <{a}> is being requeued\n"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(dir.join(format!("out.{a}"))).unwrap_or_default() != "started\nstarted\n" {
        assert!(Instant::now() < deadline, "the requeued job runs again: {}", d.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    d.wait_for(a, "RUN", &dir);
    d.wait_for(b, "PEND", &dir);
    // Killed, it ends in EXIT; brequeue -e brings it back, held with -H.
    assert!(d.cmd(&["bkill", &sa], &dir).status.success());
    d.wait_for(a, "EXIT", &dir);
    let only_done = d.cmd(&["brequeue", "-d", &sa], &dir);
    assert_eq!(stderr(&only_done), format!("Job <{a}>: Job is EXIT, not in a state asked for\n"));
    assert!(d.cmd(&["brequeue", "-e", "-H", &sa], &dir).status.success());
    d.wait_for(a, "PSUSP", &dir);
    d.wait_for(b, "RUN", &dir);

    // bhist: the whole story from the event log.
    let hist = stdout(&d.cmd(&["bhist", "-l", &sa], &dir));
    for line in [
        &format!("Job <{a}>, User <"),
        "Submitted from host <",
        "Suspended by the user or administrator <",
        "Resumed by the user or administrator <",
        "Requeue requested;",
        "The job is requeued;",
        "Requeued (held);",
        "Summary of time in seconds spent in various states by",
    ] {
        assert!(hist.contains(line), "{line}: {hist}");
    }
    assert_eq!(hist.matches(": Dispatched 1 Task(s) on Host(s) <hostA>").count(), 2, "{hist}");
    let short = stdout(&d.cmd(&["bhist", &sb], &dir));
    assert!(
        short.starts_with("Summary of time in seconds spent in various states:\nJOBID   USER    JOB_NAME  PEND"),
        "{short}"
    );
    assert!(short.contains(&format!("\n{b:<7} ")), "{short}");
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

/// `bsub -w`: a job waits for its condition (by name or id), says why,
/// and runs once it holds; bad expressions and unknown jobs are refused
/// with where and what.
#[test]
fn bsub_w_dependencies() {
    let dir = tempdir("deps");
    let d = Daemon::start(&dir.join("state"));
    let first = submitted_id(&d.cmd(&["bsub", "-J", "first", "sleep", "1"], &dir));
    let second = submitted_id(&d.cmd(&["bsub", "-w", "done(first) && started(1)", "true"], &dir));
    let why = stdout(&d.cmd(&["bjobs", "-p", &second.to_string()], &dir));
    assert!(why.contains("Job dependency condition not satisfied"), "{why}");
    d.wait_for(first, "DONE", &dir);
    d.wait_for(second, "DONE", &dir);
    let never = submitted_id(&d.cmd(&["bsub", "-w", &format!("exit({first})"), "true"], &dir));
    std::thread::sleep(Duration::from_millis(300));
    let why = stdout(&d.cmd(&["bjobs", "-p", &never.to_string()], &dir));
    assert!(why.contains("Dependency condition invalid or never satisfied"), "{why}");

    let refused = |w: &str| {
        let out = d.cmd(&["bsub", "-w", w, "true"], &dir);
        assert!(!out.status.success(), "{w}");
        stderr(&out)
    };
    assert_eq!(refused("done(9999)"), "-w: job <9999> is not a job of this cluster. Job not submitted.\n");
    assert_eq!(refused("done(nosuch)"), "-w: no job of yours is named `nosuch`. Job not submitted.\n");
    let syntax = refused("done(12");
    assert!(syntax.starts_with("-w: column 8: expected `)`"), "{syntax}");
    assert!(syntax.ends_with(". Job not submitted.\n"), "{syntax}");
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// `bjobs -noheader` lines of these jobs (finished ones too).
fn lines(d: &Daemon, job: &str, dir: &Path, flags: &[&str]) -> Vec<String> {
    let mut args = vec!["bjobs", "-a", "-noheader"];
    args.extend_from_slice(flags);
    args.push(job);
    stdout(&d.cmd(&args, dir)).lines().map(str::to_string).collect()
}

/// Polls until `check` holds of the `bjobs` lines of `job`.
fn wait_until(d: &Daemon, job: &str, dir: &Path, flags: &[&str], check: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let l = lines(d, job, dir, flags);
        if check(&l) {
            return l;
        }
        assert!(Instant::now() < deadline, "{job}: {l:?} {}", d.log());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn job_arrays() {
    let dir = tempdir("arrays");
    let d = Daemon::start(&dir.join("state"));
    let cmd = ["echo", "$LSB_JOBID", "$LSB_JOBINDEX", "$LSB_JOBNAME"];
    let mut args = vec!["bsub", "-J", "sims[1-5:2]%1", "-o", "out.%J.%I"];
    args.extend_from_slice(&cmd);
    let id = submitted_id(&d.cmd(&args, &dir));
    let all_done = |l: &[String]| l.len() == 3 && l.iter().all(|x| x.split_whitespace().nth(2) == Some("DONE"));
    let done = wait_until(&d, &id.to_string(), &dir, &[], all_done);
    let names: Vec<&str> = done.iter().map(|l| l.split_whitespace().nth(6).unwrap_or("")).collect();
    assert_eq!(names, ["sims[1]", "sims[3]", "sims[5]"], "{done:?}");
    assert!(done.iter().all(|l| l.starts_with(&format!("{id} "))), "every element shows the array's id: {done:?}");
    for i in [1, 3, 5] {
        let text = std::fs::read_to_string(dir.join(format!("out.{id}.{i}"))).expect("%J and %I expanded");
        assert_eq!(text, format!("{id} {i} sims[{i}]\n"));
    }
    let one = lines(&d, &format!("{id}[3]"), &dir, &[]);
    assert_eq!(one.len(), 1, "{one:?}");

    // A limit of 1: one runs (of the machine's two or more slots), the
    // others say why.
    let big = submitted_id(&d.cmd(&["bsub", "-J", "hold[1-4]%1", "sleep", "30"], &dir));
    let b = big.to_string();
    wait_until(&d, &b, &dir, &["-r"], |l| l.len() == 1);
    let why = stdout(&d.cmd(&["bjobs", "-p", &format!("{big}[3]")], &dir));
    assert!(why.contains("The job array has reached its running element limit"), "{why}");
    assert!(d.cmd(&["bmod", "-J", "%2", &b], &dir).status.success());
    wait_until(&d, &b, &dir, &["-r"], |l| l.len() == 2);
    let summary = stdout(&d.cmd(&["bjobs", "-A", "-noheader", &b], &dir));
    assert!(summary.starts_with(&format!("{big:<7} hold[1-4] ")), "{summary}");
    let killed = d.cmd(&["bkill", &format!("{big}[1]")], &dir);
    assert_eq!(stdout(&killed), format!("Job <{big}[1]> is being terminated\n"));
    wait_until(&d, &format!("{big}[1]"), &dir, &[], |l| l.len() == 1 && l[0].contains(" EXIT "));
    let hist = stdout(&d.cmd(&["bhist", "-l", &format!("{big}[4]")], &dir));
    assert!(hist.starts_with(&format!("Job <{big}[4]>")), "{hist}");
    assert!(hist.contains("Submitted from host") && hist.contains("running element limit <2>"), "{hist}");
    // A dependency on the array waits for every element.
    let after = submitted_id(&d.cmd(&["bsub", "-w", "ended(hold)", "true"], &dir));
    let why = stdout(&d.cmd(&["bjobs", "-p", &after.to_string()], &dir));
    assert!(why.contains("Job dependency condition not satisfied"), "{why}");

    // The log keeps it all across a kill -9.
    let before = lines(&d, &b, &dir, &[]);
    d.kill9();
    let d = Daemon::start(&dir.join("state"));
    assert_eq!(lines(&d, &b, &dir, &[]), before);
    let killed = d.cmd(&["bkill", &b], &dir);
    let expected: String = (2..=4).map(|i| format!("Job <{big}[{i}]> is being terminated\n")).collect();
    assert_eq!(stdout(&killed), expected, "the whole array, by its id");
    assert_eq!(stderr(&killed), format!("Job <{big}[1]>: Job has already finished\n"));
    d.wait_for(after, "DONE", &dir);

    let refused = |j: &str| {
        let out = d.cmd(&["bsub", "-J", j, "true"], &dir);
        assert!(!out.status.success(), "{j}");
        stderr(&out)
    };
    assert_eq!(refused("x[0-3]"), "-J: column 3: array indices start at 1. Job not submitted.\n");
    assert!(refused("x[1-1001]").contains("MAX_JOB_ARRAY_SIZE (1000)"));
    assert!(refused("x[1-3").starts_with("-J: column 6: expected `,` or `]`"));
    let missing = d.cmd(&["bkill", &format!("{big}[2]"), &format!("{id}[2]")], &dir);
    assert_eq!(
        stderr(&missing),
        format!("Job <{big}[2]>: Job has already finished\nJob <{id}[2]>: No matching job found\n")
    );
}

/// Running jobs are measured every `usage_interval` seconds: CPU time and
/// memory show in `bjobs` while they run, are charged to fairshare, and
/// the largest memory stays after they end and across a restart.
#[test]
fn running_jobs_cpu_and_memory_are_measured() {
    let dir = tempdir("usage");
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("allot.toml"), format!("{ONE_HOST}\n[daemon]\nusage_interval = 1\n")).expect("toml");
    std::fs::write(config.join("lsb.queues"), queues(&["normal"])).expect("lsb.queues");
    let state = dir.join("state");
    let d = Daemon::start_with(&state, Some(&config));
    // Busy for a while, holding some memory (a shell variable of ~20 MB).
    let burn =
        "x=$(head -c 20000000 /dev/zero | tr '\\0' a); i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done; echo ${#x}";
    let job = submitted_id(&d.cmd(&["bsub", "-o", "out.%J", burn], &dir));
    let seen = wait_until(&d, &job.to_string(), &dir, &["-o", "stat cpu_used mem"], |l| {
        l.first().is_some_and(|x| x.starts_with("RUN") && !x.ends_with('-') && !x.contains(" 0.0 second"))
    });
    let mem: u64 = seen[0].split_whitespace().nth(3).and_then(|m| m.parse().ok()).expect("MEM in Mbytes");
    assert!(mem >= 1, "{seen:?}");
    d.wait_for(job, "DONE", &dir);
    let max = stdout(&d.cmd(&["bjobs", "-a", "-noheader", "-o", "max_mem", &job.to_string()], &dir));
    let max_mb: u64 = max.split_whitespace().next().and_then(|m| m.parse().ok()).expect("MAX_MEM");
    assert!(max_mb >= 20, "a 20 MB variable: {max}");
    d.kill9();
    let d = Daemon::start_with(&state, Some(&config));
    let again = stdout(&d.cmd(&["bjobs", "-a", "-noheader", "-o", "max_mem", &job.to_string()], &dir));
    assert_eq!(again, max, "kept across a restart");
}
