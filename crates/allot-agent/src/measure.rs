//! Measuring running jobs (allotd on its own host, an agent on its):
//! CPU time and memory, from each job's cgroup where there is one, else
//! from `/proc` over the job's process group.

use std::collections::BTreeMap;

/// One job's measure: job, CPU seconds, resident memory KB.
pub type Sample = (u64, f64, u64);

/// What to measure: the running jobs, where their files are, and the
/// directory of their cgroups when they have them.
pub struct Sampling {
    pub jobs: Vec<u64>,
    pub files: allot_exec::JobFiles,
    pub cgroups: Option<std::path::PathBuf>,
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
        let mut out = Vec::new();
        for &job in &self.jobs {
            let (cpu_time, mem_kb) = match (in_cgroups.get(&job), sampled.get(&job)) {
                (Some(c), p) => (c.cpu_time, c.memory_kb.or(p.map(|p| p.rss_kb)).unwrap_or(0)),
                (None, Some(p)) => (p.cpu_time, p.rss_kb),
                (None, None) => continue,
            };
            out.push((job, (cpu_time * 100.0).round() / 100.0, mem_kb));
        }
        out
    }
}
