//! The cluster as the commands that describe it see it: `lsid`,
//! `lsclusters`, `bparams`, `badmin showconf mbd` and `badmin showstatus`,
//! all from one answer.

use std::collections::BTreeSet;

use allot_proto::JobStatus;
use allot_proto::cluster::{ClusterInfo, HostCounts, JobCounts};

use crate::state::State;

pub(crate) fn cluster(state: &State) -> ClusterInfo {
    let mut hosts = HostCounts::default();
    for h in crate::views::hosts(state) {
        let count = match h.status.as_str() {
            s if s.starts_with("ok") => &mut hosts.ok,
            s if s.starts_with("unreach") => &mut hosts.unreachable,
            s if s.starts_with("unavail") => &mut hosts.unavailable,
            _ => &mut hosts.closed,
        };
        *count += 1;
    }
    let mut jobs = JobCounts::default();
    let (mut users, mut active) = (BTreeSet::new(), BTreeSet::new());
    for (_, j, n) in state.book.jobs_counted() {
        let count = match j.status {
            JobStatus::Run | JobStatus::Unkwn => &mut jobs.running,
            JobStatus::Ususp | JobStatus::Ssusp => &mut jobs.suspended,
            JobStatus::Pend | JobStatus::Psusp => &mut jobs.pending,
            JobStatus::Done | JobStatus::Exit => &mut jobs.finished,
        };
        *count += n;
        users.insert(j.record.spec.user.as_str());
        if j.status.unfinished() {
            active.insert(j.record.spec.user.as_str());
        }
    }
    let config = state.engine.config();
    let me = nix::unistd::User::from_uid(nix::unistd::Uid::effective()).ok().flatten().map(|u| u.name);
    let admins: Vec<String> = me.into_iter().chain(state.admins.iter().cloned()).collect();
    // Where LSF's tools look: the configuration directory is LSF_ENVDIR,
    // with LSF_CONFDIR and LSB_CONFDIR as its lsf.conf laid them out when
    // it was loaded; the state directory is LSB_SHAREDIR.
    let mut dirs = state.conf_dirs.clone();
    dirs.push(("LSB_SHAREDIR".to_string(), state.state_dir.display().to_string()));
    if let Some(bin) = std::env::current_exe().ok().and_then(|e| e.parent().map(|p| p.display().to_string())) {
        dirs.push(("LSF_SERVERDIR".to_string(), bin));
    }
    dirs.sort();
    ClusterInfo {
        name: state.cluster_name.clone(),
        master: state.host.clone(),
        admins,
        hosts,
        cpus: config.hosts.iter().map(|h| u64::from(h.cpus)).sum(),
        slots: config.hosts.iter().map(|h| u64::from(h.slots)).sum(),
        jobs,
        users: users.len() as u32,
        active_users: active.len() as u32,
        user_groups: config.groups.iter().count() as u32,
        started: state.started_at,
        configured: state.configured_at,
        pid: std::process::id(),
        params: state.params.clone(),
        dirs,
        host_groups: config.host_groups.iter().map(|(g, hosts)| (g.clone(), hosts.clone())).collect(),
    }
}
