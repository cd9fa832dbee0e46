//! LSF's commands read their options as getopt does, with multi-letter
//! options beside the single letters: a word that is an option (`-oo`,
//! `-Jd`, `-noheader`) is that option; any other is a run of single
//! letters (`-aw` is `-a -w`), the first that takes a value ending the
//! run with the rest of the word, or the next word, as its value
//! (`-uall`, `-aJ NAME`, `-n4`).

use crate::lsf_commands::Opt;

/// `args` with every run of single letters split into its options, and
/// each value after its option, for a command whose options are `opts`
/// (its table in [`crate::lsf_commands`]). With `operands_end`, the
/// first word that is no option (or `--`) ends the options: it and what
/// follows are left as they are (`bsub`'s command). `Err`: the word with
/// an unknown option.
///
/// An option of `whole` (LSF's options this allot does not know) is
/// refused by its whole name, never read as shorter ones run together
/// (`-nnodes 1` is not `-n nodes 1`).
pub fn split(args: &[String], opts: &[Opt], whole: &[&str], operands_end: bool) -> Result<Vec<String>, String> {
    let find = |name: &str| opts.iter().find(|o| o.name == name);
    let is_flag = |name: &str| find(name).is_some_and(|o| o.value.is_none());
    let takes_value = |name: &str| find(name).is_some_and(|o| o.value.is_some());
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" && operands_end {
            out.push(a.clone());
            out.extend(it.cloned());
            break;
        }
        if !a.starts_with('-') || a == "-" {
            out.push(a.clone());
            if operands_end {
                out.extend(it.cloned());
                break;
            }
            continue;
        }
        if is_flag(a) {
            out.push(a.clone());
            continue;
        }
        if takes_value(a) {
            out.push(a.clone());
            if let Some(v) = it.next() {
                out.push(v.clone());
            }
            continue;
        }
        if whole.contains(&a.as_str()) {
            return Err(a.clone());
        }
        let letters: Vec<char> = a[1..].chars().collect();
        let mut k = 0;
        while k < letters.len() {
            let opt = format!("-{}", letters[k]);
            if is_flag(&opt) {
                out.push(opt);
                k += 1;
            } else if takes_value(&opt) {
                out.push(opt);
                let rest: String = letters[k + 1..].iter().collect();
                if !rest.is_empty() {
                    out.push(rest);
                } else if let Some(v) = it.next() {
                    out.push(v.clone());
                }
                break;
            } else {
                return Err(a.clone());
            }
        }
    }
    Ok(out)
}
