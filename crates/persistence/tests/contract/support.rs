//! Fixtures shared by the contract tests: seeded organizations, tasks and events built
//! with millisecond timestamps and UUID v7 ids, and a raw connection for what no port
//! exposes (the users table as stored, tampering with the audit log). Users and their
//! credentials are in [`credentials`].

pub mod credentials;

use diesel::QueryableByName;
use diesel::sql_types::Text;
use muster_domain::model::{
    Agent, AgentCredentials, AgentHandle, AgentId, AgentMode, AgentRole, AgentStatus, Author,
    Email, Event, EventId, EventSeverity, FeePct, Level, Metadata, OrgId, OrgName, Organization,
    RewardPayer, Tags, Task, TaskId, TaskPriority, TaskStatus, Title, User, UserId, UserRole,
    event_types,
};
use muster_domain::ports::OrganizationRepository;
use muster_domain::service::NewOrganization;

use crate::writes::Writes;
use muster_persistence::{Database, DatabaseUrl};
use serde_json::json;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// A value the work of a unit of work takes on its one run. A unit of work may run its
/// work more than once (the pre-hook gate does), so what the work captures is `Clone`:
/// this shares one value that is not (a channel's end, a closure) between the copies.
pub struct Once<T>(std::sync::Arc<std::sync::Mutex<Option<T>>>);

impl<T> Clone for Once<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T> Once<T> {
    /// Holds `value` until it is taken.
    pub fn new(value: T) -> Self {
        Self(std::sync::Arc::new(std::sync::Mutex::new(Some(value))))
    }

    /// The value; panics when taken already (these units of work run once).
    pub fn take(&self) -> T {
        self.0.lock().unwrap().take().expect("taken once")
    }
}

/// Every port the contract covers, as one bound: the two database engines
/// ([`Database`]) and the in-memory store implement them all.
pub trait Store:
    muster_domain::ports::UnitOfWork
    + muster_domain::ports::TaskRepository
    + muster_domain::ports::AgentRepository
    + muster_domain::ports::EventLog
    + muster_domain::ports::IdempotencyStore
    + muster_domain::ports::NonceStore
    + OrganizationRepository
    + muster_domain::ports::UserRepository
    + muster_domain::ports::WebhookRepository
    + muster_domain::ports::DeliveryQueue
    + muster_domain::ports::CodeHostRepository
    + muster_domain::ports::InboundKeyRepository
    + muster_domain::ports::TreasuryRepository
    + muster_domain::ports::RunRepository
    + muster_domain::ports::ProjectRepository
    + muster_domain::ports::RoutineRepository
    + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> Store for S where
    S: muster_domain::ports::UnitOfWork
        + muster_domain::ports::TaskRepository
        + muster_domain::ports::AgentRepository
        + muster_domain::ports::EventLog
        + muster_domain::ports::IdempotencyStore
        + muster_domain::ports::NonceStore
        + OrganizationRepository
        + muster_domain::ports::UserRepository
        + muster_domain::ports::WebhookRepository
        + muster_domain::ports::DeliveryQueue
        + muster_domain::ports::CodeHostRepository
        + muster_domain::ports::InboundKeyRepository
        + muster_domain::ports::TreasuryRepository
        + muster_domain::ports::RunRepository
        + muster_domain::ports::ProjectRepository
        + muster_domain::ports::RoutineRepository
        + Clone
        + Send
        + Sync
        + 'static
{
}

/// Now, in UTC, truncated to milliseconds (the precision every timestamp is stored with).
pub fn now_ms() -> OffsetDateTime {
    let now = OffsetDateTime::now_utc();
    now.replace_millisecond(now.millisecond())
        .expect("a millisecond is in range")
}

/// A fixed instant plus `minutes`: deterministic timestamps for ordering and date filters.
pub fn at_minute(minutes: i64) -> OffsetDateTime {
    time::macros::datetime!(2026-03-01 12:00:00.123 UTC) + Duration::minutes(minutes)
}

/// A fresh time-ordered id.
pub fn new_id() -> Uuid {
    Uuid::now_v7()
}

/// A deployment-unique agent handle.
pub fn unique_handle(prefix: &str) -> AgentHandle {
    AgentHandle::new(&format!("{prefix}-{}", new_id().simple())).expect("valid handle")
}

/// What [`seed_org`] created.
#[derive(Debug, Clone)]
pub struct Seed {
    /// The organization.
    pub org: OrgId,
    /// Its HR agent.
    pub hr: AgentId,
    /// The HR agent's `agentId`.
    pub handle: AgentHandle,
    /// Everything that was written, for comparisons.
    pub new: NewOrganization,
}

/// A complete [`NewOrganization`] like `muster bootstrap` builds, with every optional
/// agent field set and two audit events (system actor, so `actor_id` is null). The secret
/// holds bytes that are not valid UTF-8 (and a NUL) to prove it is stored as bytes.
pub fn new_organization(
    handle: AgentHandle,
    is_default: bool,
    parent: Option<AgentId>,
) -> NewOrganization {
    let now = now_ms();
    let org_id = OrgId::from_uuid(new_id());
    let admin = User::new(
        UserId::from_uuid(new_id()),
        org_id,
        Email::new(&format!("admin-{}@example.com", new_id().simple())).expect("email"),
        "Administrator".into(),
        UserRole::Admin,
        "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        now,
    );
    let metadata = json!({
        "team": "people",
        "limits": { "daily": 5, "ratio": 0.25, "tags": ["a", "b"], "none": null },
        "enabled": true,
        "unicode": "Zürich ✓",
    });
    let serde_json::Value::Object(metadata) = metadata else {
        unreachable!()
    };
    let agent = Agent {
        id: AgentId::from_uuid(new_id()),
        org_id,
        handle,
        name: "HR of Contract".into(),
        level: Level::MAX,
        model: Some("claude-test".into()),
        role: AgentRole::Hr,
        mode: AgentMode::Worker,
        status: AgentStatus::Active,
        parent_id: parent,
        current_balance: 5_000_000_000, // beyond i32
        budget_period_limit: Some(9_000_000_000),
        budget_period_spent: 42,
        budget_period_start: now - Duration::days(3),
        reserved_credits: 0,
        budget_exhausted: false,
        management_fee_pct: FeePct::new(15).expect("fee"),
        reputation_score: 73,
        metadata,
        created_at: now,
    };
    let events = vec![
        Event {
            event_type: event_types::USER_CREATED.into(),
            entity_type: "user".into(),
            entity_id: admin.id.as_uuid(),
            payload: json!({ "email": admin.email.as_str(), "role": "admin" }),
            ..event(org_id, event_types::USER_CREATED, now)
        },
        Event {
            entity_type: "agent".into(),
            entity_id: agent.id.as_uuid(),
            payload: json!({ "agentId": agent.handle.as_str(), "role": "hr", "level": 10 }),
            ..event(org_id, event_types::AGENT_REGISTERED, now)
        },
    ];
    NewOrganization {
        organization: Organization {
            id: org_id,
            name: OrgName::new("Contract Org").expect("name"),
            is_default,
            created_at: now,
        },
        admin,
        hr_agent: AgentCredentials {
            agent,
            encrypted_secret: vec![0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, 0x00],
        },
        // Not stored by `Writes::create`: a treasury has no row until it is locked.
        treasury: muster_domain::model::Treasury::empty(org_id),
        treasury_grant: None,
        events,
    }
}

/// Creates an organization (the default one when it is the first) with its admin and HR
/// agent through [`OrganizationRepository::create`].
pub async fn seed_org(db: &impl Store) -> Seed {
    seed_org_with(db, unique_handle("hr"), None).await
}

/// Like [`seed_org`], with a chosen handle and HR parent agent.
pub async fn seed_org_with(db: &impl Store, handle: AgentHandle, parent: Option<AgentId>) -> Seed {
    let is_default = !db.any_exists().await.expect("any_exists");
    let new = new_organization(handle, is_default, parent);
    db.create(&new).await.expect("create organization");
    Seed {
        org: new.organization.id,
        hr: new.hr_agent.agent.id,
        handle: new.hr_agent.agent.handle.clone(),
        new,
    }
}

/// A task of `org` with every optional field empty.
pub fn task(org: OrgId) -> Task {
    let title = Title::new("Contract task").expect("title");
    Task::new(TaskId::from_uuid(new_id()), org, title, now_ms())
}

/// A task of `seed`'s organization with every optional field set.
pub fn full_task(seed: &Seed, parent: TaskId) -> Task {
    Task {
        description: Some(
            muster_domain::model::Description::new(
                "# Body\n\nwith *markdown*, ünïcode, 'quotes'".into(),
            )
            .expect("description"),
        ),
        status: TaskStatus::InProgress,
        priority: TaskPriority::Urgent,
        assignee_id: Some(seed.hr),
        creator: Some(Author::Agent(seed.hr)),
        approved_by: Some(seed.hr.as_uuid()),
        approved_at: Some(at_minute(60)),
        status_changed_at: at_minute(61),
        last_activity_at: at_minute(62),
        lease_expires_at: None,
        parent_task_id: Some(parent),
        approval_required: true,
        due_at: Some(at_minute(60 * 24 * 30)),
        tags: Tags::new(vec!["q4".into(), "ops".into(), "ünï".into()]).expect("tags"),
        metadata: Metadata::new(json!({
            "source": { "system": "jira", "ids": [1, 2, 3], "nested": { "deep": [{ "x": null }] } },
            "estimate": 2.5,
            "flag": false,
            "big": 9_007_199_254_740_993_i64,
        }))
        .expect("metadata"),
        version: 3,
        result: Some(
            muster_domain::model::TaskResult::new("Done: see *the PR*, ünïcode".into())
                .expect("result"),
        ),
        outcome: Some(muster_domain::model::TaskOutcome::Rejected),
        reward: 1_000_000_000,
        reward_payer: RewardPayer::Agent(seed.hr),
        ..task(seed.org)
    }
}

/// An info event of `org` about a random task, by the system, at `at`.
pub fn event(org: OrgId, event_type: &str, at: OffsetDateTime) -> Event {
    Event {
        id: EventId::from_uuid(new_id()),
        org_id: org,
        event_type: event_type.into(),
        actor_id: None,
        entity_type: "task".into(),
        entity_id: new_id(),
        severity: EventSeverity::Info,
        payload: json!({}),
        created_at: at,
    }
}

/// Changes the stored agent `id` of `org` with `change`, in one unit of work through
/// the ports (what an operator's command would do).
pub async fn change_agent(
    db: &impl Store,
    org: OrgId,
    id: AgentId,
    change: impl FnOnce(&mut Agent) + Send + 'static,
) {
    let change = Once::new(change);
    muster_domain::ports::transact(db, move |tx| {
        Box::pin(async move {
            let mut agent = tx
                .agent(org, id, muster_domain::ports::Lock::Update)
                .await?
                .expect("agent");
            (change.take())(&mut agent);
            assert!(tx.update_agent(&agent, now_ms()).await?);
            Ok(())
        })
    })
    .await
    .expect("agent changed");
}

/// Runs one statement on a connection of its own, outside the pool and the ports.
pub async fn raw_execute(db: &Database, sql: &str) -> Result<usize, diesel::result::Error> {
    match db.url() {
        DatabaseUrl::Postgres(url) => {
            use diesel_async::AsyncConnection as _;
            let mut conn = diesel_async::AsyncPgConnection::establish(url)
                .await
                .expect("raw pg");
            diesel_async::RunQueryDsl::execute(diesel::sql_query(sql), &mut conn).await
        }
        DatabaseUrl::Sqlite(path) => {
            let (path, sql) = (path.to_string_lossy().into_owned(), sql.to_owned());
            tokio::task::spawn_blocking(move || {
                use diesel::Connection as _;
                use diesel::connection::SimpleConnection as _;
                let mut conn = diesel::SqliteConnection::establish(&path).expect("raw sqlite");
                conn.batch_execute("PRAGMA busy_timeout = 5000;")?;
                diesel::RunQueryDsl::execute(diesel::sql_query(sql), &mut conn)
            })
            .await
            .expect("raw sqlite task")
        }
    }
}

/// A `users` row as text, read past the ports.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct UserText {
    #[diesel(sql_type = Text)]
    pub id: String,
    #[diesel(sql_type = Text)]
    pub email: String,
    #[diesel(sql_type = Text)]
    pub name: String,
    #[diesel(sql_type = Text)]
    pub role: String,
    #[diesel(sql_type = Text)]
    pub password_hash: String,
}

/// The users of `org`, read through a raw connection.
pub async fn raw_users(db: &Database, org: OrgId) -> Vec<UserText> {
    let sql = format!(
        "SELECT CAST(id AS TEXT) AS id, email, name, role, password_hash FROM users \
         WHERE org_id = '{org}' ORDER BY id"
    );
    match db.url() {
        DatabaseUrl::Postgres(url) => {
            use diesel_async::AsyncConnection as _;
            let mut conn = diesel_async::AsyncPgConnection::establish(url)
                .await
                .expect("raw pg");
            diesel_async::RunQueryDsl::load(diesel::sql_query(sql), &mut conn)
                .await
                .expect("users")
        }
        DatabaseUrl::Sqlite(path) => {
            let path = path.to_string_lossy().into_owned();
            tokio::task::spawn_blocking(move || {
                use diesel::Connection as _;
                let mut conn = diesel::SqliteConnection::establish(&path).expect("raw sqlite");
                diesel::RunQueryDsl::load(diesel::sql_query(sql), &mut conn).expect("users")
            })
            .await
            .expect("raw sqlite task")
        }
    }
}

/// A write still open: its transaction appended events and waits for [`release`].
///
/// [`release`]: OpenWrite::release
pub struct OpenWrite {
    release: tokio::sync::oneshot::Sender<()>,
    done: tokio::task::JoinHandle<()>,
}

impl OpenWrite {
    /// Starts a unit of work that appends `events`, and returns once they are written
    /// (not committed): the transaction stays open until [`Self::release`].
    pub async fn start(db: &impl Store, events: Vec<Event>) -> Self {
        let (written_tx, written) = tokio::sync::oneshot::channel::<()>();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let (written_tx, released) = (Once::new(written_tx), Once::new(released));
        let db = db.clone();
        let done = tokio::spawn(async move {
            muster_domain::ports::transact(&db, move |tx| {
                Box::pin(async move {
                    tx.append_events(&events).await?;
                    let _ = written_tx.take().send(());
                    let _ = released.take().await;
                    Ok(())
                })
            })
            .await
            .unwrap();
        });
        written.await.unwrap();
        Self { release, done }
    }

    /// Lets the transaction commit, and waits until it has.
    pub async fn release(self) {
        self.release.send(()).unwrap();
        self.done.await.unwrap();
    }
}
