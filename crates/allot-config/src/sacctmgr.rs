//! Slurm's association dump (`sacctmgr dump CLUSTER file=...`), read into
//! an [`AccountTree`], so that a Slurm site brings its associations
//! unchanged:
//!
//! ```text
//! line     := kind "-" quoted (":" option)*    | "#" comment | blank
//! kind     := "Cluster" | "Parent" | "Account" | "User" | "QOS"
//! option   := key "=" value
//! value    := quoted | bare                    bare: up to the next ":"
//! quoted   := "'" [^']* "'"
//! ```
//!
//! `Parent - 'a'` makes `a` (`root` at first, which always exists) the
//! parent of the `Account` and `User` lines after it. `Fairshare` (any
//! case) is a whole number of shares or `parent`; 1 when not given, as in
//! Slurm. Every other option (limits, QOS, descriptions) is read past:
//! allot takes only the tree and the shares from the dump. A user under
//! several parents has an association in each.

use allot_engine::multifactor::{AccountTree, AssocId, RawShares};
use winnow::ModalResult;
use winnow::ascii::space0;
use winnow::combinator::{alt, cut_err, delimited, preceded, repeat, separated_pair};
use winnow::error::{StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::token::take_while;

use crate::diag::{Diagnostics, Location};

/// One line of a dump.
#[derive(Debug, PartialEq)]
struct Line<'a> {
    kind: &'a str,
    name: &'a str,
    options: Vec<(&'a str, &'a str)>,
}

fn expected(what: &'static str) -> StrContext {
    StrContext::Expected(StrContextValue::Description(what))
}

fn quoted<'a>(input: &mut &'a str) -> ModalResult<&'a str> {
    delimited('\'', take_while(0.., |c| c != '\''), cut_err('\'').context(expected("a closing `'`"))).parse_next(input)
}

fn option<'a>(input: &mut &'a str) -> ModalResult<(&'a str, &'a str)> {
    separated_pair(
        take_while(1.., |c: char| c.is_ascii_alphanumeric() || c == '_').context(expected("an option name")),
        cut_err('=').context(expected("`=` after the option name")),
        alt((quoted, take_while(0.., |c| c != ':'))),
    )
    .parse_next(input)
}

fn line<'a>(input: &mut &'a str) -> ModalResult<Line<'a>> {
    let kind = take_while(1.., |c: char| c.is_ascii_alphabetic()).context(expected("a line kind")).parse_next(input)?;
    (space0, cut_err('-').context(expected("` - ` after the line kind")), space0).parse_next(input)?;
    let name = cut_err(quoted).context(expected("a name in quotes")).parse_next(input)?;
    let options = repeat(0.., preceded(':', cut_err(option))).parse_next(input)?;
    space0.parse_next(input)?;
    Ok(Line { kind, name, options })
}

/// Reads a dump into an account tree; errors name `file` and the line.
pub fn read(file: &str, text: &str) -> Result<AccountTree, Diagnostics> {
    let mut diags = Diagnostics::default();
    let mut tree = AccountTree::new();
    let mut parent = AssocId::ROOT;
    for (n, raw) in text.lines().enumerate() {
        let loc = |col: usize| Location { file: file.to_string(), line: n as u32 + 1, col: col as u32 + 1 };
        let trimmed = raw.trim_start();
        let indent = raw.len() - trimmed.len();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let mut input = trimmed.trim_end();
        let parsed = line.parse_next(&mut input);
        let l = match parsed {
            Ok(l) if input.is_empty() => l,
            Ok(_) => {
                diags.error(
                    loc(indent + trimmed.len() - input.len()),
                    "expected `:` and an option, or the end of the line",
                );
                continue;
            }
            Err(e) => {
                // The innermost expectation says the most.
                let what = e.into_inner().ok().and_then(|c| c.context().next().map(ToString::to_string));
                let what = what.unwrap_or_else(|| "expected `Kind - 'name'`".into());
                diags.error(loc(indent + trimmed.trim_end().len() - input.len()), what);
                continue;
            }
        };
        let shares = match l.options.iter().find(|(k, _)| k.eq_ignore_ascii_case("fairshare")) {
            None => RawShares::Count(1),
            Some((_, v)) if v.eq_ignore_ascii_case("parent") => RawShares::Parent,
            Some((_, v)) => match v.parse::<u32>() {
                Ok(n) => RawShares::Count(n),
                Err(_) => {
                    diags.error(
                        loc(indent),
                        format!("{} `{}`: Fairshare: expected a whole number or `parent`, found `{v}`", l.kind, l.name),
                    );
                    continue;
                }
            },
        };
        match l.kind {
            "Cluster" | "QOS" => {}
            "Parent" => match tree.account(l.name) {
                Some(a) => parent = a,
                None => diags.error(
                    loc(indent),
                    format!("Parent `{}`: no such account above this line (an Account line defines it)", l.name),
                ),
            },
            "Account" => {
                if let Err(e) = tree.add_account(parent, l.name, shares) {
                    diags.error(loc(indent), e.to_string());
                }
            }
            "User" => {
                if let Err(e) = tree.add_user(parent, l.name, shares) {
                    diags.error(loc(indent), e.to_string());
                }
            }
            other => diags.error(
                loc(indent),
                format!("expected a line kind `Cluster`, `Parent`, `Account`, `User` or `QOS`, found `{other}`"),
            ),
        }
    }
    if diags.has_errors() { Err(diags) } else { Ok(tree) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "\
# To edit this file start with a cluster line for the new cluster
Cluster - 'hpc':Fairshare=1:QOS='normal'
Parent - 'root'
User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1
Account - 'physics':Description='Physics: all of it':Organization='sci':FairShare=40
Account - 'chem':Description='chem':Organization='sci':Fairshare=60:GrpTRES=node=10,mem=2000
Parent - 'physics'
User - 'alice':DefaultAccount='physics':Fairshare=3
User - 'bob':DefaultAccount='physics'
Account - 'theory':Fairshare=parent
Parent - 'chem'
User - 'alice':DefaultAccount='physics':Fairshare=parent
Parent - 'theory'
User - 'carol':Fairshare=2
";

    #[test]
    fn a_dump_reads_into_the_tree_with_its_shares() {
        let t = read("assoc.cfg", DUMP).expect("reads");
        let names: Vec<String> = t
            .tree_order()
            .into_iter()
            .map(|a| {
                let x = t.get(a);
                let shares = match x.shares {
                    RawShares::Count(n) => n.to_string(),
                    RawShares::Parent => "parent".into(),
                };
                format!("{}/{}={shares}", x.account, x.user.as_deref().unwrap_or(""))
            })
            .collect();
        assert_eq!(
            names,
            [
                "root/=1",
                "root/root=1",
                "physics/=40",
                "physics/alice=3",
                "physics/bob=1",
                "theory/=parent",
                "theory/carol=2",
                "chem/=60",
                "chem/alice=parent",
            ]
        );
        assert_eq!(t.user_assocs("alice").len(), 2, "alice has an association in physics and one in chem");
        assert_eq!(t.get(t.account("theory").expect("theory")).parent, t.account("physics"));
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let cases = [
            (
                "Parent - 'nosuch'\n",
                "x.cfg:1:1: error: Parent `nosuch`: no such account above this line (an Account line defines it)",
            ),
            (
                "\n  Acount - 'a'\n",
                "x.cfg:2:3: error: expected a line kind `Cluster`, `Parent`, `Account`, `User` or `QOS`, found `Acount`",
            ),
            (
                "Account - 'a':Fairshare=lots\n",
                "x.cfg:1:1: error: Account `a`: Fairshare: expected a whole number or `parent`, found `lots`",
            ),
            ("Account - 'a\n", "x.cfg:1:13: error: expected a closing `'`"),
            ("Account 'a'\n", "x.cfg:1:9: error: expected ` - ` after the line kind"),
            ("Account - 'a':Fairshare\n", "x.cfg:1:24: error: expected `=` after the option name"),
            ("Account - 'a' junk\n", "x.cfg:1:15: error: expected `:` and an option, or the end of the line"),
            ("Account - 'a'\nAccount - 'a'\n", "x.cfg:2:1: error: account `a` is defined twice"),
            ("User - 'u'\nUser - 'u'\n", "x.cfg:2:1: error: user `u` is in account `root` twice"),
        ];
        for (text, want) in cases {
            let d = read("x.cfg", text).expect_err(text);
            assert_eq!(d.0[0].to_string(), want, "{text:?}");
        }
    }
}
