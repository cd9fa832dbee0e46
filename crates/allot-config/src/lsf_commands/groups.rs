//! The options of the job group commands.

use super::{CommandDoc, flag, valued};

pub(super) const BGADD: CommandDoc = CommandDoc {
    name: "bgadd",
    summary: "creates job groups",
    synopsis: &["[-L limit] job_group_name"],
    description: "Creates a job group, named by its full path (/A/B/C); the groups above it that do not exist \
                  are created too. The caller owns the groups created.",
    options: &[valued(
        "-L",
        "limit",
        "",
        "The most jobs that may run under the group and its subgroups at once (RUN, SSUSP, USUSP), 0 to \
         2147483647; a parallel job counts once. Not more than a limit above it.",
    )],
    operands_end: false,
    synopsis_has_options: true,
    not_known: &["-sla"],
};

pub(super) const BGMOD: CommandDoc = CommandDoc {
    name: "bgmod",
    summary: "modifies job groups",
    synopsis: &["[-L limit | -Ln] [-u job_group_owner] job_group_name"],
    description: "Changes a job group's job limit or owner. Root, administrators, the group's owner and the \
                  owner of a group above it may.",
    options: &[
        valued("-L", "limit", "", "The new limit: not more than a limit above the group, not less than one under it."),
        flag("-Ln", "", "No limit of its own: the limits above it bind."),
        valued("-u", "job_group_owner", "", "The new owner."),
    ],
    operands_end: false,
    synopsis_has_options: true,
    not_known: &[],
};

pub(super) const BGDEL: CommandDoc = CommandDoc {
    name: "bgdel",
    summary: "deletes job groups",
    synopsis: &["[-u user_name | -u all] job_group_name | 0", "-c job_group_name"],
    description: "Deletes a job group and its subgroups; none of them may hold an unfinished job. Users \
                  delete their own groups, administrators any. 0 deletes the caller's empty groups.",
    options: &[
        valued("-u", "user_name | all", "", "With 0 (administrators): the empty groups of this user, or of all."),
        valued("-c", "job_group_name", "", "Every empty group under this one, and it if it is empty."),
    ],
    operands_end: false,
    synopsis_has_options: true,
    not_known: &["-d"],
};

pub(super) const BJGROUP: CommandDoc = CommandDoc {
    name: "bjgroup",
    summary: "displays information about job groups",
    synopsis: &["[-N] [-s [job_group_name]]"],
    description: "Lists the job groups with their jobs by state, counted over each group and its subgroups, \
                  and JLIMIT, the jobs started under the group over its limit (- for none).",
    options: &[
        flag("-N", "", "Job slots instead of jobs."),
        flag(
            "-s",
            "",
            "In the order of the hierarchy; with a group, that group and the groups under it (with a trailing \
             /, that group only).",
        ),
    ],
    operands_end: false,
    synopsis_has_options: true,
    not_known: &[],
};
