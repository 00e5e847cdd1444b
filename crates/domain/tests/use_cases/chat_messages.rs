//! `ChatService`: chat messages that create and complete tasks, on the in-memory store.

use crate::common::world::World;

use std::collections::HashMap;
use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{AgentStatus, IntegrationAction, TaskPriority, TaskStatus};
use muster_domain::service::{ChatMessage, ChatService, ChatSettings, ServiceError, Unauthorized};
use serde_json::json;

fn service(world: &World, settings: ChatSettings) -> ChatService {
    ChatService::new(
        world.tasks.clone(),
        Arc::new(world.store.clone()),
        Arc::new(world.store.clone()),
        Arc::new(world.store.clone()),
        settings,
    )
}

fn message(author: &str, bot: bool, content: &str) -> ChatMessage {
    ChatMessage {
        id: format!("m-{content:.8}"),
        channel_id: "c-1".into(),
        author_id: author.into(),
        bot,
        content: content.into(),
    }
}

#[test]
fn a_task_prefix_creates_a_task_as_the_mapped_agent_with_the_asked_priority() {
    let world = World::new();
    let (agent, _) = world.worker("chatty", 3, &[]);
    let settings = ChatSettings {
        agents: HashMap::from([("u-42".to_owned(), agent.id)]),
        ..ChatSettings::default()
    };
    let chat = service(&world, settings);
    let answer =
        block_on(chat.handle(&message("u-42", false, "✅ Task: Fix login ASAP\nthanks"))).unwrap();
    assert_eq!(answer.action, IntegrationAction::Created);
    let task = block_on(world.tasks.get(&world.admin, answer.task_id.unwrap())).unwrap();
    assert_eq!(task.title.as_str(), "Fix login ASAP");
    assert_eq!(task.priority, TaskPriority::Urgent);
    let metadata = task.metadata.as_map();
    assert_eq!(metadata["source"], json!("chat"));
    assert_eq!(metadata["chatAuthorId"], json!("u-42"));
    assert_eq!(metadata["chatChannelId"], json!("c-1"));
    let created = world.events("task.created");
    assert_eq!(created.last().unwrap().actor_id, Some(agent.id.as_uuid()));
}

#[test]
fn an_unmapped_person_acts_as_the_service_in_the_default_organization() {
    let world = World::new();
    let chat = service(&world, ChatSettings::default());
    let answer =
        block_on(chat.handle(&message("someone", false, "Created task: Water the plants")))
            .unwrap();
    assert_eq!(answer.action, IntegrationAction::Created);
    let task = block_on(world.tasks.get(&world.admin, answer.task_id.unwrap())).unwrap();
    assert_eq!(task.org_id, world.org, "bootstrap made Acme the default");
    assert_eq!(world.events("task.created").last().unwrap().actor_id, None);
}

#[test]
fn bots_inactive_agents_and_idle_talk_are_ignored() {
    let world = World::new();
    let (agent, _) = world.worker("sleepy", 3, &[]);
    block_on(world.agents.suspend(&world.hr, agent.id)).unwrap();
    let settings = ChatSettings {
        agents: HashMap::from([("u-1".to_owned(), agent.id)]),
        ..ChatSettings::default()
    };
    let chat = service(&world, settings);
    for msg in [
        message("bot-7", true, "✅ Task: from a bot"),
        message("u-1", false, "✅ Task: from a suspended agent"),
        message("person", false, "just chatting"),
        message("person", false, "✅ Task:   "),
    ] {
        let answer = block_on(chat.handle(&msg)).unwrap();
        assert_eq!(answer.action, IntegrationAction::Ignored, "{msg:?}");
        assert!(answer.reason.is_some());
    }
    assert_eq!(
        block_on(world.agents.balance(&world.admin, agent.id))
            .unwrap()
            .status,
        AgentStatus::Suspended
    );
    assert!(world.events("task.created").is_empty());
}

#[test]
fn completed_marks_the_single_matching_open_task_done() {
    let world = World::new();
    let chat = service(&world, ChatSettings::default());
    let login = world.task("Fix login");
    let styles = world.task("Fix login page styles");
    let keys = world.task("Rotate API keys");
    for task in [&login, &styles, &keys] {
        block_on(
            world
                .tasks
                .transition(&world.admin, task.id, TaskStatus::InProgress, None),
        )
        .unwrap();
    }
    let ambiguous =
        block_on(chat.handle(&message("p", false, "All done.\nCompleted: fix"))).unwrap();
    assert_eq!(
        ambiguous.action,
        IntegrationAction::Ignored,
        "two titles contain it"
    );
    let exact = block_on(chat.handle(&message("p", false, "Done!\nCompleted: fix login"))).unwrap();
    assert_eq!(
        (exact.action, exact.task_id),
        (IntegrationAction::Completed, Some(login.id))
    );
    assert_eq!(world.reread(&login).status, TaskStatus::Done);
    let single =
        block_on(chat.handle(&message("p", false, "Finished\nCompleted: api keys"))).unwrap();
    assert_eq!(single.task_id, Some(keys.id));
    assert_eq!(world.reread(&styles).status, TaskStatus::InProgress);
    let closed =
        block_on(chat.handle(&message("p", false, "Done!\nCompleted: fix login"))).unwrap();
    assert_eq!(
        closed.task_id,
        Some(styles.id),
        "done tasks are not candidates any more"
    );
}

#[test]
fn the_token_is_checked_in_constant_time_when_one_is_set() {
    let world = World::new();
    let open = service(&world, ChatSettings::default());
    assert!(open.check_token(None).is_ok());
    let guarded = service(
        &world,
        ChatSettings {
            token: Some("s3cret".into()),
            ..ChatSettings::default()
        },
    );
    assert!(guarded.check_token(Some("s3cret")).is_ok());
    for given in [None, Some("s3cre"), Some("s3cret!"), Some("")] {
        let err = guarded.check_token(given).unwrap_err();
        assert!(
            matches!(
                err,
                ServiceError::Unauthorized(Unauthorized::InvalidChatToken)
            ),
            "{given:?}: {err:?}"
        );
    }
}
