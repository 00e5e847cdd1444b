//! Creating tasks through an inbound webhook key (decision D-80): the key and the
//! optional body signature checked first, then one task or a batch of at most
//! [`MAX_BATCH`], all in one transaction, merged with the key's defaults.

use serde_json::{Map, Value};

use super::{InboundService, ServiceError};
use crate::ValidationError;
use crate::model::{
    Actor, ActorKind, AgentId, Description, Event, EventId, InboundKey, Metadata, OrgId, Tags,
    Task, TaskId, TaskPriority, Title, Treasury,
};
use crate::ports::{LedgerTx, Lock, transact};
use crate::service::Unauthorized;
use crate::service::tasks::escrow::{Books, Purse, take};
use crate::service::tasks::{check_new_task, created_event};
use time::OffsetDateTime;

/// Most tasks one batch request may create.
pub const MAX_BATCH: usize = 100;

/// One task as another system sent it, each field checked on its own.
#[derive(Debug, Clone, PartialEq)]
pub struct InboundTask {
    /// Its title (at most 500 characters).
    pub title: Title,
    /// Its description.
    pub description: Option<Description>,
    /// Overrides the key's default priority.
    pub priority: Option<TaskPriority>,
    /// Added to the key's default tags.
    pub tags: Vec<String>,
    /// Overrides the key's default assignee.
    pub assignee_id: Option<AgentId>,
    /// Arbitrary JSON; `source` and `inboundWebhookId` are set over it.
    pub metadata: Option<Metadata>,
}

impl InboundTask {
    /// A task titled `title` that takes everything else from its key's defaults: no
    /// description, tags or metadata of its own.
    pub fn new(title: Title) -> Self {
        Self {
            title,
            description: None,
            priority: None,
            tags: Vec::new(),
            assignee_id: None,
            metadata: None,
        }
    }
}

impl InboundService {
    /// The enabled key record of `key`, after checking `signature` (the bare lowercase
    /// hex HMAC-SHA256 of `body` under the key's secret) when one came. An unknown,
    /// rotated-away or disabled key is refused before the signature is looked at.
    pub async fn authenticate(
        &self,
        key: &str,
        signature: Option<&str>,
        body: &[u8],
    ) -> Result<InboundKey, ServiceError> {
        if !InboundKey::is_key(key) {
            return Err(ServiceError::InboundKeyNotFound);
        }
        let record = self
            .keys
            .by_key(key)
            .await?
            .filter(|record| record.enabled)
            .ok_or(ServiceError::InboundKeyNotFound)?;
        if let Some(signature) = signature {
            let secret = self
                .vault
                .open(
                    InboundKey::SECRET_PURPOSE,
                    record.id.as_uuid(),
                    &record.sealed_secret,
                )
                .map_err(ServiceError::internal)?;
            let expected = self.signer.sign_hex(secret.as_bytes(), body);
            if !crate::rules::constant_time::eq(expected.as_bytes(), signature.as_bytes()) {
                return Err(Unauthorized::InvalidWebhookSignature.into());
            }
        }
        Ok(record)
    }

    /// Creates `items` through `key`, all or none, in order. With `batch`, a refusal names
    /// the item (`tasks[3].tags ...`). Tasks have no creator and `metadata.source =
    /// "inbound_webhook"`; each gets a `task.created` event by the service itself.
    pub async fn ingest(
        &self,
        key: &InboundKey,
        items: Vec<InboundTask>,
        batch: bool,
    ) -> Result<Vec<Task>, ServiceError> {
        if batch && (items.is_empty() || items.len() > MAX_BATCH) {
            return Err(
                ValidationError::new(format!("tasks must hold 1 to {MAX_BATCH} items")).into(),
            );
        }
        let now = self.clock.now();
        let mut tasks = Vec::with_capacity(items.len());
        for (index, item) in items.into_iter().enumerate() {
            let task = self.merged(key, item).map_err(|err| {
                if batch {
                    ValidationError::new(format!("tasks[{index}].{}", err.message()))
                } else {
                    err
                }
            })?;
            tasks.push(task);
        }
        let (org, id, value) = (key.org_id, key.id, key.key.clone());
        let (service, reward) = (self.clone(), self.reward);
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                // Rotated, disabled or deleted since it was read: refused like any other.
                // Locked for update, not share: the row is touched below, and two
                // ingests that both held a share lock and then both updated it would
                // deadlock on PostgreSQL (schemathesis found it: two parallel batches).
                let current = tx.inbound_key(org, id, Lock::Update).await?;
                if !current.is_some_and(|k| k.enabled && k.key == value) {
                    return Err(ServiceError::InboundKeyNotFound);
                }
                for task in &tasks {
                    check_new_task(tx, task).await?;
                }
                let mut tasks = tasks;
                let (events, books, treasury) =
                    service.fund(tx, org, &mut tasks, reward, now).await?;
                for task in &tasks {
                    tx.insert_task(task).await?;
                }
                if let Some(treasury) = &treasury {
                    tx.update_treasury(treasury).await?;
                }
                books.write(tx).await?;
                tx.append_events(&events).await?;
                tx.touch_inbound_key(id, now).await?;
                Ok(tasks)
            })
        })
        .await
    }

    /// Escrows the default `reward` of each of `tasks` from the treasury (decision
    /// D-101), in order, while it can fund them (locked last, after the assignees); the
    /// rest get reward 0 and their `task.created` says so. Answers the events, the
    /// ledger rows and the treasury when it moved.
    async fn fund<T: LedgerTx + ?Sized>(
        &self,
        tx: &mut T,
        org: OrgId,
        tasks: &mut [Task],
        reward: i64,
        now: OffsetDateTime,
    ) -> Result<(Vec<Event>, Books, Option<Treasury>), ServiceError> {
        let system = Actor {
            org_id: org,
            kind: ActorKind::System,
        };
        let mut books = Books::default();
        let mut escrows = Vec::new();
        let mut treasury = None;
        if reward > 0 && tx.treasury(org, Lock::Nothing).await?.balance >= reward {
            let locked = treasury.insert(tx.treasury(org, Lock::Update).await?);
            for task in tasks.iter_mut() {
                let purse = Purse::Treasury(&mut *locked);
                if let Ok(event) = take(
                    self.ids.as_ref(),
                    &system,
                    purse,
                    task,
                    reward,
                    &mut books,
                    now,
                ) {
                    task.reward = reward;
                    escrows.push(event);
                }
            }
        }
        let mut events: Vec<Event> = tasks
            .iter()
            .map(|task| {
                let unfunded = (reward > 0 && task.reward == 0).then_some(reward);
                Event::record(
                    EventId::from_uuid(self.ids.new_id()),
                    task.org_id,
                    None,
                    task.id.as_uuid(),
                    now,
                    &created_event(task, unfunded),
                )
            })
            .collect();
        events.extend(escrows);
        Ok((
            events,
            books,
            treasury.filter(|t| t.updated_at == Some(now)),
        ))
    }

    /// The task `item` makes with `key`'s defaults.
    fn merged(&self, key: &InboundKey, item: InboundTask) -> Result<Task, ValidationError> {
        let mut tags = key.default_tags.as_slice().to_vec();
        tags.extend(item.tags);
        let tags = Tags::new(tags)?;
        let mut metadata: Map<String, Value> =
            item.metadata.map_or_else(Map::new, |m| m.as_map().clone());
        metadata.insert("source".into(), Value::from("inbound_webhook"));
        metadata.insert(
            "inboundWebhookId".into(),
            Value::from(key.id.as_uuid().to_string()),
        );
        let metadata = Metadata::new(Value::Object(metadata))?;
        let now = self.clock.now();
        let id = TaskId::from_uuid(self.ids.new_id());
        Ok(Task {
            description: item.description,
            priority: item.priority.unwrap_or(key.default_priority),
            assignee_id: item.assignee_id.or(key.default_agent_id),
            tags,
            metadata,
            ..Task::new(id, key.org_id, item.title, now)
        })
    }
}
