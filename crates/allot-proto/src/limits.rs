//! The per-process limits a job asks for (`bsub -C -D -F -S -v`), which
//! its processes start with as soft resource limits (setrlimit): LSF's
//! "per-process (soft)" limits, in KB as LSF_UNIT_FOR_LIMITS gives them.

use serde::{Deserialize, Serialize};

/// `bsub -B` (mail when it starts), `-N` (its report when it ends), `-u`
/// (to whom; its owner without it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailAsked {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub begin: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub end: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// `bsub -I`, `-Ip`, `-Is`: an interactive job, whose standard input and
/// output are its `bsub`'s terminal. `bsub` listens on `socket` (a Unix
/// socket in a directory only its user may enter); the job's supervisor,
/// as the job's owner, connects there when the job starts and is handed
/// the terminal's descriptors (see `allot_exec::interactive`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interactive {
    pub socket: String,
    /// `-Ip`/`-Is`: on a pseudo-terminal of `bsub`'s, which becomes the
    /// job's controlling terminal.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pty: bool,
    /// `-Is`: shell mode: every key, Ctrl-C and Ctrl-Z too, goes to the
    /// job's terminal as typed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shell: bool,
    /// Set by allotd for a job on another host than bsub's: that host's
    /// agent makes the terminal and relays it, through allotd, to bsub
    /// (`Request::Attach`); `socket` is then the agent's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub relay: bool,
    /// bsub's terminal's size at submission (rows, columns), which a
    /// relayed pseudo-terminal starts with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<(u16, u16)>,
}

/// Each limit in KB; `None` leaves the limit as the job would have it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessLimits {
    /// `-C`: core file size (RLIMIT_CORE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_kb: Option<u64>,
    /// `-D`: data segment size (RLIMIT_DATA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_kb: Option<u64>,
    /// `-F`: file size (RLIMIT_FSIZE): a process writing past it gets
    /// SIGXFSZ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_kb: Option<u64>,
    /// `-S`: stack segment size (RLIMIT_STACK).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_kb: Option<u64>,
    /// `-v`: virtual memory (RLIMIT_AS). LSF calls it the whole job's
    /// total; allot limits each process to it, which a job of one
    /// process (most) cannot tell apart, and a job of many can only meet
    /// sooner than LSF's sum would let it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_kb: Option<u64>,
}

impl ProcessLimits {
    /// No limit asked for.
    pub const NONE: ProcessLimits =
        ProcessLimits { core_kb: None, data_kb: None, file_kb: None, stack_kb: None, swap_kb: None };

    pub fn is_empty(&self) -> bool {
        *self == Self::NONE
    }

    /// The limit `bsub`'s `option` asks (`-C`, `-D`, `-F`, `-S`, `-v`).
    pub fn of_option(&mut self, option: &str) -> Option<&mut Option<u64>> {
        Some(match option {
            "-C" => &mut self.core_kb,
            "-D" => &mut self.data_kb,
            "-F" => &mut self.file_kb,
            "-S" => &mut self.stack_kb,
            "-v" => &mut self.swap_kb,
            _ => return None,
        })
    }
}
