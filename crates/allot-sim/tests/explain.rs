//! Why a job waits, all of it (`Engine::explain`, what `bjobs -p -l` and
//! `allot explain` show): its pending reason and every limit over, the
//! queue's hosts by why they give it no slot, with counts, its share tree
//! path with the sibling that goes first at each level (both numbers as
//! the share tables compute them), the reservation ahead of it with its
//! predicted start, and its own predicted start.

use allot_config::submission::{Submission, resolve};
use allot_engine::shares::priority::PriorityInputs;
use allot_engine::{Decision, Engine, Event, JobId, Time};
use allot_sim::testing::engine_from;

const HOSTS: &str = "[[hosts]]\nname = \"h1\"\nncpus = 4\ntype = \"X86_64\"\n\n\
                     [[hosts]]\nname = \"h2\"\nncpus = 4\ntype = \"X86_64\"\n\n\
                     [[hosts]]\nname = \"h3\"\nncpus = 4\ntype = \"X86_64\"\n\n\
                     [[hosts]]\nname = \"h4\"\nncpus = 4\ntype = \"SGI\"\n";

const USERS: &str =
    "Begin UserGroup\nGROUP_NAME GROUP_MEMBER USER_SHARES\nga (a1 a2) ([a1, 1] [a2, 1])\nEnd UserGroup\n";

const QUEUES: &str = "Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nFAIRSHARE = USER_SHARES[[ga, 1] [b, 1]]\n\
                      UJOB_LIMIT = 12\nEnd Queue\n\n\
                      Begin Queue\nQUEUE_NAME = wide\nPRIORITY = 40\nSLOT_RESERVE = MAX_RESERVE_TIME[20]\nEnd Queue\n";

/// `bsub -q queue -n slots -R res -W minutes` by `user` at `t`.
fn submit(engine: &mut Engine, t: u64, user: &str, queue: &str, slots: u32, res: &str, minutes: u64) -> JobId {
    let s = Submission {
        user: user.into(),
        queue: Some(queue.into()),
        slots,
        res_req: if res.is_empty() { Vec::new() } else { vec![res.into()] },
        run_limit: (minutes > 0).then_some(minutes * 60),
        ..Submission::default()
    };
    let r = resolve(&s, engine, &|_| false, &mut |_| Ok(Vec::new())).expect("resolves");
    engine.apply(Time(t), &Event::Submit(r.spec)).expect("submitted").expect("an id")
}

#[test]
fn a_waiting_job_is_explained_host_by_host_level_by_level() {
    let mut e = engine_from(&[("allot.toml", HOSTS), ("lsb.users", USERS), ("lsb.queues", QUEUES)]);
    // a1 fills h2 and h3 for 600 s; h1 is closed.
    let running = submit(&mut e, 0, "a1", "normal", 8, "select[type==X86_64]", 10);
    let _ = e.apply(Time(0), &Event::HostDown(allot_engine::HostIdx(0)));
    let started = e.schedule(Time(0));
    assert!(matches!(&started[..], [Decision::Start { job, .. }] if *job == running), "{started:?}");
    // b's wide job reserves h4, then a1's job waits.
    let wide = submit(&mut e, 100, "b", "wide", 8, "", 10);
    let waiting = submit(&mut e, 100, "a1", "normal", 4, "", 0);
    let _ = submit(&mut e, 100, "b", "normal", 4, "select[type==X86_64]", 0);
    assert!(e.schedule(Time(100)).is_empty());

    let x = e.explain(waiting, Time(100)).expect("pending");
    assert_eq!((x.user.as_str(), x.queue.as_str(), x.slots), ("a1", "normal", (4, 4)));
    let hosts: Vec<(&str, Vec<&str>)> =
        x.hosts.iter().map(|h| (h.why.as_str(), h.hosts.iter().map(String::as_str).collect())).collect();
    assert_eq!(
        hosts,
        [
            ("Closed or unreachable: takes no new jobs", vec!["h1"]),
            ("Job slot limit reached: every slot in use", vec!["h2", "h3"]),
            ("Its free slots are reserved for other pending jobs", vec!["h4"]),
        ]
    );
    assert!(x.usable.is_empty());
    // The wide job's reservation, predicted to start when a1's jobs reach
    // their run limit (10 minutes after 0).
    assert_eq!(x.reservations.len(), 1, "{x:?}");
    let r = &x.reservations[0];
    assert_eq!(
        (r.job.clone(), r.slots, r.hosts.clone(), r.predicted_start),
        (wide.0.to_string(), 4, vec!["h4*4".to_string()], Some(600))
    );
    // Its share path: ga under the root, then a1 in ga. At the top, b (with
    // a job waiting and nothing running) goes first; in ga, a2 has nothing
    // waiting.
    let tree = &e.fairshare().policies[0].tree;
    let prio = |path: &[&str]| {
        let mut node = allot_engine::shares::NodeId::ROOT;
        for name in path {
            node = tree.child(node, name).expect("node");
        }
        tree.priority(node, Time(100), &PriorityInputs::default())
    };
    assert_eq!(x.shares.len(), 2, "{x:?}");
    assert_eq!(x.shares[0].node, "ga");
    assert_eq!(x.shares[0].priority, prio(&["ga"]));
    assert_eq!(x.shares[0].ahead, Some(("b".to_string(), prio(&["b"]))));
    assert!(prio(&["b"]) > prio(&["ga"]), "b has used nothing");
    assert_eq!(
        (x.shares[1].node.as_str(), x.shares[1].priority, &x.shares[1].ahead),
        ("a1", prio(&["ga", "a1"]), &None)
    );
    // It holds no reservation: no prediction (the engine's would count
    // the running jobs' ends but not the wide job's first claim on them).
    assert_eq!(x.predicted_start, None);
    assert!(x.to_string().contains(" PREDICTED START: none predicted: it holds no reservation"));

    // Said as bjobs -p -l says it.
    let text = x.to_string();
    assert!(text.contains(" Job slot limit reached: every slot in use: 2 hosts (h2 h3);"), "{text}");
    assert!(
        text.contains(&format!(" ga: priority {:.3}; b goes first, priority {:.3}", prio(&["ga"]), prio(&["b"]))),
        "{text}"
    );
    assert!(text.contains(&format!(" job {}: 4 slots on h4*4; predicted to start at 600", wide.0)), "{text}");
    // Every limit over, not only the first.
    let over = submit(&mut e, 100, "a1", "normal", 8, "select[type==X86_64]", 0);
    let x = e.explain(over, Time(100)).expect("pending");
    assert!(x.limits.iter().any(|l| l.contains("UJOB_LIMIT 12")), "{x:?}");
    let select = x.hosts.iter().find(|h| h.why == "Job's resource requirements not satisfied (select)");
    assert_eq!(select.map(|h| h.hosts.clone()), Some(vec!["h4".to_string()]), "{x:?}");
    assert!(e.explain(running, Time(100)).is_none(), "a running job is not explained");
}

/// `allot sim --report-at T --explain JOB`: the same explanation of a
/// workload's job at a report time.
#[test]
fn the_simulator_explains_a_workload_job_at_a_report_time() {
    let mut e = engine_from(&[("allot.toml", HOSTS), ("lsb.users", USERS), ("lsb.queues", QUEUES)]);
    let w = allot_sim::jsonl::read(
        &[
            r#"{"submit": 0, "user": "a1", "runtime": 100, "bsub": "-n 12 -R \"select[type==X86_64]\""}"#,
            r#"{"submit": 10, "user": "a2", "runtime": 100, "bsub": "-n 2 -R \"select[type==X86_64]\""}"#,
        ]
        .join("\n"),
    );
    let opts = allot_sim::sim::SimOptions {
        report_at: vec![50, 150],
        explain: Some((2, 0)),
        ..allot_sim::sim::SimOptions::default()
    };
    let out = allot_sim::sim::run(&mut e, &w, &opts, &|_, _| serde_json::Value::Null, &mut |_| {});
    assert_eq!(out.explained.len(), 2);
    let (t, x) = &out.explained[0];
    let x = x.as_ref().expect("pending at 50");
    assert_eq!((*t, x.user.as_str()), (50, "a2"));
    let why: Vec<(&str, usize)> = x.hosts.iter().map(|h| (h.why.as_str(), h.hosts.len())).collect();
    assert_eq!(
        why,
        [("Job slot limit reached: every slot in use", 3), ("Job's resource requirements not satisfied (select)", 1)]
    );
    assert_eq!(x.predicted_start, None, "it holds no reservation");
    assert_eq!(out.explained[1], (150, None), "it runs by then");
}
