//! A test host's own names (`allot start --test-hosts N` as root): the
//! agent enters a UTS namespace of its own named after its host, so that
//! `hostname` in its jobs and tasks (and MPI's processor name) names the
//! host they run on, and a mount namespace of its own where `/etc/hosts`
//! is the test cluster's (each test host's name on its loopback address),
//! so the hosts' names resolve in every job. Everything the agent starts
//! from then on is inside both. Given a network namespace (made by
//! `allot start --test-hosts` with `ip netns add`), it enters that first,
//! so that the host has a network of its own.

/// Becomes test host `name`, with `hosts_file` as `/etc/hosts`, in
/// network namespace `netns` (a name in /run/netns) if given. Needs
/// root; call it before any thread starts.
#[cfg(feature = "runtime")]
pub fn become_test_host(name: &str, hosts_file: &std::path::Path, netns: Option<&str>) -> Result<(), String> {
    use nix::mount::{MsFlags, mount};
    use nix::sched::{CloneFlags, setns, unshare};
    if let Some(ns) = netns {
        let path = std::path::Path::new("/run/netns").join(ns);
        let file = std::fs::File::open(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        setns(&file, CloneFlags::CLONE_NEWNET).map_err(|e| format!("cannot enter {}: {e}", path.display()))?;
    }
    unshare(CloneFlags::CLONE_NEWUTS | CloneFlags::CLONE_NEWNS)
        .map_err(|e| format!("cannot enter namespaces of its own (as root only): {e}"))?;
    nix::unistd::sethostname(name).map_err(|e| format!("cannot name this test host {name}: {e}"))?;
    // Mounts made here stay here.
    mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>)
        .map_err(|e| format!("cannot make its mounts private: {e}"))?;
    mount(Some(hosts_file), "/etc/hosts", None::<&str>, MsFlags::MS_BIND, None::<&str>)
        .map_err(|e| format!("cannot put {} over /etc/hosts: {e}", hosts_file.display()))?;
    Ok(())
}

/// The test cluster's `/etc/hosts`: this machine's, then `hostK` on
/// `address(K)` for each of `n` hosts.
pub fn hosts_file_text(n: u32, address: impl Fn(u32) -> std::net::IpAddr) -> String {
    let mut text = std::fs::read_to_string("/etc/hosts").unwrap_or_else(|_| "127.0.0.1 localhost\n".into());
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# allot start --test-hosts\n");
    for k in 1..=n {
        text.push_str(&format!("{} host{k}\n", address(k)));
    }
    text
}

/// Test host `k`'s address when test hosts share this machine's network:
/// 127.0.0.(K+1), a loopback address of its own.
pub fn loopback(k: u32) -> std::net::IpAddr {
    std::net::Ipv4Addr::new(127, 0, 0, (k + 1) as u8).into()
}
