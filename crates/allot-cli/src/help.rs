//! `-h`, as every LSF command answers it, from the command's option
//! table ([`allot_config::lsf_commands`]): on standard error, and nothing
//! else done.
//!
//! As LSF 10.1's `-h[elp] [all] [description] [category ...] [-option
//! ...]`: alone, the usage and every option in a line or a few; `all`
//! the description too; `description` the description only; a category
//! (`bsub -h io`) the options under it; an option (`bsub -h -app`) that
//! option.

use allot_config::lsf_commands::{CommandDoc, Opt};

/// Whether `args` ask `cmd` for help: `-h` or `-help` where an option may
/// stand. `Some(topics)`: what follows a leading `-h` (none when it came
/// later, as in `bjobs -l -h`).
pub fn asked<'a>(cmd: &CommandDoc, args: &'a [String]) -> Option<&'a [String]> {
    let is_help = |a: &str| a == "-h" || a == "-help";
    match args.first() {
        Some(a) if is_help(a) => Some(&args[1..]),
        // Elsewhere, only where the command reads options, which its table
        // tells (getopt stops at `-h` as at any word it does not know).
        _ if cmd.synopsis_has_options => None,
        _ => match cmd.split(args) {
            Err(word) if is_help(&word) => Some(&[]),
            _ => None,
        },
    }
}

/// The help `topics` ask for, or what is wrong with them.
pub fn text(cmd: &CommandDoc, topics: &[String]) -> Result<String, String> {
    let mut out = String::new();
    let all = topics.iter().any(|t| t == "all");
    if topics.is_empty() || all {
        out.push_str(&cmd.usage());
        out.push('\n');
        push_paragraphs(&mut out, &format!("{}: {}.", cmd.name, cmd.summary), 0);
        if all {
            out.push('\n');
            push_paragraphs(&mut out, cmd.description, 0);
        }
        let cats = cmd.categories();
        if !cats.is_empty() && !all {
            let hint = format!(
                "`{0} -h CATEGORY` shows one category ({1}); `{0} -h -OPTION` one option; `{0} -h \
                 description` what {0} does.",
                cmd.name,
                cats.join(", ")
            );
            out.push('\n');
            push_paragraphs(&mut out, &hint, 0);
        }
        push_options(&mut out, cmd, cmd.options.iter());
        return Ok(out);
    }
    for t in topics {
        if t == "description" {
            push_paragraphs(&mut out, cmd.description, 0);
        } else if let Some(o) = cmd.option(t) {
            push_option(&mut out, o);
        } else if cmd.categories().contains(&t.as_str()) {
            out.push_str(&format!("Category: {t}\n"));
            push_options(&mut out, cmd, cmd.options.iter().filter(|o| o.category == t));
        } else if t == "-h" || t == "-help" || t == "-V" {
            push_option(&mut out, &common(t));
        } else if cmd.not_known.contains(&t.as_str()) {
            out.push_str(&format!("{t}: an option of LSF's {} that this allot does not have.\n", cmd.name));
        } else {
            return Err(format!("{}: -h {t}: no such option or category", cmd.name));
        }
    }
    Ok(out)
}

/// `-h` and `-V`, which every command takes.
fn common(name: &str) -> Opt {
    let (value, help) = match name {
        "-V" => (None, "Prints allot's release to standard error and exits."),
        _ => (
            Some("[all] [description] [category ...] [-option ...]"),
            "Prints the usage, or the named parts of the help, to standard error and exits.",
        ),
    };
    Opt { name: if name == "-V" { "-V" } else { "-h" }, value, category: "", help, supported: true }
}

fn push_options<'a>(out: &mut String, cmd: &CommandDoc, options: impl Iterator<Item = &'a Opt>) {
    let mut any = false;
    for o in options {
        if !any {
            out.push_str("\nOptions:\n");
            any = true;
        }
        push_option(out, o);
    }
    if !any && cmd.options.is_empty() {
        out.push_str("\nNo options but -h and -V.\n");
    }
}

fn push_option(out: &mut String, o: &Opt) {
    out.push_str("  ");
    out.push_str(o.name);
    if let Some(v) = o.value {
        out.push(' ');
        out.push_str(v);
    }
    out.push('\n');
    let help = if o.supported {
        o.help.to_string()
    } else {
        format!("{} Not supported by this allot yet: refused, never ignored.", o.help)
    };
    push_paragraphs(out, &help, 8);
}

/// `text`'s paragraphs (blank-line separated), each wrapped at 80
/// columns with `indent` blanks before every line.
fn push_paragraphs(out: &mut String, text: &str, indent: usize) {
    for (k, para) in text.split("\n\n").enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let mut line = String::new();
        for w in para.split_whitespace() {
            if !line.is_empty() && indent + line.len() + 1 + w.len() > 80 {
                out.push_str(&format!("{:indent$}{line}\n", ""));
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(w);
        }
        if !line.is_empty() {
            out.push_str(&format!("{:indent$}{line}\n", ""));
        }
    }
}

#[cfg(test)]
mod tests {
    use allot_config::lsf_commands::command;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|x| x.to_string()).collect()
    }

    /// Every command's usage, as `-h` and an unknown option print it.
    #[test]
    fn every_usage() {
        let all: String = allot_config::lsf_commands::all().iter().map(|c| c.usage() + "\n").collect();
        insta::assert_snapshot!(all);
    }

    #[test]
    fn help_is_asked_where_an_option_may_stand() {
        let bjobs = command("bjobs").expect("bjobs");
        let asked = |w: &[&str]| super::asked(bjobs, &words(w)).map(<[String]>::to_vec);
        assert_eq!(asked(&["-h"]), Some(vec![]));
        assert_eq!(asked(&["-help", "-o"]), Some(words(&["-o"])));
        assert_eq!(asked(&["-l", "-h"]), Some(vec![]), "later, as getopt meets it");
        assert_eq!(asked(&["-J", "-h"]), None, "a value, not an option");
        assert_eq!(asked(&["-l"]), None);
        let bsub = command("bsub").expect("bsub");
        assert_eq!(super::asked(bsub, &words(&["ls", "-h"])), None, "the command's own option");
        let badmin = command("badmin").expect("badmin");
        assert_eq!(super::asked(badmin, &words(&["qclose", "-h"])), None);
        assert!(super::asked(badmin, &words(&["-h"])).is_some());
    }

    #[test]
    fn help_topics_as_lsf_takes_them() {
        let bsub = command("bsub").expect("bsub");
        let text = |w: &[&str]| super::text(bsub, &words(w));
        let plain = text(&[]).expect("plain");
        assert!(plain.starts_with("Usage: bsub [-n min_tasks[,max_tasks]]"), "{plain}");
        assert!(plain.contains("bsub: submits a job to allot.\n"), "{plain}");
        assert!(plain.contains("one category (resource, schedule, limit, properties,\nio, notify)"), "{plain}");
        let bmod = super::text(command("bmod").expect("bmod"), &[]).expect("bmod");
        assert!(bmod.contains("\n  -R res_req\n        The resource requirement. Not supported"), "{bmod}");
        let app = text(&["-app"]).expect("-app");
        assert_eq!(app, "  -app application_profile\n        An application profile of lsb.applications.\n");
        let io = text(&["io"]).expect("io");
        assert!(io.starts_with("Category: io\n\nOptions:\n  -o output_file\n"), "{io}");
        assert!(!io.contains("-n "), "{io}");
        assert!(text(&["description"]).expect("description").starts_with("Submits a job"));
        assert!(text(&["all"]).expect("all").contains("Submits a job"));
        assert!(text(&["-pack"]).expect("known to LSF").contains("does not have"));
        assert_eq!(text(&["nonsense"]).expect_err("unknown"), "bsub: -h nonsense: no such option or category");
        // Every line fits a terminal.
        for c in allot_config::lsf_commands::all() {
            let all = super::text(c, &words(&["all"])).expect("all");
            assert!(all.lines().all(|l| l.chars().count() <= 80), "{all}");
        }
        let lsid = super::text(command("lsid").expect("lsid"), &[]).expect("lsid");
        assert!(lsid.ends_with("\nNo options but -h and -V.\n"), "{lsid}");
    }
}
