//! When the event log cannot be written (a full disk, most often): allotd
//! stays up. What could not be written is undone by taking the state up
//! again from the log (the same replay as a restart, so nothing
//! half-applied stays); every request that would write is refused with why
//! (`bsub: cannot record the job: no space left on the state disk. Job not
//! submitted.`); reads are answered; no job is started or collected (a job
//! that ends meanwhile is collected after). Every second the log is tried
//! with a small write taken back, and when it takes one, allotd goes on.

use std::time::{Duration, Instant};

use allot_engine::Time;
use allot_proto::Request;
use anyhow::anyhow;
use tokio::sync::mpsc;

use crate::running::recover_running;
use crate::serve::Input;
use crate::startup::open_state;
use crate::state::State;

/// How often a log that could not be written is tried again.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// Why the log cannot be written, and when to try again.
pub struct WriteFailure {
    pub why: String,
    next_probe: Instant,
}

/// Whether a request would change anything (and so needs the log).
pub fn writes(request: &Request) -> bool {
    matches!(
        request,
        Request::Submit(_)
            | Request::Kill { .. }
            | Request::Suspend { .. }
            | Request::Resize { .. }
            | Request::Switch { .. }
            | Request::Modify { .. }
            | Request::Requeue { .. }
            | Request::Reconfig
            | Request::QueueControl { .. }
            | Request::HostControl { .. }
            | Request::JobGroup(
                allot_proto::job_groups::JobGroupRequest::Add { .. }
                    | allot_proto::job_groups::JobGroupRequest::Modify { .. }
                    | allot_proto::job_groups::JobGroupRequest::Delete(_)
            )
    )
}

/// What a request that could not be recorded is told.
pub fn refusal(submission: bool, why: &str) -> String {
    if submission {
        format!("bsub: cannot record the job: {why}. Job not submitted.")
    } else {
        format!("cannot record the change: {why}. Nothing was changed.")
    }
}

/// The state taken up again from the log after a write failed, refusing
/// writes until the log can be written.
pub fn take_up_again(old: State, wake: &mpsc::Sender<Input>, t: Time, why: String) -> anyhow::Result<State> {
    eprintln!("allotd: cannot write the event log ({why}): changes are refused until it can be; reads go on");
    let (source, state_dir) = (old.source.clone(), old.state_dir.clone());
    let State { supervisors, store, writer, .. } = old;
    drop(store);
    let loaded = source.load().map_err(|e| anyhow!("{}: {e}", source.describe()))?;
    let mut state = open_state(&state_dir, source, loaded, supervisors, t)?;
    // The new state's writes are a new epoch: tried again, not failed
    // with the old one's.
    state.writer = writer.map(|mut w| {
        w.epoch += 1;
        w
    });
    // Jobs that could not be launched are launched once the log takes
    // writes again (see `check`).
    if let Err(e) = recover_running(&mut state, wake, t) {
        eprintln!("allotd: running jobs are taken up once the log can be written: {e}");
    }
    state.write_failure = Some(WriteFailure { why, next_probe: state.now + PROBE_EVERY });
    Ok(state)
}

/// Where the log stands.
pub enum Check {
    /// It can be written.
    Writable,
    /// It still cannot be.
    Failing,
    /// It took the probe, but not what came after: the state must be taken
    /// up again (for this reason).
    Failed(String),
}

/// Whether the log still cannot be written: tried again when due, and
/// forgotten once it takes a write; then the running jobs whose
/// supervisor never started (a launch that failed with the disk) are
/// launched, as after a restart.
pub fn check(state: &mut State, wake: &mpsc::Sender<Input>, t: Time) -> Check {
    let now = state.now;
    let Some(failure) = &mut state.write_failure else { return Check::Writable };
    if now < failure.next_probe {
        return Check::Failing;
    }
    match state.store.probe() {
        Ok(()) => {
            eprintln!("allotd: the event log can be written again ({} before); changes are taken", failure.why);
            state.write_failure = None;
            match recover_running(state, wake, t) {
                Ok(()) => Check::Writable,
                Err(e) => Check::Failed(e.to_string()),
            }
        }
        Err(e) => {
            failure.why = e.why_not_written();
            failure.next_probe = now + PROBE_EVERY;
            Check::Failing
        }
    }
}
