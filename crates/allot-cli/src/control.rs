//! The job control commands: `bkill`, `bstop`, `bresume`, `bswitch`,
//! `bmod` and `brequeue`. Each names jobs by id (`0`: all of the caller's
//! jobs the command applies to; an array's id, each of its elements;
//! `id[index]`, one element) and prints LSF's line per job; a job that
//! could not be acted on prints allotd's reason on standard error and
//! makes the command exit 1.

use std::process::ExitCode;

use allot_proto::{Changes, JobRef, Request, RequeueStates, Response};
use anyhow::{anyhow, bail};

use crate::lsf::{call, flags_and_names, job_refs};

/// Jobs as the commands take them.
fn job_ids(cmd: &str, words: &[impl AsRef<str>]) -> anyhow::Result<Vec<JobRef>> {
    let mut ids = Vec::new();
    for w in words {
        ids.extend(job_refs(cmd, w.as_ref())?);
    }
    if ids.is_empty() {
        bail!("{cmd}: name the jobs, or 0 for all of yours");
    }
    Ok(ids)
}

/// Prints each job's outcome: `done(id)` for those acted on.
fn report(cmd: &str, response: Response, done: impl Fn(JobRef) -> String) -> anyhow::Result<ExitCode> {
    let Response::Each(results) = response else { bail!("{cmd}: unexpected answer") };
    if results.is_empty() {
        println!("No matching job found");
        return Ok(ExitCode::FAILURE);
    }
    let mut failed = false;
    for (id, r) in results {
        match r {
            Ok(()) => println!("{}", done(id)),
            Err(e) => {
                eprintln!("{e}");
                failed = true;
            }
        }
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// Options without values, then job ids; an unknown option is an error.
fn flags_and_ids(cmd: &str, args: &[String]) -> anyhow::Result<(Vec<&'static str>, Vec<JobRef>)> {
    let (flags, words) = flags_and_names(cmd, args)?;
    Ok((flags, job_ids(cmd, &words)?))
}

/// `bresize release [-c] [-rnc command | -rncn] "1*hostA 2*hostB hostC"
/// jobid` and `bresize cancel jobid` (spec 004, "Job Allocations that
/// Grow and Shrink"), with LSF's options: a host without `n*` releases all
/// of the job's slots there; `-rnc` names the notification command of
/// this release (instead of the job's), `-rncn` runs none.
pub fn bresize(args: &[String]) -> anyhow::Result<ExitCode> {
    let usage = "bresize: expected `release [-c] [-rnc command | -rncn] \"1*hostA 2*hostB hostC\" jobid` or \
                 `cancel jobid`";
    let (sub, rest) = args.split_first().ok_or_else(|| anyhow!(usage))?;
    let (mut cancel, mut notify, mut command, mut words) = (false, true, None, Vec::new());
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-c" if sub == "release" => cancel = true,
            "-rncn" if sub == "release" => notify = false,
            "-rnc" if sub == "release" => {
                let cmd = it.next().ok_or_else(|| anyhow!("bresize release: -rnc: expected a command after it"))?;
                command = Some(cmd.clone());
            }
            o if o.starts_with('-') => bail!("bresize {sub}: {o}: unknown option"),
            w => words.push(w),
        }
    }
    if command.is_some() && !notify {
        bail!("bresize release: -rnc and -rncn: one or the other");
    }
    let (action, id) = match (sub.as_str(), &words[..]) {
        ("cancel", [id]) => (allot_proto::ResizeAction::Cancel, *id),
        ("release", [hosts, id]) => {
            let hosts = allot_config::resize::release_hosts(hosts).map_err(|e| anyhow!("bresize release: {e}"))?;
            (allot_proto::ResizeAction::Release { hosts, cancel, notify, command }, *id)
        }
        _ => bail!(usage),
    };
    let job = match job_refs("bresize", id)?[..] {
        [job] => job,
        _ => bail!("bresize: name one job"),
    };
    report("bresize", call(Request::Resize { job, action })?, |id| format!("Job <{id}> is being resized"))
}

/// bkill [-s signal] jobid ... | 0
pub fn bkill(args: &[String]) -> anyhow::Result<ExitCode> {
    let args = &crate::lsf::split_options("bkill", args)?;
    let (mut signal, mut job_group) = (None, None);
    let mut words = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-s" => {
                signal = Some(args.get(i + 1).ok_or_else(|| anyhow!("bkill: -s: expected a signal after it"))?.clone());
                i += 1;
            }
            "-g" => {
                job_group =
                    Some(args.get(i + 1).ok_or_else(|| anyhow!("bkill: -g: expected a job group after it"))?.clone());
                i += 1;
            }
            o if o.starts_with('-') => bail!("bkill: {o}: unknown option"),
            id => words.push(id.to_string()),
        }
        i += 1;
    }
    let jobs = job_ids("bkill", &words)?;
    let signaled = signal.is_some();
    let response = call(Request::Kill { jobs, signal, job_group })?;
    if matches!(&response, Response::Each(r) if r.is_empty()) {
        println!("No unfinished job found");
        return Ok(ExitCode::SUCCESS);
    }
    report("bkill", response, |id| {
        if signaled { format!("Job <{id}> is being signaled") } else { format!("Job <{id}> is being terminated") }
    })
}

/// `bstop jobid ... | 0`: pending jobs are held (PSUSP), running ones
/// stopped (USUSP).
pub fn bstop(args: &[String]) -> anyhow::Result<ExitCode> {
    let (job_group, rest) = group_option("bstop", args)?;
    let (_, jobs) = flags_and_ids("bstop", &rest)?;
    let asked = Request::Suspend { jobs, stop: true, job_group };
    report("bstop", call(asked)?, |id| format!("Job <{id}> is being stopped"))
}

/// `-g job_group_name` taken out of the arguments.
fn group_option(cmd: &str, args: &[String]) -> anyhow::Result<(Option<String>, Vec<String>)> {
    let (mut group, mut rest) = (None, Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-g" => group = Some(it.next().ok_or_else(|| anyhow!("{cmd}: -g: expected a job group after it"))?.clone()),
            _ => rest.push(a.clone()),
        }
    }
    Ok((group, rest))
}

/// `bresume jobid ... | 0`.
pub fn bresume(args: &[String]) -> anyhow::Result<ExitCode> {
    let (job_group, rest) = group_option("bresume", args)?;
    let (_, jobs) = flags_and_ids("bresume", &rest)?;
    let asked = Request::Suspend { jobs, stop: false, job_group };
    report("bresume", call(asked)?, |id| format!("Job <{id}> is being resumed"))
}

/// `bswitch queue jobid ... | 0`: pending jobs to another queue.
pub fn bswitch(args: &[String]) -> anyhow::Result<ExitCode> {
    let Some((queue, rest)) = args.split_first().filter(|(q, _)| !q.starts_with('-')) else {
        bail!("bswitch: usage: bswitch destination_queue job_ID ... | 0");
    };
    let jobs = job_ids("bswitch", rest)?;
    let response = call(Request::Switch { jobs, queue: queue.clone() })?;
    report("bswitch", response, |id| format!("Job <{id}> is switched to queue <{queue}>"))
}

/// `brequeue [-a] [-d] [-e] [-r] [-H] jobid ... | 0`: running jobs are
/// killed and requeued, DONE (`-d`) and EXIT (`-e`) jobs requeued; `-r`
/// running jobs; without any of them (or `-a`) all three. `-H` requeues
/// them held (PSUSP).
pub fn brequeue(args: &[String]) -> anyhow::Result<ExitCode> {
    let (flags, jobs) = flags_and_ids("brequeue", args)?;
    let has = |f: &str| flags.contains(&f);
    let all = has("-a") || !(has("-d") || has("-e") || has("-r"));
    let states = RequeueStates { done: all || has("-d"), exit: all || has("-e"), running: all || has("-r") };
    let response = call(Request::Requeue { jobs, states, hold: has("-H") })?;
    report("brequeue", response, |id| format!("Job <{id}> is being requeued"))
}

/// `bmod [options] jobid`: `bsub`'s options change a pending job; the
/// `n` forms (`-Wn`, `-Wen`, `-Pn`, `-Gn`, `-on`, `-en`, `-spn`) remove a
/// setting;
/// `-Z "command"` replaces the command.
pub fn bmod(args: &[String]) -> anyhow::Result<ExitCode> {
    let (changes, job) = parse_bmod(args)?;
    let response = call(Request::Modify { job, changes: Box::new(changes) })?;
    report("bmod", response, |id| format!("Parameters of job <{id}> are being changed"))
}

fn parse_bmod(args: &[String]) -> anyhow::Result<(Changes, JobRef)> {
    // bmod's table says what it reads and which of that it changes; what
    // it cannot change yet is refused, never dropped.
    let table = &allot_config::lsf_commands::BMOD;
    let words = table.split(args).map_err(|a| anyhow!("bmod: {a}: unknown option"))?;
    let mut c = Changes::default();
    let (mut rest, mut operands) = (Vec::new(), Vec::new());
    let mut it = words.into_iter();
    while let Some(w) = it.next() {
        let Some(opt) = table.option(&w) else {
            operands.push(w);
            continue;
        };
        if !opt.supported {
            bail!("bmod: {w}: not supported by this allot yet. Job not modified.");
        }
        let value = match opt.value {
            Some(_) => Some(it.next().ok_or_else(|| anyhow!("bmod: {w}: expected a value after it"))?),
            None => None,
        };
        match (opt.name, value) {
            ("-Wn", _) => c.run_limit = Some(None),
            ("-Wen", _) => c.estimated_run_time = Some(None),
            ("-Pn", _) => c.project = Some(None),
            ("-Gn", _) => c.group = Some(None),
            ("-gn", _) => c.job_group = Some(None),
            ("-on", _) => c.output = Some(None),
            ("-en", _) => c.error = Some(None),
            ("-spn", _) => c.priority = Some(None),
            ("-Z", command) => c.command = command,
            (_, value) => rest.extend(std::iter::once(w).chain(value)),
        }
    }
    rest.extend(operands);
    let o = allot_config::bsub::parse(&rest).map_err(|e| anyhow!("bmod: {e}"))?;
    if o.slots.is_some_and(|s| s.min != s.max) {
        bail!("bmod: -n min,max: not supported by this allot yet. Job not modified.");
    }
    if let Some((opt, _)) = o.other.first() {
        bail!("bmod: {opt}: not supported by this allot yet. Job not modified.");
    }
    let [id] = &o.command[..] else { bail!("bmod: usage: bmod [options] job_ID (one job)") };
    let job = match job_refs("bmod", id)?[..] {
        [one] => one,
        _ => bail!("bmod: {id}: one job or array at a time"),
    };
    c.queue = o.queue;
    c.slots = o.slots.map(|s| s.min);
    if o.run_limit.is_some() {
        c.run_limit = Some(o.run_limit);
    }
    if o.estimated_run_time.is_some() {
        c.estimated_run_time = Some(o.estimated_run_time);
    }
    if o.group.is_some() {
        c.group = Some(o.group);
    }
    if o.project.is_some() {
        c.project = Some(o.project);
    }
    if o.job_group.is_some() {
        c.job_group = Some(o.job_group);
    }
    if o.output.is_some() {
        c.output = Some(o.output);
    }
    if o.error.is_some() {
        c.error = Some(o.error);
    }
    if o.priority.is_some() {
        c.priority = Some(o.priority);
    }
    c.qos = o.qos;
    c.user_factor = o.user_factor;
    match o.name {
        Some(limit) if limit.starts_with('%') => {
            let n = limit[1..].parse::<u32>().ok().filter(|&n| n >= 1);
            c.array_limit =
                Some(n.ok_or_else(|| anyhow!("bmod: -J {limit}: expected `%limit`, a whole number of at least 1"))?);
        }
        Some(name) if name.contains('[') => {
            bail!("bmod: -J {name}: a job array's indices cannot change; `%limit` changes its running element limit")
        }
        name => c.name = name,
    }
    c.cwd = o.cwd;
    if c == Changes::default() {
        bail!("bmod: nothing to change; give bsub's options before the job ID");
    }
    Ok((c, job))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn bmod_takes_bsubs_options_and_the_n_forms() {
        let (c, job) = parse_bmod(&words("-n 4 -W 1:00 -q short -Pn -J renamed -oo out.%J 42")).expect("valid");
        assert_eq!(job, JobRef::job(42));
        assert_eq!(c.slots, Some(4));
        assert_eq!(c.run_limit, Some(Some(3600)));
        assert_eq!(c.queue.as_deref(), Some("short"));
        assert_eq!(c.project, Some(None));
        assert_eq!(c.name.as_deref(), Some("renamed"));
        assert_eq!(c.output, Some(Some(("out.%J".into(), true))));
        assert_eq!(c.group, None, "untouched");
        let (c, _) = parse_bmod(&words("-Wn 7")).expect("valid");
        assert_eq!(c.run_limit, Some(None));
        let (c, _) = parse_bmod(&words("-sp 9 7")).expect("valid");
        assert_eq!(c.priority, Some(Some(9)));
        let (c, _) = parse_bmod(&words("-spn 7")).expect("valid");
        assert_eq!(c.priority, Some(None));
        let (c, _) = parse_bmod(&words("-uf 0.5 -qos standby 7")).expect("valid");
        assert_eq!((c.user_factor, c.qos.as_deref()), (Some(0.5), Some("standby")));
        let (c, _) = parse_bmod(&words("-J %5 7")).expect("valid");
        assert_eq!((c.array_limit, c.name), (Some(5), None), "`%n` is the array's limit, not a name");
    }

    #[test]
    fn bmod_refuses_what_it_cannot_do() {
        let err = |line: &str| parse_bmod(&words(line)).expect_err(line).to_string();
        assert_eq!(err("-n 2 7 8"), "bmod: usage: bmod [options] job_ID (one job)");
        assert_eq!(err("-R span[hosts=1] 7"), "bmod: -R: not supported by this allot yet. Job not modified.");
        assert_eq!(err("7"), "bmod: nothing to change; give bsub's options before the job ID");
        assert!(err("-n 2 seven").starts_with("bmod: seven: not a job id"), "{}", err("-n 2 seven"));
        assert_eq!(err("-n 2 7[1-2]"), "bmod: 7[1-2]: one job or array at a time");
        assert!(err("-J %0 7").contains("at least 1"));
        assert!(err("-J a[1-3] 7").contains("indices cannot change"));
        let (_, job) = parse_bmod(&words("-n 2 7[3]")).expect("valid");
        assert_eq!(job, JobRef { id: 7, index: 3 });
        assert_eq!(err("-W soon 7"), "bmod: -W soon: expected `[hours:]minutes`");
        // What bmod cannot change yet is refused, never dropped.
        for (line, opt) in
            [("-M 1G 7", "-M"), ("-E true 7", "-E"), ("-env none 7", "-env"), ("-S 8M 7", "-S"), ("-w done(3) 7", "-w")]
        {
            assert_eq!(err(line), format!("bmod: {opt}: not supported by this allot yet. Job not modified."));
        }
        // Single letters run together, as with bsub.
        let (c, _) = parse_bmod(&words("-qshort -n2 7")).expect("valid");
        assert_eq!((c.queue.as_deref(), c.slots), (Some("short"), Some(2)));
    }
}
