use super::*;
use crate::lsf::values::Exclusive;
use allot_engine::shares::{ShareAssignment, ShareTarget};

fn queues(text: &str) -> (Vec<Queue>, Vec<String>) {
    let mut d = Diagnostics::default();
    let q = read(&Source { name: "lsb.queues", text }, &mut d);
    (q, d.0.iter().map(|x| x.to_string()).collect())
}

fn one(body: &str) -> (Queue, Vec<String>) {
    let (mut q, d) = queues(&format!("Begin Queue\nQUEUE_NAME = q\n{body}\nEnd Queue\n"));
    (q.remove(0), d)
}

#[test]
fn every_parameter_of_the_issue_reads() {
    let (q, d) = one(
        "PRIORITY = 30\nNICE = 20\nDESCRIPTION = \"For normal jobs\"\nUSERS = all\nHOSTS = hostA! hostB hostgroup1! ~hostC\n\
         FAIRSHARE = USER_SHARES[[user1,100] [default,1]]\nFAIRSHARE_QUEUES = short license\nDISPATCH_ORDER = QUEUE\n\
         SLOT_POOL = poolA\nSLOT_SHARE = 50\nPROCLIMIT = 4 6 9\nRUNLIMIT = 10 1:00\nBACKFILL = Y\n\
         SLOT_RESERVE = MAX_RESERVE_TIME[5]\nINTERRUPTIBLE_BACKFILL = 1\nRES_REQ = \"select[mem > 1000] same[type]\"\n\
         EXCLUSIVE = CU[rack]\nUJOB_LIMIT = 4\nPJOB_LIMIT = 2\nQJOB_LIMIT = 10\nHJOB_LIMIT = 1\n\
         PREEMPTION = PREEMPTIVE[normal]\nREQUEUE_EXIT_VALUES = 99 100\nJOB_ACCEPT_INTERVAL = 0\nMEMLIMIT = 5000\n\
         JOB_STARTER = csh -c \"%USRCMD;sleep 10\"",
    );
    // Read, and said not to be applied.
    assert_eq!(d, ["lsb.queues:27:1: warning: queue `q`: `MEMLIMIT` is not applied by allot, ignored"]);
    assert_eq!((q.priority, q.nice, q.description.as_str()), (30, 20, "For normal jobs"));
    assert_eq!(q.job_starter.as_deref(), Some("csh -c \"%USRCMD;sleep 10\""), "as written, quotes and all");
    assert!(q.users.is_empty(), "all users");
    assert_eq!(q.hosts.len(), 4);
    assert!(q.hosts[0].first_exec && q.hosts[3].exclude);
    assert_eq!(
        q.fairshare,
        Some(vec![
            ShareAssignment::new(ShareTarget::User("user1".into()), 100),
            ShareAssignment::new(ShareTarget::Default, 1)
        ])
    );
    assert_eq!(q.fairshare_queues, ["short", "license"]);
    assert!(q.dispatch_order_queue && q.backfill);
    assert_eq!((q.slot_pool.as_deref(), q.slot_share), (Some("poolA"), Some(50)));
    assert_eq!(q.proclimit, Some(ProcLimit { min: 4, default: 6, max: 9 }));
    let rl = q.runlimit.expect("RUNLIMIT");
    assert_eq!((rl.default.map(|d| d.seconds), rl.max.seconds), (Some(600), 3600));
    assert_eq!((q.slot_reserve, q.interruptible_backfill), (Some(5), Some(1)));
    let r = q.res_req.as_ref().expect("RES_REQ");
    assert_eq!((r.text.as_str(), &r.same[..]), ("select[mem > 1000] same[type]", &["type".to_string()][..]));
    assert_eq!(q.exclusive, Exclusive::ComputeUnit("rack".into()));
    assert_eq!((q.ujob_limit, q.pjob_limit, q.qjob_limit, q.hjob_limit), (Some(4), Some(2.0), Some(10), Some(1)));
    assert_eq!(q.preemption.preemptive, Some(vec![("normal".to_string(), None)]));
    assert_eq!(q.requeue_exit_values.requeue, [99, 100]);
    assert_eq!(q.job_accept_interval, Some(0));
}

#[test]
fn proclimit_forms_of_the_spec() {
    // spec 004: one limit is the maximum (minimum and default 1); two are
    // minimum and maximum, default = minimum; three are all three.
    assert_eq!(one("PROCLIMIT = 3").0.proclimit, Some(ProcLimit { min: 1, default: 1, max: 3 }));
    assert_eq!(one("PROCLIMIT = 3 8").0.proclimit, Some(ProcLimit { min: 3, default: 3, max: 8 }));
    assert_eq!(one("PROCLIMIT = 4 6 9").0.proclimit, Some(ProcLimit { min: 4, default: 6, max: 9 }));
}

#[test]
fn an_incorrect_proclimit_is_ignored_with_a_warning() {
    for bad in ["8 3", "4 9 6", "0 2", "1 2 3 4", "x"] {
        let (q, d) = one(&format!("PROCLIMIT = {bad}"));
        assert_eq!(q.proclimit, None, "{bad}");
        assert_eq!(d.len(), 1, "{bad}: {d:?}");
        assert!(d[0].starts_with("lsb.queues:3:13: warning: queue `q`: PROCLIMIT"), "{}", d[0]);
    }
}

#[test]
fn resource_reserve_overrides_slot_reserve() {
    let (q, d) = one("SLOT_RESERVE = MAX_RESERVE_TIME[5]\nRESOURCE_RESERVE = MAX_RESERVE_TIME[20]");
    assert_eq!((q.slot_reserve, q.resource_reserve), (None, Some(20)));
    assert_eq!(
        d,
        ["lsb.queues:3:16: warning: queue `q`: RESOURCE_RESERVE overrides SLOT_RESERVE; SLOT_RESERVE is ignored"]
    );
}

#[test]
fn errors_are_all_reported_and_located() {
    let (_, d) = queues(
        "Begin Queue\nQUEUE_NAME = a\nFAIRSHARE = USER_SHARE[[u, 1]]\nPRIORITY = high\nEnd Queue\n\
         Begin Queue\nPRIORITY = 3\nEnd Queue\nBegin Queue\nQUEUE_NAME = c\nSLOT_SHARE = 0\nBOGUS = 1\nEnd Queue\n",
    );
    assert_eq!(
        d,
        [
            "lsb.queues:3:13: error: FAIRSHARE: expected `USER_SHARES[[name, shares] ...]`, found `USER_SHARE[[u,`",
            "lsb.queues:4:12: error: PRIORITY: expected a whole number, found `high`",
            "lsb.queues:6:1: error: Queue: expected a `QUEUE_NAME` parameter",
            "lsb.queues:11:14: error: SLOT_SHARE: expected a percentage greater than 0 and at most 100, found `0`",
            "lsb.queues:12:1: warning: unknown queue parameter `BOGUS`, ignored",
        ]
    );
}

#[test]
fn a_malformed_res_req_is_located_in_the_file() {
    let (q, d) = one("RES_REQ = \"select[mem > 1000] span[hosts=2]\"");
    assert_eq!(q.res_req, None);
    assert_eq!(d, ["lsb.queues:3:42: error: RES_REQ: span: expected hosts=1 or hosts=-1, found `2]`"]);
}
