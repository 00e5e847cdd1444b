//! DNS rebinding and other sites' pages (decision D-105): a page on a name that resolves
//! to this server sends its own name as `Host`, and a page of another site sends its
//! `Origin`. Where no credential is needed (auth modes `none` and `local`) every route
//! answers only the server's own names and origins; `/mcp` and the dashboard do so in
//! every mode. Refusals are `403` and change nothing.

use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};

use crate::a2a::task_count;
use crate::helpers::{AppSettings, EdgeSettings, Reply, TestApp, assert_error, send};

/// What the MCP conformance suite's rebinding probe sends, and a tool call that writes.
fn mcp_messages() -> [Value; 2] {
    [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "rebinding-page", "version": "1.0.0"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "create_task", "arguments": {"title": "planted through MCP"}}}),
    ]
}

fn mcp(app: &TestApp, message: &Value) -> RequestBuilder {
    app.anonymous(Method::POST, "/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(message.to_string())
}

fn create(app: &TestApp, title: &str) -> RequestBuilder {
    app.anonymous(Method::POST, "/tasks")
        .json(&json!({"title": title}))
}

/// The port the test server listens on.
fn port(app: &TestApp) -> &str {
    app.base.rsplit(':').next().unwrap()
}

#[track_caller]
fn refused(reply: &Reply, part: &str) {
    assert_error(reply, 403, part);
}

mod none_mode {
    use super::*;

    api_tests!(with crate::auth_modes::none_settings();
        a_rebinding_page_creates_nothing_through_mcp_or_rest,
        a_page_of_another_origin_creates_nothing,
        loopback_names_and_the_probes_are_served,
    );

    async fn a_rebinding_page_creates_nothing_through_mcp_or_rest(app: &TestApp) {
        let before = task_count(app).await;
        for message in mcp_messages() {
            let reply = send(
                mcp(app, &message)
                    .header("host", "evil.example")
                    .header("origin", "http://evil.example"),
            )
            .await;
            refused(
                &reply,
                "Host evil.example is not a name this server answers to",
            );
        }
        let reply = send(
            create(app, "planted through REST")
                .header("host", "evil.example")
                .header("origin", "http://evil.example"),
        )
        .await;
        refused(&reply, "Host evil.example is not a name");
        // The Host alone decides: a request with no Origin (a form, an older browser).
        let reply = send(create(app, "planted").header("host", "evil.example:8080")).await;
        refused(&reply, "Host evil.example:8080 is not a name");
        // Reading is refused too: the page must not learn the tasks either.
        let reply = send(
            app.anonymous(Method::GET, "/tasks")
                .header("host", "evil.example"),
        )
        .await;
        refused(&reply, "Host evil.example");
        // A Host that is not even a name.
        let reply = send(create(app, "planted").header("host", "evil.example/x")).await;
        refused(&reply, "not a plain host[:port]");
        assert_eq!(task_count(app).await, before);
    }

    async fn a_page_of_another_origin_creates_nothing(app: &TestApp) {
        let before = task_count(app).await;
        let other_port = format!("http://127.0.0.1:{}", port(app).parse::<u16>().unwrap() ^ 1);
        let by_name = format!("http://localhost:{}", port(app));
        for origin in [
            "http://evil.example",
            "null",
            other_port.as_str(),
            by_name.as_str(),
        ] {
            let reply = send(create(app, "cross-site").header("origin", origin)).await;
            refused(&reply, "Origin");
            assert!(
                reply.body["message"]
                    .as_str()
                    .unwrap()
                    .contains("a page of another site may not call it"),
                "{origin}: {}",
                reply.text
            );
            for message in mcp_messages() {
                let reply = send(mcp(app, &message).header("origin", origin)).await;
                refused(&reply, "Origin");
            }
        }
        assert_eq!(task_count(app).await, before);
        // The server's own origin may, over https too (a TLS-terminating proxy's page).
        let https = app.base.replace("http://", "https://");
        for origin in [app.base.as_str(), https.as_str()] {
            let reply = send(create(app, "same origin").header("origin", origin)).await;
            assert_eq!(reply.status, StatusCode::OK, "{origin}: {}", reply.text);
        }
        assert_eq!(task_count(app).await, before + 2);
    }

    async fn loopback_names_and_the_probes_are_served(app: &TestApp) {
        let before = task_count(app).await;
        let hosts = [
            format!("localhost:{}", port(app)),
            "LocalHost".to_owned(),
            "127.0.0.1".to_owned(),
            format!("[::1]:{}", port(app)),
        ];
        for host in &hosts {
            let reply = send(create(app, "from loopback").header("host", host)).await;
            assert_eq!(reply.status, StatusCode::OK, "{host}: {}", reply.text);
            // The conformance suite's second probe: its own name as Host and Origin.
            let [initialize, _] = mcp_messages();
            let reply = send(
                mcp(app, &initialize)
                    .header("host", host)
                    .header("origin", format!("http://{host}")),
            )
            .await;
            assert_eq!(reply.status, StatusCode::OK, "{host}: {}", reply.text);
            assert_eq!(reply.body["result"]["serverInfo"]["name"], "muster");
        }
        assert_eq!(task_count(app).await, before + hosts.len());
        // Load balancers probe by address or internal name: the probes answer any Host.
        for path in ["/health", "/ready"] {
            let reply = send(
                app.anonymous(Method::GET, path)
                    .header("host", "10.1.2.3:8080"),
            )
            .await;
            assert_eq!(reply.status, StatusCode::OK, "{path}: {}", reply.text);
        }
    }
}

mod local_mode {
    use super::*;
    use crate::auth_modes::LOCAL_PASSWORD;

    api_tests!(with crate::auth_modes::local_settings();
        the_deployment_password_signs_in_only_from_the_servers_own_names,
    );

    async fn the_deployment_password_signs_in_only_from_the_servers_own_names(app: &TestApp) {
        let login = |host: Option<&str>, origin: Option<&str>| {
            let mut request = app
                .anonymous(Method::POST, "/auth/login")
                .json(&json!({"password": LOCAL_PASSWORD}));
            if let Some(host) = host {
                request = request.header("host", host.to_owned());
            }
            if let Some(origin) = origin {
                request = request.header("origin", origin.to_owned());
            }
            send(request)
        };
        let rebound = login(Some("evil.example"), Some("http://evil.example")).await;
        refused(&rebound, "Host evil.example");
        // Another site's page signing the browser in (login CSRF).
        let cross = login(None, Some("https://evil.example")).await;
        refused(&cross, "Origin https://evil.example is not this server's");
        let listed = send(
            app.anonymous(Method::GET, "/tasks")
                .header("host", "evil.example"),
        )
        .await;
        refused(&listed, "Host evil.example");
        let own = login(None, Some(&app.base)).await;
        assert_eq!(own.status, StatusCode::OK, "{}", own.text);
        let plain = login(Some("localhost"), None).await;
        assert_eq!(plain.status, StatusCode::OK, "{}", plain.text);
    }
}

mod full_mode {
    use super::*;

    api_tests!(
        mcp_and_the_dashboard_answer_only_the_servers_own_names,
        api_routes_that_need_credentials_do_not_look_at_the_host,
    );

    async fn mcp_and_the_dashboard_answer_only_the_servers_own_names(app: &TestApp) {
        let agent = &app.org.hr;
        let signed = |host: &str, origin: Option<&str>| {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
            let headers = TestApp::headers_for(agent, &Method::POST, "/mcp", body.as_bytes());
            let mut request = app
                .with_headers(Method::POST, "/mcp", &headers, Some(body.into_bytes()))
                .header("host", host.to_owned());
            if let Some(origin) = origin {
                request = request.header("origin", origin.to_owned());
            }
            send(request)
        };
        // A good signature does not make a foreign name this server's.
        let rebound = signed("evil.example", Some("http://evil.example")).await;
        refused(&rebound, "Host evil.example");
        let rebound = signed("evil.example", None).await;
        refused(&rebound, "Host evil.example");
        let local = format!("localhost:{}", port(app));
        let cross = signed(&local, Some("http://evil.example")).await;
        refused(&cross, "Origin http://evil.example");
        let own = signed(&local, Some(&format!("http://{local}"))).await;
        assert_eq!(own.status, StatusCode::OK, "{}", own.text);
        // Unsigned, the conformance suite's probe is refused before the credential is
        // looked for.
        let [initialize, _] = mcp_messages();
        let probe = send(
            mcp(app, &initialize)
                .header("host", "evil.example.com")
                .header("origin", "http://evil.example.com"),
        )
        .await;
        refused(&probe, "Host evil.example.com");
        for path in ["/", "/ui", "/ui/login", "/ui/board"] {
            let page = send(
                app.anonymous(Method::GET, path)
                    .header("host", "evil.example"),
            )
            .await;
            refused(&page, "Host evil.example");
        }
        let page = send(app.anonymous(Method::GET, "/ui/login")).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    }

    async fn api_routes_that_need_credentials_do_not_look_at_the_host(app: &TestApp) {
        // A rebinding page cannot sign: in auth mode `full` the API serves any name (a
        // proxy's, an internal one) and any Origin.
        let headers = TestApp::headers_for(&app.org.hr, &Method::GET, "/tasks", b"");
        let reply = send(
            app.with_headers(Method::GET, "/tasks", &headers, None)
                .header("host", "muster.internal")
                .header("origin", "https://elsewhere.example"),
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        let unsigned = send(
            app.anonymous(Method::GET, "/tasks")
                .header("host", "evil.example"),
        )
        .await;
        assert_eq!(
            unsigned.status,
            StatusCode::UNAUTHORIZED,
            "{}",
            unsigned.text
        );
    }
}

/// Auth mode `none` with a public URL and another allowed name.
pub(crate) fn named() -> AppSettings {
    AppSettings {
        auth: crate::auth_modes::none_settings(),
        edge: EdgeSettings {
            public_urls: vec!["https://muster.example.com".to_owned()],
            allowed_hosts: vec!["muster.internal".to_owned()],
            ..EdgeSettings::default()
        },
        ..AppSettings::default()
    }
}

mod configured_names {
    use super::*;

    api_tests!(with crate::dns_rebinding::named(); the_public_names_and_allowed_hosts_are_served);

    async fn the_public_names_and_allowed_hosts_are_served(app: &TestApp) {
        let before = task_count(app).await;
        for host in ["muster.example.com", "muster.internal:8080", "localhost"] {
            let reply = send(create(app, "named").header("host", host)).await;
            assert_eq!(reply.status, StatusCode::OK, "{host}: {}", reply.text);
        }
        let reply = send(create(app, "unnamed").header("host", "muster.example.org")).await;
        refused(&reply, "Host muster.example.org");
        // A proxy that passes its upstream's name: the public URL's page may call.
        let reply =
            send(create(app, "proxied").header("origin", "https://muster.example.com")).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        // Another scheme is another origin; an allowed host is a name, not an origin.
        for origin in ["http://muster.example.com", "https://muster.internal"] {
            let reply = send(create(app, "cross").header("origin", origin)).await;
            refused(&reply, "Origin");
        }
        assert_eq!(task_count(app).await, before + 4);
    }
}
