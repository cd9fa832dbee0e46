//! Making applied records durable: in place (the tests that drive the
//! dispatcher, a daemon starting), with a snapshot of the state when one
//! is due ([`crate::snapshot`]); allotd's writer thread does the same
//! (`writer`).

use allot_engine::Time;
use allot_store::Record;

use crate::state::{ApplyError, State};

/// Why records were not committed.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// One was refused: it and those after it were not applied.
    #[error(transparent)]
    Apply(#[from] ApplyError),
    /// The log could not be written.
    #[error(transparent)]
    Store(#[from] allot_store::StoreError),
}

impl State {
    /// Applies records and makes them durable in one commit.
    pub fn commit(&mut self, t: Time, records: Vec<Record>) -> Result<(), CommitError> {
        for r in &records {
            self.apply(t, r)?;
        }
        Ok(self.record(t, records)?)
    }

    /// Makes records (already applied) durable in one commit.
    pub fn record(&mut self, t: Time, records: Vec<Record>) -> Result<(), allot_store::StoreError> {
        self.record_stamped(records.into_iter().map(|r| (t, r)).collect())
    }

    /// Makes records (already applied, at their own times, in this order)
    /// durable in one commit, after the deferred ones.
    pub fn record_stamped(&mut self, stamped: Vec<(Time, Record)>) -> Result<(), allot_store::StoreError> {
        if stamped.is_empty() && self.deferred.is_empty() && !crate::snapshot::forced(self) {
            return Ok(());
        }
        // On an error nothing is written, and the state is no longer the
        // log's: the caller stops, or takes the state up from the log again.
        let mut all = std::mem::take(&mut self.deferred);
        all.extend(stamped);
        let snapshot = crate::snapshot::due(self, all.len()).then(|| crate::snapshot::take(self));
        let last = self.store.append(&all)? as i64;
        // As the writer thread does (`writer`), every step at once.
        let archive = snapshot.as_ref().is_some_and(|s| s.archive);
        let mut target = None;
        crate::snapshot::write_out(&mut self.store, snapshot.map(|s| (last, s)), archive, &mut target);
        while target.is_some() {
            crate::snapshot::archive_step(&mut target, &mut self.store, &self.state_dir.join("state.db"));
        }
        Ok(())
    }

    /// Keeps records (already applied) to be written with the next commit
    /// instead of one of their own: passes that decided nothing to act on
    /// (see [`Record::Scheduled`]). Nothing was acted on because of them,
    /// so a crash that loses them loses nothing anybody saw happen; a stop
    /// writes them.
    pub fn defer(&mut self, stamped: Vec<(Time, Record)>) {
        self.deferred.extend(stamped);
    }

    /// Writes the deferred records, in place (allotd's stop has them
    /// written by its writer, see `serve::run`).
    #[cfg(test)]
    pub fn flush(&mut self) -> Result<(), allot_store::StoreError> {
        self.record_stamped(Vec::new())
    }
}
