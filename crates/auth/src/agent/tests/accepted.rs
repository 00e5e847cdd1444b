use super::*;

#[tokio::test]
async fn a_signed_request_from_an_active_agent_is_accepted() {
    let now = at(NOW);
    let auth = authenticator(
        agents_finding(Some(credentials(AgentStatus::Active))),
        nonces_answering(now, NonceOutcome::Fresh),
        now,
    );
    let actor = auth
        .authenticate(&Request::signed().borrow())
        .await
        .unwrap();
    assert_eq!(actor, expected_actor());
}

/// The first agent vector of `signing-vectors.md`, end to end.
#[tokio::test]
async fn the_published_vector_is_accepted() {
    let now = at(NOW);
    let auth = authenticator(
        agents_finding(Some(credentials(AgentStatus::Active))),
        nonces_answering(now, NonceOutcome::Fresh),
        now,
    );
    let request = SignedRequest {
        agent_id: Some("hr-acme"),
        timestamp: Some("1795000000"),
        nonce: Some(NONCE),
        signature: Some("43b7abef5102706f37f7ca86c8fb99f4e0e3b957000ec16ea611bf1b344f0e62"),
        method: "GET",
        path_and_query: "/tasks?status=todo&limit=5",
        body: b"",
    };
    assert_eq!(auth.authenticate(&request).await.unwrap(), expected_actor());
}

#[tokio::test]
async fn uppercase_signature_hex_is_accepted() {
    let now = at(NOW);
    let auth = authenticator(
        agents_finding(Some(credentials(AgentStatus::Active))),
        nonces_answering(now, NonceOutcome::Fresh),
        now,
    );
    let mut request = Request::signed();
    request.signature = request.signature.map(|s| s.to_uppercase());
    assert!(auth.authenticate(&request.borrow()).await.is_ok());
}

/// Timestamps exactly 300 s before and after server time are inside the window.
#[tokio::test]
async fn timestamps_at_the_window_edges_are_accepted() {
    for offset in [-300, 300] {
        let now = at(NOW);
        let auth = authenticator(
            agents_finding(Some(credentials(AgentStatus::Active))),
            nonces_answering(now, NonceOutcome::Fresh),
            now,
        );
        let request = Request::signed_at(&(NOW + offset).to_string(), NONCE);
        assert!(
            auth.authenticate(&request.borrow()).await.is_ok(),
            "offset {offset}"
        );
    }
}

/// Server time has milliseconds; the window compares whole seconds.
#[tokio::test]
async fn sub_second_server_time_does_not_shrink_the_window() {
    let now = at(NOW) + Duration::milliseconds(999);
    let auth = authenticator(
        agents_finding(Some(credentials(AgentStatus::Active))),
        nonces_answering(now, NonceOutcome::Fresh),
        now,
    );
    let request = Request::signed_at(&(NOW - 300).to_string(), NONCE);
    assert!(auth.authenticate(&request.borrow()).await.is_ok());
}

#[tokio::test]
async fn a_request_without_body_is_accepted() {
    let now = at(NOW);
    let auth = authenticator(
        agents_finding(Some(credentials(AgentStatus::Active))),
        nonces_answering(now, NonceOutcome::Fresh),
        now,
    );
    let mut request = Request::signed();
    request.method = "DELETE".to_owned();
    request.body.clear();
    request.sign_with(SECRET);
    assert!(auth.authenticate(&request.borrow()).await.is_ok());
}

#[test]
fn debug_shows_no_secret() {
    let auth = authenticator(MockAgentRepository::new(), MockNonceStore::new(), at(NOW));
    assert_eq!(format!("{auth:?}"), "AgentAuthenticator { .. }");
}
