//! Who a job's owner is: their uid, groups and home, from the password and
//! group databases, looked up at each launch. A lookup reads both files
//! (or asks the directory service), which a busy allotd would do a
//! thousand times a second for the same few users; so an answer is kept
//! while `/etc/passwd` and `/etc/group` are unchanged, and for a minute at
//! most (a directory service changes no file). A user deleted from the
//! files is gone at the next launch; one removed from a directory service,
//! within a minute. A user not found is never kept: one added is found at
//! once.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

use allot_exec::Owner;

/// How long an answer is kept at most.
const KEEP: Duration = Duration::from_secs(60);

/// A job owner's account, as a launch needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub owner: Owner,
    pub home: String,
}

#[derive(Default)]
pub struct Accounts {
    kept: BTreeMap<String, (Account, Instant)>,
    /// The files' modification times when `kept` was filled.
    files: Option<(SystemTime, SystemTime)>,
}

fn modified(path: &str) -> SystemTime {
    std::fs::metadata(path).and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH)
}

impl Accounts {
    /// `user`'s account, or `None` when there is no such user.
    pub fn lookup(&mut self, user: &str) -> Option<Account> {
        let files = (modified("/etc/passwd"), modified("/etc/group"));
        if self.files != Some(files) {
            self.kept.clear();
            self.files = Some(files);
        }
        if let Some((account, at)) = self.kept.get(user) {
            if at.elapsed() < KEEP {
                return Some(account.clone());
            }
        }
        let u = nix::unistd::User::from_name(user).ok().flatten()?;
        let name = std::ffi::CString::new(user).ok()?;
        let groups = nix::unistd::getgrouplist(&name, u.gid).unwrap_or_else(|_| vec![u.gid]);
        let account = Account {
            owner: Owner {
                uid: u.uid.as_raw(),
                gid: u.gid.as_raw(),
                groups: groups.into_iter().map(nix::unistd::Gid::as_raw).collect(),
            },
            home: u.dir.display().to_string(),
        };
        self.kept.insert(user.to_string(), (account.clone(), Instant::now()));
        Some(account)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_is_found_kept_and_never_invented() {
        let mut accounts = Accounts::default();
        let me = nix::unistd::User::from_uid(nix::unistd::Uid::effective()).ok().flatten().expect("an account");
        let found = accounts.lookup(&me.name).expect("found");
        assert_eq!((found.owner.uid, found.owner.gid), (me.uid.as_raw(), me.gid.as_raw()));
        assert!(found.owner.groups.contains(&me.gid.as_raw()), "the primary group is among the groups");
        assert_eq!(found.home, me.dir.display().to_string());
        assert_eq!(accounts.lookup(&me.name), Some(found), "kept");
        assert_eq!(accounts.lookup("no-such-user-anywhere-x"), None);
        assert!(!accounts.kept.contains_key("no-such-user-anywhere-x"), "a user not found is not kept");
    }
}
