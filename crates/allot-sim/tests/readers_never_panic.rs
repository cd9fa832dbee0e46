//! Random and mutated lines fed to the workload readers: they never panic,
//! and every line they skip is a line of the input, with a reason.

use allot_sim::{jsonl, swf};
use proptest::prelude::*;

const SWF_LINE: &str = "1 0 10 100 4 50 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1";
const JSONL_LINE: &str =
    r#"{"submit": 0, "user": "alice", "runtime": 100, "bsub": "-n 2 -q short -W 30 -R \"span[ptile=2]\" ./a"}"#;

fn mutate(line: &str, edits: &[(usize, String)]) -> String {
    let mut s = line.to_string();
    for (at, with) in edits {
        let mut i = at % (s.len() + 1);
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        s.insert_str(i, with);
    }
    s
}

proptest! {
    #[test]
    fn swf_lines(lines in prop::collection::vec(
        prop_oneof![
            "[ \\t;0-9.-]{0,60}",
            prop::collection::vec((any::<usize>(), "[ \\-0-9a;\t]{0,3}"), 1..4).prop_map(|e| mutate(SWF_LINE, &e)),
        ],
        0..20,
    )) {
        let text = lines.join("\n");
        let w = swf::read(text.as_bytes(), swf::QueueField::Queue).expect("in memory");
        let n = lines.len() as u64;
        prop_assert!(w.skipped.iter().all(|s| s.line >= 1 && s.line <= n.max(1) && !s.reason.is_empty()));
        prop_assert!(w.jobs.iter().all(|j| j.submission.slots >= 1));
    }

    #[test]
    fn jsonl_lines(lines in prop::collection::vec(
        prop_oneof![
            "\\PC{0,40}",
            prop::collection::vec((any::<usize>(), "[{}\"\\\\:, a-z0-9-]{0,3}"), 1..4).prop_map(|e| mutate(JSONL_LINE, &e)),
        ],
        0..20,
    )) {
        let text = lines.join("\n");
        let w = jsonl::read(&text);
        let n = lines.len() as u64;
        prop_assert!(w.skipped.iter().all(|s| s.line >= 1 && s.line <= n.max(1) && !s.reason.is_empty()));
    }
}
