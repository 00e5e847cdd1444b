//! `CodeHostService`: connections and what a code host's events do to tasks, on the
//! in-memory store.

use crate::common::world::World;

use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{
    HookName, InstallationId, IntegrationAction, IntegrationAnswer, RepositoryName, TaskId,
    TaskStatus, UserRole,
};
use muster_domain::ports::{MessageSigner, UniqueKey};
use muster_domain::service::{
    CodeHostPorts, CodeHostService, Conflict, HostDelivery, IssuedConnection, NewConnection,
    ServiceError, Unauthorized,
};
use serde_json::{Value, json};

const INSTALLATION: i64 = 4242;
const REPO: &str = "acme/parser";

fn service(world: &World) -> CodeHostService {
    CodeHostService::new(CodeHostPorts {
        tasks: world.tasks.clone(),
        connections: Arc::new(world.store.clone()),
        uow: Arc::new(world.store.clone()),
        vault: world.vault.clone(),
        signer: world.signer.clone(),
        clock: world.clock.clone(),
        ids: world.ids.clone(),
    })
}

fn connect(world: &World, host: &CodeHostService, repository: Option<&str>) -> IssuedConnection {
    let new = NewConnection {
        installation_id: InstallationId::new(INSTALLATION).unwrap(),
        name: HookName::new("parser repo").unwrap(),
        repository: repository.map(|r| RepositoryName::new(r).unwrap()),
    };
    block_on(host.create(&world.admin, new)).unwrap()
}

/// A delivery of `event` with `payload`, signed with `secret` as the code host does.
fn delivery(world: &World, secret: &str, event: &str, id: &str, payload: &Value) -> HostDelivery {
    let body = serde_json::to_vec(payload).unwrap();
    HostDelivery {
        event: event.to_owned(),
        delivery: Some(id.to_owned()),
        signature: format!("sha256={}", world.signer.sign_hex(secret.as_bytes(), &body)),
        body,
    }
}

fn issue(action: &str, number: i64, title: &str, extra: Value) -> Value {
    let mut issue = json!({
        "number": number,
        "title": title,
        "body": "It crashes.",
        "html_url": format!("https://host.example/{REPO}/issues/{number}"),
        "user": { "login": "reporter" },
    });
    if let (Value::Object(issue), Value::Object(extra)) = (&mut issue, extra) {
        issue.extend(extra);
    }
    json!({
        "action": action,
        "installation": { "id": INSTALLATION },
        "repository": { "full_name": REPO },
        "issue": issue,
    })
}

fn task_of(answer: &IntegrationAnswer) -> TaskId {
    answer.task_id.expect("the answer names a task")
}

#[test]
fn an_opened_issue_becomes_a_task_once_however_often_it_is_delivered() {
    let world = World::new();
    let host = service(&world);
    let issued = connect(&world, &host, Some(REPO));
    let opened = delivery(
        &world,
        &issued.webhook_secret,
        "issues",
        "d-1",
        &issue("opened", 7, "Parser crashes", json!({})),
    );
    let answer = block_on(host.receive(&opened)).unwrap();
    assert_eq!(answer.action, IntegrationAction::Created);
    let task = block_on(world.tasks.get(&world.admin, task_of(&answer))).unwrap();
    assert_eq!(task.title.as_str(), "Parser crashes");
    assert_eq!(task.status, TaskStatus::Todo);

    // The same delivery again answers the same, with no second task.
    assert_eq!(block_on(host.receive(&opened)).unwrap(), answer);
    assert_eq!(world.events("task.created").len(), 1);
    // Another delivery of the same issue opening finds the linked task.
    let again = delivery(
        &world,
        &issued.webhook_secret,
        "issues",
        "d-2",
        &issue("opened", 7, "Parser crashes", json!({})),
    );
    let answer = block_on(host.receive(&again)).unwrap();
    assert_eq!(answer.action, IntegrationAction::Ignored);
    assert_eq!(answer.task_id, Some(task.id));
    assert_eq!(world.events("task.created").len(), 1);
}

#[test]
fn edits_comments_and_closing_follow_the_linked_task() {
    let world = World::new();
    let host = service(&world);
    let issued = connect(&world, &host, None);
    let send = |event: &str, id: &str, payload: Value| {
        block_on(host.receive(&delivery(
            &world,
            &issued.webhook_secret,
            event,
            id,
            &payload,
        )))
        .unwrap()
    };
    let created = send("issues", "1", issue("opened", 9, "Old title", json!({})));
    let task = task_of(&created);

    let edited = send("issues", "2", issue("edited", 9, "New title", json!({})));
    assert_eq!(
        (edited.action, edited.task_id),
        (IntegrationAction::Updated, Some(task))
    );
    assert_eq!(
        block_on(world.tasks.get(&world.admin, task))
            .unwrap()
            .title
            .as_str(),
        "New title"
    );

    let comment = json!({
        "action": "created",
        "installation": { "id": INSTALLATION },
        "repository": { "full_name": REPO },
        "issue": { "number": 9 },
        "comment": { "body": "Found the cause.", "user": { "login": "dev" } },
    });
    let commented = send("issue_comment", "3", comment);
    assert_eq!(commented.action, IntegrationAction::Commented);
    let comments = block_on(world.tasks.comments(
        &world.admin,
        task,
        muster_domain::service::PageRequest::first(),
    ))
    .unwrap();
    assert!(comments.items[0].body.as_str().contains("Found the cause."));
    assert!(comments.items[0].body.as_str().contains("dev"));

    let closed = send(
        "issues",
        "4",
        issue(
            "closed",
            9,
            "New title",
            json!({ "state_reason": "completed" }),
        ),
    );
    assert_eq!(
        (closed.action, closed.task_id),
        (IntegrationAction::Completed, Some(task))
    );
    assert_eq!(
        block_on(world.tasks.get(&world.admin, task))
            .unwrap()
            .status,
        TaskStatus::Done
    );
}

#[test]
fn an_issue_closed_as_not_planned_cancels_its_task() {
    let world = World::new();
    let host = service(&world);
    let issued = connect(&world, &host, None);
    let send = |id: &str, payload: Value| {
        block_on(host.receive(&delivery(
            &world,
            &issued.webhook_secret,
            "issues",
            id,
            &payload,
        )))
        .unwrap()
    };
    let task = task_of(&send("1", issue("opened", 3, "Maybe", json!({}))));
    let closed = send(
        "2",
        issue(
            "closed",
            3,
            "Maybe",
            json!({ "state_reason": "not_planned" }),
        ),
    );
    assert_eq!(closed.action, IntegrationAction::Cancelled);
    assert_eq!(
        block_on(world.tasks.get(&world.admin, task))
            .unwrap()
            .status,
        TaskStatus::Cancelled
    );
}

#[test]
fn what_a_connection_does_not_cover_is_ignored_and_changes_nothing() {
    let world = World::new();
    let host = service(&world);
    let issued = connect(&world, &host, Some("acme/other"));
    let send = |event: &str, id: &str, payload: Value| {
        block_on(host.receive(&delivery(
            &world,
            &issued.webhook_secret,
            event,
            id,
            &payload,
        )))
        .unwrap()
    };
    let elsewhere = send("issues", "1", issue("opened", 1, "Not ours", json!({})));
    assert_eq!(elsewhere.action, IntegrationAction::Ignored);
    let unhandled = send("issues", "2", issue("labeled", 1, "x", json!({})));
    assert_eq!(unhandled.action, IntegrationAction::Ignored);
    let unknown = send(
        "deployment",
        "3",
        json!({ "installation": { "id": INSTALLATION } }),
    );
    assert_eq!(unknown.action, IntegrationAction::Ignored);

    block_on(host.set_enabled(&world.admin, issued.connection.id, Some(false))).unwrap();
    let off = json!({
        "action": "opened",
        "installation": { "id": INSTALLATION },
        "repository": { "full_name": "acme/other" },
        "issue": { "number": 2, "title": "While off" },
    });
    assert_eq!(send("issues", "4", off).action, IntegrationAction::Ignored);
    assert!(world.events("task.created").is_empty());
}

#[test]
fn a_bad_signature_an_unknown_installation_or_malformed_json_is_refused() {
    let world = World::new();
    let host = service(&world);
    let issued = connect(&world, &host, None);
    let payload = issue("opened", 1, "x", json!({}));
    let forged = delivery(&world, "not the secret", "issues", "1", &payload);
    let err = block_on(host.receive(&forged)).unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Unauthorized(Unauthorized::InvalidHostSignature)
        ),
        "{err:?}"
    );
    let mut upper = delivery(&world, &issued.webhook_secret, "issues", "2", &payload);
    upper.signature = upper
        .signature
        .to_uppercase()
        .replacen("SHA256=", "sha256=", 1);
    assert_eq!(
        block_on(host.receive(&upper)).unwrap().action,
        IntegrationAction::Created,
        "hex digits in either case"
    );

    let stranger = json!({
        "action": "opened",
        "installation": { "id": 99 },
        "repository": { "full_name": REPO },
        "issue": { "number": 1, "title": "x" },
    });
    let err = block_on(host.receive(&delivery(&world, "s", "issues", "3", &stranger))).unwrap_err();
    assert!(
        matches!(err, ServiceError::UnknownInstallation(99)),
        "{err:?}"
    );
    let mut broken = delivery(&world, &issued.webhook_secret, "issues", "4", &payload);
    broken.body = b"{not json".to_vec();
    let err = block_on(host.receive(&broken)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    assert_eq!(world.events("task.created").len(), 1);
}

#[test]
fn connections_are_managed_by_users_who_write_and_deleting_one_forgets_it() {
    let world = World::new();
    let host = service(&world);
    let new = || NewConnection {
        installation_id: InstallationId::new(INSTALLATION).unwrap(),
        name: HookName::new("repo").unwrap(),
        repository: None,
    };
    let err = block_on(host.create(&world.user(UserRole::Viewer), new())).unwrap_err();
    assert!(matches!(err, ServiceError::Forbidden(_)), "{err:?}");
    let issued = block_on(host.create(&world.admin, new())).unwrap();
    assert_eq!(issued.webhook_secret.len(), 64);
    let err = block_on(host.create(&world.admin, new())).unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::Duplicate(UniqueKey::Installation))
        ),
        "one connection per installation: {err:?}"
    );
    assert_eq!(
        block_on(host.list(&world.admin)).unwrap(),
        std::slice::from_ref(&issued.connection)
    );

    block_on(host.delete(&world.admin, issued.connection.id)).unwrap();
    assert!(block_on(host.list(&world.admin)).unwrap().is_empty());
    let err = block_on(host.get(&world.admin, issued.connection.id)).unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    let payload = issue("opened", 1, "x", json!({}));
    let err = block_on(host.receive(&delivery(
        &world,
        &issued.webhook_secret,
        "issues",
        "1",
        &payload,
    )))
    .unwrap_err();
    assert!(
        matches!(err, ServiceError::UnknownInstallation(_)),
        "{err:?}"
    );
}

#[test]
fn the_issue_body_becomes_the_description_and_edits_follow_it() {
    let world = World::new();
    let host = service(&world);
    let issued = connect(&world, &host, None);
    let send = |id: &str, payload: Value| {
        block_on(host.receive(&delivery(
            &world,
            &issued.webhook_secret,
            "issues",
            id,
            &payload,
        )))
        .unwrap()
    };
    let with_body = task_of(&send("1", issue("opened", 1, "Has a body", json!({}))));
    let described = block_on(world.tasks.get(&world.admin, with_body)).unwrap();
    assert_eq!(described.description.unwrap().as_str(), "It crashes.");
    let blank = task_of(&send(
        "2",
        issue("opened", 2, "Blank body", json!({ "body": "  \n " })),
    ));
    assert_eq!(
        block_on(world.tasks.get(&world.admin, blank))
            .unwrap()
            .description,
        None
    );
    send(
        "3",
        issue(
            "edited",
            1,
            "Has a body",
            json!({ "body": "It crashes on empty input." }),
        ),
    );
    let edited = block_on(world.tasks.get(&world.admin, with_body)).unwrap();
    assert_eq!(
        edited.description.unwrap().as_str(),
        "It crashes on empty input."
    );
}

#[test]
fn reopening_a_closed_issue_opens_a_new_task_and_an_open_one_is_left_alone() {
    let world = World::new();
    let host = service(&world);
    let issued = connect(&world, &host, None);
    let send = |id: &str, payload: Value| {
        block_on(host.receive(&delivery(
            &world,
            &issued.webhook_secret,
            "issues",
            id,
            &payload,
        )))
        .unwrap()
    };
    let first = task_of(&send("1", issue("opened", 5, "Flaky", json!({}))));
    let still_open = send("2", issue("reopened", 5, "Flaky", json!({})));
    assert_eq!(
        (still_open.action, still_open.task_id),
        (IntegrationAction::Ignored, Some(first))
    );
    send(
        "3",
        issue("closed", 5, "Flaky", json!({ "state_reason": "completed" })),
    );
    let reopened = send("4", issue("reopened", 5, "Flaky", json!({})));
    assert_eq!(reopened.action, IntegrationAction::Created);
    assert_ne!(
        reopened.task_id,
        Some(first),
        "a new task for the new round"
    );
    assert_eq!(world.events("task.created").len(), 2);
}

fn pull_request(action: &str, number: i64) -> Value {
    json!({
        "action": action,
        "installation": { "id": INSTALLATION },
        "repository": { "full_name": REPO },
        "pull_request": { "number": number, "title": "Fix the parser", "merged": false },
    })
}

fn check_suite(conclusion: &str, numbers: &[i64]) -> Value {
    let prs: Vec<Value> = numbers.iter().map(|n| json!({ "number": n })).collect();
    json!({
        "action": "completed",
        "installation": { "id": INSTALLATION },
        "repository": { "full_name": REPO },
        "check_suite": { "conclusion": conclusion, "pull_requests": prs },
    })
}

#[test]
fn failing_checks_block_a_pull_requests_task_and_passing_ones_unblock_it() {
    let world = World::new();
    let host = service(&world);
    let issued = connect(&world, &host, None);
    let send = |event: &str, id: &str, payload: Value| {
        block_on(host.receive(&delivery(
            &world,
            &issued.webhook_secret,
            event,
            id,
            &payload,
        )))
        .unwrap()
    };
    let task = task_of(&send("pull_request", "1", pull_request("opened", 12)));
    let status = || {
        block_on(world.tasks.get(&world.admin, task))
            .unwrap()
            .status
    };
    assert_eq!(status(), TaskStatus::Review);

    let passed_early = send("check_suite", "2", check_suite("success", &[12]));
    assert_eq!(
        (passed_early.action, passed_early.task_id),
        (IntegrationAction::Ignored, Some(task)),
        "not blocked: nothing to unblock"
    );
    let failed = send("check_suite", "3", check_suite("failure", &[99, 12]));
    assert_eq!(
        (failed.action, failed.task_id),
        (IntegrationAction::Moved, Some(task))
    );
    assert_eq!(status(), TaskStatus::Blocked);
    let passed = send("check_suite", "4", check_suite("success", &[12]));
    assert_eq!(passed.action, IntegrationAction::Moved);
    assert_eq!(status(), TaskStatus::InProgress);
    // Of several pull requests, the answer names one that moved, not one left alone.
    let other = task_of(&send("pull_request", "6", pull_request("opened", 13)));
    send("check_suite", "7", check_suite("failure", &[13]));
    let both = send("check_suite", "8", check_suite("success", &[12, 13]));
    assert_eq!(
        (both.action, both.task_id),
        (IntegrationAction::Moved, Some(other))
    );
    // When several moved, the first one.
    let again = send("check_suite", "9", check_suite("failure", &[12, 13]));
    assert_eq!(
        (again.action, again.task_id),
        (IntegrationAction::Moved, Some(task))
    );
    let unknown = send("check_suite", "5", check_suite("failure", &[77]));
    assert_eq!(
        (unknown.action, unknown.task_id),
        (IntegrationAction::Ignored, None)
    );
}

#[test]
fn a_delivery_id_is_at_most_200_printable_characters() {
    let world = World::new();
    let host = service(&world);
    let issued = connect(&world, &host, None);
    let attempt = |id: String, number: i64| {
        let mut d = delivery(
            &world,
            &issued.webhook_secret,
            "issues",
            "x",
            &issue("opened", number, "t", json!({})),
        );
        d.delivery = Some(id);
        block_on(host.receive(&d))
    };
    assert!(attempt("d".repeat(200), 1).is_ok());
    for (bad, number) in [("d".repeat(201), 2), ("tab\there".to_owned(), 3)] {
        let err = attempt(bad, number).unwrap_err();
        assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");
    }
    assert_eq!(world.events("task.created").len(), 1);
}
