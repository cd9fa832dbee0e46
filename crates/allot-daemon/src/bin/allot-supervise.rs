//! allot-supervise: holds one job for allotd (`allot-supervise STATE_DIR
//! JOB`), or forks one such supervisor per job allotd names
//! (`allot-supervise --zygote STATE_DIR`, see `allot_exec::zygote`). A
//! supervisor runs the job, records how it ended, and outlives the daemon
//! if it must. A binary of its own, apart from allotd, because one starts
//! for every job: it links only what running a job needs, so it starts
//! faster than the daemon's binary would.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    allot_exec::inherit::no_inherited_descriptors();
    let args: Vec<String> = std::env::args().skip(1).collect();
    // A blaunch task's supervisor, started by its host's agent.
    if let [flag, dir, name] = args.as_slice() {
        if flag == "--task" {
            return match allot_exec::task::supervise(std::path::Path::new(dir), name) {
                Ok(_) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("allot-supervise: task {name}: {e}");
                    ExitCode::FAILURE
                }
            };
        }
    }
    if let [flag, state_dir] = args.as_slice() {
        if flag == "--zygote" {
            // See allot_exec::zygote: supervisors forked, one per job id read.
            return match allot_exec::JobFiles::new(&PathBuf::from(state_dir))
                .map_err(|e| e.to_string())
                .and_then(|f| allot_exec::zygote::zygote(&f).map_err(|e| e.to_string()))
            {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("allot-supervise: {e}");
                    ExitCode::FAILURE
                }
            };
        }
    }
    let [state_dir, job] = args.as_slice() else {
        eprintln!(
            "usage: allot-supervise STATE_DIR JOB, allot-supervise --zygote STATE_DIR (started by allotd), or \
             allot-supervise --task DIR NAME (started by an agent)"
        );
        return ExitCode::from(2);
    };
    let Ok(job) = job.parse::<u64>() else {
        eprintln!("allot-supervise: JOB must be a job id, not `{job}`");
        return ExitCode::from(2);
    };
    match allot_exec::JobFiles::new(&PathBuf::from(state_dir))
        .map_err(|e| e.to_string())
        .and_then(|f| f.supervise(job).map_err(|e| e.to_string()))
    {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("allot-supervise: {e}");
            ExitCode::FAILURE
        }
    }
}
