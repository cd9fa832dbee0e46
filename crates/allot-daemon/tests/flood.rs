//! One user floods allotd for a minute with everything at once: held
//! connections, lists never read, `-w` names matching thousands of jobs,
//! environments over the cap, and submissions as fast as allotd takes
//! them (past their pending threshold, then refused for now). Meanwhile
//! another user's `bsub` and `bjobs` are answered within 100 ms at the
//! 99th percentile, and after the flood (and a kill -9 of allotd) every
//! job the flooder was told was submitted is there.

mod common;

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use allot_proto::{Envelope, JobQuery, PROTOCOL_VERSION, Request, Submit};
use common::{Daemon, ONE_HOST, Throwaway, config_dir, queues, stderr, stdout, tempdir};

/// How long the flood lasts.
const FLOOD: Duration = Duration::from_secs(60);
/// The flooder's pending threshold (MAX_PEND_JOBS of `default`).
const MAX_PEND: usize = 5_000;

/// The flooder's side: `perl -e FLOOD MODE SOCKET SECONDS FRAME_FILES...`.
/// `hold`: 200 connections held (of the 256 one user may hold: the
/// rest are for the flooder's own requests); `unread`: each
/// frame sent on 12 connections whose answers are never read; `send`:
/// the frames in turn, each on a new connection, answers read, until the
/// time is up, then `accepted A later L refused R` and the accepted jobs'
/// numbers, a line each.
const PERL: &str = r#"
use IO::Socket::UNIX;
$SIG{PIPE} = 'IGNORE';
my ($mode, $path, $secs, @files) = @ARGV;
my $end = time + $secs;
my @frames = map { local $/; open my $f, '<', $_ or die "$_: $!"; binmode $f; scalar <$f> } @files;
sub conn { IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path) }
sub rd { my ($c, $n) = @_; my $b = ''; while (length($b) < $n) { my $r = sysread($c, $b, $n - length($b), length($b)); return undef unless $r; } $b }
sub answer { my $c = shift; my $h = rd($c, 4); return '' unless defined $h; rd($c, unpack('N', $h)) // '' }
if ($mode eq 'hold') {
    my @s; while (@s < 200) { my $c = conn() or last; push @s, $c; }
    print "held ", scalar(@s), "\n"; sleep 1 while time < $end; exit 0;
}
if ($mode eq 'unread') {
    my @s; for my $f (@frames) { for (1..12) { my $c = conn() or next; syswrite($c, $f); push @s, $c; } }
    print "unread ", scalar(@s), "\n"; sleep 1 while time < $end; exit 0;
}
my ($ok, $later, $refused, @jobs) = (0, 0, 0);
while (time < $end) {
    for my $f (@frames) {
        my $c = conn() or next;
        syswrite($c, $f);
        my $a = answer($c);
        if ($a =~ /"Submitted":\{"job":(\d+)/) { $ok++; push @jobs, $1; }
        elsif ($a =~ /"Later"/) { $later++; }
        else { $refused++; }
    }
}
print "accepted $ok later $later refused $refused\n";
print "$_\n" for @jobs;
"#;

fn frame(request: Request) -> Vec<u8> {
    let body = serde_json::to_vec(&Envelope { version: PROTOCOL_VERSION, body: request }).expect("json");
    let mut out = (body.len() as u32).to_be_bytes().to_vec();
    out.extend(body);
    out
}

fn held_submission(name: &str, depends: Option<&str>, env_bytes: usize) -> Request {
    let mut env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
    if env_bytes > 0 {
        env.push(("BIG".into(), "x".repeat(env_bytes)));
    }
    Request::Submit(Box::new(Submit {
        submission: allot_proto::Submission {
            name: Some(name.into()),
            depends: depends.map(str::to_string),
            hold: true,
            ..Default::default()
        },
        command: "true".into(),
        cwd: "/".into(),
        output: Some(("/dev/null".into(), false)),
        env,
        ..Submit::default()
    }))
}

fn flooder(user: &Throwaway, mode: &str, socket: &Path, frames: &[&Path]) -> Child {
    Command::new("perl")
        .args(["-e", PERL, mode])
        .arg(socket)
        .arg(FLOOD.as_secs().to_string())
        .args(frames)
        .uid(user.uid)
        .gid(user.gid)
        .stdout(Stdio::piped())
        .spawn()
        .expect("perl (perl-base)")
}

fn output_of(mut child: Child) -> String {
    let mut text = String::new();
    child.stdout.take().expect("stdout").read_to_string(&mut text).expect("read");
    let _ = child.wait();
    text
}

/// The `q`-quantile of `samples`.
fn quantile(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort_unstable();
    samples[((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len()) - 1]
}

#[test]
fn one_user_floods_for_a_minute_and_another_is_answered_promptly() {
    let test = "one_user_floods_for_a_minute_and_another_is_answered_promptly";
    let (mallory, alice) = (Throwaway::new(test, "fm"), Throwaway::new(test, "fa"));
    let dir = tempdir("flood");
    let users = format!("Begin User\nUSER_NAME MAX_PEND_JOBS\ndefault {MAX_PEND}\nEnd User\n");
    let config =
        config_dir(&dir, &[("allot.toml", ONE_HOST), ("lsb.queues", &queues(&["normal"])), ("lsb.users", &users)]);
    let state = dir.join("state");
    let d = Daemon::start_with(&state, Some(&config));
    for p in [dir.to_path_buf(), d.state.clone()] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let socket = d.state.join("allotd.sock");
    let write = |name: &str, request: Request| {
        let path = dir.join(name);
        std::fs::write(&path, frame(request)).expect("frame");
        path
    };
    let all = JobQuery { user: Some("all".into()), finished: true, ..JobQuery::default() };
    let list = write("list", Request::Jobs(all));
    let plain = write("plain", held_submission("m", None, 0));
    let named = write("named", held_submission("mw", Some("done(m*) && ended(m*)"), 0));
    let huge = write("huge", held_submission("mh", None, 3 << 20));
    let began = Instant::now();
    let mut floods = vec![
        flooder(&mallory, "hold", &socket, &[]),
        flooder(&mallory, "unread", &socket, &[&list]),
        flooder(&mallory, "send", &socket, &[&plain]),
        flooder(&mallory, "send", &socket, &[&plain, &named, &huge]),
    ];
    let as_alice = |args: &[&str]| d.timed_as(&alice, args);
    let (mut waits, mut submitted) = (Vec::new(), 0usize);
    while began.elapsed() < FLOOD {
        let (out, took) = as_alice(&["bsub", "-H", "-o", "/dev/null", "true"]);
        assert!(stdout(&out).contains("is submitted"), "alice's bsub: {}", stderr(&out));
        submitted += 1;
        waits.push(took);
        let (out, took) = as_alice(&["bjobs", "-noheader"]);
        assert_eq!(stdout(&out).lines().count(), submitted, "alice's bjobs: {}", stderr(&out));
        waits.push(took);
        std::thread::sleep(Duration::from_millis(50));
    }
    let unread = floods.remove(1);
    let hold = floods.remove(0);
    let (held, unread) = (output_of(hold), output_of(unread));
    let mut accepted: Vec<u64> = Vec::new();
    let mut said = Vec::new();
    for f in floods {
        let text = output_of(f);
        let mut lines = text.lines();
        said.push(lines.next().unwrap_or_default().to_string());
        accepted.extend(lines.map(|l| l.parse::<u64>().expect("a job number")));
    }
    let (p50, p99, worst) = (quantile(&mut waits, 0.5), quantile(&mut waits, 0.99), quantile(&mut waits, 1.0));
    eprintln!(
        "flood of {FLOOD:?}: {} ({}); senders: {said:?}; alice: {} commands, p50 {p50:?}, p99 {p99:?}, worst {worst:?}; \
         allotd {} KB",
        held.trim(),
        unread.trim(),
        waits.len(),
        d.rss_kb()
    );
    assert!(p99 < Duration::from_millis(100), "alice's 99th percentile: {p99:?}");
    assert!(accepted.len() >= MAX_PEND, "the flood reached its threshold: {said:?}");
    assert!(said.iter().any(|s| !s.contains("later 0 ")), "past it, submissions are refused for now: {said:?}");
    // Nothing accepted is lost, through a kill -9 and a restart.
    d.kill9();
    let d = Daemon::start_with(&state, Some(&config));
    let listed = d.cmd(&["bjobs", "-u", &mallory.name, "-a", "-noheader", "-o", "jobid"], &dir);
    let mut have: Vec<u64> = stdout(&listed).lines().filter_map(|l| l.trim().parse().ok()).collect();
    have.sort_unstable();
    accepted.sort_unstable();
    assert_eq!(have.len(), accepted.len(), "the flooder's jobs after a restart");
    assert_eq!(have, accepted);
    let listed = d.cmd(&["bjobs", "-u", &alice.name, "-noheader"], &dir);
    assert_eq!(stdout(&listed).lines().count(), submitted, "alice's jobs after a restart");
}
