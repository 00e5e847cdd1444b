//! `--traces RATIO`: the server exports its traces to a sink on loopback that reads each
//! OTLP/HTTP export and answers `200`, so that the bench measures what tracing costs the
//! service (spans recorded, batched, encoded and sent) and not a collector's speed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context;

/// The sink, running on its own threads for the rest of the bench.
pub struct Sink {
    port: u16,
    exports: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

impl Sink {
    /// Listens on a free loopback port.
    pub fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").context("cannot start the trace sink")?;
        let port = listener.local_addr()?.port();
        let (exports, bytes) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let (e, b) = (exports.clone(), bytes.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (e, b) = (e.clone(), b.clone());
                std::thread::spawn(move || drain(stream, &e, &b));
            }
        });
        Ok(Self {
            port,
            exports,
            bytes,
        })
    }

    /// The server's settings to export to the sink, sampling `ratio` of the traces.
    pub fn env(&self, ratio: f64) -> Vec<(String, String)> {
        vec![
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(),
                format!("http://127.0.0.1:{}", self.port),
            ),
            ("OTEL_TRACES_SAMPLER".to_owned(), "traceidratio".to_owned()),
            ("OTEL_TRACES_SAMPLER_ARG".to_owned(), ratio.to_string()),
        ]
    }

    /// What it received so far: exports and bytes.
    pub fn received(&self) -> (u64, u64) {
        (
            self.exports.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

/// `settings` as the server's environment takes them.
pub fn as_env(settings: &[(String, String)]) -> Vec<(&str, &str)> {
    settings
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect()
}

/// Reads requests on one keep-alive connection, answering each `200`, until it closes.
fn drain(stream: TcpStream, exports: &AtomicU64, bytes: &AtomicU64) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0_usize;
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        exports.fetch_add(1, Ordering::Relaxed);
        bytes.fetch_add(length as u64, Ordering::Relaxed);
        let answer =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
        if writer.write_all(answer).is_err() {
            return;
        }
    }
}
