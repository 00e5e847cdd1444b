//! The mapping between Muster tasks and A2A tasks, both ways.

// Fixture builders outside #[test] functions unwrap too: a bad fixture is a failed test.
#![allow(clippy::unwrap_used)]

use muster_a2a::ErrorKind;
use muster_a2a::mapping::{self, MESSAGE_ID_KEY};
use muster_a2a::types::{Message, Part, Role, TaskState};
use muster_domain::model::{
    AgentId, Author, Comment, CommentBody, CommentId, Description, Metadata, OrgId, RewardPayer,
    Task, TaskId, TaskOutcome, TaskResult, TaskStatus, Title, UserId,
};
use serde_json::{Value, json};
use time::macros::datetime;
use uuid::Uuid;

fn task(status: TaskStatus, approval_required: bool) -> Task {
    let id = TaskId::from_uuid(Uuid::from_u128(1));
    let org = OrgId::from_uuid(Uuid::from_u128(2));
    Task {
        status,
        creator: Some(Author::User(UserId::from_uuid(Uuid::from_u128(3)))),
        approval_required,
        version: 4,
        reward: 10,
        ..Task::new(
            id,
            org,
            Title::new("Ship it").unwrap(),
            datetime!(2026-11-27 10:00 UTC),
        )
    }
}

/// Every Muster task shape the mapping tells apart.
fn every_kind() -> Vec<Task> {
    let mut all: Vec<Task> = TaskStatus::ALL.iter().map(|s| task(*s, false)).collect();
    all.push(task(TaskStatus::Review, true));
    all.extend([TaskOutcome::Failed, TaskOutcome::Rejected].map(ended));
    all
}

/// A cancelled task that ended with `outcome`, and a result.
fn ended(outcome: TaskOutcome) -> Task {
    Task {
        outcome: Some(outcome),
        result: Some(TaskResult::new("It did not work out".into()).unwrap()),
        ..task(TaskStatus::Cancelled, false)
    }
}

fn message(parts: Vec<Part>) -> Message {
    Message {
        message_id: "m-1".into(),
        context_id: None,
        task_id: None,
        role: Role::User,
        parts,
        metadata: None,
        extensions: vec![],
        reference_task_ids: vec![],
    }
}

#[test]
fn states_follow_the_documented_table() {
    use TaskStatus as S;
    let expected = [
        (S::Backlog, false, TaskState::Submitted),
        (S::Todo, false, TaskState::Submitted),
        (S::InProgress, false, TaskState::Working),
        (S::Blocked, false, TaskState::Working),
        (S::Review, false, TaskState::Working),
        (S::Review, true, TaskState::InputRequired),
        (S::Done, false, TaskState::Completed),
        (S::Done, true, TaskState::Completed),
        (S::Cancelled, false, TaskState::Canceled),
    ];
    for (status, approval, state) in expected {
        assert_eq!(mapping::state(&task(status, approval)), state, "{status:?}");
    }
    assert_eq!(
        mapping::state(&ended(TaskOutcome::Failed)),
        TaskState::Failed
    );
    assert_eq!(
        mapping::state(&ended(TaskOutcome::Rejected)),
        TaskState::Rejected
    );
}

#[test]
fn a_result_is_the_tasks_artifact() {
    assert_eq!(
        mapping::task(&task(TaskStatus::Done, false), &[], None).artifacts,
        None
    );
    let failed = mapping::task(&ended(TaskOutcome::Failed), &[], Some(0));
    let artifacts = serde_json::to_value(&failed.artifacts).unwrap();
    assert_eq!(
        artifacts,
        json!([{"artifactId": "result", "name": "Result",
                "parts": [{"text": "It did not work out"}]}])
    );
}

#[test]
fn each_state_filters_exactly_the_tasks_in_it() {
    for state in TaskState::ALL {
        let Some(filter) = mapping::filter(state) else {
            assert!(
                every_kind().iter().all(|t| mapping::state(t) != state),
                "{state:?} has no filter but a task maps to it"
            );
            continue;
        };
        for task in every_kind() {
            let wanted = state == TaskState::Unspecified || mapping::state(&task) == state;
            assert_eq!(
                filter.matches(&task),
                wanted,
                "{state:?} on {:?} {:?}",
                task.status,
                task.outcome
            );
        }
    }
}

#[test]
fn status_messages_explain_blocked_and_review() {
    let blocked = mapping::status(&task(TaskStatus::Blocked, false));
    let message = blocked.message.unwrap();
    assert_eq!(message.role, Role::Agent);
    assert!(
        message.parts[0]
            .text
            .as_deref()
            .unwrap()
            .contains("blocked")
    );
    let waiting = mapping::status(&task(TaskStatus::Review, true));
    let text = waiting.message.unwrap().parts[0].text.clone().unwrap();
    assert!(text.contains("approval"), "{text}");
    assert!(
        mapping::status(&task(TaskStatus::Todo, false))
            .message
            .is_none()
    );
    assert_eq!(
        mapping::status(&task(TaskStatus::Done, false))
            .timestamp
            .as_deref(),
        Some("2026-11-27T10:00:00Z")
    );
}

#[test]
fn the_context_is_the_parent_task_or_the_task_itself() {
    let alone = task(TaskStatus::Todo, false);
    assert_eq!(mapping::context_id(&alone), alone.id.to_string());
    let parent = TaskId::from_uuid(Uuid::from_u128(9));
    let child = Task {
        parent_task_id: Some(parent),
        ..alone
    };
    assert_eq!(mapping::context_id(&child), parent.to_string());
}

fn comment(n: u128, author: Option<Author>, body: &str) -> Comment {
    Comment {
        id: CommentId::from_uuid(Uuid::from_u128(100 + n)),
        org_id: OrgId::from_uuid(Uuid::from_u128(2)),
        task_id: TaskId::from_uuid(Uuid::from_u128(1)),
        author,
        parent_comment_id: None,
        body: CommentBody::new(body.into()).unwrap(),
        created_at: datetime!(2026-11-27 11:00 UTC),
    }
}

#[test]
fn history_is_the_first_message_then_comments_by_role() {
    let mut from_a2a = task(TaskStatus::InProgress, false);
    from_a2a.description = Some(Description::new("Ship it\nplease".into()).unwrap());
    from_a2a.metadata = Metadata::new(json!({"source": "a2a", MESSAGE_ID_KEY: "m-1"})).unwrap();
    let creator = from_a2a.creator;
    let worker = Some(Author::User(UserId::from_uuid(Uuid::from_u128(7))));
    let comments = [
        comment(1, worker, "on it"),
        comment(2, creator, "thanks"),
        comment(3, None, "integration note"),
    ];
    let seen = mapping::task(&from_a2a, &comments, None);
    let history = seen.history.unwrap();
    let roles: Vec<Role> = history.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Agent, Role::User, Role::Agent]);
    assert_eq!(history[0].message_id, "m-1");
    assert_eq!(history[0].parts[0].text.as_deref(), Some("Ship it\nplease"));
    assert_eq!(history[1].message_id, comments[0].id.to_string());
    // The most recent messages when limited, none at 0.
    let last_two = mapping::task(&from_a2a, &comments, Some(2))
        .history
        .unwrap();
    assert_eq!(last_two.len(), 2);
    assert_eq!(
        last_two[1].parts[0].text.as_deref(),
        Some("integration note")
    );
    assert!(
        mapping::task(&from_a2a, &comments, Some(0))
            .history
            .is_none()
    );
    assert_eq!(
        mapping::task(&from_a2a, &comments, Some(50))
            .history
            .unwrap()
            .len(),
        4
    );
    // A task made another way shows its title and description, under its own id.
    let mut plain = task(TaskStatus::Todo, false);
    plain.description = Some(Description::new("details".into()).unwrap());
    let first = &mapping::task(&plain, &[], None).history.unwrap()[0];
    assert_eq!(first.parts[0].text.as_deref(), Some("Ship it\n\ndetails"));
    assert_eq!(first.message_id, plain.id.to_string());
}

#[test]
fn the_task_carries_musters_own_fields_in_metadata() {
    let seen = mapping::task(&task(TaskStatus::Review, true), &[], Some(0));
    let view = Value::Object(seen.metadata.unwrap());
    assert_eq!(view["muster"]["status"], "review");
    assert_eq!(view["muster"]["title"], "Ship it");
    assert_eq!(view["muster"]["approvalRequired"], true);
    assert_eq!(view["muster"]["reward"], 10);
    // The treasury pays under the organization's id; an agent under its own.
    assert_eq!(
        view["muster"]["rewardPayer"],
        json!({"kind": "treasury", "id": Uuid::from_u128(2).to_string()})
    );
    let agent = AgentId::from_uuid(Uuid::from_u128(9));
    let paid = Task {
        reward_payer: RewardPayer::Agent(agent),
        ..task(TaskStatus::Todo, false)
    };
    let view = Value::Object(mapping::task(&paid, &[], Some(0)).metadata.unwrap());
    assert_eq!(
        view["muster"]["rewardPayer"],
        json!({"kind": "agent", "id": agent.to_string()})
    );
    let json =
        serde_json::to_value(mapping::task(&task(TaskStatus::Done, false), &[], Some(0))).unwrap();
    assert_eq!(json["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(json.get("history").is_none() && json.get("artifacts").is_none());
}

#[test]
fn a_message_becomes_a_title_and_a_description() {
    let parts = vec![
        Part::text("\n  Fix the login page  \nIt times out."),
        Part {
            url: Some("https://example.com/log.txt".into()),
            filename: Some("log.txt".into()),
            ..Part::default()
        },
        Part {
            data: Some(json!({"retries": 3})),
            ..Part::default()
        },
    ];
    let new = mapping::new_task(&message(parts)).unwrap();
    assert_eq!(new.title.as_str(), "Fix the login page");
    assert_eq!(
        new.description.unwrap().as_str(),
        "\n  Fix the login page  \nIt times out.\n\n[log.txt](https://example.com/log.txt)\n\n\
         ```json\n{\n  \"retries\": 3\n}\n```"
    );
    assert_eq!(
        new.metadata.to_value(),
        json!({"source": "a2a", MESSAGE_ID_KEY: "m-1"})
    );
    // A long first line is cut to the longest title; data alone gets a stock title.
    let long = mapping::new_task(&message(vec![Part::text("x".repeat(300))])).unwrap();
    assert_eq!(long.title.as_str().chars().count(), Title::MAX_CHARS);
    let data = Part {
        data: Some(json!([1])),
        ..Part::default()
    };
    let only_data = mapping::new_task(&message(vec![data])).unwrap();
    assert_eq!(only_data.title.as_str(), "A message from an A2A client");
    assert_eq!(only_data.reward, None, "the organization's default");
}

#[test]
fn a_message_may_ask_for_a_reward_in_its_muster_metadata() {
    let with = |metadata: Value| Message {
        metadata: metadata.as_object().cloned(),
        ..message(vec![Part::text("Pay me")])
    };
    let asked = |metadata| mapping::new_task(&with(metadata)).map(|n| n.reward);
    assert_eq!(asked(json!({"muster": {"reward": 25}})).unwrap(), Some(25));
    assert_eq!(asked(json!({"muster": {"reward": 0}})).unwrap(), Some(0));
    assert_eq!(asked(json!({"other": {"reward": 25}})).unwrap(), None);
    assert_eq!(asked(json!({"muster": {"title": "x"}})).unwrap(), None);
    for refused in [
        json!({"muster": {"reward": -1}}),
        json!({"muster": {"reward": 1_000_000_001_i64}}),
        json!({"muster": {"reward": "10"}}),
        json!({"muster": {"reward": 2.5}}),
        json!({"muster": {"reward": null}}),
    ] {
        let err = asked(refused.clone()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidParams, "{refused}");
        assert!(err.message.contains("metadata.muster.reward"), "{refused}");
    }
}

#[test]
fn messages_that_cannot_become_tasks_are_refused() {
    let kind = |m: &Message| mapping::new_task(m).unwrap_err().kind;
    assert_eq!(kind(&message(vec![])), ErrorKind::InvalidParams);
    assert_eq!(
        kind(&message(vec![Part::default()])),
        ErrorKind::InvalidParams
    );
    let two = Part {
        text: Some("a".into()),
        url: Some("https://example.com".into()),
        ..Part::default()
    };
    assert_eq!(kind(&message(vec![two])), ErrorKind::InvalidParams);
    let raw = Part {
        raw: Some("aGk=".into()),
        ..Part::default()
    };
    assert_eq!(
        kind(&message(vec![raw])),
        ErrorKind::ContentTypeNotSupported
    );
    let mut no_id = message(vec![Part::text("hi")]);
    no_id.message_id = " ".into();
    assert_eq!(kind(&no_id), ErrorKind::InvalidParams);
    let mut long_id = message(vec![Part::text("hi")]);
    long_id.message_id = "m".repeat(256);
    assert_eq!(kind(&long_id), ErrorKind::InvalidParams);
    let mut no_role = message(vec![Part::text("hi")]);
    no_role.role = Role::Unspecified;
    assert_eq!(kind(&no_role), ErrorKind::InvalidParams);
    let nul = message(vec![Part::text("a\0b")]);
    assert_eq!(kind(&nul), ErrorKind::InvalidParams);
    let huge = message(vec![Part::text("y".repeat(100_001))]);
    assert_eq!(kind(&huge), ErrorKind::InvalidParams);
}

#[test]
fn wire_names_round_trip() {
    for state in TaskState::ALL {
        assert_eq!(TaskState::parse(state.as_str()), Some(state));
        assert_eq!(serde_json::to_value(state).unwrap(), state.as_str());
    }
    let read: Message = serde_json::from_value(json!({
        "message_id": "m", "role": "ROLE_AGENT", "parts": [{"text": "t", "media_type": "text/plain"}],
        "unknown": 1
    }))
    .unwrap();
    assert_eq!(read.role, Role::Agent);
    assert_eq!(read.parts[0].media_type.as_deref(), Some("text/plain"));
}

#[test]
fn a_push_is_the_status_the_move_led_to() {
    use muster_a2a::push::status_update;
    use muster_a2a::types::StreamResponse;
    use muster_domain::model::{Event, EventId, EventSeverity};

    // The task has moved on since: the push still says what this move did.
    let now = task(TaskStatus::Done, false);
    let moved_at = datetime!(2026-11-27 11:00 UTC);
    let event = Event {
        id: EventId::from_uuid(Uuid::from_u128(9)),
        org_id: now.org_id,
        event_type: "task.transitioned".into(),
        actor_id: None,
        entity_type: "task".into(),
        entity_id: now.id.as_uuid(),
        severity: EventSeverity::Info,
        payload: json!({"from": "todo", "to": "review"}),
        created_at: moved_at,
    };
    let review = task(TaskStatus::Review, true);
    let StreamResponse::StatusUpdate(update) = status_update(review, &event) else {
        panic!("a status update");
    };
    assert_eq!(update.task_id, now.id.to_string());
    assert_eq!(update.status.state, TaskState::InputRequired);
    assert_eq!(
        update.status.timestamp.as_deref(),
        Some("2026-11-27T11:00:00Z")
    );
    let StreamResponse::StatusUpdate(update) = status_update(now, &event) else {
        panic!("a status update");
    };
    assert_eq!(
        update.status.state,
        TaskState::Working,
        "review without approval"
    );
    let json = serde_json::to_value(StreamResponse::StatusUpdate(update)).unwrap();
    assert_eq!(
        json["statusUpdate"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
}
