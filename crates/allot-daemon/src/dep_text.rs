//! A job's dependency (`bsub -w`) as the commands show it
//! (`bjobs -o dependency`): the condition as resolved at submission, each
//! job by its number, a job array by its own number when the condition
//! names all of its elements, else each element as `number[index]`.

use std::collections::BTreeMap;

use allot_engine::{CmpOp, DepKind, Dependency, JobSet};

use crate::state::State;

/// The text of `d`.
pub(crate) fn text(state: &State, d: &Dependency<JobSet>) -> String {
    match d {
        Dependency::Cond { kind, target } => {
            let conds: Vec<String> = refs(state, target).iter().map(|r| cond(*kind, r)).collect();
            match conds.len() {
                1 => conds.into_iter().next().unwrap_or_default(),
                _ => format!("({})", conds.join(" && ")),
            }
        }
        Dependency::Not(inner) => format!("!{}", grouped(state, inner)),
        Dependency::And(all) => all.iter().map(|d| grouped(state, d)).collect::<Vec<_>>().join(" && "),
        Dependency::Or(any) => any.iter().map(|d| grouped(state, d)).collect::<Vec<_>>().join(" || "),
    }
}

/// `d`'s text, in parentheses where it joins others.
fn grouped(state: &State, d: &Dependency<JobSet>) -> String {
    match d {
        Dependency::And(_) | Dependency::Or(_) => format!("({})", text(state, d)),
        _ => text(state, d),
    }
}

fn cond(kind: DepKind, job: &str) -> String {
    match kind {
        DepKind::Done => format!("done({job})"),
        DepKind::Ended => format!("ended({job})"),
        DepKind::Started => format!("started({job})"),
        DepKind::Exit(None) => format!("exit({job})"),
        DepKind::Exit(Some((op, code))) => {
            let op = match op {
                CmpOp::Eq => "==",
                CmpOp::Ne => "!=",
                CmpOp::Lt => "<",
                CmpOp::Le => "<=",
                CmpOp::Gt => ">",
                CmpOp::Ge => ">=",
            };
            format!("exit({job},{op}{code})")
        }
    }
}

/// The jobs of `set` by number: a whole array as its number.
fn refs(state: &State, set: &JobSet) -> Vec<String> {
    let mut by_number: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for id in set.iter() {
        let r = state.book.job_ref(id);
        by_number.entry(r.id).or_default().push(r.index);
    }
    let mut out = Vec::new();
    for (number, indices) in by_number {
        let size = state.book.resolve(allot_proto::JobRef::job(number)).len();
        if indices.iter().all(|&i| i == 0) || indices.len() == size {
            out.push(number.to_string());
        } else {
            out.extend(indices.iter().map(|i| format!("{number}[{i}]")));
        }
    }
    out
}
