//! The shape shared by LSF's configuration files: logical lines (a line
//! ending in `\` continues on the next), `#` comments, and sections between
//! `Begin Name` and `End Name` (any case). A section holds either
//! `KEY = value` lines or a table: a header line of column names, then one
//! row per line whose fields are words, `(...)` lists or `"..."` strings.

use winnow::ascii::{multispace0, multispace1, till_line_ending};
use winnow::combinator::{alt, delimited, opt, preceded, repeat, terminated};
use winnow::error::{ContextError, StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::token::{take_till, take_while};

use crate::diag::{Diagnostics, Location};

/// One configuration file's text and the name diagnostics show for it.
pub struct Source<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

/// A logical line: physical lines joined at `\`, comments removed. Offsets
/// in `text` map back to physical line and column.
#[derive(Clone, Debug)]
pub struct Line {
    pub text: String,
    /// (offset in `text`, physical line, column of that offset).
    pieces: Vec<(usize, u32, u32)>,
    file: String,
}

impl Line {
    /// The location of byte `offset` of the logical line.
    pub fn loc(&self, offset: usize) -> Location {
        let &(start, line, col) = self.pieces.iter().rev().find(|p| p.0 <= offset).unwrap_or(&self.pieces[0]);
        let chars = self.text.get(start..offset.min(self.text.len())).map_or(0, |s| s.chars().count());
        Location { file: self.file.clone(), line, col: col + chars as u32 }
    }

    /// The location of `part`, which must be a slice of `self.text`.
    pub fn loc_of(&self, part: &str) -> Location {
        self.loc(offset_in(&self.text, part))
    }

    pub fn first_line(&self) -> u32 {
        self.pieces[0].1
    }
}

/// Byte offset of `part` within `whole` (`part` is a subslice of `whole`).
pub fn offset_in(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize).min(whole.len())
}

/// Removes a `#` comment outside double quotes.
fn strip_comment(line: &str) -> &str {
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Splits a file into non-empty logical lines.
pub fn logical_lines(src: &Source<'_>) -> Vec<Line> {
    let mut out = Vec::new();
    let mut cur: Option<Line> = None;
    for (idx, raw) in src.text.lines().enumerate() {
        let n = idx as u32 + 1;
        let body = strip_comment(raw);
        let (body, continues) = match body.trim_end().strip_suffix('\\') {
            Some(b) => (b, true),
            None => (body, false),
        };
        let line =
            cur.get_or_insert_with(|| Line { text: String::new(), pieces: Vec::new(), file: src.name.to_string() });
        if !line.text.is_empty() {
            line.text.push(' ');
        }
        line.pieces.push((line.text.len(), n, 1));
        line.text.push_str(body);
        if !continues {
            if let Some(done) = cur.take() {
                if !done.text.trim().is_empty() {
                    out.push(done);
                }
            }
        }
    }
    if let Some(done) = cur.take() {
        if !done.text.trim().is_empty() {
            out.push(done);
        }
    }
    out
}

/// A `Begin Name` ... `End Name` section.
#[derive(Clone, Debug)]
pub struct Section {
    /// The name as written after `Begin`.
    pub name: String,
    pub begin: Line,
    pub lines: Vec<Line>,
}

impl Section {
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }
}

fn begin_end<'a>(input: &mut &'a str) -> winnow::Result<(&'a str, &'a str)> {
    let word = || take_while(1.., |c: char| !c.is_whitespace());
    (delimited(multispace0, word(), multispace1), terminated(word(), multispace0)).parse_next(input)
}

/// Groups the lines of a file into sections; a line outside any section,
/// an `End` without its `Begin` or a section left open is an error.
pub fn sections(src: &Source<'_>, diags: &mut Diagnostics) -> Vec<Section> {
    let mut out = Vec::new();
    let mut open: Option<Section> = None;
    for line in logical_lines(src) {
        let head = begin_end.parse(line.text.as_str()).ok();
        match head {
            Some((kw, name)) if kw.eq_ignore_ascii_case("begin") => {
                if let Some(s) = open.take() {
                    diags.error(s.begin.loc(0), format!("section `{}` has no `End {}`", s.name, s.name));
                }
                open = Some(Section { name: name.to_string(), begin: line, lines: Vec::new() });
            }
            Some((kw, name)) if kw.eq_ignore_ascii_case("end") => match open.take() {
                Some(s) if s.name.eq_ignore_ascii_case(name) => out.push(s),
                Some(s) => {
                    let at = line.loc_of(name_in(&line.text, name));
                    diags.error(at, format!("expected `End {}`, found `End {name}`", s.name));
                    out.push(s);
                }
                None => {
                    diags.error(line.loc(first_non_space(&line.text)), format!("`End {name}` without `Begin {name}`"))
                }
            },
            _ => match open.as_mut() {
                Some(s) => s.lines.push(line),
                None => {
                    let at = line.loc(first_non_space(&line.text));
                    diags.error(at, "expected `Begin <Section>`, found text outside any section");
                }
            },
        }
    }
    if let Some(s) = open {
        diags.error(
            s.begin.loc(first_non_space(&s.begin.text)),
            format!("section `{}` has no `End {}`", s.name, s.name),
        );
    }
    out
}

fn first_non_space(s: &str) -> usize {
    s.len() - s.trim_start().len()
}

fn name_in<'a>(text: &'a str, name: &str) -> &'a str {
    text.rfind(name).map_or(text, |i| &text[i..i + name.len()])
}

/// A `KEY = value` line: the key and the value, both slices of the line.
pub struct KeyValue<'a> {
    pub key: &'a str,
    pub value: &'a str,
}

fn key_value<'a>(input: &mut &'a str) -> winnow::Result<KeyValue<'a>> {
    let key = preceded(
        multispace0,
        take_while(1.., |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '/')
            .context(StrContext::Expected(StrContextValue::Description("a parameter name"))),
    )
    .parse_next(input)?;
    (multispace0, '=').context(StrContext::Expected(StrContextValue::CharLiteral('='))).parse_next(input)?;
    let value = till_line_ending.parse_next(input)?;
    Ok(KeyValue { key, value: value.trim() })
}

/// Reads the `KEY = value` lines of a section; a line of another shape is
/// an error and is skipped.
pub fn key_values<'a>(section: &'a Section, diags: &mut Diagnostics) -> Vec<(&'a Line, KeyValue<'a>)> {
    let mut out = Vec::new();
    for line in &section.lines {
        match key_value.parse(line.text.as_str()) {
            Ok(kv) => out.push((line, kv)),
            Err(e) => {
                let found = line.text[e.offset()..].split_whitespace().next().unwrap_or("end of line");
                diags.error(line.loc(e.offset()), format!("{}, found `{found}`", expected(e.inner())));
            }
        }
    }
    out
}

/// What a winnow error says was expected, as a message fragment.
pub fn expected(e: &ContextError) -> String {
    let what: Vec<String> = e
        .context()
        .filter_map(|c| match c {
            StrContext::Expected(v) => Some(v.to_string()),
            _ => None,
        })
        .collect();
    let label = e.context().find_map(|c| match c {
        StrContext::Label(l) => Some(*l),
        _ => None,
    });
    match (label, what.is_empty()) {
        (Some(l), true) => format!("invalid {l}"),
        (Some(l), false) => format!("{l}: expected {}", what.join(" or ")),
        (None, true) => "unexpected text".to_string(),
        (None, false) => format!("expected {}", what.join(" or ")),
    }
}

/// One field of a table row.
fn field<'a>(input: &mut &'a str) -> winnow::Result<&'a str> {
    alt((
        ('(', take_till(0.., ')'), ')').context(StrContext::Expected(StrContextValue::CharLiteral(')'))).take(),
        ('"', take_till(0.., '"'), '"').context(StrContext::Expected(StrContextValue::CharLiteral('"'))).take(),
        take_while(1.., |c: char| !c.is_whitespace() && c != '(' && c != '"'),
    ))
    .parse_next(input)
}

fn fields<'a>(input: &mut &'a str) -> winnow::Result<Vec<&'a str>> {
    let out = repeat(0.., preceded(multispace0, field)).parse_next(input)?;
    let _ = opt(multispace1).parse_next(input)?;
    Ok(out)
}

/// A table section: its column names (upper-cased) and rows of fields.
pub struct Table<'a> {
    pub columns: Vec<String>,
    pub header: &'a Line,
    pub rows: Vec<Row<'a>>,
}

pub struct Row<'a> {
    pub line: &'a Line,
    pub fields: Vec<&'a str>,
}

impl<'a> Row<'a> {
    /// The field of `column`, if the table has it and the row reaches it.
    pub fn get(&self, table: &Table<'_>, column: &str) -> Option<&'a str> {
        let i = table.columns.iter().position(|c| c == column)?;
        self.fields.get(i).copied()
    }
}

/// Reads a table section: the first line names the columns; each row must
/// have one field per column (`()` or `-` for an empty one). Rows of the
/// wrong width are errors and are skipped.
pub fn table<'a>(section: &'a Section, diags: &mut Diagnostics) -> Option<Table<'a>> {
    let Some((header, rows)) = section.lines.split_first() else {
        diags.error(section.begin.loc(0), format!("section `{}` has no column header line", section.name));
        return None;
    };
    let columns = header.text.split_whitespace().map(|c| c.to_ascii_uppercase()).collect();
    let mut table = Table { columns, header, rows: Vec::new() };
    for line in rows {
        match fields.parse(line.text.as_str()) {
            Ok(f) if f.len() == table.columns.len() => table.rows.push(Row { line, fields: f }),
            Ok(f) => {
                let at = f.get(table.columns.len()).map_or(line.loc(line.text.len()), |x| line.loc_of(x));
                diags.error(
                    at,
                    format!("expected {} fields ({}), found {}", table.columns.len(), table.columns.join(" "), f.len()),
                );
            }
            Err(e) => diags.error(line.loc(e.offset()), expected(e.inner())),
        }
    }
    Some(table)
}

impl Table<'_> {
    /// Warns, at its name in the header, about each column allot does
    /// not apply (any not in `applied`): a real file carries them, and
    /// none may be passed over without a word.
    pub fn warn_unapplied(&self, section: &str, applied: &[&str], diags: &mut Diagnostics) {
        let mut offset = 0;
        for word in self.header.text.split_whitespace() {
            offset += self.header.text[offset..].find(word).unwrap_or(0);
            if !applied.iter().any(|a| a.eq_ignore_ascii_case(word)) {
                diags.warning(
                    self.header.loc(offset),
                    format!("{section}: the `{word}` column is not applied by allot, ignored"),
                );
            }
            offset += word.len();
        }
    }
}

/// The inside of a `(...)` field, or the field itself; `()` and `-` are empty.
pub fn unparen(field: &str) -> &str {
    let inner = field.strip_prefix('(').and_then(|f| f.strip_suffix(')')).unwrap_or(field);
    if inner.trim() == "-" { "" } else { inner }
}

/// The inside of a `"..."` value, or the value itself.
pub fn unquote(value: &str) -> &str {
    value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(text: &str) -> Source<'_> {
        Source { name: "lsb.test", text }
    }

    #[test]
    fn continuation_lines_join_and_keep_their_locations() {
        let lines = logical_lines(&src("# c\nA = 1 \\\n  2 # x\n\nB=3\n"));
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].text, "A = 1    2 ");
        let two = lines[0].text.find('2').expect("2");
        assert_eq!(lines[0].loc(two).to_string(), "lsb.test:3:3");
        assert_eq!(lines[1].loc(0).to_string(), "lsb.test:5:1");
    }

    #[test]
    fn sections_any_case_and_errors_located() {
        let mut d = Diagnostics::default();
        let s = sections(&src("begin Queue\nA=1\nEND queue\nstray\nBegin Host\n"), &mut d);
        assert_eq!(s.len(), 1);
        assert!(s[0].is("queue"));
        let msgs: Vec<String> = d.0.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            msgs,
            [
                "lsb.test:4:1: error: expected `Begin <Section>`, found text outside any section",
                "lsb.test:5:1: error: section `Host` has no `End Host`",
            ]
        );
    }

    #[test]
    fn table_rows_take_parenthesized_fields() {
        let mut d = Diagnostics::default();
        let text = "Begin UserGroup\nGROUP_NAME GROUP_MEMBER USER_SHARES\nGroupA (GroupB GroupC User5) ([User5, 1] [default, 10])\nbad (x)\nEnd UserGroup\n";
        let s = sections(&src(text), &mut d);
        let t = table(&s[0], &mut d).expect("table");
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.rows[0].fields, ["GroupA", "(GroupB GroupC User5)", "([User5, 1] [default, 10])"]);
        assert_eq!(d.0.len(), 1);
        assert_eq!(
            d.0[0].to_string(),
            "lsb.test:4:8: error: expected 3 fields (GROUP_NAME GROUP_MEMBER USER_SHARES), found 2"
        );
    }
}
