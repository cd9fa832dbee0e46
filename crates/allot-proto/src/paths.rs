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

/// The socket the commands call: `ALLOT_STATE_DIR`'s when set; else the
/// user's own allotd's when one answers there; else the site's (root's,
/// in [`SYSTEM_STATE_DIR`]) when there is one; else the user's own (and
/// the error then names where it looked).
pub fn client_socket() -> PathBuf {
    let own = socket(&state_dir());
    if std::env::var_os("ALLOT_STATE_DIR").is_some() || is_root() {
        return own;
    }
    let system = socket(Path::new(SYSTEM_STATE_DIR));
    choose_socket(own, system, |p| std::os::unix::net::UnixStream::connect(p).is_ok())
}

/// The user's own socket if something answers on it, else the system's if
/// something does, else the user's own.
pub fn choose_socket(own: PathBuf, system: PathBuf, answers: impl Fn(&Path) -> bool) -> PathBuf {
    if answers(&own) || !answers(&system) { own } else { system }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_without_an_allotd_of_their_own_reaches_the_sites() {
        let (own, system) =
            (PathBuf::from("/home/u/.local/state/allot/allotd.sock"), PathBuf::from("/var/lib/allot/allotd.sock"));
        let answering = |up: &'static [&'static str]| move |p: &Path| up.iter().any(|u| p == Path::new(u));
        assert_eq!(choose_socket(own.clone(), system.clone(), answering(&["/var/lib/allot/allotd.sock"])), system);
        let both = answering(&["/var/lib/allot/allotd.sock", "/home/u/.local/state/allot/allotd.sock"]);
        assert_eq!(choose_socket(own.clone(), system.clone(), both), own, "their own first");
        assert_eq!(
            choose_socket(own.clone(), system.clone(), answering(&[])),
            own,
            "none: their own, named in the error"
        );
    }
}
