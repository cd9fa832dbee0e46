//! `allot install PREFIX` (binaries, the LSF commands' links, their man
//! pages and shell completion, where a site or a user keeps them) and
//! `allot install-links DIR` (the links only).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

/// The binaries that work together, found next to this one: `allot start`
/// runs `allotd` from beside itself, allotd its supervisor, `allot start
/// --test-hosts` the agent.
const BINARIES: [&str; 4] = ["allot", "allotd", "allot-supervise", "allot-agent"];

fn command_names() -> Vec<&'static str> {
    allot_config::lsf_commands::all().iter().map(|c| c.name).collect()
}

/// Writes `text` to `path` whole or not at all (a temporary file renamed
/// over it), readable by all.
fn write_file(path: &Path, text: &[u8]) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let tmp = path.with_extension("allot-new");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// A symbolic link at `link` to `target`, replacing what was there.
fn link(target: &Path, link: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(link) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot replace {}", link.display())),
    }
    std::os::unix::fs::symlink(target, link).with_context(|| format!("cannot link {}", link.display()))
}

/// Installs under `prefix`: `bin/` the binaries and a link per LSF
/// command, `share/man/man1/` a man page per LSF command, and
/// `share/bash-completion/completions/` the completion of `allot` and of
/// each LSF command (bash-completion loads a command's from the file of
/// its name, so each is a link to the one script). `allot_bash` is
/// `allot`'s own bash completion. A binary is replaced by renaming a new
/// copy over it, so one that is running goes on undisturbed.
pub fn install(prefix: &Path, allot_bash: &str) -> anyhow::Result<ExitCode> {
    let bin = prefix.join("bin");
    let man = prefix.join("share/man/man1");
    let completions = prefix.join("share/bash-completion/completions");
    for dir in [&bin, &man, &completions] {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let exe = std::env::current_exe()?;
    let mut missing = Vec::new();
    for name in BINARIES {
        let from = exe.with_file_name(name);
        let to = bin.join(name);
        if !from.is_file() {
            missing.push(name);
            continue;
        }
        if from.canonicalize().ok() == to.canonicalize().ok() {
            continue;
        }
        let tmp = bin.join(format!(".{name}.allot-new"));
        std::fs::copy(&from, &tmp).with_context(|| format!("cannot copy {} to {}", from.display(), tmp.display()))?;
        std::fs::rename(&tmp, &to).with_context(|| format!("cannot install {}", to.display()))?;
    }
    let commands = command_names();
    for name in &commands {
        link(Path::new("allot"), &bin.join(name))?;
    }
    let version = env!("CARGO_PKG_VERSION");
    for c in allot_config::lsf_commands::all() {
        write_file(&man.join(format!("{}.1", c.name)), crate::manpage::page(c, version).as_bytes())?;
    }
    let script = format!("{allot_bash}\n{}", crate::manpage::bash_completion());
    write_file(&completions.join("allot"), script.as_bytes())?;
    for name in &commands {
        link(Path::new("allot"), &completions.join(name))?;
    }
    println!("{}: {} and {}", bin.display(), BINARIES.join(" "), commands.join(" "));
    println!("{}: the man pages of {}", man.display(), commands.join(" "));
    println!("{}: bash completion", completions.display());
    if !missing.is_empty() {
        println!(
            "not installed, as they are not beside {}: {} (`cargo dist` builds them all)",
            exe.display(),
            missing.join(" ")
        );
    }
    say_if_off_path(&bin);
    Ok(ExitCode::SUCCESS)
}

/// Links named `allot` and after each LSF command to this binary, in `dir`.
pub fn install_links(dir: &Path) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(dir)?;
    let exe = std::env::current_exe()?;
    // `allot` itself too, for `allot stop`, `allot shares`, ... unless it
    // is this very binary (the README installs allot in the directory it
    // then links in): replacing it by a link to itself would remove it.
    let this = exe.canonicalize().ok();
    let commands = command_names();
    for name in std::iter::once(&"allot").chain(&commands) {
        let path = dir.join(name);
        if path.canonicalize().ok().is_some_and(|p| Some(p) == this) {
            continue;
        }
        link(&exe, &path)?;
    }
    println!("{}: allot {}", dir.display(), commands.join(" "));
    println!("(`allot install PREFIX` installs their man pages and completion too)");
    say_if_off_path(dir);
    Ok(ExitCode::SUCCESS)
}

fn say_if_off_path(dir: &Path) {
    let on_path = std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| d == dir || d.canonicalize().ok() == dir.canonicalize().ok())
    });
    if !on_path {
        println!("{} is not on your PATH: add it to call `bsub` ... by name, or call `allot bsub` ...", dir.display());
    }
}
