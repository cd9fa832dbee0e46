//! The cross-file rules of spec 000 and 004, each with a configuration that
//! breaks it.

use crate::diag::Diagnostics;
use crate::load::from_texts;
use crate::model::Config;

fn load(files: &[(&str, &str)]) -> (Config, Vec<String>) {
    let texts: Vec<(String, String)> = files.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
    let mut d = Diagnostics::default();
    let c = from_texts(&texts, &mut d);
    (c, d.0.iter().map(|x| x.to_string()).collect())
}

fn queue(name: &str, body: &str) -> String {
    format!("Begin Queue\nQUEUE_NAME = {name}\n{body}\nEnd Queue\n")
}

const HOSTS: &str = "Begin Host\nHOST_NAME MXJ\nhosta 5\nhostb 5\nhostc 5\nhostd 5\nEnd Host\n\
                     Begin HostGroup\nGROUP_NAME GROUP_MEMBER\ngroupA (hosta hostb)\ngroupB (hostc hostd)\nEnd HostGroup\n";

/// An empty directory is valid, and, like a configuration of hosts alone,
/// has the embedded defaults' queue `normal` (fairshare among users):
/// somewhere to submit.
#[test]
fn an_empty_directory_is_a_valid_configuration() {
    let (c, d) = load(&[]);
    assert!(d.is_empty());
    assert!(c.hosts.is_empty());
    let names: Vec<&str> = c.queues.iter().map(|q| q.name.as_str()).collect();
    assert_eq!(names, ["normal"], "the default queue");
    assert!(c.queues[0].fairshare.is_some(), "under FAIRSHARE = USER_SHARES[[default, 1]]");
    let (c, d) = load(&[("lsb.hosts", HOSTS)]);
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(c.queues.len(), 1, "hosts alone: the default queue too");
    let (c, _) = load(&[("lsb.queues", &queue("short", ""))]);
    assert_eq!(c.queues.iter().map(|q| q.name.as_str()).collect::<Vec<_>>(), ["short"], "a site's own queues only");
    assert_eq!(c.params.factors.run_job_factor, 3.0);
    assert_eq!(c.settings.policy, "lsf");
}

#[test]
fn cross_queue_slaves_inherit_the_masters_policy() {
    let queues = queue(
        "normal",
        "PRIORITY = 30\nFAIRSHARE = USER_SHARES[[user1,100] [default,1]]\nFAIRSHARE_QUEUES = short license",
    ) + &queue("short", "PRIORITY = 40\nFAIRSHARE = USER_SHARES[[x, 1]]")
        + &queue("license", "PRIORITY = 50");
    let (c, d) = load(&[("lsb.queues", &queues)]);
    assert_eq!(
        d,
        [
            "lsb.queues:10:13: warning: queue `short`: FAIRSHARE is ignored; the queue takes the policy of master queue `normal`"
        ]
    );
    let p = c.policy_of_queue("license").expect("in the set");
    assert_eq!(p.name, "normal");
    assert_eq!(c.fairshare_policies().len(), 1);
}

#[test]
fn cross_queue_sets_do_not_overlap_and_need_fairshare() {
    let queues = queue("a", "PRIORITY = 30\nFAIRSHARE = USER_SHARES[[default,1]]\nFAIRSHARE_QUEUES = b")
        + &queue("c", "PRIORITY = 60\nFAIRSHARE = USER_SHARES[[default,1]]\nFAIRSHARE_QUEUES = b nosuch")
        + &queue("b", "PRIORITY = 30")
        + &queue("d", "PRIORITY = 70\nFAIRSHARE_QUEUES = b");
    let (_, d) = load(&[("lsb.queues", &queues)]);
    assert!(
        d.contains(
            &"lsb.queues:11:20: error: FAIRSHARE_QUEUES: queue `b` is already in the cross-queue set of `a`"
                .to_string()
        ),
        "{d:?}"
    );
    assert!(
        d.contains(&"lsb.queues:11:20: error: FAIRSHARE_QUEUES: queue `nosuch` does not exist".to_string()),
        "{d:?}"
    );
    assert!(
        d.contains(
            &"lsb.queues:20:20: error: queue `d`: FAIRSHARE_QUEUES needs FAIRSHARE in the same (master) queue"
                .to_string()
        ),
        "{d:?}"
    );
}

#[test]
fn the_priority_range_of_a_cross_queue_set_is_reserved_unless_dispatch_order_is_queue() {
    // spec 000: queue1..queue3 at 30, 40, 50 in one set; queue4 cannot be
    // within 30..50, unless DISPATCH_ORDER=QUEUE.
    let set = |extra: &str| {
        queue(
            "queue1",
            &format!(
                "PRIORITY = 30\nFAIRSHARE = USER_SHARES[[user1,100] [default,1]]\nFAIRSHARE_QUEUES = queue2 queue3{extra}"
            ),
        ) + &queue("queue2", "PRIORITY = 40")
            + &queue("queue3", "PRIORITY = 50")
    };
    for (p, ok) in [(29, true), (30, false), (45, false), (50, false), (51, true)] {
        let (_, d) = load(&[("lsb.queues", &(set("") + &queue("queue4", &format!("PRIORITY = {p}"))))]);
        assert_eq!(d.is_empty(), ok, "priority {p}: {d:?}");
        if !ok {
            assert!(d[0].contains("falls in the range 30..50"), "{}", d[0]);
        }
        let (_, d) =
            load(&[("lsb.queues", &(set("\nDISPATCH_ORDER = QUEUE") + &queue("queue4", &format!("PRIORITY = {p}"))))]);
        assert!(d.is_empty(), "DISPATCH_ORDER=QUEUE, priority {p}: {d:?}");
    }
}

#[test]
fn a_host_is_in_one_partition_only() {
    let hosts = HOSTS.to_string()
        + "Begin HostPartition\nHPART_NAME = p1\nHOSTS = groupA\nUSER_SHARES = [default, 1]\nEnd HostPartition\n\
           Begin HostPartition\nHPART_NAME = p2\nHOSTS = hostb hostc\nUSER_SHARES = [default, 1]\nEnd HostPartition\n";
    let (_, d) = load(&[("lsb.hosts", &hosts)]);
    assert_eq!(
        d,
        ["lsb.hosts:19:14: error: host `hostb` is already in host partition `p1`; a host can be in one partition only"]
    );
}

#[test]
fn queue_and_partition_fairshare_are_exclusive() {
    let hosts = HOSTS.to_string()
        + "Begin HostPartition\nHPART_NAME = p\nHOSTS = all\nUSER_SHARES = [default, 1]\nEnd HostPartition\n";
    let (_, d) = load(&[("lsb.hosts", &hosts), ("lsb.queues", &queue("q", "FAIRSHARE = USER_SHARES[[default,1]]"))]);
    assert_eq!(d.len(), 1);
    assert!(
        d[0].starts_with("lsb.queues:3:13: error: queue `q`: queue-level fairshare and host partition fairshare"),
        "{}",
        d[0]
    );
}

#[test]
fn preemption_names_queues_of_lower_or_higher_priority() {
    let queues = queue("high", "PRIORITY = 99\nPREEMPTION = PREEMPTIVE[normal low+1 nosuch]")
        + &queue("normal", "PRIORITY = 5\nPREEMPTION = PREEMPTIVE[low] PREEMPTABLE[high low]")
        + &queue("low", "PRIORITY = 1");
    let (c, d) = load(&[("lsb.hosts", HOSTS), ("lsb.queues", &queues)]);
    assert_eq!(
        d,
        [
            "lsb.queues:4:14: error: queue `high`: PREEMPTION: queue `nosuch` is not defined in lsb.queues",
            "lsb.queues:9:14: warning: queue `normal`: PREEMPTION: queue `low` (PRIORITY 1) is not of higher \
             priority than this one (5); preemption goes from higher to lower priority only, so it takes no part",
        ]
    );
    let high = &c.queues[0].preemption;
    assert_eq!(high.preemptive.as_ref().map(|l| l[1].clone()), Some(("low".to_string(), Some(1))));
}

#[test]
fn slot_pool_queues_share_hosts_and_do_not_preempt() {
    let queues = queue("q1", "SLOT_POOL = poolA\nSLOT_SHARE = 50\nHOSTS = groupA")
        + &queue("q2", "SLOT_POOL = poolA\nSLOT_SHARE = 30\nHOSTS = groupB\nPREEMPTION = PREEMPTIVE")
        + &queue("q3", "SLOT_POOL = poolA\nSLOT_SHARE = 20\nHOSTS = hosta hostb")
        + &queue("q4", "SLOT_POOL = poolB");
    let (_, d) = load(&[("lsb.hosts", HOSTS), ("lsb.queues", &queues)]);
    assert_eq!(
        d,
        [
            "lsb.queues:11:9: error: queue `q2`: the queues of slot pool `poolA` must use the same hosts as queue `q1`",
            "lsb.queues:12:14: error: queue `q2`: a queue in slot pool `poolA` cannot be preemptive or preemptable",
            "lsb.queues:22:13: error: queue `q4`: SLOT_POOL needs SLOT_SHARE",
        ]
    );
}

#[test]
fn groups_named_with_at_must_exist() {
    let (_, d) = load(&[("lsb.queues", &queue("q", "FAIRSHARE = USER_SHARES[[nosuch@, 1]]"))]);
    assert_eq!(d, ["lsb.queues:3:13: error: `[nosuch@, 1]`: user group `nosuch` is not defined in lsb.users"]);
    let users = "Begin UserGroup\nGROUP_NAME GROUP_MEMBER USER_SHARES\ng (u1) ([ghost@, 2])\nEnd UserGroup\n";
    let (_, d) = load(&[("lsb.users", users)]);
    assert_eq!(d, ["lsb.users:3:10: error: `ghost@`: user group `ghost` is not defined"]);
    let hosts =
        "Begin HostPartition\nHPART_NAME = p\nHOSTS = all\nUSER_SHARES = [default, 1] [ghost@, 2]\nEnd HostPartition\n";
    let (_, d) = load(&[("lsb.hosts", hosts)]);
    assert_eq!(d, ["lsb.hosts:4:15: error: `[ghost@, 2]`: user group `ghost` is not defined in lsb.users"]);
}

#[test]
fn hosts_resolve_through_groups_all_and_exclusions() {
    let (c, d) = load(&[("lsb.hosts", HOSTS)]);
    assert!(d.is_empty(), "{d:?}");
    let refs = |s: &str| {
        s.split_whitespace()
            .map(|t| crate::model::HostRef {
                name: t.trim_start_matches('~').to_string(),
                exclude: t.starts_with('~'),
                first_exec: false,
                preference: None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(c.resolve_hosts(&refs("groupA hostd")), ["hosta", "hostb", "hostd"]);
    assert_eq!(c.resolve_hosts(&refs("all ~groupA")), ["hostc", "hostd"]);
    assert_eq!(c.resolve_hosts(&refs("~hostc")), ["hosta", "hostb", "hostd"]);
    assert_eq!(c.resolve_hosts(&[]).len(), 4);
    assert_eq!(c.hosts[0].slots(), 5);
}

#[test]
fn a_hosts_cpus_come_from_ncpus_or_else_mxj() {
    let cluster = "Begin Host\nHOSTNAME model type server RESOURCES ncpus\nh1 ! ! 1 () 16\nh2 ! ! 1 () ()\nEnd Host\n";
    let lsb = "Begin Host\nHOST_NAME MXJ\nh1 32\nh2 8\nEnd Host\n";
    let (c, d) = load(&[("lsf.cluster.x", cluster), ("lsb.hosts", lsb)]);
    assert!(d.is_empty(), "{d:?}");
    assert_eq!((c.hosts[0].cpus(), c.hosts[0].slots()), (16, 32));
    assert_eq!((c.hosts[1].cpus(), c.hosts[1].slots()), (8, 8));
    let toml = "[[hosts]]\nname = \"h1\"\n";
    let (c, d) = load(&[("lsf.cluster.x", cluster), ("allot.toml", toml)]);
    assert_eq!(d, ["allot.toml:2:8: error: host `h1` is already defined at lsf.cluster.x:3:1"]);
    assert_eq!(c.cluster_name(), "x", "the cluster file names the cluster");
}

#[test]
fn the_cluster_is_named_by_its_cluster_file_else_allot() {
    let (c, _) = load(&[("lsb.params", "Begin Parameters\nEnd Parameters\n")]);
    assert_eq!(c.cluster_name(), "allot");
    let host = |h: &str| format!("Begin Host\nHOSTNAME model type server RESOURCES ncpus\n{h} ! ! 1 () 4\nEnd Host\n");
    let (c, d) = load(&[("lsf.cluster.zeta", &host("h1")), ("lsf.cluster.alpha", &host("h2"))]);
    assert_eq!(d, ["lsf.cluster.zeta:1:1: warning: this is cluster `alpha`, not `zeta`: the file is not read"]);
    assert_eq!(c.cluster_name(), "alpha", "the first by name");
    assert_eq!(c.hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(), ["h2"], "its hosts alone");
    // lsf.shared names it: the cluster with its file there.
    let shared = "Begin Cluster\nClusterName Servers\nmc1 ()\nzeta ()\nEnd Cluster\n";
    let (c, d) = load(&[("lsf.shared", shared), ("lsf.cluster.zeta", &host("h1")), ("lsf.cluster.alpha", &host("h2"))]);
    assert_eq!(d, ["lsf.cluster.alpha:1:1: warning: this is cluster `zeta`, not `alpha`: the file is not read"]);
    assert_eq!((c.cluster_name(), c.hosts[0].name.as_str()), ("zeta", "h1"));
    let (c, d) = load(&[("lsf.shared", shared), ("lsb.params", "Begin Parameters\nEnd Parameters\n")]);
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(c.cluster_name(), "mc1", "named, with no cluster file");
}

#[test]
fn compute_unit_types_and_members() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nhost101 4\nhost102 4\nEnd Host\n\
                 Begin ComputeUnit\nNAME MEMBER TYPE\nenc1 (host1[01-02]) enclosure\nrack1 (enc1) rack\nbad (enc9) rack\nodd (host101) shelf\nEnd ComputeUnit\n";
    let params = "Begin Parameters\nCOMPUTE_UNIT_TYPES = enclosure! rack\nEnd Parameters\n";
    let (_, d) =
        load(&[("lsb.params", params), ("lsb.hosts", hosts), ("lsb.queues", &queue("q", "EXCLUSIVE = CU[switch]"))]);
    assert_eq!(
        d,
        [
            "lsb.hosts:10:1: error: compute unit `bad`: member `enc9` is not a compute unit of a finer type, defined above",
            "lsb.hosts:11:1: error: compute unit `odd`: TYPE `shelf` is not in COMPUTE_UNIT_TYPES",
            "lsb.queues:3:13: error: queue `q`: EXCLUSIVE=CU[switch]: `switch` is not in COMPUTE_UNIT_TYPES",
        ]
    );
}

#[test]
fn default_queue_names_queues_and_one_interruptible_backfill_queue() {
    let params = "Begin Parameters\nDEFAULT_QUEUE = normal nosuch\nEnd Parameters\n";
    let queues = queue("normal", "INTERRUPTIBLE_BACKFILL = 1") + &queue("lazy", "INTERRUPTIBLE_BACKFILL = 1");
    let (_, d) = load(&[("lsb.params", params), ("lsb.queues", &queues)]);
    assert_eq!(
        d,
        [
            "lsb.params:2:17: error: DEFAULT_QUEUE: queue `nosuch` is not defined in lsb.queues",
            "lsb.queues:3:26: warning: queue `normal`: INTERRUPTIBLE_BACKFILL needs BACKFILL = Y and a RUNLIMIT in the queue; ignored",
            "lsb.queues:7:26: warning: queue `lazy`: INTERRUPTIBLE_BACKFILL needs BACKFILL = Y and a RUNLIMIT in the queue; ignored",
            "lsb.queues:7:26: error: queue `lazy`: only one queue can be an interruptible backfill queue (`normal` is)",
        ]
    );
}

#[test]
fn interruptible_backfill_needs_backfill_and_a_runlimit_in_the_lowest_queue() {
    let queues = queue(
        "lazy",
        "PRIORITY = 20
BACKFILL = Y
RUNLIMIT = 10
INTERRUPTIBLE_BACKFILL = 1",
    ) + &queue("idle", "PRIORITY = 10");
    let (c, d) = load(&[("lsb.queues", &queues)]);
    assert_eq!(
        d,
        [
            "lsb.queues:6:26: warning: queue `lazy`: INTERRUPTIBLE_BACKFILL belongs in the lowest priority queue (`idle` has PRIORITY 10)"
        ]
    );
    assert_eq!(c.engine_config().queues[0].interruptible, Some(1));
    let (c, _) = load(&[(
        "lsb.queues",
        &queue(
            "lazy",
            "RUNLIMIT = 10
INTERRUPTIBLE_BACKFILL = 1",
        ),
    )]);
    assert_eq!(c.engine_config().queues[0].interruptible, None, "no BACKFILL: disabled");
    let (c, _) = load(&[(
        "lsb.queues",
        &queue(
            "lazy",
            "BACKFILL = Y
INTERRUPTIBLE_BACKFILL = 1",
        ),
    )]);
    assert_eq!(c.engine_config().queues[0].interruptible, None, "no RUNLIMIT: disabled");
}

#[test]
fn lsf_conf_turns_on_parallel_fairshare() {
    let (c, _) = load(&[
        ("lsf.conf", "LSF_LOGDIR=/tmp\nLSB_NCPU_ENFORCE=1\n"),
        ("lsb.queues", &queue("q", "FAIRSHARE = USER_SHARES[[default,1]]")),
    ]);
    assert!(c.params.ncpu_enforce);
    assert!(c.fairshare_policies()[0].parallel_fairshare);
}

/// A multifactor policy reads its associations (`[priority] accounts`) or
/// takes the default queue's share tree, and the engine's configuration
/// carries it; without any associations it is a located error.
#[test]
fn multifactor_policies_have_associations() {
    let toml = "[priority]\npolicy = \"slurm-fairtree\"\naccounts = \"assoc.cfg\"\n";
    let dump = "Parent - 'root'\nAccount - 'A':Fairshare=2\nParent - 'A'\nUser - 'u1'\n";
    let (c, errors) = load(&[("allot.toml", toml), ("assoc.cfg", dump)]);
    assert!(errors.is_empty(), "{errors:?}");
    let tree = c.account_tree(Vec::new()).expect("associations");
    assert_eq!(tree.user_assocs("u1").len(), 1);
    assert_eq!(c.multifactor_policy(), Some(allot_engine::multifactor::FairsharePolicy::FairTree));
    let mf = c.engine_config().multifactor.expect("the engine orders by it");
    assert_eq!((mf.policy, mf.tree.user_count()), (allot_engine::multifactor::FairsharePolicy::FairTree, 1));
    // Without an accounts file: the default queue's share tree, with the
    // users the simulator names placed by `default`.
    let queues = queue("normal", "FAIRSHARE = USER_SHARES[[u1, 3] [default, 1]]");
    let (c, errors) =
        load(&[("allot.toml", "[priority]\npolicy = \"slurm-classic\"\ndampening = 2\n"), ("lsb.queues", &queues)]);
    assert!(errors.is_empty(), "{errors:?}");
    let tree = c.account_tree(Vec::new()).expect("from the share tree");
    assert_eq!((tree.user_count(), tree.user_assocs("u1").len()), (1, 1));
    let mf = c.engine_config_for(vec!["u7".into()]).multifactor.expect("multifactor");
    assert_eq!(mf.tree.user_assocs("u7").len(), 1, "placed by default");
    assert_eq!(mf.policy, allot_engine::multifactor::FairsharePolicy::Classic { dampening: 2.0 });
    let (c, _) = load(&[]);
    assert!(c.engine_config().multifactor.is_none());
    let plain = queue("normal", "");
    let (_, errors) =
        load(&[("allot.toml", "[priority]\npolicy = \"flux-accounting\"\n"), ("lsb.queues", plain.as_str())]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("allot.toml:2:10: error: [priority] policy `flux-accounting`: no associations"),
        "{errors:?}"
    );
}

/// A host group that contains itself, directly or through another, is an
/// error at its line, and resolving hosts through it ends (it overflowed
/// the stack before); groups named many ways over are expanded once each.
#[test]
fn a_host_group_that_contains_itself_is_refused_and_resolves() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nhosta 5\nhostb 5\nEnd Host\n\
                 Begin HostGroup\nGROUP_NAME GROUP_MEMBER\npool (pool hosta)\nloop1 (loop2)\nloop2 (loop1 hostb)\n\
                 End HostGroup\n";
    let (c, d) = load(&[("lsb.hosts", hosts)]);
    assert_eq!(
        d,
        [
            "lsb.hosts:8:1: error: host group `pool` contains itself",
            "lsb.hosts:9:1: error: host group `loop1` contains itself",
            "lsb.hosts:10:1: error: host group `loop2` contains itself",
        ]
    );
    let group =
        |name: &str| crate::model::HostRef { name: name.into(), exclude: false, first_exec: false, preference: None };
    assert_eq!(c.resolve_hosts(&[group("pool")]), ["hosta"]);
    assert_eq!(c.resolve_hosts(&[group("loop1")]), ["hostb"]);
    // A ladder of 60 groups, each naming the next twice over: 2^60 paths,
    // each group expanded once.
    let mut ladder =
        String::from("Begin Host\nHOST_NAME MXJ\nhosta 5\nEnd Host\nBegin HostGroup\nGROUP_NAME GROUP_MEMBER\n");
    for i in 0..60 {
        ladder.push_str(&format!("g{i} (g{0} g{0}x)\ng{i}x (g{0})\n", i + 1));
    }
    ladder.push_str("g60 (hosta)\ng60x (hosta)\nEnd HostGroup\n");
    let (c, d) = load(&[("lsb.hosts", &ladder)]);
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(c.resolve_hosts(&[group("g0")]), ["hosta"]);
}

#[test]
fn the_specs_lsf_conf_parameters_allot_does_not_apply_are_warned_about() {
    let conf = "LSF_LOGDIR=/var/log/lsf\nLSB_NCPU_ENFORCE=1\nLSB_BIND_JOB=Y\nEGO_DEFINE_NCPUS=cores\n";
    let (config, d) = load(&[("lsf.conf", conf)]);
    assert_eq!(
        d,
        [
            "lsf.conf:3:1: warning: `LSB_BIND_JOB` is not applied by allot, ignored",
            "lsf.conf:4:1: warning: `EGO_DEFINE_NCPUS` is not applied by allot, ignored"
        ]
    );
    assert!(config.params.ncpu_enforce);
}

/// `HOSTS = none` (LSF's send-only MultiCluster queue), or a list naming
/// no host of the cluster, is no hosts: never all of them.
#[test]
fn a_queue_whose_hosts_name_none_of_the_cluster_has_none() {
    let queues = queue("far", "HOSTS = none") + &queue("typo", "HOSTS = hostz") + &queue("every", "HOSTS = all");
    let (c, d) = load(&[("lsb.hosts", HOSTS), ("lsb.queues", &queues)]);
    assert!(d.iter().any(|w| w.contains("queue `far`: HOSTS: `none`") && w.contains("refuses every job")), "{d:?}");
    assert!(d.iter().any(|w| w.contains("queue `typo`: HOSTS: no host of this cluster")), "{d:?}");
    let engine = c.engine_config();
    let hosts = |name: &str| engine.queues.iter().find(|q| q.name == name).and_then(|q| q.hosts.clone());
    assert_eq!(hosts("far"), Some(Vec::new()));
    assert_eq!(hosts("typo"), Some(Vec::new()));
    assert_eq!(hosts("every").map(|h| h.len()), Some(4), "all four hosts");
    let mut e = allot_engine::Engine::new(engine);
    let spec = allot_engine::JobSpec { user: "u".into(), queue: Some("far".into()), slots: 1, ..Default::default() };
    let refused = e.submit(&spec).expect_err("no hosts");
    assert_eq!(refused.to_string(), "-n 1: queue `far` has 0 job slots on its hosts");
}
