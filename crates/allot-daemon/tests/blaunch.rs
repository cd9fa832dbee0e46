//! `blaunch` across the hosts of a job's allocation: tasks through the
//! agents, their output the job's, refused outside the job or its hosts,
//! ended with the job everywhere; and a real MPI program over test hosts.

mod common;

use std::path::Path;

use common::agents::TestCluster;
use common::{Daemon, Throwaway, alive, eventually, lines_of, stderr, stdout, submitted_id, tempdir};
use nix::sys::signal::Signal;

fn root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

/// A directory of links for the LSF commands (`blaunch` among them), for
/// a job's PATH and LSF_BINDIR.
fn links(dir: &Path) -> std::path::PathBuf {
    let bin = dir.join("bin");
    let out = std::process::Command::new(common::allot()).arg("install-links").arg(&bin).output().expect("runs");
    assert!(out.status.success(), "{}", stderr(&out));
    bin
}

/// `bsub ARGS` as a user whose PATH and LSF_BINDIR have the LSF commands
/// of `bin` (blaunch among them), from `dir`: the job's id.
fn bsub_with(d: &Daemon, bin: &Path, dir: &Path, args: &[&str]) -> u64 {
    let out = std::process::Command::new(common::allot())
        .arg("bsub")
        .args(args)
        .env("ALLOT_STATE_DIR", &d.state)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("LSF_BINDIR", bin)
        .current_dir(dir)
        .output()
        .expect("bsub");
    submitted_id(&out)
}

#[test]
fn blaunch_runs_a_task_on_each_host_named_and_its_output_is_the_jobs() {
    let dir = tempdir("blaunch-tasks");
    let c = TestCluster::start(&dir, 3, (1, 30, 60));
    let d = c.daemon();
    let bin = links(&dir);
    let out = dir.join("out");
    let script = "blaunch -z \"host2 host3\" 'echo task $LSB_JOBID on $(hostname)'; echo first=$?; \
                  blaunch host2 'exit 3'; echo second=$?; \
                  blaunch -z host9 true; echo third=$?; \
                  blaunch hostname | wc -l; \
                  wc -l < $LSB_DJOB_HOSTFILE; \
                  blaunch host2 'echo hostfile $(wc -l < $LSB_DJOB_HOSTFILE) $LSB_DJOB_HOSTFILE'";
    let id = bsub_with(d, &bin, &dir, &["-n", "6", "-R", "span[ptile=2]", "-o", out.to_str().expect("utf-8"), script]);
    d.wait_for(id, "DONE", &dir);
    let text = lines_of(&out);
    let tasks: Vec<&String> = text.iter().filter(|l| l.starts_with("task ")).collect();
    assert_eq!(tasks.len(), 2, "{text:?}");
    if root() {
        let mut hosts: Vec<&str> = tasks.iter().filter_map(|l| l.rsplit(' ').next()).collect();
        hosts.sort();
        assert_eq!(hosts, ["host2", "host3"], "each test host names itself: {text:?}");
    }
    assert!(tasks.iter().all(|l| l.starts_with(&format!("task {id} on"))), "the job's environment: {text:?}");
    assert!(text.contains(&"first=0".to_string()), "{text:?}");
    assert!(text.contains(&"second=3".to_string()), "a task's exit is blaunch's: {text:?}");
    assert!(text.contains(&"third=1".to_string()), "a host not of the job is refused: {text:?}");
    assert!(text.iter().any(|l| l.contains("blaunch: host host9 is not of job")), "{text:?}");
    // No host: one task per slot; the host file has a line per slot.
    assert_eq!(text.iter().filter(|l| l.trim() == "6").count(), 2, "{text:?}");
    // On every host of the job, a host file of that host's.
    let on_host2 = format!("hostfile 6 {}", c.agent_state("host2").join("hostfiles").display());
    assert!(text.iter().any(|l| l.starts_with(&on_host2)), "{text:?}");

    // Outside a job: refused.
    let outside = d.cmd(&["blaunch", "host1", "true"], &dir);
    assert!(!outside.status.success());
    assert!(stderr(&outside).contains("blaunch: not within a job"), "{}", stderr(&outside));
}

/// `-M` holds a job's memory on all its hosts together; with `-hl`, each
/// host's part: two hosts' 120 MB each pass a 200 MB limit per host, and
/// not one of 200 MB for the job.
#[test]
fn with_hl_the_memory_limit_is_each_hosts() {
    let dir = tempdir("blaunch-hl");
    let c = TestCluster::start(&dir, 2, (1, 30, 60));
    let d = c.daemon();
    let bin = links(&dir);
    let hog = "python3 -c 'import time; x = bytearray(120 << 20); time.sleep(12)'";
    let script = format!("blaunch host2 \"{hog}\" & {hog}; wait");
    let spread = ["-n", "2", "-R", "span[ptile=1]", "-M", "200MB", "-o", "/dev/null"];
    let whole = bsub_with(d, &bin, &dir, &[&spread[..], &[script.as_str()]].concat());
    let per_host = bsub_with(d, &bin, &dir, &[&spread[..], &["-hl", script.as_str()]].concat());
    d.wait_for(whole, "EXIT", &dir);
    let long = stdout(&d.cmd(&["bjobs", "-l", &whole.to_string()], &dir));
    assert!(long.contains("TERM_MEMLIMIT"), "{long}");
    d.wait_for(per_host, "DONE", &dir);
}

/// spec 004's `bsub -n 10 'lsgrun -p -m "$LSB_HOSTS" myjob'`: `lsgrun`
/// runs its command once per host named (each slot with `$LSB_HOSTS`),
/// all at once with `-p`, one after another without, through the agents;
/// outside a job it is refused.
#[test]
fn lsgrun_runs_its_command_on_each_host_named() {
    let dir = tempdir("lsgrun");
    let c = TestCluster::start(&dir, 2, (1, 30, 60));
    let d = c.daemon();
    let bin = links(&dir);
    let out = dir.join("out");
    let script = "lsgrun -p -m \"$LSB_HOSTS\" 'echo slot on $(hostname)'; echo parallel=$?; \
                  lsgrun -m \"host2 host1\" 'echo one on $(hostname)'; echo sequential=$?; \
                  lsgrun -m host2 'exit 4'; echo failed=$?";
    let id = bsub_with(d, &bin, &dir, &["-n", "4", "-R", "span[ptile=2]", "-o", out.to_str().expect("utf-8"), script]);
    d.wait_for(id, "DONE", &dir);
    let text = lines_of(&out);
    assert_eq!(text.iter().filter(|l| l.starts_with("slot on ")).count(), 4, "one per slot: {text:?}");
    let ones: Vec<&String> = text.iter().filter(|l| l.starts_with("one on ")).collect();
    assert_eq!(ones.len(), 2, "{text:?}");
    if root() {
        assert_eq!(ones, ["one on host2", "one on host1"], "one host after the other, in order: {text:?}");
    }
    for said in ["parallel=0", "sequential=0", "failed=4"] {
        assert!(text.contains(&said.to_string()), "{said}: {text:?}");
    }
    let outside = d.cmd(&["lsgrun", "-m", "host1", "true"], &dir);
    assert!(stderr(&outside).contains("lsgrun: not within a job"), "{}", stderr(&outside));
}

/// A 4-slot job on host1 and host2 whose first process runs a task on
/// host2 through `blaunch`, both sleeping: its id, and the two processes.
fn a_job_with_a_task_on_host2(d: &Daemon, dir: &Path) -> (u64, Vec<i32>) {
    let bin = links(dir);
    let pids = dir.join("pids");
    let script =
        format!("echo $$ >> {0}; blaunch host2 'echo $$ >> {0}; exec sleep 60' & exec sleep 60", pids.display());
    let id = bsub_with(d, &bin, dir, &["-n", "4", "-R", "span[ptile=2]", &script]);
    eventually("the job and its task run", || lines_of(&pids).len() == 2);
    (id, lines_of(&pids).iter().map(|p| p.parse().expect("pid")).collect())
}

#[test]
fn a_job_s_tasks_end_with_it_on_every_host_and_only_its_owner_launches_them() {
    let dir = tempdir("blaunch-kill");
    let c = TestCluster::start(&dir, 2, (1, 30, 60));
    let d = c.daemon();
    let (id, running) = a_job_with_a_task_on_host2(d, &dir);

    // Another user may not launch tasks of this job through the agent.
    {
        let stranger = Throwaway::new("blaunch", "bl");
        use std::os::unix::fs::PermissionsExt;
        for p in [&*dir, &dir.join("agents"), &c.agent_state("host1")] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o711)).expect("chmod");
        }
        let socket = allot_agent::tasks::socket_path(&c.agent_state("host1"));
        use std::os::unix::process::CommandExt;
        let tried = std::process::Command::new(common::allot())
            .args(["blaunch", "host2", "touch /tmp/should-not-exist-allot"])
            .env("ALLOT_JOB", id.to_string())
            .env("ALLOT_ATTEMPT", "1")
            .env("LSB_HOSTS", "host1 host1 host2 host2")
            .env("ALLOT_AGENT_SOCKET", &socket)
            .current_dir("/")
            .uid(stranger.uid)
            .gid(stranger.gid)
            .output()
            .expect("runs");
        assert!(!tried.status.success());
        assert!(stderr(&tried).contains("is not yours"), "{}", stderr(&tried));
    }

    let killed = d.cmd(&["bkill", &id.to_string()], &dir);
    assert!(killed.status.success(), "{}", stdout(&killed));
    d.wait_for(id, "EXIT", &dir);
    eventually("the job and its task on the other host end", || running.iter().all(|&p| !alive(p)));
    eventually("no host keeps anything of it", || {
        c.held("host1").is_empty()
            && std::fs::read_dir(c.agent_state("host2").join("tasks")).map_or(0, |e| e.count()) == 0
    });
}

/// A task that leaves its process group and session on another host (a
/// daemon it starts) is killed there with the job's run, whether the job
/// ends or is killed: the agent starts a run's tasks in a cgroup of their
/// own and kills everything in it. Needs root (the agents' cgroups).
#[test]
fn what_a_task_leaves_on_another_host_ends_with_the_job() {
    assert!(root(), "needs root, for the agents' cgroups (CI runs as root)");
    let dir = tempdir("blaunch-leftovers");
    let c = TestCluster::start(&dir, 2, (1, 30, 60));
    let d = c.daemon();
    let bin = links(&dir);
    let leaving = |p: &Path| format!("setsid sh -c 'echo \\$\\$ >> {}; exec sleep 300' >/dev/null 2>&1 &", p.display());
    let ended = dir.join("ended");
    let script =
        format!("blaunch host2 \"{}\"; while [ ! -s {} ]; do sleep 0.05; done", leaving(&ended), ended.display());
    let id = bsub_with(d, &bin, &dir, &["-n", "4", "-R", "span[ptile=2]", "-o", "/dev/null", &script]);
    eventually("the task's daemon runs", || lines_of(&ended).len() == 1);
    let left: i32 = lines_of(&ended)[0].parse().expect("pid");
    d.wait_for(id, "DONE", &dir);
    eventually("what the task left on host2 ends with the job", || !alive(left));

    let killed = dir.join("killed");
    let script = format!("blaunch host2 \"{} exec sleep 300\" & exec sleep 300", leaving(&killed));
    let id = bsub_with(d, &bin, &dir, &["-n", "4", "-R", "span[ptile=2]", "-o", "/dev/null", &script]);
    eventually("the task's daemon runs", || lines_of(&killed).len() == 1);
    let left: i32 = lines_of(&killed)[0].parse().expect("pid");
    assert!(d.cmd(&["bkill", &id.to_string()], &dir).status.success());
    d.wait_for(id, "EXIT", &dir);
    eventually("what the task left on host2 ends with the killed job", || !alive(left));
}

/// A job whose work is all in a task on another host: its CPU time is the
/// sum over its hosts while it runs and after it ends (`bjobs -l`,
/// `bhist -l`, `bacct` read what its end recorded). Needs root (the
/// agents' cgroups count a task's CPU after it ended).
#[test]
fn a_multi_host_job_is_charged_the_cpu_time_of_every_host() {
    assert!(root(), "needs root, for the agents' cgroups (CI runs as root)");
    let dir = tempdir("blaunch-cpu");
    let c = TestCluster::start(&dir, 2, (1, 30, 60));
    let d = c.daemon();
    let bin = links(&dir);
    let script = "blaunch host2 \"timeout 3 sh -c 'while :; do :; done'; true\"";
    let out = dir.join("out");
    let id = bsub_with(d, &bin, &dir, &["-n", "4", "-R", "span[ptile=2]", "-o", out.to_str().expect("utf-8"), script]);
    d.wait_for(id, "DONE", &dir);
    let after = |text: &str, what: &str| -> f64 {
        text.split(what)
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {what:?} in {text}"))
    };
    // Up to 3 s of CPU on host2 (less on a loaded machine); its first
    // host, which only waits, uses next to none. After its end, in every
    // account of it: bjobs -l, bhist -l, bacct -l, and its report.
    let long = stdout(&d.cmd(&["bjobs", "-l", &id.to_string()], &dir));
    let cpu = after(&long, "The CPU time used is ");
    assert!(cpu >= 0.3, "the CPU time of its task on host2 is the job's: {cpu} s in {long}");
    let hist = stdout(&d.cmd(&["bhist", "-l", &id.to_string()], &dir));
    assert_eq!(after(&hist, "The CPU time used is "), cpu, "{hist}");
    let acct = stdout(&d.cmd(&["bacct", "-l", &id.to_string()], &dir));
    let row = acct.lines().skip_while(|l| !l.contains("CPU_T")).nth(1).unwrap_or_else(|| panic!("{acct}"));
    let acct_cpu: f64 = row.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{acct}"));
    // bjobs and bhist show tenths (as LSF's do), bacct and the report
    // hundredths: the same time, each rounded as it shows it.
    assert!((acct_cpu - cpu).abs() <= 0.05 + 1e-9, "bacct: {acct_cpu} against bjobs' {cpu}: {acct}");
    let report = std::fs::read_to_string(&out).expect("the job's report");
    let reported = after(&report, "CPU time :");
    assert!(
        (reported - acct_cpu).abs() <= 0.01 + 1e-9,
        "the job's report: {reported} against bacct's {acct_cpu}: {report}"
    );
}

#[test]
fn a_host_lost_during_a_blaunch_ends_the_whole_job_on_every_host() {
    let dir = tempdir("blaunch-lost");
    let c = TestCluster::start(&dir, 2, (1, 2, 4));
    let d = c.daemon();
    let (id, running) = a_job_with_a_task_on_host2(d, &dir);
    c.signal_agent("host2", Signal::SIGSTOP);
    c.wait_host("host2", "unavail");
    d.wait_for(id, "EXIT", &dir);
    let long = stdout(&d.cmd(&["bjobs", "-l", &id.to_string()], &dir));
    assert!(long.contains("The job was lost: host host2 became unavailable"), "{long}");
    // Its first host ends it at once; the lost one when it is back.
    eventually("the job's processes on host1 end", || !alive(running[0]));
    c.signal_agent("host2", Signal::SIGCONT);
    c.wait_host("host2", "ok");
    eventually("its task on host2 ends when host2 is back", || !alive(running[1]));
    eventually("nothing is left of it anywhere", || {
        c.held("host1").is_empty()
            && c.held("host2").is_empty()
            && std::fs::read_dir(c.agent_state("host2").join("tasks")).map_or(0, |e| e.count()) == 0
    });
}

/// MPICH's mpiexec (Hydra) starts its proxies through `blaunch` under
/// LSF: a 6-rank program on 3 test hosts, two ranks each, each rank on
/// the host it names. Needs root (test hosts by name) and mpicc (the
/// Debian package `mpich`, which `.ci/run` installs).
#[test]
fn an_mpi_program_runs_its_ranks_on_the_hosts_of_its_allocation() {
    let has_mpicc = std::process::Command::new("mpicc").arg("-show").output().is_ok_and(|o| o.status.success());
    common::needs_root("an_mpi_program_runs_its_ranks_on_the_hosts_of_its_allocation", "for test hosts by name");
    if !has_mpicc {
        // A tool the test needs, not a privilege: .ci/run installs it.
        eprintln!(
            "an_mpi_program_runs_its_ranks_on_the_hosts_of_its_allocation: needs mpicc (apt-get install mpich); not run"
        );
        return;
    }
    let dir = tempdir("blaunch-mpi");
    let c = TestCluster::start(&dir, 3, (1, 30, 60));
    let d = c.daemon();
    let bin = links(&dir);
    let source = dir.join("hello.c");
    std::fs::write(
        &source,
        "#include <mpi.h>\n#include <stdio.h>\nint main(int argc, char **argv) {\n  int rank, size, len;\n  \
         char name[MPI_MAX_PROCESSOR_NAME];\n  MPI_Init(&argc, &argv);\n  MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n  \
         MPI_Comm_size(MPI_COMM_WORLD, &size);\n  MPI_Get_processor_name(name, &len);\n  \
         printf(\"rank %d of %d on %s\\n\", rank, size, name);\n  MPI_Finalize();\n  return 0;\n}\n",
    )
    .expect("source");
    let built =
        std::process::Command::new("mpicc").arg("-o").arg(dir.join("hello")).arg(&source).output().expect("mpicc");
    assert!(built.status.success(), "{}", stderr(&built));
    let out = dir.join("out");
    let id = bsub_with(
        d,
        &bin,
        &dir,
        &["-n", "6", "-R", "span[ptile=2]", "-o", out.to_str().expect("utf-8"), "mpiexec ./hello"],
    );
    d.wait_for(id, "DONE", &dir);
    let mut ranks: Vec<String> = lines_of(&out).into_iter().filter(|l| l.starts_with("rank ")).collect();
    ranks.sort();
    assert_eq!(
        ranks,
        [
            "rank 0 of 6 on host1",
            "rank 1 of 6 on host1",
            "rank 2 of 6 on host2",
            "rank 3 of 6 on host2",
            "rank 4 of 6 on host3",
            "rank 5 of 6 on host3"
        ],
        "{:?}",
        lines_of(&out)
    );
}

/// A user's job launches its tasks as that user, on the other host too:
/// the agent's socket is reachable for them (its state directory is 0711),
/// and the task runs with their identity.
#[test]
fn a_users_job_launches_its_tasks_as_that_user() {
    let user = Throwaway::new("blaunch-user", "bu");
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir("blaunch-user");
    // The cluster's files stay root's; the user works in a directory of
    // their own.
    let c = TestCluster::start(&dir, 2, (1, 30, 60));
    let d = c.daemon();
    std::fs::set_permissions(&*dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let agents = dir.join("agents");
    std::fs::set_permissions(&agents, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mode = std::fs::metadata(c.agent_state("host1")).expect("state dir").permissions().mode() & 0o777;
    assert_eq!(mode, 0o711, "an agent's state directory: its socket reachable, nothing else");
    let work = dir.join("work");
    std::fs::create_dir(&work).expect("work");
    std::os::unix::fs::chown(&work, Some(user.uid), Some(user.gid)).expect("chown");
    let bin = links(&dir);
    let out = work.join("out");
    use std::os::unix::process::CommandExt;
    let submitted = std::process::Command::new(common::allot())
        .args(["bsub", "-n", "4", "-R", "span[ptile=2]", "-o", out.to_str().expect("utf-8")])
        .arg("blaunch host2 'echo task $(id -un)'; echo exit=$?")
        .env("ALLOT_STATE_DIR", &d.state)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .current_dir(&work)
        .uid(user.uid)
        .gid(user.gid)
        .output()
        .expect("bsub");
    let id = submitted_id(&submitted);
    d.wait_for(id, "DONE", &work);
    let text = lines_of(&out);
    assert!(text.contains(&format!("task {}", user.name)), "{text:?}");
    assert!(text.contains(&"exit=0".to_string()), "{text:?}");
}

/// A task's spool is bounded (the agents' `--task-spool-mb`, here 1 MiB):
/// what a task writes past it is dropped, and said in the job's output,
/// never silently; what it wrote before comes whole.
#[test]
fn a_tasks_output_past_its_spools_bound_is_dropped_and_said() {
    let dir = tempdir("blaunch-spool-bound");
    let mut c = TestCluster::configured(&dir, 2, (1, 30, 60), "");
    c.agent_env.push(("ALLOT_TASK_SPOOL_MB".into(), "1".into()));
    c.start_all(2);
    let d = c.daemon();
    let bin = links(&dir);
    let out = dir.join("out");
    let task = "head -c 3000000 /dev/zero | tr \"\\\\0\" x; echo; echo tail-of-task";
    let script = format!("blaunch host2 '{task}'; echo blaunch=$?");
    let id = bsub_with(d, &bin, &dir, &["-n", "2", "-R", "span[ptile=1]", "-o", out.to_str().expect("utf-8"), &script]);
    d.wait_for(id, "DONE", &dir);
    let text = String::from_utf8_lossy(&std::fs::read(&out).expect("output")).into_owned();
    // The job's output, without the report after it.
    let text = text.split("\n------------------------------------------------------------\nSender").next().expect("");
    assert_eq!(text.bytes().filter(|&b| b == b'x').count(), 1 << 20, "the first MiB, whole");
    assert!(!text.contains("tail-of-task"), "past the bound: dropped");
    assert!(
        text.contains("this task's output past 1 MiB of a stream was dropped (1951438 bytes of standard output, 0 of"),
        "said: {}",
        &text[text.len().saturating_sub(2000)..]
    );
    assert!(text.contains("blaunch=0"), "the task's exit is its own");
}

/// One user holding 256 connections to a host's `blaunch` socket (all it
/// served before) stops no other user's `blaunch`: one user holds a
/// quarter of it at most. Connections by perl's IO::Socket::UNIX
/// (perl-base), as that user.
#[test]
fn one_user_holding_an_agents_socket_stops_no_other_users_blaunch() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let mallory = Throwaway::new("one_user_holding_an_agents_socket", "hm");
    let alice = Throwaway::new("one_user_holding_an_agents_socket", "ha");
    let dir = tempdir("blaunch-held");
    let c = TestCluster::start(&dir, 1, (1, 30, 60));
    let bin = links(&dir);
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    for p in [dir.to_path_buf(), dir.join("agents"), c.agent_state("host1"), bin.clone()] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let hold = r#"
        use IO::Socket::UNIX; my ($path, $n) = @ARGV; my @s;
        for (1..$n) { my $c = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path) or last; push @s, $c; }
        print "opened ", scalar(@s), "\n"; STDOUT->flush; sleep 60;
    "#;
    let (mut flood, said) =
        common::perl_as(&mallory, hold, &allot_agent::tasks::socket_path(&c.agent_state("host1")), 256);
    assert_eq!(said, "opened 256");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = work.join("out");
    let submitted = std::process::Command::new(common::allot())
        .args(["bsub", "-o", out.to_str().expect("utf-8"), "blaunch host1 echo task ran"])
        .env("ALLOT_STATE_DIR", &c.daemon().state)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .current_dir(&work)
        .uid(alice.uid)
        .gid(alice.gid)
        .output()
        .expect("bsub");
    let id = submitted_id(&submitted);
    c.daemon().wait_for(id, "DONE", &dir);
    assert!(lines_of(&out).iter().any(|l| l == "task ran"), "{:?}", lines_of(&out));
    let _ = flood.kill();
    let _ = flood.wait();
}
