//! The fake provider: a raw TCP listener on `127.0.0.1:0` that records each request and
//! answers the canned HTTP/1.1 response of the first route whose prefix the path has.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use muster_outbound::oauth::DEFAULT_SCOPES;
use muster_outbound::{HttpIdentityProvider, OAuthProviderConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::SECRET;

/// One request as the fake provider saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Recorded {
    pub fn form(&self) -> HashMap<String, String> {
        form_urlencoded::parse(self.body.as_bytes())
            .into_owned()
            .collect()
    }
}

/// A canned answer: status and body, for the paths starting with a prefix.
pub type Route = (&'static str, u16, String);

pub struct Fake {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Recorded>>>,
}

impl Fake {
    pub async fn start(routes: Vec<Route>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (routes, log) = (Arc::new(routes), Arc::clone(&seen));
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(answer(stream, Arc::clone(&routes), Arc::clone(&log)));
            }
        });
        Self { addr, seen }
    }

    pub fn config(&self) -> OAuthProviderConfig {
        let base = format!("http://{}", self.addr);
        OAuthProviderConfig {
            authorize_url: format!("{base}/authorize"),
            token_url: format!("{base}/token"),
            userinfo_url: format!("{base}/userinfo"),
            client_id: "client-id.apps".to_owned(),
            client_secret: SECRET.to_owned(),
            redirect_url: "https://muster.example/auth/callback?x=1".to_owned(),
            scopes: DEFAULT_SCOPES.to_owned(),
        }
    }

    pub fn provider(&self) -> HttpIdentityProvider {
        HttpIdentityProvider::new(self.config()).unwrap()
    }

    pub fn seen(&self) -> Vec<Recorded> {
        self.seen.lock().unwrap().clone()
    }
}

async fn answer(mut stream: TcpStream, routes: Arc<Vec<Route>>, log: Arc<Mutex<Vec<Recorded>>>) {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 4096];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap().split(' ');
    let (method, path) = (request_line.next().unwrap(), request_line.next().unwrap());
    let headers: HashMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .map_or(0, |n| n.parse().unwrap());
    while buffer.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    let body = String::from_utf8_lossy(&buffer[head_end..head_end + length]).into_owned();
    log.lock().unwrap().push(Recorded {
        method: method.to_owned(),
        path: path.to_owned(),
        headers,
        body,
    });
    let Some((_, status, body)) = routes.iter().find(|(prefix, ..)| path.starts_with(prefix))
    else {
        return; // no route: hang up without an answer
    };
    if *status == 0 {
        // Never answer: for the timeout.
        tokio::time::sleep(Duration::from_secs(60)).await;
        return;
    }
    let response = format!(
        "HTTP/1.1 {status} Canned\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}
