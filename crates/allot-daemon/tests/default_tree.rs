//! `allot start` with no configuration writes the embedded defaults as an
//! LSF configuration tree in the state directory, runs on it, and shows it
//! where LSF's tools look (`badmin showconf mbd`); the administrator edits
//! it and `badmin reconfig` applies it.

mod common;

use std::process::Command;

use common::{allot, stderr, stdout, tempdir};

#[test]
fn allot_start_writes_its_defaults_as_an_lsf_tree_to_edit() {
    let dir = tempdir("default-tree");
    let state = dir.join("state");
    let run = |args: &[&str]| {
        Command::new(allot())
            .args(args)
            .env("ALLOT_STATE_DIR", &state)
            .env_remove("LSF_ENVDIR")
            .current_dir(&*dir)
            .output()
            .expect("allot runs")
    };
    struct Stop<'a>(&'a dyn Fn(&[&str]) -> std::process::Output);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            let _ = (self.0)(&["stop"]);
        }
    }
    let started = run(&["start"]);
    let _stop = Stop(&run);
    assert!(started.status.success(), "{}{}", stdout(&started), stderr(&started));
    let conf = state.join("conf");
    assert!(stdout(&started).contains(&format!("the default configuration is written in {}", conf.display())));
    let batch = conf.join("lsbatch/allot/configdir");
    for file in
        [conf.join("lsf.conf"), conf.join("lsf.shared"), conf.join("lsf.cluster.allot"), batch.join("lsb.queues")]
    {
        assert!(file.is_file(), "{}", file.display());
    }
    let shown = stdout(&run(&["badmin", "showconf", "mbd"]));
    for (key, value) in [
        ("LSF_ENVDIR", conf.display().to_string()),
        ("LSF_CONFDIR", conf.display().to_string()),
        ("LSB_CONFDIR", conf.join("lsbatch").display().to_string()),
        ("LSB_SHAREDIR", state.display().to_string()),
        ("LSF_UNIT_FOR_LIMITS", "KB".into()),
    ] {
        assert!(shown.contains(&format!("\n    {key} = {value}\n")), "{key}: {shown}");
    }
    let queues = stdout(&run(&["bqueues"]));
    assert!(queues.lines().nth(1).is_some_and(|l| l.starts_with("normal ")), "{queues}");
    // The administrator's edit, applied.
    let mut text = std::fs::read_to_string(batch.join("lsb.queues")).expect("lsb.queues");
    text.push_str("\nBegin Queue\nQUEUE_NAME = night\nPRIORITY = 10\nEnd Queue\n");
    std::fs::write(batch.join("lsb.queues"), text).expect("edited");
    let reconfigured = run(&["badmin", "reconfig"]);
    assert!(reconfigured.status.success(), "{}", stderr(&reconfigured));
    assert!(stdout(&run(&["bqueues"])).lines().any(|l| l.starts_with("night ")));
    // A second start leaves the edited tree as it is.
    assert!(run(&["stop"]).status.success());
    let again = run(&["start"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(!stdout(&again).contains("written"), "{}", stdout(&again));
    assert!(stdout(&run(&["bqueues"])).lines().any(|l| l.starts_with("night ")));
}
