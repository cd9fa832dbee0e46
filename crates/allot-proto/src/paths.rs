//! Where allot keeps its state: `ALLOT_STATE_DIR` when set (so two
//! clusters, or a test's, live side by side); as root `/var/lib/allot`;
//! otherwise the user's state directory (`$XDG_STATE_HOME/allot`, or
//! `~/.local/state/allot`). The socket is `allotd.sock` in it.

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
        return PathBuf::from("/var/lib/allot");
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
