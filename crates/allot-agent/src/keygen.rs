//! `allot keygen`: a site's certificates for the agents' mutual TLS. One
//! site CA signs allotd's certificate (named [`DAEMON_NAME`], and the
//! names of the machines allotd runs on) and one certificate per host,
//! named by the host's name as the configuration writes it. allotd takes
//! an agent only for a configured host its certificate names; an agent
//! takes work only from a certificate named [`DAEMON_NAME`], which
//! `keygen` gives to no host.
//!
//! The files, in one directory: `ca.pem` (every machine), `ca-key.pem`
//! (kept where keys are made, nowhere else), `allotd.pem` with
//! `allotd-key.pem`, and `HOST.pem` with `HOST-key.pem` for each host.
//! Keys are written mode 0600. Run again with the same directory, it
//! issues what is missing under the CA already there.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
};

use crate::wire::DAEMON_NAME;

#[derive(Debug, thiserror::Error)]
pub enum KeygenError {
    #[error("{path}: {source}")]
    File { path: String, source: std::io::Error },
    #[error("`{0}` cannot be a host's name: it is allotd's")]
    Reserved(String),
    #[error("`{0}` is not a host name (letters, digits, `-` and `.`)")]
    BadName(String),
    #[error("{0}")]
    Cert(#[from] rcgen::Error),
}

/// The site CA's parameters: the same each time, so a CA read back from
/// its key signs as the one that made `ca.pem`.
fn ca_params() -> Result<CertificateParams, rcgen::Error> {
    let mut p = CertificateParams::new(Vec::<String>::new())?;
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(DnType::CommonName, "allot site CA");
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    Ok(p)
}

/// Whether `name` can be a certificate's DNS name (what the configuration
/// calls hosts: `host1`, `node-07.cluster`).
pub fn valid_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// Where a certificate and its key are, in a keygen directory.
pub fn cert_paths(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    (dir.join(format!("{name}.pem")), dir.join(format!("{name}-key.pem")))
}

/// What [`keygen`] wrote.
#[derive(Debug, Default)]
pub struct Made {
    pub files: Vec<PathBuf>,
}

/// Makes (or completes) a site's certificates in `dir`: the CA if it is
/// not there, allotd's (also naming `daemon_hosts`) and each of `hosts`'
/// when missing.
pub fn keygen(dir: &Path, daemon_hosts: &[String], hosts: &[String]) -> Result<Made, KeygenError> {
    for h in hosts.iter().chain(daemon_hosts) {
        if h == DAEMON_NAME {
            return Err(KeygenError::Reserved(h.clone()));
        }
        if !valid_host_name(h) {
            return Err(KeygenError::BadName(h.clone()));
        }
    }
    let file_err = |p: &Path| {
        let path = p.display().to_string();
        move |source| KeygenError::File { path, source }
    };
    std::fs::create_dir_all(dir).map_err(file_err(dir))?;
    let mut made = Made::default();
    let (ca_pem, ca_key_pem) = cert_paths(dir, "ca");
    let ca_key = if ca_key_pem.exists() {
        let pem = std::fs::read_to_string(&ca_key_pem).map_err(file_err(&ca_key_pem))?;
        KeyPair::from_pem(&pem)?
    } else {
        let key = KeyPair::generate()?;
        let cert = ca_params()?.self_signed(&key)?;
        write(&ca_key_pem, &key.serialize_pem(), true, &mut made)?;
        write(&ca_pem, &cert.pem(), false, &mut made)?;
        key
    };
    let issuer = Issuer::new(ca_params()?, ca_key);
    let mut daemon_names = vec![DAEMON_NAME.to_string()];
    daemon_names.extend(daemon_hosts.iter().cloned());
    let wanted = std::iter::once((DAEMON_NAME.to_string(), daemon_names))
        .chain(hosts.iter().map(|h| (h.clone(), vec![h.clone()])));
    for (file, names) in wanted {
        let (cert_path, key_path) = cert_paths(dir, &file);
        if cert_path.exists() && key_path.exists() {
            continue;
        }
        let mut p = CertificateParams::new(names)?;
        p.distinguished_name.push(DnType::CommonName, file.clone());
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
        p.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
        let key = KeyPair::generate()?;
        let cert = p.signed_by(&key, &issuer)?;
        write(&key_path, &key.serialize_pem(), true, &mut made)?;
        write(&cert_path, &cert.pem(), false, &mut made)?;
    }
    Ok(made)
}

/// Writes a file whole; a key, mode 0600 from its creation.
fn write(path: &Path, text: &str, secret: bool, made: &mut Made) -> Result<(), KeygenError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("tmp");
    let err = |source| KeygenError::File { path: path.display().to_string(), source };
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if secret { 0o600 } else { 0o644 })
        .open(&tmp)
        .map_err(err)?;
    f.write_all(text.as_bytes()).and_then(|()| f.sync_all()).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)?;
    made.files.push(path.to_path_buf());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_are_checked_and_allotd_is_reserved() {
        assert!(valid_host_name("host1") && valid_host_name("node-07.cluster"));
        assert!(!valid_host_name("") && !valid_host_name("a_b") && !valid_host_name("-a") && !valid_host_name("a..b"));
        let dir = tempfile::tempdir().expect("dir");
        assert!(matches!(keygen(dir.path(), &[], &["allotd".into()]), Err(KeygenError::Reserved(_))));
        assert!(matches!(keygen(dir.path(), &[], &["a b".into()]), Err(KeygenError::BadName(_))));
        assert!(!dir.path().join("ca.pem").exists(), "nothing made on a bad name");
    }

    #[test]
    fn a_second_run_completes_under_the_same_ca_and_keys_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("dir");
        let made = keygen(dir.path(), &[], &["host1".into()]).expect("made");
        assert_eq!(made.files.len(), 6, "{made:?}");
        let ca = std::fs::read(dir.path().join("ca.pem")).expect("ca");
        let again = keygen(dir.path(), &[], &["host1".into(), "host2".into()]).expect("made");
        assert_eq!(again.files.len(), 2, "only host2's: {again:?}");
        assert_eq!(std::fs::read(dir.path().join("ca.pem")).expect("ca"), ca, "the same CA");
        for key in ["ca-key.pem", "allotd-key.pem", "host1-key.pem", "host2-key.pem"] {
            let mode = std::fs::metadata(dir.path().join(key)).expect("key").permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{key}");
        }
    }
}
