//! Compute units (spec 004, "Controlling Job Locality using Compute
//! Units"): `cu[type=..., pref=..., maxcus=n, balance, usablecuslots=n,
//! excl]` places a job over compute units of one type the way plain
//! placement places it over hosts.
//!
//! A unit's available slots are what its hosts can give the job now (the
//! host rules of [`crate::placement`], and the job's `select`). Units are
//! considered in configuration order (`pref=config`), fewest available
//! first (`minavail`) or most first (`maxavail`), ties in configuration
//! order; within a unit, hosts are taken in the same preference.
//!
//! - Without `balance`, units are filled in that order. With `maxcus=n`, a
//!   unit is taken only if it can carry its share of what remains,
//!   `ceil(remaining / units still allowed)` (this is what makes the spec's
//!   `-n 64 cu[maxcus=3]` pass over enclosure2's 10 free slots for
//!   enclosure1, enclosure3 and enclosure4). With `usablecuslots=u`, a unit
//!   with fewer than `u` available is not considered at all, the last one
//!   included ("Only hosts with 4 or more slots available ... are
//!   considered"); the last unit used may give fewer than `u`, when the job
//!   needs no more. (The spec's `-n 1,140 cu[usablecuslots=20]` answer ends
//!   on enclosure2, with 10 free, but its own table gives that answer no
//!   way to add up: see `tests/compute_units.rs`.)
//! - With `balance`, the job (its minimum, when `-n` is a range) goes over
//!   the fewest units (at most `maxcus`) that can each take `n / k` slots,
//!   `n % k` of them one more ("to within one slot"); the larger shares go
//!   to the first units chosen.
//! - With `excl`, only units where nothing runs are used, and while the job
//!   runs nothing else is placed on any host of the units it uses.
//!
//! Within a unit, the job's `span` shapes its share over the unit's hosts.

use crate::engine::{Alloc, Engine, Rejection};
use crate::hosts::HostState;
use crate::model::EngineConfig;
use crate::resreq::{CuPref, CuReq, ResReq, Span};

/// A compute unit: its type (an index into COMPUTE_UNIT_TYPES) and hosts.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct CuState {
    pub(crate) ty: usize,
    pub(crate) hosts: Vec<u32>,
}

/// The compute units of a configuration, with host names resolved.
pub(crate) fn build(config: &EngineConfig, hosts: &[HostState]) -> Vec<CuState> {
    config
        .compute_units
        .iter()
        .filter_map(|cu| {
            let ty = config.compute_unit_types.iter().position(|t| *t == cu.cu_type)?;
            let members = cu.hosts.iter().filter_map(|n| hosts.iter().position(|h| h.name == *n)).map(|i| i as u32);
            Some(CuState { ty, hosts: members.collect() })
        })
        .collect()
}

/// One unit as a job sees it: its hosts in preference order and the slots
/// they can give.
struct Unit {
    hosts: Vec<(u32, u32)>,
    avail: u32,
}

impl Engine {
    /// The requirement a job of `queue` is placed by: its own `-R` with
    /// its queue's RES_REQ ([`ResReq::combine`]), and a `cu[excl]` that
    /// names no type given the queue's EXCLUSIVE=CU[type]: spec 004's
    /// `bsub -R "cu[excl]"` under EXCLUSIVE=CU[rack] "requires exclusive
    /// use of a rack", where a `cu[]` without `excl` takes the default
    /// type (enclosure).
    pub(crate) fn job_res(&self, own: Option<&ResReq>, queue: usize) -> Option<ResReq> {
        let q = &self.queues[queue].spec;
        let mut res = ResReq::combine(own, q.res_req.as_ref())?;
        if let Some(cu) = res.cu.as_mut().filter(|c| c.excl && c.cu_type.is_none()) {
            cu.cu_type = q.exclusive_cu.clone();
        }
        Some(res)
    }

    /// The compute unit type a `cu[...]` asks for.
    fn cu_type(&self, cu: &CuReq) -> Option<usize> {
        let types = &self.config.compute_unit_types;
        let name = cu.cu_type.as_ref().or(self.config.default_compute_unit_type.as_ref()).or(types.first())?;
        types.iter().position(|t| t == name)
    }

    pub(crate) fn check_cu(&self, cu: &CuReq, queue: usize) -> Result<(), Rejection> {
        let Some(ty) = self.cu_type(cu) else {
            let what = cu.cu_type.as_deref().unwrap_or("(default)");
            return Err(Rejection::BadResReq(format!(
                "cu[type={what}]: no such compute unit type (COMPUTE_UNIT_TYPES)"
            )));
        };
        if cu.excl {
            let q = &self.queues[queue].spec;
            let allowed = q
                .exclusive_cu
                .as_ref()
                .and_then(|t| self.config.compute_unit_types.iter().position(|x| x == t))
                .is_some_and(|max| ty <= max);
            if !allowed {
                return Err(Rejection::BadResReq(format!(
                    "cu[excl]: queue `{}` does not allow exclusive compute units of type `{}` (EXCLUSIVE=CU[...])",
                    q.name, self.config.compute_unit_types[ty]
                )));
            }
        }
        Ok(())
    }

    /// Places `job` over compute units, from `hosts` (host, slots it can
    /// give) (module docs). With a first execution host, "the compute
    /// unit containing the first execution host is given priority": that
    /// host first, then the other hosts of its unit, then the other units
    /// in their order (spec 004, "Specifying a First Execution Host").
    pub(crate) fn place_cu(
        &self,
        res: &ResReq,
        cu: &CuReq,
        hosts: &[(u32, u32)],
        min: u32,
        max: u32,
        first: Option<u32>,
    ) -> Option<Alloc> {
        let ty = self.cu_type(cu)?;
        let mut rank = vec![u32::MAX; self.hosts.len()];
        let mut cap = vec![0u32; self.hosts.len()];
        for (i, &(h, c)) in hosts.iter().enumerate() {
            rank[h as usize] = i as u32;
            cap[h as usize] = c;
        }
        let mut units: Vec<Unit> = Vec::new();
        for unit in self.cus.iter().filter(|u| u.ty == ty) {
            if cu.excl && !unit.hosts.iter().all(|&h| idle(&self.hosts[h as usize])) {
                continue;
            }
            let mut members: Vec<(u32, u32)> =
                unit.hosts.iter().filter(|&&h| cap[h as usize] > 0).map(|&h| (h, cap[h as usize])).collect();
            members.sort_by_key(|&(h, _)| rank[h as usize]);
            prefer(&mut members, cu.pref, |m| m.1);
            if let Some(i) = first.and_then(|f| members.iter().position(|m| m.0 == f)) {
                let host = members.remove(i);
                members.insert(0, host);
            }
            let avail = self.unit_avail(&res.span, &members);
            if avail > 0 {
                units.push(Unit { hosts: members, avail });
            }
        }
        prefer(&mut units, cu.pref, |u| u.avail);
        if let Some(i) = first.and_then(|f| units.iter().position(|u| u.hosts.first().is_some_and(|m| m.0 == f))) {
            let unit = units.remove(i);
            units.insert(0, unit);
        }
        if cu.balance {
            self.balanced(min, cu, &res.span, &units)
        } else {
            self.filled(min, max, cu, &res.span, &units)
        }
    }

    /// What a unit can give under `span`: with a ptile, each host that
    /// can give the ptile gives it, and one host that cannot may end the
    /// unit's share with what it has.
    fn unit_avail(&self, span: &Option<Span>, hosts: &[(u32, u32)]) -> u32 {
        if matches!(span, Some(Span::OneHost)) {
            return hosts.iter().map(|h| h.1).max().unwrap_or(0);
        }
        let (mut full, mut last) = (0, 0);
        for &(h, c) in hosts {
            match self.ptile(h, span) {
                Some(0) => {}
                Some(p) if c >= p => full += p,
                Some(_) => last = last.max(c),
                None => full += c,
            }
        }
        full + last
    }

    /// Units filled in order (module docs).
    fn filled(&self, min: u32, max: u32, cu: &CuReq, span: &Option<Span>, units: &[Unit]) -> Option<Alloc> {
        let mut need = max;
        let mut used = 0u32;
        let mut alloc = Alloc::new();
        for unit in units {
            if cu.maxcus.is_some_and(|m| used >= m) || need == 0 {
                break;
            }
            let share_floor = cu.maxcus.map_or(1, |m| need.div_ceil(m - used));
            let last = unit.avail >= need;
            if unit.avail < share_floor && !last {
                continue;
            }
            if cu.usablecuslots.is_some_and(|u| unit.avail < u) {
                continue;
            }
            let take = unit.avail.min(need);
            let Some(part) = self.shape(take, take, span, &unit.hosts) else { continue };
            need -= take;
            used += 1;
            alloc.extend(part);
        }
        (max - need >= min).then_some(alloc)
    }

    /// The job's minimum over the fewest units, to within one slot
    /// (module docs).
    fn balanced(&self, n: u32, cu: &CuReq, span: &Option<Span>, units: &[Unit]) -> Option<Alloc> {
        let most = cu.maxcus.unwrap_or(units.len() as u32).min(n);
        for k in 1..=most {
            let (base, extra) = (n / k, (n % k) as usize);
            // Units able to take a larger share, then any able to take the
            // smaller one, each list in preference order.
            let usable = |u: &&Unit| cu.usablecuslots.is_none_or(|x| u.avail >= x.min(base));
            let big: Vec<usize> = (0..units.len()).filter(|&i| units[i].avail > base && usable(&&units[i])).collect();
            if big.len() < extra {
                continue;
            }
            let mut chosen: Vec<(usize, u32)> = big[..extra].iter().map(|&i| (i, base + 1)).collect();
            for (i, u) in units.iter().enumerate() {
                if chosen.len() == k as usize {
                    break;
                }
                if u.avail >= base && usable(&u) && !chosen.iter().any(|c| c.0 == i) {
                    chosen.push((i, base));
                }
            }
            if chosen.len() < k as usize {
                continue;
            }
            chosen.sort_by_key(|c| c.0);
            let parts: Option<Vec<Alloc>> =
                chosen.iter().map(|&(i, share)| self.shape(share, share, span, &units[i].hosts)).collect();
            if let Some(parts) = parts {
                return Some(parts.into_iter().flatten().collect());
            }
        }
        None
    }

    /// Takes (`lock`) or gives back the hosts of the compute units a
    /// `cu[excl]` job runs in.
    pub(crate) fn lock_cus(&mut self, res: Option<&ResReq>, alloc: &[(u32, u32)], lock: bool) {
        let Some(cu) = res.and_then(|r| r.cu.as_ref()).filter(|c| c.excl) else { return };
        let Some(ty) = self.cu_type(cu) else { return };
        let mut hosts: Vec<u32> = self
            .cus
            .iter()
            .filter(|u| u.ty == ty && u.hosts.iter().any(|h| alloc.iter().any(|a| a.0 == *h)))
            .flat_map(|u| u.hosts.iter().copied())
            .collect();
        hosts.sort_unstable();
        hosts.dedup();
        self.lock_hosts(&hosts, lock);
    }

    /// Closes `hosts` to every other job (`lock`), or opens them again.
    pub(crate) fn lock_hosts(&mut self, hosts: &[u32], lock: bool) {
        for &h in hosts {
            let host = &mut self.hosts[h as usize];
            let was = host.blocked();
            host.excl_locks = if lock { host.excl_locks + 1 } else { host.excl_locks.saturating_sub(1) };
            self.caches.hosts_blocked = self.caches.hosts_blocked + u32::from(host.blocked()) - u32::from(was);
        }
    }
}

/// Sorts units, or a unit's hosts, by `pref` on their available slots;
/// equals keep their order (configuration order, stable sort).
fn prefer<T>(items: &mut [T], pref: CuPref, avail: impl Fn(&T) -> u32) {
    match pref {
        CuPref::Config => {}
        CuPref::MinAvail => items.sort_by_key(avail),
        CuPref::MaxAvail => items.sort_by_key(|x| std::cmp::Reverse(avail(x))),
    }
}

/// Nothing runs on the host and no exclusive unit holds it.
fn idle(h: &HostState) -> bool {
    h.used == 0 && h.excl_locks == 0
}
