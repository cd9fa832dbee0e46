//! A real LSF client: dask-jobqueue's `LSFCluster` (PyPI) starts two
//! workers through allot with a job script of `#BSUB` lines, runs a
//! computation on them and closes them with `bkill`; every directive it
//! wrote must have been applied. CI installs dask-jobqueue; without it the
//! test says why it did not run.

mod common;

use std::process::Command;

use common::{Daemon, allot, stderr, stdout, tempdir};

#[test]
fn dask_jobqueue_runs_two_workers_through_allot_with_every_directive_applied() {
    let has_dask = Command::new("python3").args(["-c", "import dask_jobqueue"]).output();
    if !has_dask.is_ok_and(|o| o.status.success()) {
        eprintln!("dask_jobqueue_runs_two_workers_through_allot: python3 with dask-jobqueue is not here; not run");
        return;
    }
    let dir = tempdir("dask");
    let d = Daemon::start(&dir.join("state"));
    let bin = dir.join("bin");
    let links = Command::new(allot()).arg("install-links").arg(&bin).output().expect("links");
    assert!(links.status.success(), "{}", stderr(&links));
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).expect("logs");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dask/two_workers.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(&logs)
        .env("PATH", &path)
        .env("ALLOT_STATE_DIR", &d.state)
        // The script says -M in MB (lsf_units="mb"), as at a site with
        // this in lsf.conf; bsub reads it from the environment.
        .env("LSF_UNIT_FOR_LIMITS", "MB")
        .current_dir(&dir)
        .output()
        .expect("python3 runs");
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}\n{}", stderr(&out), d.log());
    let jobs: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("job ")).collect();
    assert_eq!(jobs.len(), 2, "{text}");
    for job in jobs {
        // bkill ended it (cluster.close), or it ended when its scheduler went.
        let long = common::wait_until(&d, job, &dir, &[], |l| l.first().is_some_and(|l| !l.contains(" RUN ")));
        let long_form = stdout(&d.cmd(&["bjobs", "-l", job], &dir));
        // -J, -q, -n, -W and -M (1000 MB) as the script wrote them.
        for applied in [
            "Job Name <dask-worker>",
            "Queue <normal>",
            "Started 1 Task(s)",
            "RUNLIMIT\n 30.0 min",
            "MEMLIMIT\n 1000 M",
        ] {
            assert!(long_form.contains(applied), "job {job}: {applied} in {long_form} ({long:?})");
        }
        // -o and -e: `LOG_DIR/<worker name>-%J.out` and `.err`.
        for ext in ["out", "err"] {
            let found = std::fs::read_dir(&logs)
                .expect("logs")
                .flatten()
                .any(|f| f.file_name().to_string_lossy().ends_with(&format!("-{job}.{ext}")));
            assert!(found, "-{} applied for job {job}", &ext[..1]);
        }
    }
}
