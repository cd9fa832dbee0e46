//! The LSF commands' option tables: each command's options, the value
//! each takes, what it does, and whether this allot acts on it. One
//! table per command feeds its parser (through [`crate::getopt`]), its
//! `-h` usage, its man page and its shell completion, so the four never
//! disagree.
//!
//! An option the table marks unsupported is still read (so a script
//! using it gets a clear "not supported" rather than "unknown option"),
//! and refused: a job never runs without what its user asked for.

mod bsub;
mod cluster;
mod groups;
mod jobs;

pub use bsub::{BMOD, BSUB};

/// One option of an LSF command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opt {
    /// As typed: `-n`, `-oo`, `-noheader`.
    pub name: &'static str,
    /// The value it takes, as the usage names it (`min[,max]`); `None`
    /// for a flag.
    pub value: Option<&'static str>,
    /// The category LSF's `-h category` lists it under (`io`, `limit`,
    /// ...); empty for a command without categories.
    pub category: &'static str,
    /// What it does, in a sentence or a few.
    pub help: &'static str,
    /// Whether this allot acts on it (`false`: read, and refused).
    pub supported: bool,
}

/// A flag (no value).
pub(crate) const fn flag(name: &'static str, category: &'static str, help: &'static str) -> Opt {
    Opt { name, value: None, category, help, supported: true }
}

/// An option that takes a value, named `value` in the usage.
pub(crate) const fn valued(name: &'static str, value: &'static str, category: &'static str, help: &'static str) -> Opt {
    Opt { name, value: Some(value), category, help, supported: true }
}

/// `o`, read but refused by this allot.
pub(crate) const fn refused(o: Opt) -> Opt {
    Opt { supported: false, ..o }
}

/// One LSF command: what its usage, man page and completion say.
#[derive(Debug)]
pub struct CommandDoc {
    pub name: &'static str,
    /// The man page's NAME line: what it does, in a few words.
    pub summary: &'static str,
    /// What follows the command's name and options in its usage, one
    /// form per line (`[options] command [arguments]`).
    pub synopsis: &'static [&'static str],
    /// The man page's DESCRIPTION, paragraphs separated by blank lines.
    pub description: &'static str,
    pub options: &'static [Opt],
    /// The first word that is no option ends the options (`bsub`'s
    /// command and its own arguments); otherwise options and operands
    /// mix (`bjobs 12 -l`).
    pub operands_end: bool,
    /// The synopsis names the options itself (subcommands, or options
    /// whose place matters): the usage does not list them again.
    pub synopsis_has_options: bool,
    /// LSF options this allot does not know at all (an error if given),
    /// listed so the man page and the README say so.
    pub not_known: &'static [&'static str],
}

impl CommandDoc {
    /// The option named `name` exactly.
    pub fn option(&self, name: &str) -> Option<&'static Opt> {
        self.options.iter().find(|o| o.name == name)
    }

    /// The categories its options fall in, in the table's order.
    pub fn categories(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for o in self.options {
            if !o.category.is_empty() && !out.contains(&o.category) {
                out.push(o.category);
            }
        }
        out
    }

    /// `args` read as getopt reads them with this table (see
    /// [`crate::getopt::split`]).
    pub fn split(&self, args: &[String]) -> Result<Vec<String>, String> {
        crate::getopt::split(args, self.options, self.not_known, self.operands_end)
    }

    /// The synopsis, one line per form, as the usage and the man page
    /// show it: the name, then the first form with every option this
    /// allot acts on (unless the forms name their options themselves),
    /// wrapped at `width` columns counting `indent` before it and
    /// continued under the first word; then `name -h | -V`.
    pub fn synopsis_lines(&self, indent: usize, width: usize) -> Vec<String> {
        let mut out = Vec::new();
        for (k, form) in self.synopsis.iter().enumerate() {
            let mut words: Vec<String> = Vec::new();
            if k == 0 && !self.synopsis_has_options {
                for o in self.options.iter().filter(|o| o.supported) {
                    words.push(match o.value {
                        Some(v) => format!("[{} {v}]", o.name),
                        None => format!("[{}]", o.name),
                    });
                }
            }
            words.extend(form.split_whitespace().map(str::to_string));
            wrap(&mut out, self.name, &words, width.saturating_sub(indent));
        }
        out.push(format!("{} -h | -V", self.name));
        out
    }

    /// The usage, as `-h` and an unknown option show it: `Usage: ` and
    /// the synopsis, at most 80 columns wide.
    pub fn usage(&self) -> String {
        let mut out = String::new();
        for (k, line) in self.synopsis_lines(7, 80).iter().enumerate() {
            out.push_str(if k == 0 { "Usage: " } else { "       " });
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

/// `head` and `words` on lines of at most `width` columns (a word longer
/// than a line has one of its own), continued under the first word.
fn wrap(out: &mut Vec<String>, head: &str, words: &[String], width: usize) {
    let indent = head.chars().count() + 1;
    let mut line = head.to_string();
    let mut at_start = true;
    for w in words {
        if !at_start && line.chars().count() + 1 + w.chars().count() > width {
            out.push(std::mem::replace(&mut line, " ".repeat(indent - 1)));
        }
        line.push(' ');
        line.push_str(w);
        at_start = false;
    }
    out.push(line);
}

/// Every LSF command allot answers to, in the order `allot
/// install-links` lists them.
pub fn all() -> &'static [CommandDoc] {
    ALL
}

/// The table of `name`, if it is an LSF command allot has.
pub fn command(name: &str) -> Option<&'static CommandDoc> {
    ALL.iter().find(|c| c.name == name)
}

const ALL: &[CommandDoc] = &[
    bsub::BSUB,
    jobs::BJOBS,
    jobs::BKILL,
    jobs::BSTOP,
    jobs::BRESUME,
    jobs::BSWITCH,
    bsub::BMOD,
    jobs::BREQUEUE,
    jobs::BPEEK,
    jobs::BHIST,
    cluster::BQUEUES,
    cluster::BHOSTS,
    cluster::BHPART,
    cluster::BUGROUP,
    cluster::BUSERS,
    cluster::BADMIN,
    cluster::BSLOTS,
    jobs::BLAUNCH,
    jobs::LSGRUN,
    cluster::BMGROUP,
    cluster::LSHOSTS,
    cluster::LSLOAD,
    jobs::BRESIZE,
    cluster::BPARAMS,
    cluster::LSID,
    cluster::LSCLUSTERS,
    jobs::BACCT,
    cluster::BLIMITS,
    groups::BGADD,
    groups::BGMOD,
    groups::BGDEL,
    groups::BJGROUP,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_well_formed() {
        let mut names = std::collections::BTreeSet::new();
        for c in all() {
            assert!(names.insert(c.name), "{} twice", c.name);
            assert!(!c.synopsis.is_empty(), "{}: a synopsis", c.name);
            assert!(!c.summary.is_empty() && !c.description.is_empty(), "{}", c.name);
            let mut seen = std::collections::BTreeSet::new();
            for o in c.options {
                assert!(o.name.starts_with('-') && o.name.len() > 1, "{}: {}", c.name, o.name);
                assert!(seen.insert(o.name), "{}: {} twice", c.name, o.name);
                assert!(!o.help.is_empty(), "{}: {} has no help", c.name, o.name);
                assert!(o.name != "-h" && o.name != "-V", "{}: -h and -V are every command's", c.name);
            }
            for n in c.not_known {
                assert!(c.option(n).is_none(), "{}: {n} is both known and not", c.name);
            }
            let cats = c.categories();
            assert!(cats.is_empty() || c.options.iter().all(|o| !o.category.is_empty()), "{}", c.name);
        }
    }

    #[test]
    fn usage_lists_the_supported_options() {
        let bkill = command("bkill").expect("bkill");
        assert_eq!(
            bkill.usage(),
            "Usage: bkill [-s signal] [-g job_group_name] [job_ID ... | 0]\n       bkill -h | -V\n"
        );
        let bsub = command("bsub").expect("bsub").usage();
        assert!(bsub.starts_with("Usage: bsub [-n min_tasks[,max_tasks]] [-q queue_name]"), "{bsub}");
        let bmod = command("bmod").expect("bmod").usage();
        assert!(!bmod.contains("[-R "), "refused options are not offered: {bmod}");
        assert!(bsub.contains("[-Is]"), "{bsub}");
        assert!(bsub.contains("[arguments]\n       bsub [options] < job_script\n"), "{bsub}");
        assert!(bsub.lines().all(|l| l.len() <= 80), "{bsub}");
        assert!(bsub.lines().nth(1).is_some_and(|l| l.starts_with("            [-")), "continued under the first word");
        let badmin = command("badmin").expect("badmin").usage();
        assert!(badmin.starts_with("Usage: badmin reconfig\n       badmin qclose queue_name ...\n"), "{badmin}");
    }
}
