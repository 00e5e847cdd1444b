//! The agent-signature check end to end (header syntax, the canonical message, HMAC
//! verification), with arbitrary header values, method, target and body. It must never
//! panic; it accepts exactly the requests signed with the agent's secret over those
//! bytes with well-formed, fresh headers; and it refuses every other signature.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use muster_auth::agent::{AgentAuthenticator, SignedRequest};
use muster_auth::keys::ServerKey;
use muster_auth::signing::{canonical_message, sign};
use muster_domain::model::{
    Agent, AgentCredentials, AgentHandle, AgentId, AgentMode, AgentRole, AgentStatus, FeePct,
    Level, OrgId,
};
use muster_domain::ports::{MockAgentRepository, MockClock, MockNonceStore, NonceOutcome};
use time::OffsetDateTime;
use uuid::Uuid;

const HANDLE: &str = "hr-acme";
const SECRET: &str = "7f3a9c2e5b8d1f4a6c0e9b2d5f8a1c4e7b0d3f6a9c2e5b8d1f4a7c0e3b6d9f2a";
const NOW: i64 = 1_795_000_000;

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    agent_id: Option<&'a str>,
    timestamp: Option<&'a str>,
    /// Replaces `timestamp` with NOW + this offset, as text, when set.
    offset: Option<i16>,
    nonce: Option<&'a str>,
    signature: Option<&'a str>,
    /// Sign properly instead of using `signature`.
    sign_properly: bool,
    method: &'a str,
    path_and_query: &'a str,
    body: &'a [u8],
}

fn agent() -> Agent {
    let at = OffsetDateTime::from_unix_timestamp(NOW - 86_400).expect("time");
    Agent {
        id: AgentId::from_uuid(Uuid::from_u128(1)),
        org_id: OrgId::from_uuid(Uuid::from_u128(2)),
        handle: AgentHandle::new(HANDLE).expect("handle"),
        name: "HR".to_owned(),
        level: Level::new(10).expect("level"),
        model: None,
        role: AgentRole::Hr,
        mode: AgentMode::Orchestrator,
        status: AgentStatus::Active,
        parent_id: None,
        current_balance: 0,
        budget_period_limit: None,
        budget_period_spent: 0,
        budget_period_start: at,
        management_fee_pct: FeePct::default(),
        reputation_score: 50,
        metadata: serde_json::Map::new(),
        created_at: at,
    }
}

fn authenticator() -> AgentAuthenticator {
    let cipher = ServerKey::from_bytes([9; 32]).expect("key").secret_cipher();
    let agent = agent();
    let sealed = cipher
        .seal(SECRET.as_bytes(), agent.id.as_uuid().as_bytes())
        .expect("seal");
    let credentials = AgentCredentials {
        agent,
        encrypted_secret: sealed,
    };
    let mut agents = MockAgentRepository::new();
    agents
        .expect_find_credentials()
        .returning(move |handle| Ok((handle.as_str() == HANDLE).then(|| credentials.clone())));
    let mut nonces = MockNonceStore::new();
    nonces
        .expect_remember()
        .returning(|_, _, _, _| Ok(NonceOutcome::Fresh));
    let mut clock = MockClock::new();
    clock
        .expect_now()
        .return_const(OffsetDateTime::from_unix_timestamp(NOW).expect("now"));
    AgentAuthenticator::with_credential_ttl(
        Arc::new(agents),
        Arc::new(nonces),
        Arc::new(clock),
        cipher,
        std::time::Duration::ZERO,
    )
}

/// What the rules of the signature say about the headers alone.
fn headers_valid(agent_id: Option<&str>, timestamp: Option<&str>, nonce: Option<&str>) -> bool {
    let fresh = timestamp.is_some_and(|t| {
        !t.is_empty()
            && t.len() <= 19
            && t.bytes().all(|b| b.is_ascii_digit())
            && t.parse::<u64>()
                .is_ok_and(|t| i64::try_from(t).is_ok_and(|t| (t - NOW).abs() <= 300))
    });
    let nonce_ok = nonce.is_some_and(|n| {
        !n.is_empty() && n.len() <= 128 && n.bytes().all(|b| (0x20..=0x7e).contains(&b))
    });
    agent_id == Some(HANDLE) && fresh && nonce_ok
}

fuzz_target!(|input: Input<'_>| {
    let offset_text = input.offset.map(|o| (NOW + i64::from(o)).to_string());
    let timestamp = offset_text.as_deref().or(input.timestamp);
    let proper = sign(
        SECRET,
        &canonical_message(
            input.method,
            input.path_and_query,
            timestamp.unwrap_or_default(),
            input.nonce.unwrap_or_default(),
            input.body,
        ),
    );
    let signature = if input.sign_properly {
        Some(proper.as_str())
    } else {
        input.signature
    };
    let request = SignedRequest {
        agent_id: input.agent_id,
        timestamp,
        nonce: input.nonce,
        signature,
        method: input.method,
        path_and_query: input.path_and_query,
        body: input.body,
    };
    let verdict = futures_executor::block_on(authenticator().authenticate(&request));
    let valid = headers_valid(input.agent_id, timestamp, input.nonce);
    let signed = signature.is_some_and(|s| s.eq_ignore_ascii_case(&proper));
    assert_eq!(
        verdict.is_ok(),
        valid && signed,
        "headers valid: {valid}, signed: {signed}, verdict: {verdict:?}"
    );
});
