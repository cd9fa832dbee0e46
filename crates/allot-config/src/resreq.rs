//! Resource requirement strings (`bsub -R`, a queue's RES_REQ; spec 004):
//!
//! ```text
//! resreq  := [expr] section*            (a leading bare expression is select)
//! section := "select" "[" expr "]"      (several select sections all hold)
//!          | "order" "[" key (":" key)* "]"          key := ["-"] name
//!          | "rusage" "[" usage ("," usage)* "]"
//! usage   := item (":" item)*
//! item    := name "=" amount | "duration=" n ["m"|"h"] | "decay=" ("0"|"1")
//!                                        amount := number [KB|MB|GB|TB]
//!          | "span" "[" ("hosts=1" | "hosts=-1" | "ptile=" ptile) "]"
//!          | "same" "[" name (":" name)* "]"
//!          | "cu" "[" cukey (":" cukey)* "]"
//! ptile   := n | ("'!'" | kind ":" n) ("," kind ":" n)*
//! cukey   := "type=" name | "pref=" ("config"|"minavail"|"maxavail")
//!          | "maxcus=" n | "balance" | "usablecuslots=" n | "excl"
//! expr    := and ("||" and)*
//! and     := unary ("&&" unary)*
//! unary   := "!" unary | "(" expr ")" | operand [op operand]
//! op      := "==" | "=" | "!=" | ">=" | "<=" | ">" | "<"
//! operand := number [KB|MB|GB|TB] | "'" text "'" | "\"" text "\"" | name
//! ```
//!
//! A compound requirement gives different requirements to parts of a
//! parallel job, the first execution host's first:
//!
//! ```text
//! compound := term ("+" term)*           term := [n "*"] "{" resreq "}"
//! ```
//!
//! A term without `n*` is for 1 slot; the job's slots are the terms' sum
//! (`-n`, if given, must be that sum). `cu[]` is not supported within a
//! term.
//!
//! Blanks may separate tokens. `order`, `rusage`, `span`, `same` and `cu`
//! may each be given once. `rusage` reserves memory (`mem`, MB unless a
//! unit says otherwise) and site-defined numeric resources (a license,
//! scratch space); `duration` (minutes, or with `h` hours) and `decay`
//! apply to the site's resources of their usage string, `mem` being held
//! for the whole run. A resource named twice, or `||` alternatives, is
//! an error. `same[type:model]` with `ptile='!'` is refused, as the spec
//! says. Errors carry the byte offset where the string went wrong.

use winnow::ModalResult;
use winnow::ascii::{dec_uint, float, multispace0};
use winnow::combinator::{alt, cut_err, delimited, opt, preceded, repeat, separated, terminated};
use winnow::error::{ContextError, ErrMode, StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::stream::Stream;
use winnow::token::{one_of, take_till, take_while};

use allot_engine::resreq::{CmpOp, CompoundTerm, CuPref, CuReq, Expr, Operand, OrderKey, ResReq, ResUse, Span};

use crate::lsf::values::{ValueError, parse_all};

/// Parses a resource requirement string; the error has the offset of the
/// problem.
/// Nesting deeper than [`crate::nesting::MAX_NESTING`] is refused first.
pub fn parse(text: &str) -> Result<ResReq, ValueError> {
    crate::nesting::check(text, crate::nesting::MAX_NESTING)?;
    if term_head.parse_peek(text).is_ok() {
        return compound(text);
    }
    let mut r = parse_all(resreq, text)?;
    r.text = text.trim().to_string();
    Ok(r)
}

/// The start of a compound requirement's term: blanks, `n*` or not, `{`;
/// the slots it is for.
fn term_head(input: &mut &str) -> ModalResult<u32> {
    let (_, n, _) = (multispace0, opt(terminated(dec_uint::<_, u32, _>, (multispace0, '*', multispace0))), '{')
        .parse_next(input)?;
    Ok(n.unwrap_or(1))
}

/// A compound requirement (module docs); each term's errors at their
/// offset in the whole string.
fn compound(text: &str) -> Result<ResReq, ValueError> {
    let at = |rest: &str| text.len() - rest.len();
    let error = |offset: usize, message: &str| ValueError { offset, message: message.to_string() };
    let mut terms = Vec::new();
    let mut rest = text;
    loop {
        let start = at(rest) + (rest.len() - rest.trim_start().len());
        let Ok(slots) = term_head.parse_next(&mut rest) else {
            return Err(error(start, "expected a term of a compound requirement: `n*{...}` or `{...}`"));
        };
        if slots == 0 {
            return Err(error(start, "expected a term of at least 1 slot"));
        }
        let offset = at(rest);
        let inner: &str = take_till::<_, _, ContextError>(0.., '}').parse_next(&mut rest).unwrap_or_default();
        if !rest.starts_with('}') {
            return Err(error(at(rest), "expected `}` to end the term"));
        }
        let mut res = parse_all(resreq, inner).map_err(|e| ValueError { offset: e.offset + offset, ..e })?;
        if res.cu.is_some() {
            return Err(error(offset, "a compound requirement's terms take no cu[] section"));
        }
        res.text = inner.trim().to_string();
        terms.push(CompoundTerm { slots, res });
        rest = rest[1..].trim_start();
        if rest.is_empty() {
            break;
        }
        match rest.strip_prefix('+') {
            Some(next) => rest = next,
            None => return Err(error(at(rest), "expected `+` and another term, or the end")),
        }
    }
    Ok(ResReq { text: text.trim().to_string(), terms, ..ResReq::default() })
}

/// Several `-R` options: one requirement, as if written one after another.
pub fn parse_all_of(texts: &[String]) -> Result<Option<ResReq>, (usize, ValueError)> {
    if texts.is_empty() {
        return Ok(None);
    }
    let joined = texts.join(" ");
    parse(&joined).map(Some).map_err(|e| {
        // Which -R it was in, and the offset within it.
        let mut start = 0;
        for (i, t) in texts.iter().enumerate() {
            if e.offset <= start + t.len() || i + 1 == texts.len() {
                return (i, ValueError { offset: e.offset.saturating_sub(start), message: e.message });
            }
            start += t.len() + 1;
        }
        (0, e)
    })
}

fn expected(what: &'static str) -> StrContext {
    StrContext::Expected(StrContextValue::Description(what))
}

fn ws<'a, O>(p: impl Parser<&'a str, O, ErrMode<ContextError>>) -> impl Parser<&'a str, O, ErrMode<ContextError>> {
    delimited(multispace0, p, multispace0)
}

/// Fails at the current position, saying what was expected.
fn fail_here<O>(label: &'static str, what: &'static str) -> ModalResult<O> {
    let mut e = ContextError::new();
    e.push(StrContext::Label(label));
    e.push(expected(what));
    Err(ErrMode::Cut(e))
}

/// Fails at `at`, saying what was expected there.
fn fail_at<'a, O>(
    input: &mut &'a str,
    at: &<&'a str as Stream>::Checkpoint,
    label: &'static str,
    what: &'static str,
) -> ModalResult<O> {
    input.reset(at);
    fail_here(label, what)
}

enum Section {
    Select(Expr),
    Order(Vec<OrderKey>),
    Rusage((Option<f64>, Vec<ResUse>)),
    Span(Span),
    Same(Vec<String>),
    Cu(CuReq),
}

fn resreq(input: &mut &str) -> ModalResult<ResReq> {
    let mut r = ResReq::default();
    let mut selects: Vec<Expr> = Vec::new();
    let _ = multispace0.parse_next(input)?;
    if opt(section_start).parse_peek(*input)?.1.is_none() && !input.is_empty() {
        selects.push(expr.parse_next(input)?);
    }
    loop {
        let _ = multispace0.parse_next(input)?;
        if input.is_empty() {
            break;
        }
        let at = input.checkpoint();
        let Some(name) = opt(section_start).parse_next(input)? else {
            return fail_here("resource requirement", "a section: select, order, rusage, span, same or cu");
        };
        let section = match name {
            "select" => Section::Select(cut_err(ws(expr)).parse_next(input)?),
            "order" => Section::Order(cut_err(ws(order)).parse_next(input)?),
            "rusage" => Section::Rusage(cut_err(ws(rusage)).parse_next(input)?),
            "span" => Section::Span(cut_err(ws(span)).parse_next(input)?),
            "same" => Section::Same(cut_err(ws(names)).parse_next(input)?),
            _ => Section::Cu(cut_err(ws(cu)).parse_next(input)?),
        };
        cut_err(']').context(expected("`]`")).parse_next(input)?;
        let twice = match section {
            Section::Select(e) => {
                selects.push(e);
                false
            }
            Section::Order(k) => !std::mem::replace(&mut r.order, k).is_empty(),
            Section::Rusage((m, uses)) => {
                let twice = r.rusage_mem.is_some() || !r.rusage.is_empty();
                (r.rusage_mem, r.rusage) = (m, uses);
                twice
            }
            Section::Span(s) => r.span.replace(s).is_some(),
            Section::Same(n) => !std::mem::replace(&mut r.same, n).is_empty(),
            Section::Cu(c) => r.cu.replace(c).is_some(),
        };
        if twice {
            return fail_at(
                input,
                &at,
                "resource requirement",
                "each of order, rusage, span, same and cu at most once",
            );
        }
    }
    r.select = selects.into_iter().reduce(|a, b| Expr::And(Box::new(a), Box::new(b)));
    if matches!(r.span, Some(Span::PtileBy { default: true, .. }))
        && r.same.iter().any(|s| s == "type")
        && r.same.iter().any(|s| s == "model")
    {
        return fail_here("span", "no ptile='!' with same[type:model]");
    }
    Ok(r)
}

/// A section keyword and its `[`.
fn section_start<'a>(input: &mut &'a str) -> ModalResult<&'a str> {
    terminated(alt(("select", "order", "rusage", "span", "same", "cu")), (multispace0, '[')).parse_next(input)
}

fn name<'a>(input: &mut &'a str) -> ModalResult<&'a str> {
    (one_of(|c: char| c.is_ascii_alphanumeric() || c == '_'), take_while(0.., name_char))
        .take()
        .context(expected("a name"))
        .parse_next(input)
}

fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

fn names(input: &mut &str) -> ModalResult<Vec<String>> {
    separated(1.., ws(name).map(str::to_string), ':').parse_next(input)
}

fn expr(input: &mut &str) -> ModalResult<Expr> {
    let first = and.parse_next(input)?;
    let rest: Vec<Expr> = repeat(0.., preceded(ws("||"), cut_err(and))).parse_next(input)?;
    Ok(rest.into_iter().fold(first, |a, b| Expr::Or(Box::new(a), Box::new(b))))
}

fn and(input: &mut &str) -> ModalResult<Expr> {
    let first = unary.parse_next(input)?;
    let rest: Vec<Expr> = repeat(0.., preceded(ws("&&"), cut_err(unary))).parse_next(input)?;
    Ok(rest.into_iter().fold(first, |a, b| Expr::And(Box::new(a), Box::new(b))))
}

fn unary(input: &mut &str) -> ModalResult<Expr> {
    ws(alt((
        preceded(('!', winnow::combinator::not('=')), cut_err(unary)).map(|e| Expr::Not(Box::new(e))),
        delimited('(', cut_err(expr), cut_err(')').context(expected("`)`"))),
        comparison,
    )))
    .context(expected("a condition: a resource, a comparison, `!` or `(`"))
    .parse_next(input)
}

fn comparison(input: &mut &str) -> ModalResult<Expr> {
    let lhs = operand.parse_next(input)?;
    let Some(op) = opt(ws(cmp_op)).parse_next(input)? else {
        return match lhs {
            Operand::Name(n) => Ok(Expr::Name(n)),
            _ => fail_here("select", "a comparison after a value"),
        };
    };
    let rhs = cut_err(operand).parse_next(input)?;
    Ok(Expr::Cmp { lhs, op, rhs })
}

/// The comparisons of `-w`, and `=` for `==` (the spec writes
/// `hgconnect=hg3`).
fn cmp_op(input: &mut &str) -> ModalResult<CmpOp> {
    alt((crate::deps::cmp_op, "=".value(CmpOp::Eq))).parse_next(input)
}

/// A size unit after a number, as a factor to MB: `select[mem>100MB]`
/// compares in MB, the unit of `mem`, `swp` and `tmp`, as LSF reads it
/// (`2GB` is 2048); `rusage[mem=...]` takes the same units.
fn size_unit(input: &mut &str) -> ModalResult<f64> {
    let unit = alt(("KB", "K", "MB", "M", "GB", "G", "TB", "T")).parse_next(input)?;
    Ok(match &unit[..1] {
        "K" => 1.0 / 1024.0,
        "G" => 1024.0,
        "T" => 1024.0 * 1024.0,
        _ => 1.0,
    })
}

fn operand(input: &mut &str) -> ModalResult<Operand> {
    alt((
        terminated((float, size_unit), winnow::combinator::not(one_of(name_char)))
            .map(|(n, scale): (f64, f64)| Operand::Num(n * scale)),
        terminated(float, winnow::combinator::not(one_of(name_char))).map(Operand::Num),
        delimited('\'', take_till(0.., '\''), cut_err('\'').context(expected("a closing `'`")))
            .map(|s: &str| Operand::Str(s.to_string())),
        delimited('"', take_till(0.., '"'), cut_err('"').context(expected("a closing `\"`")))
            .map(|s: &str| Operand::Str(s.to_string())),
        name.map(|n| Operand::Name(n.to_string())),
    ))
    .context(expected("a resource name, a number or a quoted string"))
    .parse_next(input)
}

fn order(input: &mut &str) -> ModalResult<Vec<OrderKey>> {
    separated(
        1..,
        ws((opt('-'), name))
            .map(|(minus, n): (Option<char>, &str)| OrderKey { name: n.to_string(), reverse: minus.is_some() }),
        ':',
    )
    .parse_next(input)
}

/// An `rusage` section's usage strings: MB of `mem`, and the
/// site-defined resources with their duration and decay.
fn rusage(input: &mut &str) -> ModalResult<(Option<f64>, Vec<ResUse>)> {
    let start = input.checkpoint();
    let mut mem: Option<f64> = None;
    let mut uses: Vec<ResUse> = Vec::new();
    loop {
        let (m, mut group, duration, decay) = usage_string(input)?;
        if m.is_some() && mem.replace(m.unwrap_or(0.0)).is_some() {
            return fail_at(input, &start, "rusage", "each resource at most once");
        }
        for u in &mut group {
            (u.duration, u.decay) = (duration, decay && duration.is_some());
        }
        if group.iter().any(|u| uses.iter().any(|x| x.name == u.name)) {
            return fail_at(input, &start, "rusage", "each resource at most once");
        }
        uses.extend(group);
        if opt(ws(',')).parse_next(input)?.is_none() {
            break;
        }
    }
    if ws("||").parse_peek(*input).is_ok() {
        return fail_here("rusage", "one usage string (allot takes no `||` alternatives)");
    }
    Ok((mem, uses))
}

/// One usage string: `name=amount` items, `duration=` and `decay=`,
/// separated by `:`.
#[allow(clippy::type_complexity)]
fn usage_string(input: &mut &str) -> ModalResult<(Option<f64>, Vec<ResUse>, Option<u64>, bool)> {
    let (mut mem, mut uses, mut duration, mut decay) = (None, Vec::new(), None, false);
    loop {
        let at = input.checkpoint();
        let key = ws(name).context(expected("a resource name")).parse_next(input)?;
        let _ = cut_err(ws('=')).context(expected("`=`")).parse_next(input)?;
        match key {
            "duration" => {
                let n: u64 = cut_err(dec_uint).context(expected("a duration in minutes")).parse_next(input)?;
                let unit = opt(alt(('h', 'm'))).parse_next(input)?;
                duration = Some(if unit == Some('h') { n * 3600 } else { n * 60 });
            }
            "decay" => {
                decay = cut_err(alt(('0'.value(false), '1'.value(true))))
                    .context(expected("decay=0 or decay=1"))
                    .parse_next(input)?;
            }
            _ => {
                let amount: f64 = cut_err(float).context(expected("an amount")).parse_next(input)?;
                let scale = if key == "mem" { opt(size_unit).parse_next(input)?.unwrap_or(1.0) } else { 1.0 };
                if !(amount >= 0.0 && amount.is_finite()) {
                    return fail_at(input, &at, "rusage", "an amount of 0 or more");
                }
                if key == "mem" {
                    if mem.replace(amount * scale).is_some() {
                        return fail_at(input, &at, "rusage", "each resource at most once");
                    }
                } else if uses.iter().any(|u: &ResUse| u.name == key) {
                    return fail_at(input, &at, "rusage", "each resource at most once");
                } else {
                    uses.push(ResUse { name: key.to_string(), amount, duration: None, decay: false });
                }
            }
        }
        if opt(ws(':')).parse_next(input)?.is_none() {
            break;
        }
    }
    Ok((mem, uses, duration, decay))
}

fn span(input: &mut &str) -> ModalResult<Span> {
    let key = alt(("hosts", "ptile")).context(expected("hosts= or ptile=")).parse_next(input)?;
    let _ = cut_err(ws('=')).context(expected("`=`")).parse_next(input)?;
    if key == "hosts" {
        return cut_err(alt(("1".value(Span::OneHost), "-1".value(Span::Any))))
            .context(StrContext::Label("span"))
            .context(expected("hosts=1 or hosts=-1"))
            .parse_next(input);
    }
    if let Some(n) = opt(terminated(dec_uint::<_, u32, _>, winnow::combinator::not(':'))).parse_next(input)? {
        if n == 0 {
            return fail_here("span", "a ptile of at least 1");
        }
        return Ok(Span::Ptile(n));
    }
    let default = opt(terminated(alt(("'!'", "!")), opt(ws(',')))).parse_next(input)?.is_some();
    let values: Vec<(String, u32)> = separated(
        0..,
        ws((name, cut_err(':'), cut_err(dec_uint).context(expected("slots per host"))))
            .map(|(n, _, v): (&str, char, u32)| (n.to_string(), v)),
        ',',
    )
    .parse_next(input)?;
    if !default && values.is_empty() {
        return fail_here("span", "ptile=n, ptile='!' or ptile=kind:n");
    }
    if values.iter().any(|v| v.1 == 0) {
        return fail_here("span", "a ptile of at least 1");
    }
    Ok(Span::PtileBy { default, values })
}

fn cu(input: &mut &str) -> ModalResult<CuReq> {
    let mut c = CuReq::default();
    if input.trim_start().starts_with(']') {
        return Ok(c);
    }
    loop {
        let key = ws(alt(("type", "pref", "maxcus", "balance", "usablecuslots", "excl")))
            .context(expected("type, pref, maxcus, balance, usablecuslots or excl"))
            .parse_next(input)?;
        let has_value = opt(ws('=')).parse_next(input)?.is_some();
        let at = input.checkpoint();
        let value = if has_value { Some(cut_err(name).parse_next(input)?) } else { None };
        let number = value.and_then(|v| v.parse::<u32>().ok()).filter(|&n| n > 0);
        match (key, value) {
            ("type", Some(t)) => c.cu_type = Some(t.to_string()),
            ("pref", Some("config")) => c.pref = CuPref::Config,
            ("pref", Some("minavail")) => c.pref = CuPref::MinAvail,
            ("pref", Some("maxavail")) => c.pref = CuPref::MaxAvail,
            ("pref", _) => fail_at(input, &at, "cu", "pref=config, pref=minavail or pref=maxavail")?,
            ("maxcus", _) if number.is_some() => c.maxcus = number,
            ("maxcus", _) => fail_at(input, &at, "cu", "maxcus=n, n >= 1")?,
            ("usablecuslots", _) if number.is_some() => c.usablecuslots = number,
            ("usablecuslots", _) => fail_at(input, &at, "cu", "usablecuslots=n, n >= 1")?,
            ("balance", None) => c.balance = true,
            ("excl", None) => c.excl = true,
            ("type", None) => fail_at(input, &at, "cu", "type=name")?,
            _ => fail_at(input, &at, "cu", "no value after balance or excl")?,
        }
        if opt(ws(':')).parse_next(input)?.is_none() {
            return Ok(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> Operand {
        Operand::Name(n.into())
    }

    fn cmp(l: &str, op: CmpOp, r: Operand) -> Expr {
        Expr::Cmp { lhs: name(l), op, rhs: r }
    }

    fn or(a: Expr, b: Expr) -> Expr {
        Expr::Or(Box::new(a), Box::new(b))
    }

    fn and(a: Expr, b: Expr) -> Expr {
        Expr::And(Box::new(a), Box::new(b))
    }

    #[test]
    fn compound_requirements_parse_term_by_term() {
        // The spec's (spec 004, "Compound resource requirements"), with
        // memory where it has a license allot does not track.
        let r = parse("1*{select[type==X86_64]rusage[mem=100]} + {select[type==any]}").expect("parses");
        assert_eq!(r.compound_slots(), Some(2), "a term without n* is for 1 slot");
        assert_eq!(r.terms[0].slots, 1);
        assert_eq!(r.terms[0].res.select, Some(cmp("type", CmpOp::Eq, name("X86_64"))));
        assert_eq!(
            (r.terms[0].res.rusage_mem, r.terms[0].res.text.as_str()),
            (Some(100.0), "select[type==X86_64]rusage[mem=100]")
        );
        assert_eq!(r.terms[1].res.select, Some(cmp("type", CmpOp::Eq, name("any"))));
        assert!(r.select.is_none() && r.constrains());
        let r = parse(" 2 * {span[ptile=2]} + 4*{same[type]}").expect("parses");
        assert_eq!(r.compound_slots(), Some(6));
        assert_eq!(r.terms[0].res.span, Some(Span::Ptile(2)));
        // Errors at their place in the whole string.
        let e = parse("2*{select[type==X86_64} + {}").expect_err("unclosed");
        assert_eq!(e.offset, 22, "{e:?}");
        let e = parse("2*{select[a]} + 3*{span[ptile=0]}").expect_err("bad ptile");
        assert_eq!(e.offset, 31, "{e:?}");
        let e = parse("2*{select[a]} {select[b]}").expect_err("no plus");
        assert_eq!((e.offset, e.message.as_str()), (14, "expected `+` and another term, or the end"));
        let e = parse("0*{select[a]}").expect_err("no slots");
        assert_eq!((e.offset, e.message.as_str()), (0, "expected a term of at least 1 slot"));
        let e = parse("2*{select[a] + {select[b]}").expect_err("unclosed");
        assert!(e.message.contains("`}`") || e.offset > 0, "{e:?}");
        let e = parse("{cu[type=rack]}").expect_err("cu");
        assert_eq!((e.offset, e.message.as_str()), (1, "a compound requirement's terms take no cu[] section"));
    }

    #[test]
    fn the_spec_examples_parse() {
        let r = parse("select[type==SGI6 || type==SOL7] same[type]").expect("parses");
        assert_eq!(r.select, Some(or(cmp("type", CmpOp::Eq, name("SGI6")), cmp("type", CmpOp::Eq, name("SOL7")))));
        assert_eq!(r.same, ["type"]);

        let r = parse("type==any same[type] span[ptile='!',LINUX:2,SGI:4]").expect("parses");
        assert_eq!(r.select, Some(cmp("type", CmpOp::Eq, name("any"))));
        assert_eq!(r.span, Some(Span::PtileBy { default: true, values: vec![("LINUX".into(), 2), ("SGI".into(), 4)] }));

        let r = parse("same[type:model] span[ptile=PC233:2,PC1133:4]").expect("parses");
        assert_eq!(r.same, ["type", "model"]);
        assert_eq!(
            r.span,
            Some(Span::PtileBy { default: false, values: vec![("PC233".into(), 2), ("PC1133".into(), 4)] })
        );

        let r = parse(
            "select[mem > 1000 && type==any && (hgconnect==hg1 || \nhgconnect==hg2 || hgconnect=hg3)]same[hgconnect:type]",
        )
        .expect("parses");
        let groups = or(
            or(cmp("hgconnect", CmpOp::Eq, name("hg1")), cmp("hgconnect", CmpOp::Eq, name("hg2"))),
            cmp("hgconnect", CmpOp::Eq, name("hg3")),
        );
        assert_eq!(
            r.select,
            Some(and(and(cmp("mem", CmpOp::Gt, Operand::Num(1000.0)), cmp("type", CmpOp::Eq, name("any"))), groups))
        );
        assert_eq!(r.same, ["hgconnect", "type"]);

        assert_eq!(parse("span[hosts=1]").expect("parses").span, Some(Span::OneHost));
        assert_eq!(parse("span[hosts=-1]").expect("parses").span, Some(Span::Any));
        assert_eq!(parse("span[ptile=3]").expect("parses").span, Some(Span::Ptile(3)));
        assert_eq!(parse("rusage[mem=500]").expect("parses").rusage_mem, Some(500.0));
        assert_eq!(parse("rusage[mem=2GB]").expect("parses").rusage_mem, Some(2048.0));
        // A size in a select compares in MB, as LSF reads it.
        for (text, mb) in [("mem>100MB", 100.0), ("mem>2GB", 2048.0), ("mem > 512KB", 0.5), ("mem>=1T", 1048576.0)] {
            assert_eq!(
                parse(&format!("select[{text}]")).expect("parses").select,
                Some(cmp("mem", if text.contains(">=") { CmpOp::Ge } else { CmpOp::Gt }, Operand::Num(mb))),
                "{text}"
            );
        }
        assert_eq!(
            parse("order[-slots:maxmem]").expect("parses").order,
            [OrderKey { name: "slots".into(), reverse: true }, OrderKey { name: "maxmem".into(), reverse: false }]
        );
        let c = parse("cu[type=rack:pref=minavail:maxcus=2:balance:usablecuslots=4:excl]").expect("parses").cu;
        assert_eq!(
            c,
            Some(CuReq {
                cu_type: Some("rack".into()),
                pref: CuPref::MinAvail,
                maxcus: Some(2),
                balance: true,
                usablecuslots: Some(4),
                excl: true
            })
        );
        assert_eq!(parse("cu[]").expect("parses").cu, Some(CuReq::default()));
        assert_eq!(parse("select[!fast && 'x'!=type]").expect("parses").text, "select[!fast && 'x'!=type]");
    }

    /// `rusage` takes site-defined resources beside `mem`, each usage
    /// string with its own duration (minutes, or hours) and decay.
    #[test]
    fn rusage_of_site_resources() {
        let r = parse("rusage[mem=2GB:licA=1:duration=10:decay=1, scratch=50:duration=2h]").expect("parses");
        assert_eq!(r.rusage_mem, Some(2048.0));
        assert_eq!(
            r.rusage,
            [
                ResUse { name: "licA".into(), amount: 1.0, duration: Some(600), decay: true },
                ResUse { name: "scratch".into(), amount: 50.0, duration: Some(7200), decay: false },
            ]
        );
        let c = parse("1*{select[type==X86_64]rusage[licA=1]} + {select[type==any]}").expect("the spec's compound");
        assert_eq!(c.terms[0].res.rusage[0].name, "licA");
        // The job's amount of a resource stands; the queue's others join.
        let job = parse("rusage[licA=2]").expect("job");
        let queue = parse("rusage[licA=1:licB=1]").expect("queue");
        let both = ResReq::combine(Some(&job), Some(&queue)).expect("combined");
        let amounts: Vec<(&str, f64)> = both.rusage.iter().map(|u| (u.name.as_str(), u.amount)).collect();
        assert_eq!(amounts, [("licA", 2.0), ("licB", 1.0)]);
    }

    #[test]
    fn errors_say_where() {
        let err = |s: &str| parse(s).expect_err(s);
        assert_eq!(err("select[type==").offset, 13);
        assert_eq!(err("select[type==LINUX").offset, 18);
        assert!(err("select[type==LINUX").message.contains("`]`"), "{}", err("select[type==LINUX").message);
        assert_eq!(err("span[hosts=2]").offset, 11);
        assert!(err("span[hosts=2]").message.starts_with("span: expected hosts=1 or hosts=-1"));
        assert_eq!(err("rusage[licA=x]").offset, 12);
        assert_eq!(err("rusage[licA=1:licA=2]").offset, 14);
        assert!(err("rusage[licA=1:licA=2]").message.contains("at most once"));
        assert_eq!(err("rusage[licA=1:duration=x]").offset, 23);
        assert!(err("rusage[licA=1 || licB=1]").message.contains("no `||`"));
        assert_eq!(err("span[ptile=0]").offset, 12);
        assert_eq!(err("same[type] same[model]").offset, 11);
        assert_eq!(err("span[ptile='!',LINUX:2] same[type:model]").offset, 40);
        assert_eq!(err("select[a &&]").offset, 11);
        assert_eq!(err("selct[a]").offset, 5);
        assert_eq!(err("cu[pref=best]").offset, 8);
        assert_eq!(err("cu[balance:maxcus=0]").offset, 18);
    }

    #[test]
    fn several_r_options_make_one_requirement_and_errors_name_the_option() {
        let r = parse_all_of(&["select[a]".into(), "span[hosts=1] select[b]".into()]).expect("parses").expect("some");
        assert_eq!(r.select, Some(and(Expr::Name("a".into()), Expr::Name("b".into()))));
        assert_eq!(r.span, Some(Span::OneHost));
        let (which, e) = parse_all_of(&["select[a]".into(), "span[hosts=3]".into()]).expect_err("bad");
        assert_eq!((which, e.offset), (1, 11));
    }
}
