//! The options of the commands that act on jobs or show them.

use super::{CommandDoc, flag, valued};

pub(super) const BJOBS: CommandDoc = CommandDoc {
    name: "bjobs",
    summary: "displays and filters information about jobs",
    synopsis: &["[job_ID | \"job_ID[index]\" ...]"],
    description: "Lists jobs: by default the caller's unfinished ones, with the columns JOBID USER STAT QUEUE \
                  FROM_HOST EXEC_HOST JOB_NAME SUBMIT_TIME. Names longer than a column are cut, a job's name \
                  keeping its end behind a `*'; -w cuts nothing.\n\n\
                  Single-letter options may be run together (-aw is -a -w; -uall is -u all).",
    options: &[
        flag("-a", "state", "Jobs in every state, finished ones (DONE, EXIT) too."),
        flag("-r", "state", "Running jobs only."),
        flag("-s", "state", "Suspended jobs only (PSUSP, USUSP, SSUSP)."),
        flag("-d", "state", "Finished jobs only."),
        flag("-p", "state", "Pending jobs only, each with why it waits."),
        valued("-u", "user_name | all", "filter", "Jobs of this user, or of every user."),
        valued("-q", "queue_name", "filter", "Jobs of this queue."),
        valued("-g", "job_group_name", "filter", "Jobs of this job group and of the groups under it."),
        valued("-J", "job_name", "filter", "Jobs of this name (`*' matches any text)."),
        flag("-w", "format", "Wide: no name is cut."),
        flag(
            "-W",
            "format",
            "Wide, with PROJ_NAME CPU_USED MEM SWAP PIDS START_TIME FINISH_TIME (times as 11/21-20:55:01, MEM and \
             SWAP in KB).",
        ),
        flag("-WL", "format", "With TIME_LEFT: a running job's run time left (L: to its run limit, E: its estimate)."),
        flag("-WF", "format", "With FINISH_TIME: when it ended, or (L, E) is expected to."),
        flag("-WP", "format", "With %COMPLETE: how much of its run limit (L) or estimate (E) it has run."),
        flag("-l", "format", "Long: every detail of each job, with why it waits if it does."),
        flag("-A", "format", "One summary line per job array, counting its elements by state."),
        valued(
            "-o",
            "\"field_name[:width] ... [delimiter='c']\"",
            "format",
            "Only these columns (jobid, stat, user, queue, job_name, exec_host, submit_time, pend_reason, ...).",
        ),
        flag("-json", "format", "As JSON, with -o's fields (the default ones without -o)."),
        flag("-noheader", "format", "No header line."),
    ],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &[
        "-aps", "-app", "-cname", "-env", "-fwd", "-G", "-gpu", "-hms", "-m", "-N", "-P", "-pe", "-pei", "-pi",
        "-plan", "-prio", "-psum", "-rusage", "-script", "-sla", "-ss", "-sum", "-UF", "-X", "-x",
    ],
};

pub(super) const BKILL: CommandDoc = CommandDoc {
    name: "bkill",
    summary: "sends signals to kill, suspend or resume jobs",
    synopsis: &["[job_ID ... | 0]"],
    description: "Kills the named jobs (0: all of the caller's): SIGINT, SIGTERM, then SIGKILL to a running \
                  job's processes, JOB_TERMINATE_INTERVAL (10 s) apart; a pending job ends at once. With -s, sends that signal only. An \
                  administrator may name anyone's jobs.",
    options: &[
        valued("-s", "signal", "", "Send this signal (a name such as STOP or KILL, or a number) instead."),
        valued(
            "-g",
            "job_group_name",
            "",
            "Only jobs of this job group (not of the groups under it); 0 names them all.",
        ),
    ],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-app", "-b", "-C", "-d", "-J", "-l", "-m", "-q", "-r", "-sla", "-stat", "-u"],
};

pub(super) const BSTOP: CommandDoc = CommandDoc {
    name: "bstop",
    summary: "suspends jobs",
    synopsis: &["job_ID ... | 0"],
    description: "Suspends the named jobs (0: all of the caller's): a pending job is held (PSUSP), a \
                  running one stopped (USUSP) with SIGSTOP.",
    options: &[valued(
        "-g",
        "job_group_name",
        "",
        "Only jobs of this job group (not of the groups under it); 0 names them all.",
    )],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-a", "-app", "-C", "-d", "-J", "-m", "-q", "-sla", "-u"],
};

pub(super) const BRESUME: CommandDoc = CommandDoc {
    name: "bresume",
    summary: "resumes suspended jobs",
    synopsis: &["job_ID ... | 0"],
    description: "Resumes the named jobs (0: all of the caller's): a held one (PSUSP, or submitted with -H) \
                  goes back to pending, a stopped one (USUSP) runs on with SIGCONT.",
    options: &[valued(
        "-g",
        "job_group_name",
        "",
        "Only jobs of this job group (not of the groups under it); 0 names them all.",
    )],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-app", "-C", "-J", "-m", "-q", "-sla", "-u"],
};

pub(super) const BSWITCH: CommandDoc = CommandDoc {
    name: "bswitch",
    summary: "switches unfinished jobs from one queue to another",
    synopsis: &["destination_queue job_ID ... | 0"],
    description: "Moves the named unfinished jobs (0: all of the caller's) to another queue, which must accept \
                  them as bsub -q would. A running job also needs its hosts to be the new queue's; its slots \
                  and the run time it accrued move to the new queue (its fairshare tree too), and it keeps \
                  the run limit it had. A job that cannot move stays where it is.",
    options: &[],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-a", "-J", "-m", "-q", "-u"],
};

pub(super) const BREQUEUE: CommandDoc = CommandDoc {
    name: "brequeue",
    summary: "kills and requeues jobs",
    synopsis: &["job_ID ... | 0"],
    description: "Requeues the named jobs: a running one is killed and goes back to pending, a finished one \
                  pending again. Without -d, -e or -r (or with -a), all three.",
    options: &[
        flag("-a", "", "Running, DONE and EXIT jobs."),
        flag("-d", "", "DONE jobs."),
        flag("-e", "", "EXIT jobs."),
        flag("-r", "", "Running jobs."),
        flag("-H", "", "Requeue them held (PSUSP)."),
    ],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-J", "-u", "-p"],
};

pub(super) const BPEEK: CommandDoc = CommandDoc {
    name: "bpeek",
    summary: "displays the output of an unfinished job",
    synopsis: &["[job_ID | \"job_ID[index]\"]"],
    description: "Shows what a running job has written so far (the caller's last running job when none is \
                  named).",
    options: &[
        flag("-f", "", "Follow the output until the job ends, as tail -f."),
        valued("-J", "job_name", "", "The caller's most recent job of this name (`*' matches any text)."),
    ],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-m", "-q"],
};

pub(super) const BHIST: CommandDoc = CommandDoc {
    name: "bhist",
    summary: "displays historical information about jobs",
    synopsis: &["[job_ID ...]"],
    description: "Shows jobs' histories from allotd's event log: by default a summary of the time each of \
                  the caller's unfinished jobs spent pending, running and suspended.",
    options: &[
        flag("-a", "", "Finished jobs too."),
        flag("-d", "", "Finished jobs only."),
        flag("-l", "", "Each job's events, one by one, with their times."),
        valued("-u", "user_name | all", "", "Jobs of this user, or of every user."),
    ],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-b", "-C", "-D", "-f", "-J", "-m", "-n", "-p", "-q", "-r", "-S", "-s", "-T", "-w"],
};

pub(super) const LSGRUN: CommandDoc = CommandDoc {
    name: "lsgrun",
    summary: "runs a task on a set of hosts of a job",
    synopsis: &["command [argument ...]"],
    description: "Within a job only: runs the command once on each host named (a host named twice, twice: \
                  -m \"$LSB_HOSTS\" runs it on each of the job's slots), through blaunch, one host after \
                  another, or all at once with -p. Without -m or -f, on each slot of the job's allocation. \
                  allot has no remote execution outside jobs: hosts not of the job's allocation are refused. \
                  Exits 0 when every run does, else with the first failing run's code.",
    options: &[
        flag("-p", "", "All hosts at once, not one after another."),
        valued("-m", "\"host_name ...\"", "", "Run on these hosts."),
        valued("-f", "host_file", "", "Run on the hosts listed in the file."),
    ],
    operands_end: true,
    synopsis_has_options: false,
    not_known: &["-n", "-R", "-P", "-S", "-v", "-i"],
};

pub(super) const BLAUNCH: CommandDoc = CommandDoc {
    name: "blaunch",
    summary: "launches parallel tasks on the hosts of a job's allocation",
    synopsis: &["[-n] [-u host_file | -z \"host_name ...\" | host_name] [-use-login-shell | -no-shell] command \
         [argument ...]"],
    description: "Within a job only: runs the command on hosts of the job's allocation (one task per slot \
                  without a host), as rsh and ssh would, for MPI launchers. The tasks' output comes back here; \
                  blaunch exits 0 when every task does, else with the first failing task's code.\n\n\
                  Options of rsh and ssh other than these are ignored, as LSF ignores them.",
    options: &[
        flag("-n", "", "The tasks' standard input is empty (always so)."),
        valued("-u", "host_file", "", "Run on the hosts listed in the file."),
        valued("-z", "\"host_name ...\"", "", "Run on these hosts."),
        flag("-use-login-shell", "", "Accepted, as LSF's; the command runs under /bin/sh."),
        flag("-no-shell", "", "Accepted, as LSF's; the command runs under /bin/sh."),
    ],
    operands_end: true,
    synopsis_has_options: true,
    not_known: &[],
};

pub(super) const BRESIZE: CommandDoc = CommandDoc {
    name: "bresize",
    summary: "releases slots from a running job, or cancels its pending resize",
    synopsis: &[
        "release [-c] [-rnc resize_notification_cmd | -rncn] \"1*hostA 2*hostB hostC\" job_ID",
        "cancel job_ID",
    ],
    description: "release gives back slots of a running job (a host without n* all of the job's slots \
                  there); cancel withdraws the job's pending request for more.",
    options: &[
        flag("-c", "", "With release: cancel the job's pending resize request too."),
        valued(
            "-rnc",
            "resize_notification_cmd",
            "",
            "With release: run this as the notification command of this release, instead of the job's.",
        ),
        flag("-rncn", "", "With release: run no resize notification command for this release."),
    ],
    operands_end: false,
    synopsis_has_options: true,
    not_known: &[],
};

pub(super) const BACCT: CommandDoc = CommandDoc {
    name: "bacct",
    summary: "displays accounting statistics about finished jobs",
    synopsis: &["[job_ID ...]"],
    description: "Sums up the caller's finished jobs from allotd's event log, as LSF lays it out: counts, \
                  CPU time, wait, turnaround and hog factor, with -l each job's own record.\n\n\
                  Times are [[[year/]month/]day/]hour:minute (or .) pairs: time0,time1, ,time1, time0, or \
                  .-N (the last N days).",
    options: &[
        flag("-l", "", "Each job's accounting record, then the summary."),
        flag("-b", "", "The summary only (the default)."),
        valued("-u", "\"user_name ...\" | all", "", "Jobs of these users, or of every user."),
        valued("-q", "\"queue_name ...\"", "", "Jobs of these queues."),
        valued("-C", "time0,time1", "", "Jobs that completed in the window."),
        valued("-D", "time0,time1", "", "Jobs dispatched in the window."),
        valued("-S", "time0,time1", "", "Jobs submitted in the window."),
    ],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-app", "-d", "-e", "-E", "-f", "-m", "-M", "-N", "-P", "-sla", "-U", "-w", "-x"],
};
