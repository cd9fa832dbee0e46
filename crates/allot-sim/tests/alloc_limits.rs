//! Resource allocation limits (`lsb.resources` Limit sections) as LSF
//! documents them: SLOTS, SLOTS_PER_PROCESSOR, MEM and JOBS, for users,
//! queues, hosts, projects and application profiles together or each
//! alone, the most restrictive of several, and LSF's pending reasons.

mod common;

use allot_engine::{Engine, Event, JobId, JobSpec, PendingReason, Time};
use allot_sim::testing::engine_from;
use common::{end, pass, queue, res};

/// Two hosts of 4 CPUs and 4 slots, 2000 MB each.
const HOSTS: &str = "[[hosts]]\nname = \"hostA\"\nncpus = 4\nmaxmem = 2000\n\n\
                     [[hosts]]\nname = \"hostB\"\nncpus = 4\nmaxmem = 2000\n";

const USERS: &str = "Begin UserGroup\nGROUP_NAME GROUP_MEMBER\nteam (ann bob)\nEnd UserGroup\n";

fn engine(resources: &str) -> Engine {
    let queues = format!("{}{}", queue("normal", 30, ""), queue("other", 20, ""));
    engine_from(&[("allot.toml", HOSTS), ("lsb.users", USERS), ("lsb.queues", &queues), ("lsb.resources", resources)])
}

fn spec(user: &str, slots: u32) -> JobSpec {
    JobSpec { user: user.into(), queue: Some("normal".into()), slots, ..JobSpec::default() }
}

fn submit(e: &mut Engine, s: JobSpec) -> JobId {
    e.apply(Time(0), &Event::Submit(s)).expect("accepted").expect("an id")
}

fn submit_n(e: &mut Engine, n: usize, s: &JobSpec) -> Vec<JobId> {
    (0..n).map(|_| submit(e, s.clone())).collect()
}

/// Slots each host gives the jobs started, by host name.
fn on_hosts(e: &Engine, jobs: &[JobId]) -> Vec<(String, u32)> {
    let mut by: std::collections::BTreeMap<String, u32> = Default::default();
    for &j in jobs {
        for (h, n) in e.job_alloc(j).unwrap_or_default() {
            *by.entry(e.host_name(h).to_string()).or_default() += n.0;
        }
    }
    by.into_iter().collect()
}

fn reason(e: &Engine, id: JobId) -> String {
    e.pending_reason(id, Time(0)).map(|r| r.to_string()).unwrap_or_default()
}

/// The case: `SLOTS = 2` on hostA lets 2 jobs run there.
#[test]
fn a_slot_limit_on_a_host_holds_there() {
    let mut e = engine("Begin Limit\nNAME = hostA_slots\nHOSTS = hostA\nSLOTS = 2\nEnd Limit\n");
    let mut only_a = spec("ann", 1);
    only_a.hosts = vec![allot_engine::model::HostPick { name: "hostA".into(), first: false, preference: None }];
    let jobs = submit_n(&mut e, 4, &only_a);
    assert_eq!(pass(&mut e, Time(0)).len(), 2);
    assert_eq!(on_hosts(&e, &jobs), [("hostA".to_string(), 2)]);
    assert_eq!(
        reason(&e, jobs[3]),
        "Resource (slot) limit defined on host and/or host group has been reached (Limit hostA_slots)"
    );
    // Anywhere: the other host takes the rest.
    let more = submit_n(&mut e, 4, &spec("ann", 1));
    pass(&mut e, Time(0));
    assert_eq!(on_hosts(&e, &more), [("hostB".to_string(), 4)]);
    // One ends on hostA: one more runs there.
    end(&mut e, Time(10), jobs[0]);
    assert_eq!(pass(&mut e, Time(10)).len(), 1);
    assert_eq!(on_hosts(&e, &jobs), [("hostA".to_string(), 2)]);
}

#[test]
fn per_user_slots_bound_each_user_and_users_bound_them_together() {
    let mut e = engine("Begin Limit\nNAME = each\nPER_USER = all\nSLOTS = 3\nEnd Limit\n");
    let ann = submit_n(&mut e, 5, &spec("ann", 1));
    let bob = submit_n(&mut e, 2, &spec("bob", 1));
    pass(&mut e, Time(0));
    let running = |e: &Engine, js: &[JobId]| js.iter().filter(|&&j| e.job_alloc(j).is_some()).count();
    assert_eq!((running(&e, &ann), running(&e, &bob)), (3, 2));
    assert_eq!(reason(&e, ann[4]), "Resource (slot) limit defined on user or user group has been reached (Limit each)");

    // USERS = team: ann and bob share 4; cy is not in it.
    let mut e = engine("Begin Limit\nNAME = team4\nUSERS = team\nSLOTS = 4\nEnd Limit\n");
    let ann = submit_n(&mut e, 3, &spec("ann", 1));
    let bob = submit_n(&mut e, 3, &spec("bob", 1));
    let cy = submit_n(&mut e, 2, &spec("cy", 1));
    pass(&mut e, Time(0));
    assert_eq!(running(&e, &ann) + running(&e, &bob), 4);
    assert_eq!(running(&e, &cy), 2);

    // PER_USER = team: each member alone; `~bob` leaves bob out.
    let mut e = engine("Begin Limit\nPER_USER = team ~bob\nSLOTS = 1\nEnd Limit\n");
    let ann = submit_n(&mut e, 2, &spec("ann", 1));
    let bob = submit_n(&mut e, 2, &spec("bob", 1));
    pass(&mut e, Time(0));
    assert_eq!((running(&e, &ann), running(&e, &bob)), (1, 2));
}

/// The vertical form: one limit per row, `-` for what a row leaves unset;
/// JOBS per host for one queue, none for the other.
#[test]
fn the_table_form_and_jobs_per_host_of_a_queue() {
    let mut e = engine("Begin Limit\nNAME QUEUES PER_HOST JOBS SLOTS\none normal all 1 -\nEnd Limit\n");
    let normal = submit_n(&mut e, 3, &spec("ann", 1));
    let mut o = spec("ann", 1);
    o.queue = Some("other".into());
    let other = submit_n(&mut e, 3, &o);
    pass(&mut e, Time(0));
    assert_eq!(on_hosts(&e, &normal), [("hostA".to_string(), 1), ("hostB".to_string(), 1)]);
    assert_eq!(on_hosts(&e, &other).iter().map(|x| x.1).sum::<u32>(), 3);
    assert_eq!(
        reason(&e, normal[2]),
        "JOBS limit defined for the queue has been reached (Limit one)",
        "a limit naming a queue speaks of the queue"
    );
}

#[test]
fn slots_per_processor_count_each_hosts_cpus() {
    let mut e = engine("Begin Limit\nNAME = half\nPER_HOST = all\nSLOTS_PER_PROCESSOR = 0.5\nEnd Limit\n");
    let jobs = submit_n(&mut e, 6, &spec("ann", 1));
    pass(&mut e, Time(0));
    assert_eq!(on_hosts(&e, &jobs), [("hostA".to_string(), 2), ("hostB".to_string(), 2)]);
}

/// MEM counts what `rusage[mem]` holds: cluster-wide MB, or a percentage
/// of each host's memory. A job that holds none is not bound by it.
#[test]
fn memory_limits_count_rusage() {
    let mut e = engine("Begin Limit\nNAME = mem\nMEM = 1000\nEnd Limit\n");
    let mut big = spec("ann", 1);
    big.res_req = Some(res("rusage[mem=400]"));
    let jobs = submit_n(&mut e, 3, &big);
    let plain = submit_n(&mut e, 2, &spec("ann", 1));
    pass(&mut e, Time(0));
    assert_eq!(jobs.iter().filter(|&&j| e.job_alloc(j).is_some()).count(), 2, "800 of 1000 MB");
    assert_eq!(plain.iter().filter(|&&j| e.job_alloc(j).is_some()).count(), 2);
    assert_eq!(reason(&e, jobs[2]), "Resource (mem) limit defined cluster wide has been reached (Limit mem)");

    let mut e = engine("Begin Limit\nNAME = half\nPER_HOST = all\nMEM = 50%\nEnd Limit\n");
    let mut m = spec("ann", 1);
    m.res_req = Some(res("rusage[mem=600]"));
    let jobs = submit_n(&mut e, 4, &m);
    pass(&mut e, Time(0));
    assert_eq!(on_hosts(&e, &jobs), [("hostA".to_string(), 1), ("hostB".to_string(), 1)], "1000 MB per host");
}

/// Projects: `-P`, else `default`; PER_PROJECT counts each alone.
#[test]
fn project_limits() {
    let mut e = engine("Begin Limit\nNAME = p\nPER_PROJECT = all ~free\nJOBS = 1\nEnd Limit\n");
    let with = |p: Option<&str>| JobSpec { project: p.map(str::to_string), ..spec("ann", 1) };
    let p1 = submit_n(&mut e, 2, &with(Some("p1")));
    let p2 = submit_n(&mut e, 2, &with(Some("p2")));
    let none = submit_n(&mut e, 2, &with(None));
    let free = submit_n(&mut e, 2, &with(Some("free")));
    pass(&mut e, Time(0));
    let running = |js: &[JobId]| js.iter().filter(|&&j| e.job_alloc(j).is_some()).count();
    assert_eq!((running(&p1), running(&p2), running(&none), running(&free)), (1, 1, 1, 2));
    assert_eq!(reason(&e, p1[1]), "JOBS limit defined for the project has been reached (Limit p)");
}

/// A range takes no more than a limit leaves; with MAX_JOBS of
/// `lsb.users` lower, that holds ("the most restrictive limit is used").
#[test]
fn a_range_takes_what_is_left_and_the_most_restrictive_limit_holds() {
    let mut e = engine("Begin Limit\nNAME = c\nUSERS = all\nSLOTS = 3\nEnd Limit\n");
    let id = submit(&mut e, JobSpec { max_slots: Some(8), ..spec("ann", 1) });
    pass(&mut e, Time(0));
    assert_eq!(on_hosts(&e, &[id]).iter().map(|x| x.1).sum::<u32>(), 3);

    let queues = queue("normal", 30, "");
    let users = "Begin User\nUSER_NAME MAX_JOBS\nann 2\nEnd User\n";
    let mut e = engine_from(&[
        ("allot.toml", HOSTS),
        ("lsb.users", users),
        ("lsb.queues", &queues),
        ("lsb.resources", "Begin Limit\nNAME = c\nUSERS = all\nSLOTS = 3\nEnd Limit\n"),
    ]);
    let jobs = submit_n(&mut e, 4, &spec("ann", 1));
    pass(&mut e, Time(0));
    assert_eq!(jobs.iter().filter(|&&j| e.job_alloc(j).is_some()).count(), 2);
    assert!(matches!(e.pending_reason(jobs[2], Time(0)), Some(PendingReason::UserLimit { limit: 2 })));
}

/// A reconfiguration that adds a limit books the jobs already running
/// under it: none is stopped, and no more start until they fit.
#[test]
fn a_new_limit_counts_the_running_jobs() {
    let mut e = engine("");
    let first = submit_n(&mut e, 3, &spec("ann", 1));
    pass(&mut e, Time(0));
    let queues = format!("{}{}", queue("normal", 30, ""), queue("other", 20, ""));
    let config = allot_sim::testing::engine_config_from(&[
        ("allot.toml", HOSTS),
        ("lsb.users", USERS),
        ("lsb.queues", &queues),
        ("lsb.resources", "Begin Limit\nNAME = two\nSLOTS = 2\nEnd Limit\n"),
    ]);
    e.apply(Time(5), &Event::Reconfigure(Box::new(config))).expect("reconfigured");
    let more = submit(&mut e, spec("bob", 1));
    pass(&mut e, Time(5));
    assert!(e.job_alloc(more).is_none());
    let usage = e.limit_usage(false);
    assert_eq!(usage.len(), 1);
    assert_eq!((usage[0].used.slots, usage[0].slots), (3, Some(2)));
    end(&mut e, Time(6), first[0]);
    pass(&mut e, Time(6));
    assert!(e.job_alloc(more).is_none(), "2 still run: 2 of 2");
    end(&mut e, Time(7), first[1]);
    pass(&mut e, Time(7));
    assert!(e.job_alloc(more).is_some());
}

/// A job suspended by preemption holds no SLOTS under a limit (its slots
/// went to the job that preempted it) but still counts under JOBS; it is
/// resumed only when it fits its limits again.
#[test]
fn preempted_jobs_give_up_their_slots_but_not_their_jobs() {
    let hosts = "Begin Host\nHOST_NAME MXJ\nhostA 2\nhostB 2\nEnd Host\n";
    let queues = queue("high", 40, "PREEMPTION = PREEMPTIVE[low]") + &queue("low", 20, "");
    let limits = "Begin Limit\nNAME = low2\nQUEUES = low\nSLOTS = 2\nEnd Limit\n\
                  Begin Limit\nNAME = lowjobs\nQUEUES = low\nJOBS = 3\nEnd Limit\n";
    let mut e = engine_from(&[("lsb.hosts", hosts), ("lsb.queues", &queues), ("lsb.resources", limits)]);
    let low = |user: &str| JobSpec { queue: Some("low".into()), ..spec(user, 1) };
    let on_a = |mut s: JobSpec| {
        s.hosts = vec![allot_engine::model::HostPick { name: "hostA".into(), first: false, preference: None }];
        s
    };
    let j1 = submit(&mut e, on_a(low("ann")));
    let j2 = submit(&mut e, on_a(low("ann")));
    pass(&mut e, Time(0));
    let high = submit(&mut e, on_a(JobSpec { queue: Some("high".into()), ..spec("bob", 2) }));
    pass(&mut e, Time(1));
    assert!(e.job_alloc(high).is_some(), "it preempts both");
    assert_eq!(e.preempted_jobs().len(), 2);
    // Their slots no longer count: another low job starts on hostB.
    let j3 = submit(&mut e, low("ann"));
    pass(&mut e, Time(2));
    assert_eq!(on_hosts(&e, &[j3]), [("hostB".to_string(), 1)]);
    // But JOBS counts the suspended ones: 3 of 3.
    let j4 = submit(&mut e, low("ann"));
    pass(&mut e, Time(3));
    assert_eq!(reason(&e, j4), "JOBS limit defined for the queue has been reached (Limit lowjobs)");
    // The preemptor ends: one of the two fits the slot limit again.
    end(&mut e, Time(4), high);
    pass(&mut e, Time(4));
    assert_eq!(e.preempted_jobs().len(), 1, "1 + 1 of 2 slots; the other waits");
    // j3 ends: the pass starts j4 (3 jobs, 2 slots) before it resumes,
    // as it does with a host's slots; the suspended one waits for it.
    end(&mut e, Time(5), j3);
    pass(&mut e, Time(5));
    assert!(e.job_alloc(j4).is_some());
    assert_eq!(e.preempted_jobs().len(), 1);
    end(&mut e, Time(6), j4);
    pass(&mut e, Time(6));
    assert!(e.preempted_jobs().is_empty());
    assert!(e.job_alloc(j1).is_some() && e.job_alloc(j2).is_some());
}

/// APPS and PER_APP cover the jobs of those profiles only; a job with no
/// profile is in none.
#[test]
fn application_profile_limits() {
    let apps =
        "Begin Application\nNAME = fluent\nEnd Application\n\nBegin Application\nNAME = abaqus\nEnd Application\n";
    let queues = queue("normal", 30, "");
    let limits = "Begin Limit\nNAME = lic\nPER_APP = all\nJOBS = 1\nEnd Limit\n";
    let mut e = engine_from(&[
        ("allot.toml", HOSTS),
        ("lsb.queues", &queues),
        ("lsb.applications", apps),
        ("lsb.resources", limits),
    ]);
    let app = |a: Option<&str>| JobSpec { app: a.map(str::to_string), ..spec("ann", 1) };
    let fluent = submit_n(&mut e, 2, &app(Some("fluent")));
    let abaqus = submit_n(&mut e, 2, &app(Some("abaqus")));
    let none = submit_n(&mut e, 2, &app(None));
    pass(&mut e, Time(0));
    let running = |js: &[JobId]| js.iter().filter(|&&j| e.job_alloc(j).is_some()).count();
    assert_eq!((running(&fluent), running(&abaqus), running(&none)), (1, 1, 2));
    assert_eq!(reason(&e, fluent[1]), "JOBS limit defined for the application profile has been reached (Limit lic)");
    let usage = e.limit_usage(false);
    let apps: Vec<(Option<String>, u32)> = usage.iter().map(|u| (u.apps.clone(), u.used.jobs)).collect();
    assert_eq!(apps, [(Some("abaqus".into()), 1), (Some("fluent".into()), 1)]);
}

/// A snapshot of the engine keeps what the limits hold: after a restore
/// they bind as before.
#[test]
fn limits_survive_a_snapshot() {
    let mut e = engine("Begin Limit\nNAME = each\nPER_USER = all\nSLOTS = 1\nEnd Limit\n");
    let first = submit(&mut e, spec("ann", 1));
    pass(&mut e, Time(0));
    let json = serde_json::to_string(&e).expect("serializes");
    let mut back: Engine = serde_json::from_str::<Engine>(&json).expect("deserializes").restored();
    let second = submit(&mut back, spec("ann", 1));
    pass(&mut back, Time(1));
    assert!(back.job_alloc(second).is_none(), "ann holds her 1 slot");
    end(&mut back, Time(2), first);
    pass(&mut back, Time(2));
    assert!(back.job_alloc(second).is_some());
}
