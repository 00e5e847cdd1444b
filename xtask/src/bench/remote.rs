//! The `remote-push` scenario's set-up: a remote A2A agent on loopback (it serves its
//! card and takes hand-overs), registered with `POST /agents/remote`, and one task per
//! worker handed to it. The load is then the agent's pushes about those tasks, each
//! moving its task (`working` <-> `input-required`: `in_progress` <-> `blocked`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::client::{Call, Client};
use super::hooks::admin_token;
use super::scenario::{OwnTask, RemotePush};
use super::sign::Credentials;

/// The fake agent: its card on `GET`, hand-overs recorded on `POST`.
struct Agent {
    addr: SocketAddr,
    handed: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Agent {
    async fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let handed = Arc::new(Mutex::new(Vec::new()));
        let card = json!({
            "name": "Bench remote agent",
            "description": "Takes tasks for the remote-push scenario",
            "version": "1.0.0",
            "supportedInterfaces": [{"url": format!("http://{addr}/rpc"),
                                     "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"pushNotifications": true},
            "skills": [{"id": "bench", "name": "Bench", "description": "", "tags": []}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"]
        })
        .to_string();
        let shared = Arc::clone(&handed);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (handed, card) = (Arc::clone(&shared), card.clone());
                tokio::spawn(async move {
                    let service = service_fn(
                        move |request: hyper::Request<hyper::body::Incoming>| {
                            let (handed, card) = (Arc::clone(&handed), card.clone());
                            async move {
                                if request.method() == Method::GET {
                                    return Ok::<_, Infallible>(Response::new(Full::new(
                                        Bytes::from(card),
                                    )));
                                }
                                let body = request
                                    .into_body()
                                    .collect()
                                    .await
                                    .map(http_body_util::Collected::to_bytes)
                                    .unwrap_or_default();
                                if let Ok(sent) = serde_json::from_slice::<Value>(&body) {
                                    handed
                                        .lock()
                                        .unwrap_or_else(PoisonError::into_inner)
                                        .push(sent);
                                }
                                let answer = r#"{"jsonrpc":"2.0","id":"bench","result":{"task":{"id":"r","contextId":"r","status":{"state":"TASK_STATE_SUBMITTED"}}}}"#;
                                Ok(Response::new(Full::new(Bytes::from_static(
                                    answer.as_bytes(),
                                ))))
                            }
                        },
                    );
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(Self { addr, handed, task })
    }

    fn handed(&self) -> Vec<Value> {
        self.handed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The prepared scenario: the agent (kept serving) and each worker's task with the push
/// URL and token it was handed over with.
pub struct Prepared {
    _agent: Agent,
    /// One per worker.
    pub tasks: Vec<OwnTask>,
}

/// Registers the agent, hands it `count` tasks (created assigned to it, signed as the
/// seeded agents) and waits until every hand-over arrived.
pub async fn prepare(
    server: SocketAddr,
    agents: &[Credentials],
    count: usize,
) -> anyhow::Result<Prepared> {
    let agent = Agent::start().await?;
    let mut client = Client::new(server);
    let token = admin_token(&mut client).await?;
    let register = Call::bearer(
        Method::POST,
        "/agents/remote",
        json!({"cardUrl": format!("http://{}/card", agent.addr),
               "callbackUrl": format!("http://{server}")})
        .to_string(),
        &token,
    );
    let answer = client.send(&register, &Credentials::none()).await?;
    anyhow::ensure!(
        answer.status == StatusCode::OK,
        "{}",
        answer.describe(&register)
    );
    let registered: Value = serde_json::from_slice(&answer.body)?;
    let remote = registered["data"]["id"]
        .as_str()
        .context("the registered agent has no id")?
        .to_owned();
    for n in 0..count {
        let create = Call::post(
            "/tasks".to_owned(),
            json!({"title": format!("Remote bench task {n}"), "assigneeId": remote}).to_string(),
        );
        let answer = client.send(&create, &agents[n % agents.len()]).await?;
        anyhow::ensure!(answer.status.is_success(), "{}", answer.describe(&create));
    }
    let deadline = Instant::now() + Duration::from_mins(1);
    while agent.handed().len() < count {
        anyhow::ensure!(
            Instant::now() < deadline,
            "only {} of {count} tasks were handed over within 60 s",
            agent.handed().len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let tasks = agent
        .handed()
        .iter()
        .map(|sent| {
            let config = &sent["params"]["configuration"]["taskPushNotificationConfig"];
            let url = config["url"]
                .as_str()
                .context("a hand-over without a push URL")?;
            let path = url
                .strip_prefix(&format!("http://{server}"))
                .context("a push URL on another server")?;
            Ok(OwnTask {
                id: sent["params"]["message"]["metadata"]["musterTaskId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                // The task is in todo: the first push reports `working`.
                blocked: true,
                push: Some(RemotePush {
                    path: path.to_owned(),
                    token: config["token"].as_str().unwrap_or_default().to_owned(),
                }),
                run: None,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Prepared {
        _agent: agent,
        tasks,
    })
}
