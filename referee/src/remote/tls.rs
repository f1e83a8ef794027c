//! TLS for a listener that is not on loopback: the referee's certificate (a
//! self-signed one made for the run, or the organiser's `--cert`/`--key`),
//! its SHA-256 fingerprint, and the connector's side, which trusts exactly
//! the certificate with the fingerprint it was given (`--fingerprint`) and no
//! certificate authority.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

/// The name the referee's certificate is made for and the connector asks for
/// (only the fingerprint is checked).
pub const SERVER_NAME: &str = "schmier-referee";

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The SHA-256 of a certificate's DER, as 64 lowercase hex digits.
pub fn fingerprint(cert: &CertificateDer<'_>) -> String {
    super::token::hex(ring::digest::digest(&ring::digest::SHA256, cert.as_ref()).as_ref())
}

/// A fingerprint as a person may write it (`AB:CD:...` or `abcd...`), made
/// plain; `Err` for anything that is not 32 bytes of hex.
pub fn parse_fingerprint(text: &str) -> anyhow::Result<String> {
    let plain: String = text
        .trim()
        .trim_start_matches("sha256:")
        .chars()
        .filter(|c| *c != ':')
        .collect::<String>()
        .to_ascii_lowercase();
    if plain.len() != 64 || !plain.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("--fingerprint {text:?}: expected the SHA-256 the referee printed (64 hex digits)");
    }
    Ok(plain)
}

/// The referee's TLS side: its configuration and its certificate's fingerprint.
pub struct ServerTls {
    pub config: Arc<rustls::ServerConfig>,
    pub fingerprint: String,
}

impl ServerTls {
    /// From `--cert`/`--key` (PEM) if given, else a self-signed certificate
    /// made now for this run.
    pub fn new(cert_key: Option<(&Path, &Path)>) -> anyhow::Result<ServerTls> {
        let (certs, key) = match cert_key {
            Some((cert, key)) => load(cert, key)?,
            None => {
                let made = rcgen::generate_simple_self_signed(vec![SERVER_NAME.to_owned()])
                    .context("failed to make the run's TLS certificate")?;
                let key = PrivatePkcs8KeyDer::from(made.key_pair.serialize_der());
                (vec![made.cert.der().clone()], PrivateKeyDer::Pkcs8(key))
            }
        };
        let fingerprint = fingerprint(&certs[0]);
        let config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .context("TLS protocol versions")?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .with_context(|| match cert_key {
                Some((cert, key)) => format!(
                    "--cert {} and --key {}: the TLS certificate and key do not go together",
                    cert.display(),
                    key.display()
                ),
                None => "the run's TLS certificate and key do not go together".to_owned(),
            })?;
        Ok(ServerTls {
            config: Arc::new(config),
            fingerprint,
        })
    }
}

fn load(
    cert: &Path,
    key: &Path,
) -> anyhow::Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| anyhow::anyhow!("--cert {}: {e}", cert.display()))?;
    if certs.is_empty() {
        bail!("--cert {}: no certificate in it", cert.display());
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| anyhow::anyhow!("--key {}: {e}", key.display()))?;
    Ok((certs, key))
}

/// The connector's TLS configuration: trusts the one certificate whose
/// SHA-256 is `pinned`.
pub fn client_config(pinned: &str) -> anyhow::Result<Arc<rustls::ClientConfig>> {
    let provider = provider();
    let verifier = Pinned {
        fingerprint: pinned.to_owned(),
        provider: provider.clone(),
    };
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(Arc::new(config))
}

pub fn server_name() -> ServerName<'static> {
    ServerName::try_from(SERVER_NAME).expect("a valid name")
}

/// Trusts the certificate with one fingerprint; its signatures are still
/// checked, so only the holder of its key can complete the handshake.
#[derive(Debug)]
struct Pinned {
    fingerprint: String,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let seen = fingerprint(end_entity);
        // A fingerprint is public: a plain comparison.
        match seen == self.fingerprint {
            true => Ok(ServerCertVerified::assertion()),
            false => Err(rustls::Error::General(format!(
                "the referee's certificate has fingerprint {seen}, not the one given \
                 with --fingerprint"
            ))),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
