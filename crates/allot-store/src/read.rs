//! Reading a long log fast: every record in order, decoded on two threads
//! ([`Store::scan`]: a restart's replay, `bacct`, and `allot sim --from`'s
//! first look, which passes over the kinds it does not need in full), and,
//! for `allot sim --from`'s replay, the whole log again, decoded on a
//! thread of its own while its reader works through it ([`RecordStream`]).

use std::collections::VecDeque;
use std::path::Path;
use std::sync::mpsc;

use allot_engine::Time;
use rusqlite::params;

use crate::{EVERY_RECORD, Record, Store, StoreError, decode, row_parts};

/// A record as [`Store::scan`] gives it: decoded, or, when its kind is one
/// the scan was asked to pass over, only its kind.
#[derive(Debug, PartialEq)]
pub enum Glance {
    Record(Record),
    Kind(&'static str),
}

/// Records per batch a thread decodes at a time.
const BATCH: usize = 2048;

/// [`Store::scan`]'s thread decodes one batch in `MINE`, the other thread
/// the rest: this one also steps through SQLite and hands every record on.
const MINE: usize = 3;

impl Store {
    /// Every record in the log's order, handed to `f` on this thread with
    /// its sequence number and time. Decoded on two threads: this one steps
    /// through SQLite's rows and decodes one batch in [`MINE`], another
    /// decodes the rest. A record whose kind is in `pass_over` is not
    /// decoded: `f` is told its kind only. The first damaged record in the
    /// log's order is the error (what `f` was given then is to be dropped).
    pub fn scan(&self, pass_over: &[&'static str], mut f: impl FnMut(i64, Time, Glance)) -> Result<(), StoreError> {
        let mut stmt = self.conn.prepare(EVERY_RECORD)?;
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::sync_channel::<Texts>(4);
            let (done_tx, done_rx) = mpsc::channel();
            let worker = std::thread::Builder::new().name("allot-decode".into()).spawn_scoped(s, move || {
                for texts in rx {
                    if done_tx.send(texts.decode()).is_err() {
                        break;
                    }
                }
            });
            worker.map_err(StoreError::Thread)?;
            let mut order = InOrder { mine: VecDeque::new(), theirs: done_rx, handed: 0 };
            let mut made: usize = 0;
            let mut texts = Texts::default();
            let mut rows = stmt.query([])?;
            loop {
                let row = rows.next()?;
                if let Some(row) = row {
                    let (seq, t, text) = row_parts(row)?;
                    match pass_over.iter().find(|kind| is_of_kind(text, kind)) {
                        Some(kind) => texts.rows.push((seq, t, Err(kind))),
                        None => texts.push(seq, t, text),
                    }
                }
                if texts.rows.len() == BATCH || (row.is_none() && !texts.rows.is_empty()) {
                    made += 1;
                    let batch = std::mem::take(&mut texts);
                    // Batch k (from 1) is this thread's when k is a
                    // multiple of MINE.
                    if made % MINE == 0 {
                        order.mine.push_back(batch.decode());
                    } else {
                        // A worker gone has failed: its batches' absence says so.
                        let _ = tx.send(batch);
                    }
                    // The other thread's batch before the last is done by
                    // now, or nearly: hand over what is there in order.
                    order.hand(made.saturating_sub(2), &mut f)?;
                }
                if row.is_none() {
                    break;
                }
            }
            drop(tx);
            order.hand(made, &mut f)
        })
    }
}

/// Decoded batches handed on in the log's order: this thread's (one in
/// [`MINE`]), waiting for the other's before them.
struct InOrder {
    mine: VecDeque<Decoded>,
    theirs: mpsc::Receiver<Decoded>,
    handed: usize,
}

type Decoded = Result<Vec<(i64, Time, Glance)>, StoreError>;

impl InOrder {
    /// Hands batches on to `f` up to the `upto`th.
    fn hand(&mut self, upto: usize, f: &mut impl FnMut(i64, Time, Glance)) -> Result<(), StoreError> {
        while self.handed < upto {
            self.handed += 1;
            let batch = if self.handed % MINE == 0 { self.mine.pop_front() } else { self.theirs.recv().ok() };
            let batch = batch.ok_or_else(|| StoreError::Damaged {
                path: "the event log".into(),
                why: "could not be decoded (a decoding thread failed)".into(),
            })?;
            for (seq, t, glance) in batch? {
                f(seq, t, glance);
            }
        }
        Ok(())
    }
}

/// Records' texts as the log holds them, one after another, with each
/// one's sequence number, time and end in `text` (or, passed over, its
/// kind, its text not copied): a batch to decode.
#[derive(Default)]
struct Texts {
    text: Vec<u8>,
    rows: Vec<(i64, Time, Result<usize, &'static str>)>,
}

impl Texts {
    fn push(&mut self, seq: i64, t: Time, text: &[u8]) {
        self.text.extend_from_slice(text);
        self.rows.push((seq, t, Ok(self.text.len())));
    }

    fn decode(&self) -> Decoded {
        let mut start = 0;
        let mut out = Vec::with_capacity(self.rows.len());
        for &(seq, t, end) in &self.rows {
            let glance = match end {
                Ok(end) => Glance::Record(decode(seq, &self.text[std::mem::replace(&mut start, end)..end])?),
                Err(kind) => Glance::Kind(kind),
            };
            out.push((seq, t, glance));
        }
        Ok(out)
    }
}

/// Whether a record's text is one of `kind` as allot writes it
/// (`{"Kind":...`). A text written otherwise is decoded, never guessed.
fn is_of_kind(text: &[u8], kind: &str) -> bool {
    let rest = text.strip_prefix(b"{\"").and_then(|r| r.strip_prefix(kind.as_bytes()));
    rest.is_some_and(|r| r.starts_with(b"\":"))
}

/// The log's records up to a sequence number, read and decoded on a
/// thread of its own, in the log's order, a batch at a time, as they are
/// taken (a few batches ahead): the whole log is never in memory at once,
/// and its reader's work goes on beside the decoding. Batches done with
/// go back ([`RecordStream::done_with`]) to be let go of on the thread that
/// made them: let go of on the reader's, their memory cost as much again
/// as their decoding (glibc's allocator frees slowly across threads).
pub struct RecordStream {
    batches: Option<mpsc::Receiver<Result<Batch, StoreError>>>,
    spent: Option<mpsc::Sender<Batch>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

type Batch = Vec<(Time, Record)>;

impl RecordStream {
    /// The records of the log at `path` up to `last` (its records after
    /// are left out: allotd may be appending), read-only.
    pub fn open(path: &Path, last: i64) -> Result<RecordStream, StoreError> {
        RecordStream::open_range(path, 0, last)
    }

    /// The records after `after` up to `last`: a restart's replay after a
    /// snapshot. The log's archives are read first, as one with it.
    pub fn open_range(path: &Path, after: i64, last: i64) -> Result<RecordStream, StoreError> {
        let path = path.to_path_buf();
        let (tx, rx) = mpsc::sync_channel(8);
        let (spent_tx, spent_rx) = mpsc::channel::<Batch>();
        let reader = std::thread::Builder::new().name("allot-stream".into()).spawn(move || {
            let read = |tx: &mpsc::SyncSender<_>| -> Result<(), StoreError> {
                // The archives, then the log, each record once
                // (`archive`); the archives not at all when all they hold
                // is before `after` (a restart from a snapshot).
                let mut seen = after;
                let mut batch = Vec::with_capacity(BATCH / 2);
                let files = match Store::open_read_only(&path)?.archived_through()? {
                    archived if archived <= after => vec![path.clone()],
                    _ => crate::log_files(&path),
                };
                for file in files {
                    let store = Store::open_read_only(&file)?;
                    let mut stmt = store
                        .conn
                        .prepare("SELECT seq, time, record FROM events WHERE seq > ?1 AND seq <= ?2 ORDER BY seq")?;
                    let mut rows = stmt.query(params![seen, last])?;
                    while let Some(row) = rows.next()? {
                        let (seq, t, text) = row_parts(row)?;
                        seen = seq;
                        batch.push((t, decode(seq, text)?));
                        if batch.len() == BATCH / 2 {
                            if tx.send(Ok(std::mem::take(&mut batch))).is_err() {
                                // Its reader has stopped.
                                return Ok(());
                            }
                            spent_rx.try_iter().for_each(drop);
                        }
                    }
                }
                if !batch.is_empty() {
                    let _ = tx.send(Ok(batch));
                }
                Ok(())
            };
            if let Err(e) = read(&tx) {
                let _ = tx.send(Err(e));
            }
            drop(tx);
            // The last batches, as its reader is done with them.
            spent_rx.into_iter().for_each(drop);
        });
        let thread = reader.map_err(StoreError::Thread)?;
        Ok(RecordStream { batches: Some(rx), spent: Some(spent_tx), thread: Some(thread) })
    }

    /// A batch its reader is done with, let go of on the stream's thread.
    pub fn done_with(&self, batch: Batch) {
        if let Some(spent) = &self.spent {
            // A thread gone has failed, and said so in its last batch.
            let _ = spent.send(batch);
        }
    }
}

impl Iterator for RecordStream {
    type Item = Result<Batch, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.batches.as_ref()?.recv().ok()
    }
}

impl Drop for RecordStream {
    /// Its thread stops at its next batch, and is waited for.
    fn drop(&mut self) {
        self.batches = None;
        self.spent = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
