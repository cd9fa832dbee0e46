//! How many connections a daemon's local socket holds at once, by the
//! connecting user (the kernel's peer credentials): at most `per_uid` of
//! one user and `total` in all, of which the last `headroom` are kept for
//! the privileged users (root, and the user the daemon runs as). One user
//! holding connections open cannot stop the daemon from accepting anybody
//! else's, nor an administrator from reaching it.
//!
//! allotd's socket ([`Caps::for_open_files`]): 256 per user, half the
//! open-file limit in all (256 to 65,536), an eighth kept; the agents
//! connect to it over TCP, counted apart, and jobs' files come from the
//! rest of the limit. An agent's sockets (`blaunch`'s and the commands'):
//! a quarter of their total per user. LSF's mbatchd bounds its query
//! connections likewise (`MAX_CONCURRENT_QUERY`), per daemon; ours are per
//! user as well.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// One user's connections at once.
pub const PER_UID: usize = 256;

pub struct Caps {
    per_uid: usize,
    total: usize,
    /// Connections kept for root and allotd's own user.
    headroom: usize,
    /// Who may use the headroom: root, and the user allotd runs as.
    privileged: [u32; 2],
    held: Arc<Tally>,
}

/// How much of something each user holds, and all users together
/// (connections here, bytes of unread answers in [`crate::answers`]).
#[derive(Default)]
pub struct Tally(Mutex<(BTreeMap<u32, usize>, usize)>);

/// `n` of a [`Tally`] held by `uid`; given back when dropped.
pub struct Taken {
    tally: Arc<Tally>,
    uid: u32,
    n: usize,
}

/// A connection counted; uncounted when dropped.
pub type Slot = Taken;

impl std::fmt::Debug for Taken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} held by uid {}", self.n, self.uid)
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        let mut held = self.tally.0.lock().unwrap_or_else(|p| p.into_inner());
        held.1 = held.1.saturating_sub(self.n);
        if let Some(mine) = held.0.get_mut(&self.uid) {
            *mine = mine.saturating_sub(self.n);
            if *mine == 0 {
                held.0.remove(&self.uid);
            }
        }
    }
}

impl Tally {
    /// `n` more for `uid`, if `allowed` says so from what `uid` holds and
    /// what all hold now (checked and taken at once).
    pub fn take(
        self: &Arc<Tally>,
        uid: u32,
        n: usize,
        allowed: impl FnOnce(usize, usize) -> Result<(), String>,
    ) -> Result<Taken, String> {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        allowed(held.0.get(&uid).copied().unwrap_or(0), held.1)?;
        held.1 += n;
        *held.0.entry(uid).or_default() += n;
        Ok(Taken { tally: self.clone(), uid, n })
    }

    /// What all users hold now.
    pub fn all(&self) -> usize {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).1
    }
}

impl Caps {
    /// allotd's: for an open-file limit of `nofile`, running as
    /// `daemon_uid`.
    pub fn for_open_files(nofile: u64, daemon_uid: u32) -> Arc<Caps> {
        let total = (nofile / 2).clamp(256, 65_536) as usize;
        Caps::new(total, PER_UID.min(total / 4), (total / 8).max(16), daemon_uid)
    }

    /// `total` connections, `per_uid` of one user, `headroom` of them
    /// kept for root and `daemon_uid`.
    pub fn new(total: usize, per_uid: usize, headroom: usize, daemon_uid: u32) -> Arc<Caps> {
        Arc::new(Caps {
            per_uid,
            total,
            headroom: headroom.min(total),
            privileged: [0, daemon_uid],
            held: Arc::default(),
        })
    }

    /// Counts a connection of `uid`, or says why it is refused.
    pub fn take(self: &Arc<Caps>, uid: u32) -> Result<Slot, String> {
        let privileged = self.privileged.contains(&uid);
        let room = if privileged { self.total } else { self.total - self.headroom };
        self.held.take(uid, 1, |mine, all| {
            if !privileged && mine >= self.per_uid {
                return Err(format!(
                    "uid {uid} holds {mine} connections, the most one user may: this one is refused (close some)"
                ));
            }
            if all >= room {
                return Err(format!("{all} connections are held, the most: this one is refused (try again)"));
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_user_is_capped_and_root_keeps_headroom() {
        let caps = Caps::for_open_files(1024, 0);
        assert_eq!((caps.total, caps.per_uid, caps.headroom), (512, 128, 64));
        let mine: Vec<Slot> = (0..128).map(|_| caps.take(1000).expect("under the cap")).collect();
        assert!(caps.take(1000).expect_err("over").contains("uid 1000 holds 128 connections"));
        // Others fill the rest but the headroom; root gets in still.
        let others: Vec<Slot> = (0..320).map(|k| caps.take(2000 + k / 100).expect("room")).collect();
        assert!(caps.take(5000).expect_err("full").contains("448 connections are held"));
        let root: Vec<Slot> = (0..64).map(|_| caps.take(0).expect("root's headroom")).collect();
        assert!(caps.take(0).is_err(), "the total holds for root too");
        drop(mine);
        assert!(caps.take(1000).is_ok(), "closed connections count no more");
        drop((others, root));
        assert_eq!(caps.held.all(), 0);
    }
}
