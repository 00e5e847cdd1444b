//! The data the scenarios read: agents to sign with and tasks to fetch.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, bail};
use muster_auth::keys::{ServerKey, generate_agent_secret};
use muster_domain::model::{
    Agent, AgentCredentials, AgentHandle, AgentId, AgentMode, AgentRegistered, AgentRole,
    AgentSecret, AgentStatus, AuditEvent, Event, EventId, FeePct, Level, OrgId,
};
use muster_domain::ports::{SecretSealer, transact};
use muster_persistence::{Database, DatabaseUrl, PoolOptions};
use time::OffsetDateTime;
use uuid::Uuid;

use super::client::{Call, Client};
use super::scenario::create_body;
use super::server::Bootstrapped;
use super::sign::Credentials;

/// How many agents the organization should have (the issue's figure).
pub const AGENTS_WANTED: usize = 50;

/// How many seeding requests are in flight at once.
pub const SEED_CONCURRENCY: usize = 16;

/// What writing agents directly into the bench database needs.
#[derive(Debug)]
pub struct AgentSeed<'a> {
    /// `MUSTER_DATABASE_URL` of the bench database.
    pub database_url: &'a str,
    /// `MUSTER_SECRET_KEY` (64 hex), which seals each agent's signing secret.
    pub secret_key: &'a str,
    /// What `muster bootstrap` made: the organization and its HR agent.
    pub bootstrap: &'a Bootstrapped,
    /// How many agents in total, the HR agent included.
    pub wanted: usize,
}

/// The agents the load is signed with (worker `i` uses agent `i % len`): the HR agent of
/// bootstrap and `wanted - 1` active workers of its organization. The API has no route
/// to register agents yet, so they are written the way a use case would write them:
/// one unit of work through the persistence port, secrets sealed with the server key.
pub async fn seed_agents(seed: &AgentSeed<'_>) -> anyhow::Result<Vec<Credentials>> {
    let url = DatabaseUrl::parse(seed.database_url).context("bench database URL")?;
    let db = Database::connect(&url, PoolOptions::default())
        .await
        .context("opening the bench database")?;
    let key = ServerKey::parse(seed.secret_key).context("bench server key")?;
    let cipher = key.secret_cipher();
    let org = OrgId::from_uuid(
        Uuid::parse_str(&seed.bootstrap.org_id).context("bootstrap printed a bad orgId")?,
    );
    let now = muster_domain::model::instant::to_millis(OffsetDateTime::now_utc());
    let mut credentials = vec![seed.bootstrap.hr_agent.clone()];
    let mut rows = Vec::new();
    let mut events = Vec::new();
    for n in 1..seed.wanted {
        let secret = AgentSecret::new(generate_agent_secret().context("agent secret")?);
        let agent = worker(org, n, now)?;
        let sealed = SecretSealer::seal(&cipher, agent.id, &secret).context("sealing a secret")?;
        let registered = AuditEvent::AgentRegistered(AgentRegistered {
            agent_id: agent.handle.as_str().to_owned(),
            role: agent.role,
            level: agent.level,
        });
        let id = EventId::from_uuid(Uuid::now_v7());
        events.push(Event::record(
            id,
            org,
            None,
            agent.id.as_uuid(),
            now,
            &registered,
        ));
        credentials.push(Credentials {
            agent_id: agent.handle.as_str().to_owned(),
            secret: secret.expose().to_owned(),
        });
        rows.push(AgentCredentials {
            agent,
            encrypted_secret: sealed,
        });
    }
    transact(&db, move |tx| {
        Box::pin(async move {
            for row in &rows {
                tx.insert_agent(row).await?;
            }
            tx.append_events(&events).await?;
            Ok(())
        })
    })
    .await
    .map_err(|err| anyhow::anyhow!("writing the bench agents: {err}"))?;
    Ok(credentials)
}

/// Active worker number `n` of `org`.
fn worker(org: OrgId, n: usize, now: OffsetDateTime) -> anyhow::Result<Agent> {
    let handle = format!("bench-worker-{n:02}-{}", Uuid::now_v7().simple());
    Ok(Agent {
        id: AgentId::from_uuid(Uuid::now_v7()),
        org_id: org,
        handle: AgentHandle::new(&handle).map_err(|e| anyhow::anyhow!("{e}"))?,
        name: format!("Bench worker {n}"),
        level: Level::new(3).map_err(|e| anyhow::anyhow!("{e}"))?,
        model: None,
        role: AgentRole::Worker,
        mode: AgentMode::Worker,
        status: AgentStatus::Active,
        parent_id: None,
        current_balance: 0,
        budget_period_limit: None,
        budget_period_spent: 0,
        budget_period_start: now,
        management_fee_pct: FeePct::default(),
        reputation_score: 50,
        metadata: serde_json::Map::new(),
        created_at: now,
    })
}

/// Creates `count` tasks through signed `POST /tasks`, `SEED_CONCURRENCY` at a time, and
/// returns their ids. With `start`, each is also moved `todo` -> `in_progress` (the
/// tasks that the transition scenarios move back and forth).
pub async fn create_tasks(
    addr: SocketAddr,
    agents: &Arc<Vec<Credentials>>,
    count: usize,
    start: bool,
) -> anyhow::Result<Vec<String>> {
    anyhow::ensure!(!agents.is_empty(), "no agent to sign with");
    let lanes = SEED_CONCURRENCY.min(count.max(1));
    let mut handles = Vec::with_capacity(lanes);
    for lane in 0..lanes {
        // Lane `lane` makes tasks lane, lane + lanes, ...: `count` in all.
        let share = (count + lanes - 1 - lane) / lanes;
        let credentials = agents[lane % agents.len()].clone();
        handles.push(tokio::spawn(async move {
            let mut client = Client::new(addr);
            let mut ids = Vec::with_capacity(share);
            for n in 0..share {
                let body = create_body(lane, n as u64);
                let id = created_id(&mut client, Call::post("/tasks".into(), body), &credentials)
                    .await?;
                if start {
                    let call = Call::post(
                        format!("/tasks/{id}/transition"),
                        r#"{"status":"in_progress"}"#.to_owned(),
                    );
                    created_id(&mut client, call, &credentials).await?;
                }
                ids.push(id);
            }
            anyhow::Ok(ids)
        }));
    }
    let mut ids = Vec::with_capacity(count);
    for handle in handles {
        ids.extend(handle.await??);
    }
    Ok(ids)
}

/// Sends `call` and returns `data.id` of the 2xx answer.
async fn created_id(
    client: &mut Client,
    call: Call,
    credentials: &Credentials,
) -> anyhow::Result<String> {
    let answer = client.send(&call, credentials).await?;
    if !answer.status.is_success() {
        bail!("seeding failed: {}", answer.describe(&call));
    }
    let json: serde_json::Value =
        serde_json::from_slice(&answer.body).context("seeding: the answer is not JSON")?;
    json.pointer("/data/id")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
        .context("seeding: the answer has no data.id")
}
