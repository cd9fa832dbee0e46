//! `bresize release`'s host list, as the command and a workload's
//! `bresize` action take it.

/// `1*hostA 2*hostB hostC`: slots to release on each host (`None`: all
/// of the job's there, as LSF takes a host without `n*`). The error names
/// the word at fault; a word that begins with `-` is an option out of
/// place (no host name begins with one), not a host that is not
/// configured.
pub fn release_hosts(spec: &str) -> Result<Vec<(String, Option<u32>)>, String> {
    let mut out = Vec::new();
    for w in spec.split_whitespace() {
        if w.starts_with('-') {
            return Err(format!("`{w}`: an option where a host is expected"));
        }
        match w.split_once('*') {
            Some((n, h)) => {
                let n: u32 = n
                    .parse()
                    .ok()
                    .filter(|&n| n > 0 && !h.is_empty())
                    .ok_or_else(|| format!("`{w}`: expected `slots*host`, slots a whole number of at least 1"))?;
                out.push((h.to_string(), Some(n)));
            }
            None => out.push((w.to_string(), None)),
        }
    }
    if out.is_empty() {
        return Err("name the slots to release, as \"1*hostA 2*hostB hostC\"".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::release_hosts;

    #[test]
    fn hosts_with_and_without_a_count() {
        let got = release_hosts(" 1*hostA 2*hostB  hostC ").expect("valid");
        assert_eq!(got, vec![("hostA".into(), Some(1)), ("hostB".into(), Some(2)), ("hostC".into(), None)]);
    }

    #[test]
    fn a_bad_word_is_named() {
        for bad in ["0*hostA", "x*hostA", "2*"] {
            let e = release_hosts(&format!("hostB {bad}")).expect_err(bad);
            assert!(e.contains(&format!("`{bad}`")), "{e}");
        }
        assert!(release_hosts("  ").expect_err("empty").contains("name the slots"));
        let e = release_hosts("hostA -rncn").expect_err("an option");
        assert_eq!(e, "`-rncn`: an option where a host is expected");
    }
}
