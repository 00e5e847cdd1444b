//! The `create-task-hooked` scenario's other half: a webhook receiver on loopback that
//! counts deliveries, and the post-hook pointing at it, so that the bench shows how many
//! deliveries per second one instance makes while it keeps serving requests.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use muster_client::Client as MusterClient;
use muster_client::types::webhooks::CreateWebhookBody;
use uuid::Uuid;

use super::admin::admin;
use super::client::{Call, Client};
use super::report::DeliveryFigures;
use super::server::{ADMIN_EMAIL, ADMIN_PASSWORD};
use super::sign::Credentials;

/// Counts what it receives, answering 200 at once.
#[derive(Debug, Default)]
struct Counts {
    received: AtomicU64,
    last: Mutex<Option<Instant>>,
}

/// The receiver, serving until dropped.
#[derive(Debug)]
pub struct Receiver {
    addr: SocketAddr,
    counts: Arc<Counts>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    /// Listens on a free loopback port.
    pub async fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let counts = Arc::new(Counts::default());
        let shared = Arc::clone(&counts);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let counts = Arc::clone(&shared);
                tokio::spawn(async move {
                    let service = service_fn(move |_request| {
                        counts.received.fetch_add(1, Ordering::Relaxed);
                        *counts.last.lock().unwrap_or_else(PoisonError::into_inner) =
                            Some(Instant::now());
                        async {
                            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"{}"))))
                        }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(Self { addr, counts, task })
    }

    /// Deliveries received so far.
    pub fn received(&self) -> u64 {
        self.counts.received.load(Ordering::Relaxed)
    }

    /// Waits until no delivery has arrived for `quiet` (or `limit` passed); answers when
    /// the last one arrived.
    pub async fn drained(&self, quiet: Duration, limit: Duration) -> Option<Instant> {
        let deadline = Instant::now() + limit;
        loop {
            let last = *self
                .counts
                .last
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let idle = last.is_none_or(|at| at.elapsed() >= quiet);
            if idle || Instant::now() >= deadline {
                return last;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Registers a post-hook on `task.created` pointing at `receiver` as the bench admin;
/// answers its id and the signed-in admin (to delete it afterwards).
pub async fn register(
    server: SocketAddr,
    receiver: &Receiver,
) -> anyhow::Result<(Uuid, MusterClient)> {
    let admin = admin(server).await?;
    let hook = CreateWebhookBody {
        name: "bench".to_owned(),
        url: format!("http://{}/hook", receiver.addr),
        events: vec!["task.created".to_owned()],
        secret: Some("bench-secret".to_owned()),
        ..Default::default()
    };
    let created = admin.create_webhook(&hook).await?;
    Ok((created.id, admin))
}

/// Signs the bench admin in: its access token.
pub async fn admin_token(client: &mut Client) -> anyhow::Result<String> {
    let login = Call::public_post(
        "/auth/login",
        serde_json::json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}).to_string(),
    );
    let answer = client.send(&login, &Credentials::none()).await?;
    anyhow::ensure!(
        answer.status == StatusCode::OK,
        "{}",
        answer.describe(&login)
    );
    let body: serde_json::Value = serde_json::from_slice(&answer.body)?;
    Ok(body["accessToken"]
        .as_str()
        .context("the login answer has no accessToken")?
        .to_owned())
}

/// A receiver with its hook registered, for one run of the scenario.
#[derive(Debug)]
pub struct Hooked {
    receiver: Receiver,
    hook: Uuid,
    admin: MusterClient,
    started: Instant,
}

impl Hooked {
    /// Starts the receiver and registers the hook; the load starts now.
    pub async fn start(server: SocketAddr) -> anyhow::Result<Self> {
        let receiver = Receiver::start().await?;
        let (hook, admin) = register(server, &receiver).await?;
        Ok(Self {
            receiver,
            hook,
            admin,
            started: Instant::now(),
        })
    }

    /// Once the load ended: waits for the backlog to drain (2 s without a delivery, at
    /// most 5 minutes), deletes the hook, and answers the figures.
    pub async fn finish(self) -> anyhow::Result<DeliveryFigures> {
        let during = self.receiver.received();
        let load_time = self.started.elapsed();
        let last = self
            .receiver
            .drained(Duration::from_secs(2), Duration::from_mins(5))
            .await;
        let total = self.receiver.received();
        let drain = last.map_or(Duration::ZERO, |at| {
            at.saturating_duration_since(self.started)
        });
        // Deletes the hook (and whatever it had not delivered yet).
        self.admin.delete_webhook(self.hook).await?;
        Ok(DeliveryFigures {
            during,
            load_time,
            total,
            drain,
        })
    }
}
