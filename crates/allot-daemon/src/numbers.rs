//! LSF's job numbers (`allot_store::Numbers`) through allotd's
//! submission and its log.

/// Numbers through allotd's submission and its log: LSF's numbering live
/// and after a restart, and a log written before numbers were kept.
#[cfg(test)]
mod log_tests {
    use allot_engine::{JobId, Time};
    use allot_proto::{JobRef, Request, Submit};
    use allot_store::Record;
    use tokio::sync::mpsc;

    use crate::replay_check::{Twin, open};
    use crate::serve::Input;

    fn submit(twin: &mut Twin, name: Option<&str>, t: Time) -> String {
        let s = Submit {
            submission: allot_proto::Submission {
                name: name.map(str::to_string),
                queue: Some("normal".into()),
                ..Default::default()
            },
            command: "true".into(),
            cwd: twin.dir.display().to_string(),
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            ..Submit::default()
        };
        twin.request(Request::Submit(Box::new(s)), t)
    }

    fn ids(twin: &Twin, id: u64, index: u32) -> Vec<u64> {
        twin.state.book.resolve(JobRef { id, index }).into_iter().map(|j| j.0).collect()
    }

    #[test]
    fn arrays_take_one_number_live_after_a_restart_and_in_an_old_log() {
        let (root, config) = crate::replay_check::one_host("numbers", 2);
        std::fs::write(config.join("lsb.queues"), "Begin Queue\nQUEUE_NAME = normal\nEnd Queue\n").expect("queues");
        let (wake, _heard) = mpsc::channel::<Input>(1 << 10);
        let t = Time(1_000_000);
        let start = |name: &str| {
            let dir = root.join(name);
            std::fs::create_dir_all(&dir).expect("state dir");
            Twin { state: open(&dir, &config, t, &wake), dir }
        };

        // Live: job 1 an array of three (ids 1 to 3), job 2 (id 4).
        let mut live = start("live");
        let said = submit(&mut live, Some("a[1-3]"), t);
        assert!(said.contains("job: 1,"), "{said}");
        assert!(submit(&mut live, None, t).contains("job: 2,"));
        assert_eq!(ids(&live, 1, 0), [1, 2, 3]);
        assert_eq!(ids(&live, 1, 3), [3]);
        assert_eq!(ids(&live, 2, 0), [4]);
        assert_eq!(ids(&live, 3, 0), Vec::<u64>::new(), "no job 3 yet");
        assert_eq!(live.state.book.job_ref(JobId(3)), JobRef { id: 1, index: 3 });
        let log = live.log();
        drop(live);
        let restarted = Twin { state: open(&root.join("live"), &config, t, &wake), dir: root.join("live") };
        assert_eq!(ids(&restarted, 2, 0), [4], "the log keeps the number");
        assert_eq!(restarted.state.book.numbers.next(), 3);

        // The same log as allotd wrote it before numbers were kept: the
        // second job was job 4, as its user was told.
        let old: Vec<(Time, Record)> = log
            .into_iter()
            .filter_map(|(t, r)| match r {
                Record::Submitted { job, record, typed, .. } => {
                    Some((t, Record::Submitted { job, number: None, record, typed }))
                }
                _ => None,
            })
            .collect();
        drop(start("old"));
        allot_store::Store::open(&root.join("old").join("state.db")).expect("store").append(&old).expect("append");
        let mut old = Twin { state: open(&root.join("old"), &config, t, &wake), dir: root.join("old") };
        assert_eq!(ids(&old, 1, 0), [1, 2, 3]);
        assert_eq!(ids(&old, 1, 2), [2]);
        assert_eq!(ids(&old, 4, 0), [4]);
        assert_eq!(ids(&old, 2, 0), Vec::<u64>::new(), "an element's own id names nothing");
        // New submissions go on from the old numbers, as LSF numbers.
        assert!(submit(&mut old, None, t).contains("job: 5,"));
        assert!(submit(&mut old, Some("b[1-2]"), t).contains("job: 6,"));
        assert!(submit(&mut old, None, t).contains("job: 7,"));
        assert_eq!(ids(&old, 6, 2), [7]);
        assert_eq!(ids(&old, 7, 0), [8]);
        drop(old);
        let old = Twin { state: open(&root.join("old"), &config, t, &wake), dir: root.join("old") };
        assert_eq!((ids(&old, 4, 0), ids(&old, 6, 0), ids(&old, 7, 0)), (vec![4], vec![6, 7], vec![8]));
        assert_eq!(old.state.book.job_ref(JobId(8)), JobRef::job(7));
        let _ = std::fs::remove_dir_all(&root);
    }
}
