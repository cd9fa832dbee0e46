//! `bsub -env`: which of the submission environment's variables the job
//! gets, as LSF writes it:
//!
//! - `none`: none of them;
//! - `all[, ~name ...][, name=value ...]`: all, but the `~` ones, and the
//!   ones given a value with that value;
//! - `name[=value][, ...]`: those alone, each with its value from the
//!   submission environment, or the value given.
//!
//! A value may hold `~` and `,`; one with a comma is written in single
//! quotes (`TEST='A, B'`). A name holds none of `,` `~` `=` `"` `'`, and
//! is neither `none` nor `all`. Without `-env`, the job gets them all.
//! Whatever it is given, allotd sets the `LSB_*` variables and who the
//! job's owner is (`USER`, `LOGNAME`, `HOME`) over it, as LSF does.

use winnow::ModalResult;
use winnow::ascii::{Caseless, multispace0};
use winnow::combinator::{alt, cut_err, delimited, eof, not, opt, preceded, repeat};
use winnow::error::{StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::token::{literal, take_till, take_while};

use crate::lsf::values::{ValueError, parse_all};

/// What `-env` asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvOption {
    None,
    /// All, but `except`, and with `set` over their values.
    All {
        except: Vec<String>,
        set: Vec<(String, String)>,
    },
    /// These alone: a value given, or (`None`) the submission's.
    Only(Vec<(String, Option<String>)>),
}

enum Item {
    Except(String),
    Var(String, Option<String>),
}

fn name(input: &mut &str) -> ModalResult<String> {
    take_while(1.., name_char)
        .verify(|n: &str| !n.eq_ignore_ascii_case("all") && !n.eq_ignore_ascii_case("none"))
        .map(str::to_string)
        .context(StrContext::Expected(StrContextValue::Description("a variable name")))
        .parse_next(input)
}

fn value(input: &mut &str) -> ModalResult<String> {
    alt((
        delimited(
            '\'',
            take_till(0.., '\''),
            cut_err('\'').context(StrContext::Expected(StrContextValue::Description("a closing `'`"))),
        ),
        take_till(0.., ','),
    ))
    .map(|v: &str| v.trim().to_string())
    .parse_next(input)
}

fn item(input: &mut &str) -> ModalResult<Item> {
    let _ = multispace0.parse_next(input)?;
    let item = alt((
        preceded('~', cut_err(name)).map(Item::Except),
        (name, opt(preceded((multispace0, '=', multispace0), value))).map(|(n, v)| Item::Var(n, v)),
    ))
    .parse_next(input)?;
    let _ = multispace0.parse_next(input)?;
    Ok(item)
}

fn items(input: &mut &str) -> ModalResult<Vec<Item>> {
    let first = item.parse_next(input)?;
    let rest: Vec<Item> = repeat(0.., preceded(',', cut_err(item))).parse_next(input)?;
    Ok(std::iter::once(first).chain(rest).collect())
}

fn name_char(c: char) -> bool {
    !",~=\"' \t".contains(c)
}

/// `none` or `all` as a word of its own (`NONEXISTENT` is a name).
fn keyword<'a>(word: &'static str) -> impl Parser<&'a str, (), winnow::error::ErrMode<winnow::error::ContextError>> {
    (literal(Caseless(word)), not(take_while(1.., name_char)), multispace0).void()
}

fn env_option(input: &mut &str) -> ModalResult<EnvOption> {
    alt((
        preceded(
            keyword("none"),
            cut_err(eof).context(StrContext::Expected(StrContextValue::Description("nothing after `none`"))),
        )
        .map(|_| EnvOption::None),
        preceded(keyword("all"), opt(preceded(',', cut_err(items)))).map(|items| {
            let (mut except, mut set) = (Vec::new(), Vec::new());
            for item in items.unwrap_or_default() {
                match item {
                    Item::Except(n) => except.push(n),
                    // `all, name`: it is there already.
                    Item::Var(_, None) => {}
                    Item::Var(n, Some(v)) => set.push((n, v)),
                }
            }
            EnvOption::All { except, set }
        }),
        cut_err(items)
            .verify(|items: &Vec<Item>| items.iter().all(|i| matches!(i, Item::Var(..))))
            .context(StrContext::Expected(StrContextValue::Description("`~name` only after `all`")))
            .map(|items| {
                EnvOption::Only(
                    items
                        .into_iter()
                        .filter_map(|i| if let Item::Var(n, v) = i { Some((n, v)) } else { None })
                        .collect(),
                )
            }),
    ))
    .parse_next(input)
}

impl EnvOption {
    /// Reads `-env`'s value.
    pub fn parse(text: &str) -> Result<EnvOption, ValueError> {
        parse_all(env_option, text)
    }

    /// The variables of `submitted` (the submission environment, in its
    /// order) that the job gets, then the ones given a value that it did
    /// not have.
    pub fn apply(&self, submitted: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
        let set_in = |set: &[(String, String)], mut env: Vec<(String, String)>| {
            for (n, v) in set {
                match env.iter_mut().find(|(k, _)| k == n) {
                    Some(e) => e.1 = v.clone(),
                    None => env.push((n.clone(), v.clone())),
                }
            }
            env
        };
        match self {
            EnvOption::None => Vec::new(),
            EnvOption::All { except, set } => {
                set_in(set, submitted.into_iter().filter(|(k, _)| !except.contains(k)).collect())
            }
            EnvOption::Only(vars) => {
                let submitted: Vec<(String, String)> = submitted.into_iter().collect();
                vars.iter()
                    .filter_map(|(n, v)| match v {
                        Some(v) => Some((n.clone(), v.clone())),
                        None => submitted.iter().find(|(k, _)| k == n).cloned(),
                    })
                    .collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Vec<(String, String)> {
        [("PATH", "/bin"), ("HOME", "/home/a"), ("SECRET", "x"), ("LANG", "C")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .to_vec()
    }

    fn names(vars: &[(String, String)]) -> Vec<String> {
        vars.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    #[test]
    fn none_all_and_a_list_as_lsf_reads_them() {
        assert_eq!(EnvOption::parse("none").expect("none").apply(env()), Vec::new());
        assert_eq!(EnvOption::parse(" NONE ").expect("caseless"), EnvOption::None);
        assert_eq!(names(&EnvOption::parse("all").expect("all").apply(env())).len(), 4);
        let all = EnvOption::parse("all, ~SECRET, LANG=en_US.UTF-8, NEW='A, B', PATH").expect("all with");
        assert_eq!(names(&all.apply(env())), ["PATH=/bin", "HOME=/home/a", "LANG=en_US.UTF-8", "NEW=A, B"]);
        let only = EnvOption::parse("PATH, LANG = fr_FR ,MISSING, TILDE=~x").expect("only");
        assert_eq!(names(&only.apply(env())), ["PATH=/bin", "LANG=fr_FR", "TILDE=~x"]);
    }

    #[test]
    fn what_lsf_refuses_is_refused_where_it_is() {
        for (bad, at) in [
            ("none, PATH", 4),
            ("~SECRET", 0),
            ("PATH, ~SECRET", 0),
            ("all, ~", 6),
            ("A='open", 7),
            ("", 0),
            ("all,", 4),
            ("PATH, all", 6),
        ] {
            let e = EnvOption::parse(bad).expect_err(bad);
            assert_eq!(e.offset, at, "{bad}: {}", e.message);
        }
    }
}
