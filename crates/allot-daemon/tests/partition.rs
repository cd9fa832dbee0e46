//! A silent network partition between allotd and one host's agent, then
//! healed: as root, that agent runs in a network namespace of its own,
//! joined to this machine by a veth pair on link-local addresses made for
//! the test; the partition is a blackhole route to allotd inside the
//! namespace (nothing is refused or reset: packets vanish).

mod common;

use std::process::Command;

use common::agents::TestCluster;
use common::{Daemon, alive, eventually, lines_of, stdout, submitted_id, tempdir};

/// A network namespace with a veth pair to this machine: the machine's
/// end 169.254.231.1, the namespace's 169.254.231.2. Removed on drop.
struct NetNs {
    name: String,
    veth: String,
}

fn ip(args: &[&str]) -> bool {
    Command::new("ip").args(args).output().is_ok_and(|o| o.status.success())
}

impl NetNs {
    fn new() -> Option<NetNs> {
        let id = std::process::id() % 100_000;
        let ns = NetNs { name: format!("allotpt{id}"), veth: format!("vap{id}") };
        let peer = format!("vbp{id}");
        let ok = ip(&["netns", "add", &ns.name])
            && ip(&["link", "add", &ns.veth, "type", "veth", "peer", "name", &peer])
            && ip(&["link", "set", &peer, "netns", &ns.name])
            && ip(&["addr", "add", "169.254.231.1/30", "dev", &ns.veth])
            && ip(&["link", "set", &ns.veth, "up"])
            && ip(&["netns", "exec", &ns.name, "ip", "addr", "add", "169.254.231.2/30", "dev", &peer])
            && ip(&["netns", "exec", &ns.name, "ip", "link", "set", &peer, "up"])
            && ip(&["netns", "exec", &ns.name, "ip", "link", "set", "lo", "up"]);
        ok.then_some(ns)
    }

    /// Packets to allotd vanish inside the namespace, or flow again.
    fn partition(&self, cut: bool) {
        let verb = if cut { "add" } else { "del" };
        assert!(
            ip(&["netns", "exec", &self.name, "ip", "route", verb, "blackhole", "169.254.231.1/32"]),
            "route {verb}"
        );
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        ip(&["link", "del", &self.veth]);
        ip(&["netns", "del", &self.name]);
    }
}

#[test]
fn a_silent_partition_makes_the_host_unreach_and_healed_it_goes_on_and_past_unavail_its_job_is_given_up_once() {
    common::needs_root("partition", "for a network namespace");
    let ns = NetNs::new().expect("a network namespace and its veth pair (`ip` from iproute2, which .ci/run installs)");
    let dir = tempdir("partition");
    let mut c = TestCluster::configured_at(&dir, 2, (1, 3, 10), "", "169.254.231.1");
    c.agent_prefix.insert("host1".into(), vec!["ip".into(), "netns".into(), "exec".into(), ns.name.clone()]);
    c.daemon = Some(Daemon::start_with(&dir.join("state"), Some(&c.config)));
    c.start_agent("host1");
    c.start_agent("host2");
    c.wait_host("host1", "ok");
    c.wait_host("host2", "ok");
    let d = c.daemon();
    let runs = dir.join("runs");
    let script = format!("echo $$ >> {0}; sleep 8; echo done >> {0}", runs.display());
    let id = submitted_id(&d.cmd(&["bsub", "-m", "host1", &script], &dir));
    eventually("the job runs on host1", || lines_of(&runs).len() == 1);

    // Cut shorter than unavail_after: unreach, the job runs on; healed,
    // the same connection carries on and the job's end comes through.
    ns.partition(true);
    c.wait_host("host1", "unreach");
    let waits = submitted_id(&d.cmd(&["bsub", "-m", "host1", "true"], &dir));
    ns.partition(false);
    c.wait_host("host1", "ok");
    d.wait_for(id, "DONE", &dir);
    d.wait_for(waits, "DONE", &dir);
    assert_eq!(lines_of(&runs).len(), 2, "ran once, to its end: {:?}", lines_of(&runs));

    // Cut past unavail_after: the job is given up; healed, its agent is
    // told to end it, and it is not run again.
    std::fs::remove_file(&runs).expect("removed");
    let script = format!("echo $$ >> {0}; exec sleep 60", runs.display());
    let id = submitted_id(&d.cmd(&["bsub", "-m", "host1", &script], &dir));
    eventually("the job runs on host1", || lines_of(&runs).len() == 1);
    let pid: i32 = lines_of(&runs)[0].parse().expect("pid");
    ns.partition(true);
    c.wait_host("host1", "unavail");
    d.wait_for(id, "EXIT", &dir);
    assert!(alive(pid), "cut off, nothing could end it yet");
    ns.partition(false);
    c.wait_host("host1", "ok");
    eventually("the agent ends the job allotd gave up", || !alive(pid));
    let long = stdout(&d.cmd(&["bjobs", "-l", &id.to_string()], &dir));
    assert!(long.contains("The job was lost: host host1 became unavailable"), "{long}");
    assert_eq!(lines_of(&runs).len(), 1, "not run again");
}
