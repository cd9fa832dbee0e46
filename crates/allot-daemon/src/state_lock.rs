//! One allotd per state directory: it holds an exclusive lock on
//! `allotd.lock` there from before it reads the log to after its last
//! write, with its pid in it. A second allotd started meanwhile (a restart
//! while the one stopping still writes its snapshot, an operator's
//! mistake) waits for it a while, then refuses; `allot stop` returns once
//! the allotd of that pid has ended, so a start after it finds everything
//! written.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// How long a starting allotd waits for one that is stopping.
const WAIT: Duration = Duration::from_secs(30);

/// Held while allotd runs.
pub(crate) struct StateLock(#[allow(dead_code)] Flock<File>);

/// Takes the state directory's lock, waiting up to [`WAIT`] for an allotd
/// that holds it.
pub(crate) fn take(state_dir: &Path) -> anyhow::Result<StateLock> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = allot_proto::paths::state_lock(state_dir);
    let began = Instant::now();
    let mut said = false;
    loop {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => {
                // Its pid, for `allot stop` to wait for it to end.
                use std::io::Write as _;
                let mut file: &File = &lock;
                file.set_len(0)
                    .and_then(|()| write!(file, "{}", std::process::id()))
                    .with_context(|| format!("cannot write {}", path.display()))?;
                return Ok(StateLock(lock));
            }
            Err((_, Errno::EWOULDBLOCK)) if began.elapsed() < WAIT => {
                if !said {
                    eprintln!("allotd: another allotd holds {}: waiting for it to stop", path.display());
                    said = true;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            Err((_, Errno::EWOULDBLOCK)) => {
                return Err(anyhow!(
                    "another allotd runs on {} (it holds {}); stop it first",
                    state_dir.display(),
                    path.display()
                ));
            }
            Err((_, e)) => return Err(anyhow!("cannot lock {}: {e}", path.display())),
        }
    }
}
