//! `bjobs -o` and `-json` on the real daemon: LSF's field names for what
//! allot keeps of a job's submission.

mod common;

use common::*;

/// `bjobs -o` and `-json` show a job's submission options by LSF's field
/// names (and aliases): files, slots asked, times given, commands, the
/// requirement it is placed by, its limits and warning; a field LSF has
/// and allot does not keep is refused by name.
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
    let refused = d.cmd(&["bjobs", "-o", "jobid pids"], &dir);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("field `pids`: allot does not keep it"), "{}", stderr(&refused));
    let _ = d.cmd(&["bkill", &job.to_string()], &dir);
}
