//! Measuring running jobs (allotd on its own host, an agent on its):
//! CPU time and memory, from each job's cgroup where there is one, else
//! from `/proc` over the job's process group; and an agent's `blaunch`
//! tasks of each job the same way (each run's tasks' cgroup, which counts
//! the tasks that ended too, else their process groups now), added to the
//! job's measure.

use std::collections::BTreeMap;

/// One job's measure: job, CPU seconds, resident memory KB.
pub type Sample = (u64, f64, u64);

/// What to measure: the running jobs, where their files are, and the
/// directory of their cgroups when they have them.
pub struct Sampling {
    pub jobs: Vec<u64>,
    pub files: allot_exec::JobFiles,
    pub cgroups: Option<std::path::PathBuf>,
    /// The `blaunch` tasks on this host (an agent's), and its state
    /// directory, where their process groups are.
    pub tasks: Vec<crate::spool::Task>,
    pub state_dir: std::path::PathBuf,
}

impl Sampling {
    pub fn sample(self) -> Vec<Sample> {
        let in_cgroups: BTreeMap<u64, allot_exec::cgroup::CgroupUsage> = match &self.cgroups {
            Some(base) => self
                .jobs
                .iter()
                .filter_map(|&id| {
                    Some((id, allot_exec::cgroup::read_usage(&allot_exec::cgroup::job_dir_in(base, id))?))
                })
                .collect(),
            None => BTreeMap::new(),
        };
        // /proc for what no cgroup measures: every job without one, and
        // the memory of those whose cgroup has no memory controller.
        let groups: BTreeMap<i32, u64> = self
            .jobs
            .iter()
            .filter(|id| in_cgroups.get(id).is_none_or(|u| u.memory_kb.is_none()))
            .filter_map(|&id| self.files.read_pgid(id).map(|pgid| (pgid, id)))
            .collect();
        let sampled: BTreeMap<u64, allot_exec::GroupUsage> =
            allot_exec::sample_groups(&groups.keys().copied().collect())
                .into_iter()
                .map(|(pgid, u)| (groups[&pgid], u))
                .collect();
        let mut per_job: BTreeMap<u64, (f64, u64)> = BTreeMap::new();
        for &job in &self.jobs {
            let (cpu_time, mem_kb) = match (in_cgroups.get(&job), sampled.get(&job)) {
                (Some(c), p) => (c.cpu_time, c.memory_kb.or(p.map(|p| p.rss_kb)).unwrap_or(0)),
                (None, Some(p)) => (p.cpu_time, p.rss_kb),
                (None, None) => continue,
            };
            per_job.insert(job, ((cpu_time * 100.0).round() / 100.0, mem_kb));
        }
        self.add_tasks(&mut per_job);
        per_job.into_iter().map(|(job, (cpu, mem))| (job, cpu, mem)).collect()
    }

    /// The tasks' usage added to their jobs': each run's from its tasks'
    /// cgroup where it has one, else from its tasks' process groups now;
    /// the memory of a run whose cgroup has no memory controller (a
    /// hybrid hierarchy) from its process groups too.
    fn add_tasks(&self, per_job: &mut BTreeMap<u64, (f64, u64)>) {
        let runs: std::collections::BTreeSet<(u64, u32)> =
            self.tasks.iter().map(|t| (t.run.job, t.run.attempt)).collect();
        // Runs whose cgroup measured their CPU time, and their memory.
        let (mut cpu_done, mut mem_done) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        for run in runs {
            let dir = self.cgroups.as_ref().map(|b| crate::tasks::cgroup_of(b, run));
            if let Some(u) = dir.and_then(|d| allot_exec::cgroup::read_usage(&d)) {
                let e = per_job.entry(run.0).or_default();
                e.0 += u.cpu_time;
                cpu_done.insert(run);
                if let Some(kb) = u.memory_kb {
                    e.1 += kb;
                    mem_done.insert(run);
                }
            }
        }
        let unmeasured: Vec<(i32, (u64, u32))> = self
            .tasks
            .iter()
            .map(|t| (t, (t.run.job, t.run.attempt)))
            .filter(|(_, run)| !mem_done.contains(run))
            .filter_map(|(t, run)| Some((t.pgid(&self.state_dir)?, run)))
            .collect();
        let sampled = allot_exec::sample_groups(&unmeasured.iter().map(|t| t.0).collect());
        for (pgid, run) in unmeasured {
            if let Some(u) = sampled.get(&pgid) {
                let e = per_job.entry(run.0).or_default();
                if !cpu_done.contains(&run) {
                    e.0 += u.cpu_time;
                }
                e.1 += u.rss_kb;
            }
        }
    }
}
