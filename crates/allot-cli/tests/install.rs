//! `allot install PREFIX` end to end: the commands answer by their names
//! from PREFIX/bin, `man` finds their pages, bash their completion; and
//! `-h` and unknown options as LSF's commands answer them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("allot-install-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn run(program: &Path, args: &[&str]) -> Output {
    Command::new(program).args(args).output().expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn found(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

#[test]
fn install_puts_commands_man_pages_and_completion_under_a_prefix() {
    let prefix = tempdir("prefix");
    let out = run(Path::new(env!("CARGO_BIN_EXE_allot")), &["install", prefix.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bin = prefix.join("bin");
    assert!(bin.join("allot").is_file());
    for name in ["bsub", "bjobs", "bacct", "lsid"] {
        assert_eq!(std::fs::read_link(bin.join(name)).expect("a link"), Path::new("allot"), "{name}");
        let page = std::fs::read_to_string(prefix.join(format!("share/man/man1/{name}.1"))).expect("man page");
        assert!(page.starts_with(&format!(".TH {} 1 ", name.to_uppercase())), "{page}");
    }
    // Called by its name from the prefix.
    let help = run(&bin.join("bsub"), &["-h", "-K"]);
    assert!(help.status.success());
    assert!(text(&help.stderr).starts_with("  -K\n        Wait for the job to end"), "{}", text(&help.stderr));
    assert!(help.stdout.is_empty(), "help goes to standard error");
    // Installing again replaces what is there.
    let again = run(Path::new(env!("CARGO_BIN_EXE_allot")), &["install", prefix.to_str().expect("utf-8")]);
    assert!(again.status.success(), "{}", text(&again.stderr));

    if found("man") {
        // man finds the pages from PATH, as it does for any prefix.
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        let out =
            Command::new("man").args(["-w", "bsub"]).env("PATH", path).env_remove("MANPATH").output().expect("man");
        assert_eq!(text(&out.stdout).trim(), prefix.join("share/man/man1/bsub.1").display().to_string());
    }
    if found("groff") {
        for name in ["bsub", "bjobs", "badmin", "blaunch"] {
            let page = prefix.join(format!("share/man/man1/{name}.1"));
            let out = run(Path::new("groff"), &["-man", "-Tutf8", "-ww", "-z", page.to_str().expect("utf-8")]);
            assert!(out.status.success() && out.stderr.is_empty(), "{name}.1: {}", text(&out.stderr));
        }
    }
    if found("bash") {
        let completions = prefix.join("share/bash-completion/completions");
        let script = format!("source {}/bsub && complete -p bsub bjobs allot", completions.display());
        let out = run(Path::new("bash"), &["--norc", "-c", &script]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let said = text(&out.stdout);
        assert!(said.contains("-F _allot_lsf bsub") && said.contains(" allot\n"), "{said}");
    }
    let _ = std::fs::remove_dir_all(&prefix);
}

/// The README's real installation: `allot` copied into a directory, then
/// `allot install-links` that very directory. The binary stays (it was
/// once replaced by a link to itself) and the commands call it.
#[test]
fn install_links_in_the_binarys_own_directory_keeps_the_binary() {
    let bin = tempdir("own-dir");
    let allot = bin.join("allot");
    std::fs::copy(env!("CARGO_BIN_EXE_allot"), &allot).expect("copied");
    for _ in 0..2 {
        // Another test's fork may hold the copy's descriptor for a moment
        // (until its exec): "text file busy" is asked again.
        let out = (0..50)
            .find_map(|_| match Command::new(&allot).args(["install-links", bin.to_str().expect("utf-8")]).output() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    None
                }
                other => Some(other.expect("runs")),
            })
            .expect("not busy for a second");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let meta = std::fs::symlink_metadata(&allot).expect("still there");
        assert!(meta.file_type().is_file(), "allot is still the binary, not a link");
    }
    assert_eq!(std::fs::read_link(bin.join("bsub")).expect("a link"), allot);
    let help = run(&bin.join("bsub"), &["-h", "-K"]);
    assert!(help.status.success(), "{}", text(&help.stderr));
    let _ = std::fs::remove_dir_all(&bin);
}

#[test]
fn every_command_answers_h_and_v_and_shows_its_usage_after_an_unknown_option() {
    let allot = Path::new(env!("CARGO_BIN_EXE_allot"));
    for name in ["bsub", "bjobs", "bkill", "bqueues", "badmin", "bresize", "blaunch", "bacct", "lsid"] {
        let help = run(allot, &[name, "-h"]);
        assert!(help.status.success(), "{name} -h");
        let said = text(&help.stderr);
        assert!(said.starts_with(&format!("Usage: {name}")), "{name}: {said}");
        assert!(said.contains(&format!("\n       {name} -h | -V\n")), "{name}: {said}");
        let version = run(allot, &[name, "-V"]);
        assert!(version.status.success() && text(&version.stderr).starts_with("allot "), "{name} -V");
    }
    // `-h` later among the options, as getopt meets it.
    let late = run(allot, &["bjobs", "-l", "-h"]);
    assert!(late.status.success() && text(&late.stderr).starts_with("Usage: bjobs"));
    let unknown = run(allot, &["bjobs", "-aZ"]);
    assert_eq!(unknown.status.code(), Some(1));
    let said = text(&unknown.stderr);
    assert!(said.starts_with("bjobs: -aZ: unknown option\nUsage: bjobs [-a]"), "{said}");
    let bad_topic = run(allot, &["bsub", "-h", "-nosuch"]);
    assert_eq!(bad_topic.status.code(), Some(1));
    assert_eq!(text(&bad_topic.stderr), "bsub: -h -nosuch: no such option or category\n");
    // A refused option says so, and submits nothing (no allotd is asked).
    let refused = run(allot, &["bmod", "-R", "select[mem>1]", "1"]);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(text(&refused.stderr), "bmod: -R: not supported by this allot yet. Job not modified.\n");
}
