//! Job groups through the installed commands, as ordinary users meet
//! them (IBM's own walk-through: `bgadd`, `bgmod -L`, then more jobs
//! than the limit): `bjgroup` counts, `bjobs -g` lists, `bkill -g`
//! kills only a group's own jobs, another user cannot change a group, a
//! group with unfinished jobs is not deleted, and all of it survives a
//! kill -9 of allotd.

mod common;

use common::{Daemon, Throwaway, config_dir, eventually, stderr, stdout, submitted_id, tempdir};

const HOSTS: &str = "[[hosts]]\nname = \"hostA\"\nncpus = 8\n";
const QUEUES: &str = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n";

fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

#[test]
fn a_job_groups_limit_through_the_commands_and_a_restart() {
    let (ann, bob) = (Throwaway::new("job_groups", "ga"), Throwaway::new("job_groups", "gb"));
    let dir = tempdir("job-groups");
    let config = config_dir(&dir, &[("allot.toml", HOSTS), ("lsb.queues", QUEUES)]);
    let state = dir.join("state");
    let d = Daemon::start_with(&state, Some(&config));
    let as_ann = |args: &[&str]| d.cmd_as(ann.ids(), args, "/".as_ref());
    let added = as_ann(&["bgadd", "/user1"]);
    assert_eq!(stdout(&added), "Job group </user1> was added.\n", "{}", stderr(&added));
    let modified = as_ann(&["bgmod", "-L", "3", "/user1"]);
    assert_eq!(stdout(&modified), "Job group /user1 is modified.\n", "{}", stderr(&modified));
    // Bob may not change ann's group.
    let denied = d.cmd_as(bob.ids(), &["bgmod", "-L", "8", "/user1"], "/".as_ref());
    assert!(!denied.status.success());
    assert!(stderr(&denied).contains("User permission denied"), "{}", stderr(&denied));
    let jobs: Vec<u64> =
        (0..4).map(|_| submitted_id(&as_ann(&["bsub", "-g", "/user1", "-o", "/dev/null", "sleep", "60"]))).collect();
    let sub = submitted_id(&as_ann(&["bsub", "-g", "/user1/sub", "-o", "/dev/null", "sleep", "60"]));
    let status = |job: u64| {
        let out = stdout(&d.cmd(&["bjobs", "-noheader", &job.to_string()], &dir));
        out.split_whitespace().nth(2).unwrap_or_default().to_string()
    };
    eventually("three of the group's jobs run", || jobs[..3].iter().all(|&j| status(j) == "RUN"));
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!((status(jobs[3]).as_str(), status(sub).as_str()), ("PEND", "PEND"), "the limit covers /user1/sub too");
    let why = stdout(&as_ann(&["bjobs", "-p", &sub.to_string()]));
    assert!(why.contains("The specified job group has reached its job limit (job group </user1>)"), "{why}");
    let listed = stdout(&as_ann(&["bjgroup", "-s"]));
    let rows: Vec<Vec<&str>> = listed.lines().map(words).collect();
    assert_eq!(rows[1], ["/user1", "5", "2", "3", "0", "0", "0", "()", "3/3", ann.name.as_str()], "{listed}");
    assert_eq!(rows[2], ["/user1/sub", "1", "1", "0", "0", "0", "0", "()", "0/-", ann.name.as_str()], "{listed}");
    let in_sub = stdout(&as_ann(&["bjobs", "-noheader", "-g", "/user1/sub"]));
    assert_eq!(in_sub.lines().count(), 1, "{in_sub}");
    let long = stdout(&as_ann(&["bjobs", "-l", &sub.to_string()]));
    assert!(long.contains("Job Group </user1/sub>"), "{long}");
    // bmod -g: the fourth job, pending, to a group without a limit, runs.
    let moved = as_ann(&["bmod", "-g", "/free", &jobs[3].to_string()]);
    assert!(moved.status.success(), "{}", stderr(&moved));
    eventually("the moved job runs", || status(jobs[3]) == "RUN");
    // Kill -9: the group, its limit and its counts come back from the log.
    d.kill9();
    let d = Daemon::start_with(&state, Some(&config));
    let as_ann = |args: &[&str]| d.cmd_as(ann.ids(), args, "/".as_ref());
    let again = stdout(&as_ann(&["bjgroup", "-s", "/user1/"]));
    assert_eq!(words(again.lines().nth(1).unwrap_or_default())[8], "3/3", "{again}");
    let deleted = as_ann(&["bgdel", "/user1"]);
    assert!(!deleted.status.success());
    assert!(stderr(&deleted).contains("unfinished job(s): it cannot be deleted"), "{}", stderr(&deleted));
    // bkill -g: the group's own jobs, not its subgroup's.
    let killed = stdout(&as_ann(&["bkill", "-g", "/user1", "0"]));
    assert_eq!(killed.lines().count(), 3, "{killed}");
    let status = |job: u64| {
        let out = stdout(&d.cmd(&["bjobs", "-noheader", &job.to_string()], &dir));
        out.split_whitespace().nth(2).unwrap_or_default().to_string()
    };
    eventually("the subgroup's job runs", || status(sub) == "RUN");
    assert!(d.cmd(&["bkill", &sub.to_string()], &dir).status.success());
    eventually("it ended", || status(sub) == "EXIT");
    let deleted = as_ann(&["bgdel", "/user1"]);
    assert_eq!(stdout(&deleted), "Job group /user1 is deleted.\n", "{}", stderr(&deleted));
    // bgdel 0: the caller's empty groups.
    assert!(d.cmd(&["bkill", &jobs[3].to_string()], &dir).status.success());
    eventually("the moved job ended", || status(jobs[3]) == "EXIT");
    let emptied = as_ann(&["bgdel", "0"]);
    assert_eq!(stdout(&emptied), "Job group /free is deleted.\n", "{}", stderr(&emptied));
    let none = as_ann(&["bjgroup"]);
    assert_eq!(stdout(&none), "No job group found\n");
}

/// Bad input is refused with the option named, and nothing is made.
#[test]
fn bad_group_names_and_limits_are_refused_by_name() {
    let user = Throwaway::new("job_groups_bad", "gx");
    let dir = tempdir("job-groups-bad");
    let config = config_dir(&dir, &[("allot.toml", HOSTS), ("lsb.queues", QUEUES)]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let run = |args: &[&str]| d.cmd_as(user.ids(), args, "/".as_ref());
    for (args, says) in [
        (&["bsub", "-g", "nopath", "true"][..], "-g: job group `nopath`: a job group is named by its full path"),
        (&["bgadd", "-L", "x", "/a"][..], "bgadd: -L x: expected a job limit"),
        (&["bgadd", "-L", "5", "/"][..], "the root job group </> has no job limit"),
        (&["bgmod", "/a"][..], "bgmod: nothing to change"),
        (&["bgmod", "-L", "1", "/none"][..], "Job group </none> does not exist"),
    ] {
        let out = run(args);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    assert!(run(&["bgadd", "-L", "4", "/a"]).status.success());
    let above = run(&["bgadd", "-L", "9", "/a/b"]);
    assert!(stderr(&above).contains("-L 9: more than the limit of job group </a> (4)"), "{}", stderr(&above));
    assert_eq!(stdout(&run(&["bjgroup"])).lines().count(), 2, "only /a");
}
