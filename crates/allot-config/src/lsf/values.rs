//! Parsers for the values of LSF parameters. Each returns the value or a
//! [`ValueError`] with the byte offset, within the value, where it failed.

use winnow::ModalResult;
use winnow::ascii::{Caseless, dec_uint, digit1, float, multispace0, multispace1};
use winnow::combinator::{alt, cut_err, delimited, eof, opt, preceded, repeat, separated, terminated};
use winnow::error::{ContextError, ErrMode, StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::token::{literal, take_while};

use super::text::expected;

/// Where a value failed to parse, and what was expected there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueError {
    pub offset: usize,
    pub message: String,
}

/// Runs `p` over the whole of `input` (surrounding blanks allowed).
pub fn parse_all<'a, O>(
    mut p: impl Parser<&'a str, O, ErrMode<ContextError>>,
    input: &'a str,
) -> Result<O, ValueError> {
    let mut rest = input;
    let result = (|| {
        let _ = multispace0.parse_next(&mut rest)?;
        let out = p.parse_next(&mut rest)?;
        let _ = multispace0.parse_next(&mut rest)?;
        eof.context(StrContext::Expected(StrContextValue::Description("end of value"))).parse_next(&mut rest)?;
        Ok(out)
    })();
    result.map_err(|e: ErrMode<ContextError>| {
        let e = e.into_inner().unwrap_or_default();
        let offset = input.len() - rest.len();
        let found = rest.split_whitespace().next().map_or("end of value".to_string(), |w| format!("`{w}`"));
        ValueError { offset, message: format!("{}, found {found}", expected(&e)) }
    })
}

fn exp(what: &'static str) -> StrContext {
    StrContext::Expected(StrContextValue::Description(what))
}

/// A name: a user, group, host, queue or resource name.
pub fn name<'a>(input: &mut &'a str) -> ModalResult<&'a str> {
    take_while(1.., |c: char| c.is_ascii_alphanumeric() || "_-.@%:/".contains(c))
        .context(exp("a name"))
        .parse_next(input)
}

/// A share assignment as written: `[name, n]`, name possibly `group@`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawShare<'a> {
    pub name: &'a str,
    pub shares: u32,
}

fn share<'a>(input: &mut &'a str) -> ModalResult<RawShare<'a>> {
    '['.context(StrContext::Expected(StrContextValue::CharLiteral('['))).parse_next(input)?;
    cut_err(|input: &mut &'a str| {
        let name = preceded(multispace0, name).parse_next(input)?;
        (multispace0, ',').context(StrContext::Expected(StrContextValue::CharLiteral(','))).parse_next(input)?;
        let shares: u32 = preceded(multispace0, dec_uint).context(exp("a number of shares")).parse_next(input)?;
        (multispace0, ']').context(StrContext::Expected(StrContextValue::CharLiteral(']'))).parse_next(input)?;
        Ok(RawShare { name, shares })
    })
    .parse_next(input)
}

/// `[name, n] [name, n] ...` (possibly none).
pub fn share_list<'a>(input: &mut &'a str) -> ModalResult<Vec<RawShare<'a>>> {
    repeat(0.., terminated(share, multispace0)).parse_next(input)
}

/// `USER_SHARES[[name, n] ...]`, the FAIRSHARE value of a queue.
pub fn user_shares<'a>(input: &mut &'a str) -> ModalResult<Vec<RawShare<'a>>> {
    literal(Caseless("USER_SHARES")).context(exp("`USER_SHARES[[name, shares] ...]`")).parse_next(input)?;
    cut_err(delimited(
        (multispace0, '[').context(StrContext::Expected(StrContextValue::CharLiteral('['))),
        preceded(multispace0, share_list),
        ']'.context(StrContext::Expected(StrContextValue::Description("`[name, shares]` or `]`"))),
    ))
    .parse_next(input)
}

/// Whitespace-separated unsigned integers.
pub fn uints(input: &mut &str) -> ModalResult<Vec<u32>> {
    separated(1.., dec_uint::<_, u32, _>.context(exp("a whole number")), multispace1).parse_next(input)
}

/// A whole number.
pub fn uint(input: &mut &str) -> ModalResult<u32> {
    dec_uint.context(exp("a whole number")).parse_next(input)
}

/// A signed whole number.
pub fn int(input: &mut &str) -> ModalResult<i32> {
    winnow::ascii::dec_int.context(exp("a whole number")).parse_next(input)
}

/// A number, possibly with a fraction.
pub fn number(input: &mut &str) -> ModalResult<f64> {
    float.context(exp("a number")).parse_next(input)
}

/// `Y` or `N` (any case, also `yes`/`no`).
pub fn yes_no(input: &mut &str) -> ModalResult<bool> {
    alt((
        alt((literal(Caseless("yes")), literal(Caseless("y")))).value(true),
        alt((literal(Caseless("no")), literal(Caseless("n")))).value(false),
    ))
    .context(exp("`Y` or `N`"))
    .parse_next(input)
}

/// PLAN (`lsb.params`, `lsb.queues`): `Y`, `N`, or keys in any order,
/// quoted or not, `DELAY[minutes] MAX_JOBS[n] RSCHED_TIME[minutes]`,
/// which plan with those settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanValue {
    pub on: bool,
    pub delay: Option<u32>,
    pub max_jobs: Option<u32>,
    pub rsched_time: Option<u32>,
}

impl std::fmt::Display for PlanValue {
    /// As written in the files: `N`, `Y`, or its keys.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys = [("DELAY", self.delay), ("MAX_JOBS", self.max_jobs), ("RSCHED_TIME", self.rsched_time)];
        let keys: Vec<String> = keys.iter().filter_map(|(k, v)| v.map(|v| format!("{k}[{v}]"))).collect();
        match (self.on, keys.is_empty()) {
            (false, _) => f.write_str("N"),
            (true, true) => f.write_str("Y"),
            (true, false) => f.write_str(&keys.join(" ")),
        }
    }
}

pub fn plan(input: &mut &str) -> ModalResult<PlanValue> {
    let quoted = opt('"').parse_next(input)?.is_some();
    let _ = multispace0.parse_next(input)?;
    let keys = separated(1.., plan_key, multispace1).map(|keys: Vec<(PlanKey, u32)>| {
        let mut v = PlanValue { on: true, ..PlanValue::default() };
        for (k, n) in keys {
            match k {
                PlanKey::Delay => v.delay = Some(n),
                PlanKey::MaxJobs => v.max_jobs = Some(n),
                PlanKey::RschedTime => v.rsched_time = Some(n),
            }
        }
        v
    });
    let v = alt((
        yes_no.map(|on| PlanValue { on, ..PlanValue::default() }),
        keys,
        winnow::combinator::fail.context(exp("`Y`, `N` or `DELAY[minutes] MAX_JOBS[n] RSCHED_TIME[minutes]`")),
    ))
    .parse_next(input)?;
    if quoted {
        let _ = multispace0.parse_next(input)?;
        cut_err('"'.context(StrContext::Expected(StrContextValue::CharLiteral('"')))).parse_next(input)?;
    }
    Ok(v)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PlanKey {
    Delay,
    MaxJobs,
    RschedTime,
}

/// One key of PLAN with its number: DELAY and MAX_JOBS at least 1,
/// RSCHED_TIME at least 0.
fn plan_key(input: &mut &str) -> ModalResult<(PlanKey, u32)> {
    let key = alt((
        literal(Caseless("DELAY")).value(PlanKey::Delay),
        literal(Caseless("MAX_JOBS")).value(PlanKey::MaxJobs),
        literal(Caseless("RSCHED_TIME")).value(PlanKey::RschedTime),
    ))
    .parse_next(input)?;
    let least = u32::from(key != PlanKey::RschedTime);
    let n = cut_err(delimited(
        (multispace0, '[').context(StrContext::Expected(StrContextValue::CharLiteral('['))),
        delimited(multispace0, uint, multispace0).verify(|n| *n >= least).context(exp(if least == 1 {
            "a positive whole number"
        } else {
            "a whole number"
        })),
        ']'.context(StrContext::Expected(StrContextValue::CharLiteral(']'))),
    ))
    .parse_next(input)?;
    Ok((key, n))
}

/// `MAX_RESERVE_TIME[n]` (SLOT_RESERVE, RESOURCE_RESERVE).
pub fn max_reserve_time(input: &mut &str) -> ModalResult<u32> {
    literal(Caseless("MAX_RESERVE_TIME")).context(exp("`MAX_RESERVE_TIME[n]`")).parse_next(input)?;
    cut_err(delimited(
        (multispace0, '[').context(StrContext::Expected(StrContextValue::CharLiteral('['))),
        delimited(multispace0, uint, multispace0),
        ']'.context(StrContext::Expected(StrContextValue::CharLiteral(']'))),
    ))
    .parse_next(input)
}

/// EXCLUSIVE: `Y`, `N` or `CU[type]`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Exclusive {
    #[default]
    No,
    Yes,
    ComputeUnit(String),
}

pub fn exclusive(input: &mut &str) -> ModalResult<Exclusive> {
    alt((
        preceded(
            literal(Caseless("CU")),
            cut_err(delimited(
                (multispace0, '[').context(StrContext::Expected(StrContextValue::CharLiteral('['))),
                delimited(multispace0, name, multispace0),
                ']'.context(StrContext::Expected(StrContextValue::CharLiteral(']'))),
            )),
        )
        .map(|t: &str| Exclusive::ComputeUnit(t.to_string())),
        yes_no.map(|y| if y { Exclusive::Yes } else { Exclusive::No }),
    ))
    .context(exp("`Y`, `N` or `CU[type]`"))
    .parse_next(input)
}

/// PREEMPTION: `PREEMPTIVE[q[+pref] ...]` and/or `PREEMPTABLE[q ...]`; an
/// empty or missing list means every queue of lower (higher) priority.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Preemption {
    /// The queues this one preempts, each with its preference level
    /// (`low+2`: preempted before queues of lower levels and none).
    pub preemptive: Option<Vec<(String, Option<u32>)>>,
    pub preemptable: Option<Vec<String>>,
}

fn queue_list<'a, T>(
    item: impl Parser<&'a str, T, ErrMode<ContextError>>,
) -> impl Parser<&'a str, Vec<T>, ErrMode<ContextError>> {
    opt(preceded(
        (multispace0, '['),
        cut_err(terminated(
            repeat(0.., delimited(multispace0, item, multispace0)),
            ']'.context(StrContext::Expected(StrContextValue::CharLiteral(']'))),
        )),
    ))
    .map(Option::unwrap_or_default)
}

/// `queue` or `queue+n`.
fn preferred(input: &mut &str) -> ModalResult<(String, Option<u32>)> {
    (name, opt(preceded('+', cut_err(dec_uint.context(exp("a preference level, a whole number"))))))
        .map(|(q, pref): (&str, Option<u32>)| (q.to_string(), pref))
        .context(exp("a queue name, or `queue+preference`"))
        .parse_next(input)
}

pub fn preemption(input: &mut &str) -> ModalResult<Preemption> {
    enum Word {
        Preemptive(Vec<(String, Option<u32>)>),
        Preemptable(Vec<String>),
    }
    let mut p = Preemption::default();
    let words: Vec<Word> = separated(
        1..,
        alt((
            preceded(literal(Caseless("PREEMPTIVE")), queue_list(preferred)).map(Word::Preemptive),
            preceded(literal(Caseless("PREEMPTABLE")), queue_list(name.map(str::to_string))).map(Word::Preemptable),
        ))
        .context(exp("`PREEMPTIVE[queues]` or `PREEMPTABLE[queues]`")),
        multispace1,
    )
    .parse_next(input)?;
    for w in words {
        match w {
            Word::Preemptive(l) => p.preemptive = Some(l),
            Word::Preemptable(l) => p.preemptable = Some(l),
        }
    }
    Ok(p)
}

/// REQUEUE_EXIT_VALUES: exit codes, and `EXCLUDE(codes)`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RequeueExitValues {
    pub requeue: Vec<i32>,
    pub exclude: Vec<i32>,
}

pub fn requeue_exit_values(input: &mut &str) -> ModalResult<RequeueExitValues> {
    let mut out = RequeueExitValues::default();
    let items: Vec<Result<i32, Vec<i32>>> = separated(
        1..,
        alt((
            preceded(
                literal(Caseless("EXCLUDE")),
                cut_err(delimited(
                    (multispace0, '(').context(StrContext::Expected(StrContextValue::CharLiteral('('))),
                    delimited(multispace0, separated(0.., int, multispace1), multispace0),
                    ')'.context(StrContext::Expected(StrContextValue::CharLiteral(')'))),
                )),
            )
            .map(Err),
            int.map(Ok),
        ))
        .context(exp("an exit code or `EXCLUDE(codes)`")),
        multispace1,
    )
    .parse_next(input)?;
    for item in items {
        match item {
            Ok(code) => out.requeue.push(code),
            Err(codes) => out.exclude.extend(codes),
        }
    }
    Ok(out)
}

/// A run limit: `[hours:]minutes`, optionally `/host_name` or `/host_model`
/// for normalization, in seconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLimitValue {
    pub seconds: u64,
    pub normalized_to: Option<String>,
}

fn run_limit_value(input: &mut &str) -> ModalResult<RunLimitValue> {
    let digits = |what| digit1.try_map(str::parse::<u64>).context(exp(what));
    let first = digits("`[hours:]minutes`").parse_next(input)?;
    let second = opt(preceded(':', cut_err(digits("minutes")))).parse_next(input)?;
    let minutes = match second {
        Some(m) => first * 60 + m,
        None => first,
    };
    let host = opt(preceded('/', cut_err(name))).parse_next(input)?;
    Ok(RunLimitValue { seconds: minutes * 60, normalized_to: host.map(str::to_string) })
}

/// RUNLIMIT: `[default] maximum`.
pub fn run_limits(input: &mut &str) -> ModalResult<Vec<RunLimitValue>> {
    separated(1..=2, run_limit_value, multispace1).parse_next(input)
}

/// A host in a HOSTS list: `~name` excludes, `name!` marks a first
/// execution host candidate, `name+n` gives a preference level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostToken<'a> {
    pub name: &'a str,
    pub exclude: bool,
    pub first_exec: bool,
    pub preference: Option<u32>,
}

pub fn host_token<'a>(input: &mut &'a str) -> ModalResult<HostToken<'a>> {
    let exclude = opt('~').parse_next(input)?.is_some();
    let name = take_while(1.., |c: char| c.is_ascii_alphanumeric() || "_-.[]*,@/".contains(c))
        .context(exp("a host or host group name"))
        .parse_next(input)?;
    let first_exec = opt('!').parse_next(input)?.is_some();
    let preference = opt(preceded('+', cut_err(uint))).parse_next(input)?;
    Ok(HostToken { name, exclude, first_exec, preference })
}

pub fn host_tokens<'a>(input: &mut &'a str) -> ModalResult<Vec<HostToken<'a>>> {
    separated(1.., host_token, multispace1).parse_next(input)
}

/// At most this many names come out of one range expression.
pub const MAX_RANGE_NAMES: usize = 100_000;

/// Expands a name with a numeric range, `host1[01-16]` or `enclosure[1-2,5]`,
/// keeping the width of zero-padded bounds; a name without brackets is
/// itself. More than [`MAX_RANGE_NAMES`] names is an error.
pub fn expand_range(input: &str) -> Result<Vec<String>, ValueError> {
    let Some(open) = input.find('[') else { return Ok(vec![input.to_string()]) };
    let prefix = &input[..open];
    let rest = &input[open + 1..];
    let Some(close) = rest.find(']') else {
        return Err(ValueError { offset: input.len(), message: "expected `]` closing the range".into() });
    };
    let suffix = &rest[close + 1..];
    let body = &rest[..close];
    let item = |input: &mut &str| -> ModalResult<(String, Option<String>)> {
        let lo = digit1.context(exp("a number")).parse_next(input)?;
        let hi = opt(preceded('-', cut_err(digit1.context(exp("a number"))))).parse_next(input)?;
        Ok((lo.to_string(), hi.map(str::to_string)))
    };
    let items: Vec<(String, Option<String>)> = parse_all(separated(1.., item, ','), body)
        .map_err(|e| ValueError { offset: open + 1 + e.offset, message: e.message })?;
    let mut out = Vec::new();
    for (lo, hi) in items {
        let width = if lo.starts_with('0') && lo.len() > 1 { lo.len() } else { 0 };
        let parse =
            |s: &str| s.parse::<u64>().map_err(|_| ValueError { offset: open + 1, message: "number too large".into() });
        let hi = hi.unwrap_or_else(|| lo.clone());
        let (a, b) = (parse(&lo)?, parse(&hi)?);
        if b < a || b - a > 1_000_000 {
            return Err(ValueError { offset: open + 1, message: format!("range `{lo}-{hi}` is empty or too large") });
        }
        for n in a..=b {
            let expanded = expand_range(&format!("{prefix}{n:0width$}{suffix}"))?;
            out.extend(expanded);
            if out.len() > MAX_RANGE_NAMES {
                let message = format!("`{input}` names more than {MAX_RANGE_NAMES} hosts");
                return Err(ValueError { offset: 0, message });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_shares_lists() {
        let v = parse_all(user_shares, "USER_SHARES[[user1,100] [default, 1]]").expect("valid");
        assert_eq!(v, [RawShare { name: "user1", shares: 100 }, RawShare { name: "default", shares: 1 }]);
        let e = parse_all(user_shares, "USER_SHARE[[a, 1]]").expect_err("misspelt");
        assert_eq!(e.offset, 0);
        assert_eq!(e.message, "expected `USER_SHARES[[name, shares] ...]`, found `USER_SHARE[[a,`");
        let e = parse_all(user_shares, "USER_SHARES[[a 1]]").expect_err("no comma");
        assert_eq!((e.offset, e.message.as_str()), (15, "expected `,`, found `1]]`"));
        let e = parse_all(share_list, "[GroupB@, x]").expect_err("bad number");
        assert_eq!(e.offset, 10);
    }

    #[test]
    fn reserve_exclusive_preemption_requeue() {
        assert_eq!(parse_all(max_reserve_time, "MAX_RESERVE_TIME[5]"), Ok(5));
        assert_eq!(parse_all(exclusive, "CU[rack]"), Ok(Exclusive::ComputeUnit("rack".into())));
        assert_eq!(parse_all(exclusive, "y"), Ok(Exclusive::Yes));
        let p = parse_all(preemption, "PREEMPTIVE[short night] PREEMPTABLE").expect("valid");
        assert_eq!(p.preemptive, Some(vec![("short".to_string(), None), ("night".to_string(), None)]));
        assert_eq!(p.preemptable, Some(vec![]));
        let p = parse_all(preemption, "PREEMPTIVE[normal low+1]").expect("valid");
        assert_eq!(p.preemptive, Some(vec![("normal".to_string(), None), ("low".to_string(), Some(1))]));
        assert_eq!(p.preemptable, None);
        let e = parse_all(preemption, "PREEMPTIVE[low+]").expect_err("no level");
        assert_eq!(e.offset, 15);
        assert!(e.message.starts_with("expected a preference level, a whole number"), "{}", e.message);
        let r = parse_all(requeue_exit_values, "99 100 EXCLUDE(1 2)").expect("valid");
        assert_eq!((r.requeue, r.exclude), (vec![99, 100], vec![1, 2]));
    }

    #[test]
    fn run_limits_in_minutes_or_hours() {
        let v = parse_all(run_limits, "10 1:30/hostA").expect("valid");
        assert_eq!(v[0].seconds, 600);
        assert_eq!(v[1], RunLimitValue { seconds: 5400, normalized_to: Some("hostA".into()) });
        assert!(parse_all(run_limits, "1 2 3").is_err());
    }

    #[test]
    fn host_tokens_and_ranges() {
        let t = parse_all(host_tokens, "hostA! ~hostC hostgroup1! all hostB+2").expect("valid");
        assert!(t[0].first_exec && !t[0].exclude);
        assert!(t[1].exclude);
        assert_eq!(t[4].preference, Some(2));
        assert_eq!(expand_range("host1[01-03]"), Ok(vec!["host101".into(), "host102".into(), "host103".into()]));
        assert_eq!(expand_range("enclosure[1-2,5]").expect("valid").len(), 3);
        assert_eq!(expand_range("plain"), Ok(vec!["plain".into()]));
        assert!(expand_range("h[3-1]").is_err());
        assert!(expand_range("h[1-").is_err());
        let e = expand_range("h[1-1000][1-1000]").expect_err("a million names");
        assert_eq!(e.message, "`h[1-1000][1-1000]` names more than 100000 hosts");
    }
}
