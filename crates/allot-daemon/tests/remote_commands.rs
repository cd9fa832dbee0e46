//! The LSF commands on every host of a cluster: on a host with an agent,
//! `bsub`, `bjobs`, `bkill` reach allotd through the agent, which vouches
//! for the caller's uid; a job submits and waits on another from its
//! host; a login host takes no jobs (MXJ = 0) and still submits; nobody
//! acts on another's job through an agent, root on a host is root to
//! allotd only on an administrative host, and an agent that claims to be
//! another host carries nothing. As root (throwaway users; test hosts by
//! name).

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::agents::TestCluster;
use common::{Throwaway, eventually, lines_of, stderr, stdout, submitted_id, tempdir};

/// `allot ARGS` as if run on `host`: no allotd of the caller's reachable
/// (no `ALLOT_STATE_DIR`, a home with no state), so the command finds the
/// host's agent, as a job there would (`ALLOT_AGENT_SOCKET`); as `user`
/// when given, else as root; the LSF commands on its PATH.
fn on_host(c: &TestCluster, host: &str, user: Option<&Throwaway>, args: &[&str], cwd: &Path) -> Output {
    let mut cmd = Command::new(common::allot());
    cmd.args(args)
        .env_remove("ALLOT_STATE_DIR")
        .env("HOME", c.dir.join("nohome"))
        .env_remove("XDG_STATE_HOME")
        .env("ALLOT_AGENT_SOCKET", allot_agent::tasks::socket_path(&c.agent_state(host)))
        .env("PATH", format!("{}:/usr/bin:/bin", c.dir.join("bin").display()))
        .env("LSF_BINDIR", c.dir.join("bin"))
        .current_dir(cwd);
    if let Some(u) = user {
        cmd.uid(u.uid).gid(u.gid);
    }
    cmd.output().expect("allot runs")
}

/// A test cluster of three hosts with `edit` applied to its allot.toml,
/// every agent started and connected (host3 then shown as `host3_shown`);
/// the directories opened to other users.
fn cluster(dir: &Path, edit: impl Fn(String) -> String, host3_shown: &str) -> TestCluster {
    assert!(nix::unistd::Uid::effective().is_root(), "needs root, for throwaway users (CI runs as root)");
    assert!(
        !Path::new("/var/lib/allot/allotd.sock").exists(),
        "a root allotd runs on this machine: the commands would reach it instead of the test's agents"
    );
    let mut c = TestCluster::configured(dir, 3, (1, 30, 60), "");
    let toml = c.config.join("allot.toml");
    std::fs::write(&toml, edit(std::fs::read_to_string(&toml).expect("allot.toml"))).expect("allot.toml");
    c.start_daemon();
    for h in ["host1", "host2", "host3"] {
        c.start_agent(h);
    }
    c.wait_host("host1", "ok");
    c.wait_host("host2", "ok");
    c.wait_host("host3", host3_shown);
    let links = Command::new(common::allot()).arg("install-links").arg(dir.join("bin")).output().expect("runs");
    assert!(links.status.success(), "{}", stderr(&links));
    use std::os::unix::fs::PermissionsExt;
    for p in [dir.to_path_buf(), dir.join("agents"), dir.join("bin")] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    c
}

/// A directory every user may write (the jobs' working directory).
fn work_dir(dir: &Path) -> PathBuf {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    work
}

#[test]
fn a_user_on_another_host_submits_sees_and_kills_through_its_agent_and_nobody_else_may() {
    let dir = tempdir("remote-user");
    let c = cluster(&dir, |t| t, "ok");
    let alice = Throwaway::new("remote_user", "ra");
    let mallory = Throwaway::new("remote_user", "rm");
    let work = work_dir(&dir);

    let out = on_host(&c, "host2", Some(&alice), &["bsub", "-o", "/dev/null", "sleep 60"], &work);
    let id = submitted_id(&out);
    let id_text = id.to_string();
    eventually("alice sees her job run, from host2", || {
        let seen = stdout(&on_host(&c, "host2", Some(&alice), &["bjobs", "-w", &id_text], &work));
        seen.contains(&alice.name) && seen.contains(" RUN ")
    });
    let long = stdout(&on_host(&c, "host2", Some(&alice), &["bjobs", "-l", &id_text], &work));
    assert!(long.contains("Submitted from host <host2>"), "{long}");

    // An interactive job from another host: its output and exit come
    // back through the agents (bsub attaches to the job's terminal as
    // allotd relays it, through this host's agent).
    let ran = on_host(&c, "host2", Some(&alice), &["bsub", "-I", "echo hello from the job; exit 3"], &work);
    assert!(stdout(&ran).contains("hello from the job"), "{}{}", stdout(&ran), stderr(&ran));
    assert_eq!(ran.status.code(), Some(3), "{}{}", stdout(&ran), stderr(&ran));
    // What is typed reaches it the same way.
    let mut typed = Command::new(common::allot());
    typed
        .args(["bsub", "-I", "read line; echo the job read $line"])
        .env_remove("ALLOT_STATE_DIR")
        .env("HOME", c.dir.join("nohome"))
        .env("ALLOT_AGENT_SOCKET", allot_agent::tasks::socket_path(&c.agent_state("host2")))
        .current_dir(&work)
        .uid(alice.uid)
        .gid(alice.gid)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = typed.spawn().expect("bsub -I");
    {
        use std::io::Write;
        let mut input = child.stdin.take().expect("stdin");
        input.write_all(b"typed words\n").expect("typed");
    }
    let typed = child.wait_with_output().expect("bsub -I ends");
    assert!(stdout(&typed).contains("the job read typed words"), "{}{}", stdout(&typed), stderr(&typed));

    // Another user of host2 may not kill it through the agent.
    let tried = on_host(&c, "host2", Some(&mallory), &["bkill", &id_text], &work);
    assert!(!tried.status.success(), "{}", stdout(&tried));
    let said = format!("{}{}", stdout(&tried), stderr(&tried));
    assert!(said.contains("User permission denied") || said.contains("No matching job"), "{said}");
    let seen = stdout(&on_host(&c, "host3", Some(&alice), &["bjobs", "-w", &id_text], &work));
    assert!(seen.contains(" RUN "), "still running: {seen}");

    // Hers to kill, from any host.
    let killed = on_host(&c, "host3", Some(&alice), &["bkill", &id_text], &work);
    assert!(killed.status.success(), "{}{}", stdout(&killed), stderr(&killed));
    eventually("the job ends EXIT", || {
        stdout(&on_host(&c, "host2", Some(&alice), &["bjobs", "-a", "-w", &id_text], &work)).contains(" EXIT ")
    });
}

#[test]
fn root_of_a_host_is_root_to_allotd_only_on_an_administrative_host() {
    let dir = tempdir("remote-root");
    let c = cluster(&dir, |t| t.replacen("[cluster]\n", "[cluster]\nadmin_hosts = [\"host3\"]\n", 1), "ok");
    let work = work_dir(&dir);
    let refused = on_host(&c, "host2", None, &["bjobs", "-u", "all"], &work);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("root on host host2 is not an administrator of this cluster"),
        "{}",
        stderr(&refused)
    );
    let listed = on_host(&c, "host3", None, &["bjobs", "-u", "all"], &work);
    assert!(
        stdout(&listed).contains("No unfinished job found") || stderr(&listed).contains("No unfinished job found"),
        "{}{}",
        stdout(&listed),
        stderr(&listed)
    );
}

#[test]
fn a_job_submits_and_waits_on_another_from_its_host_and_a_login_host_takes_none() {
    let dir = tempdir("remote-job");
    // host3 is a login host: an agent, no job slots (MXJ = 0).
    let c = cluster(
        &dir,
        |t| t.replacen("name = \"host3\"\nncpus = 2\n", "name = \"host3\"\nncpus = 2\nmxj = 0\n", 1),
        "closed_Full",
    );
    let alice = Throwaway::new("remote_job", "rj");
    let work = work_dir(&dir);
    let out = work.join("out");
    // The job forgets the submitter's allotd: its bsub finds its host's agent.
    let script = "unset ALLOT_STATE_DIR; bsub -K -o /dev/null 'exit 3'; echo inner=$?; hostname";
    let args = ["bsub", "-n", "2", "-o", out.to_str().expect("utf-8"), script];
    submitted_id(&on_host(&c, "host3", Some(&alice), &args, &work));
    eventually("the first job ends", || lines_of(&out).iter().any(|l| l.starts_with("inner=")));
    let text = lines_of(&out);
    assert!(text.iter().any(|l| l.starts_with("Job <") && l.contains("is submitted")), "{text:?}");
    assert!(text.contains(&"inner=3".to_string()), "bsub -K gives the inner job's exit: {text:?}");
    assert!(!text.iter().any(|l| l.trim() == "host3"), "nothing runs on the login host: {text:?}");
    let all = stdout(&on_host(&c, "host3", Some(&alice), &["bjobs", "-a", "-w"], &work));
    assert!(all.lines().filter(|l| l.contains(&alice.name)).count() >= 2, "{all}");
    let exec_hosts: Vec<&str> = all.lines().filter_map(|l| l.split_whitespace().nth(5)).collect();
    assert!(!exec_hosts.iter().any(|h| h.contains("host3")), "{all}");
}

#[test]
fn an_agent_that_claims_another_host_carries_no_command() {
    let dir = tempdir("remote-forged");
    let mut c = cluster(&dir, |t| t, "ok");
    let alice = Throwaway::new("remote_forged", "rf");
    let work = work_dir(&dir);
    // host2's certificate, saying it is host3: refused at its hello, so
    // its users' commands reach nothing.
    c.kill9_agent("host2");
    let forged = c.spawn_agent("host2", "host3");
    c.agents.insert("host2".into(), forged);
    eventually("the forged agent is refused", || c.agent_log("host2").contains("refused"));
    let tried = on_host(&c, "host2", Some(&alice), &["bsub", "-o", "/dev/null", "true"], &work);
    assert!(!tried.status.success(), "{}", stdout(&tried));
    assert!(stderr(&tried).contains("allotd cannot be reached from host host3"), "{}", stderr(&tried));
}

/// Streams through an agent: `bjobs` of 20,000 jobs (arrays'
/// elements, one row each) comes whole, and `bpeek -f` on one host
/// follows a job on another until its end.
#[test]
fn streams_come_whole_through_an_agent() {
    let dir = tempdir("remote-streams");
    let c = cluster(&dir, |t| t, "ok");
    let alice = Throwaway::new("remote_streams", "rs");
    let work = work_dir(&dir);
    for _ in 0..20 {
        // MAX_JOB_ARRAY_SIZE is 1,000 by default.
        submitted_id(&on_host(&c, "host2", Some(&alice), &["bsub", "-H", "-J", "many[1-1000]", "true"], &work));
    }
    let rows = stdout(&on_host(&c, "host2", Some(&alice), &["bjobs", "-w"], &work));
    assert_eq!(rows.lines().filter(|l| l.contains("PSUSP")).count(), 20_000, "every element: {}", &rows[..500]);
    let script = "for i in 1 2 3 4 5 6; do echo line $i; sleep 0.5; done";
    let out = work.join("peeked");
    let args = ["bsub", "-m", "host3", "-o", out.to_str().expect("utf-8"), script];
    let id = submitted_id(&on_host(&c, "host2", Some(&alice), &args, &work));
    eventually("the job runs", || {
        stdout(&on_host(&c, "host2", Some(&alice), &["bjobs", &id.to_string()], &work)).contains(" RUN ")
    });
    let followed = on_host(&c, "host2", Some(&alice), &["bpeek", "-f", &id.to_string()], &work);
    let text = stdout(&followed);
    assert!(followed.status.success(), "{}", stderr(&followed));
    for i in 1..=6 {
        assert!(text.contains(&format!("line {i}\n")), "bpeek -f followed to the end: {text}");
    }
}

/// Lists nobody reads, through an agent: 24 connections to host2's agent
/// ask for 30,000 jobs each and never read. What the agent holds for them
/// is bounded (128 MiB of one user's unread answers): it grows by no more,
/// the user's next list is cut with why, and another user's comes whole.
#[test]
fn lists_nobody_reads_through_an_agent_are_bounded() {
    let dir = tempdir("remote-unread");
    let c = cluster(&dir, |t| t, "ok");
    let (mallory, alice) = (Throwaway::new("remote_unread", "um"), Throwaway::new("remote_unread", "ua"));
    let work = work_dir(&dir);
    for _ in 0..30 {
        submitted_id(&on_host(&c, "host1", Some(&mallory), &["bsub", "-H", "-J", "many[1-1000]", "true"], &work));
    }
    let request = serde_json::to_string(&allot_proto::Envelope {
        version: allot_proto::PROTOCOL_VERSION,
        body: allot_proto::Request::Jobs(allot_proto::JobQuery {
            user: Some("all".into()),
            finished: true,
            ..Default::default()
        }),
    })
    .expect("json");
    let ask = r#"
        use IO::Socket::UNIX; my ($path, $n) = @ARGV; my $req = REQUEST; my @s;
        for (1..$n) { my $c = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path) or last;
            print $c pack("N", length($req)) . $req; push @s, $c; }
        print "asked ", scalar(@s), "\n"; STDOUT->flush; sleep 60;
    "#;
    let pid = c.agent_pid("host2");
    let rss = || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    let before = rss();
    let socket = allot_agent::commands::socket_path(&c.agent_state("host2"));
    // The request as a perl string literal.
    let script = ask.replace("REQUEST", &format!("'{}'", request.replace('\'', "\\'")));
    let (mut flood, said) = common::perl_as(&mallory, &script, &socket, 24);
    assert_eq!(said, "asked 24");
    // Once the lists asked have come (as fast as allotd writes them), the
    // user's next one is cut.
    common::eventually_within("mallory's next list is cut", std::time::Duration::from_secs(90), || {
        let cut = on_host(&c, "host2", Some(&mallory), &["bjobs", "-u", "all", "-a"], &work);
        stderr(&cut).contains("this list is cut")
    });
    let during = rss();
    eprintln!("host2's agent: {before} KB, {during} KB with 24 lists unread");
    assert!(during < before + 200 * 1024, "the agent grew from {before} to {during} KB");
    let whole = on_host(&c, "host2", Some(&alice), &["bjobs", "-u", "all", "-a", "-w"], &work);
    assert!(whole.status.success(), "{}", stderr(&whole));
    assert_eq!(stdout(&whole).lines().count(), 30_001, "alice's list comes whole");
    let _ = flood.kill();
    let _ = flood.wait();
}
