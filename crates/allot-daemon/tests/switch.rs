//! `bswitch` of a running job through allotd: it moves to the new queue
//! (its slots counted there), stays there across a restart, replays the
//! same in `allot sim --from`, and a queue that cannot run it where it
//! runs refuses it, leaving it where it was.

mod common;

use common::{Daemon, config_dir, stdout, submitted_id, tempdir};

#[test]
fn bswitch_moves_a_running_job() {
    let dir = tempdir("switch");
    let cluster = "Begin Host\nHOSTNAME model type server RESOURCES ncpus\nh1 ! ! 1 () 4\nh2 ! ! 1 () 4\nEnd Host\n";
    let fair = "FAIRSHARE = USER_SHARES[[default, 1]]";
    let queues = format!(
        "Begin Queue\nQUEUE_NAME = day\nPRIORITY = 10\n{fair}\nRUNLIMIT = 30\nHOSTS = h1\nEnd Queue\n\
         Begin Queue\nQUEUE_NAME = night\nPRIORITY = 20\n{fair}\nEnd Queue\n\
         Begin Queue\nQUEUE_NAME = elsewhere\nPRIORITY = 5\nHOSTS = h2\nEnd Queue\n"
    );
    let config = config_dir(
        &dir,
        &[
            ("lsf.cluster.c", cluster),
            ("lsb.queues", queues.as_str()),
            ("lsb.params", "Begin Parameters\nDEFAULT_QUEUE = day\nEnd Parameters\n"),
        ],
    );
    let state = dir.join("state");
    let d = Daemon::start_with(&state, Some(&config));
    let job = submitted_id(&d.cmd(&["bsub", "-n", "2", "-o", "/dev/null", "sleep", "60"], &dir));
    d.wait_for(job, "RUN", &dir);
    let id = job.to_string();
    let moved = d.cmd(&["bswitch", "night", &id], &dir);
    assert_eq!(stdout(&moved), format!("Job <{job}> is switched to queue <night>\n"), "{}", common::stderr(&moved));
    let fields = |d: &Daemon| stdout(&d.cmd(&["bjobs", "-noheader", "-o", "stat queue runtimelimit", &id], &dir));
    // Still running, in `night`, under `day`'s RUNLIMIT of 30 minutes.
    assert_eq!(fields(&d).split_whitespace().collect::<Vec<_>>(), ["RUN", "night", "30.0", "min"]);
    let queues_now = |d: &Daemon| stdout(&d.cmd(&["bqueues"], &dir));
    let row = |text: &str, q: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.starts_with(q))
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default()
    };
    let text = queues_now(&d);
    assert_eq!(row(&text, "night")[7..10], ["2", "0", "2"], "NJOBS PEND RUN: {text}");
    assert_eq!(row(&text, "day")[7..10], ["0", "0", "0"], "{text}");
    // Where it runs, `elsewhere` cannot run it: refused, left in `night`.
    let refused = d.cmd(&["bswitch", "elsewhere", &id], &dir);
    assert!(!refused.status.success());
    assert_eq!(
        common::stderr(&refused),
        format!("Job <{job}>: it runs on host `h1`, which queue `elsewhere` does not use\n")
    );
    // Across a restart, as the log has it.
    d.kill9();
    let d = Daemon::start_with(&state, Some(&config));
    assert_eq!(fields(&d).split_whitespace().collect::<Vec<_>>(), ["RUN", "night", "30.0", "min"]);
    assert_eq!(row(&queues_now(&d), "night")[9], "2");
    assert!(d.cmd(&["bkill", &id], &dir).status.success());
    d.wait_for(job, "EXIT", &dir);
    // The history replays to the same decisions.
    let out = d.cmd(&["sim", "--from", state.to_str().expect("utf-8"), "--out", "replayed"], &dir);
    assert!(out.status.success(), "{}\n{}", stdout(&out), common::stderr(&out));
}
