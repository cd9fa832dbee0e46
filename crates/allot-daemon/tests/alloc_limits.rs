//! `lsb.resources` limits and shared resources through the installed
//! commands, as ordinary users meet them: a slot limit on a host and a
//! JOBS limit per user hold jobs pending with LSF's reasons, `blimits`
//! shows what each holds, and an end lets the next job start; a license
//! count the hosts share bounds the jobs that reserve one (`bhosts -s`).

mod common;

use common::{Daemon, Throwaway, config_dir, eventually, stdout, submitted_id, tempdir};

const HOSTS: &str = "[[hosts]]\nname = \"hostA\"\nncpus = 4\n";
const QUEUES: &str = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n";
const LIMITS: &str = "Begin Limit\nNAME = hostA_slots\nHOSTS = hostA\nSLOTS = 2\nEnd Limit\n\n\
                      Begin Limit\nNAME      PER_USER  JOBS\none_each  all       1\nEnd Limit\n";

#[test]
fn limits_hold_users_jobs_and_blimits_shows_them() {
    let (ann, bob, cy) = (
        Throwaway::new("alloc_limits", "la"),
        Throwaway::new("alloc_limits", "lb"),
        Throwaway::new("alloc_limits", "lc"),
    );
    let dir = tempdir("alloc-limits");
    let config = config_dir(&dir, &[("allot.toml", HOSTS), ("lsb.queues", QUEUES), ("lsb.resources", LIMITS)]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let sub =
        |u: &Throwaway| submitted_id(&d.cmd_as(u.ids(), &["bsub", "-o", "/dev/null", "sleep", "60"], "/".as_ref()));
    let (a1, a2, b1, c1) = (sub(&ann), sub(&ann), sub(&bob), sub(&cy));
    let status = |job: u64| {
        let out = stdout(&d.cmd(&["bjobs", "-noheader", &job.to_string()], &dir));
        out.split_whitespace().nth(2).unwrap_or_default().to_string()
    };
    eventually("ann's first and bob's run", || status(a1) == "RUN" && status(b1) == "RUN");
    // Reasons hold: a second pass changes nothing.
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!((status(a2).as_str(), status(c1).as_str()), ("PEND", "PEND"));
    let reasons = stdout(&d.cmd(&["bjobs", "-p", "-u", "all"], &dir));
    assert!(
        reasons.contains("JOBS limit defined for the user or user group has been reached (Limit one_each)"),
        "{reasons}"
    );
    assert!(
        reasons
            .contains("Resource (slot) limit defined on host and/or host group has been reached (Limit hostA_slots)"),
        "{reasons}"
    );
    let shown = stdout(&d.cmd_as(cy.ids(), &["blimits"], "/".as_ref()));
    let rows: Vec<&str> = shown.lines().collect();
    assert_eq!(rows[0], "INTERNAL RESOURCE LIMITS:", "{shown}");
    assert!(
        rows.iter().any(|r| r.split_whitespace().collect::<Vec<_>>()
            == ["hostA_slots", "-", "-", "hostA", "-", "2/2", "-", "-", "-", "-"]),
        "{shown}"
    );
    for u in [&ann.name, &bob.name] {
        let cut: String = u.chars().take(12).collect();
        let row = ["one_each", cut.as_str(), "-", "-", "-", "-", "-", "-", "-", "1/1"];
        assert!(rows.iter().any(|r| r.split_whitespace().collect::<Vec<_>>() == row), "{u}: {shown}");
    }
    let only = stdout(&d.cmd(&["blimits", "-n", "hostA_slots"], &dir));
    assert_eq!(only.lines().count(), 4, "{only}");
    // Bob's job ends: hostA has room, and cy's job (ann is still at her
    // one) starts.
    assert!(d.cmd(&["bkill", &b1.to_string()], &dir).status.success());
    eventually("cy's job runs", || status(c1) == "RUN");
    assert_eq!(status(a2), "PEND");
    for j in [a1, a2, c1] {
        let _ = d.cmd(&["bkill", &j.to_string()], &dir);
    }
}

/// A license count the hosts share (the cluster file's ResourceMap),
/// through the commands: a throwaway user's job that holds one shows in
/// `bhosts -s`, and the next such job waits for it; a job asking for a
/// resource no host has is refused at `bsub`, named.
#[test]
fn a_shared_license_through_the_commands() {
    let user = Throwaway::new("shared_license", "sl");
    let dir = tempdir("shared-license");
    let cluster = "Begin Host\nHOSTNAME model type server RESOURCES ncpus\nhostA ! ! 1 () 4\nEnd Host\n\n\
                   Begin ResourceMap\nRESOURCENAME LOCATION\nlicA (1@[all])\nEnd ResourceMap\n";
    let config = config_dir(&dir, &[("lsf.cluster.test", cluster), ("lsb.queues", QUEUES)]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let sub = |r: &str| d.cmd_as(user.ids(), &["bsub", "-o", "/dev/null", "-R", r, "sleep", "60"], "/".as_ref());
    let (first, second) = (submitted_id(&sub("rusage[licA=1]")), submitted_id(&sub("rusage[licA=1]")));
    let status = |job: u64| {
        let out = stdout(&d.cmd(&["bjobs", "-noheader", &job.to_string()], &dir));
        out.split_whitespace().nth(2).unwrap_or_default().to_string()
    };
    eventually("the first runs", || status(first) == "RUN");
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(status(second), "PEND", "one license");
    let shown = stdout(&d.cmd_as(user.ids(), &["bhosts", "-s"], "/".as_ref()));
    assert_eq!(
        shown,
        "RESOURCE                 TOTAL       RESERVED       LOCATION\n\
         licA                        1.0            1.0       hostA\n"
    );
    for cmd in ["lshosts", "lsload"] {
        assert_eq!(
            stdout(&d.cmd_as(user.ids(), &[cmd, "-s"], "/".as_ref())),
            "RESOURCE                                VALUE       LOCATION\n\
             licA                                       1.0       hostA\n",
            "{cmd} -s"
        );
    }
    let refused = d.cmd_as(user.ids(), &["bsub", "-R", "rusage[licZ=1]", "true"], "/".as_ref());
    assert!(!refused.status.success());
    assert!(
        common::stderr(&refused).contains("rusage[licZ]: no host has this resource"),
        "{}",
        common::stderr(&refused)
    );
    assert!(d.cmd(&["bkill", &first.to_string()], &dir).status.success());
    eventually("the second runs once the license is back", || status(second) == "RUN");
    let _ = d.cmd(&["bkill", &second.to_string()], &dir);
}
