//! Where allot keeps its state: `ALLOT_STATE_DIR` when set (so two
//! clusters, or a test's, live side by side); as root `/var/lib/allot`;
//! otherwise the user's state directory (`$XDG_STATE_HOME/allot`, or
//! `~/.local/state/allot`). The socket is `allotd.sock` in it.
//!
//! The commands look for allotd the same way, but for one thing: a user
//! with no allotd of their own (nothing answers on their state
//! directory's socket) reaches the site's, on the system state directory,
//! with nothing to set ([`client_socket`]).

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
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    home.join(".local/state/allot")
}

pub fn socket(state: &Path) -> PathBuf {
    state.join("allotd.sock")
}

/// The system state directory: a root allotd's.
pub const SYSTEM_STATE_DIR: &str = "/var/lib/allot";

/// The sockets the commands try, in order: `ALLOT_STATE_DIR`'s alone when
/// set (and the system one alone as root); else the user's own, then the
/// site's (root's, in [`SYSTEM_STATE_DIR`]). The first that answers is
/// used ([`crate::Client::connect_first`]), and the error of none names
/// the user's own.
pub fn client_sockets() -> Vec<PathBuf> {
    let own = socket(&state_dir());
    if std::env::var_os("ALLOT_STATE_DIR").is_some() || is_root() {
        return vec![own];
    }
    vec![own, socket(Path::new(SYSTEM_STATE_DIR))]
}
