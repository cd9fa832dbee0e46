//! `bsub`'s options, as users type them: LSF's own syntax (single-dash
//! options of one or more letters, `-oo`, `-Jd`, ...), so not clap's. The
//! options are a table; a value is the next word. Used by the `bsub`
//! command and by the simulator's JSON-lines workloads alike.

use winnow::ModalResult;
use winnow::combinator::{alt, delimited, repeat};
use winnow::error::{StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::token::{any, none_of, take_till};

use crate::lsf::values::{parse_all, run_limits};

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum BsubError {
    #[error("column {column}: {message}")]
    Quoting { column: usize, message: String },
    #[error("{0}: unknown option")]
    UnknownOption(String),
    #[error("{0}: expected a value after it")]
    MissingValue(String),
    #[error("-n {0}: expected `min[,max]` processors, whole numbers of at least 1")]
    BadSlots(String),
    #[error("-n {min},{max}: the minimum exceeds the maximum")]
    BadSlotRange { min: u32, max: u32 },
    #[error("-W {0}: expected `[hours:]minutes`")]
    BadRunLimit(String),
    #[error("-We {0}: expected `[hours:]minutes`")]
    BadEstimate(String),
    #[error("-sp {0}: expected a job priority, a whole number of at least 1")]
    BadPriority(String),
}

/// `-n min[,max]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotRange {
    pub min: u32,
    pub max: u32,
}

/// The options of one submission.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BsubOptions {
    pub slots: Option<SlotRange>,
    pub queue: Option<String>,
    /// `-W`, seconds.
    pub run_limit: Option<u64>,
    /// `-G`.
    pub group: Option<String>,
    /// `-P`.
    pub project: Option<String>,
    /// `-J`.
    pub name: Option<String>,
    /// `-R`, each occurrence.
    pub res_req: Vec<String>,
    /// `-m`.
    pub hosts: Option<String>,
    /// `-o`/`-oo` (overwrite when true).
    pub output: Option<(String, bool)>,
    /// `-e`/`-eo`.
    pub error: Option<(String, bool)>,
    /// `-x`.
    pub exclusive: bool,
    /// `-cwd`.
    pub cwd: Option<String>,
    /// `-K`: wait for the job to end.
    pub wait: bool,
    /// `-We`, seconds.
    pub estimated_run_time: Option<u64>,
    /// `-w`, as written (see [`crate::deps`]).
    pub depends: Option<String>,
    /// `-sp`: the user-assigned job priority.
    pub priority: Option<u32>,
    /// Options the scheduler keeps but does not act on yet, as given.
    pub other: Vec<(String, Option<String>)>,
    /// The command and its arguments.
    pub command: Vec<String>,
}

/// Options with a value, then flags. Anything else starting with `-`
/// before the command is an error.
const WITH_VALUE: &[&str] = &[
    "-n", "-q", "-W", "-G", "-P", "-J", "-R", "-m", "-o", "-oo", "-e", "-eo", "-u", "-b", "-t", "-w", "-sp", "-app",
    "-M", "-i", "-Jd", "-g", "-L", "-c", "-E", "-Ep", "-cwd", "-We", "-D", "-S", "-F", "-v",
];
const FLAGS: &[&str] = &["-x", "-B", "-N", "-r", "-rn", "-H", "-I", "-Ip", "-Is", "-K", "-hl"];

fn word(input: &mut &str) -> ModalResult<String> {
    let part = alt((
        delimited(
            '\'',
            take_till(0.., '\''),
            '\''.context(StrContext::Expected(StrContextValue::Description("a closing `'`"))),
        )
        .map(str::to_string),
        delimited(
            '"',
            repeat(0.., alt((('\\', any).map(|(_, c): (char, char)| c), none_of(['"', '\\']))))
                .map(|cs: Vec<char>| cs.into_iter().collect::<String>()),
            '"'.context(StrContext::Expected(StrContextValue::Description("a closing `\"`"))),
        ),
        ('\\', any).map(|(_, c): (char, char)| c.to_string()),
        none_of([' ', '\t', '\n', '\'', '"', '\\']).map(|c: char| c.to_string()),
    ));
    repeat(1.., part).map(|parts: Vec<String>| parts.concat()).parse_next(input)
}

fn blanks(input: &mut &str) -> ModalResult<()> {
    winnow::ascii::multispace0.void().parse_next(input)
}

fn words(input: &mut &str) -> ModalResult<Vec<String>> {
    blanks.parse_next(input)?;
    repeat(0.., winnow::combinator::terminated(word, blanks)).parse_next(input)
}

/// Splits a command line as a POSIX shell would: blanks separate words;
/// `'...'` is literal; `"..."` allows `\"` and `\\`; `\x` outside quotes is `x`.
pub fn split_words(line: &str) -> Result<Vec<String>, BsubError> {
    parse_all(words, line).map_err(|e| BsubError::Quoting { column: e.offset + 1, message: e.message })
}

/// Parses `bsub`'s options from one string, as typed after `bsub`.
pub fn parse_line(line: &str) -> Result<BsubOptions, BsubError> {
    parse(&split_words(line)?)
}

/// Parses `bsub`'s options: options first, then the command.
pub fn parse(args: &[String]) -> Result<BsubOptions, BsubError> {
    let mut o = BsubOptions::default();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        if arg == "--" {
            i += 1;
            break;
        }
        if FLAGS.contains(&arg) {
            match arg {
                "-x" => o.exclusive = true,
                "-K" => o.wait = true,
                _ => o.other.push((arg.to_string(), None)),
            }
            i += 1;
            continue;
        }
        if !WITH_VALUE.contains(&arg) {
            return Err(BsubError::UnknownOption(arg.to_string()));
        }
        let value = args.get(i + 1).ok_or_else(|| BsubError::MissingValue(arg.to_string()))?.clone();
        match arg {
            "-n" => o.slots = Some(slots(&value)?),
            "-q" => o.queue = Some(value),
            "-W" => o.run_limit = Some(run_limit(&value).ok_or_else(|| BsubError::BadRunLimit(value.clone()))?),
            "-We" => {
                o.estimated_run_time = Some(run_limit(&value).ok_or_else(|| BsubError::BadEstimate(value.clone()))?)
            }
            "-cwd" => o.cwd = Some(value),
            "-w" => o.depends = Some(value),
            "-sp" => {
                let p = value.parse::<u32>().ok().filter(|&p| p >= 1);
                o.priority = Some(p.ok_or_else(|| BsubError::BadPriority(value.clone()))?);
            }
            "-G" => o.group = Some(value),
            "-P" => o.project = Some(value),
            "-J" => o.name = Some(value),
            "-R" => o.res_req.push(value),
            "-m" => o.hosts = Some(value),
            "-o" | "-oo" => o.output = Some((value, arg == "-oo")),
            "-e" | "-eo" => o.error = Some((value, arg == "-eo")),
            _ => o.other.push((arg.to_string(), Some(value))),
        }
        i += 2;
    }
    o.command = args[i..].to_vec();
    Ok(o)
}

fn slots(v: &str) -> Result<SlotRange, BsubError> {
    let bad = || BsubError::BadSlots(v.to_string());
    let (min, max) = match v.split_once(',') {
        Some((a, b)) => (a.parse::<u32>().map_err(|_| bad())?, b.parse::<u32>().map_err(|_| bad())?),
        None => {
            let n = v.parse::<u32>().map_err(|_| bad())?;
            (n, n)
        }
    };
    if min == 0 {
        return Err(bad());
    }
    if max < min {
        return Err(BsubError::BadSlotRange { min, max });
    }
    Ok(SlotRange { min, max })
}

/// `[hours:]minutes`, in seconds (`bsub -W`, `bslots -W`).
pub fn run_limit(v: &str) -> Option<u64> {
    let limits = parse_all(run_limits, v).ok()?;
    match limits[..] {
        [ref one] => Some(one.seconds),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issues_example() {
        let o = parse_line(r#"-n 4,8 -q short -W 30 -G groupB -R "span[ptile=2]" ./app arg"#).expect("valid");
        assert_eq!(o.slots, Some(SlotRange { min: 4, max: 8 }));
        assert_eq!((o.queue.as_deref(), o.run_limit, o.group.as_deref()), (Some("short"), Some(1800), Some("groupB")));
        assert_eq!(o.res_req, ["span[ptile=2]"]);
        assert_eq!(o.command, ["./app", "arg"]);
    }

    #[test]
    fn working_directory_waiting_and_estimates() {
        let o = parse_line("-cwd /scratch/%J -K -We 1:30 -W 2:00 ./app").expect("valid");
        assert_eq!((o.cwd.as_deref(), o.wait), (Some("/scratch/%J"), true));
        assert_eq!((o.estimated_run_time, o.run_limit), (Some(5400), Some(7200)));
        assert_eq!(parse_line("-We soon x"), Err(BsubError::BadEstimate("soon".into())));
        assert_eq!(parse_line("-W soon x"), Err(BsubError::BadRunLimit("soon".into())));
        assert_eq!(parse_line("-sp 20 x").map(|o| o.priority), Ok(Some(20)));
        assert_eq!(parse_line("-sp 0 x"), Err(BsubError::BadPriority("0".into())));
        assert_eq!(parse_line("-sp high x"), Err(BsubError::BadPriority("high".into())));
    }

    #[test]
    fn multi_letter_options_and_quoting() {
        let o = parse_line(r#"-oo out.%J -eo 'err file' -x -W 1:30 -J "a \"b\"" cmd"#).expect("valid");
        assert_eq!(o.output, Some(("out.%J".into(), true)));
        assert_eq!(o.error, Some(("err file".into(), true)));
        assert!(o.exclusive);
        assert_eq!(o.run_limit, Some(5400));
        assert_eq!(o.name.as_deref(), Some("a \"b\""));
    }

    #[test]
    fn errors_name_the_option() {
        assert_eq!(parse_line("-n 8,4 x"), Err(BsubError::BadSlotRange { min: 8, max: 4 }));
        assert_eq!(parse_line("-n 0 x"), Err(BsubError::BadSlots("0".into())));
        assert_eq!(parse_line("-Z x"), Err(BsubError::UnknownOption("-Z".into())));
        assert_eq!(parse_line("-q"), Err(BsubError::MissingValue("-q".into())));
        assert_eq!(parse_line("-W soon x"), Err(BsubError::BadRunLimit("soon".into())));
        assert!(matches!(parse_line("-J 'open"), Err(BsubError::Quoting { column: 4, .. })));
    }
}
