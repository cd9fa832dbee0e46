//! `bsub`'s options, as users type them: LSF's own syntax (single-dash
//! options of one or more letters, `-oo`, `-Jd`, ...), so not clap's. The
//! options are a table; a value is the next word. Used by the `bsub`
//! command and by the simulator's JSON-lines workloads alike.

use allot_engine::time::{civil_from_days, days_from_civil};
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
    #[error("{0}: an option of LSF's that this allot does not have")]
    NotKnown(String),
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
    #[error("-uf {0}: expected a user factor, a number from 0 to 1")]
    BadUserFactor(String),
    #[error("-g: {0}")]
    BadJobGroup(String),
    #[error("-c {0}: expected `[hours:]minutes[/host]`")]
    BadCpuLimit(String),
    #[error("-t {0}: expected `[[[year:]month:]day:]hour:minute`")]
    BadTermTime(String),
    #[error("-t {0}: the time is in the past")]
    PastTermTime(String),
    #[error("-b {0}: expected `[[[year:]month:]day:]hour:minute`")]
    BadBeginTime(String),
    #[error("-b {0}: the time is in the past")]
    PastBeginTime(String),
    #[error(
        "{option} {value}: expected a size: a number, in LSF_UNIT_FOR_LIMITS (KB unless set), or with a unit (KB, MB, \
         GB, TB)"
    )]
    BadSizeLimit { option: &'static str, value: String },
    #[error("-wt {0}: expected `[hours:]minutes`")]
    BadWarningTime(String),
    #[error("-Jd: the description has {0} characters; at most {MAX_DESCRIPTION} are taken")]
    LongDescription(usize),
    #[error("-L {0}: expected the login shell's absolute path")]
    LoginShell(String),
    #[error("-u {0}: expected a mail address or user name: no blanks, not starting with `-`")]
    BadMailUser(String),
    #[error("-env: column {column}: {message}")]
    BadEnv { column: usize, message: String },
    #[error("-wa and -wt go together: a warning action needs a warning time, and the other way round")]
    HalfWarning,
    #[error("job script line {line}: {error}")]
    Script { line: usize, error: Box<BsubError> },
}

/// `-n min[,max]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotRange {
    pub min: u32,
    pub max: u32,
}

/// The options of one submission.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BsubOptions {
    pub slots: Option<SlotRange>,
    pub queue: Option<String>,
    /// `-W`, seconds.
    pub run_limit: Option<u64>,
    /// `-G`.
    pub group: Option<String>,
    /// `-P`.
    pub project: Option<String>,
    /// `-g`: the job group's path.
    pub job_group: Option<String>,
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
    /// `-hl`: the memory limit per host.
    pub host_mem_limit: bool,
    /// `-app`: the application profile.
    pub app: Option<String>,
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
    /// `-c`, seconds. A `/host` to normalize by is accepted and changes
    /// nothing: allot's hosts all have CPU factor 1.
    pub cpu_limit: Option<u64>,
    /// `-t`, as written ([`TermTime::resolve`] gives the time).
    pub term_time: Option<TermTime>,
    /// `-qos`: the QoS level (multifactor policies).
    pub qos: Option<String>,
    /// `-uf`: the user factor, 0 to 1 (multifactor policies).
    pub user_factor: Option<f64>,
    /// `-M`, as written (see [`mem_limit_kb`]).
    pub mem_limit: Option<String>,
    /// `-C -D -F -S -v`: the per-process limits, as written (see
    /// [`size_limit_kb`]), by option.
    pub process_limits: Vec<(&'static str, String)>,
    /// `-B`, `-N`: mail when the job starts, and its report when it ends;
    /// `-u`: to whom (its owner without it).
    pub mail_begin: bool,
    pub mail_end: bool,
    pub mail_user: Option<String>,
    /// `-E` and `-Ep`: the pre- and post-execution commands.
    pub pre_exec: Option<String>,
    pub post_exec: Option<String>,
    /// `-Jd`: a free-text description of the job (at most 4094
    /// characters, as LSF takes).
    pub description: Option<String>,
    /// `-L`: the login shell the job's command runs under, an absolute
    /// path (as LSF requires).
    pub login_shell: Option<String>,
    /// `-env`: which of the submission environment's variables the job
    /// gets (all, without it).
    pub env: Option<crate::env_option::EnvOption>,
    /// `-wa`: the signal sent as the job's warning action, by name.
    pub warning_action: Option<String>,
    /// `-wt`, seconds: how long before its run limit the warning goes.
    pub warning_time: Option<u64>,
    /// `-r` (true) or `-rn` (false): whether a job lost with its host goes
    /// back to pending, whatever its queue's RERUNNABLE says.
    pub rerunnable: Option<bool>,
    /// `-ar`: autoresizable; `-rnc`: the resize notification command.
    pub auto_resize: bool,
    /// `-H`: held at submission.
    pub hold: bool,
    /// `-b`, as written (resolved as `-t`'s is).
    pub begin_time: Option<TermTime>,
    pub resize_notify: Option<String>,
    /// `-I`, `-Ip`, `-Is`.
    pub interactive: Option<InteractiveMode>,
    /// `-i`: the job's standard input, as written.
    pub input: Option<String>,
    /// Options the scheduler keeps but does not act on yet, as given.
    pub other: Vec<(String, Option<String>)>,
    /// The command and its arguments.
    pub command: Vec<String>,
}

/// How an interactive job meets its terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InteractiveMode {
    /// `-I`: the terminal itself.
    Plain,
    /// `-Ip`: a pseudo-terminal; Ctrl-C is passed on as a signal.
    Pty,
    /// `-Is`: a pseudo-terminal in shell mode: every key reaches it.
    Shell,
}

/// The per-process size limits (as `-M` is written), which a job's
/// processes get as soft resource limits.
pub const PROCESS_LIMITS: [&str; 5] = ["-C", "-D", "-F", "-S", "-v"];

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

/// A `#BSUB` line's words, as [`split_words`] splits them, up to a word
/// that begins with an unquoted `#`: from there to the line's end is a
/// comment, as a shell reads it (`#BSUB -W 1:00   # wall-clock limit`;
/// `-J "run#1"` and `-J run#1` keep their `#`).
fn directive_words(input: &mut &str) -> ModalResult<Vec<String>> {
    blanks.parse_next(input)?;
    let words = repeat(
        0..,
        winnow::combinator::preceded(winnow::combinator::not('#'), winnow::combinator::terminated(word, blanks)),
    )
    .parse_next(input)?;
    winnow::combinator::opt(('#', winnow::token::rest)).parse_next(input)?;
    Ok(words)
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
    // `-xK` is `-x -K`, `-n4` is `-n 4`; `-oo`, `-Jd`, `-Is` are
    // options of their own (see [`crate::getopt`]).
    // Its options, and which of them this allot acts on, are its table's.
    let table = &crate::lsf_commands::BSUB;
    let args = &table.split(args).map_err(|name| match table.not_known.contains(&name.as_str()) {
        true => BsubError::NotKnown(name),
        false => BsubError::UnknownOption(name),
    })?;
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
        let Some(opt) = table.option(arg) else {
            return Err(BsubError::UnknownOption(arg.to_string()));
        };
        if opt.value.is_none() {
            match arg {
                _ if !opt.supported => o.other.push((arg.to_string(), None)),
                "-x" => o.exclusive = true,
                "-hl" => o.host_mem_limit = true,
                "-K" => o.wait = true,
                "-r" => o.rerunnable = Some(true),
                "-rn" => o.rerunnable = Some(false),
                "-ar" => o.auto_resize = true,
                "-H" => o.hold = true,
                "-B" => o.mail_begin = true,
                "-I" => o.interactive = Some(InteractiveMode::Plain),
                "-Ip" => o.interactive = Some(InteractiveMode::Pty),
                "-Is" => o.interactive = Some(InteractiveMode::Shell),
                "-N" => o.mail_end = true,
                _ => o.other.push((arg.to_string(), None)),
            }
            i += 1;
            continue;
        }
        let value = args.get(i + 1).ok_or_else(|| BsubError::MissingValue(arg.to_string()))?.clone();
        match arg {
            _ if !opt.supported => o.other.push((arg.to_string(), Some(value))),
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
            "-c" => {
                let limit = value.split_once('/').map_or(value.as_str(), |(l, _)| l);
                o.cpu_limit = Some(run_limit(limit).ok_or_else(|| BsubError::BadCpuLimit(value.clone()))?);
            }
            "-t" => o.term_time = Some(TermTime::parse(&value)?),
            "-b" => o.begin_time = Some(TermTime::parse(&value).map_err(|_| BsubError::BadBeginTime(value.clone()))?),
            "-G" => o.group = Some(value),
            "-app" => o.app = Some(value),
            "-qos" => o.qos = Some(value),
            "-uf" => {
                let f =
                    value.parse::<f64>().ok().filter(|&f| allot_engine::multifactor::priority::valid_user_factor(f));
                o.user_factor = Some(f.ok_or_else(|| BsubError::BadUserFactor(value.clone()))?);
            }
            "-P" => o.project = Some(value),
            "-g" => {
                allot_engine::job_groups::check_path(&value).map_err(|e| BsubError::BadJobGroup(e.to_string()))?;
                o.job_group = Some(value)
            }
            "-J" => o.name = Some(value),
            "-R" => o.res_req.push(value),
            "-m" => o.hosts = Some(value),
            "-o" | "-oo" => o.output = Some((value, arg == "-oo")),
            "-e" | "-eo" => o.error = Some((value, arg == "-eo")),
            "-M" => {
                mem_limit_kb(&value, "KB")?;
                o.mem_limit = Some(value);
            }
            "-C" | "-D" | "-F" | "-S" | "-v" => {
                let option = PROCESS_LIMITS.into_iter().find(|&p| p == arg).unwrap_or("-C");
                size_limit_kb(option, &value, "KB")?;
                o.process_limits.retain(|(p, _)| *p != option);
                o.process_limits.push((option, value));
            }
            "-wa" => o.warning_action = Some(value),
            "-E" => o.pre_exec = Some(value),
            "-u" if !mail_user_valid(&value) => return Err(BsubError::BadMailUser(value)),
            "-u" => o.mail_user = Some(value),
            "-Ep" => o.post_exec = Some(value),
            "-Jd" => {
                let n = value.chars().count();
                if n > MAX_DESCRIPTION {
                    return Err(BsubError::LongDescription(n));
                }
                o.description = Some(value)
            }
            "-env" => {
                let parsed = crate::env_option::EnvOption::parse(&value)
                    .map_err(|e| BsubError::BadEnv { column: e.offset + 1, message: e.message })?;
                o.env = Some(parsed);
            }
            "-rnc" => o.resize_notify = Some(value),
            "-i" => o.input = Some(value),
            "-L" => {
                if !value.starts_with('/') {
                    return Err(BsubError::LoginShell(value));
                }
                o.login_shell = Some(value)
            }
            "-wt" => o.warning_time = Some(run_limit(&value).ok_or_else(|| BsubError::BadWarningTime(value.clone()))?),
            _ => o.other.push((arg.to_string(), Some(value))),
        }
        i += 2;
    }
    o.command = args[i..].to_vec();
    Ok(o)
}

/// Whether `-u`'s address may go to the mail program, which takes it as
/// an argument: never as one of its options, nor as several words.
pub fn mail_user_valid(to: &str) -> bool {
    !to.is_empty() && !to.starts_with('-') && !to.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// A time read on the local clock (seconds since the epoch as if the
/// local date were UTC's) back in UTC, with the zone's offset at that time
/// (summer time may differ from now's): `bsub -t`/`-b`, `bacct`'s windows.
pub fn utc_of_local(local: u64, now: u64, offset: &dyn Fn(u64) -> i64) -> u64 {
    let guess = local.saturating_add_signed(-offset(now));
    local.saturating_add_signed(-offset(guess))
}

/// The unit of limits given without one, as LSF's commands find it:
/// `LSF_UNIT_FOR_LIMITS` of their environment (`from_env`), else of the
/// `lsf.conf` in `envdir` (LSF_ENVDIR), else KB.
pub fn limits_unit(from_env: Option<String>, envdir: Option<&std::path::Path>) -> String {
    let of_conf = || {
        let text = std::fs::read_to_string(envdir?.join("lsf.conf")).ok()?;
        crate::load::lsf_conf_value(&text, "LSF_UNIT_FOR_LIMITS")
    };
    from_env.filter(|u| !u.is_empty()).or_else(|| of_conf().filter(|u| !u.is_empty())).unwrap_or_else(|| "KB".into())
}

/// `-M`'s limit in KB: a number in `default_unit` (LSF_UNIT_FOR_LIMITS:
/// `KB`, `MB`, `GB`, `TB`, `PB`, `EB`), or with its own unit (`10GB`,
/// `512M`).
pub fn mem_limit_kb(v: &str, default_unit: &str) -> Result<u64, BsubError> {
    match size_limit_kb("-M", v, default_unit)? {
        0 => Err(BsubError::BadSizeLimit { option: "-M", value: v.to_string() }),
        kb => Ok(kb),
    }
}

/// A size limit in KB (`-M`, `-C`, `-D`, `-F`, `-S`, `-v`), as
/// [`mem_limit_kb`] reads it, where 0 is a limit too (`-C 0`: no core
/// files); an error names `option`.
pub fn size_limit_kb(option: &'static str, v: &str, default_unit: &str) -> Result<u64, BsubError> {
    let bad = || BsubError::BadSizeLimit { option, value: v.to_string() };
    let split = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
    let (number, unit) = v.split_at(split);
    let amount: f64 = number.trim().parse().map_err(|_| bad())?;
    let unit = if unit.is_empty() { default_unit } else { unit };
    let scale = match unit.to_ascii_uppercase().trim_end_matches('B') {
        "K" => 1.0,
        "M" => 1024.0,
        "G" => 1024.0 * 1024.0,
        "T" => 1024.0 * 1024.0 * 1024.0,
        "P" => 1024f64.powi(4),
        "E" => 1024f64.powi(5),
        _ => return Err(bad()),
    };
    let kb = amount * scale;
    if !kb.is_finite() || kb < 0.0 || kb > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(kb.ceil() as u64)
}

/// The longest `-Jd` LSF takes.
pub const MAX_DESCRIPTION: usize = 4094;

/// The `#BSUB` lines of a job script, as options: each line's words after
/// `#BSUB` are options as `bsub` takes them (anywhere in the script, as
/// LSF reads them); an error names the script's line.
pub fn script_directives(script: &str) -> Result<BsubOptions, BsubError> {
    let mut words = Vec::new();
    for (i, line) in script.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("#BSUB") else { continue };
        if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
            continue;
        }
        let located = |error| BsubError::Script { line: i + 1, error: Box::new(error) };
        let line_words = parse_all(directive_words, rest)
            .map_err(|e| BsubError::Quoting { column: e.offset + 1, message: e.message })
            .map_err(located)?;
        // Each line alone, so its own error names its line.
        let parsed = parse(&line_words).map_err(located)?;
        if !parsed.command.is_empty() {
            let error = BsubError::UnknownOption(parsed.command.join(" "));
            return Err(located(error));
        }
        words.extend(line_words);
    }
    parse(&words)
}

impl BsubOptions {
    /// These options (the command line's), with what they leave unset
    /// taken from `script` (its `#BSUB` lines): the command line wins.
    pub fn or_script(self, script: BsubOptions) -> BsubOptions {
        BsubOptions {
            slots: self.slots.or(script.slots),
            queue: self.queue.or(script.queue),
            run_limit: self.run_limit.or(script.run_limit),
            group: self.group.or(script.group),
            project: self.project.or(script.project),
            job_group: self.job_group.or(script.job_group),
            name: self.name.or(script.name),
            res_req: if self.res_req.is_empty() { script.res_req } else { self.res_req },
            hosts: self.hosts.or(script.hosts),
            output: self.output.or(script.output),
            error: self.error.or(script.error),
            exclusive: self.exclusive || script.exclusive,
            host_mem_limit: self.host_mem_limit || script.host_mem_limit,
            app: self.app.or(script.app),
            cwd: self.cwd.or(script.cwd),
            wait: self.wait || script.wait,
            estimated_run_time: self.estimated_run_time.or(script.estimated_run_time),
            depends: self.depends.or(script.depends),
            priority: self.priority.or(script.priority),
            cpu_limit: self.cpu_limit.or(script.cpu_limit),
            term_time: self.term_time.or(script.term_time),
            qos: self.qos.or(script.qos),
            user_factor: self.user_factor.or(script.user_factor),
            mem_limit: self.mem_limit.or(script.mem_limit),
            env: self.env.or(script.env),
            pre_exec: self.pre_exec.or(script.pre_exec),
            mail_begin: self.mail_begin || script.mail_begin,
            mail_end: self.mail_end || script.mail_end,
            mail_user: self.mail_user.or(script.mail_user),
            post_exec: self.post_exec.or(script.post_exec),
            description: self.description.or(script.description),
            login_shell: self.login_shell.or(script.login_shell),
            process_limits: {
                let mut limits = script.process_limits;
                limits.retain(|(p, _)| self.process_limits.iter().all(|(q, _)| q != p));
                limits.extend(self.process_limits);
                limits
            },
            warning_action: self.warning_action.or(script.warning_action),
            warning_time: self.warning_time.or(script.warning_time),
            rerunnable: self.rerunnable.or(script.rerunnable),
            auto_resize: self.auto_resize || script.auto_resize,
            interactive: self.interactive.or(script.interactive),
            input: self.input.or(script.input),
            hold: self.hold || script.hold,
            begin_time: self.begin_time.or(script.begin_time),
            resize_notify: self.resize_notify.or(script.resize_notify),
            other: self.other.into_iter().chain(script.other).collect(),
            command: self.command,
        }
    }
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

/// `bsub -t [[[year:]month:]day:]hour:minute`: the fields given, the
/// others to be taken from the date of submission, in the local time zone
/// (see [`TermTime::resolve_in`]; the simulator's clock is UTC).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TermTime {
    /// As written.
    pub text: String,
    pub year: Option<i64>,
    pub month: Option<u32>,
    pub day: Option<u32>,
    pub hour: u32,
    pub minute: u32,
}

impl TermTime {
    fn parse(v: &str) -> Result<TermTime, BsubError> {
        let bad = || BsubError::BadTermTime(v.to_string());
        let fields: Vec<u32> = v.split(':').map(|f| f.parse::<u32>().map_err(|_| bad())).collect::<Result<_, _>>()?;
        let Some((date, &[hour, minute])) = fields.len().checked_sub(2).map(|n| fields.split_at(n)) else {
            return Err(bad());
        };
        let (year, month, day) = match *date {
            [] => (None, None, None),
            [d] => (None, None, Some(d)),
            [m, d] => (None, Some(m), Some(d)),
            [y, m, d] => (Some(i64::from(y)), Some(m), Some(d)),
            _ => return Err(bad()),
        };
        let in_range = hour <= 23
            && minute <= 59
            && month.is_none_or(|m| (1..=12).contains(&m))
            && day.is_none_or(|d| (1..=31).contains(&d))
            && year.is_none_or(|y| y >= 1970);
        if !in_range {
            return Err(bad());
        }
        Ok(TermTime { text: v.to_string(), year, month, day, hour, minute })
    }

    /// The deadline in seconds since the epoch, for a submission at `now`:
    /// the fields not given are now's; a time already past moves on to
    /// the next day, month or year, whichever is the first field not
    /// given (LSF's reading). With every field given, a past time is an
    /// error, as is a day the month does not have.
    pub fn resolve(&self, now: u64) -> Result<u64, BsubError> {
        self.resolve_in(now, &|_| 0)
    }

    /// [`TermTime::resolve`] on a local clock: `offset` is the local time
    /// zone's offset from UTC, in seconds east, at a moment (seconds since
    /// the epoch). The fields are local time, as `date` shows it, as in
    /// LSF.
    pub fn resolve_in(&self, now: u64, offset: &dyn Fn(u64) -> i64) -> Result<u64, BsubError> {
        let local_now = now.saturating_add_signed(offset(now));
        let at = utc_of_local(self.resolve_utc(local_now)?, now, offset);
        if at <= now {
            return Err(BsubError::PastTermTime(self.text.clone()));
        }
        Ok(at)
    }

    fn resolve_utc(&self, now: u64) -> Result<u64, BsubError> {
        let written = &self.text;
        let (y, m, d) = civil_from_days((now / 86_400) as i64);
        let at = |y: i64, m: u32, d: u32| -> Option<u64> {
            (d <= days_in_month(y, m)).then(|| {
                (days_from_civil(y, m, d) * 86_400) as u64 + u64::from(self.hour) * 3600 + u64::from(self.minute) * 60
            })
        };
        let past = || BsubError::PastTermTime(written.to_string());
        let bad = || BsubError::BadTermTime(written.to_string());
        let (year, month, day) = (self.year.unwrap_or(y), self.month.unwrap_or(m), self.day.unwrap_or(d));
        if let Some(t) = at(year, month, day).filter(|&t| t > now) {
            return Ok(t);
        }
        // Past (or no such day this month): the next period that has it.
        let next = match (self.year, self.month, self.day) {
            (Some(_), ..) => return Err(if at(year, month, day).is_some() { past() } else { bad() }),
            (None, Some(_), _) => (1..=8).map(|k| (year + k, month, day)).find_map(|(y, m, d)| at(y, m, d)),
            (None, None, Some(_)) => (1..=24)
                .map(|k| {
                    let months = i64::from(month - 1) + k;
                    (year + months.div_euclid(12), (months.rem_euclid(12) + 1) as u32, day)
                })
                .find_map(|(y, m, d)| at(y, m, d)),
            (None, None, None) => at(year, month, day).map(|t| t + 86_400),
        };
        next.filter(|&t| t > now).ok_or_else(bad)
    }
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
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

    /// 2026-11-22 10:30:00 UTC, a Sunday.
    const NOW: u64 = 1_795_343_400;

    fn deadline(v: &str) -> Result<u64, BsubError> {
        let o = parse_line(&format!("-t {v} ./app"))?;
        o.term_time.expect("-t parsed").resolve(NOW)
    }

    #[test]
    fn cpu_limits_and_termination_deadlines() {
        assert_eq!(civil_from_days((NOW / 86_400) as i64), (2026, 11, 22), "the test's clock");
        let o = parse_line("-c 1:30/hostA -n 4 ./app").expect("valid");
        assert_eq!(o.cpu_limit, Some(5400), "the host to normalize by changes nothing");
        assert_eq!(parse_line("-c 45 ./app").expect("valid").cpu_limit, Some(2700));
        assert!(matches!(parse_line("-c soon ./app"), Err(BsubError::BadCpuLimit(_))));

        let today = NOW - NOW % 86_400;
        assert_eq!(deadline("12:00"), Ok(today + 12 * 3600), "later today");
        assert_eq!(deadline("9:15"), Ok(today + 86_400 + 9 * 3600 + 15 * 60), "past today: tomorrow");
        assert_eq!(deadline("30:08:00"), Ok(today + 8 * 86_400 + 8 * 3600), "day 30 of this month");
        assert_eq!(deadline("21:08:00"), Ok(days_from_civil(2026, 12, 21) as u64 * 86_400 + 8 * 3600), "next month");
        assert_eq!(deadline("2:29:0:0"), Ok(days_from_civil(2028, 2, 29) as u64 * 86_400), "the next 29 February");
        assert_eq!(deadline("2027:1:1:0:0"), Ok(days_from_civil(2027, 1, 1) as u64 * 86_400));
        assert_eq!(deadline("2026:11:22:10:00"), Err(BsubError::PastTermTime("2026:11:22:10:00".into())));
        for bad in ["10", "24:00", "12:60", "13:1:12:00", "1:2:3:4:5:6", "2027:2:30:0:0", "noon"] {
            assert!(matches!(deadline(bad), Err(BsubError::BadTermTime(_))), "{bad}");
        }
    }

    #[test]
    fn rerunnable_and_not_and_the_queues_rerunnable() {
        assert_eq!(parse_line("-r ./app").expect("valid").rerunnable, Some(true));
        assert_eq!(parse_line("-rn ./app").expect("valid").rerunnable, Some(false));
        assert_eq!(parse_line("./app").expect("valid").rerunnable, None);
        let queues = "Begin Queue\nQUEUE_NAME = a\nRERUNNABLE = Y\nEnd Queue\nBegin Queue\nQUEUE_NAME = b\nEnd Queue\n";
        let (config, _) = crate::load::load_texts(&[("lsb.queues".to_string(), queues.to_string())]).expect("loads");
        let rerun: Vec<bool> = config.queues.iter().map(|q| q.rerunnable).collect();
        assert_eq!(rerun, [true, false]);
        let bad = "Begin Queue\nQUEUE_NAME = a\nRERUNNABLE = maybe\nEnd Queue\n";
        let e = crate::load::load_texts(&[("lsb.queues".to_string(), bad.to_string())]).expect_err("refused");
        assert!(e.to_string().contains("lsb.queues:3:"), "{e}");
    }

    #[test]
    fn begin_time_and_hold() {
        let o = parse_line("-H -b 2026:12:24:18:00 ./app").expect("valid");
        assert!(o.hold);
        assert_eq!(o.begin_time.map(|b| b.resolve(NOW)), Some(Ok(1_798_135_200)));
        assert_eq!(parse_line("-b soon ./app").expect_err("bad"), BsubError::BadBeginTime("soon".into()));
        assert_eq!(BsubError::PastBeginTime("1:00".into()).to_string(), "-b 1:00: the time is in the past");
    }

    #[test]
    fn autoresizable_and_its_notification_command() {
        let o = parse_line(r#"-n 4,10 -ar -rnc "/bin/notify -v" ./app"#).expect("valid");
        assert!(o.auto_resize);
        assert_eq!(o.resize_notify.as_deref(), Some("/bin/notify -v"));
        assert_eq!(o.command, ["./app"]);
        let o = parse_line("./app").expect("valid");
        assert!(!o.auto_resize && o.resize_notify.is_none());
        assert_eq!(parse_line("-rnc").expect_err("no command"), BsubError::MissingValue("-rnc".into()));
    }

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
        assert_eq!(parse_line("-uf 1.5 x"), Err(BsubError::BadUserFactor("1.5".into())));
        assert_eq!(parse_line("-uf lots x"), Err(BsubError::BadUserFactor("lots".into())));
        let o = parse_line("-qos standby -uf 0.25 x").expect("parses");
        assert_eq!((o.qos.as_deref(), o.user_factor), (Some("standby"), Some(0.25)));
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

#[cfg(test)]
#[path = "bsub_script_tests.rs"]
mod script_tests;

#[cfg(test)]
mod unit_tests {
    use super::*;

    #[test]
    fn the_unit_of_limits_comes_from_the_environment_then_lsf_conf_then_kb() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(limits_unit(None, Some(dir.path())), "KB", "no lsf.conf");
        std::fs::write(dir.path().join("lsf.conf"), "LSF_UNIT_FOR_LIMITS=MB\n").expect("lsf.conf");
        assert_eq!(limits_unit(None, Some(dir.path())), "MB");
        assert_eq!(limits_unit(Some("GB".into()), Some(dir.path())), "GB", "the environment first");
        assert_eq!(limits_unit(Some(String::new()), Some(dir.path())), "MB", "set empty is unset");
        assert_eq!(limits_unit(None, None), "KB");
        assert_eq!(mem_limit_kb("2", &limits_unit(None, Some(dir.path()))).expect("2 MB"), 2048);
    }
}
