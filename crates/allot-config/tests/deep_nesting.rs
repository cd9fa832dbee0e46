//! Deeply nested expressions for every recursive grammar (`-w`, `-R` and
//! RES_REQ): each is refused with a located error before anything
//! recurses, on a thread with a small stack (an eighth of allotd's), so no
//! string a user sends can overflow a stack.

use proptest::prelude::*;

/// Parses on a thread with a 1 MiB stack (allotd parses on its main
/// thread, 8 MiB; the deepest nesting allowed takes under 1 MiB even
/// unoptimized): an unbounded recursion over thousands of levels would
/// overflow it and abort the test.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(1 << 20).spawn(f).expect("thread").join().expect("no panic")
}

/// `depth` levels of one of the nestings, around a valid core.
fn nested(kind: u8, depth: usize, core: &str) -> String {
    match kind % 4 {
        0 => format!("{}{core}{}", "(".repeat(depth), ")".repeat(depth)),
        1 => format!("{}{core}", "!".repeat(depth)),
        2 => format!("{}{core}{}", "!(".repeat(depth), ")".repeat(depth)),
        _ => format!("{}{core}{}", "( !".repeat(depth), ")".repeat(depth)),
    }
}

fn deep_is_refused(result: Result<(), (usize, String)>, text_len: usize) -> Result<(), TestCaseError> {
    let (offset, message) = result.err().ok_or_else(|| TestCaseError::fail("accepted"))?;
    prop_assert!(message.contains("nests deeper than 100 levels"), "{message}");
    prop_assert!(offset < text_len);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn deep_dependencies_are_refused_where_they_go_too_deep(kind in 0u8..4, depth in 101usize..20_000) {
        let text = nested(kind, depth, "done(1)");
        let len = text.len();
        let got = on_small_stack(move || allot_config::deps::parse(&text).map(|_| ()).map_err(|e| (e.offset, e.message)));
        deep_is_refused(got, len)?;
    }

    #[test]
    fn deep_selections_are_refused_where_they_go_too_deep(kind in 0u8..4, depth in 101usize..20_000) {
        let text = format!("select[{}]", nested(kind, depth, "mem > 1"));
        let len = text.len();
        let got = on_small_stack(move || allot_config::resreq::parse(&text).map(|_| ()).map_err(|e| (e.offset, e.message)));
        deep_is_refused(got, len)?;
    }

    #[test]
    fn nesting_within_the_limit_still_parses(kind in 0u8..4, depth in 0usize..45) {
        let deps = nested(kind, depth, "done(1)");
        prop_assert!(allot_config::deps::parse(&deps).is_ok(), "{deps}");
        let select = format!("select[{}]", nested(kind, depth, "mem > 1"));
        prop_assert!(allot_config::resreq::parse(&select).is_ok(), "{select}");
    }
}

/// The cases of the report: 7,000 nested parentheses and 20,000 `!` in
/// `-w`, 20,000 `(` in a selection; and a configuration file's RES_REQ,
/// refused at its line.
#[test]
fn the_reported_cases_are_located_errors() {
    let err = allot_config::deps::parse(&nested(0, 7_000, "done(1)")).expect_err("refused");
    assert_eq!(err.offset, 100);
    let err = allot_config::deps::parse(&nested(1, 20_000, "done(1)")).expect_err("refused");
    assert_eq!(err.offset, 100);
    let err = allot_config::resreq::parse(&format!("select[{}", "(".repeat(20_000))).expect_err("refused");
    assert_eq!(err.offset, 106);
    let queues = format!("Begin Queue\nQUEUE_NAME = normal\nRES_REQ = select[{}]\nEnd Queue\n", "(".repeat(20_000));
    let files = vec![("lsb.queues".to_string(), queues)];
    let diags = on_small_stack(move || {
        let mut diags = allot_config::Diagnostics::default();
        let _ = allot_config::load::from_texts(&files, &mut diags);
        diags.0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
    });
    assert!(diags.contains("lsb.queues:3:") && diags.contains("nests deeper than 100 levels"), "{diags}");
}

/// The deepest nesting allowed parses, and is evaluated and dropped, on a
/// thread with a small stack, in a debug build too.
#[test]
fn the_deepest_allowed_nesting_fits_a_small_stack() {
    for kind in 0..4u8 {
        let per_level = if kind >= 2 { 2 } else { 1 };
        let depth = 100 / per_level;
        // `done(1)` and `select[` are a level each.
        let deps = nested(kind, depth - 1, "done(1)");
        let select = format!("select[{}]", nested(kind, depth - 1, "mem > 1"));
        let parsed = on_small_stack(move || {
            (allot_config::deps::parse(&deps).is_ok(), allot_config::resreq::parse(&select).is_ok())
        });
        assert_eq!(parsed, (true, true), "kind {kind}");
    }
}
