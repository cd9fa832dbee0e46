//! `allot config check DIR`.

use std::path::Path;
use std::process::ExitCode;

/// Prints every diagnostic of `dir` and a summary; fails on any error.
pub fn check(dir: &Path) -> anyhow::Result<ExitCode> {
    match allot_config::load_dir(dir) {
        Ok((config, warnings)) => {
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
            Ok(ExitCode::SUCCESS)
        }
        Err(diags) => {
            eprint!("{diags}");
            eprintln!("{}: {} errors, {} warnings", dir.display(), diags.errors().count(), diags.warnings().count());
            Ok(ExitCode::FAILURE)
        }
    }
}
