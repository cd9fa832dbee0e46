//! `bjobs -o` and `-json` on the real daemon: LSF's field names for what
//! allot keeps of a job's submission.

mod common;

use common::*;

/// `bjobs -o` and `-json` show a job's submission options by LSF's field
/// names (and aliases): files, slots asked, times given, commands, the
/// requirement it is placed by, its limits and warning; a field LSF has
/// and allot does not keep is `-`, one LSF does not have refused by name.
#[test]
fn bjobs_o_shows_the_submissions_options() {
    let dir = tempdir("bjobs-o");
    let d = Daemon::start(&dir.join("state"));
    std::fs::write(dir.join("in.txt"), "x\n").expect("input");
    let job = submitted_id(&d.cmd(
        &[
            "bsub",
            "-H",
            "-n",
            "1,2",
            "-i",
            "in.txt",
            "-o",
            "out.%J",
            "-e",
            "err.%J",
            "-E",
            "true",
            "-Ep",
            "true",
            "-R",
            "select[ncpus>0]",
            "-F",
            "2048",
            "-C",
            "0",
            "-wa",
            "USR1",
            "-wt",
            "5",
            "-t",
            "23:59",
            "sleep",
            "1",
        ],
        &dir,
    ));
    let fields = "jobid input_file output_file error_file min_req_proc max_req_proc pre_cmd post_cmd eresreq \
                  filelimit corelimit warn_act warn_time sterminate_time job_group app nalloc_slot pend_time";
    let out = stdout(&d.cmd(&["bjobs", "-json", "-o", fields, &job.to_string()], &dir));
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let r = &json["RECORDS"][0];
    assert_eq!(r["JOBID"], job.to_string());
    assert_eq!((r["INPUT_FILE"].as_str(), r["OUTPUT_FILE"].as_str()), (Some("in.txt"), Some("out.%J")), "{out}");
    assert_eq!(r["ERROR_FILE"], "err.%J");
    assert_eq!((r["MIN_REQ_PROC"].as_str(), r["MAX_REQ_PROC"].as_str()), (Some("1"), Some("2")));
    assert_eq!((r["PRE_EXEC_COMMAND"].as_str(), r["POST_EXEC_COMMAND"].as_str()), (Some("true"), Some("true")));
    assert_eq!(r["EFFECTIVE_RESREQ"], "select[ncpus>0]");
    assert_eq!((r["FILELIMIT"].as_str(), r["CORELIMIT"].as_str()), (Some("2 Mbytes"), Some("0 Mbytes")), "{out}");
    assert_eq!((r["WARNING_ACTION"].as_str(), r["ACTION_WARNING_TIME"].as_str()), (Some("USR1"), Some("5.0 min")));
    assert!(r["SPECIFIED_TERMINATE_TIME"].as_str().is_some_and(|t| t.contains("23:59")), "{out}");
    assert_eq!(
        (r["JOB_GROUP"].as_str(), r["APPLICATION"].as_str(), r["NALLOC_SLOT"].as_str()),
        (Some("-"), Some("-"), Some("-"))
    );
    assert!(r["PEND_TIME"].as_str().is_some_and(|t| t.parse::<u64>().is_ok()), "{out}");
    // A field allot does not keep is `-`, as LSF shows a field without a
    // value; one LSF does not have is refused by name.
    let unkept = stdout(&d.cmd(&["bjobs", "-o", "jobid pids gpu_num", &job.to_string()], &dir));
    assert_eq!(
        unkept.lines().map(|l| l.split_whitespace().collect::<Vec<_>>()).collect::<Vec<_>>(),
        [vec!["JOBID", "PIDS", "GPU_NUM"], vec![&job.to_string()[..], "-", "-"]],
        "{unkept}"
    );
    let refused = d.cmd(&["bjobs", "-o", "jobid nosuch"], &dir);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("unknown field `nosuch`"), "{}", stderr(&refused));
    let _ = d.cmd(&["bkill", &job.to_string()], &dir);
}

/// `bjobs -u all -a -w -W`, as Open OnDemand's LSF adapter runs it: a
/// header of its 15 columns and 15 fields a line (`-` for what a job does
/// not have); `-WL` adds the run time left; `-o` shows a dependency by
/// job numbers (an array by its own), the slots on each host, `-x`.
#[test]
fn bjobs_w_has_the_columns_tools_split() {
    let dir = tempdir("bjobs-w");
    let queues = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nEXCLUSIVE = Y\nEnd Queue\n";
    let config =
        config_dir(&dir, &[("allot.toml", "[[hosts]]\nname = \"hostA\"\nncpus = 2\n"), ("lsb.queues", queues)]);
    let d = Daemon::start_with(&dir.join("state"), Some(&config));
    let running = submitted_id(&d.cmd(&["bsub", "-W", "60", "-P", "climate", "-x", "sleep", "60"], &dir));
    let array = submitted_id(&d.cmd(&["bsub", "-J", "a[1-3]", "-H", "true"], &dir));
    let waiting =
        submitted_id(&d.cmd(&["bsub", "-w", &format!("done({running}) && ended({array})"), "sleep", "1"], &dir));
    d.wait_for(running, "RUN", &dir);
    let out = stdout(&d.cmd(&["bjobs", "-u", "all", "-a", "-w", "-W"], &dir));
    // Split as the adapter splits: a job name with spaces is what lies
    // between the 6 fields before it and the 8 after.
    let lines: Vec<Vec<String>> = out
        .lines()
        .map(|l| {
            let w: Vec<String> = l.split_whitespace().map(str::to_string).collect();
            match w.len() > 15 {
                true => [&w[..6], &[w[6..w.len() - 8].join(" ")], &w[w.len() - 8..]].concat(),
                false => w,
            }
        })
        .collect();
    let expected = "JOBID USER STAT QUEUE FROM_HOST EXEC_HOST JOB_NAME SUBMIT_TIME PROJ_NAME CPU_USED MEM SWAP PIDS \
                    START_TIME FINISH_TIME";
    assert_eq!(lines[0], expected.split(' ').collect::<Vec<_>>(), "{out}");
    assert!(lines[1..].iter().all(|l| l.len() == 15), "{out}");
    let row = lines.iter().find(|l| l[0] == running.to_string()).expect("the running job");
    assert_eq!((&row[2][..], &row[6][..], &row[8][..], &row[14][..]), ("RUN", "sleep 60", "climate", "-"), "{out}");
    let stamp = |s: &str| s.len() == 14 && s.as_bytes()[2] == b'/' && s.as_bytes()[5] == b'-';
    assert!(stamp(&row[7]) && stamp(&row[13]), "{out}");
    let left = stdout(&d.cmd(&["bjobs", "-WL", "-noheader", &running.to_string()], &dir));
    assert!(left.contains(" 0:59 L") || left.contains(" 1:00 L"), "{left}");
    let fields = "dependency exclusive interactive alloc_slot delimiter='|'";
    let shown = stdout(&d.cmd(&["bjobs", "-noheader", "-o", fields, &waiting.to_string()], &dir));
    assert_eq!(shown.trim_end(), format!("done({running}) && ended({array})|N|N|-"), "{shown}");
    let x = stdout(&d.cmd(&["bjobs", "-noheader", "-o", "exclusive alloc_slot", &running.to_string()], &dir));
    assert!(x.split_whitespace().eq(["Y", &format!("1*{}", row[5])[..]]), "{x}");
    for j in [running, array, waiting] {
        let _ = d.cmd(&["bkill", &j.to_string()], &dir);
    }
}
