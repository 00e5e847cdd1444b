//! A webhook receiver on loopback for the delivery tests: records every request (headers
//! and raw body) and answers from a script (status, body, delay), 200 `{}` when the
//! script is empty. It can also hold every answer until the test releases them.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::web::{Bytes, Data};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer};
use serde_json::Value;
use tokio::sync::watch;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    /// Path and query.
    pub path: String,
    /// Header name (lower case) and value pairs.
    pub headers: Vec<(String, String)>,
    /// The raw body.
    pub body: Bytes,
}

impl Received {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// How the receiver answers one request.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Status code.
    pub status: u16,
    /// JSON body.
    pub body: String,
    /// Wait before answering.
    pub delay: Duration,
}

impl Answer {
    /// `status` with `{}` at once.
    pub fn status(status: u16) -> Self {
        Self {
            status,
            body: "{}".into(),
            delay: Duration::ZERO,
        }
    }

    /// 200 with `body`.
    pub fn json(body: &str) -> Self {
        Self {
            status: 200,
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// 200 `{}` after `delay`.
    pub fn after(delay: Duration) -> Self {
        Self {
            status: 200,
            body: "{}".into(),
            delay,
        }
    }
}

#[derive(Default)]
struct Shared {
    received: Mutex<Vec<Received>>,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
    script: Mutex<VecDeque<Answer>>,
    fallback: Mutex<Option<Answer>>,
    held: Hold,
}

/// Whether answers wait for [`Receiver::release`].
struct Hold(watch::Sender<bool>);

impl Default for Hold {
    fn default() -> Self {
        Self(watch::channel(false).0)
    }
}

/// The running receiver.
pub struct Receiver {
    /// `http://127.0.0.1:port`.
    pub base: String,
    shared: Arc<Shared>,
    handle: ServerHandle,
}

impl Receiver {
    /// Starts a receiver on a free loopback port.
    pub fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let data = Data::from(shared.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .default_service(actix_web::web::to(record))
        })
        .workers(2)
        .shutdown_timeout(0)
        .bind(("127.0.0.1", 0))
        .unwrap();
        let port = server.addrs()[0].port();
        let server = server.run();
        let handle = server.handle();
        tokio::spawn(server);
        Self {
            base: format!("http://127.0.0.1:{port}"),
            shared,
            handle,
        }
    }

    /// The URL of `path` on the receiver.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Answers the next requests with `answers`, in order.
    pub fn script(&self, answers: impl IntoIterator<Item = Answer>) {
        self.shared.script.lock().unwrap().extend(answers);
    }

    /// Answers every request not scripted with `answer` (instead of 200 `{}`).
    pub fn always(&self, answer: Answer) {
        *self.shared.fallback.lock().unwrap() = Some(answer);
    }

    /// Holds every answer (those being prepared and those to come) until
    /// [`release`](Self::release): a hook that hangs for as long as the test needs.
    pub fn hold(&self) {
        self.shared.held.0.send_replace(true);
    }

    /// Lets the held answers go (each after its own delay).
    pub fn release(&self) {
        self.shared.held.0.send_replace(false);
    }

    /// What it received so far.
    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    /// Waits (up to `within`) until it has received at least `count` requests; answers
    /// them.
    pub async fn wait_for(&self, count: usize, within: Duration) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let received = self.received();
            if received.len() >= count || tokio::time::Instant::now() >= deadline {
                return received;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The most requests it was answering at the same moment.
    pub fn most_in_flight(&self) -> usize {
        self.shared.most_in_flight.load(Ordering::SeqCst)
    }

    /// Stops it.
    pub async fn stop(&self) {
        self.handle.stop(false).await;
    }
}

async fn record(req: HttpRequest, body: Bytes, shared: Data<Shared>) -> HttpResponse {
    let headers = req
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    shared.received.lock().unwrap().push(Received {
        path: req.uri().to_string(),
        headers,
        body,
    });
    let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    shared.most_in_flight.fetch_max(now, Ordering::SeqCst);
    let scripted = shared.script.lock().unwrap().pop_front();
    let answer = scripted
        .or_else(|| shared.fallback.lock().unwrap().clone())
        .unwrap_or_else(|| Answer::status(200));
    // The sender lives as long as `shared`, so the wait ends only on a release.
    let _ = shared.held.0.subscribe().wait_for(|held| !held).await;
    if !answer.delay.is_zero() {
        tokio::time::sleep(answer.delay).await;
    }
    shared.in_flight.fetch_sub(1, Ordering::SeqCst);
    HttpResponse::build(actix_web::http::StatusCode::from_u16(answer.status).unwrap())
        .content_type("application/json")
        .body(answer.body)
}
