//! Where allot keeps its state: `ALLOT_STATE_DIR` when set (so two
//! clusters, or a test's, live side by side); as root `/var/lib/allot`;
//! otherwise the user's state directory (`$XDG_STATE_HOME/allot`, or
//! `~/.local/state/allot`). The socket is `allotd.sock` in it.
//!
//! The commands look for allotd the same way, but for two things: a user
//! with no allotd of their own (nothing answers on their state
//! directory's socket) reaches the site's, on the system state directory,
//! with nothing to set; and on a host of the cluster where allotd does not
//! run, they reach it through the host's agent, on its `commands.sock`
//! (the agent of a job's host, from the job's `ALLOT_AGENT_SOCKET`; else a
//! root agent's, in [`SYSTEM_AGENT_DIR`]) ([`client_sockets`]).
//!
//! A user's own directory is never one another user can make: without
//! `HOME`, it is under the home of the user's passwd entry (never `/tmp`,
//! where anyone could plant a daemon), and a command talks only to a
//! daemon that runs as its user or as root ([`crate::Client::connect`]).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Whether this process runs as root: `/proc/self` belongs to the
/// process's effective user.
pub fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

pub fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ALLOT_STATE_DIR") {
        return PathBuf::from(dir);
    }
    if is_root() {
        return PathBuf::from(SYSTEM_STATE_DIR);
    }
    if let Some(xdg) = std::env::var_os("XDG_STATE_HOME") {
        return PathBuf::from(xdg).join("allot");
    }
    match std::env::var_os("HOME").map(PathBuf::from).or_else(passwd_home) {
        Some(home) => home.join(".local/state/allot"),
        // No home at all: no state of one's own; the site's allotd.
        None => PathBuf::from(SYSTEM_STATE_DIR),
    }
}

/// The home directory of this process's user, by the password database.
fn passwd_home() -> Option<PathBuf> {
    nix::unistd::User::from_uid(nix::unistd::geteuid()).ok().flatten().map(|u| u.dir)
}

/// The lock allotd holds on its state directory while it runs (see
/// allotd's `state_lock`): `allot stop` waits for it to be let go.
pub fn state_lock(state: &Path) -> PathBuf {
    state.join("allotd.lock")
}

pub fn socket(state: &Path) -> PathBuf {
    state.join("allotd.sock")
}

/// The system state directory: a root allotd's.
pub const SYSTEM_STATE_DIR: &str = "/var/lib/allot";

/// A root agent's state directory, where its `commands.sock` is.
pub const SYSTEM_AGENT_DIR: &str = "/var/lib/allot-agent";

/// The sockets the commands try, in order: `ALLOT_STATE_DIR`'s alone when
/// set; else the user's own (the system one, as root), then the site's
/// (root's, in [`SYSTEM_STATE_DIR`]), then this host's agent's: the one a
/// job's `ALLOT_AGENT_SOCKET` names the directory of, and a root agent's.
/// The first that answers is used ([`crate::Client::connect_first`]), and
/// the error of none names the first.
pub fn client_sockets() -> Vec<PathBuf> {
    let own = socket(&state_dir());
    if std::env::var_os("ALLOT_STATE_DIR").is_some() {
        return vec![own];
    }
    let mut sockets = vec![own];
    if !is_root() {
        sockets.push(socket(Path::new(SYSTEM_STATE_DIR)));
    }
    if let Some(dir) =
        std::env::var_os("ALLOT_AGENT_SOCKET").map(PathBuf::from).and_then(|s| s.parent().map(Path::to_path_buf))
    {
        sockets.push(agent_socket(&dir));
    }
    sockets.push(agent_socket(Path::new(SYSTEM_AGENT_DIR)));
    sockets
}

/// Where the agent whose state directory is `dir` takes commands.
pub fn agent_socket(dir: &Path) -> PathBuf {
    dir.join("commands.sock")
}
