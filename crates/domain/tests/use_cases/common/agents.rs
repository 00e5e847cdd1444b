//! Fixtures of the agent use-case tests: agents and actors by number, an
//! [`AgentService`] over mocked ports, and a transaction that holds given agents and
//! records every lock and write.

use std::sync::{Arc, Mutex, MutexGuard};

use muster_domain::model::{
    Actor, ActorKind, Agent, AgentCredentials, AgentHandle, AgentId, AgentMode, AgentRole,
    AgentSecret, AgentStatus, ApiKeyId, ApiKeyScope, Capability, Event, KeyAccess, LedgerEntry,
    Level, ReputationEvent, UserRole,
};
use muster_domain::ports::{
    AgentChanges, Lock, MockAgentRepository, MockSecretSealer, MockTransaction, MockUnitOfWork,
};
use muster_domain::service::AgentService;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{EARLIER, actor_user_id, org, sample_agent};

/// The secret every mocked sealer draws.
pub const SECRET: &str = "5ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2";

/// Agent number `n`; a higher number is a higher id.
pub fn agent_id(n: u128) -> AgentId {
    AgentId::from_uuid(Uuid::from_u128(0xa000 + n))
}

/// A stored, active worker agent number `n` of [`org`] at `level`, with a handle of its
/// own, a balance of 0 and no limit, its period started at [`EARLIER`].
pub fn agent(n: u128, level: i64) -> Agent {
    let mut agent = sample_agent(agent_id(n), AgentMode::Worker, AgentStatus::Active);
    agent.handle = AgentHandle::new(&format!("agent-{n}")).unwrap();
    agent.level = Level::new(level).unwrap();
    agent
}

/// [`agent`] with `parent` as its parent.
pub fn child_of(n: u128, level: i64, parent: u128) -> Agent {
    let mut child = agent(n, level);
    child.parent_id = Some(agent_id(parent));
    child
}

/// The caller `agent`, as authentication makes it from the stored row.
pub fn as_agent(agent: &Agent) -> Actor {
    Actor {
        org_id: org(),
        kind: ActorKind::Agent {
            id: agent.id,
            role: agent.role,
            mode: agent.mode,
            level: agent.level,
        },
    }
}

/// An agent caller number `n` at `level` with `role`, in worker mode.
pub fn agent_caller(n: u128, level: i64, role: AgentRole) -> Actor {
    let mut stored = agent(n, level);
    stored.role = role;
    as_agent(&stored)
}

/// A user caller with `role` through an API key of `scope`.
pub fn key_user(role: UserRole, scope: ApiKeyScope) -> Actor {
    Actor {
        org_id: org(),
        kind: ActorKind::User {
            id: actor_user_id(),
            role,
            key: Some(KeyAccess {
                id: ApiKeyId::from_uuid(Uuid::from_u128(0xc1)),
                scope,
            }),
        },
    }
}

/// A sealer that draws [`SECRET`] and seals it as the agent id followed by the secret.
pub fn sealer() -> MockSecretSealer {
    let mut sealer = MockSecretSealer::new();
    sealer
        .expect_generate()
        .returning(|| Ok(AgentSecret::new(SECRET.to_owned())));
    sealer
        .expect_seal()
        .returning(|agent, secret| Ok(sealed(agent, secret.expose())));
    sealer
}

/// What [`sealer`] makes of `secret` for `agent`.
pub fn sealed(agent: AgentId, secret: &str) -> Vec<u8> {
    let mut bytes = agent.as_uuid().as_bytes().to_vec();
    bytes.extend_from_slice(secret.as_bytes());
    bytes
}

/// A sealer that must never be asked: the use case refuses before it needs a secret.
pub fn unused_sealer() -> MockSecretSealer {
    let mut sealer = MockSecretSealer::new();
    sealer.expect_generate().never();
    sealer.expect_seal().never();
    sealer
}

/// An agent service whose every unit of work runs on `tx`, with no repository reads.
pub fn service_on(tx: MockTransaction) -> (AgentService, Arc<MockUnitOfWork>) {
    service_with(tx, sealer())
}

/// [`service_on`] with another sealer.
pub fn service_with(
    tx: MockTransaction,
    sealer: MockSecretSealer,
) -> (AgentService, Arc<MockUnitOfWork>) {
    let uow = Arc::new(MockUnitOfWork::new(tx));
    let service = AgentService::new(
        Arc::new(MockAgentRepository::new()),
        uow.clone(),
        Arc::new(sealer),
        super::clock(),
        super::ids(),
    );
    (service, uow)
}

/// Everything a transaction was asked, in order.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Every call, by method name, in order.
    pub calls: Vec<&'static str>,
    /// `agent`: the ids read and how they were held.
    pub locks: Vec<(AgentId, Lock)>,
    /// `update_agent`, with the stamp.
    pub updated: Vec<(Agent, OffsetDateTime)>,
    /// `insert_agent`.
    pub inserted: Vec<AgentCredentials>,
    /// `insert_capabilities`, flattened.
    pub capabilities: Vec<Capability>,
    /// `insert_ledger_entries`, flattened.
    pub ledger: Vec<LedgerEntry>,
    /// `insert_reputation_events`, flattened.
    pub reputation: Vec<ReputationEvent>,
    /// `append_events`, flattened.
    pub events: Vec<Event>,
}

impl Recorded {
    /// Whether anything was written (reads do not count).
    pub fn wrote(&self) -> bool {
        self.calls
            .iter()
            .any(|c| *c != "agent" && *c != "live_children")
    }
}

/// The shared record of a transaction.
pub type Record = Arc<Mutex<Recorded>>;

/// The record so far.
pub fn recorded(record: &Record) -> MutexGuard<'_, Recorded> {
    record.lock().unwrap()
}

/// A transaction that holds `agents` (a missing id reads as none) and records every
/// read and write; each write succeeds.
pub fn store(agents: Vec<Agent>) -> (MockTransaction, Record) {
    let mut tx = MockTransaction::new();
    let record = reads(&mut tx, agents);
    writes(&mut tx, &record);
    (tx, record)
}

/// Only the reads of [`store`]: any write panics, so a test passes only if the use case
/// writes nothing.
pub fn read_only(agents: Vec<Agent>) -> (MockTransaction, Record) {
    let mut tx = MockTransaction::new();
    let record = reads(&mut tx, agents);
    tx.expect_update_agent().never();
    tx.expect_insert_agent().never();
    tx.expect_insert_capabilities().never();
    tx.expect_insert_ledger_entries().never();
    tx.expect_insert_reputation_events().never();
    tx.expect_append_events().never();
    (tx, record)
}

fn reads(tx: &mut MockTransaction, agents: Vec<Agent>) -> Record {
    let record: Record = Arc::default();
    let sink = Arc::clone(&record);
    tx.expect_agent().returning(move |o, id, lock| {
        let mut r = sink.lock().unwrap();
        r.calls.push("agent");
        r.locks.push((id, lock));
        Ok(agents.iter().find(|a| a.id == id && a.org_id == o).cloned())
    });
    record
}

/// Makes every write of `tx` succeed and record itself into `record`.
pub fn writes(tx: &mut MockTransaction, record: &Record) {
    let sink = Arc::clone(record);
    tx.expect_update_agent().returning(move |agent, at| {
        let mut r = sink.lock().unwrap();
        r.calls.push("update_agent");
        r.updated.push((agent.clone(), at));
        Ok(true)
    });
    let sink = Arc::clone(record);
    tx.expect_insert_agent().returning(move |credentials| {
        let mut r = sink.lock().unwrap();
        r.calls.push("insert_agent");
        r.inserted.push(credentials.clone());
        Ok(())
    });
    let sink = Arc::clone(record);
    tx.expect_insert_capabilities().returning(move |rows| {
        let mut r = sink.lock().unwrap();
        r.calls.push("insert_capabilities");
        r.capabilities.extend_from_slice(rows);
        Ok(())
    });
    let sink = Arc::clone(record);
    tx.expect_insert_ledger_entries().returning(move |rows| {
        let mut r = sink.lock().unwrap();
        r.calls.push("insert_ledger_entries");
        r.ledger.extend_from_slice(rows);
        Ok(())
    });
    let sink = Arc::clone(record);
    tx.expect_insert_reputation_events().returning(move |rows| {
        let mut r = sink.lock().unwrap();
        r.calls.push("insert_reputation_events");
        r.reputation.extend_from_slice(rows);
        Ok(())
    });
    let sink = Arc::clone(record);
    tx.expect_append_events().returning(move |events| {
        let mut r = sink.lock().unwrap();
        r.calls.push("append_events");
        r.events.extend_from_slice(events);
        Ok(())
    });
}

/// The start of the day of [`super::NOW`]: the current daily budget period.
pub fn today() -> OffsetDateTime {
    super::NOW.replace_time(time::Time::MIDNIGHT)
}

/// An agent whose period is [`EARLIER`], long over.
pub fn stale(mut agent: Agent) -> Agent {
    agent.budget_period_start = EARLIER;
    agent
}

/// An agent whose period is the current day.
pub fn current(mut agent: Agent) -> Agent {
    agent.budget_period_start = today();
    agent
}

/// The agents an [`AgentChanges`] listener was told of, in order.
#[derive(Debug, Default)]
pub struct Heard(Mutex<Vec<AgentId>>);

impl Heard {
    /// What was heard so far, emptied.
    pub fn take(&self) -> Vec<AgentId> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl AgentChanges for Heard {
    fn changed(&self, agent: AgentId) {
        self.0.lock().unwrap().push(agent);
    }
}
