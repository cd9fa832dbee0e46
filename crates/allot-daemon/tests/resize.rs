//! Resizable jobs on a live allotd (spec 004, "Job Allocations that Grow
//! and Shrink"): an autoresizable job grows as slots free, its resize
//! notification command runs as its owner with LSB_RESIZE_EVENT and
//! LSB_RESIZE_HOSTS, `bresize release` shrinks it (after the command
//! says yes), never off its first execution host, and `bhist` shows it.

mod common;

use common::{Daemon, config_dir, eventually, stderr, stdout, submitted_id, tempdir};

#[test]
fn an_autoresizable_job_grows_and_a_release_shrinks_it() {
    let dir = tempdir("resize");
    let log = dir.join("notify.log");
    let apps = format!(
        "Begin Application\nNAME = grow\nRESIZABLE_JOBS = auto\n\
         RESIZE_NOTIFY_CMD = echo $LSB_RESIZE_EVENT $LSB_RESIZE_HOSTS $LSB_RESIZE_NOTIFY_OK >> {}; \
         if [ $LSB_RESIZE_EVENT = shrink ]; then sleep 1; fi\nEnd Application\n",
        log.display()
    );
    let config = config_dir(
        &dir,
        &[
            ("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 1\n\n[[hosts]]\nname = \"hostB\"\nncpus = 2\n"),
            ("lsb.queues", "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n"),
            ("lsb.applications", &apps),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let flag = dir.join("go");
    let wait = format!("while [ ! -e {} ]; do sleep 0.1; done", flag.display());
    let blocker =
        submitted_id(&d.cmd(&["bsub", "-n", "2", "-R", "select[hname==hostB]", "-o", "/dev/null", &wait], &dir));
    d.wait_for(blocker, "RUN", &dir);
    let job = submitted_id(&d.cmd(&["bsub", "-app", "grow", "-n", "1,3", "-o", "/dev/null", "sleep 60"], &dir));
    d.wait_for(job, "RUN", &dir);
    let slots = |d: &Daemon| {
        let long = stdout(&d.cmd(&["bjobs", "-l", &job.to_string()], &dir));
        long.split("Started ").nth(1).and_then(|s| s.split(' ').next()).map(str::to_string).unwrap_or_default()
    };
    assert_eq!(slots(&d), "1", "hostA's one slot to start");
    let long = stdout(&d.cmd(&["bjobs", "-l", &job.to_string()], &dir));
    assert!(long.contains(" PENDING RESIZE REQUEST:\n 2 more slot(s), up to the job's maximum;"), "{long}");
    std::fs::write(&flag, b"").expect("flag");
    d.wait_for(blocker, "DONE", &dir);
    eventually("it grows onto hostB's 2 and its command is told", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("grow hostB 2 0"))
    });
    eventually("bhist shows the grow", || {
        stdout(&d.cmd(&["bhist", "-l", &job.to_string()], &dir))
            .contains("Resized: added 2 slot(s) on host(s) <2*hostB>;")
    });
    let hosts = stdout(&d.cmd(&["bhosts"], &dir));
    let row: Vec<&str> = hosts.lines().find(|l| l.starts_with("hostB")).expect("hostB").split_whitespace().collect();
    assert_eq!(row[4], "2", "NJOBS: the job's 2 on hostB: {hosts}");
    let long = stdout(&d.cmd(&["bjobs", "-l", &job.to_string()], &dir));
    assert!(!long.contains("PENDING RESIZE REQUEST"), "at its maximum: {long}");
    // Off its first execution host: refused.
    let refused = d.cmd(&["bresize", "release", "hostA", &job.to_string()], &dir);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("its first execution host `hostA` cannot be released"), "{}", stderr(&refused));
    // A host that is not configured: refused, named.
    let unknown = d.cmd(&["bresize", "release", "1*nosuch", &job.to_string()], &dir);
    assert!(!unknown.status.success());
    let said = stderr(&unknown);
    assert!(said.contains(&format!("Job <{job}>: host `nosuch` is not configured")), "{said}");
    // 1 of hostB's: the command says yes, then it holds 2.
    let out = d.cmd(&["bresize", "release", "1*hostB", &job.to_string()], &dir);
    assert!(out.status.success(), "{}", stderr(&out));
    // One at a time: another release waits for the command.
    let again = d.cmd(&["bresize", "release", "1*hostB", &job.to_string()], &dir);
    assert!(stderr(&again).contains("its resize notification command is still running"), "{}", stderr(&again));
    eventually("the release is told and made", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("shrink hostB 1 0"))
            && stdout(&d.cmd(&["bhist", "-l", &job.to_string()], &dir))
                .contains("released slot(s) on host(s) <1*hostB>")
    });
    let hosts = stdout(&d.cmd(&["bhosts"], &dir));
    let row: Vec<&str> = hosts.lines().find(|l| l.starts_with("hostB")).expect("hostB").split_whitespace().collect();
    assert_eq!(row[4], "1", "{hosts}");
    // LSF's options: -rnc names this release's command, -rncn runs none.
    let missing = d.cmd(&["bresize", "release", "-rnc"], &dir);
    assert!(stderr(&missing).contains("-rnc: expected a command after it"), "{}", stderr(&missing));
    let both = d.cmd(&["bresize", "release", "-rnc", "true", "-rncn", "1*hostB", &job.to_string()], &dir);
    assert!(stderr(&both).contains("one or the other"), "{}", stderr(&both));
    let mine = format!("echo mine $LSB_RESIZE_EVENT $LSB_RESIZE_HOSTS >> {}", log.display());
    let out = d.cmd(&["bresize", "release", "-rnc", &mine, "1*hostB", &job.to_string()], &dir);
    assert!(out.status.success(), "{}", stderr(&out));
    eventually("this release's own command is told, the job's is not", || {
        std::fs::read_to_string(&log)
            .is_ok_and(|l| l.contains("mine shrink hostB 1\n") && l.matches("shrink hostB 1 0").count() == 1)
            && stdout(&d.cmd(&["bhist", "-l", &job.to_string()], &dir)).matches("released slot(s)").count() == 2
    });
    // Not resizable: a plain job.
    let plain = submitted_id(&d.cmd(&["bsub", "-o", "/dev/null", "sleep 60"], &dir));
    d.wait_for(plain, "RUN", &dir);
    let no = d.cmd(&["bresize", "cancel", &plain.to_string()], &dir);
    assert!(stderr(&no).contains("is not resizable"), "{}", stderr(&no));
    let _ = d.cmd(&["bkill", &job.to_string(), &plain.to_string()], &dir);
}

/// The notification command runs as the job's owner, never root, and a
/// command that answers LSB_RESIZE_NOTIFY_FAIL has the grow given back.
#[test]
fn a_failed_notification_gives_the_grow_back_and_runs_as_the_owner() {
    let user = common::Throwaway::new("resize-owner", "rz");
    let dir = tempdir("resize-owner");
    let work = dir.join("work");
    std::fs::create_dir(&work).expect("work dir");
    nix::unistd::chown(&work, Some(nix::unistd::Uid::from_raw(user.uid)), Some(nix::unistd::Gid::from_raw(user.gid)))
        .expect("chown");
    let config = config_dir(
        &dir,
        &[
            ("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 1\n\n[[hosts]]\nname = \"hostB\"\nncpus = 1\n"),
            ("lsb.queues", "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n"),
            ("lsb.applications", "Begin Application\nNAME = grow\nRESIZABLE_JOBS = auto\nEnd Application\n"),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let flag = dir.join("go");
    let wait = format!("while [ ! -e {} ]; do sleep 0.1; done", flag.display());
    let blocker = submitted_id(&d.cmd(&["bsub", "-R", "select[hname==hostB]", "-o", "/dev/null", &wait], &dir));
    d.wait_for(blocker, "RUN", &dir);
    let rnc = "id -u >> ids; exit $LSB_RESIZE_NOTIFY_FAIL";
    let out =
        d.cmd_as(user.ids(), &["bsub", "-app", "grow", "-n", "1,2", "-rnc", rnc, "-o", "/dev/null", "sleep 60"], &work);
    let job = submitted_id(&out);
    d.wait_for(job, "RUN", &work);
    std::fs::write(&flag, b"").expect("flag");
    eventually("the grow is told and given back", || {
        stdout(&d.cmd(&["bhist", "-l", &job.to_string()], &dir))
            .contains("Resize notification failed: slot(s) on host(s) <1*hostB> given back;")
    });
    let ids = std::fs::read_to_string(work.join("ids")).expect("the command wrote");
    assert_eq!(ids.trim(), user.uid.to_string(), "as its owner");
    let hosts = stdout(&d.cmd(&["bhosts"], &dir));
    let row: Vec<&str> = hosts.lines().find(|l| l.starts_with("hostB")).expect("hostB").split_whitespace().collect();
    assert_eq!(row[4], "0", "hostB given back: {hosts}");
    let _ = d.cmd(&["bkill", &job.to_string()], &dir);
}

/// With agents, the notification command runs on the job's first
/// execution host, as a task of its run there, and its exit comes back
/// to allotd: a failing one gives the grow back.
#[test]
fn with_agents_the_notification_runs_on_the_first_execution_host() {
    let dir = tempdir("resize-agents");
    let mut c = common::agents::TestCluster::configured(&dir, 2, (1, 30, 60), "");
    let log = dir.join("notify.log");
    let apps = format!(
        "Begin Application\nNAME = grow\nRESIZABLE_JOBS = auto\n\
         RESIZE_NOTIFY_CMD = echo $(hostname) $LSB_RESIZE_EVENT $LSB_RESIZE_HOSTS >> {}; exit 1\nEnd Application\n",
        log.display()
    );
    std::fs::write(c.config.join("lsb.applications"), apps).expect("applications");
    c.start_daemon();
    for h in ["host1", "host2"] {
        c.start_agent(h);
    }
    for h in ["host1", "host2"] {
        c.wait_host(h, "ok");
    }
    let d = c.daemon();
    let flag = dir.join("go");
    let wait = format!("while [ ! -e {} ]; do sleep 0.1; done", flag.display());
    let blocker = submitted_id(&d.cmd(&["bsub", "-m", "host2", "-n", "2", "-o", "/dev/null", &wait], &dir));
    d.wait_for(blocker, "RUN", &dir);
    let job = submitted_id(&d.cmd(&["bsub", "-app", "grow", "-n", "2,4", "-o", "/dev/null", "sleep 60"], &dir));
    d.wait_for(job, "RUN", &dir);
    std::fs::write(&flag, b"").expect("flag");
    eventually("the command ran on host1 and its failure gave the grow back", || {
        stdout(&d.cmd(&["bhist", "-l", &job.to_string()], &dir))
            .contains("Resize notification failed: slot(s) on host(s) <2*host2> given back;")
    });
    let told = std::fs::read_to_string(&log).expect("the command wrote");
    let first = told.lines().next().unwrap_or_default();
    assert!(first.ends_with("grow host2 2"), "{told}");
    if c.hosts_file.is_some() {
        assert!(first.starts_with("host1 "), "on the job's first execution host: {told}");
    }
    let _ = d.cmd(&["bkill", &job.to_string()], &dir);
}
