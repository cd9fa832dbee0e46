//! Read-only views of the live state for the commands: queues, hosts,
//! share tables, user groups and users. Engine types stop here; the
//! commands get `allot-proto` types.

use std::collections::BTreeMap;

use allot_engine::shares::priority::PriorityInputs;
use allot_engine::shares::{Member, PolicyState, Scope};
use allot_engine::{Engine, Time};
use allot_proto::{
    GroupInfo, HostInfo, JobStatus, PolicyShares, QueueInfo, Response, ShareRowInfo, ShareTableInfo, UserInfo,
};

use crate::state::State;
use allot_config::submission::at_column;

/// Job slots by state: pending (PSUSP included, as LSF counts them),
/// running, stopped (USUSP), and reserved by pending jobs (counted as
/// pending too).
fn slots_by_state<'a>(
    state: &'a State,
    key: impl Fn(&'a crate::state::BookJob) -> &'a str,
) -> BTreeMap<&'a str, [u32; 5]> {
    let mut slots: BTreeMap<&str, [u32; 5]> = BTreeMap::new();
    for (id, j, n) in state.book.jobs_counted() {
        let column = match j.status {
            JobStatus::Pend | JobStatus::Psusp => 0,
            JobStatus::Run | JobStatus::Unkwn => 1,
            JobStatus::Ususp => 2,
            JobStatus::Ssusp => 4,
            JobStatus::Done | JobStatus::Exit => continue,
        };
        slots.entry(key(j)).or_default()[column] += n * state.slots_of(id, j);
    }
    for (id, n) in state.engine.reservations_held() {
        if let Some(j) = state.book.jobs.get(&id) {
            slots.entry(key(j)).or_default()[3] += n.0;
        }
    }
    slots
}

/// `bqueues`: each queue's limits, configuration and job slots by state.
pub fn queues(state: &State) -> Vec<QueueInfo> {
    let slots = slots_by_state(state, |j| j.record.spec.queue.as_deref().unwrap_or_default());
    state
        .engine
        .queues()
        .map(|(q, ..)| {
            let [pend, run, ususp, rsv, ssusp] = slots.get(q.name.as_str()).copied().unwrap_or_default();
            let susp = ususp + ssusp;
            let exec = state.queue_extras.get(&q.name).cloned().unwrap_or_default();
            QueueInfo {
                name: q.name.clone(),
                priority: q.priority,
                status: if state.book.closed_queues.contains(&q.name) {
                    "Closed:Active".into()
                } else {
                    "Open:Active".into()
                },
                max: q.limits.qjob,
                jl_u: q.limits.ujob,
                jl_p: q.limits.pjob,
                jl_h: q.limits.hjob,
                njobs: pend + run + susp,
                pend,
                run,
                susp,
                ssusp,
                users: q.users.clone(),
                // As bqueues -l shows it: as written (a group as
                // `name/`), none, or all (empty).
                hosts: match &q.hosts {
                    Some(named) if named.is_empty() => vec!["none".into()],
                    Some(_) if !exec.hosts.is_empty() => exec.hosts.clone(),
                    Some(named) => named.clone(),
                    None => Vec::new(),
                },
                description: exec.description.clone(),
                policy: q.policy.clone(),
                run_limit: q.run_limit.map(|r| (r.default, r.max)),
                slot_pool: q.slot_pool.clone(),
                rsv,
                nice: exec.nice,
                job_starter: exec.job_starter,
                dispatch_order_queue: q.dispatch_order_queue,
            }
        })
        .collect()
}

/// `bhosts`: each host's state and slots.
pub fn hosts(state: &State) -> Vec<HostInfo> {
    // Slots of stopped jobs per host: few jobs run at once, so walking
    // them is cheap.
    let mut stopped: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    for j in state.book.running.iter().filter_map(|id| state.book.jobs.get(id)) {
        let preempted = match j.status {
            JobStatus::Ususp => false,
            JobStatus::Ssusp => true,
            _ => continue,
        };
        for (h, n) in &j.alloc {
            let e = stopped.entry(h.as_str()).or_default();
            if preempted {
                e.1 += n;
            } else {
                e.0 += n;
            }
        }
    }
    // Reserved slots count against the host's job slot limit: a host
    // whose slots are all used or reserved is full.
    let mut hosts = state
        .engine
        .hosts()
        .enumerate()
        .map(|(h, (name, max, used, _))| {
            let (ususp, ssusp) = stopped.get(name).copied().unwrap_or_default();
            let rsv = state.engine.reserved_on_host(allot_engine::HostIdx(h as u32));
            let mem_reserved = state.engine.reserved_memory_on_host(allot_engine::HostIdx(h as u32)).round() as u64;
            HostInfo {
                name: name.to_string(),
                // As LSF orders them: a host whose agent is not heard
                // from shows that first.
                status: if let Some(reach) =
                    Some(state.book.reach(name)).filter(|r| state.book.agents && *r != allot_store::Reach::Ok)
                {
                    reach.name().into()
                } else if state.book.closed_hosts.contains(name) {
                    "closed_Adm".into()
                } else if used + rsv >= max {
                    "closed_Full".into()
                } else {
                    "ok".into()
                },
                max,
                njobs: used + rsv,
                run: used.saturating_sub(ususp + ssusp),
                ususp,
                ssusp,
                rsv,
                mem_reserved,
                members: Vec::new(),
            }
        })
        .collect::<Vec<HostInfo>>();
    let units = condensed_units(state, &hosts);
    hosts.extend(units);
    hosts
}

/// A row for each condensed compute unit (CONDENSED = Y), in configuration
/// order, summing its hosts' figures, as `bhosts` shows the spec's
/// enclosures and racks. Its status is `ok` when any of its hosts is; else
/// the status its hosts share, or `closed` when they differ.
fn condensed_units(state: &State, hosts: &[HostInfo]) -> Vec<HostInfo> {
    let by_name: BTreeMap<&str, &HostInfo> = hosts.iter().map(|h| (h.name.as_str(), h)).collect();
    let units = state.engine.config().compute_units.iter().filter(|u| u.condensed);
    units
        .map(|u| {
            let members: Vec<&HostInfo> = u.hosts.iter().filter_map(|h| by_name.get(h.as_str()).copied()).collect();
            let sum = |f: fn(&HostInfo) -> u32| members.iter().map(|h| f(h)).sum();
            let status = if members.iter().any(|h| h.status == "ok") {
                "ok".to_string()
            } else {
                match members.first() {
                    Some(first) if members.iter().all(|h| h.status == first.status) => first.status.clone(),
                    _ => "closed".to_string(),
                }
            };
            HostInfo {
                name: u.name.clone(),
                status,
                max: sum(|h| h.max),
                njobs: sum(|h| h.njobs),
                run: sum(|h| h.run),
                ususp: sum(|h| h.ususp),
                ssusp: sum(|h| h.ssusp),
                rsv: sum(|h| h.rsv),
                mem_reserved: members.iter().map(|h| h.mem_reserved).sum(),
                members: u.hosts.clone(),
            }
        })
        .collect()
}

/// `allot sshare --live`: the multifactor policy's associations, usage
/// and pending jobs now.
pub fn associations(engine: &Engine, t: Time) -> allot_proto::Response {
    use allot_engine::multifactor::{AssocId, FairsharePolicy, RawShares};
    let Some((policy, tree, usage, pending)) = engine.multifactor_inputs(t) else {
        return allot_proto::Response::Error("the cluster's priority policy is lsf: see `allot shares --live`".into());
    };
    let assocs = (0..tree.len() as u32)
        .map(|i| {
            let a = tree.get(AssocId(i));
            allot_proto::WireAssoc {
                account: a.account.clone(),
                user: a.user.clone(),
                parent: a.parent.map(|p| p.0),
                shares: match a.shares {
                    RawShares::Count(n) => Some(n),
                    RawShares::Parent => None,
                },
            }
        })
        .collect();
    let dampening = match policy {
        FairsharePolicy::Classic { dampening } => dampening,
        _ => 1.0,
    };
    allot_proto::Response::Associations(allot_proto::LiveAssociations {
        policy: policy.name().to_string(),
        dampening,
        assocs,
        usage,
        pending,
    })
}

/// `allot sprio --live`: the pending jobs' priorities at the last pass.
pub fn priorities(engine: &Engine) -> allot_proto::Response {
    let Some((w, jobs)) = engine.multifactor_pending() else {
        return allot_proto::Response::Error(
            "the cluster's priority policy is lsf, which has no job priorities".into(),
        );
    };
    let jobs = jobs
        .into_iter()
        .map(|p| {
            let f = p.factors;
            allot_proto::JobPriority {
                id: p.id.0,
                user: p.user.to_string(),
                account: p.account.to_string(),
                priority: p.priority,
                factors: [f.wait_time, f.fair_share, f.qos, f.queue, f.job_size, f.user],
            }
        })
        .collect();
    allot_proto::Response::Priorities(allot_proto::LivePriorities {
        weights: [w.wait_time, w.fair_share, w.qos, w.queue, w.job_size, w.user],
        jobs,
    })
}

/// Every fairshare policy with its share tables at `t`.
pub fn shares(engine: &Engine, t: Time) -> Vec<PolicyShares> {
    let adjustment = engine.adjustment();
    let inputs = adjustment.inputs();
    engine.fairshare().policies.iter().map(|p| policy_shares(p, t, &inputs)).collect()
}

fn policy_shares(p: &PolicyState, t: Time, inputs: &PriorityInputs<'_>) -> PolicyShares {
    let (partition_hosts, queues) = match &p.scope {
        Scope::Hosts(hosts) => (Some(hosts.iter().cloned().collect()), Vec::new()),
        Scope::Queues(queues) => (None, queues.clone()),
    };
    let tree = &p.tree;
    let tables = tree
        .share_tables(t, inputs)
        .into_iter()
        .map(|table| ShareTableInfo {
            path: table.path,
            rows: table
                .rows
                .into_iter()
                .map(|r| ShareRowInfo {
                    name: r.name,
                    shares: r.shares,
                    priority: r.priority,
                    started: r.started,
                    reserved: r.reserved,
                    cpu_time: r.cpu_time,
                    run_time: r.run_time,
                    adjust: r.adjust,
                })
                .collect(),
        })
        .collect();
    PolicyShares {
        name: tree.policy().to_string(),
        partition_hosts,
        queues,
        user_shares: tree.top_assignment().iter().map(ToString::to_string).collect::<Vec<_>>().join(" "),
        show_adjust: tree.factors().fairshare_adjustment_factor != 0.0,
        tables,
    }
}

/// `bugroup`: the user groups, in configuration order.
pub fn groups(engine: &Engine) -> Vec<GroupInfo> {
    engine
        .config()
        .groups
        .iter()
        .map(|g| GroupInfo {
            name: g.name.clone(),
            members: g
                .members
                .iter()
                .map(|m| match m {
                    Member::User(u) => u.clone(),
                    Member::Group(sub) => format!("{sub}/"),
                    Member::All => "all".into(),
                })
                .collect(),
            shares: g.shares.iter().map(ToString::to_string).collect::<Vec<_>>().join(" "),
        })
        .collect()
}

/// `busers`: the users asked for (none: `caller`; `all`: every user with
/// jobs or a MAX_JOBS), by name; a user with neither shows zeros.
pub fn users(state: &State, caller: &str, asked: &[String]) -> Vec<UserInfo> {
    let slots = slots_by_state(state, |j| j.record.spec.user.as_str());
    let limits = &state.engine.config().user_max_jobs;
    let mut names: Vec<&str> = if asked.iter().any(|u| u == "all") {
        slots.keys().copied().chain(limits.keys().map(String::as_str)).collect()
    } else if asked.is_empty() {
        vec![caller]
    } else {
        asked.iter().map(String::as_str).collect()
    };
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let [pend, run, ususp, rsv, ssusp] = slots.get(name).copied().unwrap_or_default();
            UserInfo { name: name.to_string(), max: limits.get(name).copied(), pend, run, ususp, ssusp, rsv }
        })
        .collect()
}

/// `blimits`: every limit's buckets in use (and with `all`, the limits
/// with none).
pub fn limits(engine: &allot_engine::Engine, all: bool) -> Vec<allot_proto::LimitInfo> {
    engine
        .limit_usage(all)
        .into_iter()
        .map(|u| allot_proto::LimitInfo {
            name: u.name,
            users: u.users,
            queues: u.queues,
            hosts: u.hosts,
            projects: u.projects,
            apps: u.apps,
            slots: (u.used.slots, u.slots),
            mem: (u.used.mem, u.mem),
            jobs: (u.used.jobs, u.jobs),
            resources: u.resources,
        })
        .collect()
}

/// `bhosts -s`, `lsload -s`, `lshosts -s`: the counts hosts share and what
/// running jobs hold of them.
pub fn shared_resources(engine: &allot_engine::Engine) -> Vec<allot_proto::SharedResourceInfo> {
    engine
        .shared_usage()
        .into_iter()
        .map(|u| allot_proto::SharedResourceInfo { name: u.name, total: u.total, reserved: u.reserved, hosts: u.hosts })
        .collect()
}

/// `bslots [-R "select"]`: the engine's backfill windows, on the hosts
/// the requirement selects. Only a select string is taken, as LSF's
/// bslots takes.
pub(crate) fn slots(state: &State, t: Time, select: Option<&str>) -> Response {
    let select = match select.map(allot_config::resreq::parse).transpose() {
        Ok(r) => r,
        Err(e) => return Response::Error(at_column("-R", &e)),
    };
    if let Some(r) = &select {
        let only_select = allot_engine::ResReq { text: r.text.clone(), select: r.select.clone(), ..Default::default() };
        if *r != only_select {
            return Response::Error(format!("-R \"{}\": bslots takes a select string only", r.text));
        }
    }
    let windows = state.engine.backfill_windows(t, select.as_ref().and_then(|r| r.select.as_ref()));
    Response::Slots(
        windows
            .into_iter()
            .map(|w| allot_proto::SlotWindow {
                slots: w.slots,
                runtime: w.runtime,
                hosts: w.hosts.iter().map(|&(h, n)| (state.engine.host_name(h).to_string(), n.0)).collect(),
            })
            .collect(),
    )
}

/// `bjobs -p -l`, `allot explain`: everything that holds a pending job.
pub(crate) fn explain(state: &State, job: allot_proto::JobRef, t: allot_engine::Time) -> allot_proto::Response {
    let Some(&id) = state.book.resolve(job).first() else {
        return allot_proto::Response::Error(format!("Job <{job}> is not found"));
    };
    match state.engine.explain_named(id, t, &|id| state.book.job_ref(id).to_string()) {
        Some(x) => match serde_json::to_value(&x) {
            Ok(v) => allot_proto::Response::Explained(v),
            Err(e) => allot_proto::Response::Error(format!("Job <{job}>: {e}")),
        },
        None => allot_proto::Response::Error(format!("Job <{job}> is not pending")),
    }
}
