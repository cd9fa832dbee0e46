//! The embedded defaults ([`crate::defaults`]) as an LSF configuration
//! tree, which `allot start` writes when it is given no configuration:
//! `lsf.conf`, `lsf.shared` and `lsf.cluster.<name>` in the tree's top,
//! and `lsbatch/<name>/configdir/lsb.queues` and `lsb.params`, where LSF
//! and the tools written for it look. The administrator edits them and
//! runs `badmin reconfig`. No host is named: with none, the one host is
//! this machine, its CPUs and memory read at each load (see
//! [`crate::detected`]), as with the embedded defaults.

use std::path::{Path, PathBuf};

use crate::model::DEFAULT_CLUSTER_NAME;

/// The tree's files, each with its path under `envdir` (LSF_ENVDIR, which
/// is also LSF_CONFDIR) and its text; `sharedir` is LSB_SHAREDIR (allotd's
/// state directory), `admin` the cluster's administrator (whoever runs
/// allotd).
pub fn default_tree(envdir: &Path, sharedir: &Path, admin: &str) -> Vec<(PathBuf, String)> {
    let name = DEFAULT_CLUSTER_NAME;
    let lsb_confdir = envdir.join("lsbatch");
    let head = "# allot's embedded defaults, written by `allot start`: edit them, then run `badmin reconfig`.\n";
    let conf = format!(
        "{head}LSF_CONFDIR={}\nLSB_CONFDIR={}\nLSB_SHAREDIR={}\n# Limits given without a unit: allot's commands take LSF_UNIT_FOR_LIMITS\n\
         # from their environment, else from $LSF_ENVDIR/lsf.conf, else KB.\n\
         LSF_UNIT_FOR_LIMITS=KB\n",
        envdir.display(),
        lsb_confdir.display(),
        sharedir.display(),
    );
    let shared = format!("{head}Begin Cluster\nClusterName\n{name}\nEnd Cluster\n");
    let cluster = format!(
        "{head}# No Host section: the one host is this machine, with its CPUs as slots.\n\
         Begin ClusterAdmins\nAdministrators = {admin}\nEnd ClusterAdmins\n"
    );
    let queues = format!(
        "{head}Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nFAIRSHARE = USER_SHARES[[default, 1]]\n\
         DESCRIPTION = The default queue: every user has an equal share.\nEnd Queue\n"
    );
    // LSF's installed MAX_JOB_NUM (its built-in default is 1000).
    let params = format!("{head}Begin Parameters\nDEFAULT_QUEUE = normal\nMAX_JOB_NUM = 10000\nEnd Parameters\n");
    let batch = lsb_confdir.join(name).join("configdir");
    vec![
        (envdir.join("lsf.conf"), conf),
        (envdir.join("lsf.shared"), shared),
        (envdir.join(format!("lsf.cluster.{name}")), cluster),
        (batch.join("lsb.queues"), queues),
        (batch.join("lsb.params"), params),
    ]
}

/// Writes [`default_tree`] where there is no `lsf.conf` in `envdir` yet; a
/// tree there already (the defaults written before, edited or not) is
/// left as it is. Returns whether it wrote.
pub fn write_default_tree(envdir: &Path, sharedir: &Path, admin: &str) -> std::io::Result<bool> {
    if envdir.join("lsf.conf").exists() {
        return Ok(false);
    }
    for (path, text) in default_tree(envdir, sharedir, admin) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, text)?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_written_tree_loads_as_the_embedded_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let envdir = dir.path().join("conf");
        assert!(write_default_tree(&envdir, dir.path(), "root").expect("written"));
        // As allotd reads a directory: this machine added where no host is.
        let files = crate::load::read_dir(&envdir).unwrap_or_else(|d| panic!("{d}"));
        let files = crate::detected::this_machine(files);
        let (config, warnings) = crate::load::load_texts(&files).unwrap_or_else(|d| panic!("{d}"));
        assert!(warnings.to_string().is_empty(), "{warnings}");
        let written = config.engine_config();
        let embedded = crate::defaults::engine_config();
        let hosts = |e: &allot_engine::model::EngineConfig| {
            e.hosts.iter().map(|h| (h.name.clone(), h.slots, h.cpus)).collect::<Vec<_>>()
        };
        assert_eq!(hosts(&written), hosts(&embedded));
        let queues = |e: &allot_engine::model::EngineConfig| {
            e.queues.iter().map(|q| (q.name.clone(), q.priority, q.policy.clone())).collect::<Vec<_>>()
        };
        assert_eq!(queues(&written), queues(&embedded));
        assert_eq!(written.default_queues, embedded.default_queues);
        assert_eq!(written.fairshare.policies.len(), embedded.fairshare.policies.len());
        assert_eq!(config.cluster_name(), DEFAULT_CLUSTER_NAME);
        // Where LSF's tools look for the batch files.
        let layout = crate::load::layout(&envdir);
        assert_eq!(layout.batch_dir, envdir.join("lsbatch").join(DEFAULT_CLUSTER_NAME).join("configdir"));
        // Written once: an edited tree is left as it is.
        std::fs::write(envdir.join("lsf.conf"), "LSF_UNIT_FOR_LIMITS=MB\n").expect("edited");
        assert!(!write_default_tree(&envdir, dir.path(), "root").expect("left"));
        let kept = std::fs::read_to_string(envdir.join("lsf.conf")).expect("lsf.conf");
        assert_eq!(kept, "LSF_UNIT_FOR_LIMITS=MB\n");
    }
}
