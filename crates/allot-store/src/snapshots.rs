//! Snapshots of the state beside the log: what a restart takes up instead
//! of the records before them. A snapshot is the state after the records up
//! to its `seq` were applied, written in a transaction of its own once they
//! are committed, so it is never ahead of the log; one lost (a crash
//! before it, a full disk) leaves the one before, and the records after
//! it are replayed. Only the latest is kept. Its body is the daemon's to write and read (this
//! crate knows its bytes only); `format` says which daemon can read it, and
//! one that cannot replays the whole log instead, as before snapshots.

use allot_engine::Time;
use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError};

/// The table, made when a log is opened; a log without it (written before
/// snapshots) gets it then, and an older allot opening a log with it reads
/// its events as before.
pub(crate) const SNAPSHOTS_TABLE: &str = "CREATE TABLE IF NOT EXISTS snapshots (
    seq INTEGER PRIMARY KEY,
    time INTEGER NOT NULL,
    format INTEGER NOT NULL,
    body BLOB NOT NULL)";

/// The last record's number: numbers go on from it, archived or not (an
/// emptied log would otherwise number from 1 again).
pub(crate) const LAST_SEQ: &str = "SELECT MAX(COALESCE((SELECT MAX(seq) FROM events), 0), \
                        COALESCE((SELECT value FROM meta WHERE key = 'archived_through'), 0))";

/// A snapshot to write, or as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The last record it includes (0: none).
    pub seq: i64,
    /// The time of the state it is.
    pub time: Time,
    /// How its body is written (the daemon's version of it).
    pub format: i64,
    pub body: Vec<u8>,
}

impl Store {
    /// The last record's number, archived or not (0: none).
    pub fn last_seq(&self) -> Result<i64, StoreError> {
        Ok(self.conn.query_row(LAST_SEQ, [], |r| r.get(0))?)
    }

    /// Snapshot `s`, at record `seq`, in place of the earlier ones.
    pub fn write_snapshot(&mut self, seq: i64, s: &Snapshot) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT OR REPLACE INTO snapshots (seq, time, format, body) VALUES (?1, ?2, ?3, ?4)",
            params![seq, s.time.0 as i64, s.format, s.body],
        )?;
        tx.execute("DELETE FROM snapshots WHERE seq <> ?1", params![seq])?;
        tx.commit()?;
        Ok(())
    }

    /// The latest snapshot, if there is one.
    pub fn last_snapshot(&self) -> Result<Option<Snapshot>, StoreError> {
        // A log written before snapshots, opened read-only, has no table.
        let table: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'snapshots'",
            [],
            |r| r.get(0),
        )?;
        if table == 0 {
            return Ok(None);
        }
        let found = self
            .conn
            .query_row("SELECT seq, time, format, body FROM snapshots ORDER BY seq DESC LIMIT 1", [], |r| {
                Ok(Snapshot {
                    seq: r.get(0)?,
                    time: Time(r.get::<_, i64>(1)?.max(0) as u64),
                    format: r.get(2)?,
                    body: r.get(3)?,
                })
            })
            .optional()?;
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Record;
    use crate::tests::{submitted, temp};

    fn snapshot(body: &str) -> Snapshot {
        Snapshot { seq: -1, time: Time(50), format: 1, body: body.as_bytes().to_vec() }
    }

    #[test]
    fn a_snapshot_names_the_last_record_it_includes_and_only_the_latest_stays() {
        let path = temp("snapshots");
        let mut store = Store::open(&path).expect("open");
        assert_eq!(store.last_snapshot().expect("read"), None);
        let records: Vec<(Time, Record)> = (1..=5).map(|j| (Time(j), submitted(j))).collect();
        store.append(&records).expect("append");
        store.write_snapshot(3, &snapshot("three")).expect("snapshot");
        let s = store.last_snapshot().expect("read").expect("one");
        assert_eq!((s.seq, s.time, s.format, s.body.as_slice()), (3, Time(50), 1, b"three".as_slice()));
        store.write_snapshot(5, &snapshot("five")).expect("snapshot");
        let s = store.last_snapshot().expect("read").expect("one");
        assert_eq!((s.seq, s.body.as_slice()), (5, b"five".as_slice()));
        let count: i64 = store.conn.query_row("SELECT COUNT(*) FROM snapshots", [], |r| r.get(0)).expect("count");
        assert_eq!(count, 1, "only the latest is kept");
        drop(store);
        let store = Store::open(&path).expect("reopen");
        assert_eq!(store.last_snapshot().expect("read").map(|s| s.seq), Some(5));
        assert_eq!(store.len().expect("len"), 5);
    }

    #[test]
    fn a_log_with_snapshots_still_opens_read_only() {
        let path = temp("snapshots-ro");
        let mut store = Store::open(&path).expect("open");
        store.append(&[(Time(1), submitted(1))]).expect("append");
        store.write_snapshot(1, &snapshot("one")).expect("snapshot");
        let ro = Store::open_read_only(&path).expect("read-only");
        assert_eq!(ro.last_snapshot().expect("read").map(|s| s.seq), Some(1));
    }
}
