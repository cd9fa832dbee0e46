//! The network of `allot start --test-hosts N` as root: each test host a
//! network namespace of its own (`allotS-hK`), joined by a veth pair
//! (`alSvK` on this machine's side) to a bridge (`allotbrS`) on this
//! machine, with its own address, 169.254.S.(K+1)/24; allotd listens on
//! the bridge's, 169.254.S.1. A partition of one host is then a real cut
//! (`ip link set alSvK down`), and MPI between hosts crosses a network.
//!
//! S is the first of 100..=199 that no interface's address and no
//! namespace of another test cluster uses, chosen under a lock so that
//! two clusters started at once do not take the same one. It is written
//! to `test-hosts/net` with the hosts' count, for `allot stop`.
//!
//! Made with iproute2's `ip`, as a site's administrator would; without
//! root or without `ip`, the test hosts share this machine's network
//! (each on its own loopback address), as before.

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

/// A test cluster's network: subnet 169.254.`subnet`.0/24 and its hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TestNet {
    pub subnet: u8,
    pub hosts: u32,
}

impl TestNet {
    /// allotd's address on the bridge.
    pub fn server(&self) -> Ipv4Addr {
        Ipv4Addr::new(169, 254, self.subnet, 1)
    }

    /// Test host `k`'s (1-based) address.
    pub fn host(&self, k: u32) -> Ipv4Addr {
        Ipv4Addr::new(169, 254, self.subnet, (k + 1) as u8)
    }

    /// Test host `k`'s network namespace (in /run/netns).
    pub fn namespace(&self, k: u32) -> String {
        format!("allot{}-h{k}", self.subnet)
    }

    fn bridge(&self) -> String {
        format!("allotbr{}", self.subnet)
    }

    /// This machine's end of host `k`'s veth pair.
    pub fn veth(&self, k: u32) -> String {
        format!("al{}v{k}", self.subnet)
    }

    fn record(dir: &Path) -> std::path::PathBuf {
        dir.join("net")
    }
}

/// Whether test hosts get namespaces: as root, with `ip` on the PATH.
pub fn available() -> bool {
    nix::unistd::Uid::effective().is_root() && Command::new("ip").arg("-V").output().is_ok_and(|o| o.status.success())
}

fn ip(args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("ip").args(args).output().context("cannot run `ip`")?;
    if !out.status.success() {
        bail!("`ip {}`: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

/// The subnets that interfaces and test namespaces use now.
fn used_subnets() -> anyhow::Result<Vec<u8>> {
    let out = Command::new("ip").args(["-o", "-4", "addr", "show"]).output().context("cannot run `ip`")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut used: Vec<u8> = text
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("169.254."))
        .filter_map(|rest| rest.split('.').next()?.parse().ok())
        .collect();
    if let Ok(entries) = std::fs::read_dir("/run/netns") {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(s) = name.strip_prefix("allot").and_then(|r| r.split('-').next()?.parse().ok()) {
                used.push(s);
            }
        }
    }
    Ok(used)
}

/// Makes the bridge, one namespace per host and their links; records
/// them in `dir` for [`tear_down`]. Half-made, it undoes what it made.
pub fn set_up(dir: &Path, hosts: u32) -> anyhow::Result<TestNet> {
    let file = std::fs::File::create("/run/allot-test-net.lock").context("cannot create /run/allot-test-net.lock")?;
    let _lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| anyhow::anyhow!("cannot lock /run/allot-test-net.lock: {e}"))?;
    let used = used_subnets()?;
    let Some(subnet) = (100..=199).find(|s| !used.contains(s)) else {
        bail!("--test-hosts: every subnet 169.254.100-199.0/24 is in use (`allot stop` the other test clusters)");
    };
    let net = TestNet { subnet, hosts };
    std::fs::write(TestNet::record(dir), format!("{subnet} {hosts}\n"))?;
    if let Err(e) = make(&net) {
        tear_down(dir);
        return Err(e);
    }
    Ok(net)
}

fn make(net: &TestNet) -> anyhow::Result<()> {
    let bridge = net.bridge();
    ip(&["link", "add", &bridge, "type", "bridge"])?;
    ip(&["addr", "add", &format!("{}/24", net.server()), "dev", &bridge])?;
    ip(&["link", "set", &bridge, "up"])?;
    for k in 1..=net.hosts {
        let (ns, veth, peer) = (net.namespace(k), net.veth(k), format!("al{}p{k}", net.subnet));
        ip(&["netns", "add", &ns])?;
        ip(&["link", "add", &veth, "type", "veth", "peer", "name", &peer])?;
        ip(&["link", "set", &peer, "netns", &ns])?;
        ip(&["link", "set", &veth, "master", &bridge, "up"])?;
        ip(&["-n", &ns, "addr", "add", &format!("{}/24", net.host(k)), "dev", &peer])?;
        ip(&["-n", &ns, "link", "set", &peer, "up"])?;
        ip(&["-n", &ns, "link", "set", "lo", "up"])?;
    }
    Ok(())
}

/// The network recorded in `dir`, if a test cluster made one.
pub fn recorded(dir: &Path) -> Option<TestNet> {
    let text = std::fs::read_to_string(TestNet::record(dir)).ok()?;
    let mut words = text.split_whitespace();
    Some(TestNet { subnet: words.next()?.parse().ok()?, hosts: words.next()?.parse().ok()? })
}

/// Removes the namespaces (their veth pairs go with them) and the bridge
/// recorded in `dir`. What is not there is passed over.
pub fn tear_down(dir: &Path) {
    let Some(net) = recorded(dir) else { return };
    for k in 1..=net.hosts {
        let _ = ip(&["netns", "del", &net.namespace(k)]);
    }
    let _ = ip(&["link", "del", &net.bridge()]);
    let _ = std::fs::remove_file(TestNet::record(dir));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_net_names_its_parts_by_its_subnet_and_reads_back_as_written() {
        let net = TestNet { subnet: 123, hosts: 3 };
        assert_eq!(net.server(), Ipv4Addr::new(169, 254, 123, 1));
        assert_eq!(net.host(3), Ipv4Addr::new(169, 254, 123, 4));
        assert_eq!(net.namespace(2), "allot123-h2");
        // Interface names have at most 15 bytes, for 200 hosts too.
        assert!(TestNet { subnet: 199, hosts: 200 }.veth(200).len() <= 15);
        assert!(TestNet { subnet: 199, hosts: 200 }.bridge().len() <= 15);
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("net"), "123 3\n").expect("written");
        assert_eq!(recorded(dir.path()), Some(net));
    }
}
