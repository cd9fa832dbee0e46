//! Helpers the file readers share: parse a value where it stands and report
//! a located error when it does not parse.

use winnow::Parser;
use winnow::error::{ContextError, ErrMode};

use super::text::{Line, offset_in};
use super::values::parse_all;
use crate::diag::{Diagnostics, Location};

/// Parses `value`, a slice of `line`, with `p`; on failure reports
/// `what: <expected>` at the failing column and returns `None`.
pub fn value<'a, O>(
    diags: &mut Diagnostics,
    line: &Line,
    what: &str,
    value: &'a str,
    p: impl Parser<&'a str, O, ErrMode<ContextError>>,
) -> Option<O> {
    match parse_all(p, value) {
        Ok(v) => Some(v),
        Err(e) => {
            diags.error(line.loc(offset_in(&line.text, value) + e.offset), format!("{what}: {}", e.message));
            None
        }
    }
}

/// Location of `part` (a slice of `line`).
pub fn at(line: &Line, part: &str) -> Location {
    line.loc_of(part)
}
