//! What a job names: its output files (`-o`, `-e`, with `%J` and `%I`)
//! and its working directory (`-cwd`, with its dynamic patterns), opened,
//! made and entered as its owner (see [`crate::owner`]); allotd's own
//! default output files, made by the supervisor and given to the owner.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::owner::{self, as_owner};
use crate::{ExecError, ExecSpec};

/// Where one of a job's output streams goes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputFile {
    pub path: PathBuf,
    /// `-oo`/`-eo`: overwritten, not appended to.
    pub overwrite: bool,
    /// Named by the user (`-o`, `-e`): opened, or made, as the job's
    /// owner. Otherwise allotd's own file in its state directory: made by
    /// the supervisor there, mode 0600, and given to the owner.
    pub named: bool,
}

/// `%J` and `%I` in an output file name.
pub fn expand_name(name: &str, job: u64, index: u32) -> String {
    name.replace("%J", &job.to_string()).replace("%I", &index.to_string())
}

/// What the dynamic patterns of a `-cwd` path stand for.
pub struct Patterns<'a> {
    pub job: u64,
    pub index: u32,
    pub user: &'a str,
    pub project: &'a str,
    pub group: &'a str,
    /// The first execution host.
    pub host: &'a str,
}

/// The patterns of a `-cwd` path, longest first so `%JG` is not `%J`
/// followed by `G`: `%JG` (job group; allot has none, so nothing), `%EJ`
/// and `%EI` (the job id and index where it runs: the same here), `%J`,
/// `%I`, `%U` user, `%P` project, `%G` user group, `%H` first host.
const PATTERNS: [&str; 9] = ["%JG", "%EJ", "%EI", "%J", "%I", "%U", "%P", "%G", "%H"];

/// Whether a path has any dynamic pattern.
pub fn has_patterns(path: &str) -> bool {
    PATTERNS.iter().any(|p| path.contains(p))
}

/// A `-cwd` path with its dynamic patterns expanded.
pub fn expand_patterns(path: &str, p: &Patterns<'_>) -> String {
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let Some(pat) = PATTERNS.iter().find(|p| tail.starts_with(**p)) else {
            out.push('%');
            rest = &tail[1..];
            continue;
        };
        match *pat {
            "%JG" => {}
            "%EJ" | "%J" => out.push_str(&p.job.to_string()),
            "%EI" | "%I" => out.push_str(&p.index.to_string()),
            "%U" => out.push_str(p.user),
            "%P" => out.push_str(p.project),
            "%G" => out.push_str(p.group),
            _ => out.push_str(p.host),
        }
        rest = &tail[pat.len()..];
    }
    out.push_str(rest);
    out
}

/// The directory the job runs in: its own, made first when its path had
/// patterns. One that is not there, or that the owner may not enter, ends
/// the job before it starts, with the directory's name (LSF's
/// TERM_CWD_NOTEXIST), rather than running it somewhere it did not ask
/// for. Called as the job's owner: what it makes is theirs.
pub(crate) fn working_directory(spec: &ExecSpec) -> Result<PathBuf, ExecError> {
    let denied = |source| ExecError::File {
        job: spec.job,
        what: "cannot enter the working directory",
        path: spec.cwd.display().to_string(),
        source,
    };
    if spec.cwd.is_dir() {
        nix::unistd::access(&spec.cwd, nix::unistd::AccessFlags::X_OK).map_err(|e| denied(e.into()))?;
        return Ok(spec.cwd.clone());
    }
    if spec.create_cwd {
        make_dirs(&spec.cwd).map_err(|source| ExecError::File {
            job: spec.job,
            what: "cannot create the working directory",
            path: spec.cwd.display().to_string(),
            source,
        })?;
        return Ok(spec.cwd.clone());
    }
    Err(ExecError::NoDirectory { job: spec.job, path: spec.cwd.display().to_string() })
}

/// Makes the missing directories of `path`, mode 0700 (as the job's owner:
/// they are the owner's).
fn make_dirs(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let mut missing = Vec::new();
    let mut p = path;
    while !p.exists() {
        missing.push(p.to_path_buf());
        match p.parent() {
            Some(parent) => p = parent,
            None => break,
        }
    }
    for dir in missing.iter().rev() {
        std::fs::DirBuilder::new().mode(0o700).create(dir)?;
    }
    Ok(())
}

/// Opens one output stream: a file the user named as it is (the caller is
/// the job's owner by then, see [`open_outputs`]); allotd's own file in
/// the state directory made afresh, mode 0600, never through a link, and
/// given to the job's owner. `overwrite` as the stream asks unless
/// `append` (a note after the job).
pub(crate) fn open_output(job: u64, out: &OutputFile, append: bool) -> Result<File, ExecError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = OpenOptions::new();
    o.create(true).write(true);
    let appends = !out.overwrite || append;
    if appends {
        o.append(true);
    } else {
        o.truncate(true);
    }
    let unblocked = nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_NOCTTY;
    if out.named {
        o.custom_flags(unblocked.bits());
    } else {
        o.mode(0o600).custom_flags((unblocked | nix::fcntl::OFlag::O_NOFOLLOW).bits());
    }
    let failed = |source| ExecError::File {
        job,
        what: if out.named { "cannot open output file" } else { "cannot open" },
        path: out.path.display().to_string(),
        source,
    };
    not_pinning(&out.path).map_err(failed)?;
    o.open(&out.path).and_then(|f| ready_file(f, appends)).map_err(failed)
}

/// Opens a job's `-i` file to read, as [`open_output`] opens an output:
/// never blocking, and only a regular file or `/dev/null`.
pub(crate) fn open_input(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    not_pinning(path)?;
    let flags = nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_NOCTTY;
    OpenOptions::new().read(true).custom_flags(flags.bits()).open(path).and_then(|f| ready_file(f, false))
}

/// A FIFO, a socket or a device as a job's `-o`, `-e` or `-i` would pin
/// the job: its supervisor would block opening it, before the job exists,
/// past its run limit and any `bkill`, and again after every restart. So
/// what a job names for its input and output must be a regular file (or
/// `/dev/null`, or not there yet, for an output): this refuses anything
/// else by name, before it is opened; the open itself never blocks
/// (`O_NONBLOCK`), and [`ready_file`] checks what was opened, in case the
/// path changed between the two.
fn not_pinning(path: &Path) -> std::io::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) => usable(&m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Whether a file of this kind may be a job's input or output: a regular
/// file or `/dev/null` (character device 1, 3); anything else is an error
/// that names its kind.
fn usable(m: &std::fs::Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let t = m.file_type();
    let null = t.is_char_device() && nix::sys::stat::major(m.rdev()) == 1 && nix::sys::stat::minor(m.rdev()) == 3;
    if t.is_file() || null {
        return Ok(());
    }
    let kind = if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        "a device"
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("not a regular file but {kind}, which a batch job may not use for its input or output"),
    ))
}

/// A file just opened without blocking: checked as [`not_pinning`] checks
/// its path, then made blocking again for the job. Of the flags `F_SETFL`
/// changes, it was opened with `O_NONBLOCK` and, where it `appends`,
/// `O_APPEND`: set to the latter alone, with no look at them first.
fn ready_file(file: File, appends: bool) -> std::io::Result<File> {
    usable(&file.metadata()?)?;
    let flags = if appends { nix::fcntl::OFlag::O_APPEND } else { nix::fcntl::OFlag::empty() };
    nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(flags))?;
    Ok(file)
}

/// The job's output and error files, each opened as [`open_output`] says:
/// one the user named with the owner's credentials, allotd's own as allotd
/// and then given to the owner. With `-o` and no `-e` both are one file,
/// shared through one handle so neither writes over the other. With
/// `as_owner_now` the caller has taken the owner's credentials already,
/// and both files are named ([`both_named`]): they are opened as they are.
pub(crate) fn open_outputs(spec: &ExecSpec, as_owner_now: bool) -> Result<(File, File), ExecError> {
    let owner = spec.run_as.as_ref();
    let open = |out: &OutputFile| -> Result<File, ExecError> {
        match (out.named, as_owner_now) {
            (true, true) => return open_output(spec.job, out, false),
            (true, false) => return as_owner(owner, || open_output(spec.job, out, false))?,
            // allotd's own file is never opened with the owner's credentials.
            (false, true) => {
                return Err(ExecError::Spec(format!("job {}: allotd's output file opened as its owner", spec.job)));
            }
            (false, false) => {}
        }
        let file = open_output(spec.job, out, false)?;
        if let Some(o) = owner.filter(|_| owner::is_root()) {
            std::os::unix::fs::fchown(&file, Some(o.uid), Some(o.gid)).map_err(|source| ExecError::File {
                job: spec.job,
                what: "cannot give the job's owner",
                path: out.path.display().to_string(),
                source,
            })?;
        }
        Ok(file)
    };
    let stdout = open(&spec.stdout)?;
    let stderr = if spec.stderr.path == spec.stdout.path {
        stdout.try_clone().map_err(|source| ExecError::File {
            job: spec.job,
            what: "cannot share",
            path: spec.stdout.path.display().to_string(),
            source,
        })?
    } else {
        open(&spec.stderr)?
    };
    Ok((stdout, stderr))
}

/// Whether both of the job's output files are ones its user named (`-o`
/// and `-e`, or `-o` alone for both): then all [`open_outputs`] opens is
/// opened with the owner's credentials.
pub(crate) fn both_named(spec: &ExecSpec) -> bool {
    spec.stdout.named && (spec.stderr.named || spec.stderr.path == spec.stdout.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An output is opened without blocking and handed to the job
    /// blocking: appended to, or overwritten (`-oo`), as asked.
    #[test]
    fn an_output_is_blocking_for_the_job_and_appends_only_when_asked() {
        let dir = crate::tests::temp("named");
        let flags = |f: &File| {
            nix::fcntl::OFlag::from_bits_truncate(nix::fcntl::fcntl(f, nix::fcntl::FcntlArg::F_GETFL).expect("flags"))
        };
        for (overwrite, append, appends) in [(false, false, true), (true, false, false), (true, true, true)] {
            let out = OutputFile { path: dir.join(format!("out.{overwrite}.{append}")), overwrite, named: true };
            let f = open_output(1, &out, append).expect("opened");
            let got = flags(&f);
            assert!(!got.contains(nix::fcntl::OFlag::O_NONBLOCK), "{got:?}");
            assert_eq!(got.contains(nix::fcntl::OFlag::O_APPEND), appends, "{overwrite} {append}: {got:?}");
            assert_eq!(got & nix::fcntl::OFlag::O_ACCMODE, nix::fcntl::OFlag::O_WRONLY);
        }
        let input = open_input(&dir.join("out.false.false")).expect("an input");
        assert!(!flags(&input).intersects(nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_APPEND));
    }
}
