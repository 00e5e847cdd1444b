//! `ChatService`: chat messages that create and complete tasks, on the in-memory store
//! (decisions D-86, D-100).

use crate::common::world::World;

use std::collections::HashMap;
use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{
    AgentStatus, IntegrationAction, IntegrationAnswer, TaskPriority, TaskStatus,
};
use muster_domain::service::{
    ChatMessage, ChatService, ChatSettings, ServiceError, UNMAPPED_COMPLETION, Unauthorized,
};
use serde_json::json;

const TOKEN: &str = "chat-token-0123456789";

/// The service with `settings` and the chat token.
fn service(world: &World, settings: ChatSettings) -> ChatService {
    ChatService::new(
        world.tasks.clone(),
        Arc::new(world.store.clone()),
        Arc::new(world.store.clone()),
        Arc::new(world.store.clone()),
        ChatSettings {
            token: Some(TOKEN.into()),
            ..settings
        },
    )
}

/// `message` handled as a request carrying the token.
fn handle(chat: &ChatService, message: &ChatMessage) -> IntegrationAnswer {
    let caller = chat.check_token(Some(TOKEN.as_bytes())).unwrap();
    block_on(chat.handle(&caller, message)).unwrap()
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
    let answer = handle(
        &chat,
        &message("u-42", false, "✅ Task: Fix login ASAP\nthanks"),
    );
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
    let answer = handle(
        &chat,
        &message("someone", false, "Created task: Water the plants"),
    );
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
        let answer = handle(&chat, &msg);
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
    let (finisher, _) = world.worker("finisher", 3, &[]);
    let settings = ChatSettings {
        agents: HashMap::from([("p".to_owned(), finisher.id)]),
        ..ChatSettings::default()
    };
    let chat = service(&world, settings);
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
    let ambiguous = handle(&chat, &message("p", false, "All done.\nCompleted: fix"));
    assert_eq!(
        ambiguous.action,
        IntegrationAction::Ignored,
        "two titles contain it"
    );
    let exact = handle(&chat, &message("p", false, "Done!\nCompleted: fix login"));
    assert_eq!(
        (exact.action, exact.task_id),
        (IntegrationAction::Completed, Some(login.id))
    );
    assert_eq!(world.reread(&login).status, TaskStatus::Done);
    let single = handle(&chat, &message("p", false, "Finished\nCompleted: api keys"));
    assert_eq!(single.task_id, Some(keys.id));
    assert_eq!(world.reread(&styles).status, TaskStatus::InProgress);
    let closed = handle(&chat, &message("p", false, "Done!\nCompleted: fix login"));
    assert_eq!(
        closed.task_id,
        Some(styles.id),
        "done tasks are not candidates any more"
    );
}

#[test]
fn unmapped_people_create_but_never_complete_nor_learn_a_title() {
    let world = World::new();
    let chat = service(&world, ChatSettings::default());
    let task = world.task("Pay the contractor");
    let mut answers = Vec::new();
    for hint in ["Pay the contractor", "contractor", "no such task", "a"] {
        let text = format!("done\nCompleted: {hint}");
        answers.push(handle(&chat, &message("someone", false, &text)));
    }
    for answer in &answers {
        assert_eq!(answer.action, IntegrationAction::Ignored);
        assert_eq!(answer.task_id, None);
        assert_eq!(answer.reason.as_deref(), Some(UNMAPPED_COMPLETION));
    }
    assert!(
        answers.windows(2).all(|w| w[0] == w[1]),
        "the same answer whatever the hint names"
    );
    assert_eq!(world.reread(&task).status, task.status, "not moved");
    let created = handle(&chat, &message("someone", false, "✅ Task: Order paper"));
    assert_eq!(created.action, IntegrationAction::Created);
}

#[test]
fn chat_is_off_without_a_token_and_then_needs_it_exactly() {
    let world = World::new();
    let off = ChatService::new(
        world.tasks.clone(),
        Arc::new(world.store.clone()),
        Arc::new(world.store.clone()),
        Arc::new(world.store.clone()),
        ChatSettings::default(),
    );
    assert!(!off.is_on());
    let empty = ChatSettings {
        token: Some(String::new()),
        ..ChatSettings::default()
    };
    assert!(!empty.is_on(), "an empty token is no token");
    for given in [None, Some(&b""[..]), Some(&b"anything"[..])] {
        assert!(off.check_token(given).is_err(), "off refuses {given:?}");
        assert!(empty.check_token(given).is_err(), "empty refuses {given:?}");
    }
    let guarded = service(&world, ChatSettings::default());
    assert!(guarded.is_on());
    assert!(guarded.check_token(Some(TOKEN.as_bytes())).is_ok());
    let longer = format!("{TOKEN}!");
    let shorter = &TOKEN[..TOKEN.len() - 1];
    for given in [
        None,
        Some(shorter.as_bytes()),
        Some(longer.as_bytes()),
        Some(&b""[..]),
        Some(&b"\xffchat-token-012345678"[..]),
    ] {
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
