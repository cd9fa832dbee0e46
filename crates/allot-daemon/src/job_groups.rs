//! `bgadd`, `bgmod`, `bgdel` and `bjgroup`: who may change which job
//! group, each change recorded ([`Record::JobGroup`]) and applied through
//! the engine as a replay applies it, and the groups' job counts.
//!
//! Permissions, as LSF documents them: anyone adds groups (owning those
//! the path makes); root, administrators, a group's owner and the owner
//! of a group above it change its limit or owner; users delete their own
//! groups, administrators any (`bgdel -u` is theirs alone).

use std::collections::BTreeMap;

use allot_engine::Time;
use allot_engine::job_groups::{JobGroupChange, is_within, lineage, normal};
use allot_proto::job_groups::{GroupCounts, GroupDeletion, JobGroupInfo, JobGroupRequest};
use allot_proto::{JobStatus, Response};
use allot_store::Record;

use crate::serve::{Caller, done_or_error, is_admin, keep};
use crate::state::State;

/// Answers a job group request.
pub(crate) fn request(
    state: &mut State,
    caller: &Caller,
    request: JobGroupRequest,
    t: Time,
    records: &mut Vec<Record>,
) -> Response {
    match request {
        JobGroupRequest::List => Response::JobGroups(list(state)),
        JobGroupRequest::Add { group, limit } => {
            let change = JobGroupChange::Add { path: group, owner: caller.user.clone(), limit };
            done_or_error(keep(state, t, records, Record::JobGroup(change)))
        }
        JobGroupRequest::Modify { group, limit, owner } => {
            if let Err(e) = may_change(state, caller, &group) {
                return Response::Error(e);
            }
            let change = JobGroupChange::Modify { path: group, limit, owner };
            done_or_error(keep(state, t, records, Record::JobGroup(change)))
        }
        JobGroupRequest::Delete(which) => delete(state, caller, which, t, records),
    }
}

/// Whether the caller may change group `path`: root, an administrator,
/// its owner or the owner of a group above it.
fn may_change(state: &State, caller: &Caller, path: &str) -> Result<(), String> {
    if is_admin(state, caller) {
        return Ok(());
    }
    let path = normal(path);
    let Some(g) = state.engine.job_group(path) else {
        return Err(format!("Job group <{path}> does not exist"));
    };
    // The group itself is the last of its lineage.
    let owns = lineage(path).any(|p| state.engine.job_group(p).is_some_and(|a| a.owner == caller.user));
    match owns {
        true => Ok(()),
        false => Err(denied(path, &g.owner)),
    }
}

fn denied(path: &str, owner: &str) -> String {
    format!("Job group <{path}>: User permission denied (its owner is {owner})")
}

/// `bgdel`: the groups deleted, or why none was.
fn delete(state: &mut State, caller: &Caller, which: GroupDeletion, t: Time, records: &mut Vec<Record>) -> Response {
    let admin = is_admin(state, caller);
    // As the engine judges it: a group is empty when no unfinished job
    // names it or a group under it.
    let in_use = state.engine.job_groups_in_use();
    let empty =
        |path: &str| !in_use.range(path..).take_while(|(g, _)| g.starts_with(path)).any(|(g, _)| is_within(g, path));
    let doomed: Vec<String> = match &which {
        GroupDeletion::Group(path) => {
            let path = normal(path);
            match state.engine.job_group(path) {
                Some(g) if !admin && g.owner != caller.user => return Response::Error(denied(path, &g.owner)),
                _ => vec![path.to_string()],
            }
        }
        GroupDeletion::EmptyOf(_) if !admin => {
            return Response::Error("bgdel -u: User permission denied: only administrators may do this".into());
        }
        GroupDeletion::EmptyMine => outermost(state, |path, owner| empty(path) && owner == caller.user),
        GroupDeletion::EmptyUnder(under) => outermost(state, |path, owner| {
            is_within(path, normal(under)) && empty(path) && (admin || owner == caller.user)
        }),
        GroupDeletion::EmptyOf(user) => {
            outermost(state, |path, owner| empty(path) && user.as_deref().is_none_or(|u| owner == u))
        }
    };
    let mut before: BTreeMap<String, JobGroupInfo> = list(state).into_iter().map(|g| (g.path.clone(), g)).collect();
    let mut deleted = Vec::new();
    for path in doomed {
        let info = before.remove(&path);
        let change = JobGroupChange::Delete { path: path.clone() };
        match keep(state, t, records, Record::JobGroup(change)) {
            Ok(()) => deleted.extend(info),
            Err(e) if matches!(which, GroupDeletion::Group(_)) => return Response::Error(e.reason()),
            Err(_) => {}
        }
    }
    Response::JobGroups(deleted)
}

/// The groups `chosen` picks that no other picked group holds (deleting
/// a group deletes its subgroups), in path order.
fn outermost(state: &State, chosen: impl Fn(&str, &str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for g in state.engine.job_groups() {
        let held = out.last().is_some_and(|last| is_within(&g.path, last));
        if !held && chosen(&g.path, &g.owner) {
            out.push(g.path);
        }
    }
    out
}

/// Every job group with its counts, in path order.
fn list(state: &State) -> Vec<JobGroupInfo> {
    let mut infos: BTreeMap<String, JobGroupInfo> = state
        .engine
        .job_groups()
        .into_iter()
        .map(|g| {
            let info = JobGroupInfo {
                path: g.path.clone(),
                owner: g.owner,
                limit: g.limit,
                started: g.started,
                ..Default::default()
            };
            (g.path, info)
        })
        .collect();
    for (_, j, n) in state.book.jobs_counted() {
        let Some(path) = j.record.spec.job_group.as_deref() else { continue };
        let slots = u64::from(j.record.spec.slots.max(1)).max(j.alloc.iter().map(|a| u64::from(a.1)).sum());
        let n = u64::from(n);
        for group in lineage(path) {
            if let Some(info) = infos.get_mut(group) {
                count(&mut info.jobs, j.status, n);
                count(&mut info.slots, j.status, n * slots);
            }
        }
    }
    infos.into_values().collect()
}

fn count(c: &mut GroupCounts, status: JobStatus, n: u64) {
    match status {
        JobStatus::Pend | JobStatus::Psusp => c.pend += n,
        JobStatus::Run | JobStatus::Unkwn => c.run += n,
        JobStatus::Ssusp => c.ssusp += n,
        JobStatus::Ususp => c.ususp += n,
        JobStatus::Done | JobStatus::Exit => c.finish += n,
    }
}
