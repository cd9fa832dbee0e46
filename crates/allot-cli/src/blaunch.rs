//! `blaunch [-n] [-u host_file | -z "host ..." | host] [-use-login-shell
//! | -no-shell] command [argument ...]`: tasks of a job on hosts of its
//! allocation, as LSF's `blaunch` starts them (the drop-in for rsh and
//! ssh that MPI launchers call).
//!
//! Only within a job (`ALLOT_JOB`, set in every job's environment), and
//! only on hosts of the job's allocation (`LSB_HOSTS`). Without a host,
//! one task per slot of the allocation. The command's words are joined
//! and run by `/bin/sh -c` on each host, as rsh and ssh run theirs. With
//! agents, the request goes to this host's agent (`ALLOT_AGENT_SOCKET`)
//! and from there through allotd to each host's agent; the tasks' output
//! comes back here, onto this command's own output. On one host without
//! agents, the tasks are this command's children, in the job's process
//! group. The tasks' standard input is empty (`-n` is what blaunch
//! always does). Exit: 0 when every task exits 0, else the first failing
//! task's code; 1 (and why, on standard error) when it cannot launch.
//!
//! Options of rsh and ssh other than these are ignored, as LSF ignores
//! them (a single word each, such as `-x` or `-q`).

use std::io::Write;
use std::process::ExitCode;

use allot_agent::wire::{LaunchEvent, LaunchRequest};
use anyhow::bail;

/// What `blaunch` was asked.
#[derive(Debug, PartialEq)]
struct Asked {
    /// Hosts named (`None`: every slot of the allocation).
    hosts: Option<Vec<String>>,
    command: String,
}

/// Parses the arguments; `allocated` is the job's `LSB_HOSTS` (to tell a
/// host from a command).
fn parse(args: &[String], allocated: &[String]) -> anyhow::Result<Asked> {
    let mut hosts: Option<Vec<String>> = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-n" | "-use-login-shell" | "-no-shell" => {}
            "-u" => {
                let Some(file) = args.get(i + 1) else { bail!("-u: a host file is needed") };
                let text = std::fs::read_to_string(file).map_err(|e| anyhow::anyhow!("-u {file}: {e}"))?;
                hosts = Some(text.split_whitespace().map(str::to_string).collect());
                i += 1;
            }
            "-z" => {
                let Some(list) = args.get(i + 1) else { bail!("-z: host names are needed") };
                hosts = Some(list.split_whitespace().map(str::to_string).collect());
                i += 1;
            }
            "-h" | "-V" => {
                bail!("usage: blaunch [-n] [-u host_file | -z host_name ... | host_name] command [argument ...]")
            }
            _ if a.starts_with('-') && a.len() > 1 => {}
            _ => break,
        }
        i += 1;
    }
    let mut rest = &args[i.min(args.len())..];
    if hosts.is_none() {
        if let Some(first) = rest.first().filter(|w| allocated.contains(w) && rest.len() > 1) {
            hosts = Some(vec![first.clone()]);
            rest = &rest[1..];
        }
    }
    if rest.is_empty() {
        bail!("no command: usage: blaunch [-n] [-u host_file | -z host_name ... | host_name] command [argument ...]");
    }
    Ok(Asked { hosts, command: rest.join(" ") })
}

pub fn blaunch(args: &[String]) -> anyhow::Result<ExitCode> {
    launch(args).map_err(|e| anyhow::anyhow!("blaunch: {e:#}"))
}

/// `lsgrun [-p] [-m "host ..." | -f host_file] command [argument ...]`
/// (spec 004's `bsub -n 10 'lsgrun -p -m "$LSB_HOSTS" myjob'`): the
/// command once per host named, a host named twice running it twice, as
/// `blaunch -z` runs it; one host after another, or all at once with
/// `-p`. Within a job only, on hosts of its allocation: allot has no
/// remote execution daemon (LSF's RES) outside jobs. Without `-m` or
/// `-f`: each slot of the allocation. Exits with the first failing run's
/// code, 0 when every run exits 0.
pub fn lsgrun(args: &[String]) -> anyhow::Result<ExitCode> {
    let words = crate::lsf::split_options("lsgrun", args)?;
    let run = || -> anyhow::Result<ExitCode> {
        let (parallel, hosts, command) = lsgrun_args(&words)?;
        let hosts = match hosts {
            Some(h) => h,
            None => std::env::var("LSB_HOSTS").unwrap_or_default().split_whitespace().map(str::to_string).collect(),
        };
        if hosts.is_empty() {
            bail!("no host: name them (-m, -f), or run within a job");
        }
        let on = |hosts: &[String]| {
            let mut words = vec!["-z".to_string(), hosts.join(" ")];
            words.extend(command.iter().cloned());
            launch(&words)
        };
        if parallel {
            return on(&hosts);
        }
        let mut failed = None;
        for h in &hosts {
            let code = on(std::slice::from_ref(h))?;
            if code != ExitCode::SUCCESS && failed.is_none() {
                failed = Some(code);
            }
        }
        Ok(failed.unwrap_or(ExitCode::SUCCESS))
    };
    run().map_err(|e| anyhow::anyhow!("lsgrun: {e:#}"))
}

/// `lsgrun`'s options, as getopt split them: `-p`, the hosts (`-m`,
/// `-f`), and the command.
fn lsgrun_args(words: &[String]) -> anyhow::Result<(bool, Option<Vec<String>>, Vec<String>)> {
    let (mut parallel, mut hosts, mut i) = (false, None, 0);
    while i < words.len() {
        match words[i].as_str() {
            "-p" => parallel = true,
            "-m" | "-f" => {
                let value =
                    words.get(i + 1).ok_or_else(|| anyhow::anyhow!("{}: expected a value after it", words[i]))?;
                let list = if words[i] == "-f" {
                    std::fs::read_to_string(value).map_err(|e| anyhow::anyhow!("-f {value}: {e}"))?
                } else {
                    value.clone()
                };
                hosts = Some(list.split_whitespace().map(str::to_string).collect());
                i += 1;
            }
            "--" => {
                i += 1;
                break;
            }
            _ => break,
        }
        i += 1;
    }
    let command = words[i.min(words.len())..].to_vec();
    if command.is_empty() {
        bail!("no command: usage: lsgrun [-p] [-m \"host_name ...\" | -f host_file] command [argument ...]");
    }
    Ok((parallel, hosts, command))
}

fn launch(args: &[String]) -> anyhow::Result<ExitCode> {
    let env = |k: &str| std::env::var(k).ok();
    let (Some(job), Some(attempt)) =
        (env("ALLOT_JOB").and_then(|j| j.parse::<u64>().ok()), env("ALLOT_ATTEMPT").and_then(|a| a.parse().ok()))
    else {
        bail!("not within a job: blaunch starts tasks of a job on the hosts of its allocation, from within that job");
    };
    let allocated: Vec<String> = env("LSB_HOSTS").unwrap_or_default().split_whitespace().map(str::to_string).collect();
    let asked = parse(args, &allocated)?;
    let hosts = asked.hosts.unwrap_or_else(|| allocated.clone());
    if let Some(h) = hosts.iter().find(|h| !allocated.contains(h)) {
        bail!("host {h} is not of job {}'s allocation ({})", env("LSB_JOBID").unwrap_or_default(), allocated.join(" "));
    }
    if hosts.is_empty() {
        bail!("no host to launch on");
    }
    match env("ALLOT_AGENT_SOCKET") {
        Some(socket) => through_agent(
            &socket,
            LaunchRequest {
                job,
                attempt,
                hosts,
                command: asked.command,
                cwd: std::env::current_dir()?,
                env: std::env::vars().collect(),
                resume: None,
            },
        ),
        None => here(&hosts, &asked.command),
    }
}

/// How long `blaunch` waits for its agent, or allotd, to be back before
/// it gives up (its tasks run on meanwhile, and what they write waits on
/// their hosts).
const REACH_FOR: std::time::Duration = std::time::Duration::from_secs(600);

/// Through this host's agent: its tasks' output written here as it comes,
/// each byte once (a resumed request has it all sent again). When the
/// agent goes away, or cannot reach allotd, `blaunch` connects again (for
/// [`REACH_FOR`] at most) and resumes its request by its tag.
fn through_agent(socket: &str, mut request: LaunchRequest) -> anyhow::Result<ExitCode> {
    use allot_agent::wire::blocking;
    let mut tasks = Tasks::new(request.hosts.len());
    let mut away_since: Option<std::time::Instant> = None;
    loop {
        if let Some(since) = away_since {
            if since.elapsed() > REACH_FOR {
                bail!("this host's agent, or allotd, has been away for {} s: giving up", REACH_FOR.as_secs());
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        let mut stream = match std::os::unix::net::UnixStream::connect(socket) {
            Ok(s) => {
                allot_proto::trusted(&s, std::path::Path::new(socket))?;
                s
            }
            // Its agent is being restarted: asked again after a pause.
            Err(_) if away_since.is_some() => continue,
            Err(e) => bail!("cannot reach this host's agent at {socket}: {e}"),
        };
        if blocking::write(&mut stream, &request).is_err() {
            away_since.get_or_insert_with(std::time::Instant::now);
            continue;
        }
        loop {
            let event: LaunchEvent = match blocking::read(&mut stream) {
                Ok(e) => e,
                Err(e) if request.resume.is_none() => {
                    bail!("this host's agent went away before the tasks started: {e}")
                }
                Err(_) => {
                    away_since.get_or_insert_with(std::time::Instant::now);
                    break;
                }
            };
            match event {
                LaunchEvent::Accepted { tag } => {
                    request.resume = Some(tag);
                    away_since = None;
                }
                LaunchEvent::Output { index, stderr, data, offset } => tasks.output(index, stderr, &data, offset),
                LaunchEvent::Ended { index, exit } => tasks.ended(index, exit),
                LaunchEvent::Refused { why } if why == allot_agent::wire::UNREACHABLE => {
                    away_since.get_or_insert_with(std::time::Instant::now);
                    break;
                }
                LaunchEvent::Refused { why } => bail!("{why}"),
            }
            if let Some(code) = tasks.done() {
                return Ok(code);
            }
        }
    }
}

/// What `blaunch` has had of its tasks: how many bytes of each one's
/// output and error it wrote, the furthest byte it has seen of each, and
/// each one's exit.
struct Tasks {
    written: Vec<[u64; 2]>,
    seen: Vec<[u64; 2]>,
    exits: Vec<Option<i32>>,
    /// Ends heard while bytes before them had not come, per task.
    early_ends: Vec<u32>,
}

/// Ends heard before all of a task's output came, after which its output
/// is taken as it is, what never came said lost: each resume sends a
/// task's output again, whole and in order, and then its end.
const EARLY_ENDS: u32 = 3;

impl Tasks {
    fn new(n: usize) -> Tasks {
        Tasks { written: vec![[0, 0]; n], seen: vec![[0, 0]; n], exits: vec![None; n], early_ends: vec![0; n] }
    }

    /// Task `index`'s bytes from `offset`: the part not written yet is
    /// written. A piece past bytes that have not come yet is not written:
    /// a restarted agent sends its tasks' output from the start, and what
    /// it sent before this `blaunch` had resumed its request is lost on
    /// the way; the request's resume has it all sent again, in order
    /// (`ToAgent::Resend`), and then the gap fills.
    fn output(&mut self, index: u32, stderr: bool, data: &[u8], offset: u64) {
        let (Some(w), Some(seen)) = (self.written.get_mut(index as usize), self.seen.get_mut(index as usize)) else {
            return;
        };
        let k = usize::from(stderr);
        seen[k] = seen[k].max(offset + data.len() as u64);
        let have = &mut w[k];
        if offset > *have {
            return;
        }
        let skip = (*have - offset) as usize;
        if skip >= data.len() {
            return;
        }
        let new = &data[skip..];
        *have += new.len() as u64;
        if stderr {
            let _ = std::io::stderr().lock().write_all(new);
        } else {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(new).and_then(|()| out.flush());
        }
    }

    /// Task `index` ended. Heard while some of its output has not come,
    /// it is taken only after [`EARLY_ENDS`] such ends (the resume sends
    /// the output again, then the end); then what never came is said to
    /// be lost, never skipped silently.
    fn ended(&mut self, index: u32, exit: i32) {
        let i = index as usize;
        let (Some(w), Some(seen), Some(early)) = (self.written.get(i), self.seen.get(i), self.early_ends.get_mut(i))
        else {
            return;
        };
        let missing: u64 = (0..2).map(|k| seen[k].saturating_sub(w[k])).sum();
        if missing > 0 {
            *early += 1;
            if *early <= EARLY_ENDS {
                return;
            }
            eprintln!("blaunch: {missing} bytes of task {index}'s output were lost");
        }
        if let Some(slot) = self.exits.get_mut(i) {
            slot.get_or_insert(exit);
        }
    }

    /// Once every task ended: the exit.
    fn done(&self) -> Option<ExitCode> {
        self.exits.iter().all(Option::is_some).then(|| exit_of(self.exits.iter().flatten().copied()))
    }
}

/// On this host (allotd without agents): the tasks as children.
fn here(hosts: &[String], command: &str) -> anyhow::Result<ExitCode> {
    let mut children = Vec::new();
    for _ in hosts {
        let child = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(command)
            .stdin(std::process::Stdio::null())
            .spawn()
            .map_err(|e| anyhow::anyhow!("cannot start /bin/sh: {e}"))?;
        children.push(child);
    }
    let exits: Vec<i32> = children
        .into_iter()
        .map(|mut c| {
            use std::os::unix::process::ExitStatusExt;
            c.wait().map_or(255, |s| s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)))
        })
        .collect();
    Ok(exit_of(exits.into_iter()))
}

fn exit_of(exits: impl Iterator<Item = i32>) -> ExitCode {
    let code = exits.into_iter().find(|&e| e != 0).unwrap_or(0);
    ExitCode::from(code.clamp(0, 255) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    /// A restarted agent's pieces that came before the gap was filled are
    /// not written; the end heard meanwhile waits for the resend, which
    /// fills the gap in order; an end after too many such is taken, the
    /// bytes that never came said lost.
    #[test]
    fn a_piece_past_a_gap_waits_for_the_resend_and_so_does_the_end() {
        let mut t = Tasks::new(2);
        t.output(0, false, b"1\n", 0);
        t.output(0, false, b"3\n", 4);
        assert_eq!((t.written[0][0], t.seen[0][0]), (2, 6), "line 3 is not written before line 2");
        t.ended(0, 0);
        assert_eq!(t.exits[0], None, "the end waits: bytes are missing");
        for (offset, data) in [(0, b"1\n"), (2, b"2\n"), (4, b"3\n")] {
            t.output(0, false, data, offset);
        }
        assert_eq!(t.written[0][0], 6, "the resend filled the gap");
        t.ended(0, 0);
        assert_eq!(t.exits[0], Some(0));
        // Never filled: taken after EARLY_ENDS ends, said lost.
        t.output(1, true, b"x", 5);
        for _ in 0..EARLY_ENDS {
            t.ended(1, 3);
        }
        assert_eq!(t.exits[1], None);
        t.ended(1, 3);
        assert_eq!(t.exits[1], Some(3));
    }

    #[test]
    fn hosts_and_commands_are_told_apart_as_rsh_callers_expect() {
        let alloc = words(&["hostA", "hostA", "hostB"]);
        let asked = parse(&words(&["-n", "hostB", "/usr/bin/hydra_pmi_proxy", "--control-port", "hostA:1"]), &alloc);
        let asked = asked.expect("parsed");
        assert_eq!(asked.hosts, Some(words(&["hostB"])));
        assert_eq!(asked.command, "/usr/bin/hydra_pmi_proxy --control-port hostA:1");
        // Not a host of the allocation: the command, on every slot.
        let asked = parse(&words(&["hostname"]), &alloc).expect("parsed");
        assert_eq!(asked, Asked { hosts: None, command: "hostname".into() });
        let asked = parse(&words(&["-z", "hostA hostB", "-x", "echo", "hi"]), &alloc).expect("parsed");
        assert_eq!(asked.hosts, Some(words(&["hostA", "hostB"])));
        assert_eq!(asked.command, "echo hi", "ssh's -x before the command is ignored");
        assert!(parse(&words(&["-n"]), &alloc).is_err(), "no command");
        assert!(parse(&words(&["-z"]), &alloc).is_err(), "-z without hosts");
        // -u: the hosts of a file, one task each.
        let file = std::env::temp_dir().join(format!("allot-blaunch-u-{}", std::process::id()));
        std::fs::write(&file, "hostB\nhostA\n").expect("written");
        let asked = parse(&words(&["-u", file.to_str().expect("utf-8"), "env"]), &alloc).expect("parsed");
        let _ = std::fs::remove_file(&file);
        assert_eq!((asked.hosts, asked.command.as_str()), (Some(words(&["hostB", "hostA"])), "env"));
        assert!(parse(&words(&["-u", "/no/such/file", "env"]), &alloc).is_err());
        // ssh's own options are ignored.
        let asked = parse(&words(&["-q", "-x", "hostA", "true"]), &alloc).expect("parsed");
        assert_eq!((asked.hosts, asked.command.as_str()), (Some(words(&["hostA"])), "true"));
    }
}
