//! What a hostile local user may send allotd: stalled and oversized
//! requests, expressions nested thousands deep, text that would drive an
//! administrator's terminal. allotd stays up, stays small, and keeps
//! answering everybody else.

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use common::{Daemon, stderr, stdout, submitted_id, tempdir};

/// 200 connections announce the largest request allowed and stall after
/// a few bytes, and 40 more try to send 8 MiB each without ever being
/// read to the end: allotd stays under 100 MB and answers `bjobs`.
#[test]
fn stalled_and_oversized_requests_keep_allotd_small_and_answering() {
    let dir = tempdir("hostile-stall");
    let d = Daemon::start(&dir.join("state"));
    let socket = d.state.join("allotd.sock");
    let before = d.rss_kb();
    let announce = |n: usize| -> UnixStream {
        let mut s = UnixStream::connect(&socket).expect("connect");
        s.write_all(&(allot_proto::MAX_FRAME as u32).to_be_bytes()).expect("length");
        s.write_all(&vec![b' '; n]).expect("some bytes");
        s
    };
    let stalled: Vec<UnixStream> = (0..200).map(|_| announce(1000)).collect();
    // Big senders: as much as allotd takes, then they stall too (a
    // thread each, blocked in its write until the stream is shut down).
    let big: Vec<UnixStream> = (0..40)
        .map(|_| {
            let s = announce(0);
            let mut writer = s.try_clone().expect("clone");
            std::thread::spawn(move || writer.write_all(&vec![b' '; 8 << 20]));
            s
        })
        .collect();
    std::thread::sleep(Duration::from_secs(2));
    let during = d.rss_kb();
    let asked = Instant::now();
    let out = d.cmd(&["bjobs", "-a"], &dir);
    let took = asked.elapsed();
    eprintln!("allotd: {before} KB idle, {during} KB with 240 stalled requests; bjobs answered in {took:?}");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(during < 100 * 1024, "allotd grew to {during} KB");
    let job = submitted_id(&d.cmd(&["bsub", "true"], &dir));
    d.wait_for(job, "DONE", &dir);
    for s in &big {
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
    drop((stalled, big));
}

/// A request whose length came but whose bytes stop coming is given up
/// after the frame timeout, with an answer that says so, and the
/// connection closed.
#[test]
fn a_partial_request_times_out_and_is_told_so() {
    let dir = tempdir("hostile-partial");
    let d = Daemon::start(&dir.join("state"));
    let mut s = UnixStream::connect(d.state.join("allotd.sock")).expect("connect");
    s.write_all(&100u32.to_be_bytes()).expect("length");
    s.write_all(b"{\"version\"").expect("a start");
    s.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    let started = Instant::now();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).expect("closed by allotd");
    assert!(started.elapsed() >= Duration::from_secs(9), "{:?}", started.elapsed());
    let text = String::from_utf8_lossy(&answer);
    assert!(text.contains("request of 100 bytes incomplete after 10 s"), "{text}");
}

/// `bsub -w` with 7,000 nested parentheses or 20,000 `!`, and `-R` with a
/// selection 20,000 deep: each is refused with where it went too deep,
/// and allotd goes on.
#[test]
fn deeply_nested_submissions_are_refused_and_allotd_goes_on() {
    let dir = tempdir("hostile-deep");
    let d = Daemon::start(&dir.join("state"));
    let parens = format!("{}done(1){}", "(".repeat(7_000), ")".repeat(7_000));
    let bangs = format!("{}done(1)", "!".repeat(20_000));
    let select = format!("select[{}mem>1{}]", "(".repeat(20_000), ")".repeat(20_000));
    for (option, value) in [("-w", &parens), ("-w", &bangs), ("-R", &select)] {
        let out = d.cmd(&["bsub", option, value, "true"], &dir);
        assert!(!out.status.success());
        let text = stderr(&out);
        assert!(text.contains("nests deeper than 100 levels") && text.ends_with("Job not submitted.\n"), "{text}");
    }
    let job = submitted_id(&d.cmd(&["bsub", "true"], &dir));
    d.wait_for(job, "DONE", &dir);
    assert!(stdout(&d.cmd(&["bjobs", "-a"], &dir)).contains("DONE"));
}

/// A slow disk stalls no reader: with each commit taking 1.5 s (a debug
/// build's test hook), a `bsub` waits for its commit, and a `bjobs` sent
/// after it is answered before it, from the state as it is.
#[test]
fn a_slow_commit_stalls_no_reader() {
    let dir = tempdir("hostile-slow-disk");
    let d = Daemon::start_env(&dir.join("state"), None, &[("ALLOT_TEST_COMMIT_DELAY_MS", "1500")]);
    let state = d.state.clone();
    let cwd = dir.to_path_buf();
    let submitter = std::thread::spawn(move || {
        let out = std::process::Command::new(common::allot())
            .args(["bsub", "-o", "/dev/null", "sleep", "30"])
            .env("ALLOT_STATE_DIR", &state)
            .current_dir(&cwd)
            .output()
            .expect("bsub");
        (Instant::now(), out)
    });
    std::thread::sleep(Duration::from_millis(300));
    let out = d.cmd(&["bjobs", "-a", "-u", "all"], &dir);
    let read_at = Instant::now();
    assert!(out.status.success(), "{}", stderr(&out));
    let (submitted_at, bsub) = submitter.join().expect("submitter");
    assert!(read_at < submitted_at, "bjobs waited for the commit");
    let job = submitted_id(&bsub);
    assert!(d.cmd(&["bkill", &job.to_string()], &dir).status.success());
}

/// A job whose name, project, command and directory hold escape sequences
/// and newlines: `bjobs`, `bjobs -l`, `bhist -l`, `bacct -l` and its
/// report show them escaped, so no terminal is driven and no line forged.
#[test]
fn a_jobs_text_reaches_no_terminal_raw() {
    let dir = tempdir("hostile-text");
    let cwd = dir.join("d\x1b[2J\nfake");
    std::fs::create_dir_all(&cwd).expect("a directory with a newline in its name");
    let d = Daemon::start(&dir.join("state"));
    let out = dir.join("out");
    let name = "evil\n999     root    RUN   normal\x1b]0;owned\x07";
    let args = ["bsub", "-J", name, "-P", "p\rq", "-o", out.to_str().expect("utf-8"), "echo hi; : '\x1b[31m'"];
    let id = submitted_id(&d.cmd(&args, &cwd));
    d.wait_for(id, "DONE", &dir);
    let raw = |text: &str| text.contains('\x1b') || text.contains('\r') || text.contains('\x07');
    for view in [vec!["bjobs", "-a", "-w"], vec!["bjobs", "-l"], vec!["bhist", "-l"], vec!["bacct", "-l"]] {
        let mut view = view;
        let job = id.to_string();
        view.push(&job);
        let text = stdout(&d.cmd(&view, &dir));
        assert!(!raw(&text), "{view:?}: {text:?}");
        assert!(!text.lines().any(|l| l.starts_with("999 ")), "{view:?} forged a line: {text}");
        assert!(!text.lines().any(|l| l.starts_with("fake")), "{view:?} forged a line: {text}");
        if view[0] == "bjobs" {
            assert!(text.contains("evil\\n999"), "{view:?}: the name, escaped: {text}");
        }
        if view[0] != "bjobs" || view[1] == "-l" {
            assert!(text.contains("d\\e[2J\\nfake"), "{view:?}: the directory, escaped: {text}");
        }
    }
    let report = std::fs::read_to_string(&out).expect("the report");
    assert!(!raw(&report), "{report:?}");
    assert!(report.contains("Subject: Job 1: <evil\\n999"), "{report}");
}

/// One user holds 300 connections open: 256 are held (the most one user
/// may), the rest answered with why and closed, and another user's
/// `bjobs` and `bsub` are answered at once meanwhile. As root (throwaway
/// users); the connections are made by perl's IO::Socket::UNIX (perl-base)
/// as that user, whose uid allotd sees by the peer credentials.
#[test]
fn one_user_holding_connections_open_stops_nobody_else() {
    use std::os::unix::fs::PermissionsExt;
    let mallory = common::Throwaway::new("one_user_holding_connections_open_stops_nobody_else", "cm");
    let alice = common::Throwaway::new("one_user_holding_connections_open_stops_nobody_else", "ca");
    let dir = tempdir("hostile-connections");
    let d = Daemon::start(&dir.join("state"));
    for p in [dir.to_path_buf(), d.state.clone()] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let hold = r#"
        use IO::Socket::UNIX; use IO::Select;
        my ($path, $n) = @ARGV; my @s;
        for (1..$n) { my $c = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path) or last; push @s, $c; }
        sleep 1;
        my $refused = 0;
        for my $c (IO::Select->new(@s)->can_read(1)) { my $b = ''; sysread($c, $b, 4096); $refused++ if $b =~ /the most one user may/; }
        print "opened ", scalar(@s), " refused $refused\n"; STDOUT->flush; sleep 30;
    "#;
    // One user's cap: 256, or a quarter of half the open-file limit
    // allotd raised itself to, when that is less.
    let nofile: u64 = d
        .log()
        .lines()
        .find_map(|l| l.strip_prefix("allotd: open files: up to "))
        .and_then(|n| n.trim().parse().ok())
        .expect("allotd says its open-file limit");
    let per_uid = 256.min((nofile / 2).clamp(256, 65_536) / 4);
    let (mut flood, said) = common::perl_as(&mallory, hold, &d.state.join("allotd.sock"), 300);
    assert_eq!(said, format!("opened 300 refused {}", 300 - per_uid), "{per_uid} held, the rest told why");
    let as_alice = |args: &[&str]| d.timed_as(&alice, args);
    let (listed, took) = as_alice(&["bjobs"]);
    assert!(listed.status.success() || stderr(&listed).contains("No unfinished job found"), "{}", stderr(&listed));
    assert!(took < Duration::from_secs(1), "alice's bjobs took {took:?}");
    let (submitted, took) = as_alice(&["bsub", "-H", "-o", "/dev/null", "true"]);
    assert!(stdout(&submitted).contains("is submitted"), "{}", stderr(&submitted));
    assert!(took < Duration::from_secs(1), "alice's bsub took {took:?}");
    let _ = flood.kill();
    let _ = flood.wait();
}

/// Lists nobody reads: 24 connections ask for every job (30,000, each
/// list some 10 MB) and never read. What allotd holds for them is bounded
/// (128 MiB of one user's unread answers): it grows by no more than
/// that, a further list of the same user is cut with why, and another
/// user's list comes whole.
#[test]
fn lists_nobody_reads_are_bounded() {
    use std::os::unix::process::CommandExt;
    let alice = common::Throwaway::new("lists_nobody_reads_are_bounded", "la");
    let dir = tempdir("hostile-unread");
    let d = Daemon::start(&dir.join("state"));
    for _ in 0..30 {
        submitted_id(&d.cmd(&["bsub", "-H", "-J", "many[1-1000]", "-o", "/dev/null", "true"], &dir));
    }
    let socket = d.state.join("allotd.sock");
    let before = d.rss_kb();
    let query = allot_proto::JobQuery { user: Some("all".into()), finished: true, ..Default::default() };
    let request = serde_json::to_vec(&allot_proto::Envelope {
        version: allot_proto::PROTOCOL_VERSION,
        body: allot_proto::Request::Jobs(query),
    })
    .expect("json");
    let unread: Vec<UnixStream> = (0..24)
        .map(|_| {
            let mut s = UnixStream::connect(&socket).expect("connect");
            s.write_all(&(request.len() as u32).to_be_bytes()).expect("length");
            s.write_all(&request).expect("request");
            s
        })
        .collect();
    // Once the lists asked are written (as fast as the dispatcher gets to
    // them), the user's next one is cut.
    common::eventually_within("the next list is cut", Duration::from_secs(90), || {
        stderr(&d.cmd(&["bjobs", "-u", "all", "-a"], &dir)).contains("this list is cut")
    });
    let during = d.rss_kb();
    eprintln!("allotd: {before} KB, {during} KB with 24 lists unread");
    assert!(during < before + 200 * 1024, "allotd grew from {before} to {during} KB");
    let theirs = std::process::Command::new(common::allot())
        .args(["bjobs", "-u", "all", "-a", "-w"])
        .env("ALLOT_STATE_DIR", &d.state)
        .current_dir("/")
        .uid(alice.uid)
        .gid(alice.gid)
        .output()
        .expect("bjobs");
    assert!(theirs.status.success(), "{}", stderr(&theirs));
    assert_eq!(stdout(&theirs).lines().count(), 30_001, "alice's list comes whole");
    drop(unread);
}

/// Submissions that would fill the state's disk: an environment of 3 MiB
/// and a command of 3 MiB, sent as any client may (bsub itself cannot:
/// no process starts with such an environment), are refused with why, and
/// the log does not grow by them.
#[test]
fn oversized_submissions_are_refused_and_not_logged() {
    let dir = tempdir("hostile-submission");
    let d = Daemon::start(&dir.join("state"));
    let socket = d.state.join("allotd.sock");
    let ask = |submit: allot_proto::Submit| -> String {
        let mut client = allot_proto::Client::connect(&socket).expect("connect");
        match client.call(allot_proto::Request::Submit(Box::new(submit))).expect("answered") {
            allot_proto::Response::Error(e) => e,
            other => panic!("accepted: {other:?}"),
        }
    };
    let base = allot_proto::Submit {
        submission: allot_proto::Submission { slots: 1, ..Default::default() },
        command: "true".into(),
        cwd: dir.to_string_lossy().into_owned(),
        ..Default::default()
    };
    let log = |d: &Daemon| {
        let size = |f: &str| std::fs::metadata(d.state.join(f)).map_or(0, |m| m.len());
        size("state.db") + size("state.db-wal")
    };
    let before = log(&d);
    let env = allot_proto::Submit { env: vec![("BIG".into(), "x".repeat(3 << 20))], ..base.clone() };
    let said = ask(env);
    assert!(said.contains("the job's environment is 3.0 MiB; at most 1 MiB is taken"), "{said}");
    let script = allot_proto::Submit { command: format!("# {}\ntrue", "x".repeat(3 << 20)), ..base };
    let said = ask(script);
    assert!(said.contains("the submission is 3.0 MiB") && said.contains("at most 2 MiB"), "{said}");
    assert!(log(&d) < before + (1 << 20), "the log took nothing of them");
    let job = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "true"], &dir));
    d.wait_for(job, "DONE", &dir);
}

/// `bhist -u all -a` of 30,000 jobs reads the log on a thread of its own:
/// meanwhile `bjobs` and `bsub` are answered at once (on the dispatcher
/// it was one query per job, and everyone waited).
#[test]
fn a_long_history_stalls_nobody() {
    let dir = tempdir("hostile-bhist");
    let d = Daemon::start(&dir.join("state"));
    for _ in 0..30 {
        submitted_id(&d.cmd(&["bsub", "-H", "-J", "many[1-1000]", "-o", "/dev/null", "true"], &dir));
    }
    let long = {
        let (state, dir) = (d.state.clone(), dir.to_path_buf());
        std::thread::spawn(move || {
            let began = Instant::now();
            let out = std::process::Command::new(common::allot())
                .args(["bhist", "-u", "all", "-a"])
                .env("ALLOT_STATE_DIR", state)
                .current_dir(dir)
                .output()
                .expect("bhist");
            (out, began.elapsed())
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    let mut slowest = Duration::ZERO;
    while !long.is_finished() {
        let asked = Instant::now();
        let out = d.cmd(&["bjobs", "-w", "1[1]"], &dir);
        slowest = slowest.max(asked.elapsed());
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let (out, took) = long.join().expect("bhist ran");
    assert!(out.status.success(), "{}", stderr(&out));
    eprintln!("bhist of 30,000 jobs took {took:?}; the slowest bjobs meanwhile {slowest:?}");
    assert_eq!(stdout(&out).lines().filter(|l| l.contains(" many[")).count(), 30_000, "every job");
    // On the dispatcher, every bjobs waited for the whole history.
    assert!(slowest < Duration::from_secs(1) && slowest < took / 2, "a bjobs waited {slowest:?} behind the history");
    let job = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "true"], &dir));
    d.wait_for(job, "DONE", &dir);
}

/// A `-w` expression is bounded in the jobs and names it holds (64) and
/// in the jobs its names match (10,000): past either it is refused, saying
/// which, and allotd goes on. Within them, the jobs a name matches are
/// kept, and logged, as runs of consecutive ids: 9,000 jobs in a few
/// bytes.
#[test]
fn a_dependency_on_too_many_jobs_is_refused() {
    let dir = tempdir("hostile-deps");
    let state = dir.join("state");
    let d = Daemon::start(&state);
    let one = submitted_id(&d.cmd(&["bsub", "-H", "-o", "/dev/null", "true"], &dir));
    for _ in 0..9 {
        submitted_id(&d.cmd(&["bsub", "-H", "-J", "big[1-1000]", "-o", "/dev/null", "true"], &dir));
    }
    let waits = submitted_id(&d.cmd(&["bsub", "-H", "-w", "done(big*)", "-o", "/dev/null", "true"], &dir));
    for _ in 0..2 {
        submitted_id(&d.cmd(&["bsub", "-H", "-J", "big[1-1000]", "-o", "/dev/null", "true"], &dir));
    }
    let store = allot_store::Store::open_read_only(&state.join("state.db")).expect("log");
    let mut depends = None;
    store
        .replay(|_, _, r| {
            if let allot_store::Record::Submitted { job, number, record, .. } = r {
                if number.unwrap_or(job.0) == waits {
                    depends = Some(serde_json::to_string(&record.spec.depends).expect("json"));
                }
            }
        })
        .expect("log read");
    let depends = depends.unwrap_or_else(|| panic!("no submission of job {waits} in the log"));
    assert!(depends.len() < 80, "9,000 jobs of one name logged as {} bytes: {depends:.200}", depends.len());
    assert!(depends.contains("[2,9001]"), "{depends}");
    let terms = vec![format!("done({one})"); 65].join(" && ");
    let out = d.cmd(&["bsub", "-w", &terms, "true"], &dir);
    assert!(stderr(&out).contains("-w: more than 64 jobs or names in one expression"), "{}", stderr(&out));
    let out = d.cmd(&["bsub", "-w", "done(big*)", "true"], &dir);
    assert!(stderr(&out).contains("-w: the expression names more than 10000 jobs"), "{}", stderr(&out));
    // Within the bounds: taken.
    submitted_id(&d.cmd(&["bsub", "-H", "-w", &vec![format!("done({one})"); 64].join(" && "), "true"], &dir));
    let job = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "true"], &dir));
    d.wait_for(job, "DONE", &dir);
}
