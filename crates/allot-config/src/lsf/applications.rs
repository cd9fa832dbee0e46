//! `lsb.applications`: `Begin Application` ... `End Application` sections,
//! the application profiles `bsub -app` names. allot reads NAME,
//! DESCRIPTION, RUNLIMIT, RUNTIME (the run time estimate: "LSF uses the
//! RUNTIME estimate for scheduling purposes only", spec 004, "Backfill
//! scheduling") and PROCLIMIT (spec 004: "in lsb.queues or
//! lsb.applications"), RESIZABLE_JOBS (Y, N or auto) and RESIZE_NOTIFY_CMD
//! (spec 004, "Job Allocations that Grow and Shrink"); any other
//! parameter is reported and ignored.

use super::read::{at, value};
use super::text::{Source, key_values, sections, unquote};
use super::values::{name, run_limits};
use crate::diag::Diagnostics;
use crate::model::Application;

pub fn read(src: &Source<'_>, diags: &mut Diagnostics) -> Vec<Application> {
    let mut out: Vec<Application> = Vec::new();
    for section in sections(src, diags) {
        if !section.is("Application") {
            diags.warning(at(&section.begin, &section.name), format!("unknown section `{}`, ignored", section.name));
            continue;
        }
        let kvs = key_values(&section, diags);
        let Some((line, name_kv)) = kvs.iter().find(|(_, kv)| kv.key.eq_ignore_ascii_case("NAME")) else {
            diags.error(section.begin.loc(0), "Application: expected a `NAME` parameter");
            continue;
        };
        let Some(app_name) = value(diags, line, "NAME", name_kv.value, name) else { continue };
        if out.iter().any(|a| a.name == app_name) {
            diags.error(at(line, name_kv.value), format!("application `{app_name}` is defined twice"));
            continue;
        }
        let mut app = Application { name: app_name.to_string(), ..Application::default() };
        for (line, kv) in &kvs {
            let key = kv.key.to_ascii_uppercase();
            // One value, [hours:]minutes.
            let minutes = |diags: &mut Diagnostics| match value(diags, line, &key, kv.value, run_limits) {
                Some(v) if v.len() == 1 => Some(v[0].seconds),
                Some(_) => {
                    diags.error(at(line, kv.value), format!("{key}: expected one `[hours:]minutes`"));
                    None
                }
                None => None,
            };
            match key.as_str() {
                "NAME" => {}
                "DESCRIPTION" => app.description = unquote(kv.value).to_string(),
                "RUNLIMIT" => app.runlimit = minutes(diags),
                "RUNTIME" => app.runtime = minutes(diags),
                "PROCLIMIT" => {
                    app.proclimit =
                        super::queues::proclimit(&format!("application `{}`", app.name), line, kv.value, diags)
                }
                "RESIZABLE_JOBS" => {
                    use allot_engine::model::Resizable;
                    app.resizable = match unquote(kv.value).to_ascii_lowercase().as_str() {
                        "y" | "yes" => Some(Resizable::Yes),
                        "auto" => Some(Resizable::Auto),
                        "n" | "no" => None,
                        _ => {
                            diags.error(
                                at(line, kv.value),
                                format!("RESIZABLE_JOBS: expected Y, N or auto, found `{}`", kv.value),
                            );
                            None
                        }
                    }
                }
                "RESIZE_NOTIFY_CMD" => {
                    let cmd = unquote(kv.value).trim();
                    app.resize_notify_cmd = (!cmd.is_empty()).then(|| cmd.to_string());
                }
                _ => diags.warning(
                    at(line, kv.key),
                    format!("application `{}`: `{}` is not used by allot, ignored", app.name, kv.key),
                ),
            }
        }
        out.push(app);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apps(text: &str) -> (Vec<Application>, Diagnostics) {
        let mut d = Diagnostics::default();
        let a = read(&Source { name: "lsb.applications", text }, &mut d);
        (a, d)
    }

    #[test]
    fn profiles_with_run_limits_and_estimates() {
        let (a, d) = apps(
            "Begin Application\nNAME = sim\nDESCRIPTION = \"simulations\"\nRUNTIME = 1:30\nRUNLIMIT = 180\nEnd Application\n\
             Begin Application\nNAME = plain\nCPULIMIT = 10\nEnd Application\n",
        );
        assert_eq!(
            d.0.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
            ["lsb.applications:9:1: warning: application `plain`: `CPULIMIT` is not used by allot, ignored"]
        );
        assert_eq!((a[0].name.as_str(), a[0].runtime, a[0].runlimit), ("sim", Some(5400), Some(10800)));
        assert_eq!(a[0].description, "simulations");
        assert_eq!((a[1].runtime, a[1].runlimit), (None, None));
    }

    #[test]
    fn proclimit_is_read_and_a_wrong_one_ignored_with_a_warning() {
        let (a, d) = apps(
            "Begin Application\nNAME = mpi\nPROCLIMIT = 2 4 8\nEnd Application\n\
             Begin Application\nNAME = bad\nPROCLIMIT = 8 4\nEnd Application\n",
        );
        let limit = a[0].proclimit.expect("read");
        assert_eq!((limit.min, limit.default, limit.max), (2, 4, 8));
        assert_eq!(a[1].proclimit, None);
        assert_eq!(
            d.0.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
            ["lsb.applications:7:13: warning: application `bad`: PROCLIMIT must satisfy 1 <= minimum <= default \
                 <= maximum; PROCLIMIT is ignored"]
        );
    }

    #[test]
    fn resizable_jobs_and_their_notification_command() {
        let (a, d) = apps(
            "Begin Application\nNAME = grow\nRESIZABLE_JOBS = auto\nRESIZE_NOTIFY_CMD = /bin/notify -v\nEnd Application\n\
             Begin Application\nNAME = shrink\nRESIZABLE_JOBS = Y\nEnd Application\n\
             Begin Application\nNAME = bad\nRESIZABLE_JOBS = maybe\nEnd Application\n",
        );
        use allot_engine::model::Resizable;
        assert_eq!(
            (a[0].resizable, a[0].resize_notify_cmd.as_deref()),
            (Some(Resizable::Auto), Some("/bin/notify -v"))
        );
        assert_eq!((a[1].resizable, a[2].resizable), (Some(Resizable::Yes), None));
        assert_eq!(
            d.0.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
            ["lsb.applications:12:18: error: RESIZABLE_JOBS: expected Y, N or auto, found `maybe`"]
        );
    }

    #[test]
    fn bad_profiles_are_located() {
        let (a, d) = apps(
            "Begin Application\nRUNTIME = 10\nEnd Application\n\
             Begin Application\nNAME = x\nRUNTIME = soon\nEnd Application\n\
             Begin Application\nNAME = x\nEnd Application\n",
        );
        let d: Vec<String> = d.0.iter().map(|x| x.to_string()).collect();
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].starts_with("lsb.applications:1:1: error: Application: expected a `NAME`"), "{d:?}");
        assert!(d[1].starts_with("lsb.applications:6:11: error: RUNTIME"), "{d:?}");
        assert!(d[2].contains("application `x` is defined twice"), "{d:?}");
        assert_eq!(a.len(), 1);
    }
}
