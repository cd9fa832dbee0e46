//! `allot explain JOBID [--json]`: everything that holds a pending job,
//! from the running allotd (the same as `bjobs -p -l` shows under it).

use std::process::ExitCode;

use allot_engine::explain::Explanation;
use allot_proto::{JobRef, Request, Response};
use anyhow::{anyhow, bail};

/// The explanation of `job` from allotd.
pub(crate) fn ask(job: JobRef) -> anyhow::Result<Explanation> {
    match crate::lsf::call(Request::Explain { job })? {
        Response::Explained(v) => serde_json::from_value(v).map_err(|e| anyhow!("job <{job}>: {e}")),
        Response::Error(e) => bail!("{e}"),
        _ => bail!("allot explain: unexpected answer"),
    }
}

pub(crate) fn run(job: &str, json: bool) -> anyhow::Result<ExitCode> {
    let refs = crate::lsf::job_refs("explain", job)?;
    let [job] = refs[..] else { bail!("explain: {job}: one job, as `12` or `12[3]`") };
    let x = ask(job)?;
    let text = if json {
        serde_json::to_string_pretty(&x)? + "\n"
    } else {
        let head = format!("Job <{job}>, User <{}>, Queue <{}>, {} slot(s)\n\n", x.user, x.queue, show_slots(x.slots));
        head + &x.render(&crate::job_long::long_time)
    };
    crate::lsf::emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn show_slots((min, max): (u32, u32)) -> String {
    if min == max { min.to_string() } else { format!("{min} to {max}") }
}
