//! Parallel jobs outlive every daemon: while an MPI job (MPICH's Hydra
//! over `blaunch`) and a plain `blaunch` job run on three test hosts,
//! allotd is killed with -9 and restarted, the first host's agent is
//! restarted, another host's is, or all three at once. Every job ends
//! DONE with its whole output, each line once, and no task runs twice.
//! Needs mpicc (the Debian package `mpich`, which `.ci/run` installs).

mod common;

use std::path::{Path, PathBuf};

use common::agents::TestCluster;
use common::{Daemon, eventually, lines_of, stderr, submitted_id, tempdir};

/// How many lines each plain task writes, one every 0.3 s.
const LINES: usize = 10;

/// An MPI program whose ranks say they began, wait 3 s, and say they
/// ended.
fn slow_mpi_program(dir: &Path) -> PathBuf {
    let has_mpicc = std::process::Command::new("mpicc").arg("-show").output().is_ok_and(|o| o.status.success());
    assert!(has_mpicc, "needs mpicc: apt-get install mpich (.ci/run installs it)");
    let source = dir.join("slow.c");
    std::fs::write(
        &source,
        "#include <mpi.h>\n#include <stdio.h>\n#include <unistd.h>\nint main(int argc, char **argv) {\n  int rank;\n  \
         MPI_Init(&argc, &argv);\n  MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n  printf(\"rank %d began\\n\", rank);\n  \
         fflush(stdout);\n  sleep(3);\n  MPI_Barrier(MPI_COMM_WORLD);\n  printf(\"rank %d ended\\n\", rank);\n  \
         fflush(stdout);\n  MPI_Finalize();\n  return 0;\n}\n",
    )
    .expect("source");
    let program = dir.join("slow");
    let built = std::process::Command::new("mpicc").arg("-o").arg(&program).arg(&source).output().expect("mpicc");
    assert!(built.status.success(), "{}", stderr(&built));
    program
}

/// The two jobs of a test, each on one slot of each host: (id, output).
struct Jobs {
    mpi: (u64, PathBuf),
    plain: (u64, PathBuf),
    starts: PathBuf,
}

fn submit(d: &Daemon, dir: &Path) -> Jobs {
    let bin = dir.join("bin");
    let links = std::process::Command::new(common::allot()).arg("install-links").arg(&bin).output().expect("runs");
    assert!(links.status.success(), "{}", stderr(&links));
    let program = slow_mpi_program(dir);
    let bsub = |out: &Path, command: &str| {
        let o = std::process::Command::new(common::allot())
            .args(["bsub", "-n", "3", "-R", "span[ptile=1]", "-o", out.to_str().expect("utf-8"), command])
            .env("ALLOT_STATE_DIR", &d.state)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env("LSF_BINDIR", &bin)
            .current_dir(dir)
            .output()
            .expect("bsub");
        submitted_id(&o)
    };
    let starts = dir.join("starts");
    let mpi_out = dir.join("mpi.out");
    let mpi = bsub(&mpi_out, &format!("mpiexec {}", program.display()));
    let plain_out = dir.join("plain.out");
    let task = format!(
        "echo $$ >> {}; i=1; while [ $i -le {LINES} ]; do echo task $$ line $i; i=$((i+1)); sleep 0.3; done",
        starts.display()
    );
    let plain = bsub(&plain_out, &format!("blaunch '{task}'"));
    let jobs = Jobs { mpi: (mpi, mpi_out), plain: (plain, plain_out), starts };
    eventually("both jobs' tasks run on every host", || {
        lines_of(&jobs.starts).len() == 3 && lines_of(&jobs.mpi.1).iter().filter(|l| l.ends_with("began")).count() == 3
    });
    jobs
}

/// Both jobs end DONE, with every line of every task once, and each task
/// started once.
fn check(d: &Daemon, dir: &Path, jobs: &Jobs) {
    for id in [jobs.mpi.0, jobs.plain.0] {
        d.wait_for(id, "DONE", dir);
    }
    let mpi = common::job_output(&jobs.mpi.1).expect("the MPI job's output");
    let mut ranks: Vec<&str> = mpi.lines().filter(|l| l.starts_with("rank ")).collect();
    ranks.sort();
    assert_eq!(
        ranks,
        ["rank 0 began", "rank 0 ended", "rank 1 began", "rank 1 ended", "rank 2 began", "rank 2 ended"],
        "{mpi}"
    );
    let starts = lines_of(&jobs.starts);
    assert_eq!(starts.len(), 3, "each task started once: {starts:?}");
    let plain = common::job_output(&jobs.plain.1).expect("the plain job's output");
    let mut lines: Vec<&str> = plain.lines().filter(|l| l.starts_with("task ")).collect();
    lines.sort();
    let mut expected: Vec<String> =
        starts.iter().flat_map(|pid| (1..=LINES).map(move |i| format!("task {pid} line {i}"))).collect();
    expected.sort();
    assert_eq!(lines, expected, "every line of every task, once: {plain}");
}

fn cluster(dir: &Path) -> TestCluster {
    TestCluster::start(dir, 3, (1, 30, 60))
}

fn restart_allotd(c: &mut TestCluster) {
    if let Some(d) = c.daemon.take() {
        d.kill9();
    }
    c.start_daemon();
}

fn restart_agent(c: &mut TestCluster, host: &str) {
    c.kill9_agent(host);
    c.start_agent(host);
}

#[test]
fn parallel_jobs_outlive_allotd_killed_and_restarted() {
    let dir = tempdir("outlive-allotd");
    let mut c = cluster(&dir);
    let jobs = submit(c.daemon(), &dir);
    restart_allotd(&mut c);
    check(c.daemon(), &dir, &jobs);
}

#[test]
fn parallel_jobs_outlive_their_first_hosts_agent_restarted() {
    let dir = tempdir("outlive-first");
    let mut c = cluster(&dir);
    let jobs = submit(c.daemon(), &dir);
    restart_agent(&mut c, "host1");
    check(c.daemon(), &dir, &jobs);
}

#[test]
fn parallel_jobs_outlive_another_hosts_agent_restarted() {
    let dir = tempdir("outlive-other");
    let mut c = cluster(&dir);
    let jobs = submit(c.daemon(), &dir);
    restart_agent(&mut c, "host2");
    check(c.daemon(), &dir, &jobs);
}

#[test]
fn parallel_jobs_outlive_allotd_and_two_agents_at_once() {
    let dir = tempdir("outlive-all");
    let mut c = cluster(&dir);
    let jobs = submit(c.daemon(), &dir);
    c.kill9_agent("host1");
    c.kill9_agent("host2");
    restart_allotd(&mut c);
    c.start_agent("host1");
    c.start_agent("host2");
    check(c.daemon(), &dir, &jobs);
}
