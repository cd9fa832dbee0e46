//! Random and mutated text fed to every parser: it never panics, and every
//! problem it reports names a file it was given and a line and column
//! inside that file.

use allot_config::Diagnostics;
use allot_config::load::from_texts;
use allot_config::lsf::values;
use proptest::prelude::*;

const SITE: &[(&str, &str)] = &[
    ("lsb.params", include_str!("../../../examples/site/lsb.params")),
    ("lsb.queues", include_str!("../../../examples/site/lsb.queues")),
    ("lsb.users", include_str!("../../../examples/site/lsb.users")),
    ("lsb.hosts", include_str!("../../../examples/site/lsb.hosts")),
    ("lsf.cluster.site", include_str!("../../../examples/site/lsf.cluster.site")),
    ("lsf.conf", include_str!("../../../examples/site/lsf.conf")),
    ("allot.toml", include_str!("../../../examples/site/allot.toml")),
];

/// Text made of the characters LSF files are made of, so the parsers get
/// past their first token often.
fn lsf_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("Begin Queue\n".to_string()),
            Just("End Queue\n".to_string()),
            Just("Begin UserGroup\n".to_string()),
            Just("Begin HostPartition\n".to_string()),
            Just("USER_SHARES[[".to_string()),
            Just(" = ".to_string()),
            "[a-zA-Z_0-9@!~\\[\\](),=\"#\\\\ \t\n.:-]{0,12}",
            "\\PC{0,4}",
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

fn check_located(files: &[(String, String)], diags: &Diagnostics) -> Result<(), TestCaseError> {
    for d in &diags.0 {
        let file = files.iter().find(|(n, _)| *n == d.loc.file);
        prop_assert!(file.is_some(), "{d}: names no file it was given");
        let (_, text) = file.expect("checked");
        let lines = text.lines().count().max(1) as u32;
        prop_assert!(d.loc.line >= 1 && d.loc.line <= lines + 1, "{d}: line outside the file ({lines} lines)");
        let line_len = text.lines().nth(d.loc.line as usize - 1).map_or(0, |l| l.chars().count()) as u32;
        prop_assert!(d.loc.col >= 1 && d.loc.col <= line_len + 2, "{d}: column outside the line ({line_len} chars)");
        prop_assert!(!d.message.is_empty());
    }
    Ok(())
}

/// Applies byte-level edits at char boundaries: delete, insert, replace.
fn mutate(text: &str, edits: &[(usize, u8, String)]) -> String {
    let mut s = text.to_string();
    for (at, kind, with) in edits {
        if s.is_empty() {
            s.push_str(with);
            continue;
        }
        let mut i = at % s.len();
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        let mut j = (i + 1 + with.len()).min(s.len());
        while !s.is_char_boundary(j) {
            j -= 1;
        }
        match kind % 3 {
            0 => s.replace_range(i..j, ""),
            1 => s.insert_str(i, with),
            _ => s.replace_range(i..j, with),
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_text_in_any_file(file in 0..SITE.len(), text in lsf_text()) {
        let files = vec![(SITE[file].0.to_string(), text)];
        let mut diags = Diagnostics::default();
        let _ = from_texts(&files, &mut diags);
        check_located(&files, &diags)?;
    }

    #[test]
    fn mutated_site_files(
        file in 0..SITE.len(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), "[\\[\\]()@!~=,\\\\\"#a-z0-9 \n]{0,6}"), 1..6),
    ) {
        let mut files: Vec<(String, String)> = SITE.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
        files[file].1 = mutate(&files[file].1, &edits);
        let mut diags = Diagnostics::default();
        let _ = from_texts(&files, &mut diags);
        check_located(&files, &diags)?;
    }

    #[test]
    fn value_parsers_fail_inside_their_input(text in "[a-zA-Z_0-9@!~\\[\\](),:/ .-]{0,30}") {
        let offsets = [
            values::parse_all(values::user_shares, &text).err().map(|e| e.offset),
            values::parse_all(values::share_list, &text).err().map(|e| e.offset),
            values::parse_all(values::max_reserve_time, &text).err().map(|e| e.offset),
            values::parse_all(values::run_limits, &text).err().map(|e| e.offset),
            values::parse_all(values::host_tokens, &text).err().map(|e| e.offset),
            values::parse_all(values::preemption, &text).err().map(|e| e.offset),
            values::parse_all(values::requeue_exit_values, &text).err().map(|e| e.offset),
            values::parse_all(values::exclusive, &text).err().map(|e| e.offset),
            values::expand_range(&text).err().map(|e| e.offset),
        ];
        for offset in offsets.into_iter().flatten() {
            prop_assert!(offset <= text.len());
        }
    }

    #[test]
    fn submission_strings_fail_inside_their_input(text in "[a-z0-9\\[\\](),:%&|!* .-]{0,30}") {
        let offsets = [
            allot_config::array::parse_job_name(&text, 1000).err().map(|e| e.offset),
            allot_config::array::parse_job_ref(&text).err().map(|e| e.offset),
            allot_config::deps::parse(&text).err().map(|e| e.offset),
        ];
        for offset in offsets.into_iter().flatten() {
            prop_assert!(offset <= text.len(), "offset {offset} past the end of `{text}`");
        }
        if let Ok(n) = allot_config::array::parse_job_name(&text, 1000) {
            prop_assert!(n.array.is_none_or(|a| !a.indices.is_empty() && a.indices.len() <= 1000));
        }
    }

    #[test]
    fn bacct_windows_fail_inside_their_input(text in "[0-9/:.,-]{0,20}") {
        if let Err(e) = allot_config::acct_time::parse_window(&text, 1_795_683_600, &|_| 0) {
            prop_assert!(e.offset <= text.len(), "offset {} past the end of `{text}`", e.offset);
        }
    }

    #[test]
    fn env_options_fail_inside_their_input(text in "(all|none|[A-Z_~=', ]){0,30}") {
        if let Err(e) = allot_config::env_option::EnvOption::parse(&text) {
            prop_assert!(e.offset <= text.len(), "offset {} past the end of `{text}`", e.offset);
        }
    }

    #[test]
    fn usage_files_never_panic(text in "[{}\\[\\]\":,a-z0-9. -]{0,60}") {
        let mut diags = Diagnostics::default();
        let config = from_texts(&[], &mut diags);
        if let Err(d) = allot_config::usage::read("usage.json", &text, &config) {
            prop_assert!(d.0.iter().all(|x| x.loc.file == "usage.json" && x.loc.line >= 1));
        }
    }
}

#[test]
fn the_unmutated_site_is_clean() {
    let files: Vec<(String, String)> = SITE.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
    let mut diags = Diagnostics::default();
    let _ = from_texts(&files, &mut diags);
    assert!(diags.0.is_empty(), "{diags}");
}
