use muster_domain::ports::RepositoryError;

use super::*;

/// A change made to a correctly signed request.
type Edit = fn(&mut Request);

#[tokio::test]
async fn each_missing_header_is_named() {
    let cases: [(Edit, &str); 4] = [
        (|r| r.agent_id = None, "missing X-Agent-ID header"),
        (|r| r.timestamp = None, "missing X-Timestamp header"),
        (|r| r.nonce = None, "missing X-Nonce header"),
        (|r| r.signature = None, "missing X-Signature header"),
    ];
    for (remove, message) in cases {
        let mut request = Request::signed();
        remove(&mut request);
        let err = rejected_before_lookup(&request).await;
        assert!(matches!(err, AgentAuthError::MissingHeader(_)), "{err:?}");
        assert_eq!(err.to_string(), message);
        assert!(err.is_client_error());
    }
}

#[tokio::test]
async fn an_empty_header_counts_as_missing() {
    let mut request = Request::signed();
    request.nonce = Some(String::new());
    let err = rejected_before_lookup(&request).await;
    assert_eq!(err.to_string(), "missing X-Nonce header");
}

#[tokio::test]
async fn a_non_numeric_timestamp_is_invalid() {
    for timestamp in [
        "soon",
        "-1795000000",
        "1795000000.5",
        " 1795000000",
        "17950000000000000000",
    ] {
        let request = Request::signed_at(timestamp, NONCE);
        let err = rejected_before_lookup(&request).await;
        assert!(
            matches!(err, AgentAuthError::InvalidTimestamp),
            "{timestamp:?}: {err:?}"
        );
        assert_eq!(err.to_string(), "invalid timestamp");
    }
}

#[tokio::test]
async fn timestamps_beyond_the_window_are_stale() {
    for offset in [-301, 301, -NOW, 10_000_000_000] {
        let request = Request::signed_at(&(NOW + offset).to_string(), NONCE);
        let err = rejected_before_lookup(&request).await;
        assert!(
            matches!(err, AgentAuthError::StaleTimestamp),
            "offset {offset}: {err:?}"
        );
        assert_eq!(err.to_string(), "stale timestamp");
    }
}

#[tokio::test]
async fn malformed_nonces_are_invalid() {
    let too_long = "n".repeat(129);
    for nonce in [too_long.as_str(), "tab\there", "caf\u{e9}", "bell\x07"] {
        let request = Request::signed_at(&NOW.to_string(), nonce);
        let err = rejected_before_lookup(&request).await;
        assert!(
            matches!(err, AgentAuthError::InvalidNonce),
            "{nonce:?}: {err:?}"
        );
        assert_eq!(err.to_string(), "invalid nonce");
    }
}

#[tokio::test]
async fn an_unknown_agent_looks_like_a_bad_signature() {
    let auth = authenticator(agents_finding(None), nonces_untouched(), at(NOW));
    let err = auth
        .authenticate(&Request::signed().borrow())
        .await
        .unwrap_err();
    assert!(matches!(err, AgentAuthError::InvalidSignature), "{err:?}");
    assert_eq!(err.to_string(), "invalid signature");
}

#[tokio::test]
async fn an_impossible_handle_is_not_looked_up() {
    for handle in ["has space", &"a".repeat(101), "caf\u{e9}"] {
        let mut request = Request::signed();
        request.agent_id = Some(handle.to_owned());
        let err = rejected_before_lookup(&request).await;
        assert!(
            matches!(err, AgentAuthError::InvalidSignature),
            "{handle:?}: {err:?}"
        );
    }
}

/// A forged request must not burn the nonce of the real agent.
#[tokio::test]
async fn a_wrong_signature_is_rejected_without_recording_the_nonce() {
    let mut wrong_secret = Request::signed();
    wrong_secret.sign_with(&SECRET.replace('7', "8"));
    let mut other_body = Request::signed();
    other_body.body = br#"{"title": "Something else"}"#.to_vec();
    let mut other_target = Request::signed();
    other_target.path_and_query = "/tasks?notify=false".to_owned();
    let mut not_hex = Request::signed();
    not_hex.signature = Some("not hex".to_owned());
    let mut truncated = Request::signed();
    truncated.signature = truncated.signature.map(|s| s[..62].to_owned());

    for request in [wrong_secret, other_body, other_target, not_hex, truncated] {
        let auth = authenticator(
            agents_finding(Some(credentials(AgentStatus::Active))),
            nonces_untouched(),
            at(NOW),
        );
        let err = auth.authenticate(&request.borrow()).await.unwrap_err();
        assert!(
            matches!(err, AgentAuthError::InvalidSignature),
            "{request:?}: {err:?}"
        );
    }
}

#[tokio::test]
async fn inactive_agents_are_refused_without_recording_the_nonce() {
    for status in [
        AgentStatus::Pending,
        AgentStatus::Suspended,
        AgentStatus::Revoked,
    ] {
        let auth = authenticator(
            agents_finding(Some(credentials(status))),
            nonces_untouched(),
            at(NOW),
        );
        let err = auth
            .authenticate(&Request::signed().borrow())
            .await
            .unwrap_err();
        assert!(
            matches!(err, AgentAuthError::AgentNotActive),
            "{status:?}: {err:?}"
        );
        assert_eq!(err.to_string(), "agent is not active");
        assert!(err.is_client_error());
    }
}

/// Only the key holder learns that an agent is inactive.
#[tokio::test]
async fn an_inactive_agent_with_a_wrong_signature_gets_invalid_signature() {
    let auth = authenticator(
        agents_finding(Some(credentials(AgentStatus::Suspended))),
        nonces_untouched(),
        at(NOW),
    );
    let mut request = Request::signed();
    request.sign_with("not the secret");
    let err = auth.authenticate(&request.borrow()).await.unwrap_err();
    assert!(matches!(err, AgentAuthError::InvalidSignature), "{err:?}");
}

#[tokio::test]
async fn a_replayed_nonce_is_refused() {
    let now = at(NOW);
    let auth = authenticator(
        agents_finding(Some(credentials(AgentStatus::Active))),
        nonces_answering(now, NonceOutcome::Replayed),
        now,
    );
    let err = auth
        .authenticate(&Request::signed().borrow())
        .await
        .unwrap_err();
    assert!(matches!(err, AgentAuthError::NonceReused), "{err:?}");
    assert_eq!(err.to_string(), "nonce already used");
    assert!(err.is_client_error());
}

#[tokio::test]
async fn an_agent_store_failure_is_a_server_error() {
    let mut agents = MockAgentRepository::new();
    agents
        .expect_find_credentials()
        .returning(|_| Err(RepositoryError::unavailable("pool exhausted")));
    let auth = authenticator(agents, nonces_untouched(), at(NOW));
    let err = auth
        .authenticate(&Request::signed().borrow())
        .await
        .unwrap_err();
    assert!(matches!(err, AgentAuthError::Storage(_)), "{err:?}");
    assert_eq!(err.to_string(), "authentication storage unavailable");
    assert!(!err.is_client_error());
}

#[tokio::test]
async fn a_nonce_store_failure_is_a_server_error() {
    let mut nonces = MockNonceStore::new();
    nonces
        .expect_remember()
        .times(1)
        .returning(|_, _, _, _| Err(RepositoryError::internal("disk full")));
    let auth = authenticator(
        agents_finding(Some(credentials(AgentStatus::Active))),
        nonces,
        at(NOW),
    );
    let err = auth
        .authenticate(&Request::signed().borrow())
        .await
        .unwrap_err();
    assert!(matches!(err, AgentAuthError::Storage(_)), "{err:?}");
    assert!(!err.is_client_error());
}

/// A secret sealed under another server key is a configuration fault, not a 401.
#[tokio::test]
async fn an_undecryptable_secret_is_an_internal_error() {
    let mut stored = credentials(AgentStatus::Active);
    let other_cipher = ServerKey::from_bytes([1; 32]).unwrap().secret_cipher();
    stored.encrypted_secret = other_cipher
        .seal(SECRET.as_bytes(), agent_id().as_uuid().as_bytes())
        .unwrap();
    let auth = authenticator(agents_finding(Some(stored)), nonces_untouched(), at(NOW));
    let err = auth
        .authenticate(&Request::signed().borrow())
        .await
        .unwrap_err();
    assert!(matches!(err, AgentAuthError::Internal(_)), "{err:?}");
    assert_eq!(err.to_string(), "internal error");
    assert!(!err.is_client_error());
}

#[test]
fn every_401_reason_is_a_client_error() {
    let client = [
        AgentAuthError::MissingHeader(NONCE_HEADER),
        AgentAuthError::InvalidTimestamp,
        AgentAuthError::StaleTimestamp,
        AgentAuthError::InvalidNonce,
        AgentAuthError::InvalidSignature,
        AgentAuthError::AgentNotActive,
        AgentAuthError::NonceReused,
    ];
    assert!(client.iter().all(AgentAuthError::is_client_error));
    assert!(!AgentAuthError::Internal("x".to_owned()).is_client_error());
}
