//! Compound resource requirements (spec 004, "Compound resource
//! requirements"): `1*{select[type==X86_64]} + 4*{select[type==any]}`
//! gives different requirements to parts of one parallel job.
//!
//! The terms are placed in order, each as a job of its slots with its own
//! requirement (select, order, span, same, rusage), on what the earlier
//! terms left of each host: a host may serve several terms. The first
//! term's first host is the job's first execution host, so the first
//! execution host candidates (`-m "hostA!"`, a queue's `HOSTS = host!`)
//! bind the first term alone, as the spec has "the resource requirements
//! specific to the first execution host ... first".
//!
//! The job's allocation keeps one entry per term and host, in term order
//! (a host serving two terms appears twice), so that each term's
//! `rusage[mem]` is held on its own hosts; what leaves the engine names
//! each host once ([`crate::engine::Decision::Start`]).
//!
//! A placement that may take part of the job (a reservation's) takes what
//! each term can have, the first term's before the next's.

use std::sync::Arc;

use smallvec::SmallVec;

use crate::engine::{Alloc, Engine, Job};
use crate::reserve::Ask;
use crate::resreq::ResReq;
use crate::time::Time;

impl Engine {
    /// Places a compound requirement's terms (module docs).
    pub(crate) fn place_compound(&self, job: &Job, res: &ResReq, t: Time, ask: &Ask) -> Option<Alloc> {
        let total: u32 = res.terms.iter().map(|term| term.slots).sum();
        let whole = ask.min >= total;
        let mut taken = ask.taken.cloned().unwrap_or_default();
        let mut alloc = Alloc::new();
        let mut left = ask.max;
        for (i, term) in res.terms.iter().enumerate() {
            let n = term.slots.min(left);
            if n == 0 {
                break;
            }
            let mut part = job.clone();
            part.res = Some(Arc::new(term.res.clone()));
            (part.slots, part.max_slots) = (n, n);
            if i > 0 {
                part.picks = job
                    .picks
                    .as_ref()
                    .map(|p| Arc::new(crate::placement::Picks { first: Vec::new(), ..(**p).clone() }));
            }
            let part_ask = Ask { min: if whole { n } else { 0 }, max: n, taken: Some(&taken), ..*ask };
            let Some(got) = self.place_by(&part, &term.res, t, &part_ask) else {
                if whole {
                    return None;
                }
                continue;
            };
            for &(h, k) in &got {
                *taken.entry(h).or_default() += k;
                left -= k;
            }
            alloc.extend(got);
        }
        let placed = ask.max - left;
        (placed >= ask.min).then_some(alloc)
    }

    /// MB each entry of `alloc` holds under `res`'s `rusage[mem]`: per host
    /// (or per slot), and for a compound requirement each term's on the
    /// entries of its slots, in order (module docs).
    pub(crate) fn rusage_by_entry(&self, res: Option<&ResReq>, alloc: &[(u32, u32)]) -> SmallVec<[f64; 2]> {
        // Most jobs ask no memory: nothing to look up, nothing allocated.
        let asks = |r: &ResReq| r.rusage_mem.is_some() || r.terms.iter().any(|t| t.res.rusage_mem.is_some());
        let Some(res) = res.filter(|r| asks(r)) else { return SmallVec::from_elem(0.0, alloc.len()) };
        alloc
            .iter()
            .zip(entry_terms(res, alloc))
            .map(|(&(_, n), r)| self.rusage_on_host(r.rusage_mem.unwrap_or(0.0), n))
            .collect()
    }
}

/// The requirement each entry of `alloc` is placed under: `res` itself,
/// or for a compound requirement the term whose slots the entry holds
/// (the terms' slots in order, as placement gives them).
pub(crate) fn entry_terms<'a>(res: &'a ResReq, alloc: &[(u32, u32)]) -> Vec<&'a ResReq> {
    if res.terms.is_empty() {
        return vec![res; alloc.len()];
    }
    let mut terms = res.terms.iter();
    let mut term = terms.next();
    let mut left = term.map_or(0, |x| x.slots);
    alloc
        .iter()
        .map(|&(_, n)| {
            let r = term.map_or(res, |x| &x.res);
            left = left.saturating_sub(n);
            if left == 0 {
                term = terms.next();
                left = term.map_or(u32::MAX, |x| x.slots);
            }
            r
        })
        .collect()
}

/// An allocation with each host once, at its first place, its slots
/// summed: what a compound requirement's allocation is outside the engine.
pub(crate) fn merged(alloc: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(alloc.len());
    for &(h, n) in alloc {
        match out.iter_mut().find(|e| e.0 == h) {
            Some(e) => e.1 += n,
            None => out.push((h, n)),
        }
    }
    out
}
