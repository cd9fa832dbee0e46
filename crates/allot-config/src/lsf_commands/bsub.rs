//! `bsub`'s and `bmod`'s options.

use super::{CommandDoc, flag, refused, valued};

pub const BSUB: CommandDoc = CommandDoc {
    name: "bsub",
    summary: "submits a job to allot",
    synopsis: &["command [arguments]", "[options] < job_script"],
    description: "Submits a job: the command and its arguments, run by /bin/sh in the current directory with \
                  the submitting environment, as the submitting user. Options may also be given in a job \
                  script's #BSUB lines (a script read on standard input, or named with \
                  LSB_BSUB_PARSE_SCRIPT=Y); those on the command line win.\n\n\
                  Single-letter options may be run together (-xK is -x -K; -n4 is -n 4), as getopt reads \
                  them; the first word that is no option starts the command.\n\n\
                  bsub answers `Job <ID> is submitted to queue <QUEUE>.'; a job array (-J \"name[1-10]\") \
                  has one job ID, its elements being ID[1] ... ID[10]. Every refusal ends `Job not \
                  submitted.' and submits nothing.",
    options: OPTIONS,
    operands_end: true,
    synopsis_has_options: false,
    not_known: &[
        "-a",
        "-alloc_flags",
        "-clusters",
        "-cn_cu",
        "-cn_mem",
        "-core_isolation",
        "-csm",
        "-data",
        "-datagrp",
        "-ext",
        "-f",
        "-freq",
        "-gpu",
        "-hostfile",
        "-jobaff",
        "-json",
        "-jsdl",
        "-k",
        "-ln_mem",
        "-ln_slots",
        "-Lp",
        "-mig",
        "-Ne",
        "-network",
        "-nnodes",
        "-notify",
        "-outdir",
        "-pack",
        "-ptl",
        "-rcacct",
        "-s",
        "-sla",
        "-smt",
        "-stage",
        "-ti",
        "-tty",
        "-U",
        "-ul",
        "-XF",
        "-yaml",
        "-Zs",
    ],
};

const OPTIONS: &[super::Opt] = &[
    valued(
        "-n",
        "min_tasks[,max_tasks]",
        "resource",
        "Slots to run on: at least min_tasks, and up to max_tasks when more are free at dispatch.",
    ),
    valued("-q", "queue_name", "schedule", "The queue; without it LSB_DEFAULTQUEUE, else the cluster's default queue."),
    valued(
        "-R",
        "res_req",
        "resource",
        "A resource requirement: select[], order[], rusage[], span[] (hosts=1, ptile=N), cu[] and same[] \
         sections. May be repeated.",
    ),
    valued("-m", "\"host_name ...\"", "resource", "Run only on these hosts (or host groups, or compute units)."),
    flag("-x", "resource", "Exclusive: the job's hosts run no other job while it runs."),
    valued(
        "-W",
        "[hour:]minute",
        "limit",
        "The run limit: the job is killed when it has run this long (within the queue's RUNLIMIT).",
    ),
    valued(
        "-We",
        "[hour:]minute",
        "limit",
        "The expected run time, which backfill and reservations plan with; the job is not killed at it.",
    ),
    valued("-c", "[hour:]minute", "limit", "The CPU time limit (RLIMIT_CPU) of each of the job's processes."),
    valued(
        "-M",
        "mem_limit",
        "limit",
        "The memory limit of the whole job, in LSF_UNIT_FOR_LIMITS (KB by default) or with a unit (10GB); \
         the job is killed when it uses more.",
    ),
    valued("-C", "core_limit", "limit", "The core file size limit of each process (0: no core files)."),
    valued("-D", "data_limit", "limit", "The data segment size limit of each process."),
    valued("-F", "file_limit", "limit", "The largest file each process may write."),
    valued("-S", "stack_limit", "limit", "The stack size limit of each process."),
    valued("-v", "swap_limit", "limit", "The virtual memory limit of each process (RLIMIT_AS)."),
    valued(
        "-t",
        "[[[year:]month:]day:]hour:minute",
        "schedule",
        "The termination deadline: the job is killed if still running then.",
    ),
    valued(
        "-b",
        "[[[year:]month:]day:]hour:minute",
        "schedule",
        "The begin time: the job is not dispatched before it.",
    ),
    valued(
        "-w",
        "'dependency_expression'",
        "schedule",
        "Dispatch only when the expression holds: done(ID), ended(ID), exit(ID[,code]), started(ID), \
         post_done(ID), numdone(ID,n) ..., combined with &&, || and !.",
    ),
    flag("-H", "schedule", "Hold the job at submission (PSUSP) until bresume releases it."),
    valued("-sp", "priority", "schedule", "The job's priority among its user's own jobs (1 and up)."),
    valued("-qos", "qos_name", "schedule", "The Quality of Service of a multifactor policy (allot's)."),
    valued("-uf", "factor", "schedule", "The user factor of a flux-accounting policy, for this job (allot's)."),
    valued(
        "-J",
        "job_name | \"name[index_list]%limit\"",
        "properties",
        "The job's name; with [1-10,20:30:2] a job array of one job ID, %limit elements running at most.",
    ),
    valued("-P", "project_name", "properties", "The project the job is charged to."),
    valued("-G", "user_group", "properties", "The fairshare group the job is charged to."),
    valued("-app", "application_profile", "properties", "An application profile of lsb.applications."),
    valued(
        "-E",
        "\"pre_exec_command [arguments ...]\"",
        "properties",
        "Run before the job, as its user, on its first host; a nonzero exit puts the job back to pending \
         (at most MAX_PREEXEC_RETRY times).",
    ),
    valued(
        "-Ep",
        "\"post_exec_command [arguments ...]\"",
        "properties",
        "Run after the job ends, as its user, with LSB_JOBEXIT_STAT set.",
    ),
    valued(
        "-env",
        "\"all | none | [all,][~var,]var=value,...\"",
        "properties",
        "The environment the job gets: all of the submitting one (the default), none of it, or some of it \
         with variables removed (~var) or set.",
    ),
    flag("-r", "properties", "Rerunnable: a job lost with its host goes back to pending."),
    flag("-rn", "properties", "Not rerunnable, whatever the queue's RERUNNABLE says."),
    flag("-ar", "properties", "Autoresizable: the job takes slots up to -n's maximum as they free."),
    valued("-rnc", "resize_notification_cmd", "properties", "Run on the job's first host when its slots change."),
    valued("-wa", "'signal'", "properties", "The signal sent -wt before the run limit."),
    valued("-wt", "'[hour:]minute'", "properties", "How long before the run limit -wa's signal goes."),
    valued(
        "-o",
        "output_file",
        "io",
        "Append the job's standard output, then its job report, to the file (%J: job ID, %I: array \
         index). Opened as the job's user.",
    ),
    valued("-oo", "output_file", "io", "As -o, overwriting the file."),
    valued("-e", "error_file", "io", "Append the job's standard error to the file (%J and %I as -o's)."),
    valued("-eo", "error_file", "io", "As -e, overwriting the file."),
    valued("-cwd", "\"current_working_directory\"", "io", "Where the job runs (%J and %I as -o's)."),
    flag("-B", "notify", "Mail the user when the job starts."),
    flag("-N", "notify", "Mail the job report when the job ends."),
    valued(
        "-u",
        "mail_user",
        "notify",
        "Where mail goes (the submitting user by default); without -o the job report goes there too.",
    ),
    flag(
        "-K",
        "notify",
        "Wait for the job to end, printing <<Waiting for dispatch ...>>, <<Starting on HOST>> and <<Job is \
         finished>>; exit with the job's exit code.",
    ),
    flag(
        "-I",
        "properties",
        "Interactive: the job's input and output are this terminal (its outputs go to -o's and -e's files \
         when named); bsub waits, passes Ctrl-C on to the job, and exits with the job's exit code.",
    ),
    flag(
        "-Ip",
        "properties",
        "Interactive on a pseudo-terminal (for programs such as vi that need one); Ctrl-C is passed on as \
         a signal.",
    ),
    flag(
        "-Is",
        "properties",
        "Interactive on a pseudo-terminal in shell mode, for interactive shells: every key, Ctrl-C and \
         Ctrl-Z too, reaches the job's terminal as typed.",
    ),
    valued(
        "-i",
        "input_file",
        "io",
        "The job's standard input from this file (%J and %I as -o's), opened as the job's user.",
    ),
    valued("-Jd", "\"job_description\"", "properties", "A free-text description of the job (bjobs -l shows it)."),
    valued(
        "-g",
        "job_group_name",
        "properties",
        "The job group the job belongs to, by its full path (/A/B); made, with the groups above it, when it does \
         not exist. Its job limit (bgadd -L) caps the jobs started under it.",
    ),
    valued(
        "-L",
        "login_shell",
        "properties",
        "Run the job's command under this login shell (an absolute path), which sets up its environment as a \
         login does.",
    ),
    flag(
        "-hl",
        "limit",
        "The memory limit (-M) per host: each host's part of the job (its processes there and its blaunch tasks) \
         may use that much, where without -hl the job's memory on all its hosts together may.",
    ),
];

pub const BMOD: CommandDoc = CommandDoc {
    name: "bmod",
    summary: "modifies a job's submission options",
    synopsis: &["job_ID | \"job_ID[index]\""],
    description: "Changes a job's options as bsub gave them. A pending job takes any change listed below; a \
                  running one its run limit (-W, -Wn), which takes effect at once. The n forms (-Wn, -Pn, \
                  ...) remove a setting; -J %limit changes a job array's running element limit.\n\n\
                  What bmod cannot change yet is refused, and the job is left as it was.",
    options: &[
        valued("-n", "tasks", "", "Slots to run on."),
        valued("-q", "queue_name", "", "Another queue, as bswitch moves the job."),
        valued("-W", "[hour:]minute", "", "The run limit; of a running job too."),
        flag("-Wn", "", "Remove the run limit."),
        valued("-We", "[hour:]minute", "", "The expected run time."),
        flag("-Wen", "", "Remove the expected run time."),
        valued("-P", "project_name", "", "The project."),
        flag("-Pn", "", "Remove the project."),
        valued("-G", "user_group", "", "The fairshare group."),
        flag("-Gn", "", "Remove the fairshare group."),
        valued("-g", "job_group_name", "", "Another job group (made if it does not exist)."),
        flag("-gn", "", "Out of its job group."),
        valued("-o", "output_file", "", "The output file (appended)."),
        valued("-oo", "output_file", "", "The output file (overwritten)."),
        flag("-on", "", "Remove the output file."),
        valued("-e", "error_file", "", "The error file (appended)."),
        valued("-eo", "error_file", "", "The error file (overwritten)."),
        flag("-en", "", "Remove the error file."),
        valued("-sp", "priority", "", "The user priority."),
        flag("-spn", "", "Remove the user priority."),
        valued("-qos", "qos_name", "", "The Quality of Service."),
        valued("-uf", "factor", "", "The user factor."),
        valued("-J", "job_name | %limit", "", "The job's name, or an array's running element limit."),
        valued("-cwd", "\"current_working_directory\"", "", "Where the job runs."),
        valued("-Z", "\"command [arguments]\"", "", "Another command."),
        refused(valued("-R", "res_req", "", "The resource requirement.")),
        refused(valued("-m", "\"host_name ...\"", "", "The hosts.")),
        refused(flag("-x", "", "Exclusive.")),
        refused(valued("-c", "[hour:]minute", "", "The CPU time limit.")),
        refused(valued("-t", "time", "", "The termination deadline.")),
        refused(valued("-b", "time", "", "The begin time.")),
        refused(valued("-M", "mem_limit", "", "The memory limit.")),
        refused(valued("-C", "core_limit", "", "The core file size limit.")),
        refused(valued("-D", "data_limit", "", "The data segment size limit.")),
        refused(valued("-F", "file_limit", "", "The file size limit.")),
        refused(valued("-S", "stack_limit", "", "The stack size limit.")),
        refused(valued("-v", "swap_limit", "", "The virtual memory limit.")),
        refused(valued("-w", "'dependency_expression'", "", "The dependency.")),
        refused(valued("-app", "application_profile", "", "The application profile.")),
        refused(valued("-wa", "'signal'", "", "The warning signal.")),
        refused(valued("-wt", "'[hour:]minute'", "", "The warning time.")),
        refused(flag("-r", "", "Rerunnable.")),
        refused(flag("-rn", "", "Not rerunnable.")),
        refused(flag("-ar", "", "Autoresizable.")),
        refused(valued("-rnc", "resize_notification_cmd", "", "The resize notification command.")),
        refused(valued("-E", "\"pre_exec_command\"", "", "The pre-execution command.")),
        refused(valued("-Ep", "\"post_exec_command\"", "", "The post-execution command.")),
        refused(valued("-env", "\"all | none | var=value,...\"", "", "The job's environment.")),
        refused(flag("-B", "", "Mail at start.")),
        refused(flag("-N", "", "Mail at the end.")),
        refused(valued("-u", "mail_user", "", "Where mail goes.")),
        refused(valued("-i", "input_file", "", "The input file.")),
        refused(valued("-Jd", "\"job_description\"", "", "The description.")),
        refused(valued("-L", "login_shell", "", "The login shell.")),
        refused(flag("-hl", "", "The per-host memory limit.")),
    ],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-K", "-H", "-I", "-Ip", "-Is"],
};

#[cfg(test)]
mod tests {
    /// Whatever bsub reads, bmod reads too (to change it, or to say it
    /// cannot yet), or is an option LSF's bmod lacks.
    #[test]
    fn bmod_reads_every_bsub_option() {
        for o in super::OPTIONS {
            assert!(
                super::BMOD.option(o.name).is_some() || super::BMOD.not_known.contains(&o.name),
                "bmod: {} is neither read nor listed as unknown",
                o.name
            );
        }
    }
}
