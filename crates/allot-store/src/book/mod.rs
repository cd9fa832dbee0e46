//! The log's world as the records build it, kept by one type ([`Book`])
//! and changed by one function ([`apply`]) for allotd, live and on a
//! restart's replay: the jobs (their records, numbers, names, runs and
//! ends, the arrays' elements not made yet), and what administrators and
//! agents made of the hosts and queues (`badmin hclose`, `qclose`, a
//! host's agent heard or lost), with whether the engine may use each host.
//! The history replay (`allot sim --from`) keeps the hosts and queues in
//! one too; its jobs are its own, as it decides their runs again.

mod apply;
mod job;
mod names;
mod numbers;
mod table;
mod tail;

use std::collections::{BTreeMap, BTreeSet};

use allot_engine::{Engine, Event, HostIdx, JobId, Time};

use crate::{Env, Reach, Record};

pub use apply::{ApplyError, Effects, apply};
pub use job::{BookJob, Spans};
pub use names::Names;
pub use numbers::{GivenBefore, Numbers};
pub use table::{host_slots, release_slots};
pub use tail::{MADE_AHEAD, Tail};

/// The jobs, hosts and queues as the log has left them.
#[derive(Clone, Default)]
pub struct Book {
    /// Closed by an administrator (`badmin hclose`).
    pub closed_hosts: BTreeSet<String>,
    /// Closed to new jobs (`badmin qclose`).
    pub closed_queues: BTreeSet<String>,
    /// Each host's agent as last logged ([`Record::HostReach`]); a host
    /// not here was never heard from.
    reach: BTreeMap<String, Reach>,
    /// Whether hosts have agents (a `[cluster]` in the configuration):
    /// then a host takes work only while its agent is heard from.
    pub agents: bool,
    /// The job table: every job submitted and not yet forgotten
    /// ([`Book::clean`]), each element of an array made so far. Boxed: a
    /// job is large, and the table's nodes move their entries as jobs
    /// come and go.
    pub jobs: BTreeMap<JobId, Box<BookJob>>,
    /// Job arrays by id (their first element's): their indices in
    /// ascending order, element `k` having id `id + k`.
    pub arrays: BTreeMap<JobId, Vec<u32>>,
    /// The elements of large arrays not made yet ([`Tail`]), by array.
    pub tails: BTreeMap<JobId, Tail>,
    /// The job numbers given, to the engine's ids.
    pub numbers: Numbers,
    /// The jobs running now, so a pass need not walk every job ever run.
    pub running: BTreeSet<JobId>,
    /// Finished jobs by end time, for [`Book::clean`]; an entry whose job
    /// ran again since is passed over.
    pub finished: BTreeSet<(u64, JobId)>,
    /// Submissions' request ids and the jobs they made, for as long as the
    /// jobs are known (see [`Book::clean`]).
    pub requests: BTreeMap<String, JobId>,
    /// The job table's jobs by owner and name, for `-w`'s names.
    pub names: Names,
    /// The distinct environments of the jobs, one copy each: a backlog of
    /// 100,000 jobs holds a handful.
    pub envs: BTreeSet<Env>,
}

impl Book {
    /// A world with agents or without, nothing closed, no agent heard.
    pub fn new(agents: bool) -> Self {
        Book { agents, ..Book::default() }
    }

    /// `host`'s agent as last logged: `unavail` until it said hello.
    pub fn reach(&self, host: &str) -> Reach {
        self.reach.get(host).copied().unwrap_or(Reach::Unavail)
    }

    /// Every host whose agent was logged, with its state.
    pub fn reaches(&self) -> impl Iterator<Item = (&str, Reach)> {
        self.reach.iter().map(|(h, r)| (h.as_str(), *r))
    }

    /// Whether a host takes new work: not closed by an administrator and,
    /// where hosts have agents, its agent heard from. A host whose agent
    /// never said hello is `unavail`.
    pub fn takes_work(&self, host: &str) -> bool {
        !self.closed_hosts.contains(host) && (!self.agents || self.reach(host) == Reach::Ok)
    }

    /// Applies a record about hosts or queues (`HostChanged`,
    /// `HostReach`, `QueueChanged`), telling the engine whether the host
    /// takes new work (and a running job on a host reached or lost whether
    /// it is UNKWN); false, having done nothing, for any other record.
    fn apply_hosts(&mut self, engine: &mut Engine, t: Time, record: &Record) -> bool {
        match record {
            Record::HostChanged { host, up } => {
                match up {
                    true => self.closed_hosts.remove(host),
                    false => self.closed_hosts.insert(host.clone()),
                };
                self.sync_host(engine, t, host);
            }
            Record::HostReach { host, reach } => {
                self.reach.insert(host.clone(), *reach);
                self.sync_host(engine, t, host);
                self.host_reached(t, host);
            }
            Record::QueueChanged { queue, open } => {
                match open {
                    true => self.closed_queues.remove(queue),
                    false => self.closed_queues.insert(queue.clone()),
                };
            }
            _ => return false,
        }
        true
    }

    /// Tells the engine whether `host` takes new work.
    pub fn sync_host(&self, engine: &mut Engine, t: Time, host: &str) {
        if let Some(h) = engine.host_index(host) {
            let ev = if self.takes_work(host) { Event::HostUp(h) } else { Event::HostDown(h) };
            let _ = engine.apply(t, &ev);
        }
    }

    /// Tells the engine which hosts take no new work: after a start or a
    /// reconfiguration (hosts with agents are down until they say hello).
    /// By index: one walk of the hosts, not a search for each.
    pub fn sync_hosts(&self, engine: &mut Engine, t: Time) {
        let down: Vec<HostIdx> = (engine.hosts().enumerate())
            .filter(|(_, h)| !self.takes_work(h.0))
            .map(|(i, _)| HostIdx(i as u32))
            .collect();
        for h in down {
            let _ = engine.apply(t, &Event::HostDown(h));
        }
    }

    /// After the engine took a new configuration (`agents`: whether it
    /// has them): what names a host or queue no longer configured is
    /// forgotten, and the engine told which hosts take no new work.
    pub fn reconfigured(&mut self, engine: &mut Engine, agents: bool, t: Time) {
        self.agents = agents;
        self.closed_hosts.retain(|h| engine.host_index(h).is_some());
        self.reach.retain(|h, _| engine.host_index(h).is_some());
        let queues: BTreeSet<&str> = engine.queue_names().collect();
        self.closed_queues.retain(|q| queues.contains(q.as_str()));
        drop(queues);
        self.sync_hosts(engine, t);
    }

    /// `host`'s agent as a snapshot had it.
    pub fn restore_reach(&mut self, host: String, reach: Reach) {
        self.reach.insert(host, reach);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use allot_engine::model::{EngineConfig, HostSpec};

    fn engine() -> Engine {
        Engine::new(EngineConfig::one_queue(vec![HostSpec::new("a", 1, 1), HostSpec::new("b", 1, 1)], false))
    }

    #[test]
    fn a_host_takes_work_when_open_and_heard() {
        let mut book = Book::new(false);
        assert!(book.takes_work("a"));
        book.closed_hosts.insert("a".into());
        assert!(!book.takes_work("a"));
        let mut book = Book::new(true);
        assert!(!book.takes_work("a"), "never heard: unavail");
        book.reach.insert("a".into(), Reach::Ok);
        assert!(book.takes_work("a"));
        book.reach.insert("a".into(), Reach::Unreach);
        assert!(!book.takes_work("a"));
    }

    /// Each record about hosts tells the engine at once; a closed queue is
    /// noted; other records are not the book's.
    #[test]
    fn host_records_reach_the_engine() {
        let mut e = engine();
        let mut book = Book::new(true);
        book.sync_hosts(&mut e, Time(0));
        assert_eq!(e.hosts().filter(|h| h.3).count(), 0, "agents not heard: every host down");
        assert!(book.apply_hosts(&mut e, Time(1), &Record::HostReach { host: "a".into(), reach: Reach::Ok }));
        assert_eq!(e.hosts().filter(|h| h.3).map(|h| h.0.to_string()).collect::<Vec<_>>(), ["a"]);
        assert!(book.apply_hosts(&mut e, Time(2), &Record::HostChanged { host: "a".into(), up: false }));
        assert_eq!(e.hosts().filter(|h| h.3).count(), 0, "closed");
        assert!(book.apply_hosts(&mut e, Time(3), &Record::QueueChanged { queue: "normal".into(), open: false }));
        assert!(book.closed_queues.contains("normal"));
        assert!(!book.apply_hosts(&mut e, Time(4), &Record::Scheduled { full: false }));
    }

    /// A reconfiguration forgets what names hosts and queues gone.
    #[test]
    fn a_reconfiguration_forgets_what_is_gone() {
        let mut e = engine();
        let mut book = Book::new(true);
        for h in ["a", "b", "gone"] {
            book.apply_hosts(&mut e, Time(1), &Record::HostReach { host: h.into(), reach: Reach::Ok });
            book.apply_hosts(&mut e, Time(1), &Record::HostChanged { host: h.into(), up: false });
        }
        book.apply_hosts(&mut e, Time(1), &Record::QueueChanged { queue: "gone".into(), open: false });
        book.reconfigured(&mut e, false, Time(2));
        assert_eq!(book.closed_hosts.iter().map(String::as_str).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(book.reaches().map(|r| r.0).collect::<Vec<_>>(), ["a", "b"]);
        assert!(book.closed_queues.is_empty() && !book.agents);
    }
}
