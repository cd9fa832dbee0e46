//! `bsub`'s job scripts (`#BSUB` lines) and how options run together.
use super::*;

#[test]
fn a_scripts_bsub_lines_are_options_and_the_command_line_wins() {
    let script = "#!/bin/sh\n#BSUB -J dask-worker\n#BSUB -q normal\n#BSUB -n 2\n#BSUB -R \"span[hosts=1]\"\n\
                  #BSUB -M 1000\n#BSUB -W 00:30\n#BSUB -o out.%J\necho hi\n#BSUB -P late\n#BSUBX -q ignored\n";
    let s = script_directives(script).expect("parses");
    assert_eq!(s.name.as_deref(), Some("dask-worker"));
    assert_eq!((s.queue.as_deref(), s.slots), (Some("normal"), Some(SlotRange { min: 2, max: 2 })));
    assert_eq!(
        (s.res_req.clone(), s.mem_limit.as_deref(), s.run_limit),
        (vec!["span[hosts=1]".to_string()], Some("1000"), Some(1800))
    );
    assert_eq!(
        (s.output.clone(), s.project.as_deref()),
        (Some(("out.%J".to_string(), false)), Some("late")),
        "anywhere in the script"
    );
    let cli = parse_line("-q short -J mine").expect("cli");
    let o = cli.or_script(s);
    assert_eq!((o.queue.as_deref(), o.name.as_deref(), o.run_limit), (Some("short"), Some("mine"), Some(1800)));
}

/// Script shapes seen in the wild: comments after a value, a line that
/// is only a comment, `#` inside a value.
#[test]
fn text_after_a_hash_that_begins_a_word_is_a_comment() {
    let script = "#!/bin/bash\n#BSUB -W 1:00   # wall-clock limit\n#BSUB -q normal\t#queue\n\
                  #BSUB    # nothing but a comment\n#BSUB -J \"run#1\" # quoted\n#BSUB -P proj#7\n\
                  #BSUB -o out.%J #  -e is not read\n";
    let s = script_directives(script).expect("parses");
    assert_eq!((s.run_limit, s.queue.as_deref()), (Some(3600), Some("normal")));
    assert_eq!((s.name.as_deref(), s.project.as_deref()), (Some("run#1"), Some("proj#7")));
    assert_eq!((s.output.clone(), s.error.clone()), (Some(("out.%J".to_string(), false)), None));
}

/// An LSF option allot lacks is refused by its whole name, never
/// read as a shorter one with its value run on.
#[test]
fn an_option_allot_lacks_is_refused_by_its_whole_name() {
    for (line, name) in [("-nnodes 1 true", "-nnodes"), ("-gpu num=1 true", "-gpu"), ("-ptl 10 true", "-ptl")] {
        let err = parse_line(line).expect_err("refused");
        assert_eq!(err.to_string(), format!("{name}: an option of LSF's that this allot does not have"));
    }
    assert_eq!(parse_line("-n4 true").expect("-n 4").slots, Some(SlotRange { min: 4, max: 4 }));
}

#[test]
fn a_bad_line_of_a_script_is_named() {
    let err = script_directives("#!/bin/sh\n#BSUB -q normal\n#BSUB -W soon\n").expect_err("refused");
    assert_eq!(err.to_string(), "job script line 3: -W soon: expected `[hours:]minutes`");
    let err = script_directives("#BSUB -q normal extra\n").expect_err("refused");
    assert_eq!(err.to_string(), "job script line 1: extra: unknown option");
}

#[test]
fn memory_limits_read_in_the_unit_given_or_the_sites() {
    assert_eq!(mem_limit_kb("1000", "KB"), Ok(1000));
    assert_eq!(mem_limit_kb("1000", "MB"), Ok(1_024_000));
    assert_eq!(mem_limit_kb("10GB", "KB"), Ok(10 * 1024 * 1024));
    assert_eq!(mem_limit_kb("512M", "KB"), Ok(512 * 1024));
    assert_eq!(mem_limit_kb("1.5G", "KB"), Ok(1_572_864));
    for bad in ["", "lots", "10XB", "-5", "0", "1e400"] {
        assert!(mem_limit_kb(bad, "KB").is_err(), "{bad}");
    }
    assert!(parse_line("-M 10GB true").is_ok());
    assert!(matches!(parse_line("-M ten true"), Err(BsubError::BadSizeLimit { option: "-M", .. })));
}

/// Single letters run together as getopt reads them; an option's
/// own name wins over a run (`-oo` overwrites, `-rn` is not `-r -n`).
#[test]
fn options_run_together_as_lsf_reads_them() {
    let o = parse_line("-xK -n4 -qshort -oo out -eo err -Jd note -rn -W10 run -xK").expect("parses");
    assert!(o.exclusive && o.wait, "-xK");
    assert_eq!((o.slots.map(|s| s.min), o.queue.as_deref()), (Some(4), Some("short")));
    assert_eq!((o.output, o.error), (Some(("out".into(), true)), Some(("err".into(), true))));
    assert_eq!(o.rerunnable, Some(false));
    assert_eq!(o.run_limit, Some(600));
    assert_eq!(o.description.as_deref(), Some("note"), "-Jd, not -J d");
    assert_eq!(
        parse_line(&format!("-Jd {} true", "x".repeat(MAX_DESCRIPTION + 1))).expect_err("too long").to_string(),
        "-Jd: the description has 4095 characters; at most 4094 are taken"
    );
    assert_eq!(o.command, ["run", "-xK"], "the command's own words are its own");
    let o = parse_line("-Kxq normal -o o.%J true").expect("parses");
    assert_eq!((o.wait, o.exclusive, o.queue.as_deref()), (true, true, Some("normal")));
    assert_eq!(parse_line("-xZ true").expect_err("refused").to_string(), "-xZ: unknown option");
    assert_eq!(parse_line("-J -x true").expect("a value").name.as_deref(), Some("-x"));
    // A mail address is never an option of the mail program.
    assert_eq!(parse_line("-u bob@example.org true").expect("parses").mail_user.as_deref(), Some("bob@example.org"));
    for bad in ["-u -C/etc/evil.cf true", "-u 'a b' true", "-u '' true"] {
        assert!(matches!(parse_line(bad), Err(BsubError::BadMailUser(_))), "{bad}");
    }
}

/// `-C -D -F -S -v` as `-M` is written; the last of one option wins,
/// the command line's over a script's; a bad one is named.
#[test]
fn per_process_limits_are_sizes_by_option() {
    let o = parse_line("-C 0 -F 2MB -S 8192 -v 4G -D 1G -F 3MB true").expect("parses");
    let limits: Vec<(&str, &str)> = o.process_limits.iter().map(|(p, v)| (*p, v.as_str())).collect();
    assert_eq!(limits, [("-C", "0"), ("-S", "8192"), ("-v", "4G"), ("-D", "1G"), ("-F", "3MB")]);
    let err = parse_line("-S big true").expect_err("refused").to_string();
    assert_eq!(
        err,
        "-S big: expected a size: a number, in LSF_UNIT_FOR_LIMITS (KB unless set), or with a unit (KB, MB, GB, TB)"
    );
    let script = script_directives("#BSUB -C 10\n#BSUB -F 20\n").expect("script");
    let merged = parse_line("-F 30 true").expect("parses").or_script(script);
    let limits: Vec<(&str, &str)> = merged.process_limits.iter().map(|(p, v)| (*p, v.as_str())).collect();
    assert_eq!(limits, [("-C", "10"), ("-F", "30")]);
}

/// `#BSUB -L /bin/bash`, as job scripts in the wild write it, is taken;
/// a shell not named by its absolute path is refused at its line.
#[test]
fn a_scripts_login_shell_is_taken() {
    let s = script_directives("#!/bin/bash\n#BSUB -L /bin/bash   # login shell\n#BSUB -q normal\n").expect("parses");
    assert_eq!(s.login_shell.as_deref(), Some("/bin/bash"));
    let err = script_directives("#BSUB -L bash\n").expect_err("refused");
    assert_eq!(err.to_string(), "job script line 1: -L bash: expected the login shell's absolute path");
}
