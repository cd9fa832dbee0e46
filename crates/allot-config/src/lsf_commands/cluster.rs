//! The options of the commands that show or administer the cluster.

use super::{CommandDoc, flag, valued};

pub(super) const BQUEUES: CommandDoc = CommandDoc {
    name: "bqueues",
    summary: "displays information about queues",
    synopsis: &["[queue_name ...]"],
    description: "Lists the queues: priority, status, limits and job counts; with -l each queue's whole \
                  configuration and fairshare table.",
    options: &[
        flag("-l", "", "Long: each queue's parameters, limits, users, hosts and share table."),
        flag("-r", "", "With -l: every level of the share tree, not the top one only."),
        flag("-w", "", "Wide: queue names whole, not cut at 15 characters."),
    ],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-alloc", "-json", "-m", "-o", "-u"],
};

pub(super) const BHOSTS: CommandDoc = CommandDoc {
    name: "bhosts",
    summary: "displays hosts and their static and dynamic resources",
    synopsis: &["[host_name | host_group | compute_unit ...]"],
    description: "Lists the batch hosts: status, job slot limits and slots in use by state. A compute unit \
                  with CONDENSED=Y shows as one row.",
    options: &[
        flag("-l", "", "Long: one block per host."),
        flag("-w", "", "Wide: no name is cut."),
        flag("-X", "", "Every host on its own row, condensed compute units too."),
        flag("-s", "", "The numeric resources hosts share (licenses): total, what jobs hold, where."),
    ],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-a", "-alloc", "-e", "-json", "-o", "-R", "-x"],
};

pub(super) const BHPART: CommandDoc = CommandDoc {
    name: "bhpart",
    summary: "displays information about host partitions",
    synopsis: &["[host_partition_name ...]"],
    description: "Lists the host partitions with the top level of their share trees.",
    options: &[flag("-r", "", "Every level of the share tree.")],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &[],
};

pub(super) const BUGROUP: CommandDoc = CommandDoc {
    name: "bugroup",
    summary: "displays information about user groups",
    synopsis: &["[user_group ...]"],
    description: "Lists the user groups of lsb.users and their members.",
    options: &[flag("-l", "", "Each group's shares too.")],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-r", "-w"],
};

pub(super) const BMGROUP: CommandDoc = CommandDoc {
    name: "bmgroup",
    summary: "displays information about host groups",
    synopsis: &["[host_group ...]"],
    description: "Lists the host groups of lsb.hosts and their hosts.",
    options: &[flag("-w", "", "Wide: group names whole, not cut at 13 characters.")],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-l", "-r", "-cu"],
};

pub(super) const BUSERS: CommandDoc = CommandDoc {
    name: "busers",
    summary: "displays information about users and user groups",
    synopsis: &["[user_name ... | user_group ... | all]"],
    description: "Lists users' job slot limits and slots by state (the caller's without a name).",
    options: &[],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-alloc", "-o", "-w"],
};

pub(super) const BLIMITS: CommandDoc = CommandDoc {
    name: "blimits",
    summary: "displays information about resource allocation limits of running jobs",
    synopsis: &["[-a] [-w] [-n limit_name ...] [-u user_name] [-q queue_name] [-m host_name] [-P project_name] \
                 [-A application_name]"],
    description: "Shows what each Limit section of lsb.resources holds now: one row per consumer counted (a \
                  PER_USER limit has one per user with jobs running), USED/LIMIT for each resource it limits.",
    options: &[
        flag("-a", "", "Every limit, those with nothing in use too."),
        flag("-w", "", "Wide: no name is cut."),
        valued("-n", "limit_name ...", "", "These limits only."),
        valued("-u", "user_name", "", "Limits that cover this user."),
        valued("-q", "queue_name", "", "Limits that cover this queue."),
        valued("-m", "host_name", "", "Limits that cover this host."),
        valued("-P", "project_name", "", "Limits that cover this project."),
        valued("-A", "application_name", "", "Limits that cover this application profile."),
    ],
    operands_end: false,
    synopsis_has_options: true,
    not_known: &["-c", "-o", "-gl", "-fwd", "-C", "-Lp"],
};

pub(super) const BADMIN: CommandDoc = CommandDoc {
    name: "badmin",
    summary: "administrative tool for allot",
    synopsis: &[
        "reconfig",
        "qclose queue_name ...",
        "qopen queue_name ...",
        "hclose host_name ...",
        "hopen host_name ...",
        "showconf mbd",
        "showstatus",
    ],
    description: "reconfig checks the configuration and applies it (nothing of it if it has an error); \
                  qclose and qopen close and open queues to new jobs; hclose and hopen close and open hosts \
                  to new dispatches; showconf mbd shows the parameters in force with the configuration's \
                  paths; showstatus the cluster's state in figures.",
    options: &[],
    operands_end: false,
    synopsis_has_options: true,
    not_known: &[],
};

pub(super) const BSLOTS: CommandDoc = CommandDoc {
    name: "bslots",
    summary: "displays slots available and backfill windows",
    synopsis: &[""],
    description: "Shows the slots a backfill job could use now, and for how long, from the reservations in \
                  force.",
    options: &[
        flag("-l", "", "Each window with its hosts."),
        valued("-n", "slots", "", "Windows of at least this many slots."),
        valued("-R", "\"select[...]\"", "", "Windows on hosts that satisfy this selection."),
        valued("-W", "[hour:]minute", "", "Windows at least this long."),
    ],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &[],
};

pub(super) const LSHOSTS: CommandDoc = CommandDoc {
    name: "lshosts",
    summary: "displays hosts and their static resource information",
    synopsis: &["[host_name ...]"],
    description: "Lists each host's type, model, CPUs, memory and swap, as its agent reports them (this \
                  machine's own without agents). Figures allot does not measure show as `-'.",
    options: &[
        flag("-w", "", "Wide: no name is cut."),
        flag("-l", "", "Long: one block per host."),
        flag("-s", "", "The static numeric resources hosts share, with their values and hosts."),
    ],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-gpu", "-json", "-o", "-R", "-T"],
};

pub(super) const LSLOAD: CommandDoc = CommandDoc {
    name: "lsload",
    summary: "displays load information for hosts",
    synopsis: &["[host_name ...]"],
    description: "Lists each host's load: run queue lengths, CPU use, free memory and swap, as its agent \
                  reports them.",
    options: &[
        flag("-w", "", "Wide: no name is cut."),
        flag("-l", "", "Long: every load index (io too), no name cut."),
        flag("-s", "", "The numeric resources hosts share, with their values and hosts."),
    ],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-E", "-gpu", "-I", "-json", "-N", "-o", "-R"],
};

pub(super) const BPARAMS: CommandDoc = CommandDoc {
    name: "bparams",
    summary: "displays information about configurable system parameters in lsb.params",
    synopsis: &[""],
    description: "Shows the batch parameters in force: the default queue, dispatch intervals and job \
                  limits; -a every parameter.",
    options: &[flag("-a", "", "Every parameter, as NAME = value."), flag("-l", "", "The same few, as LSF's -l.")],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-json"],
};

pub(super) const LSID: CommandDoc = CommandDoc {
    name: "lsid",
    summary: "displays the current version, the cluster name and the management host name",
    synopsis: &[""],
    description: "Shows allot's release, the cluster's name and the host allotd runs on.",
    options: &[],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &[],
};

pub(super) const LSCLUSTERS: CommandDoc = CommandDoc {
    name: "lsclusters",
    summary: "displays configuration information about the cluster",
    synopsis: &[""],
    description: "Shows the cluster: its status, management host, administrator, hosts and servers.",
    options: &[flag("-w", "", "Wide: no name is cut.")],
    operands_end: false,
    synopsis_has_options: false,
    not_known: &["-l"],
};
