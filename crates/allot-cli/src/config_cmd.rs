//! `allot config check DIR`.

use std::path::Path;
use std::process::ExitCode;

/// `allot config check DIR`: the directory as allotd reads it, its
/// errors and warnings located, and then what came from allot's
/// defaults because no file defines it (this machine as the one host; the
/// queue `normal`).
pub fn check(dir: &Path) -> anyhow::Result<ExitCode> {
    let loaded = allot_config::load::read_dir(dir).and_then(|files| {
        let files = allot_config::detected::this_machine(files);
        let defaulted_hosts = files.iter().any(|(n, _)| n == allot_config::detected::THIS_MACHINE);
        allot_config::load::load_texts(&files).map(|(c, w)| (c, w, defaulted_hosts))
    });
    match loaded {
        Ok((config, warnings, defaulted_hosts)) => {
            // The loader's own mark: what no file defined.
            let defaulted_queues = config.queues.iter().all(|q| q.loc.file == allot_config::load::DEFAULTS);
            eprint!("{warnings}");
            println!(
                "{}: ok: {} queues, {} fairshare policies, {} hosts, {} user groups, {} warnings",
                dir.display(),
                config.queues.len(),
                config.fairshare_policies().len(),
                config.hosts.len(),
                config.groups.iter().count(),
                warnings.warnings().count(),
            );
            if defaulted_hosts {
                let h = &config.hosts[0];
                println!(
                    "hosts: no file names one: this machine, {} ({} CPUs), from allot's defaults",
                    h.name,
                    h.cpus()
                );
            }
            if defaulted_queues {
                let names: Vec<&str> = config.queues.iter().map(|q| q.name.as_str()).collect();
                println!("queues: no lsb.queues defines one: {}, from allot's defaults", names.join(" "));
            }
            if !config.resource_limits.is_empty() {
                let names: Vec<&str> = config.resource_limits.iter().map(|l| l.name.as_str()).collect();
                println!("limits (lsb.resources): {}", names.join(" "));
            }
            for s in &config.shared_resources {
                let hosts = s.hosts.as_ref().map_or("all hosts".to_string(), |h| h.join(" "));
                println!("shared resource {}: {} on {hosts}", s.name, s.total);
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(diags) => {
            eprint!("{diags}");
            eprintln!("{}: {} errors, {} warnings", dir.display(), diags.errors().count(), diags.warnings().count());
            Ok(ExitCode::FAILURE)
        }
    }
}
