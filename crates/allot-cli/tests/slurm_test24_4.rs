//! Slurm's own regression test of fair tree (testsuite/expect/test24.4 and
//! test24.4.prog.c): its association tree and usage, given to `allot
//! sshare` as a `sacctmgr dump` and a usage file (tests/slurm_test24_4/),
//! and the fair-share values and level fair-shares that test expects, to
//! the six digits `sshare` prints. It covers the three tie rules,
//! `Fairshare=parent` users and accounts, and a user tied with an account.

use std::path::Path;
use std::process::Command;

/// (account, user, FairShare, LevelFS) as test24.4 expects them; a level
/// fair-share of `None` is one Slurm leaves blank (`Fairshare=parent`).
const EXPECTED: &[(&str, &str, f64, Option<f64>)] = &[
    ("root", "u1", 1.0, Some(f64::INFINITY)),
    ("root", "u2", 0.666667, Some(1.153846)),
    ("aAA", "uAA1", 0.619048, Some(1.0)),
    ("aAB", "uAB1", 0.523810, Some(0.5)),
    ("aAB", "uAB2", 0.571429, Some(f64::INFINITY)),
    ("aBA", "uBA1", 0.714286, Some(1.0)),
    ("aBB", "uBB1", 0.761905, Some(f64::INFINITY)),
    ("aC", "uC1", 0.047619, Some(0.0)),
    ("aD", "uD1", 0.476190, None),
    ("aD", "uD2", 0.238095, Some(1.294118)),
    ("aD", "uD3", 0.333333, Some(1.294118)),
    ("aDA", "uDA1", 0.476190, None),
    ("aDA", "uDA2", 0.380952, Some(1.941176)),
    ("aDA", "uDA3", 0.333333, Some(1.294118)),
    ("aE", "aE1", 1.0, Some(f64::INFINITY)),
    ("aE", "aE2", 1.0, Some(f64::INFINITY)),
    ("aF", "uF1", 1.0, Some(f64::INFINITY)),
    ("aF", "uF2", 1.0, Some(f64::INFINITY)),
    ("aG", "uG1", 0.190476, Some(1.0)),
    ("aGA", "uGA1", 0.190476, Some(1.25)),
    ("aGA", "uGA2", 0.095238, Some(0.833333)),
];

/// Accounts' level fair-shares as test24.4 expects them.
const ACCOUNTS: &[(&str, f64)] = &[
    ("aA", 1.025641),
    ("aAA", 1.6875),
    ("aAB", 0.45),
    ("aB", 2.769231),
    ("aBA", 0.416667),
    ("aBB", f64::INFINITY),
    ("aC", 0.0),
    ("aD", 0.524476),
    ("aE", f64::INFINITY),
    ("aF", f64::INFINITY),
    ("aG", 0.461538),
    ("aGA", 1.0),
];

fn same(a: f64, b: f64) -> bool {
    (a.is_infinite() && b.is_infinite()) || (a - b).abs() < 5e-7
}

#[test]
fn allot_sshare_gives_slurms_fair_tree_values() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slurm_test24_4");
    let allot = Path::new(env!("CARGO_BIN_EXE_allot"));
    let out = Command::new(allot)
        .args(["sshare", "--config", dir.to_str().expect("path"), "--usage"])
        .arg(dir.join("usage.json"))
        .arg("--json")
        .output()
        .expect("allot runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("json");
    let find = |account: &str, user: Option<&str>| {
        rows.iter()
            .find(|r| r["account"] == account && r["user"].as_str() == user)
            .unwrap_or_else(|| panic!("no row {account} {user:?}"))
    };
    // JSON has no infinity: a level fair-share without one is infinite
    // where Slurm prints `inf`.
    let lf = |r: &serde_json::Value| r["level_fs"].as_f64().unwrap_or(f64::INFINITY);
    let mut wrong = Vec::new();
    for &(account, user, fairshare, level_fs) in EXPECTED {
        let r = find(account, Some(user));
        let f = r["fairshare"].as_f64().expect("a fair-share");
        if !same(f, fairshare) {
            wrong.push(format!("{account}|{user}: fairshare {f:.6}, Slurm {fairshare:.6}"));
        }
        if let Some(expected) = level_fs {
            if !same(lf(r), expected) {
                wrong.push(format!("{account}|{user}: level_fs {:.6}, Slurm {expected:.6}", lf(r)));
            }
        }
    }
    for &(account, level_fs) in ACCOUNTS {
        let r = find(account, None);
        if !same(lf(r), level_fs) {
            wrong.push(format!("{account}: level_fs {:.6}, Slurm {level_fs:.6}", lf(r)));
        }
    }
    // `Fairshare=parent` rows: the account's normalized shares, their own
    // usage over the account's, no level fair-share.
    for (account, user, norm_shares, effective_usage) in [
        ("aD", Some("uD1"), 0.240385, 0.181818),
        ("aDA", None, 0.240385, 0.409091),
        ("aDA", Some("uDA1"), 0.240385, 0.090909),
    ] {
        let r = find(account, user);
        let (s, u) = (r["norm_shares"].as_f64().expect("shares"), r["effective_usage"].as_f64().expect("usage"));
        if !same(s, norm_shares) || !same(u, effective_usage) || !r["level_fs"].is_null() {
            wrong.push(format!(
                "{account}|{user:?}: {s:.6} {u:.6} {}, Slurm {norm_shares} {effective_usage}",
                r["level_fs"]
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
