//! What a daemon holds of answers not yet read: a long job list is
//! written by allotd's dispatcher at once, frame by frame, and each
//! connection sends its frames as its command reads them (an agent
//! carrying a command from its host likewise). A command that asks and
//! never reads would have the daemon hold its whole list; so every frame
//! held counts against its user's share ([`PER_UID`], 128 MiB: three lists
//! of 100,000 jobs) and against all users' ([`TOTAL`], 512 MiB) until it is
//! written out. A list that would go past either is cut with an error
//! saying so (the command says it; asked again once the others are read,
//! it comes whole), and a connection whose reader takes nothing for a
//! while (30 s) is closed, its frames freed.

use std::sync::Arc;

use crate::caps::{Taken, Tally};

/// One user's unread answers, bytes.
pub const PER_UID: usize = 128 << 20;
/// Every user's, bytes.
pub const TOTAL: usize = 512 << 20;

/// The bytes of unread answers, by user and in all.
#[derive(Default)]
pub struct Budget(Arc<Tally>);

/// A frame's bytes, counted until it is dropped (written out, or its
/// connection gone).
pub type Held = Taken;

impl Budget {
    pub fn new() -> Arc<Budget> {
        Arc::new(Budget::default())
    }

    /// Counts `bytes` of an answer to `uid`, or says why they may not be
    /// held.
    pub fn take(&self, uid: u32, bytes: usize) -> Result<Held, String> {
        self.take_within(uid, bytes, (PER_UID, TOTAL))
    }

    fn take_within(&self, uid: u32, bytes: usize, (per_uid, total): (usize, usize)) -> Result<Held, String> {
        self.0.take(uid, bytes, |mine, all| {
            if mine + bytes > per_uid {
                return Err(format!(
                    "uid {uid} has {} MiB of answers allotd sent and nobody read yet: this list is cut (read the \
                     others, then ask again)",
                    mine >> 20
                ));
            }
            if all + bytes > total {
                return Err(format!(
                    "allotd holds {} MiB of answers nobody read yet: this list is cut (ask again)",
                    all >> 20
                ));
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unread_answers_are_bounded_per_user_and_in_all() {
        let budget = Budget::new();
        let limits = (100, 250);
        let a: Vec<Held> = (0..10).map(|_| budget.take_within(1, 10, limits).expect("under")).collect();
        assert!(budget.take_within(1, 1, limits).expect_err("over").contains("uid 1 has"));
        let b: Vec<Held> = (0..10).map(|_| budget.take_within(2, 10, limits).expect("its own")).collect();
        let c = budget.take_within(3, 50, limits).expect("room left");
        assert!(budget.take_within(4, 1, limits).expect_err("full").contains("allotd holds"));
        drop((a, c));
        assert!(budget.take_within(4, 100, limits).is_ok(), "read, they count no more");
        drop(b);
    }
}
