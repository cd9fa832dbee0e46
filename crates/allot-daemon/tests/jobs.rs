//! The job commands end to end on the real daemon: `bsub` options (`-K`,
//! `-cwd`, `-w`, `-J` arrays, `-sp`, `-env`), job control (`bstop`, `bresume`,
//! `bswitch`, `bmod`, `brequeue`, `bpeek`, `bhist`) and the measure of
//! running jobs.

mod common;

use std::time::{Duration, Instant};

use common::*;

/// `bsub -K` waits and exits with the job's code; `-cwd` and `-P` reach the
/// job and `bjobs -l`/`-json`; options this allot cannot honour yet are
/// refused, not ignored.
#[test]
fn bsub_waits_sets_the_directory_and_refuses_what_it_cannot_honour() {
    let dir = tempdir("bsub");
    let d = Daemon::start(&dir.join("state"));
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let waited = d.cmd(&["bsub", "-K", "-cwd", "work", "-P", "climate", "-J", "probe", "pwd > where; exit 3"], &dir);
    assert_eq!(waited.status.code(), Some(3), "{}", stderr(&waited));
    let text = stdout(&waited);
    assert!(text.contains("<<Waiting for dispatch ...>>\n<<Starting on "), "{text}");
    assert!(text.ends_with("<<Job is finished>>\n"), "{text}");
    assert_eq!(std::fs::read_to_string(work.join("where")).expect("ran in -cwd").trim(), work.display().to_string());
    let id: u64 = text["Job <".len()..text.find('>').expect(">")].parse().expect("id");
    let long = stdout(&d.cmd(&["bjobs", "-l", &id.to_string()], &dir));
    assert!(long.contains(&format!("Job <{id}>, Job Name <probe>, User <")), "{long}");
    assert!(long.contains("Project <climate>, Status <EXIT>"), "{long}");
    assert!(long.contains("Exited with exit code 3."), "{long}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&d.cmd(&["bjobs", "-a", "-json", "-o", "jobid stat exit_code proj_name"], &dir)))
            .expect("bjobs -json is JSON");
    assert_eq!(json["RECORDS"][0]["JOBID"], id.to_string());
    assert_eq!(json["RECORDS"][0]["EXIT_CODE"], "3");
    assert_eq!(json["RECORDS"][0]["PROJ_NAME"], "climate");
    let sp = d.cmd(&["bsub", "-sp", "10", "true"], &dir);
    assert_eq!(
        stderr(&sp),
        "bsub: -sp: user-assigned job priority is not enabled (MAX_USER_PRIORITY in lsb.params). Job not submitted.\n",
        "the embedded defaults have no MAX_USER_PRIORITY"
    );
    // -R: a malformed string is refused with where it went wrong; a job
    // with one runs on what it asked, told its hosts as LSF tells them.
    let bad = d.cmd(&["bsub", "-R", "span[hosts=2]", "true"], &dir);
    assert_eq!(
        stderr(&bad),
        "bsub: -R: column 12: span: expected hosts=1 or hosts=-1, found `2]`. Job not submitted.\n",
        "{}",
        stderr(&bad)
    );
    let never = d.cmd(&["bsub", "-R", "select[maxmem > 0] span[ptile='!',X:1]", "true"], &dir);
    assert!(stderr(&never).contains("`X` is no host type or model"), "{}", stderr(&never));
    let two = d.cmd(
        &["bsub", "-K", "-n", "1,2", "-R", "span[hosts=1]", "-o", "two.out", "echo $LSB_DJOB_NUMPROC: $LSB_MCPU_HOSTS"],
        &dir,
    );
    assert!(two.status.success(), "{}", stderr(&two));
    let ran = job_output(&dir.join("two.out")).expect("output");
    // This machine's CPUs, up to 2; LSB_MCPU_HOSTS is `host slots`.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()).min(2).to_string();
    let words: Vec<&str> = ran.split_whitespace().collect();
    assert_eq!((words.len(), words[0], words[2]), (3, format!("{cpus}:").as_str(), cpus.as_str()), "{ran}");
    let nowhere = d.cmd(&["bsub", "-m", "nosuchhost!", "true"], &dir);
    assert_eq!(
        stderr(&nowhere),
        "bsub: -m: `nosuchhost` is not a host, host group or compute unit of this cluster. Job not submitted.\n"
    );
    let x = d.cmd(&["bsub", "-x", "true"], &dir);
    assert!(!x.status.success());
    assert_eq!(stderr(&x), "bsub: -x: queue `normal` does not accept exclusive jobs (EXCLUSIVE). Job not submitted.\n");
    let app = d.cmd(&["bsub", "-app", "nosuch", "true"], &dir);
    assert!(!app.status.success());
    assert_eq!(stderr(&app), "bsub: -app nosuch: no such application profile (lsb.applications). Job not submitted.\n");
    // A -cwd with patterns is made (0700), and bjobs -l shows it; one
    // without that is not there ends the job before it starts.
    let made = d.cmd(&["bsub", "-K", "-P", "climate", "-cwd", "scratch/%P/%J", "pwd > where"], &dir);
    assert!(made.status.success(), "{}", stderr(&made));
    let made_id = submitted_id(&made);
    let made_dir = dir.join(format!("scratch/climate/{made_id}"));
    assert_eq!(
        std::fs::read_to_string(made_dir.join("where")).expect("ran there").trim(),
        made_dir.display().to_string()
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&made_dir).expect("made").permissions().mode() & 0o777, 0o700);
    let long = stdout(&d.cmd(&["bjobs", "-l", &made_id.to_string()], &dir));
    assert!(long.contains(&format!("Execution CWD <{}>;", made_dir.display())), "the directory it ran in: {long}");
    let lost = d.cmd(&["bsub", "-cwd", "nowhere", "-o", "/tmp/allot-e2e-lost.%J", "pwd"], &dir);
    let lost_id = submitted_id(&lost);
    d.wait_for(lost_id, "EXIT", &dir);
    let why = format!(
        "The job could not start: the working directory {} does not exist (TERM_CWD_NOTEXIST);",
        dir.join("nowhere").display()
    );
    let long = stdout(&d.cmd(&["bjobs", "-l", &lost_id.to_string()], &dir));
    let hist = stdout(&d.cmd(&["bhist", "-l", &lost_id.to_string()], &dir));
    assert!(long.contains(&why) && hist.contains(&why), "{long}\n{hist}");
    let _ = std::fs::remove_file(format!("/tmp/allot-e2e-lost.{lost_id}"));
    assert!(!dir.join("nowhere").exists());
    // A program that is not there, and an -o directory that is not there.
    let missing = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "no-such-program-anywhere", "x"], &dir));
    let no_dir = submitted_id(&d.cmd(&["bsub", "-o", "no/such/dir/out", "true"], &dir));
    d.wait_for(missing, "EXIT", &dir);
    d.wait_for(no_dir, "EXIT", &dir);
    let long = stdout(&d.cmd(&["bjobs", "-l", &missing.to_string()], &dir));
    assert!(
        long.contains("The job could not start: cannot start no-such-program-anywhere: No such file or directory;"),
        "{long}"
    );
    let long = stdout(&d.cmd(&["bjobs", "-l", &no_dir.to_string()], &dir));
    let why = format!("cannot open output file {}: No such file or directory;", dir.join("no/such/dir/out").display());
    assert!(long.contains(&why), "{long}");
    assert!(stdout(&d.cmd(&["bjobs", "-J", "pro*", "-a", "-noheader"], &dir)).contains("probe"));
    assert_eq!(stdout(&d.cmd(&["bjobs", "-J", "nothing*", "-a"], &dir)), "No job found\n");
}

/// `bstop`/`bresume` of pending and running jobs (a stopped job really
/// stops), `bswitch`, `bmod`, `brequeue` of running and finished jobs,
/// `bpeek` and `bhist`; holds and stops survive a kill -9 of allotd.
#[test]
fn stop_resume_switch_modify_requeue_peek_and_history() {
    let dir = tempdir("control");
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("allot.toml"), ONE_HOST).expect("allot.toml");
    std::fs::write(config.join("lsb.queues"), queues(&["normal", "short"])).expect("lsb.queues");
    std::fs::write(config.join("lsb.params"), "Begin Parameters\nMAX_USER_PRIORITY = 20\nEnd Parameters\n")
        .expect("lsb.params");
    let state = dir.join("state");
    let d = Daemon::start_with(&state, Some(&config));
    let ticks = dir.join("ticks");
    let ticker = format!("echo started; while true; do echo x >> {}; sleep 0.05; done", ticks.display());
    let a = submitted_id(&d.cmd(&["bsub", "-o", "out.%J", &ticker], &dir));
    let b = submitted_id(&d.cmd(&["bsub", "sleep", "60"], &dir));
    d.wait_for(a, "RUN", &dir);
    let (sa, sb) = (a.to_string(), b.to_string());

    // bstop: the pending job is held, the running one stops ticking.
    assert_eq!(stdout(&d.cmd(&["bstop", &sb], &dir)), format!("Job <{b}> is being stopped\n"));
    assert_eq!(stdout(&d.cmd(&["bstop", &sa], &dir)), format!("Job <{a}> is being stopped\n"));
    d.wait_for(b, "PSUSP", &dir);
    d.wait_for(a, "USUSP", &dir);
    std::thread::sleep(Duration::from_millis(300));
    let stopped_at = size(&ticks);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(size(&ticks), stopped_at, "a stopped job does not run");
    let again = d.cmd(&["bstop", &sa], &dir);
    assert_eq!(stderr(&again), format!("Job <{a}>: Job has already been suspended\n"));
    let q = stdout(&d.cmd(&["bqueues", "normal"], &dir));
    assert!(q.trim_end().ends_with("2     1     0     1"), "PSUSP counts as pending, USUSP as suspended: {q}");
    let h = stdout(&d.cmd(&["bhosts"], &dir));
    let row: Vec<&str> = h.lines().nth(1).unwrap_or("").split_whitespace().collect();
    assert_eq!(row[4..], ["1", "0", "0", "1", "0"], "NJOBS RUN SSUSP USUSP RSV: {h}");
    let why = stdout(&d.cmd(&["bjobs", "-l", &sb], &dir));
    assert!(why.contains("The job was suspended by the user while pending"), "{why}");

    // Both survive a kill -9 and restart of allotd, still suspended.
    d.kill9();
    let d = Daemon::start_with(&state, Some(&config));
    d.wait_for(b, "PSUSP", &dir);
    d.wait_for(a, "USUSP", &dir);

    // bresume: the job ticks again; the held one may run again.
    assert_eq!(stdout(&d.cmd(&["bresume", &sa], &dir)), format!("Job <{a}> is being resumed\n"));
    d.wait_for(a, "RUN", &dir);
    let deadline = Instant::now() + Duration::from_secs(10);
    while size(&ticks) == stopped_at {
        assert!(Instant::now() < deadline, "a resumed job runs again");
        std::thread::sleep(Duration::from_millis(50));
    }
    let not = d.cmd(&["bresume", &sa], &dir);
    assert_eq!(stderr(&not), format!("Job <{a}>: Job is not suspended\n"));
    assert!(d.cmd(&["bresume", &sb], &dir).status.success());
    d.wait_for(b, "PEND", &dir);

    // bswitch and bmod change a pending job, and refuse what cannot be.
    assert_eq!(stdout(&d.cmd(&["bswitch", "short", &sb], &dir)), format!("Job <{b}> is switched to queue <short>\n"));
    let nosuch = d.cmd(&["bswitch", "nosuch", &sb], &dir);
    assert_eq!(stderr(&nosuch), format!("Job <{b}>: queue `nosuch` does not exist\n"));
    let changed = d.cmd(&["bmod", "-J", "renamed", "-W", "5", &sb], &dir);
    assert_eq!(stdout(&changed), format!("Parameters of job <{b}> are being changed\n"), "{}", stderr(&changed));
    let fields = stdout(&d.cmd(&["bjobs", "-noheader", "-o", "queue job_name runtimelimit", &sb], &dir));
    assert_eq!(fields.split_whitespace().collect::<Vec<_>>(), ["short", "renamed", "5.0", "min"], "{fields}");
    let running = d.cmd(&["bmod", "-J", "x", &sa], &dir);
    assert_eq!(
        stderr(&running),
        format!("Job <{a}>: Job has already started; only its run limit (-W) changes a running job\n")
    );
    // -W of a running job, as LSF allows: bjobs shows the limit in force.
    let limited = d.cmd(&["bmod", "-W", "7", &sa], &dir);
    assert_eq!(stdout(&limited), format!("Parameters of job <{a}> are being changed\n"), "{}", stderr(&limited));
    let fields = stdout(&d.cmd(&["bjobs", "-noheader", "-o", "stat runtimelimit", &sa], &dir));
    assert_eq!(fields.split_whitespace().collect::<Vec<_>>(), ["RUN", "7.0", "min"], "{fields}");
    let long = stdout(&d.cmd(&["bjobs", "-l", &sb], &dir));
    assert!(long.contains("Job Priority <10>,"), "MAX_USER_PRIORITY / 2 by default: {long}");
    assert!(d.cmd(&["bmod", "-sp", "15", &sb], &dir).status.success());
    assert!(stdout(&d.cmd(&["bjobs", "-l", &sb], &dir)).contains("Job Priority <15>,"));
    let over = d.cmd(&["bmod", "-sp", "21", &sb], &dir);
    assert_eq!(stderr(&over), format!("Job <{b}>: -sp 21: a job priority is from 1 to MAX_USER_PRIORITY (20)\n"));
    // Back to the default, so the requeue below keeps submission order.
    assert!(d.cmd(&["bmod", "-spn", &sb], &dir).status.success());
    assert!(stdout(&d.cmd(&["bjobs", "-l", &sb], &dir)).contains("Job Priority <10>,"));
    let too_big = d.cmd(&["bmod", "-n", "2", &sb], &dir);
    assert_eq!(stderr(&too_big), format!("Job <{b}>: -n 2: queue `short` has 1 job slots on its hosts\n"));

    // bpeek shows the running job's output so far.
    let peek = stdout(&d.cmd(&["bpeek", &sa], &dir));
    assert_eq!(peek, "<< output from stdout >>\nstarted\n");
    // -J: the caller's most recent job of that name (`*` as bjobs -J).
    assert_eq!(stdout(&d.cmd(&["bpeek", "-J", "echo started*"], &dir)), peek);
    let unnamed = d.cmd(&["bpeek", "-J", "nothing*"], &dir);
    assert_eq!(stderr(&unnamed), "bpeek: Job <nothing*>: No matching job found\n");
    let pending_peek = d.cmd(&["bpeek", &sb], &dir);
    assert_eq!(stderr(&pending_peek), format!("Job <{b}>: Job has not started yet\n"));

    // brequeue of the running job: killed, pending again, and (submitted
    // first) runs again before the other.
    assert_eq!(stdout(&d.cmd(&["brequeue", &sa], &dir)), format!("Job <{a}> is being requeued\n"));
    let deadline = Instant::now() + Duration::from_secs(20);
    // Each run writes its output and its report (the first one killed).
    let runs = || std::fs::read_to_string(dir.join(format!("out.{a}"))).unwrap_or_default();
    while runs().lines().filter(|l| *l == "started").count() != 2 {
        assert!(Instant::now() < deadline, "the requeued job runs again: {}", d.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    d.wait_for(a, "RUN", &dir);
    d.wait_for(b, "PEND", &dir);
    // Killed, it ends in EXIT; brequeue -e brings it back, held with -H.
    assert!(d.cmd(&["bkill", &sa], &dir).status.success());
    d.wait_for(a, "EXIT", &dir);
    let only_done = d.cmd(&["brequeue", "-d", &sa], &dir);
    assert_eq!(stderr(&only_done), format!("Job <{a}>: Job is EXIT, not in a state asked for\n"));
    assert!(d.cmd(&["brequeue", "-e", "-H", &sa], &dir).status.success());
    d.wait_for(a, "PSUSP", &dir);
    d.wait_for(b, "RUN", &dir);

    // bhist: the whole story from the event log.
    let hist = stdout(&d.cmd(&["bhist", "-l", &sa], &dir));
    for line in [
        &format!("Job <{a}>, User <"),
        "Submitted from host <",
        "Suspended by the user or administrator <",
        "Resumed by the user or administrator <",
        "Requeue requested;",
        "The job is requeued;",
        "Requeued (held);",
        "Summary of time in seconds spent in various states by",
    ] {
        assert!(hist.contains(line), "{line}: {hist}");
    }
    assert_eq!(hist.matches(": Dispatched 1 Task(s) on Host(s) <hostA>").count(), 2, "{hist}");
    let short = stdout(&d.cmd(&["bhist", &sb], &dir));
    assert!(
        short.starts_with("Summary of time in seconds spent in various states:\nJOBID   USER    JOB_NAME  PEND"),
        "{short}"
    );
    assert!(short.contains(&format!("\n{b:<7} ")), "{short}");
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// `bsub -w`: a job waits for its condition (by name or id), says why,
/// and runs once it holds; bad expressions and unknown jobs are refused
/// with where and what.
#[test]
fn bsub_w_dependencies() {
    let dir = tempdir("deps");
    let d = Daemon::start(&dir.join("state"));
    let first = submitted_id(&d.cmd(&["bsub", "-J", "first", "sleep", "1"], &dir));
    let second = submitted_id(&d.cmd(&["bsub", "-w", "done(first) && started(1)", "true"], &dir));
    let why = stdout(&d.cmd(&["bjobs", "-p", &second.to_string()], &dir));
    assert!(why.contains("Job dependency condition not satisfied"), "{why}");
    d.wait_for(first, "DONE", &dir);
    d.wait_for(second, "DONE", &dir);
    let never = submitted_id(&d.cmd(&["bsub", "-w", &format!("exit({first})"), "true"], &dir));
    eventually("the dependency is seen never to be satisfied", || {
        stdout(&d.cmd(&["bjobs", "-p", &never.to_string()], &dir))
            .contains("Dependency condition invalid or never satisfied")
    });

    let refused = |w: &str| {
        let out = d.cmd(&["bsub", "-w", w, "true"], &dir);
        assert!(!out.status.success(), "{w}");
        stderr(&out)
    };
    assert_eq!(refused("done(9999)"), "bsub: -w: job <9999> is not a job of this cluster. Job not submitted.\n");
    assert_eq!(refused("done(nosuch)"), "bsub: -w: no job of yours is named `nosuch`. Job not submitted.\n");
    let syntax = refused("done(12");
    assert!(syntax.starts_with("bsub: -w: column 8: expected `)`"), "{syntax}");
    assert!(syntax.ends_with(". Job not submitted.\n"), "{syntax}");
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

#[test]
fn job_arrays() {
    let dir = tempdir("arrays");
    let d = Daemon::start(&dir.join("state"));
    let cmd = ["echo", "$LSB_JOBID", "$LSB_JOBINDEX", "$LSB_JOBNAME"];
    let mut args = vec!["bsub", "-J", "sims[1-5:2]%1", "-o", "out.%J.%I"];
    args.extend_from_slice(&cmd);
    let id = submitted_id(&d.cmd(&args, &dir));
    let all_done = |l: &[String]| l.len() == 3 && l.iter().all(|x| x.split_whitespace().nth(2) == Some("DONE"));
    let done = wait_until(&d, &id.to_string(), &dir, &[], all_done);
    let names: Vec<&str> = done.iter().map(|l| l.split_whitespace().nth(6).unwrap_or("")).collect();
    assert_eq!(names, ["sims[1]", "sims[3]", "sims[5]"], "{done:?}");
    assert!(done.iter().all(|l| l.starts_with(&format!("{id} "))), "every element shows the array's id: {done:?}");
    for i in [1, 3, 5] {
        let text = job_output(&dir.join(format!("out.{id}.{i}"))).expect("%J and %I expanded");
        assert_eq!(text, format!("{id} {i} sims[{i}]\n"));
        let report = std::fs::read_to_string(dir.join(format!("out.{id}.{i}"))).expect("report");
        assert!(report.contains(&format!("Subject: Job {id}[{i}]: <sims[{i}]> in cluster <allot> Done")), "{report}");
    }
    let one = lines(&d, &format!("{id}[3]"), &dir, &[]);
    assert_eq!(one.len(), 1, "{one:?}");

    // A limit of 1: one runs (of the machine's two or more slots), the
    // others say why.
    let big = submitted_id(&d.cmd(&["bsub", "-J", "hold[1-4]%1", "sleep", "30"], &dir));
    assert_eq!(big, id + 1, "an array takes one job number, as LSF numbers: the next job is the array's + 1");
    let b = big.to_string();
    wait_until(&d, &b, &dir, &["-r"], |l| l.len() == 1);
    let why = stdout(&d.cmd(&["bjobs", "-p", &format!("{big}[3]")], &dir));
    assert!(why.contains("The job array has reached its running element limit"), "{why}");
    assert!(d.cmd(&["bmod", "-J", "%2", &b], &dir).status.success());
    wait_until(&d, &b, &dir, &["-r"], |l| l.len() == 2);
    let summary = stdout(&d.cmd(&["bjobs", "-A", "-noheader", &b], &dir));
    assert!(summary.starts_with(&format!("{big:<7} hold[1-4] ")), "{summary}");
    let killed = d.cmd(&["bkill", &format!("{big}[1]")], &dir);
    assert_eq!(stdout(&killed), format!("Job <{big}[1]> is being terminated\n"));
    wait_until(&d, &format!("{big}[1]"), &dir, &[], |l| l.len() == 1 && l[0].contains(" EXIT "));
    let hist = stdout(&d.cmd(&["bhist", "-l", &format!("{big}[4]")], &dir));
    assert!(hist.starts_with(&format!("Job <{big}[4]>")), "{hist}");
    assert!(hist.contains("Submitted from host") && hist.contains("running element limit <2>"), "{hist}");
    // A dependency on the array waits for every element.
    let after = submitted_id(&d.cmd(&["bsub", "-w", "ended(hold)", "true"], &dir));
    assert_eq!(after, big + 1);
    let why = stdout(&d.cmd(&["bjobs", "-p", &after.to_string()], &dir));
    assert!(why.contains("Job dependency condition not satisfied"), "{why}");

    // The log keeps it all across a kill -9.
    let before = lines(&d, &b, &dir, &[]);
    d.kill9();
    let d = Daemon::start(&dir.join("state"));
    assert_eq!(lines(&d, &b, &dir, &[]), before);
    let killed = d.cmd(&["bkill", &b], &dir);
    let expected: String = (2..=4).map(|i| format!("Job <{big}[{i}]> is being terminated\n")).collect();
    assert_eq!(stdout(&killed), expected, "the whole array, by its id");
    assert_eq!(stderr(&killed), format!("Job <{big}[1]>: Job has already finished\n"));
    d.wait_for(after, "DONE", &dir);
    // Numbering goes on after the restart; an element is named by its
    // array's number.
    let on = submitted_id(&d.cmd(&["bsub", "-w", &format!("done({id}[3])"), "true"], &dir));
    assert_eq!(on, after + 1);
    d.wait_for(on, "DONE", &dir);

    let refused = |j: &str| {
        let out = d.cmd(&["bsub", "-J", j, "true"], &dir);
        assert!(!out.status.success(), "{j}");
        stderr(&out)
    };
    assert_eq!(refused("x[0-3]"), "bsub: -J: column 3: array indices start at 1. Job not submitted.\n");
    assert!(refused("x[1-1001]").contains("MAX_JOB_ARRAY_SIZE (1000)"));
    assert!(refused("x[1-3").starts_with("bsub: -J: column 6: expected `,` or `]`"));
    let missing = d.cmd(&["bkill", &format!("{big}[2]"), &format!("{id}[2]")], &dir);
    assert_eq!(
        stderr(&missing),
        format!("Job <{big}[2]>: Job has already finished\nJob <{id}[2]>: No matching job found\n")
    );
}

/// Running jobs are measured every `usage_interval` seconds: CPU time and
/// memory show in `bjobs` while they run, are charged to fairshare, and
/// the largest memory stays after they end and across a restart.
#[test]
fn running_jobs_cpu_and_memory_are_measured() {
    let dir = tempdir("usage");
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("allot.toml"), format!("{ONE_HOST}\n[daemon]\nusage_interval = 1\n")).expect("toml");
    std::fs::write(config.join("lsb.queues"), queues(&["normal"])).expect("lsb.queues");
    let state = dir.join("state");
    let d = Daemon::start_with(&state, Some(&config));
    // Busy for a while, holding some memory (a shell variable of ~20 MB).
    let burn =
        "x=$(head -c 20000000 /dev/zero | tr '\\0' a); i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done; echo ${#x}";
    let job = submitted_id(&d.cmd(&["bsub", "-o", "out.%J", burn], &dir));
    let seen = wait_until(&d, &job.to_string(), &dir, &["-o", "stat cpu_used mem"], |l| {
        l.first().is_some_and(|x| x.starts_with("RUN") && !x.ends_with('-') && !x.contains(" 0.0 second"))
    });
    let mem: u64 = seen[0].split_whitespace().nth(3).and_then(|m| m.parse().ok()).expect("MEM in Mbytes");
    assert!(mem >= 1, "{seen:?}");
    d.wait_for(job, "DONE", &dir);
    let max = stdout(&d.cmd(&["bjobs", "-a", "-noheader", "-o", "max_mem", &job.to_string()], &dir));
    let max_mb: u64 = max.split_whitespace().next().and_then(|m| m.parse().ok()).expect("MAX_MEM");
    assert!(max_mb >= 20, "a 20 MB variable: {max}");
    d.kill9();
    let d = Daemon::start_with(&state, Some(&config));
    let again = stdout(&d.cmd(&["bjobs", "-a", "-noheader", "-o", "max_mem", &job.to_string()], &dir));
    assert_eq!(again, max, "kept across a restart");
}

/// With cgroup v2 (detected at start), a job is measured over everything
/// it started: a process it leaves behind and never waits for still
/// counts. On a machine without a writable cgroup v2 allotd says so in its
/// log, and there is nothing more to test.
#[test]
fn a_job_is_measured_whole_in_its_cgroup() {
    let dir = tempdir("cgroup");
    let d = Daemon::start(&dir.join("state"));
    if d.log().contains("no writable cgroup v2") {
        eprintln!("no writable cgroup v2 here: {}", d.log());
        return;
    }
    assert!(d.log().contains("jobs run and are measured in cgroup v2"), "{}", d.log());
    // The loop is orphaned at once (its subshell exits): no process of
    // the job ever waits for it, so getrusage never sees it.
    let burn = "( i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done & ) ; sleep 2";
    let job = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", burn], &dir));
    d.wait_for(job, "DONE", &dir);
    let used = stdout(&d.cmd(&["bjobs", "-a", "-noheader", "-o", "cpu_used", &job.to_string()], &dir));
    let secs: f64 = used.split_whitespace().next().and_then(|s| s.parse().ok()).expect("CPU_USED");
    assert!(secs >= 0.2, "the orphaned loop's CPU counts: {used}");
    // With nothing running, allotd's `allot-<tag>` cgroup is gone (a kill
    // -9 now leaves none behind); the next job makes it again and is
    // measured in it.
    let base = allot_exec::cgroup::current()
        .expect("in a cgroup")
        .join(format!("allot-{}", allot_exec::cgroup::tag_of(&dir.join("state"))));
    assert!(!base.exists(), "{} is left while idle", base.display());
    let again = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", burn], &dir));
    d.wait_for(again, "RUN", &dir);
    eventually("allot-<tag> is made again for the job", || base.exists());
    d.wait_for(again, "DONE", &dir);
    let used = stdout(&d.cmd(&["bjobs", "-a", "-noheader", "-o", "cpu_used", &again.to_string()], &dir));
    let secs: f64 = used.split_whitespace().next().and_then(|s| s.parse().ok()).expect("CPU_USED");
    assert!(secs >= 0.2, "measured in the cgroup made again: {used}");
    // allotd killed with -9 while a job runs: the job's supervisor, the
    // last out, removes `allot-<tag>` as it ends.
    let last = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "sleep 1"], &dir));
    d.wait_for(last, "RUN", &dir);
    eventually("allot-<tag> is made for the job", || base.exists());
    d.kill9();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while base.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!base.exists(), "{} is left after the last job ended", base.display());
}

/// `bsub -t` and `-c`: a job that could not finish its CPU limit before
/// its termination deadline pends and says why; one that can, runs; a
/// deadline with every field given and past is refused.
#[test]
fn termination_deadlines_hold_back_jobs_that_cannot_finish() {
    let dir = tempdir("deadline");
    let d = Daemon::start(&dir.join("state"));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs();
    // Three minutes from now, as hour:minute (UTC, the clock allot reads
    // -t on): between 2 and 3 minutes away.
    let soon = now + 180;
    let hm = format!("{}:{:02}", (soon / 3600) % 24, (soon / 60) % 60);
    let late = submitted_id(&d.cmd(&["bsub", "-c", "60", "-t", &hm, "sleep", "1"], &dir));
    let fits = submitted_id(&d.cmd(&["bsub", "-c", "1", "-t", &hm, "true"], &dir));
    d.wait_for(fits, "DONE", &dir);
    let reason = stdout(&d.cmd(&["bjobs", "-p", &late.to_string()], &dir));
    assert!(reason.contains("The job cannot finish before its termination deadline"), "{reason}");
    let past = d.cmd(&["bsub", "-t", "2000:1:1:0:0", "true"], &dir);
    assert!(!past.status.success());
    assert_eq!(stderr(&past), "bsub: -t 2000:1:1:0:0: the time is in the past. Job not submitted.\n");
    assert!(d.cmd(&["bkill", "0"], &dir).status.success());
}

/// A parallel job over two hosts is told its whole allocation as LSF
/// tells it (spec 004, "How LSF Runs Parallel Jobs"): `LSB_HOSTS` one name
/// per slot, `LSB_MCPU_HOSTS` each host with its slots, the first
/// execution host (`-m "hostB! hostA"`) first in both.
#[test]
fn a_job_over_two_hosts_is_told_its_whole_allocation_first_host_first() {
    let dir = tempdir("two-hosts");
    let hosts = "[[hosts]]\nname = \"hostA\"\nncpus = 2\n\n[[hosts]]\nname = \"hostB\"\nncpus = 2\n";
    let config = config_dir(&dir, &[("allot.toml", hosts), ("lsb.queues", &queues(&["normal"]))]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let script = "echo \"$LSB_HOSTS|$LSB_MCPU_HOSTS|$LSB_DJOB_NUMPROC\"";
    let ran = d.cmd(&["bsub", "-K", "-n", "3", "-m", "hostB! hostA", "-o", "alloc.out", script], &dir);
    assert!(ran.status.success(), "{}", stderr(&ran));
    let told = std::fs::read_to_string(dir.join("alloc.out")).expect("output");
    assert_eq!(told.lines().next(), Some("hostB hostB hostA|hostB 2 hostA 1|3"), "{told}");
    // Without a candidate, hosts in order: hostA first.
    let plain = d.cmd(&["bsub", "-K", "-n", "3", "-o", "plain.out", script], &dir);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let told = std::fs::read_to_string(dir.join("plain.out")).expect("output");
    assert_eq!(told.lines().next(), Some("hostA hostA hostB|hostA 2 hostB 1|3"), "{told}");
}

/// REQUEUE_EXIT_VALUES: a job ending with one of its queue's codes goes
/// back to pending and runs again; one that `bkill` ended does not, even
/// with a code in the list (130: `sleep` ends at bkill's first signal,
/// SIGINT).
#[test]
fn jobs_exiting_with_a_requeue_value_run_again() {
    let dir = tempdir("requeue-exit");
    let queue = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nREQUEUE_EXIT_VALUES = 3 EXCLUDE(130)\nEnd Queue\n";
    let config = config_dir(&dir, &[("allot.toml", ONE_HOST), ("lsb.queues", queue)]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let marker = dir.join("ran-once");
    let script = format!("if [ -e {0} ]; then exit 0; else touch {0}; exit 3; fi", marker.display());
    let twice = submitted_id(&d.cmd(&["bsub", &script], &dir));
    d.wait_for(twice, "DONE", &dir);
    assert!(marker.exists(), "the first run exited 3");
    let killed = submitted_id(&d.cmd(&["bsub", "sleep", "600"], &dir));
    d.wait_for(killed, "RUN", &dir);
    assert!(d.cmd(&["bkill", &killed.to_string()], &dir).status.success());
    d.wait_for(killed, "EXIT", &dir);
    let ended = stdout(&d.cmd(&["bhist", "-l", &killed.to_string()], &dir));
    assert!(ended.contains("Exited with exit code 130"), "a listed code, yet not requeued: {ended}");
    let history = stdout(&d.cmd(&["bhist", "-l", &twice.to_string()], &dir));
    assert!(history.contains("Exited with exit code 3") && history.contains("Done successfully"), "{history}");
}

/// `bsub -x` in an EXCLUSIVE=Y queue: the job waits for a host where
/// nothing runs, and while it runs nothing else starts there.
#[test]
fn exclusive_jobs_run_alone_on_their_hosts() {
    let dir = tempdir("exclusive");
    let queue = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEXCLUSIVE = Y\nEnd Queue\n";
    let config = config_dir(&dir, &[("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 2\n"), ("lsb.queues", queue)]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let first = submitted_id(&d.cmd(&["bsub", "sleep", "600"], &dir));
    d.wait_for(first, "RUN", &dir);
    let alone = submitted_id(&d.cmd(&["bsub", "-x", "sleep", "2"], &dir));
    std::thread::sleep(Duration::from_millis(1500));
    d.wait_for(alone, "PEND", &dir);
    assert!(d.cmd(&["bkill", &first.to_string()], &dir).status.success());
    d.wait_for(alone, "RUN", &dir);
    let next = submitted_id(&d.cmd(&["bsub", "true"], &dir));
    std::thread::sleep(Duration::from_millis(500));
    let shown = stdout(&d.cmd(&["bjobs", "-a", "-noheader", &next.to_string()], &dir));
    assert!(shown.contains("PEND"), "one slot free, but the host is the -x job's: {shown}");
    d.wait_for(alone, "DONE", &dir);
    d.wait_for(next, "DONE", &dir);
}

/// CLEAN_PERIOD (3 s here): a finished job leaves `bjobs -a` and `bhist` that long
/// after it ends; a job array goes with its last element; a job that ended
/// more recently stays.
#[test]
fn finished_jobs_are_forgotten_after_the_clean_period() {
    let dir = tempdir("clean-period");
    let params = "Begin Parameters\nCLEAN_PERIOD = 3\nEnd Parameters\n";
    let config =
        config_dir(&dir, &[("allot.toml", ONE_HOST), ("lsb.params", params), ("lsb.queues", &queues(&["normal"]))]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let done = submitted_id(&d.cmd(&["bsub", "true"], &dir));
    let array = submitted_id(&d.cmd(&["bsub", "-J", "a[1-2]", "true"], &dir));
    d.wait_for(done, "DONE", &dir);
    // Its first element ends after `done` (one slot): on a busy machine,
    // not at once.
    d.wait_for(array, "DONE", &dir);
    let shown = stdout(&d.cmd(&["bjobs", "-a", "-noheader", &array.to_string()], &dir));
    assert!(shown.contains("DONE"), "{shown}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = d.cmd(&["bjobs", "-a", &done.to_string()], &dir);
        if stdout(&out) == format!("Job <{done}> is not found\n") {
            break;
        }
        assert!(Instant::now() < deadline, "job {done} never forgotten: {}", stdout(&out));
        std::thread::sleep(Duration::from_millis(100));
    }
    let later = submitted_id(&d.cmd(&["bsub", "true"], &dir));
    d.wait_for(later, "DONE", &dir);
    let history = d.cmd(&["bhist", &done.to_string()], &dir);
    assert!(stderr(&history).contains("No matching job found"), "{}", stderr(&history));
    eventually("the whole array is forgotten", || {
        stdout(&d.cmd(&["bjobs", "-a", &format!("{array}[2]")], &dir)) == format!("Job <{array}[2]> is not found\n")
    });
    d.wait_for(later, "DONE", &dir);
}

/// `bsub -H`: the job is held (PSUSP) from its submission, through a
/// restart, until `bresume` releases it (issue 31).
#[test]
fn bsub_h_submits_a_job_held_until_released() {
    let dir = tempdir("bsub-hold");
    let state = dir.join("state");
    let d = Daemon::start(&state);
    let job = submitted_id(&d.cmd(&["bsub", "-H", "true"], &dir));
    d.wait_for(job, "PSUSP", &dir);
    std::thread::sleep(Duration::from_millis(500));
    d.wait_for(job, "PSUSP", &dir);
    assert!(d.cmd(&["stop"], &dir).status.success());
    drop(d);
    let d = Daemon::start(&state);
    d.wait_for(job, "PSUSP", &dir);
    assert_eq!(stdout(&d.cmd(&["bresume", &job.to_string()], &dir)), format!("Job <{job}> is being resumed\n"));
    d.wait_for(job, "DONE", &dir);
}

/// `bsub -env`: none, all but some (and some set), or only some of the
/// submission environment reach the job; allotd's `LSB_*` and the owner's
/// identity always do, and LSB_DEFAULTQUEUE still chooses the queue.
#[test]
fn bsub_env_chooses_what_the_job_gets() {
    let dir = tempdir("env");
    let d = Daemon::start(&dir.join("state"));
    let bsub = |env_option: &str, out: &str| {
        let o = std::process::Command::new(allot())
            .args(["bsub", "-env", env_option, "-o", out, "env"])
            .env("ALLOT_STATE_DIR", &d.state)
            .env("ALLOT_TEST_KEEP", "kept")
            .env("ALLOT_TEST_DROP", "dropped")
            .env("LSB_DEFAULTQUEUE", "normal")
            .current_dir(&dir)
            .output()
            .expect("bsub");
        let id = submitted_id(&o);
        d.wait_for(id, "DONE", &dir);
        let text = job_output(&dir.join(out)).expect("output");
        let mut vars: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with("ALLOT_TEST_") || l.starts_with("NEW="))
            .map(str::to_string)
            .collect();
        vars.sort();
        assert!(text.contains(&format!("LSB_JOBID={id}\n")) && text.contains("\nUSER="), "{text}");
        vars
    };
    assert_eq!(bsub("none", "none.out"), Vec::<String>::new());
    assert_eq!(
        bsub("all, ~ALLOT_TEST_DROP, NEW='a, b'", "all.out"),
        ["ALLOT_TEST_KEEP=kept", "NEW=a, b"],
        "all but one, one set"
    );
    assert_eq!(bsub("ALLOT_TEST_DROP, NEW=x", "only.out"), ["ALLOT_TEST_DROP=dropped", "NEW=x"]);
    let bad = d.cmd(&["bsub", "-env", "none, PATH", "true"], &dir);
    assert_eq!(stderr(&bad), "bsub: -env: column 5: expected nothing after `none`, found `,`. Job not submitted.\n");
}

/// `bsub -E` and `-Ep` through allotd: the pre-execution command runs
/// before the job, the post-execution one after it, both in the job's
/// output; a failing pre-execution command sends the job back to pending
/// and it runs again, until it has failed MAX_PREEXEC_RETRY times (then it
/// is held, and `bresume` lets it try again); its code 99 ends the job.
#[test]
fn pre_and_post_execution_commands() {
    let dir = tempdir("prepost");
    let config = config_dir(
        &dir,
        &[
            ("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 2\n"),
            ("lsb.queues", "Begin Queue\nQUEUE_NAME = normal\nEnd Queue\n"),
            ("lsb.params", "Begin Parameters\nDEFAULT_QUEUE = normal\nMAX_PREEXEC_RETRY = 3\nEnd Parameters\n"),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let both = &["bsub", "-E", "echo pre", "-Ep", "echo post $LSB_JOBEXIT_STAT", "-o", "both.out", "echo job; exit 3"];
    let job = submitted_id(&d.cmd(both, &dir));
    d.wait_for(job, "EXIT", &dir);
    assert_eq!(job_output(&dir.join("both.out")).expect("output"), "pre\njob\npost 768\n");

    // Fails once, then lets the job run.
    let flaky = "echo try >> flaky.tries; test -e flaky.ok || { touch flaky.ok; exit 1; }";
    let job = submitted_id(&d.cmd(&["bsub", "-E", flaky, "-o", "flaky.out", "echo ran"], &dir));
    d.wait_for(job, "DONE", &dir);
    assert_eq!(lines_of(&dir.join("flaky.tries")).len(), 2, "tried again");
    assert_eq!(job_output(&dir.join("flaky.out")).expect("output"), "ran\n");

    // Always fails: held after three tries; the job never ran.
    let never = &["bsub", "-E", "echo try >> never.tries; exit 1", "-o", "never.out", "touch never.ran"];
    let job = submitted_id(&d.cmd(never, &dir));
    d.wait_for(job, "PSUSP", &dir);
    assert_eq!(lines_of(&dir.join("never.tries")).len(), 3);
    assert!(!dir.join("never.ran").exists());
    let long = stdout(&d.cmd(&["bjobs", "-l", &job.to_string()], &dir));
    let why = "Held after 3 failed tries (MAX_PREEXEC_RETRY): its pre-execution command (-E) exited with 1; \
               bresume lets it try again;";
    assert!(long.contains(why), "{long}");
    // Released, it tries again (once: its tries are used up).
    assert!(d.cmd(&["bresume", &job.to_string()], &dir).status.success());
    eventually("it tries again", || lines_of(&dir.join("never.tries")).len() == 4);
    d.wait_for(job, "PSUSP", &dir);

    // 99: the job ends there, without pending again.
    let job = submitted_id(&d.cmd(&["bsub", "-E", "exit 99", "-o", "abort.out", "touch abort.ran"], &dir));
    d.wait_for(job, "EXIT", &dir);
    assert!(!dir.join("abort.ran").exists());
    let line = stdout(&d.cmd(&["bjobs", "-a", "-noheader", "-o", "jobid stat exit_code", &job.to_string()], &dir));
    assert_eq!(line.split_whitespace().collect::<Vec<_>>(), [job.to_string().as_str(), "EXIT", "99"]);
}

/// `bsub -B -N -u`: mail through lsf.conf's LSB_MAILPROG when the job
/// starts and its report when it ends, as the job's owner; with no mail
/// program, the submission says the mail will not be sent.
#[test]
fn mail_at_start_and_end_through_the_mail_program() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir("mail");
    let sink = dir.join("mails");
    let program = dir.join("fake-sendmail");
    std::fs::write(&program, format!("#!/bin/sh\n{{ echo \"ARGS $* AS $(id -un)\"; cat; }} >> {}\n", sink.display()))
        .expect("program");
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let lsf_conf = format!("LSB_MAILPROG={}\n", program.display());
    let config = config_dir(
        &dir,
        &[
            ("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 1\n"),
            ("lsb.queues", "Begin Queue\nQUEUE_NAME = normal\nEnd Queue\n"),
            ("lsb.params", "Begin Parameters\nDEFAULT_QUEUE = normal\nEnd Parameters\n"),
            ("lsf.conf", &lsf_conf),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let out = d.cmd(&["bsub", "-B", "-N", "-u", "bob@example.org", "-o", "/dev/null", "true"], &dir);
    assert_eq!(stderr(&out), "", "no warning with a mail program");
    let job = submitted_id(&out);
    d.wait_for(job, "DONE", &dir);
    let mails = std::fs::read_to_string(&sink).expect("mailed");
    let me = nix::unistd::User::from_uid(nix::unistd::getuid()).ok().flatten().expect("me").name;
    assert_eq!(mails.matches(&format!("ARGS -oi -- bob@example.org AS {me}\n")).count(), 2, "{mails}");
    assert!(mails.contains(&format!("Subject: Job {job}: <true> in cluster <allot> Started\n")), "{mails}");
    assert!(mails.contains(&format!("Subject: Job {job}: <true> in cluster <allot> Done\n")), "{mails}");

    // An address is never an option of the mail program, from bsub or
    // from any other client.
    let option = d.cmd(&["bsub", "-N", "-u", "-C/tmp/evil.cf", "true"], &dir);
    assert!(stderr(&option).starts_with("bsub: -u -C/tmp/evil.cf: expected a mail address"), "{}", stderr(&option));
    let raw = allot_proto::Submit {
        command: "true".into(),
        cwd: dir.display().to_string(),
        mail: Some(allot_proto::MailAsked { begin: false, end: true, to: Some("-oQ/tmp".into()) }),
        ..allot_proto::Submit::default()
    };
    let mut client = allot_proto::Client::connect(&d.state.join("allotd.sock")).expect("connect");
    let refused = client.call(allot_proto::Request::Submit(Box::new(raw))).expect("answer");
    assert!(
        matches!(&refused, allot_proto::Response::Error(e) if e.starts_with("-u -oQ/tmp: expected a mail address")),
        "{refused:?}"
    );

    // No mail program: the job is taken, and its submitter told.
    std::fs::write(config.join("lsf.conf"), "LSB_MAILPROG=/no/such/mailer\n").expect("lsf.conf");
    assert!(d.cmd(&["badmin", "reconfig"], &dir).status.success());
    let out = d.cmd(&["bsub", "-N", "true"], &dir);
    assert!(out.status.success());
    assert_eq!(
        stderr(&out),
        "bsub: warning: -N: this cluster has no mail program (LSB_MAILPROG in lsf.conf, or sendmail): the job runs, \
         and its mail is not sent\n"
    );
    d.wait_for(submitted_id(&out), "DONE", &dir);
}
