//! Acting as a job's owner.
//!
//! allotd runs as root at real sites, and everything a job names (its
//! output files, its working directory and the directories made for it)
//! is the owner's to choose: it is opened, made and entered with the
//! owner's credentials, never root's, so a job reaches exactly what its
//! owner could reach from a shell. The supervisor switches to the owner
//! around those steps ([`as_owner`]) and back (it still writes the job's
//! files in the state directory), and the job itself drops to the owner
//! for good before its command starts ([`Owner::become_in_child`]).
//!
//! Both switch the real and effective ids alike (the saved one stays root
//! while the supervisor needs it back), so `access(2)`, which checks the
//! real ids, answers for the owner too; and both take the owner's
//! supplementary groups, so a job reaches its group's files as a login of
//! its owner would.

use nix::unistd::{Gid, Uid, getgroups, setgroups, setresgid, setresuid};
use serde::{Deserialize, Serialize};

use crate::ExecError;

/// Whom a job runs as: its owner's uid, primary gid, and every group the
/// owner is in (`getgrouplist`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
}

impl Owner {
    /// The supplementary groups as the system calls take them (made before
    /// a fork, for [`Owner::become_in_child`]).
    pub(crate) fn gids(&self) -> Vec<Gid> {
        self.groups.iter().map(|&g| Gid::from_raw(g)).collect()
    }

    /// Becomes the owner for good: groups, then gid, then uid (each step
    /// needs the privilege the next one gives up). For a forked child
    /// about to run the job's command; `gids` is [`Owner::gids`], made
    /// before the fork.
    pub(crate) fn become_in_child(&self, gids: &[Gid]) -> nix::Result<()> {
        setgroups(gids)?;
        setresgid(Gid::from_raw(self.gid), Gid::from_raw(self.gid), Gid::from_raw(self.gid))?;
        setresuid(Uid::from_raw(self.uid), Uid::from_raw(self.uid), Uid::from_raw(self.uid))
    }
}

/// Whether this process may take other users' credentials.
pub fn is_root() -> bool {
    Uid::effective().is_root()
}

/// This process's own supplementary groups, read once: only `as_owner`
/// changes them, and it puts them back (reading them costs a file read
/// and two system calls, and a job's supervisor switches several times).
fn own_groups() -> nix::Result<Vec<Gid>> {
    static OWN: std::sync::OnceLock<Vec<Gid>> = std::sync::OnceLock::new();
    if let Some(g) = OWN.get() {
        return Ok(g.clone());
    }
    let groups = getgroups()?;
    Ok(OWN.get_or_init(|| groups).clone())
}

/// Reads this process's groups now, where it may switch to owners later
/// (the zygote, before it forks supervisors that inherit what it read).
pub(crate) fn warm() {
    if started_root() {
        let _ = own_groups();
    }
}

/// Whether this process runs as root, asked once: a process that switches
/// to an owner always switches back ([`as_owner`]), so its credentials out
/// of a switch are the ones it started with. The zygote asks it before it
/// forks the supervisors, which then need not. (Inside a switch, use
/// [`is_root`].)
pub(crate) fn started_root() -> bool {
    static ROOT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ROOT.get_or_init(is_root)
}

/// Runs `f` with `owner`'s credentials, then takes root's back. Without an
/// owner, or when this process is not root (it then runs as the job's
/// owner already), `f` runs as it is. A process that cannot take root's
/// credentials back must not go on: that is an error, and the caller ends.
///
/// The credentials are the whole process's: call it from a process with
/// one thread (a supervisor), never from allotd.
pub fn as_owner<T>(owner: Option<&Owner>, f: impl FnOnce() -> T) -> Result<T, ExecError> {
    let Some(owner) = owner.filter(|_| is_root()) else { return Ok(f()) };
    let fail = |what: &str, e: nix::Error| ExecError::Spec(format!("cannot {what}: {e}"));
    let saved = own_groups().map_err(|e| fail("read this process's groups", e))?;
    let (uid, gid) = (Uid::from_raw(owner.uid), Gid::from_raw(owner.gid));
    let root = (Uid::from_raw(0), Gid::from_raw(0));
    // Each step back as soon as a later one fails: never half switched.
    setgroups(&owner.gids()).map_err(|e| fail("take the owner's groups", e))?;
    if let Err(e) = setresgid(gid, gid, root.1) {
        let _ = setgroups(&saved);
        return Err(fail("take the owner's group", e));
    }
    if let Err(e) = setresuid(uid, uid, root.0) {
        let _ = setresgid(root.1, root.1, root.1);
        let _ = setgroups(&saved);
        return Err(fail("take the owner's user id", e));
    }
    let out = f();
    setresuid(root.0, root.0, root.0).map_err(|e| fail("take root's user id back", e))?;
    setresgid(root.1, root.1, root.1).map_err(|e| fail("take root's group back", e))?;
    setgroups(&saved).map_err(|e| fail("take root's groups back", e))?;
    Ok(out)
}
