//! allotd as root, and users who try to make it act for them: every path a
//! job names is opened with its owner's credentials, a job runs as its
//! owner or not at all, with its owner's identity, and nothing in the state
//! directory is readable by other users. Each test makes throwaway users
//! and removes them; without root they fail, saying so (CI runs as root).

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use common::{Daemon, ONE_HOST, Throwaway, config_dir, eventually, job_output, stderr, stdout, submitted_id, tempdir};

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o777
}

/// `bjobs -l` and `bhist -l` of a job, as `who` sees them.
fn long_views(d: &Daemon, who: (u32, u32), job: u64, dir: &Path) -> (String, String) {
    let id = job.to_string();
    (stdout(&d.cmd_as(who, &["bjobs", "-l", &id], dir)), stdout(&d.cmd_as(who, &["bhist", "-l", &id], dir)))
}

#[test]
fn paths_a_job_names_are_opened_made_and_entered_as_its_owner() {
    let user = Throwaway::new("paths_a_job_names_are_opened_made_and_entered_as_its_owner", "p");
    let who = user.ids();
    let dir = tempdir("privilege-paths");
    chmod(&dir, 0o755);
    // Root's: a file others may read but not write, and a directory
    // nobody else may enter.
    let root_file = dir.join("root-file");
    std::fs::write(&root_file, "root's\n").expect("root file");
    chmod(&root_file, 0o644);
    let root_only = dir.join("root-only");
    std::fs::create_dir(&root_only).expect("root-only");
    chmod(&root_only, 0o700);
    // A file of the user's extra group: theirs to write through it.
    let group_file = dir.join("group-file");
    std::fs::write(&group_file, "").expect("group file");
    std::os::unix::fs::chown(&group_file, Some(0), Some(user.group_gid)).expect("chown");
    chmod(&group_file, 0o660);
    let home = dir.join("home");
    std::fs::create_dir(&home).expect("home");
    std::os::unix::fs::chown(&home, Some(user.uid), Some(user.gid)).expect("chown");
    let d = Daemon::start(&dir.join("state"));
    let bsub = |args: &[&str]| {
        let mut all = vec!["bsub"];
        all.extend_from_slice(args);
        submitted_id(&d.cmd_as(who, &all, &home))
    };

    let overwrite = bsub(&["-oo", root_file.to_str().expect("utf-8"), "true"]);
    let inside = root_only.join("new.out");
    let create = bsub(&["-o", inside.to_str().expect("utf-8"), "true"]);
    let cwd = bsub(&["-cwd", &format!("{}/%J", root_only.display()), "true"]);
    for job in [overwrite, create, cwd] {
        d.wait_for(job, "EXIT", &home);
    }
    assert_eq!(std::fs::read_to_string(&root_file).expect("there"), "root's\n", "not truncated as root");
    assert!(!inside.exists(), "nothing made in a directory the owner cannot write");
    assert_eq!(std::fs::read_dir(&root_only).expect("dir").count(), 0, "no directory made for -cwd");
    let denied =
        format!("The job could not start: cannot open output file {}: Permission denied;", root_file.display());
    let (long, hist) = long_views(&d, who, overwrite, &home);
    assert!(long.contains(&denied), "{long}");
    assert!(hist.contains(&denied), "{hist}");
    let (long, _) = long_views(&d, who, create, &home);
    assert!(long.contains(&format!("cannot open output file {}: Permission denied", inside.display())), "{long}");
    let (long, hist) = long_views(&d, who, cwd, &home);
    let made = format!("cannot create the working directory {}/{cwd}: Permission denied", root_only.display());
    assert!(long.contains(&made) && hist.contains(&made), "{long}\n{hist}");

    // -i: read as the owner, so root's secret is not theirs to read; a
    // file of theirs is (`%J` expanded, from the working directory).
    let secret = dir.join("root-secret");
    std::fs::write(&secret, "root's secret\n").expect("secret");
    chmod(&secret, 0o600);
    let peek_in = bsub(&["-i", secret.to_str().expect("utf-8"), "-o", "stolen", "cat"]);
    d.wait_for(peek_in, "EXIT", &home);
    let (long, _) = long_views(&d, who, peek_in, &home);
    assert!(long.contains(&format!("cannot read the input file {}: Permission denied", secret.display())), "{long}");
    assert!(
        !home.join("stolen").exists()
            || !std::fs::read_to_string(home.join("stolen")).unwrap_or_default().contains("secret")
    );
    let next = peek_in + 1;
    std::fs::write(home.join(format!("in.{next}")), "their own\n").expect("theirs");
    let fed = bsub(&["-i", "in.%J", "-o", "fed.%J", "cat"]);
    assert_eq!(fed, next);
    d.wait_for(fed, "DONE", &home);
    assert_eq!(job_output(&home.join(format!("fed.{fed}"))).expect("output"), "their own\n");

    // bpeek opens what a job names as the owner too: a file of theirs in a
    // directory only root may enter is not read for them (as root it
    // would be, and a device would be opened).
    let theirs = root_only.join("theirs");
    std::fs::write(&theirs, "behind root's door\n").expect("theirs");
    std::os::unix::fs::chown(&theirs, Some(user.uid), Some(user.gid)).expect("chown");
    let peeked = bsub(&["-o", theirs.to_str().expect("utf-8"), "true"]);
    d.wait_for(peeked, "EXIT", &home);
    let peek = d.cmd_as(who, &["bpeek", &peeked.to_string()], &home);
    assert!(!stdout(&peek).contains("behind root's door"), "{}", stdout(&peek));
    assert!(stderr(&peek).contains("Permission denied"), "{}", stderr(&peek));
    std::fs::remove_file(&theirs).expect("rm");

    // What the owner may write, they write: their own file (theirs, and
    // `bpeek` shows it to them) and their group's.
    let identity = "id -u; id -G; echo $USER $LOGNAME $HOME";
    let own = bsub(&["-o", "mine.%J", identity]);
    let grouped = bsub(&["-o", group_file.to_str().expect("utf-8"), "echo through the group"]);
    d.wait_for(own, "DONE", &home);
    d.wait_for(grouped, "DONE", &home);
    let mine = home.join(format!("mine.{own}"));
    assert_eq!(std::fs::metadata(&mine).expect("made").uid(), user.uid, "the owner's file");
    let text = job_output(&mine).expect("output");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], user.uid.to_string(), "{text}");
    assert!(lines[1].split(' ').any(|g| g == user.group_gid.to_string()), "supplementary groups kept: {text}");
    // The submission environment said root (the test runs as root).
    let expected = format!(
        "{0} {0} {1}",
        user.name,
        nix::unistd::User::from_uid(user.uid.into()).ok().flatten().expect("user").dir.display()
    );
    assert_eq!(lines[2], expected, "{text}");
    assert_eq!(job_output(&group_file).expect("group file"), "through the group\n");
    let peeked = d.cmd_as(who, &["bpeek", &own.to_string()], &home);
    assert!(stdout(&peeked).contains(&user.uid.to_string()), "{} {}", stdout(&peeked), stderr(&peeked));
}

#[test]
fn default_output_and_the_state_directory_are_private() {
    let user = Throwaway::new("default_output_and_the_state_directory_are_private", "o");
    let other = Throwaway::new("default_output_and_the_state_directory_are_private", "q");
    let dir = tempdir("privilege-state");
    chmod(&dir, 0o755);
    let state = dir.join("state");
    let d = Daemon::start(&state);
    let early = submitted_id(&d.cmd_as(user.ids(), &["bsub", "echo early; sleep 60"], &dir));
    d.wait_for(early, "RUN", &dir);
    let out = state.join("output").join(format!("{early}.out"));
    eventually("the default output is written", || common::size(&out) > 0);
    let meta = std::fs::metadata(&out).expect("output");
    assert_eq!((meta.uid(), meta.mode() & 0o777), (user.uid, 0o600), "the owner's, and only theirs");
    let peek = |who: (u32, u32)| d.cmd_as(who, &["bpeek", &early.to_string()], &dir);
    assert!(stdout(&peek(user.ids())).contains("early"), "{}", stderr(&peek(user.ids())));
    assert_eq!(stderr(&peek(other.ids())), format!("Job <{early}>: User permission denied\n"));
    assert!(d.cmd_as(user.ids(), &["bkill", &early.to_string()], &dir).status.success());
    d.wait_for(early, "EXIT", &dir);
    assert!(stdout(&peek(user.ids())).contains("early"), "bpeek after the end: {}", stderr(&peek(user.ids())));

    assert_eq!(mode(&state), 0o711, "others reach the socket and nothing else");
    for private in ["jobs", "output"] {
        assert_eq!(mode(&state.join(private)), 0o700, "{private}");
    }
    for db in ["state.db", "state.db-wal"] {
        assert_eq!(mode(&state.join(db)) & 0o077, 0, "{db}");
    }
    // Another user reads none of it directly either.
    let cat = std::process::Command::new("cat").arg(&out).uid_gid(other.ids()).output().expect("cat runs");
    assert!(!cat.status.success(), "another user read {}", out.display());
}

#[test]
fn a_job_runs_as_its_owner_or_not_at_all() {
    let user = Throwaway::new("a_job_runs_as_its_owner_or_not_at_all", "g");
    let dir = tempdir("privilege-owner");
    chmod(&dir, 0o777);
    let queues = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n";
    let config = config_dir(&dir, &[("allot.toml", ONE_HOST), ("lsb.queues", queues)]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));

    // A uid with no account submits nothing.
    let nobody = (4_000_077, 4_000_077);
    assert!(nix::unistd::User::from_uid(nobody.0.into()).ok().flatten().is_none());
    let refused = d.cmd_as(nobody, &["bsub", "touch", dir.join("by-nobody").to_str().expect("utf-8")], &dir);
    assert!(!refused.status.success());
    assert_eq!(
        stderr(&refused),
        "bsub: uid 4000077 has no user account on this host (no password database entry): a job runs as its \
         owner. Job not submitted.\n"
    );
    assert_eq!(stdout(&d.cmd(&["bjobs", "-a", "-u", "all", "-noheader"], &dir)), "No job found\n");

    // A user deleted before their job is dispatched: the job ends, and
    // never runs as root. Their first job ran (allotd knew them then).
    let first = submitted_id(&d.cmd_as(user.ids(), &["bsub", "sleep", "2"], &dir));
    d.wait_for(first, "RUN", &dir);
    let marker = dir.join("ran");
    let job = submitted_id(&d.cmd_as(user.ids(), &["bsub", &format!("id -u > {}", marker.display())], &dir));
    user.remove();
    d.wait_for(first, "DONE", &dir);
    d.wait_for(job, "EXIT", &dir);
    assert!(!marker.exists(), "ran as {:?}", std::fs::read_to_string(&marker));
    let long = stdout(&d.cmd(&["bjobs", "-l", &job.to_string()], &dir));
    assert!(
        long.contains(&format!("The job could not start: user `{}` does not exist on this host;", user.name)),
        "{long}"
    );
    // allotd goes on.
    let after = submitted_id(&d.cmd(&["bsub", "true"], &dir));
    d.wait_for(after, "DONE", &dir);
}

/// `Command::uid` and `gid` together, for a one-line use.
trait UidGid {
    fn uid_gid(&mut self, ids: (u32, u32)) -> &mut Self;
}

impl UidGid for std::process::Command {
    fn uid_gid(&mut self, ids: (u32, u32)) -> &mut Self {
        use std::os::unix::process::CommandExt;
        self.uid(ids.0).gid(ids.1)
    }
}

/// A user with no allotd of their own reaches root's, in the system state
/// directory, with no environment variable set. Runs only where nothing
/// is in `/var/lib/allot` yet (it makes it, and removes it after).
#[test]
fn a_user_without_an_allotd_reaches_roots_with_nothing_set() {
    let user = Throwaway::new("a_user_without_an_allotd_reaches_roots_with_nothing_set", "s");
    let system = Path::new(allot_proto::paths::SYSTEM_STATE_DIR);
    assert!(
        !system.exists(),
        "{} is there already (a real site? this test makes it and removes it): not run",
        system.display()
    );
    struct Gone<'a>(&'a Path);
    impl Drop for Gone<'_> {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(self.0);
        }
    }
    let _cleanup = Gone(system);
    let dir = tempdir("privilege-system");
    chmod(&dir, 0o777);
    let d = Daemon::start(system);
    let home = dir.join("home");
    std::fs::create_dir(&home).expect("home");
    std::os::unix::fs::chown(&home, Some(user.uid), Some(user.gid)).expect("chown");
    let as_user = |args: &[&str]| {
        use std::os::unix::process::CommandExt;
        std::process::Command::new(common::allot())
            .args(args)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", "/usr/bin:/bin")
            .current_dir(&home)
            .uid(user.uid)
            .gid(user.gid)
            .output()
            .expect("allot runs")
    };
    let out = as_user(&["bsub", "-o", "ran", "id -un"]);
    let job = submitted_id(&out);
    d.wait_for(job, "DONE", &dir);
    assert_eq!(job_output(&home.join("ran")).expect("ran"), format!("{}\n", user.name));
    let listed = as_user(&["bjobs", "-a", "-noheader"]);
    assert!(stdout(&listed).starts_with(&job.to_string()), "{} {}", stdout(&listed), stderr(&listed));
}

/// allotd's log and the test hosts' agents' logs are 0600 whatever the
/// umask `allot start` runs under (a world-readable or world-writable log
/// made so too): they hold every user's job names, commands and paths.
#[test]
fn the_daemons_logs_are_private_whatever_the_umask() {
    let dir = tempdir("private-logs");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).expect("state");
    let log = state.join("allotd.log");
    std::fs::write(&log, "").expect("an old log");
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let allot = |args: &[&str]| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg("umask 000; exec \"$0\" \"$@\"")
            .arg(common::allot())
            .args(args)
            .env("ALLOT_STATE_DIR", &state)
            .output()
            .expect("allot runs")
    };
    let started = allot(&["start", "--test-hosts", "1"]);
    let stopped = allot(&["stop"]);
    assert!(started.status.success(), "{}{}", stdout(&started), stderr(&started));
    assert!(stopped.status.success(), "{}", stderr(&stopped));
    for path in [log, state.join("test-hosts/host1/agent.log")] {
        let mode = std::fs::metadata(&path).expect("the log").mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", path.display());
    }
}

/// A daemon another user planted where a command without `HOME` used to
/// look (`/tmp/.local/state/allot/allotd.sock`) catches nothing: without
/// `HOME` the commands look under the passwd entry's home, and a command
/// talks only to a daemon that runs as its user or as root, by the
/// connection's peer credentials (asked to, it refuses the planted one).
#[test]
fn a_planted_daemon_catches_no_other_users_command() {
    use std::os::unix::process::CommandExt;
    let mallory = Throwaway::new("a_planted_daemon_catches_no_other_users_command", "pm");
    let alice = Throwaway::new("a_planted_daemon_catches_no_other_users_command", "pa");
    let planted = Path::new("/tmp/.local/state/allot");
    assert!(!Path::new("/tmp/.local").exists(), "/tmp/.local is there already: this test makes it and removes it");
    struct Gone;
    impl Drop for Gone {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all("/tmp/.local");
        }
    }
    let _gone = Gone;
    for d in ["/tmp/.local", "/tmp/.local/state", "/tmp/.local/state/allot"] {
        std::fs::create_dir_all(d).expect("mkdir");
        nix::unistd::chown(d, Some(mallory.uid.into()), Some(mallory.gid.into())).expect("chown");
    }
    // Mallory's own allotd, serving there.
    let mut fake = std::process::Command::new(common::allotd())
        .env_clear()
        .env("ALLOT_STATE_DIR", planted)
        .uid(mallory.uid)
        .gid(mallory.gid)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("mallory's allotd");
    eventually("mallory's allotd listens", || planted.join("allotd.sock").exists());
    let as_alice = |env: &[(&str, &Path)]| {
        std::process::Command::new(common::allot())
            .arg("bjobs")
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .envs(env.iter().copied())
            .current_dir("/")
            .uid(alice.uid)
            .gid(alice.gid)
            .output()
            .expect("bjobs runs")
    };
    let unset = as_alice(&[]);
    let said = stderr(&unset);
    assert!(!unset.status.success(), "no allotd of alice's or root's: {said}");
    assert!(!said.contains("/tmp/.local"), "never looked in /tmp: {said}");
    let home = nix::unistd::User::from_uid(alice.uid.into()).ok().flatten().expect("alice").dir;
    assert!(said.contains(&home.display().to_string()), "her passwd home: {said}");
    let asked = as_alice(&[("ALLOT_STATE_DIR", planted)]);
    let said = stderr(&asked);
    assert!(!asked.status.success(), "{said}");
    assert!(said.contains(&format!("served by uid {}, neither you nor root: not used", mallory.uid)), "{said}");
    let _ = fake.kill();
    let _ = fake.wait();
}
