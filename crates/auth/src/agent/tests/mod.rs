//! Tests of the authenticator, with mocked ports.

mod accepted;
mod rejected;

use std::sync::Arc;

use muster_domain::model::{
    Agent, AgentCredentials, AgentHandle, AgentId, AgentMode, AgentRole, AgentStatus, FeePct,
    Level, OrgId,
};
use muster_domain::ports::{MockAgentRepository, MockClock, MockNonceStore, NonceOutcome};
use time::OffsetDateTime;
use uuid::Uuid;

use super::*;
use crate::keys::ServerKey;
use crate::signing::sign;

/// The agent secret of `signing-vectors.md`.
const SECRET: &str = "7f3a9c2e5b8d1f4a6c0e9b2d5f8a1c4e7b0d3f6a9c2e5b8d1f4a7c0e3b6d9f2a";
const HANDLE: &str = "hr-acme";
const NOW: i64 = 1_795_000_000;
const NONCE: &str = "0f8e9d2c-4b6a-4e1f-9a3d-7c5b2e1f0a9d";

fn agent_id() -> AgentId {
    AgentId::from_uuid(Uuid::from_u128(0x0193_6f7e_8a4b_7c3d_9e2f_0000_0000_0001))
}

fn org_id() -> OrgId {
    OrgId::from_uuid(Uuid::from_u128(0x0193_6f7e_8a4b_7c3d_9e2f_0000_0000_0002))
}

fn at(unix_seconds: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(unix_seconds).unwrap()
}

fn cipher() -> SecretCipher {
    ServerKey::from_bytes([9; 32]).unwrap().secret_cipher()
}

pub(super) fn agent(status: AgentStatus) -> Agent {
    Agent {
        id: agent_id(),
        org_id: org_id(),
        handle: AgentHandle::new(HANDLE).unwrap(),
        name: "HR".to_owned(),
        level: Level::new(10).unwrap(),
        model: None,
        role: AgentRole::Hr,
        mode: AgentMode::Orchestrator,
        status,
        parent_id: None,
        current_balance: 0,
        budget_period_limit: None,
        budget_period_spent: 0,
        budget_period_start: at(NOW - 86_400),
        reserved_credits: 0,
        budget_exhausted: false,
        management_fee_pct: FeePct::default(),
        reputation_score: 50,
        metadata: std::iter::empty().collect(),
        created_at: at(NOW - 86_400),
    }
}

fn credentials(status: AgentStatus) -> AgentCredentials {
    AgentCredentials {
        agent: agent(status),
        encrypted_secret: cipher()
            .seal(SECRET.as_bytes(), agent_id().as_uuid().as_bytes())
            .unwrap(),
    }
}

/// The actor an authenticated request from the test agent yields.
fn expected_actor() -> Actor {
    Actor {
        org_id: org_id(),
        kind: ActorKind::Agent {
            id: agent_id(),
            role: AgentRole::Hr,
            mode: AgentMode::Orchestrator,
            level: Level::new(10).unwrap(),
        },
    }
}

/// An owned request, so tests can change one part and borrow a [`SignedRequest`].
#[derive(Debug, Clone)]
struct Request {
    agent_id: Option<String>,
    timestamp: Option<String>,
    nonce: Option<String>,
    signature: Option<String>,
    method: String,
    path_and_query: String,
    body: Vec<u8>,
}

impl Request {
    /// A correctly signed `POST /tasks` sent at `timestamp` with `nonce`.
    fn signed_at(timestamp: &str, nonce: &str) -> Self {
        let mut request = Self {
            agent_id: Some(HANDLE.to_owned()),
            timestamp: Some(timestamp.to_owned()),
            nonce: Some(nonce.to_owned()),
            signature: None,
            method: "POST".to_owned(),
            path_and_query: "/tasks?notify=true".to_owned(),
            body: br#"{"title": "Write the report"}"#.to_vec(),
        };
        request.sign_with(SECRET);
        request
    }

    /// A correctly signed request sent at [`NOW`] with [`NONCE`].
    fn signed() -> Self {
        Self::signed_at(&NOW.to_string(), NONCE)
    }

    fn sign_with(&mut self, secret: &str) {
        let message = canonical_message(
            &self.method,
            &self.path_and_query,
            self.timestamp.as_deref().unwrap_or_default(),
            self.nonce.as_deref().unwrap_or_default(),
            &self.body,
        );
        self.signature = Some(sign(secret, &message));
    }

    fn borrow(&self) -> SignedRequest<'_> {
        SignedRequest {
            agent_id: self.agent_id.as_deref(),
            timestamp: self.timestamp.as_deref(),
            nonce: self.nonce.as_deref(),
            signature: self.signature.as_deref(),
            method: &self.method,
            path_and_query: &self.path_and_query,
            body: &self.body,
        }
    }
}

fn clock(now: OffsetDateTime) -> MockClock {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(now);
    clock
}

/// A repository that finds `found` for [`HANDLE`], exactly once.
fn agents_finding(found: Option<AgentCredentials>) -> MockAgentRepository {
    let mut agents = MockAgentRepository::new();
    agents
        .expect_find_credentials()
        .withf(|handle| handle.as_str() == HANDLE)
        .times(1)
        .returning(move |_| Ok(found.clone()));
    agents
}

/// A repository that must not be asked.
fn agents_untouched() -> MockAgentRepository {
    let mut agents = MockAgentRepository::new();
    agents.expect_find_credentials().never();
    agents
}

/// A nonce store expecting [`NONCE`] once, recorded at `now` for 600 s (601 s when the
/// timestamp is at the future edge of the window, so it cannot be replayed later).
fn nonces_answering(now: OffsetDateTime, outcome: NonceOutcome) -> MockNonceStore {
    let mut nonces = MockNonceStore::new();
    nonces
        .expect_remember()
        .withf(move |agent, nonce, at, expires_at| {
            *agent == agent_id()
                && nonce == NONCE
                && *at == now
                && *expires_at >= now + Duration::seconds(600)
                && *expires_at <= now + Duration::seconds(601)
        })
        .times(1)
        .returning(move |_, _, _, _| Ok(outcome));
    nonces
}

/// A nonce store that must not be touched: nothing may be recorded.
fn nonces_untouched() -> MockNonceStore {
    let mut nonces = MockNonceStore::new();
    nonces.expect_remember().never();
    nonces.expect_purge_expired().never();
    nonces
}

fn authenticator(
    agents: MockAgentRepository,
    nonces: MockNonceStore,
    now: OffsetDateTime,
) -> AgentAuthenticator {
    AgentAuthenticator::new(
        Arc::new(agents),
        Arc::new(nonces),
        Arc::new(clock(now)),
        cipher(),
    )
}

/// Runs `request` through an authenticator whose ports must not be reached.
async fn rejected_before_lookup(request: &Request) -> AgentAuthError {
    authenticator(agents_untouched(), nonces_untouched(), at(NOW))
        .authenticate(&request.borrow())
        .await
        .unwrap_err()
}
