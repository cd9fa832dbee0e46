//! `bpeek`'s reading of a job's output files, where they are: allotd on
//! its own host, an agent on its.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The most of a file `bpeek` shows: its end.
pub const PEEK_LIMIT: u64 = 4 << 20;

/// The last [`PEEK_LIMIT`] bytes of a file; nothing if it does not exist
/// yet. As root, only a file the job's owner owns is read: an output path
/// is the user's to choose, and allotd must not read what they cannot.
pub fn read_tail(path: &Path, owner: Option<(u32, u32)>, named: bool) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::fs::OpenOptionsExt;
    // Opened as the owner: a path they name reaches only what they could
    // open themselves, so no device, and nothing of root's, is ever
    // opened (opening some devices does something). Never waits: a FIFO
    // opens at once (and is then no regular file, so it is not read).
    // The default output files (in allotd's or the agent's state
    // directory, which the owner may not enter) are opened as they are:
    // allotd or the agent chose their paths.
    let _as_owner = match owner.filter(|_| named) {
        Some((uid, gid)) => Some(AsOwner::switch(uid, gid).ok_or("cannot take the job's user's identity")?),
        None => None,
    };
    let nonblocking = nix::fcntl::OFlag::O_NONBLOCK.bits();
    let opened = std::fs::OpenOptions::new().read(true).custom_flags(nonblocking).open(path);
    drop(_as_owner);
    let mut f = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(e.to_string()),
    };
    let meta = f.metadata().map_err(|e| e.to_string())?;
    if owner.is_some_and(|(uid, _)| meta.uid() != uid) {
        return Err("not owned by the job's user".into());
    }
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let skip = meta.len().saturating_sub(PEEK_LIMIT);
    f.seek(SeekFrom::Start(skip)).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// This thread's file-system identity (`setfsuid`, `setfsgid`: per thread
/// on Linux, so the process's other threads keep root's) switched to a job
/// owner's until dropped.
struct AsOwner {
    uid: nix::unistd::Uid,
    gid: nix::unistd::Gid,
}

impl AsOwner {
    fn switch(uid: u32, gid: u32) -> Option<AsOwner> {
        use nix::unistd::{Gid, Uid, setfsgid, setfsuid};
        let (to_uid, to_gid) = (Uid::from_raw(uid), Gid::from_raw(gid));
        let back = AsOwner { gid: setfsgid(to_gid), uid: setfsuid(to_uid) };
        // Each call answers the identity before it: asked again, it says
        // whether the switch took.
        let took = setfsuid(to_uid) == to_uid && setfsgid(to_gid) == to_gid;
        took.then_some(back)
    }
}

impl Drop for AsOwner {
    fn drop(&mut self) {
        nix::unistd::setfsuid(self.uid);
        nix::unistd::setfsgid(self.gid);
    }
}

/// What `bpeek` shows of a job's output and error files, read as
/// [`read_tail`] reads (as the job's owner, `owner`, when they are files
/// the job named): the output's end, then the error's when it is another
/// file and not empty. The error names the file that could not be read.
pub fn output_of(
    out: &allot_exec::OutputFile,
    err: &allot_exec::OutputFile,
    owner: Option<(u32, u32)>,
) -> Result<String, String> {
    let mut output = String::from("<< output from stdout >>\n");
    match read_tail(&out.path, owner, out.named) {
        Ok(text) => output.push_str(&text),
        Err(e) => return Err(format!("{}: {e}", out.path.display())),
    }
    if err.path != out.path {
        if let Ok(text) = read_tail(&err.path, owner, err.named) {
            if !text.is_empty() {
                output.push_str("\n<< output from stderr >>\n");
                output.push_str(&text);
            }
        }
    }
    Ok(output)
}
