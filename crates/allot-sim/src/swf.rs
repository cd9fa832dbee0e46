//! The Standard Workload Format of the Parallel Workloads Archive: `;`
//! header comments (anywhere in the file), then one job per line of 18
//! whitespace-separated fields, `-1` for unknown.
//!
//! Names: user `N` (field 12) is `userN`, group `N` (field 13) `groupN`;
//! a job's queue is, by choice, none (the default queue), queue `N` (field
//! 15) as `queueN`, or partition `N` (field 16) as `partitionN`; unknown is
//! `-1` and gives `user-1` for a user, no group, the default queue. Processors: the requested count (field 8),
//! else the allocated count (field 5). The requested time (field 9) is the
//! job's run limit. A job with unknown run time or processors, or with no
//! processors, is skipped with its line number. Status (field 11): 1
//! completed (exit 0), 0 failed (exit 1), 5 cancelled (exit 130). Used
//! memory (field 7, KB per processor) times the processors is the memory
//! the job reports while it runs.

use std::collections::BTreeMap;
use std::io::BufRead;

use crate::workload::{Machine, Skipped, Workload, WorkloadJob};
use allot_config::submission::Submission;

/// Which SWF field names a job's queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueField {
    /// None: every job goes to the default queue.
    #[default]
    None,
    /// Field 15, the queue number: queue `queueN`.
    Queue,
    /// Field 16, the partition number: queue `partitionN`.
    Partition,
}

/// Reads an SWF workload, naming queues as `queues` says.
///
/// A large file is parsed in as many parts as there are cores (up to
/// four), each from a line boundary; the parts' jobs, skipped lines and
/// header comments are joined in file order, so the workload is the one
/// a single pass would read.
pub fn read(mut input: impl BufRead, queues: QueueField) -> std::io::Result<Workload> {
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes)?;
    Ok(parse(&bytes, queues))
}

/// [`read`] of a file's bytes, already in memory.
pub fn parse(bytes: &[u8], queues: QueueField) -> Workload {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
    read_bytes(bytes, queues, if bytes.len() < 1 << 18 { 1 } else { cores })
}

/// [`read`] of `bytes` in `parts` parts.
fn read_bytes(bytes: &[u8], queues: QueueField, parts: usize) -> Workload {
    let chunks = split_lines(bytes, parts);
    let read: Vec<Part> = if let [(first, ends, text)] = chunks[..] {
        vec![read_part(text, first, ends, queues)]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = chunks
                .iter()
                .map(|&(first, ends, text)| s.spawn(move || read_part(text, first, ends, queues)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        })
    };
    let mut w = Workload::default();
    let total: usize = read.iter().map(|p| p.jobs.len()).sum();
    for mut part in read {
        for (line, comment) in &part.headers {
            header(comment, *line, &mut w.machine);
        }
        // The first part's jobs are the workload's, grown in place for the
        // others': a large vector grows by remapping its pages, where a
        // copy into a new one would touch (and fault in) every page twice.
        if w.jobs.capacity() == 0 {
            part.jobs.reserve_exact(total - part.jobs.len());
            w.jobs = part.jobs;
        } else {
            w.jobs.append(&mut part.jobs);
        }
        w.skipped.extend(part.skipped);
    }
    w.jobs.sort_by_key(|j| (j.submit, j.line));
    w
}

/// `bytes` cut into at most `parts` runs of whole lines, each with the
/// number of its first line and its count of line ends.
fn split_lines(bytes: &[u8], parts: usize) -> Vec<(u64, u64, &[u8])> {
    let mut out = Vec::with_capacity(parts);
    let (mut rest, mut first) = (bytes, 1u64);
    for left in (1..=parts).rev() {
        let want = rest.len() / left;
        let cut = if left == 1 {
            rest.len()
        } else {
            rest[want..].iter().position(|&b| b == b'\n').map_or(rest.len(), |i| want + i + 1)
        };
        let (part, after) = rest.split_at(cut);
        let ends = part.iter().filter(|&&b| b == b'\n').count() as u64;
        out.push((first, ends, part));
        first += ends;
        rest = after;
        if rest.is_empty() {
            break;
        }
    }
    out
}

/// What one run of lines holds.
#[derive(Default)]
struct Part {
    jobs: Vec<WorkloadJob>,
    skipped: Vec<Skipped>,
    /// Header comments (without the `;`) with their lines, in order.
    headers: Vec<(u64, String)>,
}

/// Reads the lines of `text` (`ends` line ends), the first of which is
/// line `first`.
fn read_part(text: &[u8], first: u64, ends: u64, queues: QueueField) -> Part {
    let mut part = Part::default();
    part.jobs.reserve(usize::try_from(ends).unwrap_or(0) + 1);
    let mut names = Names::default();
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let line_no = first + i as u64;
        // Curie's header has bytes that are not UTF-8; only comments do.
        // Lines are trimmed as text is (`str::trim`): in ASCII, that is
        // ASCII whitespace and the vertical tab.
        let lossy;
        let line = if line.is_ascii() {
            let space = |b: &u8| b.is_ascii_whitespace() || *b == 0x0b;
            let start = line.iter().position(|b| !space(b)).unwrap_or(line.len());
            let end = line.iter().rposition(|b| !space(b)).map_or(start, |i| i + 1);
            &line[start..end]
        } else {
            lossy = String::from_utf8_lossy(line).trim().to_string();
            lossy.as_bytes()
        };
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix(b";") {
            part.headers.push((line_no, String::from_utf8_lossy(comment).trim().to_string()));
            continue;
        }
        match job(line, line_no, queues, &mut names).and_then(|j| j.out_of_range().map_or(Ok(j), Err)) {
            Ok(j) => part.jobs.push(j),
            Err(reason) => part.skipped.push(Skipped { line: line_no, reason }),
        }
    }
    part
}

/// The names made of numbers (`user3`, `group2`, `queue1`), each made
/// once: a trace has many jobs per user. The small numbers every trace
/// uses are looked up by index, the others in a map.
#[derive(Default)]
struct Names {
    small: [Vec<Option<String>>; 4],
    large: BTreeMap<(Kind, i64), String>,
}

/// Numbers below this are [`Names`]'s by index.
const SMALL_NAMES: i64 = 1 << 16;

/// What a number names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    User,
    Group,
    Queue,
    Partition,
}

impl Names {
    fn get(&mut self, kind: Kind, n: i64) -> String {
        let prefix = match kind {
            Kind::User => "user",
            Kind::Group => "group",
            Kind::Queue => "queue",
            Kind::Partition => "partition",
        };
        let made = || format!("{prefix}{n}");
        match usize::try_from(n) {
            Ok(i) if n < SMALL_NAMES => {
                let names = &mut self.small[kind as usize];
                if names.len() <= i {
                    names.resize(i + 1, None);
                }
                names[i].get_or_insert_with(made).clone()
            }
            _ => self.large.entry((kind, n)).or_insert_with(made).clone(),
        }
    }
}

/// A field's number: whole numbers (nearly all of them) read directly,
/// others as decimals.
fn number(field: &[u8]) -> Option<f64> {
    let (negative, digits) = match field.strip_prefix(b"-") {
        Some(rest) => (true, rest),
        None => (false, field),
    };
    if !digits.is_empty() && digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
        let n = digits.iter().fold(0i64, |n, &b| n * 10 + i64::from(b - b'0'));
        return Some(if negative { -n as f64 } else { n as f64 });
    }
    // `inf` and `NaN` read as numbers, and are none.
    std::str::from_utf8(field).ok()?.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Why field `i` (from 0) stops its job: kept out of the way of the
/// numbers that are numbers.
#[cold]
fn not_a_number(i: usize, field: &[u8]) -> String {
    format!("field {} (`{}`) is not a number", i + 1, String::from_utf8_lossy(field))
}

/// A header comment that describes the machine; what it asks is checked
/// against what allot simulates ([`Machine::check`]) before a machine is
/// made of it.
fn header(comment: &str, line: u64, m: &mut Machine) {
    let Some((key, value)) = comment.split_once(':') else { return };
    let number = value.split_whitespace().next().and_then(|v| v.parse::<u64>().ok());
    let whole_number = value.trim().parse::<u64>().ok();
    match key.trim() {
        "MaxProcs" => (m.max_procs, m.procs_line) = (number, line),
        // CTC: `338 (batch partition; 512 total)` is text, not a number.
        "MaxNodes" => (m.max_nodes, m.nodes_line) = (whole_number, line),
        _ => {}
    }
}

fn job(line: &[u8], line_no: u64, queues: QueueField, names: &mut Names) -> Result<WorkloadJob, String> {
    // The fields, split at ASCII whitespace as `split_ascii_whitespace`
    // splits.
    let mut f: [&[u8]; 18] = [b""; 18];
    let mut count = 0;
    let mut i = 0;
    while i < line.len() {
        if line[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        while i < line.len() && !line[i].is_ascii_whitespace() {
            i += 1;
        }
        if let Some(slot) = f.get_mut(count) {
            *slot = &line[start..i];
        }
        count += 1;
    }
    if count != 18 {
        return Err(format!("expected 18 fields, found {count}"));
    }
    let num = |i: usize| -> Result<f64, String> { number(f[i]).ok_or_else(|| not_a_number(i, f[i])) };
    let id = num(0)?;
    let submit = num(1)?;
    let runtime = num(3)?;
    let allocated = num(4)?;
    let avg_cpu = num(5)?;
    let used_kb = num(6)?;
    let requested = num(7)?;
    let req_time = num(8)?;
    let status = num(10)?;
    let user = num(11)?;
    let group = num(12)?;
    let queue = num(14)?;
    let partition = num(15)?;
    if runtime < 0.0 {
        return Err("unknown run time".into());
    }
    let procs = if requested > 0.0 { requested } else { allocated };
    if procs <= 0.0 {
        return Err("unknown number of processors".into());
    }
    if submit < 0.0 {
        return Err("unknown submit time".into());
    }
    let slots = procs.min(f64::from(u32::MAX)) as u32;
    Ok(WorkloadJob {
        id: id.max(0.0) as u64,
        line: line_no,
        submit: submit as u64,
        submission: Box::new(Submission {
            user: names.get(Kind::User, user as i64),
            queue: match queues {
                QueueField::Queue if queue >= 0.0 => Some(names.get(Kind::Queue, queue as i64)),
                QueueField::Partition if partition >= 0.0 => Some(names.get(Kind::Partition, partition as i64)),
                _ => None,
            },
            slots,
            run_limit: (req_time > 0.0).then_some(req_time as u64),
            ..Submission::default()
        }),
        group: (group >= 0.0).then(|| names.get(Kind::Group, group as i64)),
        runtime: runtime as u64,
        cpu_time: if avg_cpu > 0.0 { avg_cpu * f64::from(slots) } else { 0.0 },
        // Field 7 is KB per processor, on average.
        memory_mb: (used_kb > 0.0).then(|| used_kb * f64::from(slots) / 1024.0),
        gpus: 0,
        energy: 0.0,
        exit: match status as i64 {
            1 => 0,
            5 => 130,
            _ => 1,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "; Version: 2.2\n; MaxNodes: 100\n; MaxProcs: 100\n\
        1 0 10 100 4 50 2048 4 200 -1 1 3 2 -1 1 -1 -1 -1\n\
        ;\tcomment in the middle\n\
        2 5 0 -1 1 -1 -1 1 60 -1 0 3 2 -1 -1 -1 -1 -1\n\
        3 9 0 30 8 -1 -1 -1 -1 -1 5 7 -1 -1 2 -1 -1 -1\n\
        4 9 0 30 -1 -1 -1 -1 60 -1 1 7 -1 -1 2 -1 -1 -1\n\
        5 9 0 30\n";

    #[test]
    fn jobs_header_and_skips() {
        let w = read(SAMPLE.as_bytes(), QueueField::Queue).expect("read");
        assert_eq!((w.machine.max_procs, w.machine.max_nodes), (Some(100), Some(100)));
        assert_eq!(w.jobs.len(), 2);
        let j = &w.jobs[0];
        assert_eq!((j.id, j.submit, j.submission.slots, j.runtime, j.submission.run_limit), (1, 0, 4, 100, Some(200)));
        assert_eq!(
            (j.submission.user.as_str(), j.group.as_deref(), j.submission.queue.as_deref()),
            ("user3", Some("group2"), Some("queue1"))
        );
        assert_eq!((j.cpu_time, j.exit), (200.0, 0));
        // 2,048 KB per processor, 4 processors.
        assert_eq!(j.memory_mb, Some(8.0));
        let k = &w.jobs[1];
        assert_eq!(
            (k.submission.slots, k.submission.run_limit, k.exit, k.group.as_deref(), k.memory_mb),
            (8, None, 130, None, None),
            "field 5 when 8 is unknown"
        );
        let reasons: Vec<(u64, &str)> = w.skipped.iter().map(|s| (s.line, s.reason.as_str())).collect();
        assert_eq!(
            reasons,
            [(6, "unknown run time"), (8, "unknown number of processors"), (9, "expected 18 fields, found 4")]
        );
    }

    /// Whole numbers are read directly; anything else as `f64` reads it.
    #[test]
    fn numbers_read_as_decimals_do() {
        for s in ["0", "-1", "42", "007", "-0", "123456789012345", "1234567890123456789", "12.5", "+3", "1e3", "-2.25"]
        {
            assert_eq!(number(s.as_bytes()), s.parse::<f64>().ok(), "{s}");
        }
        for s in ["", "-", "x1", "1x", "--1", "1-"] {
            assert_eq!(number(s.as_bytes()), None, "{s:?}");
        }
        let w = read("1 0 0 10 1 -1 -1 1 sixty -1 1 1 1 -1 3 7 -1 -1\n".as_bytes(), QueueField::None).expect("read");
        assert_eq!(w.skipped[0].reason, "field 9 (`sixty`) is not a number");
        // A line's fields read as `number` reads them, whole or not.
        for s in ["0", "7", "007", "-0", "123456789012345", "1234567890123456", "12.5", "+3", "1e3", "3-", "x1", "-"] {
            let line = format!("1 {s} 0 10 1 -1 -1 1 60 -1 1 1 1 -1 3 7 -1 -1\n");
            let w = read(line.as_bytes(), QueueField::None).expect("read");
            match number(s.as_bytes()) {
                Some(n) if n as u64 > crate::workload::MAX_SECONDS => {
                    assert!(w.skipped[0].reason.starts_with("submit time"), "{s}: {:?}", w.skipped);
                }
                Some(n) => assert_eq!(w.jobs.first().map(|j| j.submit), Some(n as u64), "{s}"),
                None => assert_eq!(
                    w.skipped.first().map(|k| k.reason.clone()),
                    Some(format!("field 2 (`{s}`) is not a number"))
                ),
            }
        }
    }

    /// Read in parts, a file gives what one pass gives: the same jobs in
    /// the same order, skipped lines with their numbers, and the header's
    /// last word on the machine wherever the parts are cut.
    #[test]
    fn parts_read_what_one_pass_reads() {
        let mut text = String::from("; MaxProcs: 64\n; MaxNodes: 8\n");
        for i in 0..400u64 {
            let submit = (i * 7919) % 1000;
            text += &format!(
                "{i} {submit} 0 {} {} -1 -1 {} 600 -1 1 {} {} -1 1 -1 -1 -1\n",
                10 + i,
                1 + i % 8,
                i % 5,
                i % 13,
                i % 3
            );
            match i {
                150 => text += "; MaxProcs: 128\n",
                300 => text += "\n5 9 0 30\n",
                _ => {}
            }
        }
        let one = read_bytes(text.as_bytes(), QueueField::Queue, 1);
        assert_eq!((one.machine.max_procs, one.machine.max_nodes), (Some(128), Some(8)));
        assert_eq!(one.skipped, [Skipped { line: 306, reason: "expected 18 fields, found 4".into() }]);
        for parts in 2..=5 {
            let w = read_bytes(text.as_bytes(), QueueField::Queue, parts);
            assert_eq!((&w.jobs, &w.skipped, &w.machine), (&one.jobs, &one.skipped, &one.machine), "{parts} parts");
        }
        let lines: Vec<u64> = one.jobs.iter().map(|j| j.line).collect();
        assert!(lines.contains(&3) && lines.contains(&405), "{lines:?}");
    }

    /// Lines are trimmed as `str::trim` trims: a vertical tab at the end
    /// is no part of the last field.
    #[test]
    fn lines_trim_as_text_does() {
        let w =
            read("\x0b1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 3 7 -1 -1\x0b\r\n".as_bytes(), QueueField::None).expect("read");
        assert_eq!((w.jobs.len(), w.skipped.len()), (1, 0));
    }

    #[test]
    fn partitions_as_queues() {
        let w = read(SAMPLE.as_bytes(), QueueField::Partition).expect("read");
        assert_eq!(w.jobs[0].submission.queue, None, "partition -1: the default queue");
        let line = "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 3 7 -1 -1\n";
        let w = read(line.as_bytes(), QueueField::Partition).expect("read");
        assert_eq!(w.jobs[0].submission.queue.as_deref(), Some("partition7"));
    }

    #[test]
    fn max_nodes_that_is_text_is_no_number() {
        let w = read("; MaxNodes: 338 (batch partition; 512 total)\n; MaxProcs: 338\n".as_bytes(), QueueField::None)
            .expect("read");
        assert_eq!((w.machine.max_procs, w.machine.max_nodes), (Some(338), None));
    }

    /// A header asks for no more than allot simulates, and says where it
    /// asked: 99999999999 processors, or 10^8 one-slot hosts, are refused
    /// at their line; 10^8 processors on 1,000 hosts are a machine.
    #[test]
    fn a_header_asks_for_no_more_than_allot_simulates() {
        let machine = |text: &str| read(text.as_bytes(), QueueField::None).expect("read").machine.check();
        let err = machine("; Version: 2.2\n; MaxProcs: 99999999999\n").expect_err("refused");
        assert_eq!(err, (2, "MaxProcs: 99999999999 is more than the 1000000000 processors allot simulates".into()));
        let err = machine("; MaxProcs: 100000000\n").expect_err("refused");
        assert_eq!(err.0, 1);
        assert!(err.1.contains("without MaxNodes would be 100000000 one-slot hosts"), "{}", err.1);
        assert_eq!(machine("; MaxProcs: 100000000\n; MaxNodes: 1000\n"), Ok(()));
        let err = machine("; MaxNodes: 2000000\n; MaxProcs: 4000000\n").expect_err("refused");
        assert_eq!(err, (1, "MaxNodes: 2000000 is more than the 1000000 hosts allot simulates".into()));
    }

    /// Times past 317 years, and numbers that are no numbers (`inf`,
    /// `NaN`), skip their job with why; the others are read.
    #[test]
    fn fields_past_what_a_simulation_takes_skip_their_job() {
        let line = |field: usize, value: &str| {
            let mut f = vec![
                "1", "0", "0", "100", "1", "-1", "-1", "1", "200", "-1", "1", "1", "-1", "-1", "-1", "-1", "-1", "-1",
            ];
            f[field - 1] = value;
            f.join(" ")
        };
        let text = [
            line(2, "1e308"),
            line(4, "1e308"),
            line(9, "1e11"),
            line(6, "1e300"),
            line(4, "inf"),
            line(4, "NaN"),
            line(4, "5"),
        ]
        .join("\n");
        let w = read(text.as_bytes(), QueueField::None).expect("read");
        assert_eq!(w.jobs.len(), 1, "{:?}", w.skipped);
        let reasons: Vec<&str> = w.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert!(reasons[0].starts_with("submit time 18446744073709551615 s is more than 10000000000 s"), "{reasons:?}");
        assert!(reasons[1].starts_with("run time "), "{reasons:?}");
        assert!(reasons[2].starts_with("run limit 100000000000 s"), "{reasons:?}");
        assert_eq!(reasons[3], "CPU time 1e300 is out of range (at most 1e15)");
        assert_eq!(reasons[4], "field 4 (`inf`) is not a number");
        assert_eq!(reasons[5], "field 4 (`NaN`) is not a number");
    }
}
