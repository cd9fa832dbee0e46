//! Job arrays past MAX_JOB_ARRAY_SIZE's default, on the real daemon: the
//! elements past the first thousand are made as they come near their turn
//! (late materialization), and until then the commands see, count and act
//! on each as on any element; every one runs once, with its own index.

mod common;

use common::*;

fn config(dir: &std::path::Path, ncpus: u32) -> std::path::PathBuf {
    config_dir(
        dir,
        &[
            ("allot.toml", &format!("[[hosts]]\nname = \"hostA\"\nncpus = {ncpus}\n")),
            ("lsb.params", "Begin Parameters\nMAX_JOB_ARRAY_SIZE = 100000\nEnd Parameters\n"),
        ],
    )
}

/// `bjobs -A -a`'s row of the array: NJOBS PEND DONE RUN EXIT SSUSP USUSP PSUSP.
fn counts(d: &Daemon, dir: &std::path::Path) -> Vec<u32> {
    let text = stdout(&d.cmd(&["bjobs", "-A", "-a"], dir));
    let row = text.lines().nth(1).unwrap_or_else(|| panic!("no array row: {text}"));
    row.split_whitespace().skip(3).map(|n| n.parse().expect("a count")).collect()
}

#[test]
fn elements_not_made_yet_are_listed_counted_and_acted_on_across_a_restart() {
    let dir = tempdir("big-array");
    let config = config(&dir, 1);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    assert!(d.cmd(&["badmin", "hclose", "hostA"], &dir).status.success());
    let id = submitted_id(&d.cmd(&["bsub", "-J", "big[1-100000]", "-o", "/dev/null", "true"], &dir));
    assert_eq!(counts(&d, &dir), [100_000, 100_000, 0, 0, 0, 0, 0, 0]);
    // Far past the first thousand: pending, named and shown as any.
    let far = format!("{id}[99999]");
    let shown = lines(&d, &far, &dir, &[]);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].contains(" PEND ") && shown[0].contains("big[99999]"), "{shown:?}");
    let long = stdout(&d.cmd(&["bjobs", "-l", &far], &dir));
    assert!(long.contains(&format!("Job <{far}>, Job Name <big[99999]>")), "{long}");
    // Killed, stopped and depended on, one element at a time.
    let killed = d.cmd(&["bkill", &format!("{id}[99990]")], &dir);
    assert_eq!(stdout(&killed), format!("Job <{id}[99990]> is being terminated\n"), "{}", stderr(&killed));
    assert!(d.cmd(&["bstop", &format!("{id}[99991]")], &dir).status.success());
    let after = submitted_id(&d.cmd(&["bsub", "-w", &format!("done({id}[99992])"), "true"], &dir));
    let why = stdout(&d.cmd(&["bjobs", "-p", &after.to_string()], &dir));
    assert!(why.contains("Job dependency condition not satisfied"), "{why}");
    let by_name = submitted_id(&d.cmd(&["bsub", "-w", "done(big[99993])", "true"], &dir));
    let why = stdout(&d.cmd(&["bjobs", "-p", &by_name.to_string()], &dir));
    assert!(why.contains("Job dependency condition not satisfied"), "an element by its name: {why}");
    assert_eq!(counts(&d, &dir), [100_000, 99_998, 0, 0, 1, 0, 0, 1]);
    let all = stdout(&d.cmd(&["bjobs", "-a", "-w", &id.to_string()], &dir));
    assert_eq!(all.lines().count(), 100_001, "each element listed");
    let last = all.lines().last().unwrap_or_default();
    assert!(last.contains(" big[100000] "), "in index order: {last}");

    // The log keeps it all across a kill -9.
    d.kill9();
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    assert_eq!(counts(&d, &dir), [100_000, 99_998, 0, 0, 1, 0, 0, 1]);
    let stopped = lines(&d, &format!("{id}[99991]"), &dir, &[]);
    assert!(stopped[0].contains(" PSUSP "), "{stopped:?}");
    let next = submitted_id(&d.cmd(&["bsub", "true"], &dir));
    assert_eq!(next, by_name + 1, "an array takes one job number");

    // Stopped and resumed whole: its tail in one record each.
    let stopped = d.cmd(&["bstop", &id.to_string()], &dir);
    assert!(stdout(&stopped).ends_with(&format!("Job <{id}> is being stopped\n")), "{}", stderr(&stopped));
    assert_eq!(stdout(&stopped).lines().count(), 1000 + 1, "the first thousand, and the tail");
    assert_eq!(counts(&d, &dir), [100_000, 0, 0, 0, 1, 0, 0, 99_999]);
    let far = lines(&d, &format!("{id}[99998]"), &dir, &[]);
    assert!(far[0].contains(" PSUSP "), "{far:?}");
    let resumed = d.cmd(&["bresume", &id.to_string()], &dir);
    assert_eq!(stdout(&resumed).lines().count(), 1000 + 1 + 1, "with the one stopped before: {}", stderr(&resumed));
    assert_eq!(counts(&d, &dir), [100_000, 99_999, 0, 0, 1, 0, 0, 0]);
    let hist = stdout(&d.cmd(&["bhist", "-l", &format!("{id}[99998]")], &dir));
    assert!(hist.contains("Suspended by the user or administrator <root>"), "{hist}");
    assert!(hist.contains("Resumed by the user or administrator <root>"), "{hist}");

    // Another user may not kill it, its tail no more than its elements.
    let other = Throwaway::new("elements_not_made_yet_are_listed_counted_and_acted_on_across_a_restart", "bigar");
    let refused = d.cmd_as(other.ids(), &["bkill", &id.to_string()], "/".as_ref());
    let said = stderr(&refused);
    assert!(said.ends_with(&format!("Job <{id}>: User permission denied\n")), "{said}");
    let shown = said.lines().count();
    assert_eq!(shown, 1000 + 3, "the first thousand, the one stopped, the one removed, and the tail: {said}");
    assert_eq!(counts(&d, &dir), [100_000, 99_999, 0, 0, 1, 0, 0, 0]);

    // The whole array killed: its tail in one record, its elements made
    // (the first thousand and those named before) one by one.
    let killed = d.cmd(&["bkill", &id.to_string()], &dir);
    let said = stdout(&killed);
    assert_eq!(said.lines().count(), 1000 + 1 + 1, "{}", stderr(&killed));
    assert!(said.ends_with(&format!("Job <{id}> is being terminated\n")), "the tail: {said}");
    assert_eq!(stderr(&killed), format!("Job <{id}[99990]>: Job has already finished\n"), "{said}");
    assert_eq!(counts(&d, &dir), [100_000, 0, 0, 0, 100_000, 0, 0, 0]);
    let far = lines(&d, &format!("{id}[99999]"), &dir, &[]);
    assert!(far[0].contains(" EXIT "), "{far:?}");
    let hist = stdout(&d.cmd(&["bhist", "-l", &format!("{id}[99999]")], &dir));
    assert!(hist.contains("Exited; job was killed while pending"), "{hist}");
    let acct = stdout(&d.cmd(&["bacct", &id.to_string()], &dir));
    assert!(acct.contains("Total number of exited jobs:  100000\n"), "each element accounted: {acct}");
    let again = d.cmd(&["bkill", &id.to_string()], &dir);
    assert!(stderr(&again).ends_with(&format!("Job <{id}>: Job has already finished\n")), "{}", stderr(&again));
    let why = stdout(&d.cmd(&["bjobs", "-p", &after.to_string()], &dir));
    assert!(why.contains("Dependency condition invalid or never satisfied"), "done() of a removed element: {why}");
    d.kill9();
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    assert_eq!(counts(&d, &dir), [100_000, 0, 0, 0, 100_000, 0, 0, 0], "the same after a restart");
}

#[test]
fn every_element_of_an_array_past_the_first_thousand_runs_once_with_its_index() {
    let dir = tempdir("big-array-run");
    let config = config(&dir, 4);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let list = dir.join("ran");
    let cmd = format!("echo $LSB_JOBINDEX >> {}", list.display());
    let id = submitted_id(&d.cmd(&["bsub", "-J", "run[1-1500]", "-o", "/dev/null", &cmd], &dir));
    eventually_within("every element ran", std::time::Duration::from_secs(300), || counts(&d, &dir)[2] == 1500);
    let mut ran: Vec<u32> =
        std::fs::read_to_string(&list).expect("ran").lines().map(|l| l.parse().expect("an index")).collect();
    ran.sort_unstable();
    assert_eq!(ran, (1..=1500).collect::<Vec<_>>(), "each once");
    let last = lines(&d, &format!("{id}[1500]"), &dir, &[]);
    assert!(last[0].contains(" DONE "), "{last:?}");
}
