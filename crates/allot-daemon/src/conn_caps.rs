//! How many command connections allotd holds at once: at most
//! [`Caps::per_uid`] of one user (256), and [`Caps::total`] in all (half
//! the open-file limit, 256 to 65,536), of which the last eighth are kept
//! for root and allotd's own user: one user holding connections open
//! cannot stop allotd from accepting anybody else's, nor an administrator
//! from reaching it. The agents connect over TCP, counted apart (their
//! hosts are configured), and jobs' files come from the rest of the limit.
//! A connection over a cap is answered with why, and closed.
//!
//! LSF's mbatchd bounds its query connections likewise
//! (`MAX_CONCURRENT_QUERY`); its figures are per daemon, ours per user.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// One user's connections at once.
pub(crate) const PER_UID: usize = 256;

pub(crate) struct Caps {
    pub(crate) per_uid: usize,
    pub(crate) total: usize,
    /// Connections kept for root and allotd's own user.
    headroom: usize,
    /// Who may use the headroom: root, and the user allotd runs as.
    privileged: [u32; 2],
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    by_uid: BTreeMap<u32, usize>,
    all: usize,
}

/// A connection counted; uncounted when dropped.
pub(crate) struct Slot {
    caps: Arc<Caps>,
    uid: u32,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a connection of uid {}", self.uid)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.caps.held.lock().unwrap_or_else(|p| p.into_inner());
        held.all = held.all.saturating_sub(1);
        if let Some(n) = held.by_uid.get_mut(&self.uid) {
            *n -= 1;
            if *n == 0 {
                held.by_uid.remove(&self.uid);
            }
        }
    }
}

impl Caps {
    /// The caps for an open-file limit of `nofile`, allotd running as
    /// `daemon_uid`.
    pub(crate) fn new(nofile: u64, daemon_uid: u32) -> Arc<Caps> {
        let total = (nofile / 2).clamp(256, 65_536) as usize;
        Arc::new(Caps {
            per_uid: PER_UID.min(total / 4),
            total,
            headroom: (total / 8).max(16),
            privileged: [0, daemon_uid],
            held: Mutex::new(Held::default()),
        })
    }

    /// Counts a connection of `uid`, or says why it is refused.
    pub(crate) fn take(self: &Arc<Caps>, uid: u32) -> Result<Slot, String> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let privileged = self.privileged.contains(&uid);
        let mine = held.by_uid.get(&uid).copied().unwrap_or(0);
        if !privileged && mine >= self.per_uid {
            return Err(format!(
                "uid {uid} holds {mine} connections to allotd, the most one user may: this one is refused (close some)"
            ));
        }
        let room = if privileged { self.total } else { self.total - self.headroom };
        if held.all >= room {
            return Err(format!("allotd holds {} connections, its most: this one is refused (try again)", held.all));
        }
        held.all += 1;
        *held.by_uid.entry(uid).or_default() += 1;
        Ok(Slot { caps: self.clone(), uid })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_user_is_capped_and_root_keeps_headroom() {
        let caps = Caps::new(1024, 0);
        assert_eq!((caps.total, caps.per_uid, caps.headroom), (512, 128, 64));
        let mine: Vec<Slot> = (0..128).map(|_| caps.take(1000).expect("under the cap")).collect();
        assert!(caps.take(1000).expect_err("over").contains("uid 1000 holds 128 connections"));
        // Others fill the rest but the headroom; root gets in still.
        let others: Vec<Slot> = (0..320).map(|k| caps.take(2000 + k / 100).expect("room")).collect();
        assert!(caps.take(5000).expect_err("full").contains("allotd holds 448 connections"));
        let root: Vec<Slot> = (0..64).map(|_| caps.take(0).expect("root's headroom")).collect();
        assert!(caps.take(0).is_err(), "the total holds for root too");
        drop(mine);
        assert!(caps.take(1000).is_ok(), "closed connections count no more");
        drop((others, root));
        assert_eq!(caps.held.lock().expect("lock").all, 0);
    }
}
