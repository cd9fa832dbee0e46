//! `bsub -w` dependency expressions:
//!
//! ```text
//! expr   := and ("||" and)*
//! and    := unary ("&&" unary)*
//! unary  := "!" unary | "(" expr ")" | cond
//! cond   := ("done" | "ended" | "started") "(" target ")"
//!         | "exit" "(" target ["," [op] code] ")"
//!         | target                       (a bare target is done(target))
//! target := job id | job id "[" index "]" | job name, quoted or not
//!           (`*` matches any text; `name[index]` is one array element)
//! op     := == | != | < | <= | > | >=    (none is ==)
//! ```
//!
//! `&&` binds tighter than `||`, as in the shell. Blanks are allowed
//! between tokens. Job names are resolved by the daemon.

use winnow::ModalResult;
use winnow::ascii::{dec_int, dec_uint, multispace0};
use winnow::combinator::{alt, cut_err, delimited, opt, preceded, repeat, terminated};
use winnow::error::{StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::token::{take_till, take_while};

use allot_engine::{CmpOp, DepKind, Dependency};

use crate::lsf::values::{ValueError, parse_all};

/// A job as a condition names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DepTarget {
    Id(u64),
    /// One element of a job array: `123[4]`.
    Element(u64, u32),
    /// A job name; `*` matches any text.
    Name(String),
}

/// Parses a `-w` expression; the error has the offset of the problem.
/// Nesting deeper than [`crate::nesting::MAX_NESTING`] is refused first.
pub fn parse(text: &str) -> Result<Dependency<DepTarget>, ValueError> {
    crate::nesting::check(text, crate::nesting::MAX_NESTING)?;
    parse_all(expr, text)
}

fn expected(what: &'static str) -> StrContext {
    StrContext::Expected(StrContextValue::Description(what))
}

fn ws<'a, O>(
    p: impl Parser<&'a str, O, winnow::error::ErrMode<winnow::error::ContextError>>,
) -> impl Parser<&'a str, O, winnow::error::ErrMode<winnow::error::ContextError>> {
    delimited(multispace0, p, multispace0)
}

fn expr(input: &mut &str) -> ModalResult<Dependency<DepTarget>> {
    let first = and.parse_next(input)?;
    let rest: Vec<_> = repeat(0.., preceded(ws("||"), cut_err(and))).parse_next(input)?;
    Ok(if rest.is_empty() { first } else { Dependency::Or(std::iter::once(first).chain(rest).collect()) })
}

fn and(input: &mut &str) -> ModalResult<Dependency<DepTarget>> {
    let first = unary.parse_next(input)?;
    let rest: Vec<_> = repeat(0.., preceded(ws("&&"), cut_err(unary))).parse_next(input)?;
    Ok(if rest.is_empty() { first } else { Dependency::And(std::iter::once(first).chain(rest).collect()) })
}

fn unary(input: &mut &str) -> ModalResult<Dependency<DepTarget>> {
    ws(alt((
        preceded('!', cut_err(unary)).map(|d| Dependency::Not(Box::new(d))),
        delimited('(', cut_err(expr), cut_err(')').context(expected("`)`"))),
        cond,
    )))
    .context(expected("a condition: done(job), exit(job), ended(job), started(job), a job, `!` or `(`"))
    .parse_next(input)
}

fn cond(input: &mut &str) -> ModalResult<Dependency<DepTarget>> {
    let keyword = terminated(alt(("done", "ended", "started", "exit")), (multispace0, '('));
    if let Some(kind) = opt(keyword).parse_next(input)? {
        let target = cut_err(ws(target)).parse_next(input)?;
        let kind = match kind {
            "done" => DepKind::Done,
            "ended" => DepKind::Ended,
            "started" => DepKind::Started,
            _ => DepKind::Exit(opt(preceded(',', cut_err(ws(code)))).parse_next(input)?),
        };
        cut_err(')').context(expected("`)`")).parse_next(input)?;
        return Ok(Dependency::Cond { kind, target });
    }
    target.map(|target| Dependency::Cond { kind: DepKind::Done, target }).parse_next(input)
}

/// `==`, `!=`, `<=`, `>=`, `<` or `>`.
pub(crate) fn cmp_op(input: &mut &str) -> ModalResult<CmpOp> {
    alt((
        "==".value(CmpOp::Eq),
        "!=".value(CmpOp::Ne),
        "<=".value(CmpOp::Le),
        ">=".value(CmpOp::Ge),
        "<".value(CmpOp::Lt),
        ">".value(CmpOp::Gt),
    ))
    .parse_next(input)
}

fn code(input: &mut &str) -> ModalResult<(CmpOp, i32)> {
    let op = opt(cmp_op).parse_next(input)?;
    let n = ws(dec_int).context(expected("an exit code")).parse_next(input)?;
    Ok((op.unwrap_or(CmpOp::Eq), n))
}

fn target(input: &mut &str) -> ModalResult<DepTarget> {
    alt((
        terminated((dec_uint, '[', dec_uint, ']'), winnow::combinator::not(take_while(1, name_char)))
            .map(|(id, _, index, _)| DepTarget::Element(id, index)),
        terminated(dec_uint, winnow::combinator::not(take_while(1, name_char))).map(DepTarget::Id),
        delimited('"', take_till(1.., '"'), cut_err('"').context(expected("a closing `\"`")))
            .map(|n: &str| DepTarget::Name(n.to_string())),
        take_while(1.., name_char).map(|n: &str| DepTarget::Name(n.to_string())),
    ))
    .context(expected("a job id or name"))
    .parse_next(input)
}

/// `*` matches any run of characters; everything else itself.
pub fn name_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || !name[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Characters of an unquoted job name.
fn name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '*' | '[' | ']' | '/' | '@' | ':' | '+')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(id: u64) -> Dependency<DepTarget> {
        Dependency::Cond { kind: DepKind::Done, target: DepTarget::Id(id) }
    }

    fn cond(kind: DepKind, t: DepTarget) -> Dependency<DepTarget> {
        Dependency::Cond { kind, target: t }
    }

    #[test]
    fn each_condition() {
        assert_eq!(parse("done(12)"), Ok(done(12)));
        assert_eq!(parse("12"), Ok(done(12)), "a bare job is done(job)");
        assert_eq!(parse(" ended( 3 ) "), Ok(cond(DepKind::Ended, DepTarget::Id(3))));
        assert_eq!(parse("started(prep*)"), Ok(cond(DepKind::Started, DepTarget::Name("prep*".into()))));
        assert_eq!(parse("done(\"my job\")"), Ok(cond(DepKind::Done, DepTarget::Name("my job".into()))));
        assert_eq!(parse("exit(7)"), Ok(cond(DepKind::Exit(None), DepTarget::Id(7))));
        assert_eq!(parse("exit(7, >2)"), Ok(cond(DepKind::Exit(Some((CmpOp::Gt, 2))), DepTarget::Id(7))));
        assert_eq!(parse("exit(7,3)"), Ok(cond(DepKind::Exit(Some((CmpOp::Eq, 3))), DepTarget::Id(7))));
        assert_eq!(parse("exit(7, != 1)"), Ok(cond(DepKind::Exit(Some((CmpOp::Ne, 1))), DepTarget::Id(7))));
        assert_eq!(parse("done12x"), Ok(cond(DepKind::Done, DepTarget::Name("done12x".into()))));
        assert_eq!(parse("done(12[3])"), Ok(cond(DepKind::Done, DepTarget::Element(12, 3))));
        assert_eq!(parse("ended(arr[3])"), Ok(cond(DepKind::Ended, DepTarget::Name("arr[3]".into()))));
    }

    #[test]
    fn and_binds_tighter_than_or_and_parentheses_group() {
        let (a, b, c) = (done(1), done(2), done(3));
        assert_eq!(
            parse("1 && 2 || 3"),
            Ok(Dependency::Or(vec![Dependency::And(vec![a.clone(), b.clone()]), c.clone()]))
        );
        assert_eq!(parse("1 && (2 || 3)"), Ok(Dependency::And(vec![a.clone(), Dependency::Or(vec![b, c])])));
        assert_eq!(parse("!done(1)"), Ok(Dependency::Not(Box::new(a.clone()))));
        assert_eq!(parse("!!1"), Ok(Dependency::Not(Box::new(Dependency::Not(Box::new(a))))));
    }

    #[test]
    fn errors_say_where() {
        let err = |s: &str| parse(s).expect_err(s);
        assert_eq!(err("done(12").offset, 7);
        assert!(err("done(12").message.contains("`)`"), "{}", err("done(12").message);
        assert_eq!(err("1 &&").offset, 4);
        assert_eq!(err("1 & 2").offset, 2);
        assert_eq!(err("done()").offset, 5);
        assert_eq!(err("exit(3, >)").offset, 9);
        assert_eq!(err("(1 || 2").offset, 7);
        assert_eq!(err("").offset, 0);
    }
}
