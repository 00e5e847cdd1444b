//! The data the scenarios read: agents to sign with and tasks to fetch.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, bail};
use muster_auth::keys::{ServerKey, generate_agent_secret};
use muster_domain::model::{
    Agent, AgentCredentials, AgentHandle, AgentId, AgentRegistered, AgentSecret, AuditEvent,
    CreditKind, Event, EventId, LedgerEntry, LedgerEntryId, Level, OrgId,
};
use muster_domain::ports::{Lock, SecretSealer, transact};
use muster_domain::service::ServiceError;
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

/// Credits each bench agent starts with, so that the transfer scenario never runs dry.
pub const STARTING_CREDITS: i64 = 1_000_000;

/// The agents the load is signed with (worker `i` uses agent `i % len`) and their UUIDs:
/// the HR agent of bootstrap and `wanted - 1` active level-10 agents of its organization
/// (level 10 may transfer credits to anyone), each holding [`STARTING_CREDITS`] from a
/// grant. They are written in one unit of work through the persistence port, as the
/// register and grant use cases write them (`Agent::new` gives the D-50 defaults), so
/// that seeding 50 agents costs no 50 signed round trips.
pub async fn seed_agents(seed: &AgentSeed<'_>) -> anyhow::Result<(Vec<Credentials>, Vec<String>)> {
    let url = DatabaseUrl::parse(seed.database_url).context("bench database URL")?;
    let db = Database::connect(&url, PoolOptions::default())
        .await
        .context("opening the bench database")?;
    let key = ServerKey::parse(seed.secret_key).context("bench server key")?;
    let cipher = key.secret_cipher();
    let org = OrgId::from_uuid(
        Uuid::parse_str(&seed.bootstrap.org_id).context("bootstrap printed a bad orgId")?,
    );
    let hr_id = AgentId::from_uuid(
        Uuid::parse_str(&seed.bootstrap.hr_agent_id).context("bootstrap printed a bad hr id")?,
    );
    let now = muster_domain::model::instant::to_millis(OffsetDateTime::now_utc());
    let mut credentials = vec![seed.bootstrap.hr_agent.clone()];
    let mut ids = vec![seed.bootstrap.hr_agent_id.clone()];
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
        events.push(Event::record(
            EventId::from_uuid(Uuid::now_v7()),
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
        ids.push(agent.id.as_uuid().to_string());
        rows.push(AgentCredentials {
            agent,
            encrypted_secret: sealed,
        });
    }
    transact(&db, move |tx| {
        Box::pin(async move {
            let mut hr = tx
                .agent(org, hr_id, Lock::Update)
                .await?
                .ok_or_else(|| ServiceError::internal("the bootstrap HR agent is missing"))?;
            hr.current_balance = STARTING_CREDITS;
            tx.update_agent(&hr, now).await?;
            let mut grants = vec![starting_grant(&hr, now)];
            for row in &mut rows {
                row.agent.current_balance = STARTING_CREDITS;
                tx.insert_agent(row).await?;
                grants.push(starting_grant(&row.agent, now));
            }
            tx.insert_ledger_entries(&grants).await?;
            tx.append_events(&events).await?;
            Ok(())
        })
    })
    .await
    .map_err(|err| anyhow::anyhow!("writing the bench agents: {err}"))?;
    Ok((credentials, ids))
}

/// The ledger row of the starting credits of `agent`.
fn starting_grant(agent: &Agent, now: OffsetDateTime) -> LedgerEntry {
    LedgerEntry {
        id: LedgerEntryId::from_uuid(Uuid::now_v7()),
        org_id: agent.org_id,
        agent_id: agent.id,
        kind: CreditKind::Granted,
        amount: STARTING_CREDITS,
        balance_after: STARTING_CREDITS,
        reason: Some("bench starting credits".to_owned()),
        task_id: None,
        counterparty_id: None,
        created_at: now,
    }
}

/// Active level-10 agent number `n` of `org`.
fn worker(org: OrgId, n: usize, now: OffsetDateTime) -> anyhow::Result<Agent> {
    let handle = format!("bench-worker-{n:02}-{}", Uuid::now_v7().simple());
    let mut agent = Agent::new(
        AgentId::from_uuid(Uuid::now_v7()),
        org,
        AgentHandle::new(&handle).map_err(|e| anyhow::anyhow!("{e}"))?,
        format!("Bench worker {n}"),
        now,
        now,
    );
    agent.level = Level::MAX;
    Ok(agent)
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

/// A run of its own for each of `count` workers (worker `w` signs as agent
/// `w % agents`): it claims one of the seeded tasks with an hour's lease and starts a
/// run of it.
pub async fn own_runs(
    addr: SocketAddr,
    agents: &Arc<Vec<Credentials>>,
    count: usize,
) -> anyhow::Result<Vec<super::scenario::OwnTask>> {
    anyhow::ensure!(!agents.is_empty(), "no agent to sign with");
    let mut client = Client::new(addr);
    let mut runs = Vec::with_capacity(count);
    for worker in 0..count {
        let credentials = &agents[worker % agents.len()];
        let claim = Call::post("/tasks/claim".into(), r#"{"leaseSeconds":3600}"#.to_owned());
        let task = created_id(&mut client, claim, credentials).await?;
        let start = Call::post(
            format!("/tasks/{task}/runs"),
            r#"{"adapter":"bench","model":"bench-model"}"#.to_owned(),
        );
        let run = created_id(&mut client, start, credentials).await?;
        runs.push(super::scenario::OwnTask {
            id: task,
            blocked: false,
            push: None,
            run: Some(run),
        });
    }
    Ok(runs)
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
