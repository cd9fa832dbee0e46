//! The agents' mutual TLS: allotd's server side and an agent's client
//! side, from a directory [`crate::keygen`] wrote. Both present a
//! certificate of the site CA and take only one: allotd checks that an
//! agent's certificate names the host it says it is
//! ([`certificate_names`]); an agent checks that the other end's names
//! [`crate::wire::DAEMON_NAME`].

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore, ServerConfig};

use crate::keygen::cert_paths;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn located(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

/// The site CA's certificate, as the roots that are trusted.
fn roots(dir: &Path) -> Result<Arc<RootCertStore>, String> {
    let (ca, _) = cert_paths(dir, "ca");
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(&ca).map_err(|e| located(&ca, e))? {
        roots.add(cert.map_err(|e| located(&ca, e))?).map_err(|e| located(&ca, e))?;
    }
    if roots.is_empty() {
        return Err(located(&ca, "no certificate in it"));
    }
    Ok(Arc::new(roots))
}

/// `name`'s certificate chain and key.
fn identity(dir: &Path, name: &str) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), String> {
    let (cert, key) = cert_paths(dir, name);
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert)
        .map_err(|e| located(&cert, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| located(&cert, e))?;
    if chain.is_empty() {
        return Err(located(&cert, "no certificate in it"));
    }
    let key = PrivateKeyDer::from_pem_file(&key).map_err(|e| located(&key, e))?;
    Ok((chain, key))
}

/// allotd's side: its own certificate, and agents' certificates of the
/// site CA required (a connection without one ends in the handshake).
pub fn server_config(dir: &Path) -> Result<Arc<ServerConfig>, String> {
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(roots(dir)?, provider())
        .build()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let (chain, key) = identity(dir, crate::wire::DAEMON_NAME)?;
    let config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(Arc::new(config))
}

/// An agent's side: `host`'s certificate, and the site CA as the one
/// root (the name asked for is [`crate::wire::DAEMON_NAME`]).
pub fn client_config(dir: &Path, host: &str) -> Result<Arc<ClientConfig>, String> {
    let (chain, key) = identity(dir, host)?;
    let config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots(dir)?)
        .with_client_auth_cert(chain, key)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(Arc::new(config))
}

/// The name an agent asks allotd's certificate for.
pub fn daemon_name() -> ServerName<'static> {
    ServerName::DnsName(rustls::pki_types::DnsName::try_from(crate::wire::DAEMON_NAME).expect("a DNS name").to_owned())
}

/// Whether a (verified) peer certificate names `host`.
pub fn certificate_names(cert: &CertificateDer<'_>, host: &str) -> bool {
    let Ok(cert) = webpki::EndEntityCert::try_from(cert) else { return false };
    let Ok(name) = ServerName::try_from(host) else { return false };
    cert.verify_is_valid_for_subject_name(&name).is_ok()
}
