//! A bound on how deep an expression may nest, checked before it is
//! parsed: the expression grammars (`-w` dependencies, `-R` and RES_REQ
//! selections) are parsed, evaluated and dropped by recursion, so without
//! a bound a string of a few kilobytes (7,000 `(`, or 20,000 `!`) would
//! overflow the stack of whatever reads it, allotd included.
//!
//! The depth counted is what the parsers recurse through: each open
//! parenthesis or bracket is a level, and so is each `!` before the
//! operand it negates (`!!!a` is three). Quoted text (`'...'`, `"..."`)
//! counts nothing. LSF documents no limit; [`MAX_NESTING`] is far beyond
//! anything written by hand or generated sensibly.

use crate::lsf::values::ValueError;

/// The deepest an expression may nest.
pub const MAX_NESTING: usize = 100;

/// `Ok` when `text` nests at most `limit` deep; else an error at the
/// offset where it went deeper.
pub fn check(text: &str, limit: usize) -> Result<(), ValueError> {
    // Per open level: the `!`s waiting for their operand in it.
    let mut levels: Vec<usize> = vec![0];
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (at, c) in text.char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' | '[' => {
                levels.push(0);
                depth += 1;
            }
            ')' | ']' => {
                // An unbalanced close is the parser's to report.
                if levels.len() > 1 {
                    depth -= 1 + levels.pop().unwrap_or(0);
                }
            }
            // Not `!=`: a comparison, not a negation.
            '!' if !text[at + 1..].starts_with('=') => {
                if let Some(bangs) = levels.last_mut() {
                    *bangs += 1;
                }
                depth += 1;
            }
            c if c.is_whitespace() => continue,
            _ => {
                // An operand (or an operator) ends the `!`s before it.
                if let Some(bangs) = levels.last_mut() {
                    depth -= std::mem::take(bangs);
                }
            }
        }
        if depth > limit {
            return Err(ValueError {
                offset: at,
                message: format!("the expression nests deeper than {limit} levels (parentheses, brackets and `!`)"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_brackets_and_pending_negations() {
        assert_eq!(check("((a))", 2), Ok(()));
        assert_eq!(check("(((a)))", 2).map_err(|e| e.offset), Err(2));
        assert_eq!(check("!!a && !!b", 2), Ok(()), "each operand ends its own `!`s");
        assert_eq!(check("!!!a", 2).map_err(|e| e.offset), Err(2));
        assert_eq!(check("!(!(a))", 4), Ok(()));
        assert_eq!(check("!(!(a))", 3).map_err(|e| e.offset), Err(3));
        assert_eq!(check("a != b && c != d", 0), Ok(()), "`!=` is no negation");
        assert_eq!(check("name == '((((((' ", 1), Ok(()), "quoted text counts nothing");
        assert_eq!(check("))))((", 2), Ok(()), "unbalanced: the parser's to say");
    }
}
