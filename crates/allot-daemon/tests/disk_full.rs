//! A full state disk: allotd stays up, refuses what needs a write with a
//! clear error, keeps answering reads, loses no acknowledged job, and goes
//! on when there is room again. The state directory is a small tmpfs made
//! for the test (root, as CI runs; otherwise the test fails, saying so).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Daemon, eventually, stderr, stdout, submitted_id, tempdir};

/// A tmpfs of `size` mounted on `dir`, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).expect("mount point");
        let done =
            Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(dir).status();
        done.is_ok_and(|s| s.success()).then(|| Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("--lazy").arg(&self.0).status();
    }
}

/// Fills the file system of `dir` with one file; returns it.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let filler = dir.join("filler");
    let mut f = std::fs::File::create(&filler).expect("filler");
    let block = vec![0u8; 64 << 10];
    while f.write_all(&block).is_ok() {}
    let small = [0u8; 512];
    while f.write_all(&small).is_ok() {}
    let _ = f.sync_all();
    filler
}

#[test]
fn a_full_state_disk_refuses_writes_answers_reads_and_recovers() {
    common::needs_root("a_full_state_disk_refuses_writes_answers_reads_and_recovers", "to mount a small file system");
    let dir = tempdir("disk-full");
    let state = dir.join("state");
    let _mounted = Tmpfs::mount(&state, "4m").expect("a 4 MiB tmpfs for the state directory");
    let d = Daemon::start(&state);
    let mut acknowledged = vec![submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "sleep", "300"], &dir))];
    // Running, its process group known, before the disk fills: a job
    // launched on a full disk ends at once (it cannot write its spec).
    d.wait_for(acknowledged[0], "RUN", &dir);
    let pgid = state.join("jobs").join(format!("{}.pgid", acknowledged[0]));
    eventually("the first job's process group is known", || pgid.exists());
    let filler = fill(&state);
    // Submissions go on until the log needs room it cannot have.
    let mut refused = None;
    for _ in 0..400 {
        let out = d.cmd(&["bsub", "-o", "/dev/null", "-q", "normal", "true"], &dir);
        if out.status.success() {
            acknowledged.push(submitted_id(&out));
        } else {
            refused = Some(stderr(&out));
            break;
        }
    }
    let refused = refused.expect("a submission was refused");
    assert_eq!(refused, "bsub: cannot record the job: no space left on the state disk. Job not submitted.\n");
    // Still up, still answering, every acknowledged job there.
    let all = stdout(&d.cmd(&["bjobs", "-a", "-noheader", "-u", "all"], &dir));
    for id in &acknowledged {
        assert!(all.lines().any(|l| l.split_whitespace().next() == Some(&id.to_string())), "job {id} lost: {all}");
    }
    let kill = d.cmd(&["bkill", &acknowledged[0].to_string()], &dir);
    assert!(!kill.status.success());
    assert!(stderr(&kill).contains("cannot record the change: no space left on the state disk"), "{}", stderr(&kill));
    // Room again: allotd takes changes and runs jobs.
    std::fs::remove_file(&filler).expect("room");
    let id = std::cell::Cell::new(None);
    eventually("submissions are taken again", || {
        let out = d.cmd(&["bsub", "-o", "/dev/null", "true"], &dir);
        if out.status.success() {
            id.set(Some(submitted_id(&out)));
        }
        out.status.success()
    });
    let after = id.get().expect("submitted");
    d.wait_for(after, "DONE", &dir);
    assert!(d.cmd(&["bkill", &acknowledged[0].to_string()], &dir).status.success());
    d.wait_for(acknowledged[0], "EXIT", &dir);
}
