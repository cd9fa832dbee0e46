//! The log's history, archived: LSF switches `lsb.events` once it holds
//! MAX_JOB_NUM finished jobs, saving the old file as `lsb.events.n`; allot
//! moves the records a snapshot of the state holds (all those up to its
//! position) out of the log into `history/events.N.db` beside it, a
//! SQLite file of the log's own schema, N counting up from 1 (the oldest).
//! allotd works from the log after the snapshot alone; the archives are
//! read by `bacct`, `bhist`, `allot sim --from` and a restart that cannot
//! read the snapshot (another release's), each taking the archives in
//! order and then the log, as one. The administrator bounds them: any
//! archive may be moved away or deleted, the oldest first, and history
//! then starts after it.
//!
//! A move is two steps: the archive is written whole and renamed into
//! place, then the records leave the log. A crash between them leaves the
//! records in both, and the readers, which take each sequence number once,
//! see them once.

use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError};

/// The directory of the archives of the log at `log`.
pub fn history_dir(log: &Path) -> PathBuf {
    log.with_file_name("history")
}

/// The archives of the log at `log`, by number, oldest first.
fn archives(log: &Path) -> Vec<(u64, PathBuf)> {
    let mut archives: Vec<(u64, PathBuf)> = std::fs::read_dir(history_dir(log))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    let n = name.strip_prefix("events.")?.strip_suffix(".db")?.parse().ok()?;
                    Some((n, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    archives.sort();
    archives
}

/// The files that hold the log at `log`: its archives, oldest first, then
/// itself.
pub fn log_files(log: &Path) -> Vec<PathBuf> {
    archives(log).into_iter().map(|(_, p)| p).chain([log.to_path_buf()]).collect()
}

/// Records moved in one archive at the most: a long log (one written
/// before archives, its first archiving) goes in steps, so that no step
/// holds the log's writer long.
pub const ARCHIVE_STEP: i64 = 200_000;

impl Store {
    /// A number kept in `meta` (`archived_through`, `archive_target`).
    fn meta(&self, key: &str) -> Result<Option<i64>, StoreError> {
        let found = self.conn.query_row("SELECT value FROM meta WHERE key = ?1", params![key], |r| r.get(0));
        Ok(found.optional()?)
    }

    /// Raises a number kept in `meta` to `value`, never lowers it.
    fn raise_meta(conn: &rusqlite::Connection, key: &str, value: i64) -> Result<(), StoreError> {
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) \
             ON CONFLICT (key) DO UPDATE SET value = MAX(value, excluded.value)",
            params![key, value],
        )?;
        Ok(())
    }

    /// The last record archived (0: none).
    pub fn archived_through(&self) -> Result<i64, StoreError> {
        Ok(self.meta("archived_through")?.unwrap_or(0))
    }

    /// Archiving is to go on up to `seq`, across a restart
    /// ([`Store::archive_target`]).
    pub fn set_archive_target(&mut self, seq: i64) -> Result<(), StoreError> {
        Store::raise_meta(&self.conn, "archive_target", seq)
    }

    /// The last record still to archive, if archiving has not reached it.
    pub fn archive_target(&self) -> Result<Option<i64>, StoreError> {
        let done = self.archived_through()?;
        Ok(self.meta("archive_target")?.filter(|&t| t > done))
    }

    /// One step towards archiving the records up to `target`: at most
    /// [`ARCHIVE_STEP`] of them, into a new archive. Returns the archive
    /// made, if any, and whether `target` is reached.
    pub fn archive_step(&mut self, target: i64, log: &Path) -> Result<(Option<PathBuf>, bool), StoreError> {
        self.archive_step_by(target, log, ARCHIVE_STEP)
    }

    fn archive_step_by(&mut self, target: i64, log: &Path, step: i64) -> Result<(Option<PathBuf>, bool), StoreError> {
        let first: Option<i64> = self.conn.query_row("SELECT MIN(seq) FROM events", [], |r| r.get(0))?;
        let Some(first) = first.filter(|&f| f <= target) else { return Ok((None, true)) };
        let upto = target.min(first - 1 + step);
        let path = self.archive_through(upto, log)?;
        Ok((Some(path), upto == target))
    }

    /// Moves the records up to `seq` out of this log, at `log`, into a new
    /// archive (module docs). Returns the archive's path.
    pub fn archive_through(&mut self, seq: i64, log: &Path) -> Result<PathBuf, StoreError> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = history_dir(log);
        let file_error = |what| {
            let path = dir.display().to_string();
            move |source| StoreError::File { path, what, source }
        };
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).map_err(file_error("cannot create"))?;
        // After the newest: the oldest may have been deleted.
        let next = archives(log).last().map_or(1, |(n, _)| n + 1);
        let path = dir.join(format!("events.{next}.db"));
        let partial = dir.join(format!(".events.{next}.db.partial"));
        // One left by a move cut short, with its journal.
        for leftover in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{leftover}", partial.display()));
        }
        // Made with the log's schema, then filled from it.
        drop(Store::open(&partial)?);
        self.conn.execute("ATTACH DATABASE ?1 AS archive", params![partial.display().to_string()])?;
        let copied = self
            .conn
            .execute(
                "INSERT INTO archive.events (seq, time, record, job) SELECT seq, time, record, job FROM main.events \
                 WHERE seq <= ?1",
                params![seq],
            )
            .map(|_| ());
        let detached = self.conn.execute("DETACH DATABASE archive", []);
        copied?;
        detached?;
        std::fs::File::open(&partial).and_then(|f| f.sync_all()).map_err(file_error("cannot sync"))?;
        std::fs::rename(&partial, &path).map_err(file_error("cannot rename into"))?;
        std::fs::File::open(&dir).and_then(|d| d.sync_all()).map_err(file_error("cannot sync"))?;
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM events WHERE seq <= ?1", params![seq])?;
        // Where the numbers go on from (`Store::append`).
        Store::raise_meta(&tx, "archived_through", seq)?;
        tx.commit()?;
        Ok(path)
    }

    /// Every record of the log at `log` and its archives, in order, each
    /// once ([`Store::scan`] of each file).
    pub fn scan_all(
        log: &Path,
        pass_over: &[&'static str],
        mut f: impl FnMut(i64, crate::Time, crate::Glance),
    ) -> Result<(), StoreError> {
        let mut seen = 0;
        for file in log_files(log) {
            Store::open_read_only(&file)?.scan(pass_over, |seq, t, g| {
                if seq > seen {
                    seen = seq;
                    f(seq, t, g);
                }
            })?;
        }
        Ok(())
    }
}

/// The log at a path and its archives, open to read jobs' records from
/// (`bhist`).
pub struct LogReader {
    stores: Vec<Store>,
}

impl LogReader {
    pub fn open(log: &Path) -> Result<LogReader, StoreError> {
        let stores = log_files(log).iter().map(|f| Store::open_read_only(f)).collect::<Result<_, _>>()?;
        Ok(LogReader { stores })
    }

    /// The records about one job, in order, each once.
    pub fn job_records(&self, job: allot_engine::JobId) -> Result<Vec<(crate::Time, crate::Record)>, StoreError> {
        let mut out = Vec::new();
        let mut seen = 0;
        for store in &self.stores {
            for (seq, t, r) in store.job_records_seq(job)? {
                if seq > seen {
                    seen = seq;
                    out.push((t, r));
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{Scratch, submitted, temp};
    use crate::{Glance, Record, RecordStream, Time};

    /// A log at a scratch path holding jobs 1 to `n`'s submissions.
    fn log_of(name: &str, n: u64) -> (Scratch, Store) {
        let log = temp(name);
        let mut store = Store::open(&log).expect("open");
        let records: Vec<(Time, Record)> = (1..=n).map(|j| (Time(j), submitted(j))).collect();
        store.append(&records).expect("append");
        (log, store)
    }

    fn jobs_read(log: &Path) -> Vec<u64> {
        let mut out = Vec::new();
        for batch in RecordStream::open(log, i64::MAX).expect("stream") {
            out.extend(batch.expect("batch").into_iter().filter_map(|(_, r)| r.job().map(|j| j.0)));
        }
        out
    }

    #[test]
    fn archived_records_are_read_with_the_log_as_one() {
        let (log, mut store) = log_of("archive", 10);
        let archived = store.archive_through(6, &log).expect("archived");
        assert_eq!(archived, history_dir(&log).join("events.1.db"));
        assert_eq!(store.len().expect("len"), 4, "the log keeps what is after");
        store.append(&[(Time(11), submitted(11))]).expect("append");
        store.archive_through(11, &log).expect("archived");
        assert!(store.is_empty().expect("empty"));
        // Numbered on from the last, the log emptied.
        store.append(&[(Time(12), submitted(12))]).expect("append");
        let mut seqs = Vec::new();
        store.replay(|seq, _, _| seqs.push(seq)).expect("replay");
        assert_eq!(seqs, [12]);
        assert_eq!(
            log_files(&log),
            [history_dir(&log).join("events.1.db"), history_dir(&log).join("events.2.db"), log.to_path_buf()]
        );
        assert_eq!(jobs_read(&log), (1..=12).collect::<Vec<_>>());
        let mut scanned = Vec::new();
        Store::scan_all(&log, &[], |seq, _, g| {
            if let Glance::Record(r) = g {
                scanned.push((seq, r.job().map(|j| j.0)));
            }
        })
        .expect("scan");
        assert_eq!(scanned, (1..=12).map(|j| (j as i64, Some(j))).collect::<Vec<_>>());
        let three = LogReader::open(&log).expect("open").job_records(allot_engine::JobId(3)).expect("found");
        assert_eq!(three.len(), 1, "in the first archive");
        // After the records after the first archive, from the second on.
        let after: Vec<u64> = RecordStream::open_range(&log, 7, i64::MAX)
            .expect("stream")
            .flat_map(|b| b.expect("batch"))
            .filter_map(|(_, r)| r.job().map(|j| j.0))
            .collect();
        assert_eq!(after, [8, 9, 10, 11, 12]);
    }

    #[test]
    fn a_long_log_is_archived_in_steps() {
        let (log, mut store) = log_of("archive-steps", 10);
        store.set_archive_target(9).expect("target");
        drop(store);
        // A restart goes on with it.
        let mut store = Store::open(&log).expect("reopen");
        assert_eq!(store.archive_target().expect("read"), Some(9));
        let mut steps = 0;
        loop {
            let (made, done) = store.archive_step_by(9, &log, 4).expect("a step");
            steps += usize::from(made.is_some());
            if done {
                break;
            }
        }
        assert_eq!(steps, 3, "1-4, 5-8, 9");
        assert_eq!(store.archived_through().expect("read"), 9);
        assert_eq!(store.archive_target().expect("read"), None, "reached");
        assert_eq!(store.len().expect("len"), 1);
        assert_eq!(log_files(&log).len(), 4);
        assert_eq!(jobs_read(&log), (1..=10).collect::<Vec<_>>());
        assert_eq!(store.archive_step_by(9, &log, 4).expect("nothing left"), (None, true));
        // The oldest archive deleted by the administrator: the next one
        // is numbered after the newest, never over it.
        std::fs::remove_file(history_dir(&log).join("events.1.db")).expect("deleted");
        let made = store.archive_through(10, &log).expect("archived");
        assert_eq!(made, history_dir(&log).join("events.4.db"));
        assert_eq!(jobs_read(&log), (5..=10).collect::<Vec<_>>());
    }

    #[test]
    fn a_move_cut_short_is_read_once() {
        let (log, store) = log_of("archive-cut", 5);
        drop(store);
        // The archive written, the log not yet cut: every record is in both.
        std::fs::create_dir_all(history_dir(&log)).expect("history");
        std::fs::copy(&log, history_dir(&log).join("events.1.db")).expect("copied");
        assert_eq!(jobs_read(&log), [1, 2, 3, 4, 5]);
        let mut n = 0;
        Store::scan_all(&log, &[], |_, _, _| n += 1).expect("scan");
        assert_eq!(n, 5);
        assert_eq!(LogReader::open(&log).expect("open").job_records(allot_engine::JobId(2)).expect("found").len(), 1);
    }
}
