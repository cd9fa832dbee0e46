//! Durable state: the daemon's event log, in SQLite (bundled).
//!
//! Everything that changes the scheduler's state is a [`Record`] appended
//! to the log before it is acknowledged; a restart replays the log in
//! order through the same engine, so the state after a restart is the
//! state before it. Records are appended a batch per transaction, so the
//! daemon can acknowledge many submissions with one commit.
//!
//! Durability: WAL journal with `synchronous=FULL`, so a committed batch
//! survives the process being killed (kill -9) and the machine losing
//! power.

mod archive;
mod book;
pub mod effects;
mod read;
mod records;
mod snapshots;

pub use archive::{LogReader, history_dir, log_files};
pub use book::{
    ApplyError, Book, BookJob, Effects, GivenBefore, MADE_AHEAD, Names, Numbers, Spans, Tail, apply, host_slots,
    release_slots,
};
pub use read::{Glance, RecordStream};
pub use records::{Env, JobExtras, JobRecord, PreExecEnd, Reach, Record, Term};
pub use snapshots::Snapshot;

use std::path::Path;

use allot_engine::{JobId, Time};
use rusqlite::{Connection, params};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("state database {path}: {source}")]
    Open { path: String, source: rusqlite::Error },
    #[error("state database: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error(
        "state database: record {seq} is not readable ({source}). allotd does not start on a damaged log: \
         restore the state database from a backup, or, to start with no jobs at all, move it aside"
    )]
    Corrupt { seq: i64, source: serde_json::Error },
    #[error(
        "state database {path} {why}. allotd does not start on a damaged log, which it would take for an empty \
         cluster: restore {path} (with its -wal file) from a backup, or, to start with no jobs at all, move it \
         aside"
    )]
    Damaged { path: String, why: String },
    #[error("state database {path}: {what}: {source}")]
    File { path: String, what: &'static str, source: std::io::Error },
    #[error("state database {path} has schema version {found}; this allot knows {known}")]
    Schema { path: String, found: i64, known: i64 },
    #[error("state database: cannot start a thread to read it: {0}")]
    Thread(std::io::Error),
}

impl StoreError {
    /// Why a write failed, as a user is told: a full disk in plain words.
    pub fn why_not_written(&self) -> String {
        let full = match self {
            StoreError::Sql(rusqlite::Error::SqliteFailure(e, _))
            | StoreError::Open { source: rusqlite::Error::SqliteFailure(e, _), .. } => {
                e.code == rusqlite::ErrorCode::DiskFull
            }
            StoreError::File { source, .. } => source.raw_os_error() == Some(28),
            _ => false,
        };
        if full { "no space left on the state disk".into() } else { self.to_string() }
    }
}

/// 2: each record's job in a column of its own, indexed, for `bhist`.
const SCHEMA_VERSION: i64 = 2;

pub struct Store {
    conn: Connection,
}

impl Store {
    /// Opens the state database at `path`, creating it (mode 0600: it
    /// holds every job's environment) when there is none. One that is
    /// there but is not a whole allot log (empty, or not a database, or
    /// without allot's tables) is refused, never taken as a new cluster.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let shown = path.display().to_string();
        let file_error = |what| move |source| StoreError::File { path: path.display().to_string(), what, source };
        let fresh = match std::fs::metadata(path) {
            Ok(m) if m.len() == 0 => {
                return Err(StoreError::Damaged { path: shown, why: "is empty (0 bytes)".into() });
            }
            Ok(_) => false,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(path)
                    .map_err(file_error("cannot create"))?;
                true
            }
            Err(e) => return Err(file_error("cannot read")(e)),
        };
        // Made by an earlier allot with the default mode: only allotd's.
        for file in [path.to_path_buf(), path.with_extension("db-wal"), path.with_extension("db-shm")] {
            if file.exists() {
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
                    .map_err(file_error("cannot make it private"))?;
            }
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Open { path: shown.clone(), source })?;
        let damaged = |why: String| StoreError::Damaged { path: shown.clone(), why };
        if !fresh {
            let tables: i64 = conn
                .query_row(
                    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'events')",
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| damaged(format!("is not readable as a database ({e})")))?;
            if tables != 2 {
                return Err(damaged("has no allot event log in it".into()));
            }
        }
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS events (
                 seq INTEGER PRIMARY KEY,
                 time INTEGER NOT NULL,
                 record TEXT NOT NULL,
                 job INTEGER);",
        )?;
        let found: Option<i64> = conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).ok();
        let mut store = Store { conn };
        match found {
            None => {
                store.conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?1)", params![SCHEMA_VERSION])?;
            }
            Some(1) => store.upgrade_from_1()?,
            Some(v) if v != SCHEMA_VERSION => {
                return Err(StoreError::Schema { path: shown, found: v, known: SCHEMA_VERSION });
            }
            Some(_) => {}
        }
        store.conn.execute_batch("CREATE INDEX IF NOT EXISTS events_job ON events (job)")?;
        store.conn.execute_batch(snapshots::SNAPSHOTS_TABLE)?;
        Ok(store)
    }

    /// Opens an existing log to read it alone (`allot sim --from`), while
    /// allotd may be writing it: nothing is made or changed, and a file
    /// that is not an allot log is refused as [`Store::open`] refuses it.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        use rusqlite::OpenFlags;
        let shown = path.display().to_string();
        match std::fs::metadata(path) {
            Ok(m) if m.len() == 0 => {
                return Err(StoreError::Damaged { path: shown, why: "is empty (0 bytes)".into() });
            }
            Ok(_) => {}
            Err(source) => return Err(StoreError::File { path: shown, what: "cannot read", source }),
        }
        let conn =
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                .map_err(|source| StoreError::Open { path: shown.clone(), source })?;
        let tables: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'events')",
                [],
                |r| r.get(0),
            )
            .map_err(|e| StoreError::Damaged {
                path: shown.clone(),
                why: format!("is not readable as a database ({e})"),
            })?;
        if tables != 2 {
            return Err(StoreError::Damaged { path: shown, why: "has no allot event log in it".into() });
        }
        let found: i64 = conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0))?;
        if found != SCHEMA_VERSION {
            return Err(StoreError::Schema { path: shown, found, known: SCHEMA_VERSION });
        }
        Ok(Store { conn })
    }

    /// Schema 1 to 2, in one transaction: the job column, filled from the
    /// records.
    fn upgrade_from_1(&mut self) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute_batch("ALTER TABLE events ADD COLUMN job INTEGER")?;
        {
            let mut select = tx.prepare("SELECT seq, record FROM events")?;
            let mut update = tx.prepare("UPDATE events SET job = ?1 WHERE seq = ?2")?;
            let mut rows = select.query([])?;
            while let Some(row) = rows.next()? {
                let seq: i64 = row.get(0)?;
                let record = decode(seq, row.get_ref(1)?.as_bytes().map_err(rusqlite::Error::from)?)?;
                if let Some(job) = record.job() {
                    update.execute(params![job.0 as i64, seq])?;
                }
            }
        }
        tx.execute("UPDATE meta SET value = ?1 WHERE key = 'schema'", params![SCHEMA_VERSION])?;
        tx.commit()?;
        Ok(())
    }

    /// Appends records in one transaction; when this returns, they are
    /// durable. Returns the sequence number of the last (the last before
    /// them, given none); numbers go on across archives.
    pub fn append(&mut self, records: &[(Time, Record)]) -> Result<u64, StoreError> {
        let tx = self.conn.transaction()?;
        let mut last: i64 = tx.query_row(snapshots::LAST_SEQ, [], |r| r.get(0))?;
        {
            let mut insert =
                tx.prepare_cached("INSERT INTO events (seq, time, record, job) VALUES (?1, ?2, ?3, ?4)")?;
            for (t, r) in records {
                let text = serde_json::to_string(r).map_err(|source| StoreError::Corrupt { seq: -1, source })?;
                last += 1;
                insert.execute(params![last, t.0 as i64, text, r.job().map(|j| j.0 as i64)])?;
            }
        }
        tx.commit()?;
        Ok(last as u64)
    }

    /// Every record in order, with its sequence number and time, decoded
    /// on two threads ([`Store::scan`]): a restart's replay, `bacct`.
    pub fn replay(&self, mut f: impl FnMut(u64, Time, Record)) -> Result<(), StoreError> {
        self.scan(&[], |seq, t, glance| {
            if let Glance::Record(r) = glance {
                f(seq as u64, t, r);
            }
        })
    }

    /// The records about one job, in order, with their times.
    pub fn job_records(&self, job: JobId) -> Result<Vec<(Time, Record)>, StoreError> {
        Ok(self.job_records_seq(job)?.into_iter().map(|(_, t, r)| (t, r)).collect())
    }

    /// [`Store::job_records`] with each record's sequence number.
    pub fn job_records_seq(&self, job: JobId) -> Result<Vec<(i64, Time, Record)>, StoreError> {
        let mut stmt = self.conn.prepare_cached("SELECT seq, time, record FROM events WHERE job = ?1 ORDER BY seq")?;
        let mut rows = stmt.query(params![job.0 as i64])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let (seq, t, text) = row_parts(row)?;
            out.push((seq, t, decode(seq, text)?));
        }
        Ok(out)
    }

    /// Whether the log can be written now: a write of a few kilobytes,
    /// taken back, made durable. Used to tell when a full disk has room
    /// again.
    pub fn probe(&self) -> Result<(), StoreError> {
        let written = self.conn.execute_batch(
            "BEGIN IMMEDIATE;
             CREATE TABLE IF NOT EXISTS probe (x BLOB);
             INSERT INTO probe VALUES (zeroblob(16384));
             DELETE FROM probe;
             COMMIT;",
        );
        if written.is_err() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        Ok(written?)
    }

    /// How many records the log holds.
    pub fn len(&self) -> Result<u64, StoreError> {
        Ok(self.conn.query_row("SELECT COUNT(*) FROM events", [], |r| r.get::<_, i64>(0))? as u64)
    }

    pub fn is_empty(&self) -> Result<bool, StoreError> {
        Ok(self.len()? == 0)
    }
}

/// Every record of the log, in order: its number, time and text.
const EVERY_RECORD: &str = "SELECT seq, time, record FROM events ORDER BY seq";

/// A row of `seq, time, record`: the record's number and time, and its
/// text where SQLite holds it (decoded from there, not copied out first).
fn row_parts<'r>(row: &'r rusqlite::Row<'_>) -> Result<(i64, Time, &'r [u8]), StoreError> {
    let seq: i64 = row.get(0)?;
    let time: i64 = row.get(1)?;
    let text = row.get_ref(2)?.as_bytes().map_err(rusqlite::Error::from)?;
    Ok((seq, Time(time.max(0) as u64), text))
}

/// Record `seq` from its text.
fn decode(seq: i64, text: &[u8]) -> Result<Record, StoreError> {
    serde_json::from_slice(text).map_err(|source| StoreError::Corrupt { seq, source })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use allot_engine::JobSpec;

    /// A test's state database, in a directory of its own removed when
    /// the test passes (a failed test's stays, to look at).
    pub(crate) struct Scratch {
        dir: std::path::PathBuf,
        db: std::path::PathBuf,
    }

    impl std::ops::Deref for Scratch {
        type Target = Path;

        fn deref(&self) -> &Path {
            &self.db
        }
    }

    impl AsRef<Path> for Scratch {
        fn as_ref(&self) -> &Path {
            &self.db
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            if !std::thread::panicking() {
                let _ = std::fs::remove_dir_all(&self.dir);
            }
        }
    }

    pub(crate) fn temp(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("allot-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        Scratch { db: dir.join("state.db"), dir }
    }

    pub(crate) fn submitted(job: u64) -> Record {
        let record = JobRecord {
            spec: JobSpec { user: "alice".into(), queue: Some("normal".into()), slots: 1, ..JobSpec::default() },
            name: "sleep".into(),
            command: "sleep 1".into(),
            cwd: "/tmp".into(),
            output: None,
            error: None,
            env: vec![("HOME".into(), "/home/alice".into())].into(),
            from_host: "hostA".into(),
            project: Some("climate".into()),
            estimated_run_time: None,
            array: None,
            extras: None,
        };
        Record::Submitted { job: JobId(job), number: None, record: Box::new(record), typed: None }
    }

    #[test]
    fn records_come_back_in_order_after_reopening() {
        let path = temp("reopen");
        {
            let mut s = Store::open(&path).expect("open");
            s.append(&[(Time(1), submitted(1)), (Time(1), submitted(2))]).expect("append");
            s.append(&[(
                Time(2),
                Record::Started { job: JobId(1), alloc: vec![("hostA".into(), 1)], backfill_limit: None },
            )])
            .expect("append");
            s.append(&[(
                Time(5),
                Record::Finished {
                    job: JobId(1),
                    exit: 0,
                    cpu_time: 0.5,
                    max_mem_kb: 0,
                    reason: None,
                    pre_exec: None,
                    ran_until: None,
                },
            )])
            .expect("append");
        }
        let s = Store::open(&path).expect("reopen");
        let mut seen = Vec::new();
        s.replay(|seq, t, r| seen.push((seq, t, r))).expect("replay");
        assert_eq!(seen.len(), 4);
        assert_eq!(seen[0], (1, Time(1), submitted(1)));
        let end = Record::Finished {
            job: JobId(1),
            exit: 0,
            cpu_time: 0.5,
            max_mem_kb: 0,
            reason: None,
            pre_exec: None,
            ran_until: None,
        };
        assert_eq!(seen[3].2, end);
        assert_eq!(s.len().expect("len"), 4);
    }

    /// Read at once on two threads, the records come back in the log's
    /// order across batches; a damaged one is named by its number,
    /// whichever thread decoded it. A scan passes over the kinds it is
    /// asked to (by their names as the log writes them); a stream gives
    /// the log up to the record named, in order.
    #[test]
    fn records_read_at_once_are_the_logs_in_order() {
        let path = temp("read-all");
        let mut s = Store::open(&path).expect("open");
        let records: Vec<(Time, Record)> = (1..=7000u64)
            .map(|k| match k % 3 {
                0 => (Time(k), submitted(k)),
                1 => (
                    Time(k),
                    Record::Started { job: JobId(k), alloc: vec![(format!("host{k}"), 1)], backfill_limit: None },
                ),
                _ => (Time(k), Record::Scheduled { full: k % 2 == 0 }),
            })
            .collect();
        s.append(&records).expect("append");
        let mut all = Vec::new();
        s.replay(|_, t, r| all.push((t, r))).expect("read");
        assert_eq!(all, records);
        let mut glances = Vec::new();
        s.scan(&["Submitted", "Scheduled"], |seq, t, g| glances.push((seq, t, g))).expect("scan");
        let expected: Vec<(i64, Time, Glance)> = (records.iter().enumerate())
            .map(|(k, (t, r))| {
                let glance = match r {
                    Record::Started { .. } => Glance::Record(r.clone()),
                    _ => Glance::Kind(r.name()),
                };
                (k as i64 + 1, *t, glance)
            })
            .collect();
        assert_eq!(glances, expected);
        let streamed: Vec<(Time, Record)> =
            RecordStream::open(&path, 6000).expect("a stream").flat_map(|b| b.expect("a batch")).collect();
        assert_eq!(streamed, records[..6000]);
        // 5000 is in the third batch of 2048, this thread's (one batch in
        // three); 3000 in the second, the other thread's: the first
        // damaged in the log is named, whichever thread decoded it.
        for seq in [5000, 3000] {
            let raw = Connection::open(&path).expect("raw");
            raw.execute("UPDATE events SET record = '{' WHERE seq = ?1", params![seq]).expect("damage");
            match s.replay(|_, _, _| {}) {
                Err(StoreError::Corrupt { seq: found, .. }) => assert_eq!(found, seq),
                other => panic!("a damaged record read as {other:?}"),
            }
            let failed = RecordStream::open(&path, 7000).expect("a stream").find_map(Result::err);
            assert!(matches!(failed, Some(StoreError::Corrupt { seq: found, .. }) if found == seq), "{failed:?}");
        }
    }

    /// A submission keeps what was typed; a log written before it was kept
    /// reads as it did, with none.
    #[test]
    fn a_submission_as_typed_is_kept_and_old_records_still_read() {
        let typed = allot_config::submission::Submission {
            user: "alice".into(),
            slots: 4,
            max_slots: Some(32),
            res_req: vec!["span[ptile=3]".into()],
            hosts: Some("h4".into()),
            ..Default::default()
        };
        let Record::Submitted { record, .. } = submitted(1) else { unreachable!() };
        let with = Record::Submitted { job: JobId(1), number: None, record, typed: Some(Box::new(typed)) };
        let text = serde_json::to_string(&with).expect("json");
        assert!(
            text.contains(
                r#""typed":{"user":"alice","slots":4,"max_slots":32,"res_req":["span[ptile=3]"],"hosts":"h4"}"#
            ),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Record>(&text).expect("reads"), with);
        let old = serde_json::to_string(&submitted(2)).expect("json");
        assert!(!old.contains("typed"), "{old}");
        assert!(matches!(serde_json::from_str::<Record>(&old).expect("reads"), Record::Submitted { typed: None, .. }));
    }

    /// A submission's job number is written only where it is not its job
    /// id, and read back as the id where it is absent (every older log).
    #[test]
    fn a_job_number_is_written_only_where_it_differs_from_the_id() {
        let Record::Submitted { record, .. } = submitted(15) else { unreachable!() };
        let renumbered = Record::Submitted { job: JobId(15), number: Some(6), record, typed: None };
        let text = serde_json::to_string(&renumbered).expect("json");
        assert!(text.contains(r#""job":15,"number":6,"#), "{text}");
        assert_eq!(serde_json::from_str::<Record>(&text).expect("reads").job_number(), Some(6));
        let plain = serde_json::to_string(&submitted(15)).expect("json");
        assert!(!plain.contains("number"), "{plain}");
        assert_eq!(serde_json::from_str::<Record>(&plain).expect("reads").job_number(), Some(15));
        assert_eq!(Record::Removed { job: JobId(15) }.job_number(), None);
    }

    /// `allot sim --from` reads a log allotd may be writing, and changes
    /// nothing; what is not a log is refused as allotd refuses it.
    #[test]
    fn a_log_opens_read_only_beside_its_writer() {
        let path = temp("read-only");
        let mut writer = Store::open(&path).expect("open");
        writer.append(&[(Time(1), submitted(1))]).expect("append");
        let reader = Store::open_read_only(&path).expect("opens beside the writer");
        assert_eq!(reader.len().expect("len"), 1);
        writer.append(&[(Time(2), submitted(2))]).expect("the writer goes on");
        assert_eq!(reader.len().expect("len"), 2);
        drop(reader);
        let missing = path.with_file_name("none.db");
        assert!(Store::open_read_only(&missing).is_err());
        assert!(!missing.exists(), "nothing made");
        std::fs::write(&missing, b"").expect("empty");
        let err = Store::open_read_only(&missing).err().expect("refused").to_string();
        assert!(err.contains("is empty (0 bytes)"), "{err}");
    }

    #[test]
    fn a_jobs_records_are_found_by_its_id() {
        let path = temp("by-job");
        let mut s = Store::open(&path).expect("open");
        s.append(&[(Time(1), submitted(1)), (Time(1), submitted(2))]).expect("append");
        s.append(&[(Time(2), Record::QueueChanged { queue: "normal".into(), open: false })]).expect("append");
        s.append(&[(Time(3), Record::Suspended { job: JobId(2), stop: true, by: "alice".into() })]).expect("append");
        let two = s.job_records(JobId(2)).expect("query");
        assert_eq!(
            two,
            vec![
                (Time(1), submitted(2)),
                (Time(3), Record::Suspended { job: JobId(2), stop: true, by: "alice".into() })
            ]
        );
        assert_eq!(s.job_records(JobId(3)).expect("query"), vec![]);
    }

    #[test]
    fn a_schema_1_log_is_upgraded_in_place() {
        let path = temp("upgrade");
        {
            let conn = Connection::open(&path).expect("raw");
            conn.execute_batch(
                "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
                 CREATE TABLE events (seq INTEGER PRIMARY KEY, time INTEGER NOT NULL, record TEXT NOT NULL);
                 INSERT INTO meta VALUES ('schema', 1);",
            )
            .expect("schema 1");
            let text = serde_json::to_string(&submitted(7)).expect("json");
            conn.execute("INSERT INTO events (time, record) VALUES (5, ?1)", params![text]).expect("insert");
        }
        let s = Store::open(&path).expect("upgraded");
        assert_eq!(s.job_records(JobId(7)).expect("query"), vec![(Time(5), submitted(7))]);
        drop(s);
        let conn = Connection::open(&path).expect("raw");
        let v: i64 = conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).expect("v");
        assert_eq!(v, SCHEMA_VERSION);
    }

    #[test]
    fn another_schema_version_is_refused() {
        let path = temp("schema");
        drop(Store::open(&path).expect("open"));
        let conn = Connection::open(&path).expect("raw");
        conn.execute("UPDATE meta SET value = 99 WHERE key = 'schema'", []).expect("update");
        drop(conn);
        let err = Store::open(&path).err().expect("refused");
        assert!(err.to_string().contains("schema version 99"), "{err}");
    }

    #[test]
    fn a_new_log_is_readable_by_allotd_alone() {
        use std::os::unix::fs::PermissionsExt;
        let path = temp("mode");
        let mut s = Store::open(&path).expect("open");
        s.append(&[(Time(1), submitted(1))]).expect("append");
        for file in [path.to_path_buf(), path.with_extension("db-wal")] {
            let mode = std::fs::metadata(&file).expect("there").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", file.display());
        }
        drop(s);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        drop(Store::open(&path).expect("reopened"));
        assert_eq!(std::fs::metadata(&path).expect("there").permissions().mode() & 0o777, 0o600, "made private");
    }

    /// An empty file, a file that is no database and a database without
    /// the log are each refused with what is wrong and how to recover,
    /// never opened as a cluster with no jobs.
    #[test]
    fn a_damaged_log_is_refused_loudly() {
        let path = temp("damaged");
        std::fs::write(&path, b"").expect("empty");
        let err = Store::open(&path).err().expect("refused").to_string();
        assert!(
            err.contains("is empty (0 bytes)") && err.contains("restore") && err.contains("move it aside"),
            "{err}"
        );
        assert_eq!(std::fs::metadata(&path).expect("kept").len(), 0, "left as it was");

        std::fs::write(&path, vec![b'x'; 8192]).expect("garbage");
        let err = Store::open(&path).err().expect("refused").to_string();
        assert!(err.contains("is not readable as a database"), "{err}");

        std::fs::remove_file(&path).expect("rm");
        Connection::open(&path).expect("raw").execute_batch("CREATE TABLE other (x INTEGER)").expect("table");
        let err = Store::open(&path).err().expect("refused").to_string();
        assert!(err.contains("has no allot event log in it"), "{err}");
    }

    #[test]
    fn a_record_that_does_not_read_is_named() {
        let path = temp("corrupt");
        let mut s = Store::open(&path).expect("open");
        s.append(&[(Time(1), submitted(1)), (Time(1), submitted(2))]).expect("append");
        s.conn.execute("UPDATE events SET record = '{\"Submitted\":' WHERE seq = 2", []).expect("damage");
        let err = s.replay(|_, _, _| {}).expect_err("refused").to_string();
        assert!(
            err.starts_with("state database: record 2 is not readable (") && err.contains("move it aside"),
            "{err}"
        );
    }
}
