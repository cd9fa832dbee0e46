//! User text shown on a terminal or put in a mail: a job's name, project,
//! command, working directory and paths come from whoever submitted it,
//! and reach an administrator's terminal (`bjobs -u all`, `bhist`) and
//! mailbox (the job's mail). Shown as `ls -b` shows a file name: each
//! control character escaped (`\n`, `\t`, `\r`, `\e`... and `\ooo` in
//! octal for the others, a C1 control by its UTF-8 bytes), so that no
//! text can move the cursor, retitle a window, forge a line or add a mail
//! header. Every other character, a backslash included, shows as it is.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control character escaped: for what is shown on one
/// line (a name, a path, a mail header's value).
pub fn escaped(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// `text` with every control character but the newline and the tab
/// escaped: for what is shown as lines (a job's script in its report).
pub fn escaped_lines(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn is_control(c: char) -> bool {
    c.is_control()
}

fn escape(text: &str, keep_lines: bool) -> Cow<'_, str> {
    let kept = |c: char| keep_lines && (c == '\n' || c == '\t');
    if !text.chars().any(|c| is_control(c) && !kept(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !is_control(c) || kept(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x1b' => out.push_str("\\e"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            other => {
                let mut bytes = [0u8; 4];
                for b in other.encode_utf8(&mut bytes).bytes() {
                    let _ = write!(out, "\\{b:03o}");
                }
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_show_escaped_and_nothing_else_changes() {
        assert!(matches!(escaped("sim run 3 ~/a\\b ünï"), Cow::Borrowed(_)));
        assert_eq!(
            escaped("x\n1 alice RUN\rEvil\x1b]0;title\x07\x00\u{9b}2J"),
            "x\\n1 alice RUN\\rEvil\\e]0;title\\a\\000\\302\\2332J"
        );
        assert_eq!(escaped("a\tb\x7f"), "a\\tb\\177");
        assert_eq!(escaped_lines("#!/bin/sh\n\techo hi\x1b[2J\n"), "#!/bin/sh\n\techo hi\\e[2J\n");
    }
}
