//! allotd with an agent on each host: jobs run where they are placed,
//! through that host's agent; agents that fail, and strangers.

mod common;

use std::time::Duration;

use common::agents::TestCluster;
use common::{eventually, job_output, lines_of, stdout, submitted_id, tempdir};

#[test]
fn a_job_runs_on_the_host_it_is_placed_on_through_that_hosts_agent() {
    let dir = tempdir("cluster-place");
    let c = TestCluster::start(&dir, 3, (1, 5, 30));
    let d = c.daemon();
    // What the agents report: lshosts has the hosts' type and memory (the
    // configuration gave neither), lsload their load once they beat.
    let lshosts = stdout(&d.cmd(&["lshosts"], &dir));
    let arch = std::env::consts::ARCH.to_uppercase();
    for h in ["host1", "host2", "host3"] {
        let row = lshosts.lines().find(|l| l.starts_with(h)).unwrap_or_else(|| panic!("{lshosts}"));
        assert!(row.contains(&arch) && row.contains('G'), "{row}");
    }
    eventually("lsload shows each host's load", || {
        let lsload = stdout(&d.cmd(&["lsload"], &dir));
        lsload.lines().skip(1).filter(|l| l.contains(" ok ") && l.ends_with('G')).count() == 3
    });
    let out = dir.join("out.%J");
    let out = out.to_str().expect("utf-8");
    let id = submitted_id(&d.cmd(&["bsub", "-m", "host2", "-o", out, "echo $LSB_HOSTS; sleep 1"], &dir));
    eventually("the job is held by host2's agent alone", || c.held("host2") == [id]);
    assert!(c.held("host1").is_empty() && c.held("host3").is_empty());
    let shown = d.wait_for(id, "DONE", &dir);
    assert!(shown.contains("host2"), "{shown}");
    let ran = dir.join(format!("out.{id}"));
    assert_eq!(job_output(&ran).expect("a report after the output"), "host2\n");
    let report = std::fs::read_to_string(&ran).expect("output");
    assert!(report.contains("Job was executed on host(s) <host2>, in queue <normal>"), "{report}");
    // Its end acknowledged, the agent forgets it.
    eventually("host2's agent lets the job go", || c.held("host2").is_empty());

    // A job on hosts it spans runs on the first one; its LSB_* name them all.
    let id = submitted_id(&d.cmd(&["bsub", "-n", "5", "-o", out, "echo $LSB_MCPU_HOSTS"], &dir));
    d.wait_for(id, "DONE", &dir);
    assert_eq!(job_output(&dir.join(format!("out.{id}"))).expect("output"), "host1 2 host2 2 host3 1\n");

    // bpeek reads a job's output where it is: its default output is in
    // its host's agent's state directory, while it runs and after.
    let id = submitted_id(&d.cmd(&["bsub", "-m", "host3", "echo peekaboo; echo oops >&2; sleep 2"], &dir));
    eventually("bpeek shows the running job's output", || {
        stdout(&d.cmd(&["bpeek", &id.to_string()], &dir)).contains("peekaboo")
    });
    d.wait_for(id, "DONE", &dir);
    let peeked = stdout(&d.cmd(&["bpeek", &id.to_string()], &dir));
    assert!(peeked.contains("peekaboo") && peeked.contains("<< output from stderr >>\noops"), "{peeked}");

    // bkill reaches a job on its host.
    let id = submitted_id(&d.cmd(&["bsub", "-m", "host3", "sleep 60"], &dir));
    eventually("host3 runs it", || c.held("host3") == [id]);
    d.wait_for(id, "RUN", &dir);
    let killed = d.cmd(&["bkill", &id.to_string()], &dir);
    assert!(killed.status.success(), "{}", stdout(&killed));
    d.wait_for(id, "EXIT", &dir);
    eventually("host3's agent lets the killed job go", || c.held("host3").is_empty());
}

#[test]
fn an_agent_killed_and_restarted_takes_its_jobs_up_and_nothing_runs_twice() {
    let dir = tempdir("cluster-kill9");
    let mut c = TestCluster::start(&dir, 2, (1, 30, 60));
    let runs = dir.join("runs");
    let script = format!("echo started >> {0}; sleep 3; echo ended >> {0}", runs.display());
    let id = submitted_id(&c.daemon().cmd(&["bsub", "-m", "host1", &script], &dir));
    eventually("the job starts on host1", || lines_of(&runs) == ["started"]);
    c.kill9_agent("host1");
    c.wait_host("host1", "unreach");
    // The job goes on without its agent, and ends while the agent is away.
    eventually("the job ends without its agent", || lines_of(&runs) == ["started", "ended"]);
    c.daemon().wait_for(id, "UNKWN", &dir);
    c.start_agent("host1");
    // The restarted agent finds the end and reports it; allotd takes it once.
    let shown = c.daemon().wait_for(id, "DONE", &dir);
    assert!(shown.contains("host1"), "{shown}");
    eventually("the end is acknowledged", || c.held("host1").is_empty());
    assert_eq!(lines_of(&runs), ["started", "ended"], "the job ran once");
    c.wait_host("host1", "ok");

    // Killed while its job runs, restarted while it still runs: the job
    // is taken up, and its end comes through the new agent.
    std::fs::remove_file(&runs).expect("removed");
    let script = format!("echo started >> {0}; sleep 4; echo ended >> {0}", runs.display());
    let id = submitted_id(&c.daemon().cmd(&["bsub", "-m", "host1", &script], &dir));
    eventually("the job starts on host1", || lines_of(&runs) == ["started"]);
    c.kill9_agent("host1");
    c.start_agent("host1");
    c.wait_host("host1", "ok");
    assert!(c.agent_log("host1").contains("1 jobs taken up"), "{}", c.agent_log("host1"));
    c.daemon().wait_for(id, "DONE", &dir);
    assert_eq!(lines_of(&runs), ["started", "ended"], "the job ran once");
    let log = c.daemon().log();
    assert!(!log.contains("lost:"), "no job was lost: {log}");
}

#[test]
fn a_second_agent_claiming_a_connected_host_is_refused() {
    let dir = tempdir("cluster-second");
    let c = TestCluster::start(&dir, 2, (1, 30, 60));
    let mut second = c.spawn_agent("second", "host1");
    eventually("the second agent is refused", || {
        c.agent_log("second").contains("host host1 already has a connected agent")
    });
    assert_eq!(c.statuses()["host1"], "ok");
    // The first goes on: a job for host1 runs there.
    let id = submitted_id(&c.daemon().cmd(&["bsub", "-m", "host1", "true"], &dir));
    c.daemon().wait_for(id, "DONE", &dir);
    assert!(c.daemon().log().contains("host host1: a second agent refused"), "{}", c.daemon().log());
    let _ = second.kill();
    let _ = second.wait();
}

#[test]
fn a_certificate_must_name_the_host_and_a_stranger_is_closed_before_anything_is_read() {
    let dir = tempdir("cluster-strangers");
    let mut c = TestCluster::start(&dir, 2, (1, 30, 60));
    // host2's certificate, saying it is host1 (host1's agent not running).
    c.kill9_agent("host1");
    c.wait_host("host1", "unreach");
    let tls = dir.join("tls");
    std::fs::copy(tls.join("host2.pem"), tls.join("host1.pem")).expect("copied");
    std::fs::copy(tls.join("host2-key.pem"), tls.join("host1-key.pem")).expect("copied");
    c.start_agent("host1");
    eventually("the impostor is refused", || {
        c.agent_log("host1").contains("this certificate does not name host host1")
    });
    assert_eq!(c.statuses()["host1"], "unreach");

    // No TLS at all: a frame of garbage, then nothing comes back.
    use std::io::{Read, Write};
    let mut raw = std::net::TcpStream::connect(&c.listen).expect("connects");
    raw.set_read_timeout(Some(Duration::from_secs(15))).expect("timeout");
    let _ = raw.write_all(&[0, 0, 0, 8, b'{', b'}', 0, 0, 0, 0, 0, 0]);
    let mut buf = [0u8; 64];
    let n = raw.read(&mut buf).unwrap_or(0);
    // A TLS alert at most, never an answer of the protocol.
    assert!(n == 0 || buf[0] == 0x15, "{:?}", &buf[..n]);
    // A certificate of another CA: refused in the handshake.
    let other = dir.join("other");
    allot_agent::keygen::keygen(&other, &[], &["host1".to_string()]).expect("keygen");
    let mut c2 = c.clone_paths();
    c2.tls = other;
    let mut stranger = c2.spawn_agent("stranger", "host1");
    eventually("the stranger is turned away in the handshake", || {
        c.daemon().log().contains("agent connection from 127.0.0.1") && c.daemon().log().contains("refused")
    });
    let _ = stranger.kill();
    let _ = stranger.wait();
    // allotd goes on: host2 runs a job.
    let id = submitted_id(&c.daemon().cmd(&["bsub", "-m", "host2", "true"], &dir));
    c.daemon().wait_for(id, "DONE", &dir);
}

/// Speaks as `host`'s agent with its own certificate: says hello, takes
/// the welcome, then sends `junk`; returns whether allotd closed the
/// connection (within 10 s) rather than answering.
fn say_junk_as(c: &TestCluster, host: &str, junk: &[u8]) -> bool {
    use allot_agent::wire::{self, FromAgent, Hello, ToAgent, VERSION};
    use tokio::io::AsyncWriteExt;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let client = allot_agent::tls::client_config(&c.tls, host).expect("client");
        let tcp = tokio::net::TcpStream::connect(&c.listen).await.expect("connects");
        let connector = tokio_rustls::TlsConnector::from(client);
        let mut tls = connector.connect(allot_agent::tls::daemon_name(), tcp).await.expect("handshake");
        let hello = Hello {
            version: VERSION,
            host: host.to_string(),
            resources: Default::default(),
            jobs: Vec::new(),
            tasks: Vec::new(),
        };
        wire::write(&mut tls, &FromAgent::Hello(hello)).await.expect("hello");
        let welcome = wire::read::<ToAgent>(&mut tls).await.expect("an answer");
        assert!(matches!(welcome, ToAgent::Welcome { .. }), "{welcome:?}");
        tls.write_all(junk).await.expect("written");
        tls.flush().await.expect("flushed");
        let next = tokio::time::timeout(Duration::from_secs(10), wire::read::<ToAgent>(&mut tls)).await;
        matches!(next, Ok(Err(_)))
    })
}

#[test]
fn a_bad_frame_from_an_agent_closes_that_connection_only() {
    let dir = tempdir("cluster-bad-frame");
    let mut c = TestCluster::start(&dir, 2, (1, 30, 60));
    c.kill9_agent("host2");
    c.wait_host("host2", "unreach");
    // Malformed JSON, then a frame of 4 GiB announced: each closes its
    // own connection, nothing else.
    assert!(say_junk_as(&c, "host2", &[0, 0, 0, 3, b'{', b'x', b'}']), "malformed: closed");
    assert!(say_junk_as(&c, "host2", &[0xff, 0xff, 0xff, 0xff, 0]), "too large: closed");
    let id = submitted_id(&c.daemon().cmd(&["bsub", "-m", "host1", "true"], &dir));
    c.daemon().wait_for(id, "DONE", &dir);
    c.start_agent("host2");
    c.wait_host("host2", "ok");
    let id = submitted_id(&c.daemon().cmd(&["bsub", "-m", "host2", "true"], &dir));
    c.daemon().wait_for(id, "DONE", &dir);
}

#[test]
fn an_agent_takes_work_only_from_allotds_certificate() {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let dir = tempdir("cluster-fake-allotd");
    let c = TestCluster::configured(&dir, 2, (1, 30, 60), "");
    // A server with host2's certificate (of the site CA, but not allotd's),
    // where host1's agent is told allotd is.
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(c.tls.join("host2.pem")).expect("pem").collect::<Result<_, _>>().expect("certs");
    let key = PrivateKeyDer::from_pem_file(c.tls.join("host2-key.pem")).expect("key");
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("config");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let fake = listener.local_addr().expect("addr").to_string();
    let server = std::thread::spawn(move || {
        let (mut tcp, _) = listener.accept().expect("the agent connects");
        let mut conn = rustls::ServerConnection::new(std::sync::Arc::new(config)).expect("conn");
        tcp.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        // The handshake fails on the agent's side: it never sends a word.
        let mut tls = rustls::Stream::new(&mut conn, &mut tcp);
        let mut buf = [0u8; 16];
        std::io::Read::read(&mut tls, &mut buf).is_ok_and(|n| n > 0)
    });
    let mut fake_cluster = c.clone_paths();
    fake_cluster.listen = fake;
    let mut agent = fake_cluster.spawn_agent("host1", "host1");
    let heard_a_word = server.join().expect("server");
    assert!(!heard_a_word, "the agent said nothing to a server that is not allotd");
    eventually("the agent says why", || c.agent_log("host1").contains("cannot reach allotd"));
    let log = c.agent_log("host1");
    assert!(log.contains("certificate"), "{log}");
    let _ = agent.kill();
    let _ = agent.wait();
}

/// A user's job on an agent's host runs as that user, with their output
/// theirs; `bpeek` shows it to them and to nobody else.
#[test]
fn a_users_job_runs_as_them_on_an_agents_host() {
    let user = common::Throwaway::new("cluster-user", "cu");
    let other = common::Throwaway::new("cluster-user", "co");
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir("cluster-user");
    let c = TestCluster::start(&dir, 2, (1, 30, 60));
    let d = c.daemon();
    std::fs::set_permissions(&*dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let work = dir.join("work");
    std::fs::create_dir(&work).expect("work");
    std::os::unix::fs::chown(&work, Some(user.uid), Some(user.gid)).expect("chown");
    let id = submitted_id(&d.cmd_as(user.ids(), &["bsub", "-m", "host2", "id -un; sleep 1"], &work));
    d.wait_for(id, "DONE", &work);
    let peeked = d.cmd_as(user.ids(), &["bpeek", &id.to_string()], &work);
    assert!(stdout(&peeked).contains(&user.name), "{}", stdout(&peeked));
    let refused = d.cmd_as(other.ids(), &["bpeek", &id.to_string()], &work);
    assert!(!refused.status.success() && !stdout(&refused).contains(&user.name));
    // The default output on host2 is theirs, and private.
    let file = c.agent_state("host2").join("output").join(format!("{id}.out"));
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(&file).expect("output");
    assert_eq!((meta.uid(), meta.mode() & 0o777), (user.uid, 0o600));
}

/// A host whose configuration gives no CPUs (no `ncpus`, no MXJ) has the
/// CPUs its agent finds as job slots, as LSF detects `ncpus`, and keeps
/// them over a restart of allotd (they are in its log with the
/// configuration); a host given `ncpus` keeps its own.
#[test]
fn a_hosts_cpus_come_from_its_agent_when_its_configuration_gives_none() {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    assert!(n > 1, "needs a machine of more than one CPU, to tell what was found from the default of 1");
    let dir = tempdir("cluster-ncpus");
    let mut c = TestCluster::configured(&dir, 2, (1, 30, 60), "");
    let toml = c.config.join("allot.toml");
    let text = std::fs::read_to_string(&toml).expect("allot.toml");
    // host1 says nothing of its CPUs; host2 has 7 by its configuration.
    let text = text.replacen("name = \"host1\"\nncpus = 2\n", "name = \"host1\"\n", 1);
    let text = text.replacen("name = \"host2\"\nncpus = 2\n", "name = \"host2\"\nncpus = 7\n", 1);
    std::fs::write(&toml, text).expect("allot.toml");
    c.start_daemon();
    let max = |c: &TestCluster, host: &str| -> Option<u32> {
        let out = stdout(&c.daemon().cmd(&["bhosts", "-w", host], &c.dir));
        out.lines().nth(1)?.split_whitespace().nth(3)?.parse().ok()
    };
    assert_eq!(max(&c, "host1"), Some(1), "before its agent is heard: 1 slot");
    c.start_agent("host1");
    c.start_agent("host2");
    c.wait_host("host1", "ok");
    c.wait_host("host2", "ok");
    eventually("host1 has its agent's CPUs as slots", || max(&c, "host1") == Some(n));
    assert_eq!(max(&c, "host2"), Some(7), "its own ncpus");
    if let Some(d) = c.daemon.take() {
        d.kill9();
    }
    c.kill9_agent("host1");
    c.start_daemon();
    assert_eq!(max(&c, "host1"), Some(n), "kept over a restart, before its agent is back");
}
