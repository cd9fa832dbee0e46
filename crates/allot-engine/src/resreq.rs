//! Resource requirements (spec 004, "Controlling Processor Allocation
//! Across Hosts", "Running Parallel Processes on Homogeneous Hosts"): what
//! `bsub -R` and a queue's RES_REQ ask of hosts, as the engine evaluates it.
//! `allot-config` parses the text; this module holds the parsed form, how a
//! job's requirement combines with its queue's, and how a `select`
//! expression and an `order` key read a host.
//!
//! The names a requirement may read of a host:
//! - `type`, `model`, `hname`: strings (`type==any` and `model==any` hold
//!   on every host);
//! - `ncpus` (CPUs; job slots with PARALLEL_SCHED_BY_SLOT=Y, as the spec's
//!   tip says), `maxslots` (MXJ), `slots` (free job slots now), `maxmem`
//!   (MB), `mem` (MB not reserved by running jobs' `rusage`);
//! - the host's own resources from the configuration: boolean (a bare name
//!   holds where the host has it), numeric and string.
//!
//! A host that lacks a resource fails every comparison on it. Strings
//! compare with `==` and `!=` only; any other comparison of strings fails.

use serde::{Deserialize, Serialize};

pub use crate::deps::CmpOp;

/// A resource requirement string, parsed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResReq {
    /// The string as written (`bjobs -l`'s "Requested Resources").
    pub text: String,
    /// `select[...]` (or the leading bare expression): hosts where it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<Expr>,
    /// `order[...]`: candidate hosts sorted by these keys, first key first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<OrderKey>,
    /// `rusage[mem=n]`: MB the job holds on each of its hosts (on each of
    /// its slots with RESOURCE_RESERVE_PER_SLOT=y).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rusage_mem: Option<f64>,
    /// `rusage[name=n]` of site-defined numeric resources (licenses,
    /// scratch space: [`crate::shared_res`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rusage: Vec<ResUse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    /// `same[a:b]`: every host of the allocation has the same value of
    /// each of these resources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub same: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cu: Option<CuReq>,
    /// A compound requirement (`2*{...} + {...}`): its terms, each for so
    /// many of the job's slots, the first execution host's first; the
    /// sections above are then empty ([`crate::placement`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<CompoundTerm>,
}

/// `rusage[name=amount:duration=d:decay=1]` of one site-defined resource:
/// held from the job's start for `duration` seconds (for its whole run
/// without), decreasing linearly to nothing over it with `decay`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResUse {
    pub name: String,
    pub amount: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub decay: bool,
}

/// One term of a compound requirement: `slots*{requirement}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompoundTerm {
    pub slots: u32,
    pub res: ResReq,
}

impl ResReq {
    /// The slots a compound requirement asks in all (`None`: simple).
    pub fn compound_slots(&self) -> Option<u32> {
        (!self.terms.is_empty()).then(|| self.terms.iter().map(|t| t.slots).sum())
    }
}

/// A `select` expression.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    /// A bare resource name: a boolean the host has, or a nonzero number.
    Name(String),
    Cmp {
        lhs: Operand,
        op: CmpOp,
        rhs: Operand,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Operand {
    /// A resource name; on the right of a comparison with a string
    /// resource, a bare word is that string (`type==LINUX`).
    Name(String),
    Num(f64),
    /// A quoted string.
    Str(String),
}

/// One `order` key: hosts best on it first; `-name` reverses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderKey {
    pub name: String,
    pub reverse: bool,
}

/// `span[...]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Span {
    /// `span[hosts=1]`: every slot on one host.
    OneHost,
    /// `span[hosts=-1]`: no span, even where the queue's RES_REQ has one.
    Any,
    /// `span[ptile=n]`: n slots on each host (the last may take fewer).
    Ptile(u32),
    /// `span[ptile='!',LINUX:2,SGI:4]`: slots per host by host type or
    /// model; with `'!'` (`default`), hosts of any other kind take their
    /// MXJ, without it they are not used.
    PtileBy { default: bool, values: Vec<(String, u32)> },
}

/// `cu[pref=...]`: the order compute units are considered in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CuPref {
    /// In the order of the ComputeUnit section (the default).
    #[default]
    Config,
    /// Fewest available slots first.
    MinAvail,
    /// Most available slots first.
    MaxAvail,
}

/// `cu[...]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CuReq {
    /// `type=`; `None` is COMPUTE_UNIT_TYPES' default type.
    pub cu_type: Option<String>,
    pub pref: CuPref,
    pub maxcus: Option<u32>,
    pub balance: bool,
    pub usablecuslots: Option<u32>,
    pub excl: bool,
}

/// A host's value of a resource, as an expression reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    Num(f64),
    Str(&'a str),
    Bool(bool),
}

/// A host resource from the configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Resource {
    Bool,
    Num(f64),
    Str(String),
}

impl Resource {
    pub fn value(&self) -> Value<'_> {
        match self {
            Resource::Bool => Value::Bool(true),
            Resource::Num(x) => Value::Num(*x),
            Resource::Str(s) => Value::Str(s),
        }
    }
}

impl Expr {
    /// Whether the expression holds on a host whose resources `lookup`
    /// reads.
    pub fn holds<'v>(&self, lookup: &dyn Fn(&str) -> Option<Value<'v>>) -> bool {
        match self {
            Expr::And(a, b) => a.holds(lookup) && b.holds(lookup),
            Expr::Or(a, b) => a.holds(lookup) || b.holds(lookup),
            Expr::Not(a) => !a.holds(lookup),
            Expr::Name(n) => match lookup(n) {
                Some(Value::Bool(b)) => b,
                Some(Value::Num(x)) => x != 0.0,
                Some(Value::Str(_)) => true,
                None => false,
            },
            Expr::Cmp { lhs, op, rhs } => compare(lhs, *op, rhs, lookup),
        }
    }
}

fn compare<'v>(lhs: &Operand, op: CmpOp, rhs: &Operand, lookup: &dyn Fn(&str) -> Option<Value<'v>>) -> bool {
    // `type==any`: every host, whatever its type (or none).
    if let (Operand::Name(l), Operand::Name(r)) = (lhs, rhs) {
        if (l == "type" || l == "model") && r == "any" {
            return matches!(op, CmpOp::Eq);
        }
    }
    let operand = |o: &Operand| -> Option<Option<f64>> {
        // Some(Some(x)): a number; Some(None): a string, read below.
        match o {
            Operand::Name(n) => match lookup(n)? {
                Value::Num(x) => Some(Some(x)),
                Value::Str(_) => Some(None),
                Value::Bool(_) => None,
            },
            Operand::Num(x) => Some(Some(*x)),
            Operand::Str(_) => Some(None),
        }
    };
    let text = |o: &Operand, bare_word: bool| -> Option<String> {
        match o {
            Operand::Name(n) if bare_word => Some(n.clone()),
            Operand::Name(n) => match lookup(n)? {
                Value::Str(s) => Some(s.to_string()),
                _ => None,
            },
            Operand::Str(s) => Some(s.clone()),
            Operand::Num(_) => None,
        }
    };
    match operand(lhs) {
        Some(Some(a)) => match operand(rhs) {
            Some(Some(b)) => op.holds(a, b),
            _ => false,
        },
        Some(None) => {
            let (Some(a), Some(b)) = (text(lhs, false), text(rhs, true)) else { return false };
            match op {
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b,
                _ => false,
            }
        }
        None => false,
    }
}

/// Whether more of a resource makes a host better for `order`: free memory,
/// CPUs, slots and numeric resources are better higher; LSF's load indices
/// (`r15s`, `r1m`, `r15m`, `ut`, `pg`, `io`, `ls`, `it`) are better lower,
/// and allot measures none of them, so they order no host before another.
pub fn higher_is_better(name: &str) -> bool {
    !matches!(name, "r15s" | "r1m" | "r15m" | "ut" | "pg" | "io" | "ls" | "it")
}

impl ResReq {
    /// The requirement a job of a queue runs under: the job's `select` and
    /// the queue's must both hold, and `same` takes both lists; the job's
    /// `order`, `rusage[mem]`, `span` and `cu` replace the queue's where the
    /// job gives them ("the queue specification is ignored if your job
    /// specifies its own locality"). `span[hosts=-1]` in the job removes
    /// the queue's span.
    pub fn combine(job: Option<&ResReq>, queue: Option<&ResReq>) -> Option<ResReq> {
        let (job, queue) = match (job, queue) {
            (None, None) => return None,
            (Some(j), None) => return Some(j.clone()),
            (None, Some(q)) => return Some(q.clone()),
            (Some(j), Some(q)) => (j, q),
        };
        // Compound (LSF's rules): a job's compound requirement takes a
        // simple queue-level one into each of its terms, and replaces a
        // compound one; a job's simple requirement replaces the queue's
        // compound one (a compound RES_REQ applies to jobs that give no
        // `-R`).
        match (job.terms.is_empty(), queue.terms.is_empty()) {
            (false, true) => {
                let terms = job
                    .terms
                    .iter()
                    .map(|t| CompoundTerm {
                        slots: t.slots,
                        res: ResReq::combine(Some(&t.res), Some(queue)).unwrap_or_default(),
                    })
                    .collect();
                return Some(ResReq { text: job.text.clone(), terms, ..ResReq::default() });
            }
            (false, false) | (true, false) => return Some(job.clone()),
            (true, true) => {}
        }
        let select = match (&job.select, &queue.select) {
            (Some(a), Some(b)) => Some(Expr::And(Box::new(a.clone()), Box::new(b.clone()))),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        let mut same = queue.same.clone();
        for s in &job.same {
            if !same.contains(s) {
                same.push(s.clone());
            }
        }
        Some(ResReq {
            text: format!("{} {}", job.text, queue.text).trim().to_string(),
            select,
            order: if job.order.is_empty() { queue.order.clone() } else { job.order.clone() },
            rusage_mem: job.rusage_mem.or(queue.rusage_mem),
            // The job's amount of a resource stands; the queue's others join.
            rusage: job
                .rusage
                .iter()
                .chain(queue.rusage.iter().filter(|q| !job.rusage.iter().any(|j| j.name == q.name)))
                .cloned()
                .collect(),
            span: job.span.clone().or_else(|| queue.span.clone()),
            same,
            cu: job.cu.clone().or_else(|| queue.cu.clone()),
            terms: Vec::new(),
        })
    }

    /// Whether placement needs more than free slots in host order.
    pub fn constrains(&self) -> bool {
        !self.terms.is_empty()
            || self.select.is_some()
            || !self.order.is_empty()
            || self.rusage_mem.is_some()
            || !self.rusage.is_empty()
            || !matches!(self.span, None | Some(Span::Any))
            || !self.same.is_empty()
            || self.cu.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> Operand {
        Operand::Name(n.into())
    }

    fn host<'a>(pairs: &'a [(&'a str, Value<'a>)]) -> impl Fn(&str) -> Option<Value<'a>> + 'a {
        move |n: &str| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| *v)
    }

    #[test]
    fn comparisons_read_the_host() {
        let h = [("type", Value::Str("LINUX")), ("mem", Value::Num(2000.0)), ("fast", Value::Bool(true))];
        let lookup = host(&h);
        let cmp = |lhs, op, rhs| Expr::Cmp { lhs, op, rhs }.holds(&lookup);
        assert!(cmp(name("type"), CmpOp::Eq, name("LINUX")));
        assert!(!cmp(name("type"), CmpOp::Eq, name("SGI")));
        assert!(cmp(name("type"), CmpOp::Ne, name("SGI")));
        assert!(cmp(name("type"), CmpOp::Eq, name("any")));
        assert!(cmp(name("model"), CmpOp::Eq, name("any")), "any holds even where the host has no model");
        assert!(cmp(name("mem"), CmpOp::Gt, Operand::Num(1000.0)));
        assert!(!cmp(name("mem"), CmpOp::Lt, Operand::Num(1000.0)));
        assert!(!cmp(name("swap"), CmpOp::Gt, Operand::Num(0.0)), "a missing resource fails");
        assert!(!cmp(name("type"), CmpOp::Lt, name("Z")), "strings compare with == and != only");
        assert!(Expr::Name("fast".into()).holds(&lookup));
        assert!(!Expr::Name("slow".into()).holds(&lookup));
    }

    #[test]
    fn a_job_requirement_combines_with_its_queue() {
        let sel = |n: &str| Some(Expr::Name(n.into()));
        let queue = ResReq {
            text: "q".into(),
            select: sel("a"),
            span: Some(Span::Ptile(4)),
            same: vec!["type".into()],
            rusage_mem: Some(100.0),
            ..ResReq::default()
        };
        let job = ResReq { text: "j".into(), select: sel("b"), span: Some(Span::Any), ..ResReq::default() };
        let r = ResReq::combine(Some(&job), Some(&queue)).expect("both");
        assert_eq!(r.select, Some(Expr::And(Box::new(Expr::Name("b".into())), Box::new(Expr::Name("a".into())))));
        assert_eq!(r.span, Some(Span::Any), "the job's span[hosts=-1] removes the queue's");
        assert_eq!(r.same, ["type"]);
        assert_eq!(r.rusage_mem, Some(100.0));
        assert_eq!(ResReq::combine(None, None), None);
        assert!(!ResReq { span: Some(Span::Any), ..ResReq::default() }.constrains());
    }
}
