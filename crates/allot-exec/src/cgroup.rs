//! cgroup v2: a cgroup per job, when the machine gives allotd one it may
//! write, detected at run time.
//!
//! allotd makes `allot-<tag>` in its own cgroup (`<tag>` stands for its
//! state directory, so two daemons on one machine never share job
//! cgroups), and each job's supervisor makes `job.<id>` in it and moves
//! itself there before it starts the job: the job and everything it starts
//! are in the job's cgroup from their first instruction, including
//! processes that leave the job's process group or are never waited for.
//! The job's CPU time is the cgroup's `cpu.stat` `usage_usec`, which cgroup
//! v2 keeps without any controller, and its memory `memory.current` and
//! `memory.peak` when the memory controller reaches `allot-<tag>` (allotd
//! enables it there when it can). Without them, memory comes from `/proc`
//! and getrusage, as on a machine without cgroup v2.
//!
//! Under systemd, give allotd's unit `Delegate=yes` so that it may make
//! cgroups in its own.

use std::path::{Path, PathBuf};

/// The cgroup allotd makes its jobs' cgroups in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cgroups {
    base: PathBuf,
}

/// What a job's cgroup says it used.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CgroupUsage {
    /// CPU seconds of every process that was ever in the cgroup.
    pub cpu_time: f64,
    /// Memory in use now, KB (with the memory controller only).
    pub memory_kb: Option<u64>,
    /// The most memory used, KB (`memory.peak`, kernel 5.19 and later).
    pub peak_kb: Option<u64>,
}

impl Cgroups {
    /// This process's cgroup v2 directory and `allot-<tag>` made in it, or
    /// `None` when the machine has no cgroup v2 or it may not be written.
    pub fn detect(tag: &str) -> Option<Cgroups> {
        Cgroups::make(&current()?, tag)
    }

    /// `allot-<tag>` made (or found) in `parent`, with the memory
    /// controller enabled for its jobs when `parent` passes it on.
    pub fn make(parent: &Path, tag: &str) -> Option<Cgroups> {
        let base = parent.join(format!("allot-{tag}"));
        made_base(&base).ok()?;
        // A cgroup directory has its interface files; anything else (a
        // plain directory on another file system) is not one.
        if !base.join("cgroup.procs").exists() {
            let _ = std::fs::remove_dir(&base);
            return None;
        }
        Some(Cgroups { base })
    }

    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Makes `allot-<tag>` again if it went ([`Cgroups::release`]), with
    /// the memory controller passed on as at first.
    pub fn ensure(&self) {
        if !self.base.join("cgroup.procs").exists() {
            let _ = made_base(&self.base);
        }
    }

    /// Removes `allot-<tag>` while no job runs (it fails, harmlessly,
    /// while one does): an allotd killed with -9 while idle leaves no
    /// empty cgroup behind. Each job's supervisor tries the same as it
    /// leaves ([`leave_job`]), so that the last job to end removes it when
    /// allotd was killed while they ran.
    pub fn release(&self) {
        let _ = std::fs::remove_dir(&self.base);
    }

    /// Where job `job` runs.
    pub fn job_dir(&self, job: u64) -> PathBuf {
        job_dir_in(&self.base, job)
    }
}

/// Job `job`'s cgroup under allotd's `base` (`allot-<tag>`).
pub fn job_dir_in(base: &Path, job: u64) -> PathBuf {
    base.join(format!("job.{job}"))
}

/// A name for a state directory, the same on every start: FNV-1a of its
/// path, in hex.
pub fn tag_of(state_dir: &Path) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in state_dir.as_os_str().as_encoded_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// This process's cgroup v2 directory, from `/proc/self/mountinfo` (where
/// the cgroup2 file system is mounted) and `/proc/self/cgroup` (its `0::`
/// line: the path in that file system).
pub fn own_dir(mountinfo: &str, proc_cgroup: &str) -> Option<PathBuf> {
    let path = proc_cgroup.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let mount = cgroup2_mount(mountinfo)?;
    Some(mount.join(path.trim_start_matches('/')))
}

/// Where the cgroup2 file system is mounted: the mount point (field 5) of
/// the first mountinfo line whose file system type, after the ` - `
/// separator, is `cgroup2`. Mount points escape spaces and such as `\040`.
fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (mount, fs) = line.split_once(" - ")?;
        if fs.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        Some(PathBuf::from(unescape(mount.split_whitespace().nth(4)?)))
    })
}

fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match (bytes[i], octal) {
            (b'\\', Some(d)) => {
                out.push(d.iter().fold(0u8, |n, b| n.wrapping_mul(8).wrapping_add(b - b'0')));
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A cgroup's file, read whole into one page-sized buffer: the kernel
/// gives its size as 0, so `std::fs::read_to_string` would ask its size
/// and then read it 32 bytes at a time (each a system call, for every
/// job's end). The kernel gives a cgroup file's content in one read when
/// the buffer holds it: a read short of the page is the whole file.
pub(crate) fn read_small(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let (mut page, mut bytes) = ([0u8; 4096], Vec::new());
    loop {
        match file.read(&mut page)? {
            0 => break,
            n => {
                bytes.extend_from_slice(&page[..n]);
                if n < page.len() {
                    break;
                }
            }
        }
    }
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The usage in a job's cgroup; `None` when it has no `cpu.stat`. Without
/// `memory.current` the memory controller does not reach the cgroup, and
/// `memory.peak` is not looked for.
pub fn read_usage(dir: &Path) -> Option<CgroupUsage> {
    let cpu = read_small(&dir.join("cpu.stat")).ok()?;
    let usec = cpu.lines().find_map(|l| l.strip_prefix("usage_usec "))?.trim().parse::<u64>().ok()?;
    let kb = |file: &str| read_small(&dir.join(file)).ok().and_then(|v| v.trim().parse::<u64>().ok()).map(|b| b / 1024);
    let memory_kb = kb("memory.current");
    let peak_kb = memory_kb.and_then(|_| kb("memory.peak"));
    Some(CgroupUsage { cpu_time: usec as f64 / 1e6, memory_kb, peak_kb })
}

/// Sets a job cgroup's memory ceiling (`memory.max`, bytes) to `kb`,
/// where the memory controller reaches it (the file is there); `false`
/// where it does not, and the limit is then kept by measure alone.
pub fn limit_memory(dir: &Path, kb: u64) -> bool {
    let file = dir.join("memory.max");
    file.exists() && std::fs::write(file, kb.saturating_mul(1024).to_string()).is_ok()
}

/// Whether the kernel ended a process of the cgroup for its memory
/// ceiling (`memory.events`' `oom_kill`).
pub fn oom_killed(dir: &Path) -> bool {
    let events = read_small(&dir.join("memory.events")).unwrap_or_default();
    events.lines().filter_map(|l| l.strip_prefix("oom_kill ")).any(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0))
}

/// Moves this process into the cgroup `dir`, made if it is missing.
pub fn enter(dir: &Path) -> std::io::Result<()> {
    made(dir)?;
    std::fs::write(dir.join("cgroup.procs"), "0")
}

/// Moves this process into its job's cgroup `dir`
/// (`<allotd's>/allot-<tag>/job.<id>`), made, with `allot-<tag>` made
/// again when the last job before it removed it ([`leave_job`]) between
/// allotd's [`Cgroups::ensure`] and now.
pub fn enter_job(dir: &Path) -> std::io::Result<()> {
    let mut tries = 0;
    loop {
        match enter(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 3 => {
                tries += 1;
                if let Some(base) = dir.parent() {
                    made_base(base)?;
                }
            }
            done => return done,
        }
    }
}

/// Moves this process back to `home`, kills every process left in its
/// job's cgroup `dir` ([`crate::strays::kill_cgroup`]: nothing of a job
/// outlives it) and removes it, then `allot-<tag>` when no other job's
/// cgroup is in it. Where this process cannot leave, nothing is killed
/// (it would be killed too), and the cgroup stays while processes do.
pub fn leave_job(dir: &Path, home: &Path) {
    // `home` is where this process was: it is there to go back to.
    if std::fs::write(home.join("cgroup.procs"), "0").is_err() {
        eprintln!("allot-supervise: cannot leave the job's cgroup {}: what is left of the job runs on", dir.display());
        return;
    }
    crate::strays::end_cgroup(dir, "allot-supervise");
    if let Some(base) = dir.parent() {
        let _ = std::fs::remove_dir(base);
    }
}

/// `allot-<tag>` made, or already there, with the memory controller passed
/// on to its jobs when it has it.
fn made_base(base: &Path) -> std::io::Result<()> {
    made(base)?;
    let controllers = std::fs::read_to_string(base.join("cgroup.controllers")).unwrap_or_default();
    if controllers.split_whitespace().any(|c| c == "memory") {
        let _ = std::fs::write(base.join("cgroup.subtree_control"), "+memory");
    }
    Ok(())
}

/// `dir` made, or already there.
fn made(dir: &Path) -> std::io::Result<()> {
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// This process's own cgroup directory now.
pub fn current() -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    own_dir(&mountinfo, &own)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
24 30 0:22 / /sys rw,nosuid shared:7 - sysfs sysfs rw
35 24 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/my\\040cgroups rw,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate
";

    #[test]
    fn the_own_directory_is_the_cgroup2_mount_and_the_0_line() {
        let own = own_dir(MOUNTINFO, "4:memory:/x\n0::/system.slice/allotd.service\n");
        assert_eq!(own, Some(PathBuf::from("/sys/fs/cgroup/my cgroups/system.slice/allotd.service")));
        assert_eq!(own_dir(MOUNTINFO, "0::/\n"), Some(PathBuf::from("/sys/fs/cgroup/my cgroups")));
        assert_eq!(own_dir(MOUNTINFO, "4:memory:/x\n"), None, "no cgroup v2 line: v1 only");
        assert_eq!(own_dir(&MOUNTINFO.replace("cgroup2 cgroup2", "tmpfs tmpfs"), "0::/\n"), None, "not mounted");
    }

    #[test]
    fn usage_comes_from_cpu_stat_and_the_memory_files_when_present() {
        let dir = std::env::temp_dir().join(format!("allot-cgroup-usage-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        assert_eq!(read_usage(&dir), None, "no cpu.stat: not a cgroup");
        std::fs::write(dir.join("cpu.stat"), "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n")
            .expect("write");
        assert_eq!(read_usage(&dir), Some(CgroupUsage { cpu_time: 2.5, memory_kb: None, peak_kb: None }));
        std::fs::write(dir.join("memory.current"), "1048576\n").expect("write");
        std::fs::write(dir.join("memory.peak"), "4194304\n").expect("write");
        assert_eq!(read_usage(&dir), Some(CgroupUsage { cpu_time: 2.5, memory_kb: Some(1024), peak_kb: Some(4096) }));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_plain_directory_is_no_cgroup_and_tags_are_stable() {
        let dir = std::env::temp_dir().join(format!("allot-cgroup-plain-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        assert_eq!(Cgroups::make(&dir, "t"), None);
        assert!(!dir.join("allot-t").exists(), "nothing left behind");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(tag_of(Path::new("/var/lib/allot")), tag_of(Path::new("/var/lib/allot")));
        assert_ne!(tag_of(Path::new("/var/lib/allot")), tag_of(Path::new("/var/lib/allot2")));
    }
}
