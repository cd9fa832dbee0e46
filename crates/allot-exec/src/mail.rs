//! A job's mail (`bsub -B`, `-N`, `-u`): when it starts, and its report
//! when it ends, through the host's mail program as the job's owner
//! (never as root). The program is called as sendmail is, `PROGRAM -oi
//! ADDRESS`, the message with its headers on its standard input: LSF's
//! LSB_MAILPROG takes a sendmail-compatible program too.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::report::{ReportHead, RunSummary, body, subject, where_and_when};
use allot_proto::text::escaped;

/// What to mail, to whom, through what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailSpec {
    pub program: String,
    /// `-u`, else the job's owner.
    pub to: String,
    /// `-B`: when it starts; `-N`: its report when it ends.
    pub begin: bool,
    pub end: bool,
    pub head: ReportHead,
}

/// How long a mail program may take before it is given up (and killed):
/// a stuck one must not hold the job's end back.
const MAIL_TIMEOUT: Duration = Duration::from_secs(60);

/// `-B`'s message: the job has started (where and when, as its report
/// will say it).
pub fn begin_message(m: &MailSpec, started: u64, tz: &jiff::tz::TimeZone) -> String {
    let h = &m.head;
    format!(
        "From: LSF System <{}>\nTo: {}\nSubject: Job {}: <{}> in cluster <{}> Started\n\n{}",
        h.sender,
        escaped(&m.to),
        h.job,
        escaped(&h.name),
        h.cluster,
        where_and_when(h, started, tz)
    )
}

/// `-N`'s message: the job's report, as its output file would end.
pub fn end_message(m: &MailSpec, run: &RunSummary, tz: &jiff::tz::TimeZone) -> String {
    format!(
        "From: LSF System <{}>\nTo: {}\nSubject: {}\n\n{}\nThe output (if any) is in the job's output file.\n\n",
        m.head.sender,
        escaped(&m.to),
        subject(&m.head, run),
        body(&m.head, run, tz)
    )
}

/// Sends `message` through the mail program, as `as_owner` makes the
/// process (the job's owner). `Err`: why it was not sent.
pub fn send(
    m: &MailSpec,
    message: &str,
    as_owner: impl FnOnce(&mut Command) -> Result<(), crate::ExecError>,
) -> Result<(), String> {
    let mut cmd = Command::new(&m.program);
    // `--`: an address that begins with `-` is an address, not an option.
    cmd.arg("-oi").arg("--").arg(&m.to);
    cmd.env_clear().env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    cmd.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null());
    as_owner(&mut cmd).map_err(|e| e.reason())?;
    let mut child = cmd.spawn().map_err(|e| format!("{}: {}", m.program, crate::os_message(&e)))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(message.as_bytes());
    }
    let deadline = Instant::now() + MAIL_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("{} exited with {status}", m.program)),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{} took over {} s; given up", m.program, MAIL_TIMEOUT.as_secs()));
            }
            Err(e) => return Err(crate::os_message(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job's name or `-u` address adds no header and no line: what its
    /// submitter wrote is escaped in the headers.
    #[test]
    fn user_text_adds_no_mail_header() {
        let mut m = spec();
        m.to = "alice\nBcc: mallory".into();
        m.head.name = "sim\r\nX-Evil: 1".into();
        let tz = jiff::tz::TimeZone::UTC;
        let text = begin_message(&m, 0, &tz);
        let headers: Vec<&str> = text.split("\n\n").next().expect("headers").lines().collect();
        assert_eq!(headers.len(), 3, "{headers:?}");
        assert_eq!(headers[1], "To: alice\\nBcc: mallory");
        assert!(headers[2].starts_with("Subject: Job 12: <sim\\r\\nX-Evil: 1>"), "{headers:?}");
        let run = RunSummary { code: Some(0), signal: None, cpu_time: 0.0, max_rss_kb: 0, started: 0, ended: 1 };
        let end = end_message(&m, &run, &tz);
        assert_eq!(end.split("\n\n").next().expect("headers").lines().count(), 3, "{end}");
    }

    fn spec() -> MailSpec {
        MailSpec {
            program: "/usr/sbin/sendmail".into(),
            to: "alice".into(),
            begin: true,
            end: true,
            head: ReportHead {
                job: "12".into(),
                name: "sim".into(),
                hosts: vec!["hostA".into()],
                cwd: "/home/alice".into(),
                command: "./sim".into(),
                ..crate::report::tests::head()
            },
        }
    }

    #[test]
    fn mails_say_what_lsfs_say() {
        let utc = jiff::tz::TimeZone::UTC;
        let begin = begin_message(&spec(), 1_795_294_501, &utc);
        assert!(begin.starts_with(
            "From: LSF System <root@hostA>\nTo: alice\nSubject: Job 12: <sim> in cluster <allot> Started\n\n"
        ));
        assert!(begin.contains("\nJob was executed on host(s) <hostA>, in queue <normal>, as user <alice> in cluster <allot> at Sat Nov 21 20:55:01 2026\n"), "{begin}");
        let run = RunSummary {
            code: Some(0),
            signal: None,
            cpu_time: 1.0,
            max_rss_kb: 0,
            started: 1_795_294_501,
            ended: 1_795_294_561,
        };
        let end = end_message(&spec(), &run, &utc);
        assert!(end.starts_with("From: LSF System <root@hostA>\nTo: alice\nSubject: Job 12: <sim> in cluster <allot> Done\n\nJob <sim> was submitted"), "{end}");
        assert!(end.contains("\nSuccessfully completed.\n") && end.contains("is in the job's output file"), "{end}");
    }
}
