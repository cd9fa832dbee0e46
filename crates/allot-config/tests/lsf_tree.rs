//! A configuration laid out as LSF lays it out: `$LSF_ENVDIR/lsf.conf`,
//! `lsf.cluster.<name>` in LSF_CONFDIR, and `lsb.*` in
//! `$LSB_CONFDIR/<name>/configdir`; and allot's flat directory.

use std::path::{Path, PathBuf};

/// A fresh directory for one test; the test removes it when it passes.
fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("allot-tree-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("dirs");
    std::fs::write(path, text).expect("write");
}

const HOSTS: &str = "Begin Host\nHOSTNAME model type server RESOURCES ncpus\nh1 ! ! 1 () 4\nEnd Host\n";

#[test]
fn the_lsf_tree_is_read_where_lsf_keeps_it() {
    let top = temp("default");
    let conf = top.join("conf");
    write(&conf.join("lsf.conf"), "LSF_ENVDIR=/wherever\nLSB_NCPU_ENFORCE=1\n");
    write(&conf.join("lsf.cluster.c1"), HOSTS);
    let batch = conf.join("lsbatch/c1/configdir");
    write(&batch.join("lsb.queues"), "Begin Queue\nQUEUE_NAME = deep\nPRIORITY = 40\nEnd Queue\n");
    write(&batch.join("lsb.params"), "Begin Parameters\nDEFAULT_QUEUE = deep\nEnd Parameters\n");
    let tree = allot_config::load::layout(&conf);
    assert_eq!((tree.confdir.as_path(), tree.batch_dir.as_path()), (conf.as_path(), batch.as_path()));
    assert_eq!(tree.lsb_confdir, conf.join("lsbatch"));
    let (config, _) = allot_config::load::load_dir(&conf).expect("loads");
    assert_eq!(config.queues.iter().map(|q| q.name.as_str()).collect::<Vec<_>>(), ["deep"]);
    assert_eq!((config.cluster_name(), config.params.default_queue.as_slice()), ("c1", &["deep".to_string()][..]));
    assert!(config.params.ncpu_enforce, "lsf.conf is read too");

    // A mistake is named by its path in the tree.
    write(&batch.join("lsb.queues"), "Begin Queue\nQUEUE_NAME = deep\nPRIORITY = high\nEnd Queue\n");
    let errors = allot_config::load::load_dir(&conf).expect_err("refused").to_string();
    assert!(errors.contains("lsbatch/c1/configdir/lsb.queues:3:"), "{errors}");
    let _ = std::fs::remove_dir_all(&top);
}

#[test]
fn lsf_conf_can_put_the_tree_elsewhere_and_a_flat_directory_stays_flat() {
    let top = temp("elsewhere");
    let env = top.join("env");
    let confdir = top.join("shared/conf");
    let lsb = top.join("batch");
    write(&env.join("lsf.conf"), &format!("LSF_CONFDIR=\"{}\"\nLSB_CONFDIR={}\n", confdir.display(), lsb.display()));
    write(&confdir.join("lsf.cluster.prod"), HOSTS);
    write(&lsb.join("prod/configdir/lsb.queues"), "Begin Queue\nQUEUE_NAME = far\nEnd Queue\n");
    let (config, _) = allot_config::load::load_dir(&env).expect("loads");
    assert_eq!(config.queues.iter().map(|q| q.name.as_str()).collect::<Vec<_>>(), ["far"]);
    assert_eq!(config.cluster_name(), "prod");

    let flat = temp("flat");
    write(&flat.join("lsb.queues"), "Begin Queue\nQUEUE_NAME = here\nEnd Queue\n");
    write(&flat.join("allot.toml"), "[[hosts]]\nname = \"h1\"\nncpus = 2\n");
    let tree = allot_config::load::layout(&flat);
    assert_eq!(tree.batch_dir, flat);
    let (config, _) = allot_config::load::load_dir(&flat).expect("loads");
    assert_eq!(config.queues.iter().map(|q| q.name.as_str()).collect::<Vec<_>>(), ["here"]);
    let _ = (std::fs::remove_dir_all(&top), std::fs::remove_dir_all(&flat));
}

/// lsf.shared (in LSF_CONFDIR) names the cluster: its cluster file and its
/// `configdir` are the ones read, as LSF's daemons read them.
#[test]
fn lsf_shared_names_the_cluster() {
    let top = temp("shared");
    let conf = top.join("conf");
    write(&conf.join("lsf.conf"), "LSF_CONFDIR=\n");
    write(&conf.join("lsf.shared"), "Begin Cluster\nClusterName Servers\nbeta (h2)\nEnd Cluster\n");
    write(&conf.join("lsf.cluster.alpha"), HOSTS);
    write(&conf.join("lsf.cluster.beta"), &HOSTS.replace("h1", "h2"));
    write(&conf.join("lsbatch/alpha/configdir/lsb.queues"), "Begin Queue\nQUEUE_NAME = wrong\nEnd Queue\n");
    write(&conf.join("lsbatch/beta/configdir/lsb.queues"), "Begin Queue\nQUEUE_NAME = right\nEnd Queue\n");
    let tree = allot_config::load::layout(&conf);
    assert_eq!(tree.batch_dir, conf.join("lsbatch/beta/configdir"));
    let (config, warnings) = allot_config::load::load_dir(&conf).expect("loads");
    assert_eq!(config.cluster_name(), "beta");
    assert_eq!(config.queues.iter().map(|q| q.name.as_str()).collect::<Vec<_>>(), ["right"]);
    assert_eq!(config.hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(), ["h2"]);
    assert!(warnings.to_string().contains("lsf.cluster.alpha:1:1: warning: this is cluster `beta`"), "{warnings}");
    let _ = std::fs::remove_dir_all(&top);
}
