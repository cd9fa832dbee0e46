//! The multi-factor job priority (spec 002, "Job Priority Plugin"):
//!
//!   priority = wait_time_weight * wait_time_factor
//!            + fair_share_weight * fair_share_factor
//!            + qos_weight * qos_factor
//!            + queue_weight * queue_factor
//!            + job_size_weight * job_size_factor
//!            + user_weight * user_factor
//!
//! Each factor is in [0, 1], so that "the associated weights [can] be
//! compared at face value"; a weight of 0 removes its factor.
//!
//! - wait time: `min(waited / max_wait, 1)` ("Jobs that wait longer than
//!   the maximum wait time accrue no further priority increases");
//! - fair share: the cluster's policy's factor for the job's association
//!   ([`super::FairshareRow::factor`]);
//! - QoS: the job's QoS level's priority over the highest level's (by
//!   default expedite 2, normal 1, standby 0: 1, 0.5 and 0);
//! - queue: the queue's PRIORITY over the highest queue PRIORITY;
//! - job size: the job's slots over the cluster's (large jobs first), or,
//!   favouring small jobs, `(total - slots + 1) / total` (a one-slot job 1);
//!   capped to the cluster's size. Measured in nodes instead (`job_size =
//!   "nodes"`; the document's "nominally the number of nodes"), it is the
//!   fewest hosts the job can run on over the cluster's hosts: 1 for
//!   `span[hosts=1]`, `ceil(slots / ptile)` for `span[ptile=n]`, else
//!   `ceil(slots / the most slots a host has)` (see
//!   [`JobInputs::nodes`]);
//! - user: what the owner set, in [0, 1], 1 unless set: "can only lower a
//!   job's priority, not raise it" above where it started.

use serde::{Deserialize, Serialize};

/// The six weights.
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Weights {
    pub wait_time: f64,
    pub fair_share: f64,
    pub qos: f64,
    pub queue: f64,
    pub job_size: f64,
    pub user: f64,
}

/// A job's six factors, each in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Factors {
    pub wait_time: f64,
    pub fair_share: f64,
    pub qos: f64,
    pub queue: f64,
    pub job_size: f64,
    pub user: f64,
}

impl Factors {
    /// Each factor times its weight (what `sprio` shows).
    pub fn weighted(&self, w: &Weights) -> Factors {
        Factors {
            wait_time: w.wait_time * self.wait_time,
            fair_share: w.fair_share * self.fair_share,
            qos: w.qos * self.qos,
            queue: w.queue * self.queue,
            job_size: w.job_size * self.job_size,
            user: w.user * self.user,
        }
    }

    /// The weighted sum.
    pub fn priority(&self, w: &Weights) -> f64 {
        let p = self.weighted(w);
        p.wait_time + p.fair_share + p.qos + p.queue + p.job_size + p.user
    }
}

/// Why a job may not have the QoS level it asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QosRefusal {
    Unknown,
    NotAllowed,
}

/// Whether `f` is a user factor: from 0 to 1 (it only lowers a priority).
pub fn valid_user_factor(f: f64) -> bool {
    (0.0..=1.0).contains(&f)
}

/// A QoS level: its priority, and who may ask for it (`None`: everyone).
/// A level marked `exempt` lifts run-time and size limits ("standby").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QosLevel {
    pub name: String,
    pub priority: u32,
    pub users: Option<Vec<String>>,
    pub exempt: bool,
}

/// The default levels: expedite (2, granted to nobody until configured),
/// normal (1) and standby (0, exempt from size and run-time limits).
pub fn default_qos() -> Vec<QosLevel> {
    vec![
        QosLevel { name: "expedite".into(), priority: 2, users: Some(Vec::new()), exempt: false },
        QosLevel { name: "normal".into(), priority: 1, users: None, exempt: false },
        QosLevel { name: "standby".into(), priority: 0, users: None, exempt: true },
    ]
}

/// What the factors are measured against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriorityParams {
    pub weights: Weights,
    /// Seconds of waiting that make the wait-time factor 1.
    pub max_wait: u64,
    pub favor_small: bool,
    /// What the job size factor counts.
    #[serde(default)]
    pub size_by: SizeBy,
    pub qos: Vec<QosLevel>,
    /// Seconds between recomputations while jobs wait, besides every pass
    /// (Slurm's PriorityCalcPeriod, 5 minutes); 0: at passes only.
    pub calc_period: u64,
}

impl Default for PriorityParams {
    fn default() -> Self {
        PriorityParams {
            weights: Weights::default(),
            max_wait: 7 * 86_400,
            favor_small: false,
            size_by: SizeBy::Slots,
            qos: default_qos(),
            calc_period: 300,
        }
    }
}

/// What the job size factor counts: slots (CPUs), or nodes (hosts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum SizeBy {
    #[default]
    Slots,
    Nodes,
}

/// What one job brings to its factors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobInputs {
    /// Seconds since submission.
    pub waited: u64,
    /// Its association's fair-share factor.
    pub fair_share: f64,
    /// Its QoS level's priority.
    pub qos_priority: u32,
    pub queue_priority: i64,
    pub slots: u32,
    /// The fewest hosts it can run on (what [`Maxima::nodes`] says).
    pub nodes: u32,
    pub user_factor: f64,
}

/// The cluster-wide maxima the factors divide by.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Maxima {
    pub queue_priority: i64,
    pub total_slots: u64,
    pub total_hosts: u64,
    /// The most job slots one host has.
    pub host_slots: u32,
}

impl Maxima {
    /// The highest queue PRIORITY and the job slots of `config`'s hosts.
    pub fn of(config: &crate::model::EngineConfig) -> Maxima {
        Maxima {
            queue_priority: config.queues.iter().map(|q| i64::from(q.priority)).max().unwrap_or(0),
            total_slots: config.hosts.iter().map(|h| u64::from(h.slots)).sum(),
            total_hosts: config.hosts.len() as u64,
            host_slots: config.hosts.iter().map(|h| h.slots).max().unwrap_or(1),
        }
    }

    /// The fewest hosts a job of `slots` slots can run on: one with
    /// `span[hosts=1]`, `ceil(slots / ptile)` with a ptile (the largest,
    /// per host type, or a host's most with `'!'`), else as many as its
    /// slots fill on the largest hosts.
    pub fn nodes(&self, slots: u32, span: Option<&crate::resreq::Span>) -> u32 {
        use crate::resreq::Span;
        let per_host = match span {
            Some(Span::OneHost) => return 1,
            Some(Span::Ptile(p)) => *p,
            Some(Span::PtileBy { default, values }) => {
                let most = values.iter().map(|v| v.1).max().unwrap_or(0);
                if *default { most.max(self.host_slots) } else { most }
            }
            Some(Span::Any) | None => self.host_slots,
        };
        slots.max(1).div_ceil(per_host.max(1))
    }
}

impl PriorityParams {
    pub fn qos_level(&self, name: &str) -> Option<&QosLevel> {
        self.qos.iter().find(|q| q.name == name)
    }

    /// Whether `user` may ask for QoS `name`.
    pub fn may_use_qos(&self, name: &str, user: &str) -> bool {
        self.qos_level(name).is_some_and(|q| q.users.as_ref().is_none_or(|u| u.iter().any(|x| x == user)))
    }

    /// The level a job of `user` asking for `asked` (`normal` when none)
    /// runs at: its priority and whether it is exempt from limits. A
    /// configuration without a `normal` level puts jobs that ask for none
    /// at 0.
    pub fn job_qos(&self, asked: Option<&str>, user: &str) -> Result<(u32, bool), QosRefusal> {
        let name = asked.unwrap_or("normal");
        match self.qos_level(name) {
            Some(level) if self.may_use_qos(name, user) => Ok((level.priority, level.exempt)),
            Some(_) => Err(QosRefusal::NotAllowed),
            None if asked.is_none() => Ok((0, false)),
            None => Err(QosRefusal::Unknown),
        }
    }

    fn max_qos_priority(&self) -> u32 {
        self.qos.iter().map(|q| q.priority).max().unwrap_or(0)
    }

    /// A job's six factors.
    pub fn factors(&self, job: &JobInputs, max: &Maxima) -> Factors {
        let ratio = |x: f64, of: f64| if of > 0.0 { (x / of).clamp(0.0, 1.0) } else { 0.0 };
        let (size, total) = match self.size_by {
            SizeBy::Slots => (job.slots, max.total_slots),
            SizeBy::Nodes => (job.nodes, max.total_hosts),
        };
        let total = total.max(1) as f64;
        let size = f64::from(size.max(1)).min(total);
        Factors {
            wait_time: ratio(job.waited as f64, self.max_wait as f64),
            fair_share: job.fair_share.clamp(0.0, 1.0),
            qos: ratio(f64::from(job.qos_priority), f64::from(self.max_qos_priority())),
            queue: ratio(job.queue_priority as f64, max.queue_priority as f64),
            job_size: if self.favor_small { (total - size + 1.0) / total } else { size / total },
            user: if job.user_factor.is_finite() { job.user_factor.clamp(0.0, 1.0) } else { 1.0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: max_wait one day, 100 slots, queue priorities up to 40.
    /// A job that waited 6 hours (0.25), fair share 0.8, QoS normal (1 of
    /// 2: 0.5), queue 30 (0.75), 25 slots (0.25; favouring small jobs
    /// (100 - 25 + 1)/100 = 0.76), user factor 0.5. Weights 1000, 100000, 10000,
    /// 1000, 500, 2000: 250 + 80000 + 5000 + 750 + 125 + 1000 = 87125.
    #[test]
    fn the_six_factors_and_their_weighted_sum() {
        let mut p = PriorityParams { max_wait: 86_400, ..PriorityParams::default() };
        p.weights = Weights {
            wait_time: 1000.0,
            fair_share: 100_000.0,
            qos: 10_000.0,
            queue: 1000.0,
            job_size: 500.0,
            user: 2000.0,
        };
        let job = JobInputs {
            waited: 6 * 3600,
            fair_share: 0.8,
            qos_priority: 1,
            queue_priority: 30,
            slots: 25,
            nodes: 2,
            user_factor: 0.5,
        };
        let max = Maxima { queue_priority: 40, total_slots: 100, total_hosts: 10, host_slots: 10 };
        let f = p.factors(&job, &max);
        assert_eq!(f, Factors { wait_time: 0.25, fair_share: 0.8, qos: 0.5, queue: 0.75, job_size: 0.25, user: 0.5 });
        assert_eq!(f.priority(&p.weights), 87_125.0);
        p.favor_small = true;
        assert_eq!(p.factors(&job, &max).job_size, 0.76);
        // Capped: waiting past max_wait, more slots than the cluster.
        let long = JobInputs { waited: 10 * 86_400, slots: 500, ..job };
        let f = p.factors(&long, &max);
        assert_eq!((f.wait_time, f.job_size), (1.0, 0.01));
        p.favor_small = false;
        assert_eq!(p.factors(&long, &max).job_size, 1.0);
        // A zero weight removes its factor.
        p.weights.fair_share = 0.0;
        assert_eq!(p.factors(&job, &max).priority(&p.weights), 87_125.0 - 80_000.0);
    }

    /// The job size in nodes, by hand, on 10 hosts of at most 8 slots:
    /// 20 slots fill 3 hosts (20/8 rounded up): 0.3; with `span[ptile=4]`
    /// 5 hosts (0.5), with `span[hosts=1]` one (0.1), with
    /// `span[ptile='!',LINUX:2]` (others take up to 8) still 3, without
    /// `'!'` 10 (1.0). Favouring small jobs, 3 nodes give
    /// (10 - 3 + 1)/10 = 0.8.
    #[test]
    fn job_size_in_nodes() {
        use crate::resreq::Span;
        let mut p = PriorityParams { size_by: SizeBy::Nodes, ..PriorityParams::default() };
        let max = Maxima { queue_priority: 0, total_slots: 80, total_hosts: 10, host_slots: 8 };
        let by = |linux_only: bool| Span::PtileBy { default: !linux_only, values: vec![("LINUX".into(), 2)] };
        let spans = [None, Some(Span::Ptile(4)), Some(Span::OneHost), Some(by(false)), Some(by(true)), Some(Span::Any)];
        let nodes: Vec<u32> = spans.iter().map(|s| max.nodes(20, s.as_ref())).collect();
        assert_eq!(nodes, [3, 5, 1, 3, 10, 3]);
        let job = |nodes| JobInputs {
            waited: 0,
            fair_share: 0.0,
            qos_priority: 0,
            queue_priority: 0,
            slots: 20,
            nodes,
            user_factor: 1.0,
        };
        let size = |p: &PriorityParams, n| p.factors(&job(n), &max).job_size;
        assert_eq!([size(&p, 3), size(&p, 5), size(&p, 1), size(&p, 10)], [0.3, 0.5, 0.1, 1.0]);
        p.favor_small = true;
        assert_eq!(size(&p, 3), 0.8);
        // By slots the same job is 20 of 80.
        p.favor_small = false;
        p.size_by = SizeBy::Slots;
        assert_eq!(size(&p, 3), 0.25);
    }

    /// QoS: expedite 1, normal 0.5, standby 0 (exempt from limits);
    /// expedite only for those it is granted to.
    #[test]
    fn qos_levels_and_who_may_use_them() {
        let mut p = PriorityParams::default();
        let max = Maxima { queue_priority: 0, total_slots: 1, total_hosts: 1, host_slots: 1 };
        let f = |p: &PriorityParams, level: &str| {
            let q = p.qos_level(level).expect("level").priority;
            p.factors(
                &JobInputs {
                    waited: 0,
                    fair_share: 0.0,
                    qos_priority: q,
                    queue_priority: 0,
                    slots: 1,
                    nodes: 1,
                    user_factor: 1.0,
                },
                &max,
            )
            .qos
        };
        assert_eq!([f(&p, "expedite"), f(&p, "normal"), f(&p, "standby")], [1.0, 0.5, 0.0]);
        assert!(p.qos_level("standby").is_some_and(|q| q.exempt));
        assert!(!p.may_use_qos("expedite", "alice") && p.may_use_qos("normal", "alice"));
        p.qos[0].users = Some(vec!["alice".into()]);
        assert!(p.may_use_qos("expedite", "alice") && !p.may_use_qos("expedite", "bob"));
        assert!(!p.may_use_qos("gold", "alice"), "an unknown level");
    }

    /// No NaN from zero maxima, a user factor out of range is clamped.
    #[test]
    fn degenerate_inputs_stay_in_range() {
        let p = PriorityParams { max_wait: 0, qos: Vec::new(), ..PriorityParams::default() };
        let job = JobInputs {
            waited: 100,
            fair_share: 2.0,
            qos_priority: 3,
            queue_priority: -5,
            slots: 0,
            nodes: 0,
            user_factor: -1.0,
        };
        let f = p.factors(&job, &Maxima { queue_priority: 0, total_slots: 0, total_hosts: 0, host_slots: 0 });
        assert_eq!(f, Factors { wait_time: 0.0, fair_share: 1.0, qos: 0.0, queue: 0.0, job_size: 1.0, user: 0.0 });
    }
}
