//! The tasks this host runs for a job's `blaunch`, each under a supervisor
//! of its own (`allot_exec::task`): the task, its output and its exit
//! outlive this agent, and the next one takes them up from `tasks/`.
//!
//! A task's output is spooled to files by its supervisor, and passed on
//! from there ([`Task::take`]) while allotd can be reached, each piece with
//! its offset; the `blaunch` that asked writes each byte once, so the
//! whole of it can be sent again at no harm: after this agent restarts,
//! or when the `blaunch`'s own agent or allotd restarted and its request
//! is resumed ([`crate::wire::ToAgent::Resend`]). Its end is passed on
//! once all of its output was. Everything of a task goes when its job's
//! run ends.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use allot_exec::task::{TaskFile, path};

/// At most this much of one stream of one task is read each time the
/// spools are looked at (each 50 ms), so one verbose task does not hold
/// the agent.
const PIECE: usize = 256 << 10;

/// What the agent keeps of a task, in `tasks/NAME.run`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub job: u64,
    pub attempt: u32,
    /// The host whose `blaunch` asked, its request, and the task's index.
    pub origin: String,
    pub tag: u64,
    pub index: u32,
}

/// A task of this host, and how much of it was passed on.
#[derive(Clone, Debug)]
pub struct Task {
    pub run: Run,
    pub name: String,
    /// Bytes of its output and error passed on since the last (re)send.
    pub sent: [u64; 2],
    /// Its end was passed on.
    pub told_end: bool,
}

/// What a look at a task's spools found to pass on.
pub enum Found {
    Output { stderr: bool, offset: u64, data: Vec<u8> },
    Ended(i32),
}

/// The tasks' directory.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("tasks")
}

impl Task {
    /// Whose request it serves.
    pub fn serves(&self, origin: &str, tag: u64) -> bool {
        self.run.origin == origin && self.run.tag == tag
    }

    /// Its process group (its supervisor wrote it once it started).
    pub fn pgid(&self, state_dir: &Path) -> Option<i32> {
        std::fs::read_to_string(path(&dir(state_dir), &self.name, "pid")).ok()?.trim().parse().ok()
    }

    /// What is new in its spools since last time, and then its end.
    pub fn take(&mut self, state_dir: &Path) -> Vec<Found> {
        let dir = dir(state_dir);
        let mut found = Vec::new();
        // The exit first: once it is there, the spools are whole.
        let exit = std::fs::read_to_string(path(&dir, &self.name, "exit")).ok().and_then(|e| e.trim().parse().ok());
        let mut drained = true;
        for (k, what) in ["out", "err"].into_iter().enumerate() {
            let data = read_from(&path(&dir, &self.name, what), self.sent[k], PIECE);
            if data.len() == PIECE {
                drained = false;
            }
            if !data.is_empty() {
                let offset = self.sent[k];
                self.sent[k] += data.len() as u64;
                found.push(Found::Output { stderr: k == 1, offset, data });
            }
        }
        if let Some(code) = exit.filter(|_| drained && !self.told_end) {
            self.told_end = true;
            found.push(Found::Ended(code));
        }
        found
    }

    /// Everything to be sent again.
    pub fn resend(&mut self) {
        self.sent = [0, 0];
        self.told_end = false;
    }

    /// Forgets it: its files go.
    pub fn remove(&self, state_dir: &Path) {
        let dir = dir(state_dir);
        for what in ["run", "task", "out", "err", "pid", "exit", "exit.new"] {
            let _ = std::fs::remove_file(path(&dir, &self.name, what));
        }
    }
}

/// Up to `max` bytes of `file` from `offset` (none when it is not there).
fn read_from(file: &Path, offset: u64, max: usize) -> Vec<u8> {
    let Ok(mut f) = std::fs::File::open(file) else { return Vec::new() };
    if f.seek(SeekFrom::Start(offset)).is_err() {
        return Vec::new();
    }
    let mut data = Vec::new();
    let _ = f.take(max as u64).read_to_end(&mut data);
    data
}

/// Starts task `run` with `file` under its supervisor (`supervisor
/// --task DIR NAME`), in a session of its own; the supervisor is reaped
/// on a task of its own, and `ended` is then called.
pub fn start(
    state_dir: &Path,
    supervisor: &Path,
    run: Run,
    file: &TaskFile,
    ended: impl FnOnce() + Send + 'static,
) -> Result<Task, String> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = dir(state_dir);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let name = format!("{}.{}.{}.{}.{}", run.job, run.attempt, run.origin, run.tag, run.index);
    let write = |what: &str, text: String| {
        let p = path(&dir, &name, what);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
    };
    write("task", serde_json::to_string(file).map_err(|e| e.to_string())?)?;
    write("run", serde_json::to_string(&run).map_err(|e| e.to_string())?)?;
    let mut cmd = tokio::process::Command::new(supervisor);
    cmd.arg("--task").arg(&dir).arg(&name).process_group(0);
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
    let mut child = cmd.spawn().map_err(|e| format!("cannot start {}: {e}", supervisor.display()))?;
    tokio::spawn(async move {
        let _ = child.wait().await;
        ended();
    });
    Ok(Task { run, name, sent: [0, 0], told_end: false })
}

/// The tasks an earlier agent left here (running or ended), to take up:
/// all of their output is passed on again.
pub fn recorded(state_dir: &Path) -> Vec<Task> {
    let Ok(entries) = std::fs::read_dir(dir(state_dir)) else { return Vec::new() };
    let mut tasks: Vec<Task> = entries
        .filter_map(|e| {
            let file = e.ok()?.file_name().into_string().ok()?;
            let name = file.strip_suffix(".run")?.to_string();
            let text = std::fs::read_to_string(path(&dir(state_dir), &name, "run")).ok()?;
            let run: Run = serde_json::from_str(&text).ok()?;
            Some(Task { run, name, sent: [0, 0], told_end: false })
        })
        .collect();
    tasks.sort_by(|a, b| a.name.cmp(&b.name));
    tasks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spool_is_passed_on_in_pieces_with_offsets_then_its_end_and_again_after_a_resend() {
        let state = tempfile::tempdir().expect("dir");
        let d = dir(state.path());
        std::fs::create_dir_all(&d).expect("dir");
        let run = Run { job: 1, attempt: 1, origin: "h1".into(), tag: 7, index: 0 };
        let name = "1.1.h1.7.0".to_string();
        std::fs::write(path(&d, &name, "run"), serde_json::to_string(&run).expect("json")).expect("run");
        let big = vec![b'x'; PIECE + 10];
        std::fs::write(path(&d, &name, "out"), &big).expect("out");
        std::fs::write(path(&d, &name, "err"), b"oops\n").expect("err");
        let mut tasks = recorded(state.path());
        assert_eq!(tasks.len(), 1);
        let t = &mut tasks[0];
        assert_eq!(t.run, run);
        let summary = |found: Vec<Found>| -> Vec<(String, u64, usize)> {
            found
                .into_iter()
                .map(|f| match f {
                    Found::Output { stderr, offset, data } => {
                        (if stderr { "err" } else { "out" }.into(), offset, data.len())
                    }
                    Found::Ended(code) => (format!("end {code}"), 0, 0),
                })
                .collect()
        };
        assert_eq!(summary(t.take(state.path())), [("out".into(), 0, PIECE), ("err".into(), 0, 5)]);
        assert_eq!(summary(t.take(state.path())), [("out".into(), PIECE as u64, 10)], "no exit yet: no end");
        std::fs::write(path(&d, &name, "exit"), "3").expect("exit");
        assert_eq!(summary(t.take(state.path())), [("end 3".into(), 0, 0)]);
        assert!(summary(t.take(state.path())).is_empty(), "its end once");
        t.resend();
        let again = summary(t.take(state.path()));
        assert_eq!(again[0], ("out".into(), 0, PIECE), "everything again from the start");
        assert_eq!(summary(t.take(state.path())), [("out".into(), PIECE as u64, 10), ("end 3".into(), 0, 0)]);
        t.remove(state.path());
        assert!(recorded(state.path()).is_empty());
    }
}
