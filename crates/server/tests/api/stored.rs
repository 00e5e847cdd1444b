//! Stored state that no route arranges or shows, written and read through the
//! persistence's typed ports, so that every field a test touches is one the compiler
//! checks: agents and tasks changed in ways the API never allows (a balance without a
//! grant, a level, a stamp in the past), agents inserted as no route registers them,
//! capabilities of agents that may not declare any, and what the whole deployment (both
//! organizations of a test app) holds.

use muster_domain::model::{
    self, AgentCredentials, AgentHandle, AgentId, AgentMode, AgentRole, AgentStatus, Capability,
    CapabilityId, CapabilityName, Email, Escalation, LedgerEntry, Level, OrgId, Proficiency,
    TaskId, UserId, WebhookId,
};
use muster_domain::ports::{
    AgentFilter, AgentRepository, Lock, TaskFilter, TaskRepository, UserRepository, transact,
};
use muster_domain::service::ServiceError;
use muster_persistence::Database;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::helpers::{Agent, Org, TestApp};

/// More rows than any listing of a test holds.
const ALL: u32 = 1_000_000;

/// The test database, as the service's ports see it.
fn db(app: &TestApp) -> &Database {
    &app.db().db
}

/// Both organizations of the app: every row a test app stores belongs to one of them.
fn orgs(app: &TestApp) -> [OrgId; 2] {
    [OrgId::from_uuid(app.org.id), OrgId::from_uuid(app.other.id)]
}

/// `id` (a UUID in text) as a task id.
pub fn task_id(id: &str) -> TaskId {
    TaskId::from_uuid(Uuid::parse_str(id).unwrap())
}

/// The stored agent, in whichever organization it is.
pub async fn stored_agent(app: &TestApp, agent: &Agent) -> model::Agent {
    find_agent(app, agent)
        .await
        .unwrap_or_else(|| panic!("no agent {}", agent.uuid))
}

/// Changes the stored `agent` as `change` says, in one transaction: what no route may
/// do (a balance without a grant, a role, a parent, a budget period in the past).
pub async fn change_agent<F>(app: &TestApp, agent: &Agent, change: F)
where
    F: FnOnce(&mut model::Agent) + Clone + Send + 'static,
{
    let org = stored_agent(app, agent).await.org_id;
    let id = AgentId::from_uuid(agent.uuid);
    let changed = transact(db(app), move |tx| {
        Box::pin(async move {
            let mut stored = tx
                .agent(org, id, Lock::Update)
                .await?
                .ok_or_else(|| ServiceError::internal("the agent is gone"))?;
            change(&mut stored);
            Ok(tx.update_agent(&stored, OffsetDateTime::now_utc()).await?)
        })
    })
    .await
    .unwrap();
    assert!(changed, "agent {id} was not changed");
}

/// Makes `child` a child of `parent` (no route moves an agent under another).
pub async fn set_parent(app: &TestApp, child: &Agent, parent: &Agent) {
    let parent = AgentId::from_uuid(parent.uuid);
    change_agent(app, child, move |a| a.parent_id = Some(parent)).await;
}

/// Inserts an agent into `org` as a copy of its HR agent (so it shares that secret,
/// sealed for itself: a sealed secret is bound to its agent) with a new id and the
/// handle `handle`, shaped by `shape` (any field but its id and organization).
pub async fn insert_agent<F>(app: &TestApp, org: &Org, handle: &str, shape: F) -> Agent
where
    F: FnOnce(&mut model::Agent),
{
    let hr = stored_agent(app, &org.hr).await;
    let uuid = Uuid::now_v7();
    let mut agent = model::Agent {
        id: AgentId::from_uuid(uuid),
        handle: AgentHandle::new(handle).unwrap(),
        name: handle.to_owned(),
        parent_id: None,
        ..hr
    };
    shape(&mut agent);
    assert_eq!(
        (agent.id, agent.org_id),
        (AgentId::from_uuid(uuid), hr.org_id)
    );
    let encrypted_secret = app
        .server_key()
        .secret_cipher()
        .seal(org.hr.secret.as_bytes(), uuid.as_bytes())
        .unwrap();
    let handle = agent.handle.as_str().to_owned();
    let credentials = AgentCredentials {
        agent,
        encrypted_secret,
    };
    transact(db(app), move |tx| {
        Box::pin(async move { Ok(tx.insert_agent(&credentials).await?) })
    })
    .await
    .unwrap();
    Agent {
        uuid,
        handle,
        secret: org.hr.secret.clone(),
    }
}

/// An active level-5 worker (role and mode `worker`) of `org` named `handle`, as
/// [`TestApp::worker`] makes them, with what `shape` changes.
pub async fn insert_worker<F>(app: &TestApp, org: &Org, handle: &str, shape: F) -> Agent
where
    F: FnOnce(&mut model::Agent),
{
    insert_agent(app, org, handle, |agent| {
        agent.level = Level::new(5).unwrap();
        agent.role = AgentRole::Worker;
        agent.mode = AgentMode::Worker;
        agent.status = AgentStatus::Active;
        shape(agent);
    })
    .await
}

/// Gives `agent` a capability, whatever its mode or status (routes let only some
/// agents declare capabilities).
pub async fn add_capability(app: &TestApp, agent: &Agent, capability: &str, proficiency: &str) {
    let org = stored_agent(app, agent).await.org_id;
    let capability = Capability {
        id: CapabilityId::from_uuid(Uuid::now_v7()),
        org_id: org,
        agent_id: AgentId::from_uuid(agent.uuid),
        name: CapabilityName::new(capability).unwrap(),
        proficiency: Proficiency::parse(proficiency).unwrap(),
        created_at: crate::task_support::instant("2026-01-01T00:00:00.000Z"),
    };
    transact(db(app), move |tx| {
        Box::pin(async move {
            Ok(tx
                .insert_capabilities(std::slice::from_ref(&capability))
                .await?)
        })
    })
    .await
    .unwrap();
}

/// The organization `task` belongs to.
async fn org_of_task(app: &TestApp, task: TaskId) -> OrgId {
    for org in orgs(app) {
        if TaskRepository::get(db(app), org, task)
            .await
            .unwrap()
            .is_some()
        {
            return org;
        }
    }
    panic!("no task {task}");
}

/// Changes the stored `task` as `change` says, in one transaction, keeping its version
/// (as a change no route makes, it is no edit of anyone's): a stamp or a due date in
/// the past, a flag the API never sets on that task.
pub async fn change_task<F>(app: &TestApp, task: &str, change: F)
where
    F: FnOnce(&mut model::Task) + Clone + Send + 'static,
{
    let id = task_id(task);
    let org = org_of_task(app, id).await;
    let changed = transact(db(app), move |tx| {
        Box::pin(async move {
            let mut stored = tx
                .task(org, id, Lock::Update)
                .await?
                .ok_or_else(|| ServiceError::internal("the task is gone"))?;
            let version = stored.version;
            change(&mut stored);
            Ok(tx.update_task(&stored, version).await?)
        })
    })
    .await
    .unwrap();
    assert!(changed, "task {id} was not changed");
}

/// The stored user `id`, in whichever organization.
pub async fn stored_user(app: &TestApp, id: Uuid) -> model::User {
    for org in orgs(app) {
        if let Some(user) = db(app).user(org, UserId::from_uuid(id)).await.unwrap() {
            return user;
        }
    }
    panic!("no user {id}");
}

/// Changes the stored user of `org` with `email` as `change` says, in one transaction:
/// what no route may do (a role changed under a key the user already holds).
pub async fn change_user<F>(app: &TestApp, org: &Org, email: &str, change: F)
where
    F: FnOnce(&mut model::User) + Clone + Send + 'static,
{
    let org = OrgId::from_uuid(org.id);
    let email = Email::new(email).unwrap();
    let changed = transact(db(app), move |tx| {
        Box::pin(async move {
            let mut stored = tx
                .user_by_email(org, &email, Lock::Update)
                .await?
                .ok_or_else(|| ServiceError::internal("the user is gone"))?;
            change(&mut stored);
            Ok(tx.update_user(&stored, OffsetDateTime::now_utc()).await?)
        })
    })
    .await
    .unwrap();
    assert!(changed, "the user was not changed");
}

/// Changes the stored webhook `id` of `org` as `change` says, in one transaction: as a
/// row written some other way (an older version, a restore, a hand edit) would be.
pub async fn change_webhook<F>(app: &TestApp, org: &Org, id: &str, change: F)
where
    F: FnOnce(&mut model::Webhook) + Clone + Send + 'static,
{
    let org = OrgId::from_uuid(org.id);
    let id = WebhookId::from_uuid(Uuid::parse_str(id).unwrap());
    let changed = transact(db(app), move |tx| {
        Box::pin(async move {
            let mut stored = tx
                .webhook(org, id, Lock::Update)
                .await?
                .ok_or_else(|| ServiceError::internal("the hook is gone"))?;
            change(&mut stored);
            Ok(tx.update_webhook(&stored).await?)
        })
    })
    .await
    .unwrap();
    assert!(changed, "hook {id} was not changed");
}

/// Every agent of `org`, in any status, as stored.
pub async fn agents_of(app: &TestApp, org: &Org) -> Vec<model::Agent> {
    let filter = AgentFilter::default();
    AgentRepository::list(db(app), OrgId::from_uuid(org.id), &filter, None, ALL)
        .await
        .unwrap()
}

/// Every agent of the deployment, as stored.
pub async fn all_agents(app: &TestApp) -> Vec<model::Agent> {
    let mut all = agents_of(app, &app.org).await;
    all.extend(agents_of(app, &app.other).await);
    all
}

/// The stored agent `agent`, if it is still anywhere.
pub async fn find_agent(app: &TestApp, agent: &Agent) -> Option<model::Agent> {
    db(app)
        .anywhere(AgentId::from_uuid(agent.uuid))
        .await
        .unwrap()
}

/// Every stored capability of `agent`, in whichever organization.
pub async fn all_capabilities_of(app: &TestApp, agent: &Agent) -> Vec<Capability> {
    let mut all = Vec::new();
    for org in orgs(app) {
        all.extend(
            db(app)
                .capabilities(org, AgentId::from_uuid(agent.uuid))
                .await
                .unwrap(),
        );
    }
    all
}

/// Every ledger row of `agent` as stored, newest first.
pub async fn ledger_of(app: &TestApp, agent: &model::Agent) -> Vec<LedgerEntry> {
    db(app)
        .ledger(agent.org_id, agent.id, None, ALL)
        .await
        .unwrap()
}

/// Every ledger row of the deployment, as stored.
pub async fn all_ledger(app: &TestApp) -> Vec<LedgerEntry> {
    let mut rows = Vec::new();
    for agent in all_agents(app).await {
        rows.extend(ledger_of(app, &agent).await);
    }
    rows
}

/// How many reputation events the deployment stores.
pub async fn reputation_event_total(app: &TestApp) -> u64 {
    let mut total = 0;
    for agent in all_agents(app).await {
        let (_, of_agent) = db(app)
            .reputation_history(agent.org_id, agent.id, 1, 0)
            .await
            .unwrap();
        total += of_agent;
    }
    total
}

/// Every escalation of the deployment, as stored.
pub async fn all_escalations(app: &TestApp) -> Vec<Escalation> {
    let mut all = Vec::new();
    for org in orgs(app) {
        let tasks = TaskRepository::list(db(app), org, &TaskFilter::default(), None, ALL)
            .await
            .unwrap();
        for task in tasks {
            all.extend(db(app).escalations(org, task.id, None, ALL).await.unwrap());
        }
    }
    all
}
