//! `lsf.shared`: the clusters' names, from its Cluster section
//! (`ClusterName` and, ignored, `Servers`), and from its Resource section
//! which resources a job may not reserve ([`not_consumable`]). Its other
//! sections (HostType, HostModel) declare the names LSF's hosts use;
//! allot takes those names as the cluster file writes them, so they are
//! read past in silence.
//!
//! Which cluster this is ([`this_cluster`]): the first that lsf.shared
//! names whose `lsf.cluster.<name>` is there, else the first it names;
//! without lsf.shared, the first cluster file by name.

use super::read::at;
use super::text::{Source, sections, table};
use crate::diag::{Diagnostics, Location};

/// Sections that carry nothing allot needs.
const IGNORED: &[&str] = &["HostType", "HostModel", "Resource"];

/// The cluster names of its Cluster section, in order, each where it is
/// written.
pub fn read(src: &Source<'_>, diags: &mut Diagnostics) -> Vec<(String, Location)> {
    let mut names = Vec::new();
    for section in &sections(src, diags) {
        if section.is("Cluster") {
            let Some(t) = table(section, diags) else { continue };
            if !t.columns.iter().any(|c| c == "CLUSTERNAME") {
                diags.error(t.header.loc(0), "Cluster: expected a `ClusterName` column");
                continue;
            }
            t.warn_unapplied("Cluster", &["ClusterName", "Servers"], diags);
            for row in &t.rows {
                if let Some(name) = row.get(&t, "CLUSTERNAME") {
                    names.push((name.to_string(), at(row.line, name)));
                }
            }
        } else if !IGNORED.iter().any(|s| section.is(s)) {
            diags.warning(at(&section.begin, &section.name), format!("unknown section `{}`, ignored", section.name));
        }
    }
    names
}

/// The resources of the Resource section a job may not ask in `rusage`:
/// Boolean and String ones, and those with CONSUMABLE=N (LSF's default for
/// a site's numeric resource is consumable). A row of another TYPE is an
/// error, where it is written.
pub fn not_consumable(src: &Source<'_>, diags: &mut Diagnostics) -> Vec<String> {
    let mut out = Vec::new();
    for section in sections(src, &mut Diagnostics::default()).iter().filter(|s| s.is("Resource")) {
        let Some(t) = table(section, diags) else { continue };
        for row in &t.rows {
            let Some(name) = row.get(&t, "RESOURCENAME") else {
                diags.error(t.header.loc(0), "Resource: expected a `RESOURCENAME` column");
                break;
            };
            let kind = row.get(&t, "TYPE").map(super::text::unparen).unwrap_or("Numeric").trim();
            let consumable = row.get(&t, "CONSUMABLE").map(super::text::unparen).unwrap_or("").trim();
            match kind.to_ascii_lowercase().as_str() {
                "numeric" if !consumable.eq_ignore_ascii_case("n") => {}
                "numeric" | "boolean" | "string" => out.push(name.to_string()),
                _ => diags.error(
                    at(row.line, kind),
                    format!("Resource `{name}`: TYPE: expected Numeric, Boolean or String, found `{kind}`"),
                ),
            }
        }
    }
    out
}

/// This cluster's name, from lsf.shared's names (`shared`, in order) and
/// the names of the `lsf.cluster.<name>` files there are (`files`).
pub fn this_cluster(shared: &[String], files: &[String]) -> Option<String> {
    shared.iter().find(|n| files.contains(n)).or(shared.first()).cloned().or_else(|| files.iter().min().cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_section_names_the_clusters() {
        let mut d = Diagnostics::default();
        let text = "Begin Cluster\nClusterName  Servers\ncluster1     (hostA hostB)\ncluster2 ()\nEnd Cluster\n\
                    Begin HostType\nTYPENAME\nLINUX86\nEnd HostType\n\
                    Begin Resource\nRESOURCENAME TYPE INTERVAL INCREASING DESCRIPTION\n\
                    mg Boolean () () (Management hosts)\nEnd Resource\n";
        let names = read(&Source { name: "lsf.shared", text }, &mut d);
        assert!(d.0.is_empty(), "{d}");
        let names: Vec<(String, String)> = names.into_iter().map(|(n, l)| (n, l.to_string())).collect();
        assert_eq!(names, [("cluster1".into(), "lsf.shared:3:1".into()), ("cluster2".into(), "lsf.shared:4:1".into())]);
        let mut d = Diagnostics::default();
        read(&Source { name: "lsf.shared", text: "Begin Cluster\nServers\n(a)\nEnd Cluster\n" }, &mut d);
        assert_eq!(d.0[0].to_string(), "lsf.shared:2:1: error: Cluster: expected a `ClusterName` column");
    }

    #[test]
    fn which_cluster_this_is() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(this_cluster(&s(&["mc1", "mc2"]), &s(&["mc2"])), Some("mc2".into()), "the one with its file");
        assert_eq!(this_cluster(&s(&["mc1", "mc2"]), &s(&[])), Some("mc1".into()));
        assert_eq!(this_cluster(&s(&[]), &s(&["zeta", "alpha"])), Some("alpha".into()));
        assert_eq!(this_cluster(&s(&[]), &s(&[])), None);
    }
}
