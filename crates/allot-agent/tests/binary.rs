//! The `allot-agent` binary as a site starts it: what it refuses, and
//! what it says. (allotd's tests run it as an agent, `tests/common/agents.rs`
//! in allot-daemon; this test is also why `cargo test --workspace` builds
//! it for them.)

use std::process::Command;

fn agent() -> Command {
    Command::new(env!("CARGO_BIN_EXE_allot-agent"))
}

#[test]
fn without_server_it_names_the_missing_option() {
    let out = agent().args(["--tls", "/nonexistent"]).output().expect("allot-agent runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--server"), "{stderr}");
}

#[test]
fn test_netns_needs_test_host() {
    let out = agent()
        .args(["--server", "127.0.0.1:1", "--tls", "/x", "--test-netns", "n1"])
        .output()
        .expect("allot-agent runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--test-host"), "{stderr}");
}

/// The supervisor is installed beside the agent; an agent without it
/// says where it looked, before it connects anywhere.
#[test]
fn an_agent_without_its_supervisor_beside_it_says_where_it_looked() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let copy = dir.path().join("allot-agent");
    std::fs::copy(env!("CARGO_BIN_EXE_allot-agent"), &copy).expect("a copy of allot-agent");
    let out = Command::new(&copy)
        .args(["--server", "127.0.0.1:1", "--host", "h1", "--tls"])
        .arg(dir.path())
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .output()
        .expect("the copy runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let supervisor = dir.path().join("allot-supervise");
    assert!(stderr.contains(&format!("{} is missing", supervisor.display())), "{stderr}");
}
