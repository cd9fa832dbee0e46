//! The `allot` binary end to end: the examples, the spec's `bhpart -r`
//! table, and located errors for broken configuration files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn allot(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_allot")).args(args).output().expect("allot runs")
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn every_example_directory_passes_config_check() {
    let mut n = 0;
    for entry in std::fs::read_dir(examples()).expect("examples/") {
        let dir = entry.expect("entry").path();
        if !dir.is_dir() {
            continue;
        }
        let out = allot(&["config", "check", dir.to_str().expect("utf-8 path")]);
        assert!(out.status.success(), "{}: {}", dir.display(), stderr(&out));
        // Only what allot does not apply, said so.
        let err = stderr(&out);
        assert!(err.lines().all(|l| l.contains("is not applied by allot")), "{}: warnings: {err}", dir.display());
        n += 1;
    }
    assert!(n >= 6, "the spec's examples and a site: {n}");
}

/// The spec's `bhpart -r Partition1` (spec 000 and 003): the PRIORITY column
/// of every row within 0.5% of the spec's.
#[test]
fn bhpart_r_partition1_matches_the_spec() {
    let dir = examples().join("partition1");
    let usage = dir.join("usage.json");
    let out = allot(&["shares", "--config", dir.to_str().expect("path"), "--usage", usage.to_str().expect("path")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let spec = [
        ("Partition1/", "group1", 40, 1.867, 5, 48.4, 17618.0),
        ("Partition1/", "group2", 20, 0.775, 6, 607.7, 24664.0),
        ("Partition1/group2/", "user1", 8, 1.144, 1, 9.6, 5108.0),
        ("Partition1/group2/", "user2", 2, 0.667, 0, 0.0, 0.0),
        ("Partition1/group2/", "others", 1, 0.046, 5, 598.1, 19556.0),
    ];
    for (path, name, shares, priority, started, cpu, run) in spec {
        let block = text.split("SHARE_INFO_FOR: ").find(|b| b.starts_with(&format!("{path}\n"))).expect(path);
        let row: Vec<&str> =
            block.lines().find(|l| l.split_whitespace().next() == Some(name)).expect(name).split_whitespace().collect();
        assert_eq!(row[1].parse::<u32>().expect("shares"), shares, "{name}");
        let got: f64 = row[2].parse().expect("priority");
        assert!((got - priority).abs() / priority <= 0.005, "{name}: priority {got}, spec {priority}");
        assert_eq!(row[3].parse::<u32>().expect("started"), started, "{name}");
        assert_eq!(row[5].parse::<f64>().expect("cpu"), cpu, "{name}");
        assert_eq!(row[6].parse::<f64>().expect("run"), run, "{name}");
    }
}

#[test]
fn shares_without_arguments_runs_the_built_in_example() {
    let out = allot(&["shares"]);
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn shares_json_lists_every_level() {
    let out = allot(&["shares", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let tables = v.as_array().expect("a list");
    assert_eq!(tables.len(), 2);
    assert_eq!(tables[1]["policy"], "Partition1");
    assert_eq!(tables[1]["path"], "Partition1/group2/");
    let user1 = &tables[1]["rows"][0];
    assert_eq!(
        (user1["name"].as_str(), user1["shares"].as_u64(), user1["started"].as_u64()),
        (Some("user1"), Some(8), Some(1))
    );
    assert!((user1["priority"].as_f64().expect("priority") - 1.144).abs() < 0.001);
    assert!(user1.get("adjust").is_none(), "no ADJUST column when FAIRSHARE_ADJUSTMENT_FACTOR is 0");
}

#[test]
fn the_adjust_column_appears_with_an_adjustment_factor() {
    let dir = tempdir("adjust");
    std::fs::write(dir.join("lsb.params"), "Begin Parameters\nFAIRSHARE_ADJUSTMENT_FACTOR = 1\nEnd Parameters\n")
        .expect("write");
    std::fs::write(
        dir.join("lsb.queues"),
        "Begin Queue\nQUEUE_NAME = q\nFAIRSHARE = USER_SHARES[[default, 6]]\nEnd Queue\n",
    )
    .expect("write");
    std::fs::write(dir.join("usage.json"), r#"{"q": {"u1": {"adjustment": 3}}}"#).expect("write");
    let out = allot(&[
        "shares",
        "--config",
        dir.to_str().expect("path"),
        "--usage",
        dir.join("usage.json").to_str().expect("path"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("ADJUST"), "{text}");
    // 6 / ((1+0)*3 + 3*1) = 1.000
    let row = text.lines().find(|l| l.starts_with("u1")).expect("u1 row");
    assert_eq!(row.split_whitespace().collect::<Vec<_>>(), ["u1", "6", "1.000", "0", "0", "0.0", "0", "3.000"]);
}

/// The memory-based adjustment in `allot shares`: a user whose one
/// started job holds 315 MB, on hosts of 1,024 MB per slot, THRESHOLD 0.5:
/// (1 + 1) * ((315 / 1) / (1024 * 0.5)) = 1.230.
#[test]
fn allot_shares_applies_the_memory_adjustment() {
    let dir = tempdir("memory-adjust");
    let files = [
        ("lsb.params", "Begin Parameters\nFAIRSHARE_ADJUSTMENT_FACTOR = 1\nEnd Parameters\n"),
        ("lsb.queues", "Begin Queue\nQUEUE_NAME = q\nFAIRSHARE = USER_SHARES[[default, 6]]\nEnd Queue\n"),
        (
            "lsf.cluster.c",
            "Begin Host\nHOSTNAME model type server RESOURCES ncpus maxmem\nhostA ! LINUX 1 () 4 4096\nEnd Host\n",
        ),
        ("allot.toml", "[fairshare]\nadjustment = \"memory\"\nmemory_threshold = 0.5\n"),
        ("usage.json", r#"{"q": {"u1": {"started": 1, "memory": 315}}}"#),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("write");
    }
    let out = allot(&[
        "shares",
        "--config",
        dir.to_str().expect("path"),
        "--usage",
        dir.join("usage.json").to_str().expect("path"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let row = text.lines().find(|l| l.starts_with("u1")).expect("u1 row");
    // Priority: 6 / ((1 + 1) * 3 + 1.230 * 1) = 0.830 (RUN_JOB_FACTOR 3).
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!((cells[2], cells.last().copied()), ("0.830", Some("1.230")), "{text}");
}

/// A fresh directory, unique to this call (tests run in parallel),
/// removed when dropped unless its test failed (to be looked at).
fn tempdir(name: &str) -> Scratch {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("allot-cli-test-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    Scratch(dir)
}

struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Copies `examples/site` and replaces `file`'s text with `broken`.
fn broken_site(file: &str, broken: impl Fn(&str) -> String) -> String {
    let dir = tempdir(&file.replace('.', "_"));
    for entry in std::fs::read_dir(examples().join("site")).expect("site") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        let name = path.file_name().expect("name").to_str().expect("utf-8").to_string();
        let text = if name == file { broken(&text) } else { text };
        std::fs::write(dir.join(&name), text).expect("write");
    }
    let out = allot(&["config", "check", dir.to_str().expect("path")]);
    assert!(!out.status.success(), "{file}: a broken copy must fail");
    stderr(&out)
}

#[test]
fn a_broken_copy_of_each_file_type_gives_a_located_error() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "lsb.params",
            "HIST_HOURS                = 5",
            "HIST_HOURS = five",
            "lsb.params:8:14: error: HIST_HOURS: expected a number, found `five`",
        ),
        (
            "lsb.queues",
            "USER_SHARES[[science, 80]",
            "USER_SHARE[[science, 80]",
            "lsb.queues:9:20: error: FAIRSHARE: expected `USER_SHARES[[name, shares] ...]`",
        ),
        (
            "lsb.users",
            "([alice, 3] [default, 1])",
            "([alice 3] [default, 1])",
            "lsb.users:9:49: error: USER_SHARES: expected `,`, found `3]`",
        ),
        (
            "lsb.hosts",
            "(node[01-04])",
            "(node[04-01])",
            "lsb.hosts:17:19: error: MEMBER: range `04-01` is empty or too large",
        ),
        (
            "lsf.cluster.site",
            "hg2@[node09",
            "hg2[node09",
            "lsf.cluster.site:36:81: error: LOCATION: expected `value@[hosts]`",
        ),
        ("allot.toml", "policy = \"lsf\"", "policy = \"lsf", "allot.toml:3:"),
        ("lsf.conf", "LSB_NCPU_ENFORCE=1", "LSB_NCPU_ENFORCE 1", "lsf.conf:3:18: error: expected `=`"),
    ];
    for (file, from, to, expect) in cases {
        let err = broken_site(file, |t| {
            assert!(t.contains(from), "{file} has `{from}`");
            t.replacen(from, to, 1)
        });
        assert!(err.lines().any(|l| l.starts_with(expect)), "{file}: expected a line starting `{expect}`, got:\n{err}");
    }
}

#[test]
fn config_check_reports_every_problem_not_only_the_first() {
    let err = broken_site("lsb.queues", |t| {
        t.replace("PRIORITY         = 30", "PRIORITY = x").replace("UJOB_LIMIT  = 50", "UJOB_LIMIT = y")
    });
    let errors: Vec<&str> = err.lines().filter(|l| l.contains(": error: ")).collect();
    assert_eq!(errors.len(), 2, "{err}");
    assert!(err.contains("2 errors"), "{err}");
}

#[test]
fn a_usage_file_naming_an_unknown_policy_or_user_is_refused() {
    let dir = examples().join("partition1");
    let tmp = tempdir("usage");
    let bad = tmp.join("usage.json");
    std::fs::write(&bad, "{\n  \"Partition9\": {}\n}\n").expect("write");
    let out = allot(&["shares", "--config", dir.to_str().expect("path"), "--usage", bad.to_str().expect("path")]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(
            ":2:3: error: `Partition9` is not a fairshare policy of the configuration (policies: Partition1)"
        ),
        "{}",
        stderr(&out)
    );
    std::fs::write(&bad, "{\"Partition1\": {\"user1\": {\"started\": \"x\"}}}").expect("write");
    let out = allot(&["shares", "--config", dir.to_str().expect("path"), "--usage", bad.to_str().expect("path")]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("usage.json:1:"), "{}", stderr(&out));
}

fn traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces")
}

/// The README's first command: `allot sim` on a real trace with nothing
/// else, writing its outputs into a new directory named after the trace.
#[test]
fn sim_runs_a_real_trace_with_nothing_else() {
    let trace = traces().join("KTH-SP2-1996-2.1-cln.swf.gz");
    if !trace.exists() {
        eprintln!("skipped: {} is not here (shared/ beside the repository)", trace.display());
        return;
    }
    let dir = tempdir("sim-kth");
    let out = Command::new(env!("CARGO_BIN_EXE_allot"))
        .current_dir(&dir)
        .args(["sim", trace.to_str().expect("path"), "--report-at", "86400"])
        .output()
        .expect("allot runs");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("28475 jobs ran, 1 skipped, 0 rejected"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("KTH-SP2-1996-2.1-cln.swf.gz:27323: skipped: unknown number of processors"),
        "{}",
        stderr(&out)
    );
    let sim = dir.join("KTH-SP2-1996-2.1-cln.sim");
    let problems = std::fs::read_to_string(sim.join("problems.txt")).expect("problems.txt");
    assert_eq!(problems.lines().count(), 1, "{problems}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sim.join("summary.json")).expect("summary")).expect("JSON");
    for key in [
        "policy",
        "jobs",
        "rejected",
        "makespan",
        "utilization",
        "mean_wait",
        "p50_wait",
        "p95_wait",
        "mean_bounded_slowdown",
        "users",
    ] {
        assert!(summary.get(key).is_some(), "summary.json has `{key}`");
    }
    assert_eq!(summary["policy"], "fairshare");
    let csv = std::fs::read_to_string(sim.join("jobs.csv")).expect("jobs.csv");
    assert!(csv.starts_with("id,user,queue,submit,start,end,slots,hosts,exit,priority\n"));
    assert_eq!(csv.lines().count(), 28_476);
    for file in ["utilization.svg", "shares.svg", "shares-86400.json"] {
        assert!(sim.join(file).exists(), "{file}");
    }
    // A second run takes a new directory, not the first one's.
    let again = Command::new(env!("CARGO_BIN_EXE_allot"))
        .current_dir(&dir)
        .args(["sim", trace.to_str().expect("path")])
        .output()
        .expect("runs");
    assert!(again.status.success());
    assert!(dir.join("KTH-SP2-1996-2.1-cln.sim-2").join("jobs.csv").exists());
}

#[test]
fn sim_of_json_lines_needs_a_configuration() {
    let dir = tempdir("sim-jsonl");
    let w = dir.join("w.jsonl");
    std::fs::write(&w, "{\"submit\": 0, \"user\": \"alice\", \"runtime\": 5, \"bsub\": \"-n 2 -q nosuch ./a\"}\nnot json\n{\"submit\": 1, \"user\": \"bob\", \"runtime\": 5, \"bsub\": \"./b\"}\n{\"at\": 2, \"job\": 3, \"bswitch\": \"nosuch\"}\n").expect("write");
    let out = allot(&["sim", w.to_str().expect("path")]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("a JSON-lines workload names no machine: give --config DIR"), "{}", stderr(&out));
    let cfg = examples().join("cross-queue");
    let hosts = dir.join("conf");
    std::fs::create_dir_all(&hosts).expect("dir");
    std::fs::copy(cfg.join("lsb.queues"), hosts.join("lsb.queues")).expect("copy");
    std::fs::write(hosts.join("lsb.hosts"), "Begin Host\nHOST_NAME MXJ\nh1 4\nEnd Host\n").expect("write");
    let outdir = dir.join("out");
    let out = allot(&[
        "sim",
        w.to_str().expect("path"),
        "--config",
        hosts.to_str().expect("path"),
        "--out",
        outdir.to_str().expect("path"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("1 jobs ran, 1 skipped, 1 rejected"), "{}", stdout(&out));
    let problems = std::fs::read_to_string(outdir.join("problems.txt")).expect("problems.txt");
    assert_eq!(
        problems.lines().map(|l| l.rsplit_once(".jsonl:").map_or(l, |x| x.1)).collect::<Vec<_>>(),
        [
            "1: rejected: queue `nosuch` does not exist",
            "2: skipped: column 2: expected ident",
            "4: command refused: queue `nosuch` does not exist"
        ]
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(outdir.join("summary.json")).expect("summary")).expect("JSON");
    assert_eq!((summary["rejected"].as_u64(), summary["skipped"].as_u64()), (Some(1), Some(1)));
}

#[test]
fn sim_refuses_policy_with_config_and_unknown_formats() {
    let dir = tempdir("sim-bad");
    let w = dir.join("w.txt");
    std::fs::write(&w, "x").expect("write");
    let out = allot(&["sim", w.to_str().expect("path")]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("expected a workload named *.swf[.gz]"), "{}", stderr(&out));
    let swf = dir.join("w.swf");
    std::fs::write(&swf, "; MaxProcs: 4\n").expect("write");
    let site = examples().join("site");
    let out =
        allot(&["sim", swf.to_str().expect("path"), "--config", site.to_str().expect("path"), "--policy", "fcfs"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--policy: applies only without --config"), "{}", stderr(&out));
}

/// `allot install-links DIR` makes `allot` and the LSF commands callable by
/// name; a link called `bqueues` is the `bqueues` command.
#[test]
fn install_links_makes_the_commands_callable_by_name() {
    let dir = std::env::temp_dir().join(format!("allot-links-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = allot(&["install-links", dir.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let names = "allot bsub bjobs bkill bstop bresume bswitch bmod brequeue bpeek bhist bqueues bhosts bhpart bugroup \
                 busers badmin bslots blaunch lsgrun bmgroup lshosts lsload bresize bparams lsid lsclusters bacct blimits bgadd bgmod bgdel bjgroup";
    assert!(stdout(&out).starts_with(&format!("{}: {names}\n", dir.display())), "{}", stdout(&out));
    for name in names.split(' ') {
        assert!(dir.join(name).exists(), "{name}");
    }
    let state = dir.join("no-daemon-here");
    let by_name = Command::new(dir.join("bqueues")).env("ALLOT_STATE_DIR", &state).output().expect("runs");
    assert!(!by_name.status.success());
    assert!(stderr(&by_name).contains("cannot connect to allotd"), "{}", stderr(&by_name));
    let version = Command::new(dir.join("allot")).arg("--version").output().expect("runs");
    assert!(stdout(&version).starts_with("allot "), "{}", stdout(&version));
    // Every LSF command answers -V on standard error, with no allotd.
    for name in names.split(' ').skip(1) {
        let v = Command::new(dir.join(name)).arg("-V").env("ALLOT_STATE_DIR", &state).output().expect("runs");
        assert!(v.status.success(), "{name} -V");
        assert!(stderr(&v).starts_with("allot ") && stderr(&v).ends_with(", LSF 10.1 commands\n"), "{name}");
        assert_eq!(stdout(&v), "", "{name}");
    }
    // A job's own -V is its own.
    let own =
        Command::new(dir.join("bsub")).args(["true", "-V"]).env("ALLOT_STATE_DIR", &state).output().expect("runs");
    assert!(stderr(&own).contains("cannot connect to allotd"), "{}", stderr(&own));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `allot sshare` or `allot sprio` on a configuration directory and a
/// usage file, with `--json` when asked.
fn multifactor(command: &str, dir: &Path, usage: &Path, json: bool) -> Output {
    let (dir, usage) = (dir.to_str().expect("utf-8"), usage.to_str().expect("utf-8"));
    let mut args = vec![command, "--config", dir, "--usage", usage];
    if json {
        args.push("--json");
    }
    allot(&args)
}

/// `allot sshare` on `examples/multifactor` (Slurm's classic example as a
/// `sacctmgr dump`, under slurm-tickets with users 2 and 5 pending): the
/// spec 001 tickets (A 198, D 802; user 2 198, user 5 802) in the table,
/// and the same rows as JSON.
#[test]
fn sshare_shows_the_ticket_example() {
    let dir = examples().join("multifactor");
    let usage = dir.join("usage.json");
    let out = multifactor("sshare", &dir, &usage, false);
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!("sshare_tickets", stdout(&out));
    let out = multifactor("sshare", &dir, &usage, true);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let row = |user: &str| rows.as_array().expect("list").iter().find(|r| r["user"] == user).expect("row").clone();
    assert_eq!(row("user2")["tickets"].as_f64().map(f64::round), Some(198.0));
    assert_eq!(row("user5")["tickets"].as_f64().map(f64::round), Some(802.0));
    assert_eq!(row("user5")["fairshare"], 100.0);
    assert_eq!(row("user5")["level_fs"], serde_json::Value::Null);
    assert_eq!(rows[0]["user"], serde_json::Value::Null);
    assert_eq!(rows[0]["raw_shares"], serde_json::Value::Null);
}

/// Switching policy is one line of allot.toml; an unknown policy, or an
/// association file that is not there, is a located error; sshare on
/// `lsf` says what to use instead; a user of no account is refused with
/// the entry's place.
#[test]
fn sshare_policies_and_errors() {
    let src = examples().join("multifactor");
    let dir = std::env::temp_dir().join(format!("allot-sshare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::copy(src.join("assoc.cfg"), dir.join("assoc.cfg")).expect("copy");
    let toml = std::fs::read_to_string(src.join("allot.toml")).expect("allot.toml");
    let usage = src.join("usage.json");
    let sshare = |toml: &str, usage: &Path| {
        std::fs::write(dir.join("allot.toml"), toml).expect("write");
        multifactor("sshare", &dir, usage, true)
    };
    let factor = |out: &Output, user: &str| -> f64 {
        let rows: serde_json::Value = serde_json::from_str(&stdout(out)).expect("JSON");
        let rows = rows.as_array().expect("list").clone();
        rows.iter().find(|r| r["user"] == user).and_then(|r| r["fairshare"].as_f64()).expect("fairshare")
    };
    let classic = sshare(&toml.replace("slurm-tickets", "slurm-classic"), &usage);
    assert!(classic.status.success(), "{}", stderr(&classic));
    assert!((factor(&classic, "user1") - 0.408479).abs() < 1e-6);
    let fair_tree = sshare(&toml.replace("slurm-tickets", "slurm-fairtree"), &usage);
    assert_eq!(factor(&fair_tree, "user5"), 1.0);
    let flux = sshare(&toml.replace("slurm-tickets", "flux-accounting"), &usage);
    assert_eq!(factor(&flux, "user5"), 1.0);

    let bad = sshare(&toml.replace("slurm-tickets", "slurm"), &usage);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("allot.toml:4:10: error: [priority] policy: expected one of"), "{}", stderr(&bad));
    let missing = sshare(&toml.replace("assoc.cfg", "nosuch.cfg"), &usage);
    assert!(
        stderr(&missing).contains(
            "allot.toml:5:12: error: [priority] accounts: `nosuch.cfg` is not in the configuration directory"
        ),
        "{}",
        stderr(&missing)
    );
    let lsf = sshare(&toml.replace("slurm-tickets", "lsf"), &usage);
    assert!(stderr(&lsf).contains("`allot shares` shows LSF's share tables"), "{}", stderr(&lsf));
    let wrong = dir.join("wrong.json");
    std::fs::write(&wrong, "[\n  {\"user\": \"user9\", \"usage\": 1}\n]\n").expect("write");
    let out = sshare(&toml, &wrong);
    assert!(
        stderr(&out).contains("wrong.json:2:4: error: entry 1 (user `user9`): no association for user `user9`"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `allot sprio` on `examples/multifactor` (64 slots, max_wait one day;
/// weights wait 1000, fair share 10000, QoS 1000, size 100). Job 100
/// (user 5, 16 slots, waited 2 h, standby) has 1000*7200/86400 plus
/// 10000*1 plus 1000*0 plus 100*16/64, that is 83.33, 10000 and 25:
/// 10108.33. User 2's four jobs (no job list: ids 101..104, 1 slot,
/// normal QoS, 1 of 2) have 10000*198.02/801.98, 500 and 100/64.
#[test]
fn sprio_weighs_the_six_factors() {
    let dir = examples().join("multifactor");
    let usage = dir.join("usage.json");
    let out = multifactor("sprio", &dir, &usage, true);
    assert!(out.status.success(), "{}", stderr(&out));
    let jobs: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let jobs = jobs.as_array().expect("list");
    let ids: Vec<u64> = jobs.iter().filter_map(|j| j["id"].as_u64()).collect();
    assert_eq!(ids, [100, 101, 102, 103, 104], "highest priority first, then job ID");
    let p = |i: usize| jobs[i]["priority"].as_f64().expect("priority");
    assert!((p(0) - (1000.0 * 7200.0 / 86400.0 + 10000.0 + 25.0)).abs() < 1e-9, "{}", p(0));
    let fair_share =
        0.4 * (0.4 / 0.45) / (0.4 * (0.4 / 0.45) + 0.6 * 2.4) / (0.6 * 2.4 / (0.4 * (0.4 / 0.45) + 0.6 * 2.4));
    assert!((p(1) - (10000.0 * fair_share + 500.0 + 100.0 / 64.0)).abs() < 1e-6, "{}", p(1));
    assert_eq!(jobs[0]["weighted"]["job_size"], 25.0);
    assert_eq!(jobs[1]["factors"]["qos"], 0.5);
    let table = multifactor("sprio", &dir, &usage, false);
    let first = stdout(&table).lines().nth(1).map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    assert_eq!(first.as_deref(), Some("100 user5 10108"));
    // expedite is granted to nobody by default; a user factor above 1
    // would raise a job's priority.
    let bad = std::env::temp_dir().join(format!("allot-sprio-{}.json", std::process::id()));
    for (job, want) in [
        ("{\"qos\": \"expedite\"}", "entry 1 (user `user1`): qos `expedite`: the user may not use it"),
        ("{\"user_factor\": 1.5}", "entry 1 (user `user1`): user_factor: expected a number from 0 to 1"),
        ("{\"queue\": \"nosuch\"}", "entry 1 (user `user1`): queue `nosuch`: no such queue"),
    ] {
        std::fs::write(&bad, format!("[{{\"user\": \"user1\", \"usage\": 1, \"jobs\": [{job}]}}]")).expect("write");
        let out = multifactor("sprio", &dir, &bad, false);
        assert!(!out.status.success() && stderr(&out).contains(want), "{}", stderr(&out));
    }
    let _ = std::fs::remove_file(&bad);
}

/// allotd made the job durable and died before answering: `bsub` sends the
/// same request again (same request id) until an answer comes, and prints
/// that answer once; allotd's side gives the same job back for the same
/// id (tested in allot-daemon's restart tests).
#[test]
fn bsub_asks_again_for_a_lost_answer_with_the_same_request() {
    use allot_proto::{Envelope, PROTOCOL_VERSION, Request, Response, read_frame, write_frame};
    use std::os::unix::net::UnixListener;
    let dir = std::env::temp_dir().join(format!("allot-cli-lost-answer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let listener = UnixListener::bind(dir.join("allotd.sock")).expect("listen");
    let server = std::thread::spawn(move || {
        let mut ids = Vec::new();
        for answer in [false, true] {
            let (mut stream, _) = listener.accept().expect("accept");
            let bytes = read_frame(&mut stream).expect("request");
            let env: Envelope<Request> = serde_json::from_slice(&bytes).expect("json");
            let Request::Submit(s) = env.body else { panic!("not a submission") };
            ids.push(s.request.expect("a request id"));
            if answer {
                let reply = Envelope {
                    version: PROTOCOL_VERSION,
                    body: Response::Submitted { job: 7, queue: "normal".into(), warning: None },
                };
                write_frame(&mut stream, &serde_json::to_vec(&reply).expect("json")).expect("answer");
            }
            // Dropped unanswered the first time: the answer is lost.
        }
        ids
    });
    let out = Command::new(env!("CARGO_BIN_EXE_allot"))
        .args(["bsub", "true"])
        .env("ALLOT_STATE_DIR", &dir)
        .output()
        .expect("allot runs");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Job <7> is submitted to queue <normal>.\n");
    let ids = server.join().expect("server");
    assert_eq!(ids[0], ids[1], "the same request both times");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Hostile traces: a header asking for more than allot simulates is
/// refused at its line (before, it aborted on allocation or took 8.8 GB),
/// and a job field of 1e308 is skipped with why (before, it made
/// `--policy slurm-fairtree` run for ever).
#[test]
fn hostile_traces_are_refused_or_skipped_never_run_away() {
    let dir = std::env::temp_dir().join(format!("allot-cli-hostile-trace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let job = |id: u32, runtime: &str| format!("{id} {id}0 0 {runtime} 1 -1 -1 1 200 -1 1 {id} -1 -1 -1 -1 -1 -1\n");
    for (header, what) in [
        ("; MaxProcs: 99999999999\n", "MaxProcs: 99999999999 is more than the 1000000000 processors allot simulates"),
        ("; MaxProcs: 100000000\n", "MaxProcs: 100000000 without MaxNodes would be 100000000 one-slot hosts"),
    ] {
        let trace = dir.join("big.swf");
        std::fs::write(&trace, format!("; Version: 2.2\n{header}{}", job(1, "100"))).expect("trace");
        let out = allot(&["sim", trace.to_str().expect("utf-8"), "--out", dir.join("out").to_str().expect("utf-8")]);
        assert!(!out.status.success());
        assert!(stderr(&out).contains(&format!("{}:2: {what}", trace.display())), "{}", stderr(&out));
    }
    let trace = dir.join("field.swf");
    std::fs::write(
        &trace,
        format!("; MaxProcs: 4\n; MaxNodes: 4\n{}{}{}", job(1, "1e308"), job(2, "100"), job(3, "50")),
    )
    .expect("trace");
    let out = allot(&[
        "sim",
        trace.to_str().expect("utf-8"),
        "--policy",
        "slurm-fairtree",
        "--out",
        dir.join("out").to_str().expect("utf-8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains("field.swf:3: skipped: run time 18446744073709551615 s is more than 10000000000 s"),
        "{text}"
    );
    assert!(stdout(&out).contains("2 jobs ran, 1 skipped"), "{}", stdout(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `allot config check` says what came from allot's defaults: the hosts
/// and queue of a directory that defines none, and not the queues of one
/// whose `lsb.queues` defines them (its section names in any case).
#[test]
fn config_check_says_what_came_from_the_defaults() {
    let dir = tempdir("check-defaults");
    std::fs::write(dir.join("allot.toml"), "[daemon]\nusage_interval = 5\n").expect("write");
    let out = allot(&["config", "check", dir.to_str().expect("path")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("\nhosts: no file names one: this machine, "), "{said}");
    assert!(said.contains("\nqueues: no lsb.queues defines one: normal, from allot's defaults\n"), "{said}");
    std::fs::write(dir.join("allot.toml"), "[[hosts]]\nname = \"a\"\nncpus = 2\n").expect("write");
    std::fs::write(dir.join("lsb.queues"), "begin queue\nQUEUE_NAME = short\nPRIORITY = 40\nend queue\n")
        .expect("write");
    let out = allot(&["config", "check", dir.to_str().expect("path")]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success() && !said.contains("hosts:") && !said.contains("queues:"), "{said}");
    // The limits of lsb.resources and the counts the hosts share are named.
    std::fs::write(dir.join("lsb.resources"), "Begin Limit\nNAME = two\nPER_USER = all\nSLOTS = 2\nEnd Limit\n")
        .expect("write");
    std::fs::write(
        dir.join("lsf.cluster.c"),
        "Begin ResourceMap\nRESOURCENAME LOCATION\nlicA (4@[all])\nEnd ResourceMap\n",
    )
    .expect("write");
    let out = allot(&["config", "check", dir.to_str().expect("path")]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("\nlimits (lsb.resources): two\nshared resource licA: 4 on all hosts\n"), "{said}");
}
