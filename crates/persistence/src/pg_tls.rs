//! Connections to PostgreSQL, over TLS through rustls when the URL asks for it, with
//! libpq's `sslmode` values:
//!
//! | `sslmode` | TLS | server certificate |
//! |---|---|---|
//! | `disable` | never | — |
//! | `prefer` (the default) | when the server offers it | not checked |
//! | `require` | always | not checked |
//! | `verify-ca` | always | signed by a trusted CA |
//! | `verify-full` | always | signed by a trusted CA and naming the host |
//!
//! The trusted CAs are the PEM file named by `sslrootcert=PATH`, else the Mozilla root
//! set (public CAs). tokio-postgres itself knows only the first three modes and checks
//! no certificate, so both parameters are taken out of the URL here and turned into a
//! rustls verifier.

use std::path::PathBuf;
use std::sync::Arc;

use diesel::ConnectionError;
use diesel_async::AsyncPgConnection;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::with_sources;

/// How much TLS a connection insists on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<Self, String> {
        Ok(match value {
            "disable" => Self::Disable,
            "allow" | "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            other => {
                return Err(format!(
                    "unknown sslmode {other:?}: expected disable, prefer, require, verify-ca \
                     or verify-full"
                ));
            }
        })
    }

    /// The nearest mode tokio-postgres knows (the rest is the verifier's job).
    fn driver_value(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Prefer => "prefer",
            Self::Require | Self::VerifyCa | Self::VerifyFull => "require",
        }
    }
}

/// How to open connections to one PostgreSQL URL; cheap to clone.
#[derive(Clone)]
pub(crate) struct PgConnector {
    /// The URL as tokio-postgres reads it.
    driver_url: String,
    /// `None` for `sslmode=disable`.
    tls: Option<MakeRustlsConnect>,
}

impl PgConnector {
    /// Reads the TLS settings of `url` (and the CA file it names), so that a bad one is
    /// reported when the pool is built, not at the first request.
    pub(crate) fn new(url: &str) -> Result<Self, String> {
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut mode = SslMode::Prefer;
        let mut root_cert = None;
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "sslmode" => mode = SslMode::parse(&percent_decode(value)?)?,
                "sslrootcert" => root_cert = Some(PathBuf::from(percent_decode(value)?)),
                _ => kept.push(pair),
            }
        }
        let driver_mode = format!("sslmode={}", mode.driver_value());
        kept.push(&driver_mode);
        let driver_url = format!("{base}?{}", kept.join("&"));
        let tls = match mode {
            SslMode::Disable => None,
            _ => Some(MakeRustlsConnect::new(client_config(mode, root_cert)?)),
        };
        Ok(Self { driver_url, tls })
    }

    /// Opens one connection.
    pub(crate) async fn connect(&self) -> Result<AsyncPgConnection, ConnectionError> {
        let bad = |e: tokio_postgres::Error| ConnectionError::BadConnection(with_sources(&e));
        match &self.tls {
            None => {
                let (client, conn) =
                    tokio_postgres::connect(&self.driver_url, tokio_postgres::NoTls)
                        .await
                        .map_err(bad)?;
                AsyncPgConnection::try_from_client_and_connection(client, conn).await
            }
            Some(tls) => {
                let (client, conn) = tokio_postgres::connect(&self.driver_url, tls.clone())
                    .await
                    .map_err(bad)?;
                AsyncPgConnection::try_from_client_and_connection(client, conn).await
            }
        }
    }
}

/// The rustls settings of `mode`, trusting the CAs in `root_cert` (else the Mozilla set).
fn client_config(mode: SslMode, root_cert: Option<PathBuf>) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?;
    let verifier: Arc<dyn ServerCertVerifier> = match mode {
        SslMode::Disable | SslMode::Prefer | SslMode::Require => {
            Arc::new(EncryptOnly(Arc::clone(&provider)))
        }
        SslMode::VerifyCa | SslMode::VerifyFull => {
            let roots = Arc::new(trusted_roots(root_cert)?);
            let full = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| format!("cannot set up TLS verification: {e}"))?;
            if mode == SslMode::VerifyFull {
                full
            } else {
                Arc::new(AnyName(full))
            }
        }
    };
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// The CA certificates of the PEM file `path`, or the Mozilla root set.
fn trusted_roots(path: Option<PathBuf>) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    let Some(path) = path else {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        return Ok(roots);
    };
    let shown = path.display();
    let certs = CertificateDer::pem_file_iter(&path)
        .map_err(|e| format!("cannot read sslrootcert {shown}: {e}"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot read sslrootcert {shown}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("sslrootcert {shown} holds no certificate"));
    }
    for cert in certs {
        roots
            .add(cert)
            .map_err(|e| format!("sslrootcert {shown}: {e}"))?;
    }
    Ok(roots)
}

/// `%XX` escapes of a URL parameter value, strictly: a malformed escape is an error (the
/// `percent-encoding` crate would keep it as text, and a typo in `sslrootcert` would then
/// surface as a missing file).
fn percent_decode(value: &str) -> Result<String, String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = value
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad %-escape in database URL parameter {value:?}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("database URL parameter {value:?} is not UTF-8"))
}

/// `require` and `prefer`: the connection is encrypted, and the handshake is checked,
/// but any certificate is accepted (as libpq does; use `verify-full` against a
/// man-in-the-middle).
#[derive(Debug)]
struct EncryptOnly(Arc<CryptoProvider>);

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted CA; the name in it is not compared with
/// the host.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_parameters_are_taken_out_of_the_url() {
        let plain = PgConnector::new("postgres://u@h/db").unwrap();
        assert_eq!(plain.driver_url, "postgres://u@h/db?sslmode=prefer");
        assert!(plain.tls.is_some(), "prefer tries TLS");
        let off = PgConnector::new("postgres://u@h/db?sslmode=disable&application_name=m").unwrap();
        assert_eq!(
            off.driver_url,
            "postgres://u@h/db?application_name=m&sslmode=disable"
        );
        assert!(off.tls.is_none());
        let full = PgConnector::new("postgres://u@h/db?sslmode=verify-full").unwrap();
        assert_eq!(full.driver_url, "postgres://u@h/db?sslmode=require");
    }

    #[test]
    fn bad_tls_parameters_are_refused_with_a_reason() {
        let Err(mode) = PgConnector::new("postgres://u@h/db?sslmode=strict") else {
            unreachable!("sslmode=strict was accepted");
        };
        assert!(mode.contains("unknown sslmode \"strict\""), "{mode}");
        let Err(missing) =
            PgConnector::new("postgres://u@h/db?sslmode=verify-ca&sslrootcert=%2Fnope%2Fca.pem")
        else {
            unreachable!("a missing CA file was accepted");
        };
        assert!(
            missing.contains("cannot read sslrootcert /nope/ca.pem"),
            "{missing}"
        );
        let Err(escape) = PgConnector::new("postgres://u@h/db?sslrootcert=%zz") else {
            unreachable!("a bad escape was accepted");
        };
        assert!(escape.contains("bad %-escape"), "{escape}");
    }
}
