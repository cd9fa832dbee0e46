//! The configuration allotd runs on: a configuration directory's files, or
//! the embedded defaults. The files' texts go into the event log with each
//! `Reconfigured` record, so a restart replays every job under the
//! configuration it was scheduled with, whatever the files say by then.

use std::net::SocketAddr;
use std::path::Path;

use allot_engine::model::EngineConfig;

/// Where a configuration comes from: `dir` and its files' texts, or
/// (`dir` is `None`) the embedded defaults.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Source {
    pub dir: Option<String>,
    pub files: Vec<(String, String)>,
}

/// Seconds between measurements of running jobs' CPU time and memory when
/// `[daemon] usage_interval` does not say: LSF's sbatchd reports about as
/// often.
pub const DEFAULT_USAGE_INTERVAL: u64 = 10;

/// A configuration ready to run.
pub struct Loaded {
    pub engine: EngineConfig,
    /// Users who may act on any job and run `badmin`.
    pub admins: Vec<String>,
    /// The cluster's name ([`allot_config::model::Config::cluster_name`]).
    pub cluster_name: String,
    pub metrics: Option<SocketAddr>,
    /// Seconds between measurements of running jobs.
    pub usage_interval: u64,
    /// CLEAN_PERIOD, seconds.
    pub clean_period: u64,
    /// JOB_TERMINATE_INTERVAL, seconds.
    pub terminate_interval: u64,
    /// MAX_PREEXEC_RETRY.
    pub max_preexec_retry: u32,
    /// MAX_JOB_NUM: finished jobs between the log's archivings.
    pub max_job_num: u64,
    /// `lsb.params` in force, by name (`bparams -a`).
    pub params: Vec<(String, String)>,
    /// The mail program jobs' mail goes through: lsf.conf's LSB_MAILPROG,
    /// else sendmail where it is; `None`: mail cannot be sent.
    pub mail_prog: Option<String>,
    /// Each queue's JOB_WARNING_ACTION and JOB_ACTION_WARNING_TIME, where
    /// it has both: the warning its jobs get unless they ask for their own.
    pub queue_warnings: std::collections::BTreeMap<String, (String, u64)>,
    /// The queues with RERUNNABLE = Y.
    pub rerunnable_queues: std::collections::BTreeSet<String>,
    /// What each queue's configuration says beyond the engine's: how its
    /// jobs run (NICE, JOB_STARTER) and what `bqueues -l` shows of it
    /// (DESCRIPTION, HOSTS as written), for the queues that set any.
    pub queue_extras: std::collections::BTreeMap<String, QueueExtras>,
    /// Each application profile's RESIZE_NOTIFY_CMD, where it has one.
    pub resize_notify: std::collections::BTreeMap<String, String>,
    /// `[cluster]`: agents on the hosts, with `tls` made absolute
    /// (relative to the configuration directory).
    pub cluster: Option<allot_config::cluster::ClusterSettings>,
    /// The hosts whose CPUs the files do not give: their agents' count
    /// stands (`allot_config::detected`).
    pub cpus_found_for: std::collections::BTreeSet<String>,
    /// Warnings, one per line, each located (`file:line:col`).
    pub warnings: String,
    /// Where the configuration is, by LSF's names (`LSF_ENVDIR`,
    /// `LSF_CONFDIR`, `LSB_CONFDIR`), as its lsf.conf lays it out; none
    /// for the embedded defaults.
    pub conf_dirs: Vec<(String, String)>,
}

/// LSB_MAILPROG as configured, else sendmail where it is installed; a
/// configured program that is not there is none (submissions asking for
/// mail are told).
fn mail_program(configured: Option<&str>) -> Option<String> {
    if let Some(p) = configured {
        return Path::new(p).exists().then(|| p.to_string());
    }
    ["/usr/sbin/sendmail", "/usr/lib/sendmail"].into_iter().find(|p| Path::new(p).exists()).map(str::to_string)
}

fn params_shown(p: &allot_config::model::Params) -> Vec<(String, String)> {
    allot_config::lsf::params::shown(p).into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// What a queue's configuration says that the engine does not keep: how
/// its jobs are run on their hosts, and what `bqueues -l` shows of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueExtras {
    /// NICE: the `nice` value its jobs start with.
    pub nice: i32,
    /// JOB_STARTER, as written.
    pub job_starter: Option<String>,
    /// DESCRIPTION.
    pub description: String,
    /// HOSTS as LSF's `bqueues -l` shows them: a host group as `name/`,
    /// each entry as written (`~`, `!`, `+n`); empty: all hosts.
    pub hosts: Vec<String>,
}

/// One entry of a queue's HOSTS as `bqueues -l` shows it.
fn host_shown(config: &allot_config::model::Config, h: &allot_config::model::HostRef) -> String {
    let group = config.host_groups.iter().any(|g| g.name == h.name);
    format!(
        "{}{}{}{}{}",
        if h.exclude { "~" } else { "" },
        h.name,
        if group { "/" } else { "" },
        if h.first_exec { "!" } else { "" },
        h.preference.map(|n| format!("+{n}")).unwrap_or_default()
    )
}

impl QueueExtras {
    /// The command a job of this queue runs: `command` in the job
    /// starter's place for it (`%USRCMD`, each occurrence), or after the
    /// starter when it names no place (lsb.queues, JOB_STARTER: "By
    /// default, the user commands run after the job starter").
    pub fn command(&self, command: &str) -> String {
        match self.job_starter.as_deref() {
            Some(s) if s.contains("%USRCMD") => s.replace("%USRCMD", command),
            Some(s) => format!("{s} {command}"),
            None => command.to_string(),
        }
    }
}

/// Why a configuration is not taken: what and where (file:line).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The directory or a file in it cannot be read.
    #[error("{0}")]
    Unreadable(allot_config::diag::Diagnostics),
    /// The files have errors, each located, one per line.
    #[error("{0}")]
    Invalid(allot_config::diag::Diagnostics),
    /// A queue's JOB_WARNING_ACTION names no signal allotd can send.
    #[error("{at}: JOB_WARNING_ACTION: `{action}` is not a signal")]
    WarningAction { at: allot_config::diag::Location, action: String },
}

impl Source {
    /// The embedded defaults.
    pub fn defaults() -> Source {
        Source { dir: None, files: Vec::new() }
    }

    /// Reads the files of `dir`; an unreadable file is an error, located.
    /// A directory that names no host runs on this machine, as the
    /// embedded defaults do (`allot_config::detected::this_machine`).
    pub fn read(dir: &Path) -> Result<Source, ConfigError> {
        let files = allot_config::load::read_dir(dir).map_err(ConfigError::Unreadable)?;
        let files = allot_config::detected::this_machine(files);
        Ok(Source { dir: Some(dir.display().to_string()), files })
    }

    /// Parses and validates the texts: the configuration, or every
    /// diagnostic, located, one per line.
    pub fn load(&self) -> Result<Loaded, ConfigError> {
        if self.dir.is_none() {
            return Ok(Loaded {
                engine: allot_config::defaults::engine_config(),
                admins: Vec::new(),
                cluster_name: allot_config::model::DEFAULT_CLUSTER_NAME.into(),
                metrics: None,
                usage_interval: DEFAULT_USAGE_INTERVAL,
                clean_period: allot_config::model::Params::default().clean_period,
                terminate_interval: allot_config::model::Params::default().job_terminate_interval,
                max_preexec_retry: allot_config::model::DEFAULT_MAX_PREEXEC_RETRY,
                max_job_num: allot_config::model::DEFAULT_MAX_JOB_NUM,
                mail_prog: mail_program(None),
                params: params_shown(&allot_config::model::Params {
                    default_queue: vec!["normal".into()],
                    ..Default::default()
                }),
                queue_warnings: Default::default(),
                rerunnable_queues: Default::default(),
                queue_extras: Default::default(),
                resize_notify: Default::default(),
                cluster: None,
                cpus_found_for: Default::default(),
                warnings: String::new(),
                conf_dirs: Vec::new(),
            });
        }
        let (config, warnings) = allot_config::load::load_texts(&self.files).map_err(ConfigError::Invalid)?;
        for q in &config.queues {
            if let Some(action) = q.job_warning_action.as_deref().filter(|a| crate::control::signal_named(a).is_err()) {
                let at = q.loc_of("JOB_WARNING_ACTION");
                return Err(ConfigError::WarningAction { at, action: action.to_string() });
            }
        }
        Ok(Loaded {
            engine: config.engine_config(),
            admins: config.settings.admins.clone(),
            cluster_name: config.cluster_name().to_string(),
            metrics: config.settings.metrics,
            usage_interval: config.settings.usage_interval.unwrap_or(DEFAULT_USAGE_INTERVAL),
            clean_period: config.params.clean_period,
            terminate_interval: config.params.job_terminate_interval,
            max_preexec_retry: config.params.max_preexec_retry,
            max_job_num: config.params.max_job_num,
            params: params_shown(&config.params),
            mail_prog: mail_program(config.mail_prog.as_deref()),
            queue_warnings: config
                .queues
                .iter()
                .filter_map(|q| {
                    let warning = (q.job_warning_action.clone()?, q.job_action_warning_time?);
                    Some((q.name.clone(), warning))
                })
                .collect(),
            rerunnable_queues: config.queues.iter().filter(|q| q.rerunnable).map(|q| q.name.clone()).collect(),
            queue_extras: config
                .queues
                .iter()
                .map(|q| {
                    let extras = QueueExtras {
                        nice: q.nice,
                        job_starter: q.job_starter.clone(),
                        description: q.description.clone(),
                        hosts: q.hosts.iter().map(|h| host_shown(&config, h)).collect(),
                    };
                    (q.name.clone(), extras)
                })
                .filter(|(_, e)| *e != QueueExtras::default())
                .collect(),
            resize_notify: config
                .applications
                .iter()
                .filter_map(|a| Some((a.name.clone(), a.resize_notify_cmd.clone()?)))
                .collect(),
            cluster: config.settings.cluster.clone().map(|mut c| {
                let dir = Path::new(self.dir.as_deref().unwrap_or("."));
                c.tls = dir.join(&c.tls).display().to_string();
                c
            }),
            cpus_found_for: config.cpus_found_for.iter().cloned().collect(),
            warnings: warnings.to_string(),
            conf_dirs: self.conf_dirs(),
        })
    }

    /// `LSB_CONFDIR`, `LSF_CONFDIR` and `LSF_ENVDIR` of the directory, by
    /// its lsf.conf as read (see `allot_config::load::conf_dirs`), and its
    /// `LSF_UNIT_FOR_LIMITS`.
    pub fn conf_dirs(&self) -> Vec<(String, String)> {
        let Some(dir) = self.dir.as_deref() else { return Vec::new() };
        let conf = self.files.iter().find(|(n, _)| n == "lsf.conf").map_or("", |(_, t)| t.as_str());
        let (confdir, lsb_confdir) = allot_config::load::conf_dirs(Path::new(dir), conf);
        let mut out: Vec<(String, String)> =
            [("LSB_CONFDIR", lsb_confdir), ("LSF_CONFDIR", confdir), ("LSF_ENVDIR", dir.into())]
                .into_iter()
                .map(|(k, p)| (k.to_string(), p.display().to_string()))
                .collect();
        // The unit of limits given without one, as the commands read it
        // (LSF's default: KB).
        let unit = allot_config::load::lsf_conf_value(conf, "LSF_UNIT_FOR_LIMITS").filter(|u| !u.is_empty());
        out.push(("LSF_UNIT_FOR_LIMITS".into(), unit.unwrap_or_else(|| "KB".into())));
        out
    }

    /// This source with the CPUs the agents found that `current` kept (a
    /// configuration read again from its files has none of its own).
    pub fn keeping_found(mut self, current: &Source) -> Source {
        let found = allot_config::detected::found(&current.files);
        self.files = allot_config::detected::with_found(self.files, &found);
        self
    }

    /// How `badmin` and the log name it.
    pub fn describe(&self) -> String {
        self.dir.clone().unwrap_or_else(|| "the embedded defaults".into())
    }
}
