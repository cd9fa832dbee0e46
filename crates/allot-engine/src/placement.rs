//! Where a job starts (spec 004): which hosts, and how many slots on each.
//!
//! A host can give a job as many slots as it has free, within the queue's
//! per-host limits (HJOB_LIMIT, PJOB_LIMIT, JOB_ACCEPT_INTERVAL) and, for a
//! parallel job, no more than its CPUs unless PARALLEL_SCHED_BY_SLOT=Y; with
//! `rusage[mem=n]`, only where n MB are not held by running jobs (n per
//! slot with RESOURCE_RESERVE_PER_SLOT=y).
//!
//! A job without resource requirements takes free slots first fit in host
//! order, through the queue's free-slot index. A job with requirements
//! considers the queue's hosts where its `select` holds, sorted by its
//! `order` keys (host order among equals); with `same[...]`, hosts are
//! grouped by their values of those resources and the groups are tried in
//! the order of their first host, the first group that holds the job
//! taking it. Within the hosts considered, `span` decides the shape:
//! - none: slots host by host, as many as each can give;
//! - `span[hosts=1]`: the first host that can give the minimum, as many as
//!   it can up to the maximum;
//! - `span[ptile=n]` (or per type or model): n slots on each host that can
//!   give n, the last host taking what remains.
//!
//! A job of `-n min,max` takes as many slots as it can up to `max`, and
//! starts when it can have `min`.

use smallvec::SmallVec;

use crate::engine::{Alloc, Engine, Job, Rejection};
use crate::hosts::HostState;
use crate::model::HostPick;
use crate::reserve::{Ask, View, rusage_mem};
use crate::resreq::{ResReq, Span, Value, higher_is_better};
use crate::time::Time;

/// `bsub -m` resolved (spec 004, "Specifying a First Execution Host"): the
/// hosts a job may use with their preference, and its first execution host
/// candidates (its own `name!` entries, else its queue's). The first host
/// of the allocation is a candidate, and the other candidates are not used
/// for the rest of it ("once LSF selects a first execution host for the
/// current job, the other first execution host candidates become
/// unavailable to the current job").
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Picks {
    /// As given, to resolve again after a reconfiguration.
    pub(crate) given: Vec<HostPick>,
    /// Hosts the job may use, by host index, with their preference; `None`:
    /// all of its queue's.
    pub(crate) allowed: Option<Vec<(u32, u32)>>,
    pub(crate) first: Vec<u32>,
}

impl Engine {
    /// Resolves `-m` for a job of `queue`; `None` when neither the job nor
    /// the queue names hosts. A name is a host, a host group or a compute
    /// unit; `all` and `others` (every host the list does not name) may not
    /// be first execution host candidates, nor carry `!` with a preference;
    /// every host named must be one of the queue's.
    pub(crate) fn resolve_picks(&self, given: &[HostPick], queue: usize) -> Result<Option<Picks>, Rejection> {
        let q = &self.queues[queue];
        if given.is_empty() && q.first_hosts.is_empty() {
            return Ok(None);
        }
        let bad = |m: String| Err(Rejection::BadHosts(m));
        let mut allowed: Vec<(u32, u32)> = Vec::new();
        let mut first: Vec<u32> = Vec::new();
        let named = |name: &str| -> Option<Vec<u32>> {
            let index = |n: &String| self.host_index(n).map(|h| h.0);
            if let Some(i) = self.host_index(name) {
                return Some(vec![i.0]);
            }
            if let Some(members) = self.config.host_groups.get(name) {
                return Some(members.iter().filter_map(index).collect());
            }
            let cu = self.config.compute_units.iter().find(|c| c.name == name)?;
            Some(cu.hosts.iter().filter_map(index).collect())
        };
        let mut others: Option<u32> = None;
        for p in given {
            let keyword = p.name.eq_ignore_ascii_case("all") || p.name.eq_ignore_ascii_case("others");
            if p.first && keyword {
                return bad(format!("`{}` cannot be a first execution host candidate", p.name));
            }
            if p.first && p.preference.is_some() {
                return bad(format!("`{}!`: a first execution host candidate takes no preference", p.name));
            }
            let hosts = if p.name.eq_ignore_ascii_case("others") {
                others = Some(p.preference.unwrap_or(0));
                continue;
            } else if p.name.eq_ignore_ascii_case("all") {
                (0..self.hosts.len() as u32).collect()
            } else {
                match named(&p.name) {
                    Some(h) => h,
                    None => {
                        return bad(format!("`{}` is not a host, host group or compute unit of this cluster", p.name));
                    }
                }
            };
            for h in hosts {
                if !self.host_sets[q.host_set].0.contains(&h) {
                    return bad(format!(
                        "host `{}` is not used by queue `{}`",
                        self.hosts[h as usize].name, q.spec.name
                    ));
                }
                if p.first && !first.contains(&h) {
                    first.push(h);
                }
                if !allowed.iter().any(|a| a.0 == h) {
                    allowed.push((h, p.preference.unwrap_or(0)));
                }
            }
        }
        if let Some(pref) = others {
            for &h in &self.host_sets[q.host_set].0 {
                if !allowed.iter().any(|a| a.0 == h) {
                    allowed.push((h, pref));
                }
            }
        }
        if first.is_empty() {
            first = q
                .first_hosts
                .iter()
                .copied()
                .filter(|h| given.is_empty() || allowed.iter().any(|a| a.0 == *h))
                .collect();
        }
        allowed.sort_unstable();
        Ok(Some(Picks { given: given.to_vec(), allowed: (!given.is_empty()).then_some(allowed), first }))
    }

    /// Whether `job` gets no more slots on a host than its CPUs: a
    /// parallel job, unless PARALLEL_SCHED_BY_SLOT.
    pub(crate) fn cpus_bound(&self, job: &Job) -> bool {
        job.max_slots > 1 && !self.config.parallel_sched_by_slot
    }

    /// How many slots host `h` can give `job` under `ask` (module docs).
    pub(crate) fn host_cap(&self, h: u32, job: &Job, t: Time, ask: &Ask) -> u32 {
        let released = ask.released.and_then(|r| r.get(&h)).copied().unwrap_or((0, 0.0));
        self.host_cap_released(h, job, t, ask, released)
    }

    /// [`Engine::host_cap`] with `released` (slots, MB) released on the
    /// host, whatever the ask says.
    pub(crate) fn host_cap_released(&self, h: u32, job: &Job, t: Time, ask: &Ask, released: (u32, f64)) -> u32 {
        let host = &self.hosts[h as usize];
        if host.blocked() {
            return 0;
        }
        // `bsub -x` runs only where nothing runs (once what is released
        // has ended).
        if job.exclusive && host.used > released.0 {
            return 0;
        }
        if !host.takes_user(job) {
            return 0;
        }
        let (rel_slots, rel_mem) = released;
        let (rsv_slots, rsv_mem) = self.reserved_to(host, ask.view);
        let borrowing = matches!(ask.view, View::Backfill { .. });
        let taken = ask.taken.and_then(|t| t.get(&h)).copied().unwrap_or(0);
        let free = (host.unclaimed() + rel_slots).saturating_sub(taken);
        let mut cap = if borrowing { free } else { free + rsv_slots };
        let q = &self.queues[job.queue];
        if q.per_host_limits {
            let spec = &q.spec;
            let (q_used, last) = host.per_queue.get(&job.queue).copied().unwrap_or((0, Time(0)));
            if let Some(max) = spec.limits.hjob {
                cap = cap.min(max.saturating_sub(q_used));
            }
            if let Some(per_cpu) = spec.limits.pjob {
                let max = (per_cpu * f64::from(host.cpus)).floor() as u32;
                cap = cap.min(max.saturating_sub(q_used));
            }
            if let Some(n) = spec.accept_interval() {
                let wait = u64::from(n) * u64::from(self.config.mbd_sleep_time);
                // A host that started a job of this queue at `last` takes
                // the next one only after the interval.
                if host.per_queue.contains_key(&job.queue) && t.0 < last.0.saturating_add(wait) {
                    return 0;
                }
            }
        }
        if borrowing {
            // Reserved slots are borrowed past the host's job slot limits
            // ("backfilling can take place even if the job slot limits for
            // a host or processor have been reached").
            cap += rsv_slots;
        }
        if self.cpus_bound(job) {
            cap = cap.min(host.cpus);
        }
        let mem = rusage_mem(job);
        if mem > 0.0 && !matches!(ask.view, View::Reserve(_)) {
            let free = free_mem(host) + rel_mem + rsv_mem;
            cap = cap_by_amount(cap, free, mem, self.config.resource_reserve_per_slot);
        }
        if job.host_limited && cap > 0 {
            cap = self.host_limit_cap(h, job, cap);
        }
        if cap > 0 && !matches!(ask.view, View::Reserve(_)) && job.res.as_ref().is_some_and(|r| !r.rusage.is_empty()) {
            cap = self.resource_cap(h, job, t, cap);
        }
        cap
    }

    /// A job starting (`hold`) or ending on `alloc`, under requirement
    /// `res`: its hosts' slots in use, the memory its `rusage[mem]` holds
    /// (per host, or per slot with RESOURCE_RESERVE_PER_SLOT=y), its
    /// exclusive compute units, and its hosts when it is `exclusive`
    /// (`bsub -x`).
    pub(crate) fn hold_hosts(&mut self, res: Option<&ResReq>, exclusive: bool, alloc: &[(u32, u32)], hold: bool) {
        self.lock_cus(res, alloc, hold);
        let hosts: SmallVec<[u32; 8]> = alloc.iter().map(|a| a.0).collect();
        if exclusive {
            self.lock_hosts(&hosts, hold);
        }
        let mems = self.rusage_by_entry(res, alloc);
        for (&(h, n), mem) in alloc.iter().zip(mems) {
            self.hosts[h as usize].hold(n, mem, hold);
        }
        self.refresh_hosts(&hosts);
    }

    /// MB that `rusage[mem=mem]` holds on a host where the job has `slots`
    /// slots: `mem`, or `mem` per slot with RESOURCE_RESERVE_PER_SLOT=y.
    pub(crate) fn rusage_on_host(&self, mem: f64, slots: u32) -> f64 {
        if self.config.resource_reserve_per_slot { mem * f64::from(slots) } else { mem }
    }

    /// Where `job` can have `ask.min` to `ask.max` slots now, first host
    /// first (module docs).
    pub(crate) fn place(&self, job: &Job, t: Time, ask: &Ask) -> Option<Alloc> {
        match &job.res {
            Some(res) if !res.terms.is_empty() => self.place_compound(job, res, t, ask),
            Some(res) => self.place_by(job, res, t, ask),
            None if job.constrained() => self.place_by(job, &ResReq::default(), t, ask),
            None => self.first_fit(job, t, ask),
        }
    }

    /// The hosts of the job's queue that `keep` accepts and that can give
    /// it slots under `ask`, in host order, with what each can give: hosts
    /// with free slots, and those where its view adds reserved or released
    /// slots.
    pub(crate) fn candidates(&self, job: &Job, t: Time, ask: &Ask, keep: impl Fn(u32) -> bool) -> Vec<(u32, u32)> {
        self.candidate_hosts(job, ask)
            .filter(|&h| keep(h))
            .filter_map(|h| Some((h, self.host_cap(h, job, t, ask))).filter(|c| c.1 > 0))
            .collect()
    }

    /// The hosts of the job's queue [`Engine::candidates`] looks at, in
    /// host order: those with free slots (walked lazily through the
    /// free-slot index) merged with those the view or the released slots
    /// add. Under a backfill view every reserved host is one of them,
    /// walked lazily too (a set's positions follow host order): a job
    /// that fits on the first hosts never looks at the rest.
    fn candidate_hosts<'a>(&'a self, job: &Job, ask: &Ask) -> impl Iterator<Item = u32> + 'a {
        debug_assert!(self.parked.is_none(), "placement with a parked reservation");
        let set = self.queues[job.queue].host_set;
        let (members, index) = &self.host_sets[set];
        debug_assert!(members.is_sorted(), "a host set in host order");
        let position = move |h: u32| self.hosts[h as usize].in_sets.iter().find(|s| s.0 == set).map(|s| s.1);
        let mut extra: SmallVec<[usize; 32]> = self
            .own_reserved_hosts(ask)
            .chain(ask.released.into_iter().flat_map(|r| r.keys().copied()))
            .filter_map(position)
            .collect();
        extra.sort_unstable();
        extra.dedup();
        let mut extra = extra.into_iter().peekable();
        let backfill = matches!(ask.view, View::Backfill { .. });
        let mut reserved =
            backfill.then(|| self.rsv_hosts.iter()).into_iter().flatten().filter_map(position).peekable();
        let mut free = index.next_free(0);
        std::iter::from_fn(move || {
            let p = [free, extra.peek().copied(), reserved.peek().copied()].into_iter().flatten().min()?;
            if free == Some(p) {
                free = index.next_free(p + 1);
            }
            if extra.peek() == Some(&p) {
                extra.next();
            }
            if reserved.peek() == Some(&p) {
                reserved.next();
            }
            Some(members[p])
        })
    }

    /// First fit in host order over [`Engine::candidate_hosts`], looking at
    /// no more hosts than it takes: a job placed without requirements,
    /// under any view. On free slots alone, the free-slot index's total
    /// says at once when too few are free.
    fn first_fit(&self, job: &Job, t: Time, ask: &Ask) -> Option<Alloc> {
        if ask.is_plain() && self.free_in(self.queues[job.queue].host_set) < u64::from(ask.min) {
            return None;
        }
        let mut need = ask.max;
        // Room for a few hosts at once, not grown host by host.
        let mut alloc = Alloc::with_capacity(ask.max.min(32) as usize);
        for h in self.candidate_hosts(job, ask) {
            let take = self.host_cap(h, job, t, ask).min(need);
            if take > 0 {
                alloc.push((h, take));
                need -= take;
                if need == 0 {
                    break;
                }
            }
        }
        (ask.max - need >= ask.min).then_some(alloc)
    }

    pub(crate) fn place_by(&self, job: &Job, res: &ResReq, t: Time, ask: &Ask) -> Option<Alloc> {
        if ask.is_plain() && self.free_in(self.queues[job.queue].host_set) < u64::from(ask.min) {
            return None;
        }
        let allowed = job.picks.as_ref().and_then(|p| p.allowed.as_ref());
        let mut hosts = self.candidates(job, t, ask, |h| {
            res.select.as_ref().is_none_or(|s| s.holds(&|n| self.host_value(h, n)))
                && allowed.is_none_or(|a| a.binary_search_by_key(&h, |x| x.0).is_ok())
        });
        if !res.order.is_empty() {
            hosts.sort_by(|a, b| {
                res.order
                    .iter()
                    .map(|k| {
                        let key = |h: u32| match self.host_value(h, &k.name) {
                            Some(Value::Num(x)) => x,
                            _ => f64::NEG_INFINITY,
                        };
                        let ord = key(b.0).total_cmp(&key(a.0));
                        let ord = if higher_is_better(&k.name) { ord } else { ord.reverse() };
                        if k.reverse { ord.reverse() } else { ord }
                    })
                    .find(|o| o.is_ne())
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        }
        if let Some(allowed) = allowed {
            // `-m name+n`: higher preference first.
            let pref = |h: u32| allowed.binary_search_by_key(&h, |x| x.0).map_or(0, |i| allowed[i].1);
            hosts.sort_by_key(|&(h, _)| std::cmp::Reverse(pref(h)));
        }
        let first = job.picks.as_ref().map_or(&[][..], |p| &p.first[..]);
        if first.is_empty() {
            return self.fit_groups(res, &hosts, ask, None);
        }
        // Each candidate that can start the job, in order, first; the other
        // candidates out.
        let others: Vec<(u32, u32)> = hosts.iter().copied().filter(|h| !first.contains(&h.0)).collect();
        hosts.iter().filter(|h| first.contains(&h.0)).find_map(|&c| {
            let list: Vec<(u32, u32)> = std::iter::once(c).chain(others.iter().copied()).collect();
            self.fit_groups(res, &list, ask, Some(c.0)).filter(|a| a.first().is_some_and(|f| f.0 == c.0))
        })
    }

    /// The job over `hosts`, within one group of its `same` values.
    /// `first`: the first execution host candidate tried, first in `hosts`.
    fn fit_groups(&self, res: &ResReq, hosts: &[(u32, u32)], ask: &Ask, first: Option<u32>) -> Option<Alloc> {
        let fit = |hosts: &[(u32, u32)]| match &res.cu {
            Some(cu) => self.place_cu(res, cu, hosts, ask.min, ask.max, first),
            None => self.shape(ask.min, ask.max, &res.span, hosts),
        };
        if res.same.is_empty() {
            return fit(hosts);
        }
        // Groups by the `same` values, in the order of their first host.
        let mut keys: std::collections::BTreeMap<Vec<String>, usize> = std::collections::BTreeMap::new();
        let mut groups: Vec<Vec<(u32, u32)>> = Vec::new();
        for &(h, cap) in hosts {
            let key: Option<Vec<String>> = res
                .same
                .iter()
                .map(|name| match self.host_value(h, name)? {
                    Value::Num(x) => Some(x.to_string()),
                    Value::Str(s) => Some(s.to_string()),
                    Value::Bool(b) => Some(b.to_string()),
                })
                .collect();
            let Some(key) = key else { continue };
            let g = *keys.entry(key).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push((h, cap));
        }
        groups.iter().find_map(|g| fit(g))
    }

    /// `min` to `max` slots over `hosts` (host, slots it can give), in
    /// order, by `span` (module docs).
    pub(crate) fn shape(&self, min: u32, max: u32, span: &Option<Span>, hosts: &[(u32, u32)]) -> Option<Alloc> {
        if matches!(span, Some(Span::OneHost)) {
            let &(h, cap) = hosts.iter().find(|&&(_, cap)| cap >= min)?;
            return Some(std::iter::once((h, cap.min(max))).collect());
        }
        let mut need = max;
        let mut alloc = Alloc::new();
        for &(h, cap) in hosts {
            let take = match self.ptile(h, span) {
                Some(0) => continue,
                Some(p) if cap < p.min(need) => continue,
                Some(p) => p.min(need),
                None => cap.min(need),
            };
            alloc.push((h, take));
            need -= take;
            if need == 0 {
                break;
            }
        }
        (max - need >= min).then_some(alloc)
    }

    /// A host's ptile under `span`: `None` when the span sets none; 0 when
    /// a per-kind ptile has no value for it (the host is not used).
    pub(crate) fn ptile(&self, h: u32, span: &Option<Span>) -> Option<u32> {
        match span {
            Some(Span::Ptile(p)) => Some(*p),
            Some(Span::PtileBy { default, values }) => {
                let a = &self.hosts[h as usize].attrs;
                let kind = |k: &Option<String>| values.iter().find(|(n, _)| Some(n) == k.as_ref()).map(|v| v.1);
                kind(&a.host_type).or_else(|| kind(&a.model)).or_else(|| {
                    // `'!'`: the host's MXJ.
                    Some(if *default { self.hosts[h as usize].slots } else { 0 })
                })
            }
            _ => None,
        }
    }

    /// What a resource requirement reads of host `h` ([`crate::resreq`]).
    pub(crate) fn host_value(&self, h: u32, name: &str) -> Option<Value<'_>> {
        let host = &self.hosts[h as usize];
        let a = &host.attrs;
        Some(match name {
            "type" => Value::Str(a.host_type.as_deref()?),
            "model" => Value::Str(a.model.as_deref()?),
            "hname" => Value::Str(&host.name),
            "ncpus" if self.config.parallel_sched_by_slot => Value::Num(f64::from(host.slots)),
            "ncpus" => Value::Num(f64::from(host.cpus)),
            "maxslots" => Value::Num(f64::from(host.slots)),
            "slots" => Value::Num(f64::from(if host.up { host.slots.saturating_sub(host.used) } else { 0 })),
            "maxmem" => Value::Num(a.maxmem? as f64),
            "mem" => {
                a.maxmem?;
                Value::Num(free_mem(host))
            }
            _ => match self.resource_left(h, name) {
                Some(left) => Value::Num(left),
                None => a.resources.get(name)?.value(),
            },
        })
    }

    /// The checks of a requirement that need the cluster: per-kind ptile
    /// values name host types or host models, not both, with `same` on
    /// that kind; `cu[...]` names a compute unit type, and `excl` only
    /// where the queue allows it.
    pub(crate) fn check_res(&self, r: &ResReq, queue: usize) -> Result<(), Rejection> {
        self.check_rusage(r)?;
        for term in &r.terms {
            self.check_res(&term.res, queue)?;
        }
        if let Some(cu) = &r.cu {
            self.check_cu(cu, queue)?;
        }
        let Some(Span::PtileBy { values, .. }) = &r.span else { return Ok(()) };
        let is = |name: &str, f: fn(&crate::model::HostAttrs) -> &Option<String>| {
            self.hosts.iter().any(|h| f(&h.attrs).as_deref() == Some(name))
        };
        let mut kinds = Vec::new();
        for (name, _) in values {
            let kind = if is(name, |a| &a.host_type) {
                "type"
            } else if is(name, |a| &a.model) {
                "model"
            } else {
                return Err(Rejection::BadResReq(format!(
                    "span[ptile]: `{name}` is no host type or model of this cluster"
                )));
            };
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        match kinds[..] {
            [kind] if !r.same.iter().any(|s| s == kind) => {
                Err(Rejection::BadResReq(format!("span[ptile] by host {kind} needs same[{kind}]")))
            }
            [_, _] => {
                Err(Rejection::BadResReq("span[ptile]: host types and host models cannot be mixed in one span".into()))
            }
            _ => Ok(()),
        }
    }
}

/// At most `cap` slots of a host where `left` remains of something a job
/// takes `amount` of (`rusage[mem]`, a site resource, a limit's room):
/// per slot (`per_slot`), as many slots as `left` holds amounts; else
/// once for the host, all of `cap` or none.
pub(crate) fn cap_by_amount(cap: u32, left: f64, amount: f64, per_slot: bool) -> u32 {
    if per_slot && amount > 0.0 {
        cap.min((left / amount).floor().max(0.0).min(f64::from(u32::MAX)) as u32)
    } else if left >= amount {
        cap
    } else {
        0
    }
}

/// MB of a host's memory neither held by running jobs nor reserved by
/// pending ones.
pub(crate) fn free_mem(host: &HostState) -> f64 {
    host.attrs.maxmem.map_or(0.0, |m| (m as f64 - host.mem_reserved - host.rsv_mem).max(0.0))
}
