//! Outbound webhooks and their outbox (decisions D-81 to D-85): hooks stored and read
//! back, deliveries queued with the events for exactly the subscribed, enabled post-hooks
//! of the event's organization, due in event order, and a hook leased to one worker at a
//! time.

use crate::support::Store;
use muster_domain::model::{
    DeliveryAttempt, DeliveryAttemptId, Event, HookEvents, HookName, HookTimeout, HookType,
    HookUrl, OrgId, PUSH_EVENT_TYPES, PushConfigId, RemoteAgentLink, Task, TaskPush, Webhook,
    WebhookId,
};
use muster_domain::ports::{DeliveryQueue, Lock, WebhookRepository, transact};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::support::{event, new_id, now_ms, seed_org, task};
use crate::writes::Writes as _;

contract_tests!(
    hooks_round_trip,
    deliveries_follow_subscriptions,
    due_deliveries_come_in_event_order_when_due,
    one_worker_holds_a_hook_at_a_time,
    leases_step_past_queues_with_nothing_due,
    the_log_pages_and_goes_with_its_hook,
    remote_channels_hear_their_assignees_tasks_once,
    push_configs_hear_their_tasks_moves,
    an_append_the_store_refuses_queues_nothing,
);

fn hook(org: OrgId, events: &[&str], hook_type: HookType, enabled: bool) -> Webhook {
    let now = now_ms();
    Webhook {
        id: WebhookId::from_uuid(new_id()),
        org_id: org,
        name: HookName::new("contract").unwrap(),
        url: HookUrl::new("https://example.com/hook").unwrap(),
        sealed_secret: Some(vec![1, 2, 3]),
        events: HookEvents::new(events.iter().map(|e| (*e).to_owned()).collect()).unwrap(),
        hook_type,
        can_block: hook_type == HookType::Pre,
        timeout: HookTimeout::DEFAULT,
        enabled,
        consecutive_failures: 0,
        last_error: None,
        push: None,
        remote: None,
        created_at: now,
        updated_at: now,
    }
}

/// An event of type `kind` about `task`, at `at`.
fn task_event(task: &Task, kind: &str, at: OffsetDateTime) -> Event {
    Event {
        entity_id: task.id.as_uuid(),
        ..event(task.org_id, kind, at)
    }
}

async fn insert(db: &impl Store, hook: &Webhook) {
    let hook = hook.clone();
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.insert_webhook(&hook).await?) })
    })
    .await
    .unwrap();
}

async fn append(db: &impl Store, events: Vec<Event>) {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.append_events(&events).await?) })
    })
    .await
    .unwrap();
}

async fn due_ids(db: &impl Store, hook: &Webhook) -> Vec<Uuid> {
    DeliveryQueue::due(db, hook.id, now_ms() + Duration::seconds(1), 100)
        .await
        .unwrap()
        .into_iter()
        .map(|pending| pending.event.id.as_uuid())
        .collect()
}

async fn hooks_round_trip(db: &impl Store) {
    let seed = seed_org(db).await;
    let mut stored = hook(seed.org, &["task.created", "*"], HookType::Post, true);
    insert(db, &stored).await;
    assert_eq!(
        WebhookRepository::get(db, seed.org, stored.id)
            .await
            .unwrap(),
        Some(stored.clone())
    );
    let other = seed_org(db).await;
    assert_eq!(
        WebhookRepository::get(db, other.org, stored.id)
            .await
            .unwrap(),
        None
    );
    assert!(
        WebhookRepository::list(db, other.org)
            .await
            .unwrap()
            .is_empty()
    );

    stored.name = HookName::new("renamed").unwrap();
    stored.events = HookEvents::new(vec!["task.done".into()]).unwrap();
    stored.sealed_secret = None;
    stored.enabled = false;
    let changed = stored.clone();
    let updated = transact(db, move |tx| {
        Box::pin(async move {
            let found = tx.update_webhook(&changed).await?;
            let read = tx.webhook(changed.org_id, changed.id, Lock::Update).await?;
            Ok((found, read))
        })
    })
    .await
    .unwrap();
    assert_eq!(updated, (true, Some(stored.clone())));
    let newer = hook(seed.org, &["*"], HookType::Pre, true);
    insert(db, &newer).await;
    let listed: Vec<WebhookId> = WebhookRepository::list(db, seed.org)
        .await
        .unwrap()
        .iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(listed, [newer.id, stored.id], "newest first");
    let pre = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.pre_hooks(seed.org).await?) })
    })
    .await
    .unwrap();
    assert_eq!(pre, [newer], "enabled pre-hooks only");
}

async fn deliveries_follow_subscriptions(db: &impl Store) {
    let seed = seed_org(db).await;
    let other = seed_org(db).await;
    let created = hook(seed.org, &["task.created"], HookType::Post, true);
    let every = hook(seed.org, &["*", "task.created"], HookType::Post, true);
    let off = hook(seed.org, &["*"], HookType::Post, false);
    let pre = hook(seed.org, &["*"], HookType::Pre, true);
    let elsewhere = hook(other.org, &["*"], HookType::Post, true);
    for h in [&created, &every, &off, &pre, &elsewhere] {
        insert(db, h).await;
    }
    let now = now_ms();
    let a = event(seed.org, "task.created", now);
    let b = event(seed.org, "task.done", now);
    append(db, vec![a.clone(), b.clone()]).await;
    assert_eq!(due_ids(db, &created).await, [a.id.as_uuid()]);
    let mut both = due_ids(db, &every).await;
    both.sort_unstable();
    let mut expected = vec![a.id.as_uuid(), b.id.as_uuid()];
    expected.sort_unstable();
    assert_eq!(both, expected, "once each, though two subscriptions match");
    assert!(
        due_ids(db, &off).await.is_empty(),
        "disabled hooks get nothing"
    );
    assert!(
        due_ids(db, &pre).await.is_empty(),
        "pre-hooks are not in the outbox"
    );
    assert!(
        due_ids(db, &elsewhere).await.is_empty(),
        "other organizations' events never"
    );
    // A failed transaction queues nothing.
    let c = event(seed.org, "task.created", now);
    let failed = transact(db, move |tx| {
        Box::pin(async move {
            tx.append_events(&[c]).await?;
            Err::<(), _>(muster_domain::service::ServiceError::internal(
                "rolled back",
            ))
        })
    })
    .await;
    assert!(failed.is_err());
    assert_eq!(due_ids(db, &created).await, [a.id.as_uuid()]);
}

async fn due_deliveries_come_in_event_order_when_due(db: &impl Store) {
    let seed = seed_org(db).await;
    let h = hook(seed.org, &["*"], HookType::Post, true);
    insert(db, &h).await;
    let base = now_ms() - Duration::minutes(1);
    let events: Vec<Event> = (0..4)
        .map(|n| event(seed.org, "task.created", base + Duration::seconds(n)))
        .collect();
    // Appended out of order, delivered in event order.
    append(db, vec![events[2].clone(), events[0].clone()]).await;
    append(db, vec![events[3].clone(), events[1].clone()]).await;
    let order: Vec<Uuid> = events.iter().map(|e| e.id.as_uuid()).collect();
    assert_eq!(due_ids(db, &h).await, order);

    let (first, second) = (events[0].id, events[1].id);
    let later = now_ms() + Duration::minutes(10);
    let id = h.id;
    transact(db, move |tx| {
        Box::pin(async move {
            tx.reschedule_delivery(id, first, 1, later).await?;
            tx.finish_deliveries(id, &[second]).await?;
            Ok(())
        })
    })
    .await
    .unwrap();
    assert_eq!(
        due_ids(db, &h).await,
        order[2..],
        "rescheduled is not due, finished is gone"
    );
    let due_later = DeliveryQueue::due(db, h.id, later, 100).await.unwrap();
    assert_eq!(due_later[0].event.id, first);
    assert_eq!(due_later[0].attempts, 1);
    assert_eq!(
        due_later[0].event, events[0],
        "the stored event comes back whole"
    );
}

async fn one_worker_holds_a_hook_at_a_time(db: &impl Store) {
    let seed = seed_org(db).await;
    let busy = hook(seed.org, &["*"], HookType::Post, true);
    let idle = hook(seed.org, &["*"], HookType::Post, true);
    let off = hook(seed.org, &["*"], HookType::Post, true);
    for h in [&busy, &idle, &off] {
        insert(db, h).await;
    }
    append(db, vec![event(seed.org, "task.created", now_ms())]).await;
    let mut switched_off = off.clone();
    switched_off.enabled = false;
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.update_webhook_health(&switched_off).await?) })
    })
    .await
    .unwrap();
    // `idle` has nothing due once its delivery is finished.
    let idle_id = idle.id;
    let all = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.written_events()) })
    })
    .await
    .unwrap();
    assert!(all.is_empty(), "a fresh transaction has written nothing");
    let pending = DeliveryQueue::due(db, idle.id, now_ms() + Duration::seconds(1), 10)
        .await
        .unwrap();
    let event_id = pending[0].event.id;
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.finish_deliveries(idle_id, &[event_id]).await?) })
    })
    .await
    .unwrap();

    let (a, b) = (new_id(), new_id());
    let now = now_ms() + Duration::seconds(1);
    let until = now + Duration::seconds(30);
    let (first, second) = tokio::join!(
        DeliveryQueue::lease_due_hooks(db, now, until, a, 10),
        DeliveryQueue::lease_due_hooks(db, now, until, b, 10),
    );
    let (first, second) = (first.unwrap(), second.unwrap());
    let mut leased: Vec<WebhookId> = first.iter().chain(&second).map(|(_, id)| *id).collect();
    leased.sort_unstable_by_key(|id| id.as_uuid());
    assert_eq!(
        leased,
        [busy.id],
        "the one hook with a delivery due, to one holder"
    );
    let (holder, other) = if first.is_empty() { (b, a) } else { (a, b) };
    assert!(
        !DeliveryQueue::extend_lease(db, busy.id, other, until)
            .await
            .unwrap()
    );
    assert!(
        DeliveryQueue::extend_lease(db, busy.id, holder, until)
            .await
            .unwrap()
    );
    assert!(
        DeliveryQueue::lease_due_hooks(db, now, until, other, 10)
            .await
            .unwrap()
            .is_empty(),
        "held"
    );
    // An expired lease is taken over; a released one at once.
    let after = until + Duration::seconds(1);
    let taken = DeliveryQueue::lease_due_hooks(db, after, after + Duration::seconds(30), other, 10)
        .await
        .unwrap();
    assert_eq!(taken.len(), 1);
    assert!(
        !DeliveryQueue::extend_lease(db, busy.id, holder, after)
            .await
            .unwrap()
    );
    assert_eq!(DeliveryQueue::release_all(db, other).await.unwrap(), 1);
    let again = DeliveryQueue::lease_due_hooks(db, after, after, holder, 10)
        .await
        .unwrap();
    assert_eq!(again, [(seed.org, busy.id)]);
    DeliveryQueue::release(db, busy.id, holder).await.unwrap();
    assert_eq!(DeliveryQueue::release_all(db, holder).await.unwrap(), 0);
}

/// The lease finds its hooks by stepping from one queue to the next: hooks whose queued
/// deliveries are all rescheduled for later lie between the due ones, and are passed
/// over; the due ones come lowest id first, at most as many as asked.
async fn leases_step_past_queues_with_nothing_due(db: &impl Store) {
    let seed = seed_org(db).await;
    // Ids in creation order: waiting, due, waiting, due.
    let hooks: Vec<Webhook> = (0..4)
        .map(|_| hook(seed.org, &["*"], HookType::Post, true))
        .collect();
    for h in &hooks {
        insert(db, h).await;
    }
    let created = event(seed.org, "task.created", now_ms());
    let event_id = created.id;
    append(db, vec![created]).await;
    let later = now_ms() + Duration::minutes(10);
    let waiting = [hooks[0].id, hooks[2].id];
    transact(db, move |tx| {
        Box::pin(async move {
            for hook in waiting {
                tx.reschedule_delivery(hook, event_id, 1, later).await?;
            }
            Ok(())
        })
    })
    .await
    .unwrap();

    let (a, b) = (new_id(), new_id());
    let now = now_ms() + Duration::seconds(1);
    let until = later + Duration::hours(1);
    let first = DeliveryQueue::lease_due_hooks(db, now, until, a, 1)
        .await
        .unwrap();
    assert_eq!(
        first,
        [(seed.org, hooks[1].id)],
        "the lowest due hook, one as asked"
    );
    let rest = DeliveryQueue::lease_due_hooks(db, now, until, b, 10)
        .await
        .unwrap();
    assert_eq!(rest, [(seed.org, hooks[3].id)], "past the waiting queue");
    let after = later + Duration::seconds(1);
    let mut all = DeliveryQueue::lease_due_hooks(db, after, after, new_id(), 10)
        .await
        .unwrap();
    all.sort_unstable_by_key(|(_, id)| id.as_uuid());
    assert_eq!(
        all,
        [(seed.org, hooks[0].id), (seed.org, hooks[2].id)],
        "the waiting ones once due (the others are leased until after)"
    );
}

async fn the_log_pages_and_goes_with_its_hook(db: &impl Store) {
    let seed = seed_org(db).await;
    let h = hook(seed.org, &["*"], HookType::Post, true);
    insert(db, &h).await;
    let base = now_ms();
    let attempts: Vec<DeliveryAttempt> = (0..5_u32)
        .map(|n| DeliveryAttempt {
            id: DeliveryAttemptId::from_uuid(new_id()),
            org_id: seed.org,
            webhook_id: h.id,
            event_id: None,
            event_type: "webhook.test".into(),
            delivery_id: new_id(),
            attempt: n + 1,
            status_code: (n % 2 == 0).then_some(200),
            duration_ms: n * 10,
            error: (n % 2 == 1).then(|| "the receiver answered 500".to_owned()),
            created_at: base + Duration::seconds(n.into()),
        })
        .collect();
    let stored = attempts.clone();
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.insert_delivery_attempts(&stored).await?) })
    })
    .await
    .unwrap();
    let (page, total) = WebhookRepository::attempts(db, seed.org, h.id, 2, 1)
        .await
        .unwrap();
    assert_eq!(total, 5);
    assert_eq!(
        page,
        [attempts[3].clone(), attempts[2].clone()],
        "newest first"
    );
    let other = seed_org(db).await;
    let (none, zero) = WebhookRepository::attempts(db, other.org, h.id, 10, 0)
        .await
        .unwrap();
    assert!(none.is_empty() && zero == 0);

    append(db, vec![event(seed.org, "task.created", base)]).await;
    let (org, id) = (seed.org, h.id);
    let deleted = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.delete_webhook(org, id).await?) })
    })
    .await
    .unwrap();
    assert!(deleted);
    assert_eq!(
        WebhookRepository::get(db, seed.org, h.id).await.unwrap(),
        None
    );
    let (gone, count) = WebhookRepository::attempts(db, seed.org, h.id, 10, 0)
        .await
        .unwrap();
    assert!(gone.is_empty() && count == 0, "the log goes with the hook");
    assert!(
        DeliveryQueue::due(db, h.id, base + Duration::hours(1), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

/// A remote agent's channel gets the creations and assignments of the tasks assigned to
/// its agent, once per task and append, never through a subscription; it is read back
/// by its agent, and the organization's list never shows it.
async fn remote_channels_hear_their_assignees_tasks_once(db: &impl Store) {
    let seed = seed_org(db).await;
    let mut channel = hook(
        seed.org,
        &["task.assigned", "task.created"],
        HookType::Post,
        true,
    );
    channel.remote = Some(RemoteAgentLink {
        agent_id: seed.hr,
        card_url: "https://remote.example/card".into(),
        callback_url: "https://muster.example".into(),
        sealed_auth: Some(vec![9, 9]),
    });
    insert(db, &channel).await;
    let every = hook(seed.org, &["*"], HookType::Post, true);
    insert(db, &every).await;
    assert_eq!(
        WebhookRepository::remote_channel(db, seed.hr)
            .await
            .unwrap(),
        Some(channel.clone())
    );
    let listed = WebhookRepository::list(db, seed.org).await.unwrap();
    assert_eq!(listed.iter().map(|h| h.id).collect::<Vec<_>>(), [every.id]);

    let mut theirs = task(seed.org);
    theirs.assignee_id = Some(seed.hr);
    let unassigned = task(seed.org);
    let now = now_ms();
    let on = |t: &Task, kind: &str| task_event(t, kind, now);
    let mut created = on(&theirs, "task.created");
    created.payload = serde_json::json!({"assigneeId": seed.hr});
    let assigned = on(&theirs, "task.assigned");
    let moved = on(&theirs, "task.transitioned");
    let other = on(&unassigned, "task.created");
    let (a, b) = (theirs.clone(), unassigned.clone());
    let events = vec![created.clone(), assigned, moved, other];
    transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_task(&a).await?;
            tx.insert_task(&b).await?;
            Ok(tx.append_events(&events).await?)
        })
    })
    .await
    .unwrap();
    assert_eq!(
        due_ids(db, &channel).await,
        [created.id.as_uuid()],
        "once for the task, nothing for the move or the unassigned task"
    );
    assert_eq!(due_ids(db, &every).await.len(), 4);
}

/// An A2A push config hears the moves of its own task, queued by the append that writes
/// them: not the task's other events, not another task's moves; a disabled one hears
/// nothing.
async fn push_configs_hear_their_tasks_moves(db: &impl Store) {
    let seed = seed_org(db).await;
    let (watched, other) = (task(seed.org), task(seed.org));
    for t in [&watched, &other] {
        db.insert(t, &[]).await.unwrap();
    }
    let config = |id: &str, enabled| Webhook {
        push: Some(TaskPush {
            task_id: watched.id,
            config_id: PushConfigId::new(id).unwrap(),
            sealed_auth: None,
        }),
        ..hook(seed.org, &PUSH_EVENT_TYPES, HookType::Post, enabled)
    };
    let (listening, disabled) = (config("on", true), config("off", false));
    insert(db, &listening).await;
    insert(db, &disabled).await;
    let now = now_ms();
    let on = |t: &Task, kind: &str| task_event(t, kind, now);
    let moved = on(&watched, "task.transitioned");
    append(
        db,
        vec![
            on(&watched, "task.created"),
            moved.clone(),
            on(&other, "task.transitioned"),
            on(&watched, "task.assigned"),
        ],
    )
    .await;
    assert_eq!(due_ids(db, &listening).await, [moved.id.as_uuid()]);
    assert_eq!(due_ids(db, &disabled).await, Vec::<Uuid>::new());
}

/// An append the store refuses (an event id already stored) fails with its own error,
/// queues nothing and leaves the connection fit for the next unit of work.
async fn an_append_the_store_refuses_queues_nothing(db: &impl Store) {
    let seed = seed_org(db).await;
    let every = hook(seed.org, &["*"], HookType::Post, true);
    insert(db, &every).await;
    let now = now_ms();
    let first = event(seed.org, "task.created", now);
    append(db, vec![first.clone()]).await;

    let fresh = event(seed.org, "task.created", now);
    let again = first.clone();
    let refused = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.append_events(&[fresh, again]).await?) })
    })
    .await
    .unwrap_err();
    let message = refused.to_string().to_lowercase();
    assert!(
        !message.contains("aborted"),
        "the insert's error, not a later statement's in the aborted transaction: {message}"
    );
    assert_eq!(due_ids(db, &every).await, [first.id.as_uuid()]);

    for _ in 0..3 {
        let next = event(seed.org, "task.done", now);
        append(db, vec![next.clone()]).await;
        assert!(due_ids(db, &every).await.contains(&next.id.as_uuid()));
    }
}
