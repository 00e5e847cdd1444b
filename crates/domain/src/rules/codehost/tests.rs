use serde_json::{Value, json};

use super::*;

fn repo() -> Value {
    json!({"id": 1, "full_name": "acme/widgets", "owner": {"login": "acme", "id": 9}})
}

fn issue(action: &str, extra: &Value) -> Value {
    let mut issue = json!({
        "number": 12, "title": "Crash on start", "body": "Steps: run it",
        "html_url": "https://code.example/acme/widgets/issues/12",
        "state": "open", "user": {"login": "ada", "id": 3}, "labels": []
    });
    if let (Some(issue), Some(extra)) = (issue.as_object_mut(), extra.as_object()) {
        issue.extend(extra.clone());
    }
    json!({"action": action, "issue": issue, "repository": repo(), "installation": {"id": 7}})
}

fn at(kind: LinkKind, number: i64) -> ItemRef {
    ItemRef {
        repository: "acme/widgets".into(),
        kind,
        number,
    }
}

fn item(kind: LinkKind, number: i64, title: &str, body: Option<&str>) -> Item {
    Item {
        at: at(kind, number),
        title: title.into(),
        body: body.map(Into::into),
        url: Some(format!(
            "https://code.example/acme/widgets/{}/{number}",
            if kind == LinkKind::Issue {
                "issues"
            } else {
                "pull"
            }
        )),
        author: Some("ada".into()),
    }
}

fn pull(action: &str, extra: &Value) -> Value {
    let mut pull = json!({
        "number": 5, "title": "Fix the crash", "body": null, "state": "open",
        "html_url": "https://code.example/acme/widgets/pull/5",
        "user": {"login": "ada"}, "merged": false, "merged_at": null,
        "head": {"sha": "abc", "ref": "fix"}, "base": {"ref": "main"}
    });
    if let (Some(pull), Some(extra)) = (pull.as_object_mut(), extra.as_object()) {
        pull.extend(extra.clone());
    }
    json!({"action": action, "number": 5, "pull_request": pull, "repository": repo()})
}

fn ignored(event: &str, payload: &Value) -> String {
    match read(event, payload) {
        Ok(HostEvent::Ignored(reason)) => reason,
        other => panic!("{event}: expected ignored, got {other:?}"),
    }
}

#[test]
fn issue_actions_map_to_task_changes() {
    let opened = item(LinkKind::Issue, 12, "Crash on start", Some("Steps: run it"));
    let opened = Item {
        url: Some("https://code.example/acme/widgets/issues/12".into()),
        ..opened
    };
    assert_eq!(
        read("issues", &issue("opened", &json!({}))).unwrap(),
        HostEvent::Opened(opened.clone())
    );
    assert_eq!(
        read("issues", &issue("edited", &json!({}))).unwrap(),
        HostEvent::Edited(opened.clone())
    );
    assert_eq!(
        read("issues", &issue("reopened", &json!({}))).unwrap(),
        HostEvent::Reopened(opened)
    );
    let closed = |reason: Value| read("issues", &issue("closed", &json!({"state_reason": reason})));
    let done = HostEvent::Closed {
        item: at(LinkKind::Issue, 12),
        outcome: TaskStatus::Done,
    };
    assert_eq!(closed(json!("completed")).unwrap(), done);
    assert_eq!(closed(json!(null)).unwrap(), done, "older hosts send none");
    assert_eq!(
        closed(json!("not_planned")).unwrap(),
        HostEvent::Closed {
            item: at(LinkKind::Issue, 12),
            outcome: TaskStatus::Cancelled,
        }
    );
    for action in ["labeled", "assigned", "deleted", "transferred", ""] {
        assert!(
            ignored("issues", &issue(action, &json!({}))).contains("is not handled"),
            "{action}"
        );
    }
}

#[test]
fn pull_request_actions_map_to_task_changes() {
    let opened = item(LinkKind::PullRequest, 5, "Fix the crash", None);
    assert_eq!(
        read("pull_request", &pull("opened", &json!({}))).unwrap(),
        HostEvent::Opened(opened.clone())
    );
    assert_eq!(
        read("pull_request", &pull("reopened", &json!({}))).unwrap(),
        HostEvent::Reopened(opened)
    );
    let closed = |extra| read("pull_request", &pull("closed", &extra)).unwrap();
    let outcome = |status| HostEvent::Closed {
        item: at(LinkKind::PullRequest, 5),
        outcome: status,
    };
    assert_eq!(closed(json!({"merged": true})), outcome(TaskStatus::Done));
    assert_eq!(
        closed(json!({"merged": null, "merged_at": "2026-11-24T10:00:00Z"})),
        outcome(TaskStatus::Done)
    );
    assert_eq!(closed(json!({})), outcome(TaskStatus::Cancelled));
    for action in ["synchronize", "ready_for_review", "labeled"] {
        assert!(ignored("pull_request", &pull(action, &json!({}))).contains(action));
    }
}

#[test]
fn comments_name_the_issue_or_the_pull_request() {
    let comment = |issue: Value| {
        json!({"action": "created", "issue": issue, "repository": repo(),
               "comment": {"id": 1, "body": "Looks good", "user": {"login": "bo"}}})
    };
    assert_eq!(
        read("issue_comment", &comment(json!({"number": 12}))).unwrap(),
        HostEvent::Commented {
            item: at(LinkKind::Issue, 12),
            body: "Looks good".into(),
            author: Some("bo".into()),
        }
    );
    let on_pull = comment(json!({"number": 5, "pull_request": {"url": "https://x"}}));
    assert!(matches!(
        read("issue_comment", &on_pull).unwrap(),
        HostEvent::Commented { item, .. } if item == at(LinkKind::PullRequest, 5)
    ));
    let mut edited = comment(json!({"number": 12}));
    edited["action"] = json!("edited");
    assert!(ignored("issue_comment", &edited).contains("\"edited\""));
}

#[test]
fn check_suites_pass_fail_or_change_nothing() {
    let suite = |action: &str, conclusion: Value| {
        json!({"action": action, "repository": repo(), "check_suite": {
            "id": 1, "head_sha": "abc", "status": "completed", "conclusion": conclusion,
            "pull_requests": [{"number": 5, "head": {"ref": "fix"}}, {"number": 6}]}})
    };
    let completed = |passed| HostEvent::ChecksCompleted {
        repository: "acme/widgets".into(),
        pull_requests: vec![5, 6],
        passed,
    };
    let read_suite = |action, c| read("check_suite", &suite(action, c)).unwrap();
    assert_eq!(read_suite("completed", json!("success")), completed(true));
    assert_eq!(read_suite("completed", json!("failure")), completed(false));
    assert_eq!(
        read_suite("completed", json!("timed_out")),
        completed(false)
    );
    for conclusion in [
        "neutral",
        "cancelled",
        "skipped",
        "action_required",
        "stale",
    ] {
        assert!(
            ignored("check_suite", &suite("completed", json!(conclusion))).contains(conclusion)
        );
    }
    assert!(ignored("check_suite", &suite("completed", json!(null))).contains("nothing"));
    assert!(ignored("check_suite", &suite("requested", json!(null))).contains("requested"));
}

#[test]
fn other_events_are_ignored_by_name() {
    for event in ["ping", "push", "release", "workflow_run", ""] {
        assert!(ignored(event, &json!({"zen": "Keep it simple"})).contains("is not handled"));
    }
    let long = "x".repeat(500);
    assert!(ignored(&long, &json!({})).len() < 120, "caller text is cut");
}

#[test]
fn handled_events_with_missing_or_mistyped_fields_are_refused_by_name() {
    let cases = [
        (
            "issues",
            json!({"action": "opened", "issue": {"number": 1}}),
            "repository.full_name",
        ),
        (
            "issues",
            json!({"action": "opened", "repository": repo()}),
            "issue must be an object",
        ),
        (
            "issues",
            json!({"action": "opened", "repository": repo(), "issue": {"title": "x"}}),
            "number",
        ),
        (
            "issues",
            json!({"action": "opened", "repository": repo(), "issue": {"number": "12"}}),
            "issue:",
        ),
        (
            "pull_request",
            json!({"action": "closed", "repository": repo(), "pull_request": {}}),
            "pull_request.number",
        ),
        (
            "issue_comment",
            json!({"action": "created", "repository": repo(), "issue": {"number": 1}}),
            "comment must be an object",
        ),
        (
            "check_suite",
            json!({"action": "completed", "repository": repo(), "check_suite": {"conclusion": "success", "pull_requests": [{}]}}),
            "check_suite:",
        ),
    ];
    for (event, payload, needle) in cases {
        let err = read(event, &payload).expect_err(event).to_string();
        assert!(err.contains(needle), "{event}: {err}");
    }
}

#[test]
fn the_installation_comes_from_the_installation_else_the_owner() {
    assert_eq!(
        installation_of(&issue("opened", &json!({}))).unwrap().get(),
        7
    );
    let mut no_installation = issue("opened", &json!({}));
    no_installation["installation"] = json!(null);
    assert_eq!(installation_of(&no_installation).unwrap().get(), 9);
    // An organization's own webhook names the organization, which owns the repositories.
    let organization = json!({"zen": "Speak like a human.", "hook_id": 3,
                              "hook": {"type": "Organization"}, "organization": {"id": 9}});
    assert_eq!(installation_of(&organization).unwrap().get(), 9);
    for bad in [
        json!({}),
        json!({"organization": {"id": "9"}}),
        json!({"installation": {"id": "7"}}),
        json!({"installation": {"id": -1}}),
        json!({"repository": {"owner": {"id": 0}}}),
        json!({"installation": {"id": 1.5}}),
    ] {
        assert!(installation_of(&bad).is_err(), "{bad}");
    }
}
