//! `bsub -J` job names and job arrays, and the index lists of job
//! references such as `bkill "123[1-5]"`:
//!
//! ```text
//! job name   := name                              (no `[`: a plain job name)
//!             | array "[" list "]" ["%" limit]    (a job array)
//! array      := [a-zA-Z0-9._-]*
//! list       := range ("," range)*
//! range      := start ["-" end [":" step]]
//! ```
//!
//! Indices are whole numbers from 1 to MAX_JOB_ARRAY_SIZE, each at most
//! once; an array has at most MAX_JOB_ARRAY_SIZE of them; a range runs
//! from `start` by `step` (1 unless given) and does not pass `end`. The
//! elements of an array are kept in index order, whatever the order of the
//! ranges: they are dispatched in that order. `%limit` is how many
//! elements may run at once (at least 1).

use winnow::ModalResult;
use winnow::ascii::{dec_uint, multispace0};
use winnow::combinator::{cut_err, delimited, opt, preceded, separated};
use winnow::error::{StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::token::take_while;

use crate::lsf::values::{ValueError, parse_all};

/// LSF's default MAX_JOB_ARRAY_SIZE.
pub const DEFAULT_MAX_ARRAY_SIZE: u32 = 1000;

/// A `-J` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobName {
    /// The job's name; an array's name without its index list.
    pub name: String,
    pub array: Option<JobArray>,
}

/// The index list of a job array and its running element limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobArray {
    /// The index list as written (between the brackets), for `bjobs -A`.
    pub spec: String,
    /// The indices in ascending order.
    pub indices: Vec<u32>,
    /// `%limit`.
    pub limit: Option<u32>,
}

/// A range as written, with where it starts in the text.
struct Range {
    at: usize,
    start: u32,
    end: u32,
    step: u32,
}

fn expected(what: &'static str) -> StrContext {
    StrContext::Expected(StrContextValue::Description(what))
}

fn number(input: &mut &str) -> ModalResult<u32> {
    delimited(multispace0, dec_uint, multispace0).context(expected("a whole number")).parse_next(input)
}

fn ranges(full: &str) -> impl FnMut(&mut &str) -> ModalResult<Vec<Range>> + '_ {
    move |input: &mut &str| {
        separated(
            1..,
            |input: &mut &str| {
                multispace0.parse_next(input)?;
                let at = full.len() - input.len();
                let start = number.parse_next(input)?;
                let end = opt(preceded('-', cut_err(number))).parse_next(input)?;
                let step = match end {
                    Some(_) => opt(preceded(':', cut_err(number))).parse_next(input)?,
                    None => None,
                };
                Ok(Range { at, start, end: end.unwrap_or(start), step: step.unwrap_or(1) })
            },
            ',',
        )
        .parse_next(input)
    }
}

/// How large indices and lists may be, and what sets the bound.
#[derive(Clone, Copy)]
struct Bounds {
    index: u32,
    count: u32,
    by: &'static str,
}

impl Bounds {
    fn array(max: u32) -> Self {
        Bounds { index: max, count: max, by: "MAX_JOB_ARRAY_SIZE" }
    }
}

/// The most indices one job reference names (`123[1-1000000]`): enough for
/// any array LSF allows to be addressed in parts; a whole array is named by
/// its id alone.
pub const MAX_REF_INDICES: u32 = 1_000_000;

/// LSF's largest MAX_JOB_ARRAY_SIZE, so the largest index there can be.
pub const MAX_INDEX: u32 = 2_147_483_646;

/// The indices of ranges, checked against the rules (module docs).
fn expand(ranges: &[Range], bounds: Bounds) -> Result<Vec<u32>, ValueError> {
    let Bounds { index: max, count: max_count, by } = bounds;
    let err = |at: usize, message: String| ValueError { offset: at, message };
    let mut out = Vec::new();
    for r in ranges {
        if r.start == 0 {
            return Err(err(r.at, "array indices start at 1".into()));
        }
        if r.end < r.start {
            return Err(err(r.at, format!("range {}-{} ends before it starts", r.start, r.end)));
        }
        if r.step == 0 {
            return Err(err(r.at, "a range's step is at least 1".into()));
        }
        if r.end > max {
            return Err(err(r.at, format!("index {} is more than {by} ({max})", r.end)));
        }
        let count = (r.end - r.start) / r.step + 1;
        if out.len() as u64 + u64::from(count) > u64::from(max_count) {
            return Err(err(r.at, format!("more than {max_count} indices ({by})")));
        }
        out.extend((r.start..=r.end).step_by(r.step as usize));
    }
    let mut sorted = out.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        let at = ranges.iter().rev().find(|r| r.start <= w[0] && w[0] <= r.end).map_or(0, |r| r.at);
        return Err(err(at, format!("index {} appears more than once", w[0])));
    }
    Ok(sorted)
}

/// Parses a `-J` value; an array's indices may not exceed `max`
/// (MAX_JOB_ARRAY_SIZE). Errors have the offset of the problem.
pub fn parse_job_name(text: &str, max: u32) -> Result<JobName, ValueError> {
    let Some(open) = text.find('[') else {
        return Ok(JobName { name: text.to_string(), array: None });
    };
    let name = &text[..open];
    if let Some((at, c)) = name.char_indices().find(|&(_, c)| !(c.is_ascii_alphanumeric() || "._-".contains(c))) {
        return Err(ValueError {
            offset: at,
            message: format!("a job array's name has letters, digits, `.`, `-` and `_`, found `{c}`"),
        });
    }
    let body = &text[open..];
    let (list, limit) = parse_all(
        |input: &mut &str| {
            '['.parse_next(input)?;
            let inner_start = input.len();
            let rs = cut_err(ranges(body)).parse_next(input)?;
            let spec_len = inner_start - input.len();
            cut_err(']').context(expected("`,` or `]`")).parse_next(input)?;
            let limit =
                opt(preceded('%', cut_err(number.context(expected("a running element limit"))))).parse_next(input)?;
            Ok(((rs, spec_len), limit))
        },
        body,
    )
    .map_err(|e| ValueError { offset: e.offset + open, ..e })?;
    let ((rs, spec_len), limit) = (list, limit);
    let indices = expand(&rs, Bounds::array(max)).map_err(|e| ValueError { offset: e.offset + open, ..e })?;
    if limit == Some(0) {
        return Err(ValueError { offset: text.len() - 1, message: "a running element limit is at least 1".into() });
    }
    Ok(JobName {
        name: name.to_string(),
        array: Some(JobArray { spec: body[1..1 + spec_len].trim().to_string(), indices, limit }),
    })
}

/// The indices of an index list as a job array's record keeps it (the
/// text between the brackets), checked against nothing but the largest
/// index: its size was checked when the array was submitted.
pub fn indices_of(spec: &str) -> Result<Vec<u32>, ValueError> {
    let bounds = Bounds { index: MAX_INDEX, count: MAX_INDEX, by: "the largest index" };
    parse_all(ranges(spec), spec).and_then(|rs| expand(&rs, bounds))
}

/// A job as a command names it: `123`, or `123[4]`, or `123[1-5,7]`
/// (at most [`MAX_REF_INDICES`] indices).
pub fn parse_job_ref(text: &str) -> Result<(u64, Vec<u32>), ValueError> {
    let digits = take_while(1.., |c: char| c.is_ascii_digit());
    let (id_text, rest) = match text.find('[') {
        Some(open) => (&text[..open], Some(&text[open..])),
        None => (text, None),
    };
    let id: u64 = parse_all(digits.try_map(str::parse::<u64>), id_text)?;
    let Some(rest) = rest else { return Ok((id, Vec::new())) };
    let open = id_text.len();
    let inner = rest
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or(ValueError { offset: text.len(), message: "expected `]` at the end".into() })?;
    let bounds = Bounds { index: MAX_INDEX, count: MAX_REF_INDICES, by: "one job reference" };
    let indices = parse_all(ranges(inner), inner)
        .and_then(|rs| expand(&rs, bounds))
        .map_err(|e| ValueError { offset: e.offset + open + 1, ..e })?;
    Ok((id, indices))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(text: &str) -> JobArray {
        parse_job_name(text, 1000).expect(text).array.expect("an array")
    }

    #[test]
    fn plain_names_are_not_arrays() {
        assert_eq!(parse_job_name("my job%5", 1000), Ok(JobName { name: "my job%5".into(), array: None }));
    }

    #[test]
    fn ranges_steps_and_lists() {
        let a = array("myArray[1-10:2]%5");
        assert_eq!(a.indices, [1, 3, 5, 7, 9]);
        assert_eq!((a.spec.as_str(), a.limit), ("1-10:2", Some(5)));
        assert_eq!(array("a[1,2,3,4,5]").indices, array("a[1-5]").indices);
        assert_eq!(array("a[20-30:5, 1-3]").indices, [1, 2, 3, 20, 25, 30], "kept in index order");
        assert_eq!(array("a[7]").indices, [7]);
        assert_eq!(indices_of(&array("a[20-30:5, 1-3]").spec).expect("valid"), [1, 2, 3, 20, 25, 30]);
        assert_eq!(array("[1-2]").indices, [1, 2]);
        assert_eq!(parse_job_name("x.y-z_1[1-2]", 1000).map(|n| n.name), Ok("x.y-z_1".into()));
    }

    #[test]
    fn the_rules_with_where_they_are_broken() {
        let err = |s: &str, max| parse_job_name(s, max).expect_err(s);
        assert_eq!(err("a[0-3]", 1000).offset, 2);
        assert!(err("a[0-3]", 1000).message.contains("start at 1"));
        assert_eq!(err("a[1-3,5-2]", 1000).offset, 6);
        assert_eq!(err("a[1-3:0]", 1000).offset, 2);
        let big = err("a[1-1001]", 1000);
        assert!(big.message.contains("MAX_JOB_ARRAY_SIZE (1000)"), "{}", big.message);
        assert_eq!(err("a[1-5,8-12]", 10).offset, 6);
        assert!(err("a[1-5,3]", 1000).message.contains("index 3 appears more than once"));
        assert_eq!(err("a[1-5", 1000).offset, 5);
        assert_eq!(err("a[]", 1000).offset, 2);
        assert_eq!(err("a[1]%", 1000).offset, 5);
        assert!(err("a[1]%0", 1000).message.contains("at least 1"));
        assert_eq!(err("my array[1]", 1000).offset, 2);
        assert_eq!(err("a[1-3]x", 1000).offset, 6);
        assert_eq!(parse_job_name("a[1-10]", 10).map(|n| n.array.map(|a| a.indices.len())), Ok(Some(10)));
    }

    #[test]
    fn job_references() {
        assert_eq!(parse_job_ref("123"), Ok((123, vec![])));
        assert_eq!(parse_job_ref("123[4]"), Ok((123, vec![4])));
        assert_eq!(parse_job_ref("123[1-3,7]"), Ok((123, vec![1, 2, 3, 7])));
        assert_eq!(parse_job_ref("12x").map_err(|e| e.offset), Err(2));
        assert_eq!(parse_job_ref("12[0]").map_err(|e| e.offset), Err(3));
        assert!(parse_job_ref("12[1").is_err());
        assert!(parse_job_ref("12[1-2000000]").expect_err("too many").message.contains("1000000 indices"));
        assert_eq!(parse_job_ref("12[2000000000]"), Ok((12, vec![2_000_000_000])));
    }
}
