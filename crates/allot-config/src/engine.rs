//! From a configuration to what the engine schedules with.

use std::collections::BTreeMap;

use allot_engine::model::{
    ComputeUnitSpec, EngineConfig, HostAttrs, HostSpec, ProcLimit, QueueLimits, QueueSpec, RunLimitSpec,
};
use allot_engine::pend_limits::{PendLimit, UserPendLimits};
use allot_engine::resreq::Resource;

use crate::model::{Config, HostRef};

impl Config {
    /// Where a job that names no queue goes: DEFAULT_QUEUE's queues;
    /// without it, `normal` if there is one, else the first queue.
    pub fn default_queues(&self) -> Vec<String> {
        if !self.params.default_queue.is_empty() {
            self.params.default_queue.clone()
        } else if self.queue("normal").is_some() {
            vec!["normal".to_string()]
        } else {
            self.queues.first().map(|q| vec![q.name.clone()]).unwrap_or_default()
        }
    }

    /// The engine's configuration. A job that names no queue goes to the
    /// first DEFAULT_QUEUE; without DEFAULT_QUEUE, to the queue named
    /// `normal` if there is one, else the first queue.
    pub fn engine_config(&self) -> EngineConfig {
        self.engine_config_for(Vec::new())
    }

    /// [`Config::engine_config`], with `users` (besides those the
    /// configuration names) placed in the share trees a multifactor
    /// policy takes its associations from, as `default` places them: the
    /// simulator knows a trace's users ahead.
    pub fn engine_config_for(&self, users: Vec<String>) -> EngineConfig {
        let hosts = self
            .hosts
            .iter()
            .map(|h| {
                let mut resources: BTreeMap<String, Resource> = BTreeMap::new();
                resources.extend(h.booleans.iter().map(|b| (b.clone(), Resource::Bool)));
                resources.extend(h.numbers.iter().map(|(k, v)| (k.clone(), Resource::Num(*v))));
                resources.extend(h.strings.iter().map(|(k, v)| (k.clone(), Resource::Str(v.clone()))));
                let attrs =
                    HostAttrs { host_type: h.host_type.clone(), model: h.model.clone(), maxmem: h.maxmem, resources };
                HostSpec { name: h.name.clone(), slots: h.slots(), cpus: h.cpus(), attrs }
            })
            .collect();
        let queues = self
            .queues
            .iter()
            .map(|q| {
                let policy = self.policy_of_queue(&q.name);
                let master = policy.as_ref().and_then(|p| self.queue(&p.name));
                let (reserve, plan) = self.reservation_of(q);
                QueueSpec {
                    name: q.name.clone(),
                    priority: q.priority,
                    users: (!q.users.is_empty()).then(|| q.users.clone()),
                    hosts: (!q.hosts.is_empty()).then(|| self.resolve_hosts(&q.hosts)),
                    policy: policy.map(|p| p.name),
                    dispatch_order_queue: master.is_some_and(|m| m.dispatch_order_queue),
                    limits: QueueLimits {
                        ujob: q.ujob_limit,
                        pjob: q.pjob_limit,
                        qjob: q.qjob_limit,
                        hjob: q.hjob_limit,
                        pend: pend_limit(q.max_pend_jobs, q.max_pend_slots),
                    },
                    run_limit: q
                        .runlimit
                        .as_ref()
                        .map(|r| RunLimitSpec { default: r.default.as_ref().map(|d| d.seconds), max: r.max.seconds }),
                    job_accept_interval: q.job_accept_interval.or(self.params.job_accept_interval),
                    slot_pool: q.slot_pool.clone().zip(q.slot_share),
                    proclimit: q.proclimit.map(|p| ProcLimit { min: p.min, default: p.default, max: p.max }),
                    res_req: q.res_req.clone(),
                    first_hosts: {
                        let firsts: Vec<HostRef> = q
                            .hosts
                            .iter()
                            .filter(|h| h.first_exec && !is_keyword(&h.name) && h.preference.is_none())
                            .cloned()
                            .collect();
                        // An empty list would resolve to every host.
                        if firsts.is_empty() { Vec::new() } else { self.resolve_hosts(&firsts) }
                    },
                    reserve,
                    plan,
                    backfill: q.backfill,
                    interruptible: q
                        .interruptible_backfill
                        .filter(|_| q.backfill && q.runlimit.is_some())
                        .map(u64::from),
                    requeue_exit: {
                        let r = &q.requeue_exit_values;
                        let mut codes: Vec<i32> = r.requeue.iter().chain(&r.exclude).copied().collect();
                        codes.sort_unstable();
                        codes.dedup();
                        codes
                    },
                    exclusive: !matches!(q.exclusive, crate::model::Exclusive::No),
                    exclusive_cu: match &q.exclusive {
                        crate::model::Exclusive::ComputeUnit(t) => Some(t.clone()),
                        _ => None,
                    },
                    preemption: allot_engine::model::PreemptionSpec {
                        preemptive: q.preemption.preemptive.clone(),
                        preemptable: q.preemption.preemptable.clone(),
                    },
                    max_job_preempt: q.max_job_preempt,
                }
            })
            .collect();
        let default_queues = self.default_queues();
        EngineConfig {
            hosts,
            queues,
            fairshare: self.fairshare_set(),
            groups: self.groups.clone(),
            mbd_sleep_time: self.params.mbd_sleep_time,
            plan_max_jobs: self.plan_max_jobs(),
            hist_hours: self.params.factors.hist_hours,
            default_queues,
            user_max_jobs: self.user_limits.iter().filter_map(|u| Some((u.name.clone(), u.max_jobs?))).collect(),
            max_job_array_size: self.params.max_job_array_size,
            max_user_priority: self.params.max_user_priority,
            user_pend_limits: self.user_pend_limits(),
            pend_limits: pend_limit(self.params.max_pend_jobs, self.params.max_pend_slots),
            sub_try_interval: self.params.sub_try_interval,
            parallel_sched_by_slot: self.params.parallel_sched_by_slot,
            resource_reserve_per_slot: self.params.resource_reserve_per_slot,
            compute_unit_types: self.params.compute_unit_types.clone(),
            default_compute_unit_type: self.params.default_compute_unit_type.clone(),
            compute_units: self.compute_unit_specs(),
            host_groups: self.host_groups.iter().map(|g| (g.name.clone(), self.resolve_hosts(&g.members))).collect(),
            applications: self
                .applications
                .iter()
                .map(|a| {
                    let proclimit = a.proclimit.map(|p| ProcLimit { min: p.min, default: p.default, max: p.max });
                    (
                        a.name.clone(),
                        allot_engine::model::AppSpec {
                            run_limit: a.runlimit,
                            runtime: a.runtime,
                            proclimit,
                            resizable: a.resizable,
                        },
                    )
                })
                .collect(),
            multifactor: self.multifactor_policy().and_then(|policy| {
                // validate() made sure there are associations.
                let (tree, from_policy) = self.associations(users).ok()?;
                let s = &self.settings;
                Some(allot_engine::model::MultifactorSpec {
                    policy,
                    tree,
                    params: s.priority.clone(),
                    half_life: s.half_life,
                    reset: s.usage_reset,
                    billing: s.billing,
                    from_policy,
                })
            }),
            memory_adjustment: self.settings.memory_adjustment_threshold,
            alloc_limits: self.resource_limits.clone(),
            shared_resources: self.shared_resources.clone(),
            not_consumable: self.not_consumable.clone(),
            preempt_for: {
                let has = |k: &str| self.params.preempt_for.iter().any(|w| w == k);
                allot_engine::model::PreemptFor {
                    mini_job: has("MINI_JOB"),
                    optimal_mini_job: has("OPTIMAL_MINI_JOB"),
                    least_run_time: has("LEAST_RUN_TIME"),
                    max_job_preempt: self.params.max_job_preempt,
                    no_preempt_run_time: self.params.no_preempt_run_time,
                    no_preempt_finish_time: self.params.no_preempt_finish_time,
                    backfill_jobs: self.params.preempt_backfill,
                }
            },
        }
    }
}

impl Config {
    /// The ComputeUnit section with each unit's hosts: the finest type's
    /// members are hosts and host groups; a coarser unit holds the hosts
    /// of the units it names, in their order.
    fn compute_unit_specs(&self) -> Vec<ComputeUnitSpec> {
        let finest = self.params.compute_unit_types.first();
        let mut out: Vec<ComputeUnitSpec> = Vec::new();
        for cu in &self.compute_units {
            let hosts = if Some(&cu.cu_type) == finest {
                let refs: Vec<HostRef> = cu
                    .members
                    .iter()
                    .map(|m| HostRef { name: m.clone(), exclude: false, first_exec: false, preference: None })
                    .collect();
                self.resolve_hosts(&refs)
            } else {
                let mut hosts: Vec<String> = Vec::new();
                for m in &cu.members {
                    for h in out.iter().filter(|u| u.name == *m).flat_map(|u| &u.hosts) {
                        if !hosts.contains(h) {
                            hosts.push(h.clone());
                        }
                    }
                }
                hosts
            };
            out.push(ComputeUnitSpec {
                name: cu.name.clone(),
                cu_type: cu.cu_type.clone(),
                hosts,
                condensed: cu.condensed,
            });
        }
        out
    }

    /// The User section's MAX_PEND_JOBS and MAX_PEND_SLOTS: a row names
    /// a user, a user group as a whole, `group@` (each of its members), or
    /// `default` (each user with no row of their own), as LSF reads it.
    fn user_pend_limits(&self) -> UserPendLimits {
        let mut out = UserPendLimits::default();
        for u in &self.user_limits {
            let limit = pend_limit(u.max_pend_jobs, u.max_pend_slots);
            if limit.is_none() {
                continue;
            }
            if u.name == "default" {
                out.default = limit;
            } else if let Some(g) = u.name.strip_suffix('@') {
                out.each_member.push((g.to_string(), limit));
            } else if self.groups.is_group(&u.name) {
                out.groups.push((u.name.clone(), limit));
            } else {
                out.users.insert(u.name.clone(), limit);
            }
        }
        out
    }
}

/// MAX_PEND_JOBS and MAX_PEND_SLOTS as the engine takes them.
fn pend_limit(jobs: Option<u32>, slots: Option<u32>) -> PendLimit {
    PendLimit { jobs: jobs.map(u64::from), slots: slots.map(u64::from) }
}

/// `all` and `others`: never first execution host candidates.
pub(crate) fn is_keyword(name: &str) -> bool {
    name.eq_ignore_ascii_case("all") || name.eq_ignore_ascii_case("others")
}

/// `bsub -m "hostA! hostB+2 hostgroup1"`: the hosts, host groups and
/// compute units a job may run on (`~` exclusions belong to queues, not to
/// `-m`).
pub fn parse_host_picks(text: &str) -> Result<Vec<allot_engine::HostPick>, crate::lsf::values::ValueError> {
    let tokens = crate::lsf::values::parse_all(crate::lsf::values::host_tokens, text)?;
    tokens
        .into_iter()
        .map(|t| {
            if t.exclude {
                let offset = crate::lsf::text::offset_in(text, t.name).saturating_sub(1);
                return Err(crate::lsf::values::ValueError {
                    offset,
                    message: format!("`~{}`: -m takes no exclusions", t.name),
                });
            }
            Ok(allot_engine::HostPick { name: t.name.to_string(), first: t.first_exec, preference: t.preference })
        })
        .collect()
}
