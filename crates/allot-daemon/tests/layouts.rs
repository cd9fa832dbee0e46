//! LSF's output layouts as golden snapshots, end to end: one cluster
//! (two hosts, a fairshare queue and a plain one, a user group), a few
//! jobs in known states, and what the real commands print about them
//! through a real allotd. What differs from run to run (dates, the user
//! running the test, this machine's name, the directories) is replaced by
//! a placeholder of the same width, so the columns stay as printed.

mod common;

use std::path::Path;

use common::{Daemon, config_dir, stdout, submitted_id, tempdir};

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// `word`, where it stands alone, replaced by `with`, keeping the width
/// of the word and the blanks after it where they allow.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before_ok = rest[..at].chars().last().is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != '-');
        let after = &rest[at + word.len()..];
        let after_ok = after.chars().next().is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != '-');
        out.push_str(&rest[..at]);
        if before_ok && after_ok {
            let blanks = after.len() - after.trim_start_matches(' ').len();
            let width = word.len() + blanks;
            out.push_str(with);
            out.push_str(&" ".repeat(width.saturating_sub(with.len()).max(usize::from(blanks > 0))));
            rest = &after[blanks..];
        } else {
            out.push_str(word);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Dates as LSF prints them (`Nov 26 11:44`, `Nov  1 09:10:00`, with a
/// weekday before and a year after in the long forms) as `Mmm dd hh:mm`.
fn mask_dates(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let at = &text[i..];
        let month = MONTHS.iter().find(|m| at.starts_with(*m));
        let date_len = month.and_then(|_| {
            // `Mmm dd hh:mm` or `Mmm dd hh:mm:ss`
            let tail = at.get(3..)?.as_bytes();
            let day_ok = tail.len() >= 9
                && tail[0] == b' '
                && (tail[1] == b' ' || tail[1].is_ascii_digit())
                && tail[2].is_ascii_digit()
                && tail[3] == b' ';
            let hm = |k: usize| {
                tail.get(k..k + 5).is_some_and(|t| {
                    t[0].is_ascii_digit()
                        && t[1].is_ascii_digit()
                        && t[2] == b':'
                        && t[3].is_ascii_digit()
                        && t[4].is_ascii_digit()
                })
            };
            if !day_ok || !hm(4) {
                return None;
            }
            let secs = tail.get(9..12).is_some_and(|t| t[0] == b':' && t[1].is_ascii_digit() && t[2].is_ascii_digit());
            Some(if secs { 15 } else { 12 })
        });
        match date_len {
            Some(n) => {
                out.push_str(if n == 15 { "Mmm dd hh:mm:ss" } else { "Mmm dd hh:mm" });
                i += n;
                // A year after it.
                if text[i..].len() >= 5
                    && text.as_bytes()[i] == b' '
                    && text[i + 1..i + 5].bytes().all(|c| c.is_ascii_digit())
                {
                    out.push_str(" yyyy");
                    i += 5;
                }
            }
            None => {
                let c = at.chars().next().unwrap_or(' ');
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    DAYS.iter().fold(out, |s, d| s.replace(&format!("{d} Mmm"), "Www Mmm"))
}

fn masked(text: &str, subs: &[(&str, &str)]) -> String {
    let mut out = text.to_string();
    for (from, to) in subs {
        out = if from.contains('/') { out.replace(from, to) } else { replace_word(&out, from, to) };
    }
    mask_dates(&out)
}

#[test]
fn the_masks_keep_the_columns() {
    assert_eq!(mask_dates("1 x Nov 26 11:44 y\nDec  1 09:10:00 2026"), "1 x Mmm dd hh:mm y\nMmm dd hh:mm:ss yyyy");
    assert_eq!(mask_dates("Thu Nov 26 09:10:00 2026: started"), "Www Mmm dd hh:mm:ss yyyy: started");
    assert_eq!(replace_word("1 root   normal root2 xroot", "root", "USER"), "1 USER   normal root2 xroot");
    assert_eq!(replace_word("vm          next", "vm", "HOST"), "HOST        next");
    let rows = "USER/GROUP   SHARES   RUN_TIME\nalice   1       1234\n\nHOSTS: all\n";
    assert_eq!(mask_run_time(rows), "USER/GROUP   SHARES   RUN_TIME\nalice   1          #\n\nHOSTS: all\n");
}

/// The RUN_TIME column of share rows (seconds a running job has run so
/// far) as `#`, right-aligned as printed.
fn mask_run_time(text: &str) -> String {
    let mut in_rows = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("USER/GROUP") && line.ends_with("RUN_TIME") {
            in_rows = true;
        } else if line.trim().is_empty() {
            in_rows = false;
        } else if in_rows {
            let number = line.rsplit(' ').next().unwrap_or("");
            let keep = &line[..line.len() - number.len()];
            out.push_str(keep);
            out.push_str(&format!("{:>width$}\n", "#", width = number.len()));
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn run(d: &Daemon, dir: &Path, args: &[&str]) -> String {
    let out = d.cmd(args, dir);
    assert!(out.status.success(), "{args:?}: {}", common::stderr(&out));
    stdout(&out)
}

#[test]
fn lsf_layouts_of_a_known_cluster() {
    let dir = tempdir("layouts");
    let cluster = "Begin Host\nHOSTNAME model type server RESOURCES ncpus maxmem\n\
                   h1 ! ! 1 (fast) 4 8192\nh2 ! ! 1 () 4 8192\nEnd Host\n";
    let config = config_dir(
        &dir,
        &[
            ("lsf.shared", "Begin Cluster\nClusterName Servers\ngolden (h1 h2)\nEnd Cluster\n"),
            ("lsf.cluster.golden", cluster),
            (
                "lsb.queues",
                "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nFAIRSHARE = USER_SHARES[[default, 1]]\n\
                 DESCRIPTION = For normal jobs\nEnd Queue\n\
                 Begin Queue\nQUEUE_NAME = short\nPRIORITY = 40\nRUNLIMIT = 60\nHOSTS = h2\nEnd Queue\n",
            ),
            (
                "lsb.users",
                "Begin UserGroup\nGROUP_NAME GROUP_MEMBER USER_SHARES\nteam (all) ([default, 1])\nEnd UserGroup\n",
            ),
            ("lsb.params", "Begin Parameters\nDEFAULT_QUEUE = normal\nEnd Parameters\n"),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let done = submitted_id(&d.cmd(&["bsub", "-J", "first_step", "-o", "/dev/null", "true"], &dir));
    d.wait_for(done, "DONE", &dir);
    let running = submitted_id(&d.cmd(&["bsub", "-n", "2", "-J", "a_rather_long_job_name", "sleep", "60"], &dir));
    d.wait_for(running, "RUN", &dir);
    let held = submitted_id(&d.cmd(&["bsub", "-H", "-q", "short", "-J", "waits", "true"], &dir));
    d.wait_for(held, "PSUSP", &dir);
    let array = submitted_id(&d.cmd(&["bsub", "-J", "sweep[1-3]", "-o", "/dev/null", "true"], &dir));
    common::wait_until(&d, &array.to_string(), &dir, &[], |l| l.len() == 3 && l.iter().all(|r| r.contains("DONE")));
    let after = format!("done({running})");
    let waiting = submitted_id(&d.cmd(&["bsub", "-w", &after, "-J", "next_step", "true"], &dir));
    d.wait_for(waiting, "PEND", &dir);

    let user = nix::unistd::User::from_uid(nix::unistd::getuid()).ok().flatten().map_or_else(String::new, |u| u.name);
    let host = allot_config::defaults::this_host();
    let state = d.state.display().to_string();
    let conf = config.display().to_string();
    let work = dir.display().to_string();
    let server_dir = common::allotd().parent().expect("a directory").display().to_string();
    let version = env!("CARGO_PKG_VERSION");
    // Longest first: the state and configuration directories are in the
    // work directory.
    let subs: Vec<(&str, &str)> = vec![
        (state.as_str(), "STATE_DIR"),
        (conf.as_str(), "CONFIG_DIR"),
        (work.as_str(), "WORK_DIR"),
        (server_dir.as_str(), "SERVER_DIR"),
        (version, "X.Y.Z"),
        (user.as_str(), "USER"),
        (host.as_str(), "HOST"),
    ];
    let (r, h, w) = (running.to_string(), held.to_string(), waiting.to_string());
    let views: Vec<(&str, Vec<&str>)> = vec![
        ("bjobs", vec!["bjobs"]),
        ("bjobs_aw", vec!["bjobs", "-aw"]),
        ("bjobs_A", vec!["bjobs", "-A", "-a"]),
        ("bjobs_o", vec!["bjobs", "-a", "-o", "jobid stat queue job_name:10 exec_host delimiter='|'"]),
        ("bjobs_l_running", vec!["bjobs", "-l", &r]),
        ("bjobs_l_held", vec!["bjobs", "-l", &h]),
        ("bjobs_p", vec!["bjobs", "-p"]),
        ("bjobs_p_l", vec!["bjobs", "-p", "-l", &w]),
        ("bqueues", vec!["bqueues"]),
        ("bqueues_l", vec!["bqueues", "-l", "normal"]),
        ("bhosts", vec!["bhosts"]),
        ("bhosts_l", vec!["bhosts", "-l", "h1"]),
        ("busers", vec!["busers", "all"]),
        ("bugroup_l", vec!["bugroup", "-l"]),
        ("bslots", vec!["bslots"]),
        ("lsid", vec!["lsid"]),
        ("lsclusters", vec!["lsclusters"]),
        ("bparams", vec!["bparams"]),
        ("showconf", vec!["badmin", "showconf", "mbd"]),
    ];
    for (name, args) in views {
        let text = mask_run_time(&masked(&run(&d, &dir, &args), &subs));
        insta::assert_snapshot!(name, text, &args.join(" "));
    }
}

/// `bqueues -l` as LSF shows a queue (spec 000's slot pool example): its
/// DESCRIPTION under its name, and its HOSTS as written, a host group as
/// `groupA/`, not the group's hosts.
#[test]
fn bqueues_l_shows_the_description_and_host_groups_as_written() {
    let dir = tempdir("bqueues-l");
    let config = config_dir(
        &dir,
        &[
            (
                "allot.toml",
                "[[hosts]]\nname = \"hostA\"\nncpus = 2\n\n[[hosts]]\nname = \"hostB\"\nncpus = 2\n\n\
                 [[hosts]]\nname = \"hostC\"\nncpus = 2\n",
            ),
            ("lsb.hosts", "Begin HostGroup\nGROUP_NAME GROUP_MEMBER\ngroupA (hostA hostB)\nEnd HostGroup\n"),
            (
                "lsb.queues",
                "Begin Queue\nQUEUE_NAME = queue1\nPRIORITY = 50\nDESCRIPTION = Jobs of the pool\nHOSTS = groupA hostC+1\n\
                 End Queue\n\nBegin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEnd Queue\n",
            ),
        ],
    );
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let long = stdout(&d.cmd(&["bqueues", "-l", "queue1"], &dir));
    assert!(long.starts_with("QUEUE: queue1\n  -- Jobs of the pool\n\nPARAMETERS/STATISTICS\n"), "{long}");
    assert!(long.contains("USERS: all users\nHOSTS:  groupA/ hostC+1\n"), "{long}");
    // bmgroup lists the host group and its hosts.
    let groups = stdout(&d.cmd(&["bmgroup"], &dir));
    assert_eq!(groups, "GROUP_NAME    HOSTS\ngroupA        hostA hostB\n");
    let plain = stdout(&d.cmd(&["bqueues", "-l", "normal"], &dir));
    assert!(
        plain.starts_with("QUEUE: normal\n\nPARAMETERS/STATISTICS\n") && plain.contains("HOSTS:  all\n"),
        "{plain}"
    );
}
