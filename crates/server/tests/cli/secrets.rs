//! No secret is ever written down: a whole run of the real binary that uses passwords,
//! refresh and access tokens, an API key, TOTP recovery codes and an agent secret, with
//! debug logs on, leaves none of them in the logs, in the audit log or in any answer
//! after the one that created them.

use std::process::Stdio;

use muster_auth::signing::{canonical_message, sign};
use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};

use crate::shutdown::start_with;
use crate::{Scratch, muster, stderr};

const PASSWORD: &str = "first secret password";
const NEW_PASSWORD: &str = "second secret password";

struct Run {
    client: Client,
    base: String,
}

impl Run {
    async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, String) {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        (response.status(), response.text().await.unwrap())
    }

    async fn json(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Value {
        let (status, text) = self.call(method, path, token, body).await;
        assert!(status.is_success(), "{path}: {status} {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    async fn signed_get(&self, agent: &str, secret: &str, path: &str) -> String {
        let ts = time::OffsetDateTime::now_utc().unix_timestamp().to_string();
        let nonce = uuid::Uuid::now_v7().to_string();
        let signature = sign(secret, &canonical_message("GET", path, &ts, &nonce, b""));
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .header("X-Agent-ID", agent)
            .header("X-Timestamp", ts)
            .header("X-Nonce", nonce)
            .header("X-Signature", signature)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success());
        response.text().await.unwrap()
    }
}

fn s(value: &Value, key: &str) -> String {
    value[key].as_str().expect(key).to_owned()
}

// One story from the first login to the last read: splitting it would hide what it proves.
#[allow(clippy::too_many_lines)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_logs_events_or_later_answers() {
    let scratch = Scratch::new();
    let url = scratch.sqlite_url();
    let out = muster()
        .args([
            "bootstrap",
            "--org-name",
            "Acme",
            "--admin-email",
            "admin@example.com",
        ])
        .args(["--database-url", &url])
        .env("MUSTER_ADMIN_PASSWORD", PASSWORD)
        .env("MUSTER_LOG", "debug")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut logs = stderr(&out);
    let org: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (agent, agent_secret) = (s(&org["hrAgent"], "agentId"), s(&org["hrAgent"], "secret"));

    let log_file = scratch.0.join("serve.log");
    let file = std::fs::File::create(&log_file).unwrap();
    let server = start_with(
        &scratch,
        &[("MUSTER_LOG", "debug"), ("MUSTER_LOG_FORMAT", "json")],
        Stdio::from(file),
    );
    let run = Run {
        client: {
            // reqwest's TLS (turned on by muster-client) needs a crypto provider.
            let _ = rustls::crypto::ring::default_provider().install_default();
            Client::new()
        },
        base: format!("http://127.0.0.1:{}", server.port),
    };
    let login_body = json!({"email": "admin@example.com", "password": PASSWORD});
    // A failed login and a failed second factor are logged and audited too.
    run.call(
        Method::POST,
        "/auth/login",
        None,
        Some(json!({"email": "admin@example.com", "password": "wrong secret password"})),
    )
    .await;
    let login = run
        .json(Method::POST, "/auth/login", None, Some(login_body))
        .await;
    let (access, refresh) = (s(&login, "accessToken"), s(&login, "refreshToken"));
    let rotated = run
        .json(
            Method::POST,
            "/auth/refresh",
            None,
            Some(json!({"refreshToken": refresh})),
        )
        .await;
    let (access2, refresh2) = (s(&rotated, "accessToken"), s(&rotated, "refreshToken"));
    let key = run
        .json(
            Method::POST,
            "/api-keys",
            Some(&access2),
            Some(json!({"name": "ci", "scopes": ["write"]})),
        )
        .await;
    let api_key = s(&key, "secret");
    run.json(Method::GET, "/tasks", Some(&api_key), None).await;
    run.json(
        Method::POST,
        "/tasks",
        Some(&api_key),
        Some(json!({"title": "via key"})),
    )
    .await;
    let setup = run
        .json(
            Method::POST,
            "/auth/totp/setup",
            Some(&access2),
            Some(json!({"password": PASSWORD})),
        )
        .await;
    let recovery: Vec<String> = setup["recoveryCodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    let qr = s(&setup, "qrCode");
    run.call(
        Method::POST,
        "/auth/totp/verify",
        Some(&access2),
        Some(json!({"code": "000000"})),
    )
    .await;
    run.call(
        Method::POST,
        "/auth/password",
        Some(&access2),
        Some(json!({"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD})),
    )
    .await;
    let relogin = run
        .json(
            Method::POST,
            "/auth/login",
            None,
            Some(json!({"email": "admin@example.com", "password": NEW_PASSWORD})),
        )
        .await;
    let access3 = s(&relogin, "accessToken");

    // What can be read back later.
    let mut later = String::new();
    later += &run
        .signed_get(&agent, &agent_secret, "/events?limit=200")
        .await;
    later += &run
        .call(Method::GET, "/api-keys", Some(&access3), None)
        .await
        .1;
    later += &run
        .call(
            Method::GET,
            &format!("/api-keys/{}", s(&key, "id")),
            Some(&access3),
            None,
        )
        .await
        .1;
    later += &run
        .call(Method::GET, "/auth/me", Some(&access3), None)
        .await
        .1;
    assert!(
        later.contains("api_key.created") && later.contains("user.login_failed"),
        "{later}"
    );

    drop(server);
    logs += &std::fs::read_to_string(&log_file).unwrap();
    assert!(
        logs.contains("/auth/login"),
        "debug request logs were captured"
    );
    let mut secrets = vec![
        PASSWORD.to_owned(),
        NEW_PASSWORD.to_owned(),
        access,
        refresh,
        access2,
        refresh2,
        access3,
        api_key,
        agent_secret,
        qr,
    ];
    secrets.extend(recovery);
    for secret in &secrets {
        assert!(
            !logs.contains(secret.as_str()),
            "a secret is in the logs: {}...",
            &secret[..8]
        );
        assert!(
            !later.contains(secret.as_str()),
            "a secret is readable later: {}...",
            &secret[..8]
        );
    }
    assert!(!later.contains("$argon2"), "a password hash is readable");
}
