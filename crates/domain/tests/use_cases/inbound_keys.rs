//! `InboundService`: keys other systems create tasks with, on the in-memory store.

use crate::common::world::World;

use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{
    AgentId, Description, HookName, InboundKey, Metadata, Tags, TaskPriority, TaskStatus, Title,
    UserRole,
};
use muster_domain::ports::MessageSigner;
use muster_domain::service::{
    Entity, InboundKeyPatch, InboundPorts, InboundService, InboundTask, MAX_BATCH, NotFound,
    ServiceError, Unauthorized,
};
use serde_json::json;
use uuid::Uuid;

fn service(world: &World) -> InboundService {
    InboundService::new(InboundPorts {
        keys: Arc::new(world.store.clone()),
        uow: Arc::new(world.store.clone()),
        vault: world.vault.clone(),
        signer: world.signer.clone(),
        clock: world.clock.clone(),
        ids: world.ids.clone(),
    })
}

fn new_key(name: &str, agent: Option<AgentId>) -> muster_domain::service::NewInboundKey {
    muster_domain::service::NewInboundKey {
        name: HookName::new(name).unwrap(),
        default_agent_id: agent,
        default_priority: Some(TaskPriority::High),
        default_tags: Some(Tags::new(vec!["inbound".into()]).unwrap()),
    }
}

fn item(title: &str) -> InboundTask {
    InboundTask {
        tags: vec!["alert".into()],
        metadata: Some(Metadata::new(json!({ "alertId": 7 })).unwrap()),
        ..InboundTask::new(Title::new(title).unwrap())
    }
}

#[test]
fn a_key_creates_tasks_with_its_defaults_and_a_signature_checked_body() {
    let world = World::new();
    let (agent, _) = world.worker("pager", 3, &[]);
    let inbound = service(&world);
    let issued = block_on(inbound.create(&world.admin, new_key("alerts", Some(agent.id)))).unwrap();
    assert!(InboundKey::is_key(&issued.key.key));
    assert_eq!(issued.secret.len(), 64);

    let body = br#"{"title":"disk full"}"#;
    let signature = world.signer.sign_hex(issued.secret.as_bytes(), body);
    let key = block_on(inbound.authenticate(&issued.key.key, Some(&signature), body)).unwrap();
    assert_eq!(key.id, issued.key.id);
    let err = block_on(inbound.authenticate(&issued.key.key, Some("00ff"), body)).unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Unauthorized(Unauthorized::InvalidWebhookSignature)
        ),
        "{err:?}"
    );
    // Without a signature the key alone is the credential.
    block_on(inbound.authenticate(&issued.key.key, None, body)).unwrap();

    world.clock.advance(time::Duration::minutes(1));
    let created = block_on(inbound.ingest(&key, vec![item("disk full")], false)).unwrap();
    let task = &created[0];
    assert_eq!(task.status, TaskStatus::Todo);
    assert_eq!(task.priority, TaskPriority::High, "the key's default");
    assert_eq!(task.assignee_id, Some(agent.id), "the key's default agent");
    assert_eq!(task.tags.as_slice(), ["inbound", "alert"]);
    assert_eq!(task.creator, None);
    assert_eq!(task.metadata.as_map()["source"], json!("inbound_webhook"));
    assert_eq!(task.metadata.as_map()["alertId"], json!(7));
    assert_eq!(
        task.metadata.as_map()["inboundWebhookId"],
        json!(issued.key.id.as_uuid().to_string())
    );
    assert_eq!(world.reread(task), *task);
    let stored = block_on(inbound.get(&world.admin, issued.key.id)).unwrap();
    assert_eq!(stored.last_used_at, Some(world.clock_now()));
    let created_events = world.events("task.created");
    assert_eq!(created_events.last().unwrap().actor_id, None);
}

#[test]
fn an_item_overrides_the_defaults() {
    let world = World::new();
    let (default, _) = world.worker("default", 3, &[]);
    let (chosen, _) = world.worker("chosen", 3, &[]);
    let inbound = service(&world);
    let issued =
        block_on(inbound.create(&world.admin, new_key("alerts", Some(default.id)))).unwrap();
    let special = InboundTask {
        priority: Some(TaskPriority::Low),
        assignee_id: Some(chosen.id),
        description: Some(Description::new("Volume /var at 99 %".to_owned()).unwrap()),
        ..item("specific")
    };
    let task = block_on(inbound.ingest(&issued.key, vec![special], false))
        .unwrap()
        .remove(0);
    assert_eq!(
        (task.priority, task.assignee_id),
        (TaskPriority::Low, Some(chosen.id))
    );
    assert_eq!(
        task.description.as_ref().map(Description::as_str),
        Some("Volume /var at 99 %")
    );
}

#[test]
fn a_batch_is_all_or_nothing_and_names_the_bad_item() {
    let world = World::new();
    let inbound = service(&world);
    let issued = block_on(inbound.create(&world.admin, new_key("alerts", None))).unwrap();
    let too_many_tags = InboundTask {
        tags: (0..Tags::MAX_COUNT).map(|i| format!("tag-{i}")).collect(),
        ..item("bad")
    };
    let err =
        block_on(inbound.ingest(&issued.key, vec![item("good"), too_many_tags], true)).unwrap_err();
    let ServiceError::Invalid(invalid) = err else {
        panic!("{err:?}")
    };
    assert!(invalid.message().starts_with("tasks[1]."), "{invalid:?}");
    assert!(
        world.events("task.created").is_empty(),
        "nothing was created"
    );

    let err = block_on(inbound.ingest(&issued.key, Vec::new(), true)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    let full: Vec<_> = (0..=MAX_BATCH).map(|i| item(&format!("t{i}"))).collect();
    let err = block_on(inbound.ingest(&issued.key, full, true)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");

    let two = block_on(inbound.ingest(&issued.key, vec![item("a"), item("b")], true)).unwrap();
    assert_eq!(two.len(), 2);
    assert_eq!(world.events("task.created").len(), 2);
}

#[test]
fn a_rotated_disabled_or_deleted_key_creates_nothing() {
    let world = World::new();
    let inbound = service(&world);
    let issued = block_on(inbound.create(&world.admin, new_key("alerts", None))).unwrap();
    let old = issued.key.clone();
    let rotated = block_on(inbound.rotate(&world.admin, old.id)).unwrap();
    assert_ne!(rotated.key.key, old.key);
    assert_ne!(rotated.secret, issued.secret);
    let refused = |key: &str| block_on(inbound.authenticate(key, None, b"{}")).unwrap_err();
    assert!(matches!(
        refused(&old.key),
        ServiceError::InboundKeyNotFound
    ));
    let err = block_on(inbound.ingest(&old, vec![item("late")], false)).unwrap_err();
    assert!(matches!(err, ServiceError::InboundKeyNotFound), "{err:?}");

    let disable = InboundKeyPatch {
        enabled: Some(false),
        ..InboundKeyPatch::default()
    };
    let disabled = block_on(inbound.update(&world.admin, old.id, disable)).unwrap();
    assert!(!disabled.enabled);
    assert!(matches!(
        refused(&rotated.key.key),
        ServiceError::InboundKeyNotFound
    ));
    let err = block_on(inbound.ingest(&rotated.key, vec![item("off")], false)).unwrap_err();
    assert!(matches!(err, ServiceError::InboundKeyNotFound), "{err:?}");

    block_on(inbound.delete(&world.admin, old.id)).unwrap();
    assert!(block_on(inbound.list(&world.admin)).unwrap().is_empty());
    let err = block_on(inbound.get(&world.admin, old.id)).unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    assert!(matches!(
        refused("not-a-key"),
        ServiceError::InboundKeyNotFound
    ));
    assert!(world.events("task.created").is_empty());
}

#[test]
fn a_default_agent_must_be_of_the_organization_and_only_users_who_write_manage_keys() {
    let world = World::new();
    let inbound = service(&world);
    let stranger = AgentId::from_uuid(Uuid::now_v7());
    let err =
        block_on(inbound.create(&world.admin, new_key("alerts", Some(stranger)))).unwrap_err();
    assert_eq!(
        err.to_string(),
        ServiceError::from(NotFound::new(Entity::Agent, stranger)).to_string()
    );
    for who in [world.user(UserRole::Viewer), world.hr.clone()] {
        let err = block_on(inbound.create(&who, new_key("alerts", None))).unwrap_err();
        assert!(matches!(err, ServiceError::Forbidden(_)), "{err:?}");
    }
    assert!(block_on(inbound.list(&world.admin)).unwrap().is_empty());

    let issued = block_on(inbound.create(&world.admin, new_key("alerts", None))).unwrap();
    let rename = InboundKeyPatch {
        name: Some(HookName::new("pager").unwrap()),
        default_agent_id: Some(Some(stranger)),
        ..InboundKeyPatch::default()
    };
    let err = block_on(inbound.update(&world.admin, issued.key.id, rename)).unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::NotFound(NotFound {
                entity: Entity::Agent,
                ..
            })
        ),
        "{err:?}"
    );
    let kept = block_on(inbound.get(&world.admin, issued.key.id)).unwrap();
    assert_eq!(
        kept.name.as_str(),
        "alerts",
        "the refused change left it alone"
    );
    assert_eq!(world.events("inbound_webhook.created").len(), 1);
    assert!(world.events("inbound_webhook.updated").is_empty());
}

#[test]
fn keys_are_listed_newest_first_and_an_empty_patch_is_refused() {
    let world = World::new();
    let inbound = service(&world);
    let first = block_on(inbound.create(&world.admin, new_key("first", None))).unwrap();
    world.clock.advance(time::Duration::seconds(1));
    let second = block_on(inbound.create(&world.admin, new_key("second", None))).unwrap();
    let listed: Vec<_> = block_on(inbound.list(&world.admin))
        .unwrap()
        .into_iter()
        .map(|k| k.id)
        .collect();
    assert_eq!(listed, [second.key.id, first.key.id]);
    let err = block_on(inbound.update(&world.admin, first.key.id, InboundKeyPatch::default()))
        .unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    assert!(world.events("inbound_webhook.updated").is_empty());
}

#[test]
fn a_batch_of_exactly_the_maximum_is_accepted() {
    let world = World::new();
    let inbound = service(&world);
    let issued = block_on(inbound.create(&world.admin, new_key("bulk", None))).unwrap();
    let full: Vec<_> = (0..MAX_BATCH).map(|i| item(&format!("t{i}"))).collect();
    let created = block_on(inbound.ingest(&issued.key, full, true)).unwrap();
    assert_eq!(created.len(), MAX_BATCH);
}
