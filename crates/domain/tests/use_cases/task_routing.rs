//! Routing, dependencies, comments, escalations and templates of `TaskService` on the
//! in-memory store.

use crate::common::world::World;

use futures_executor::block_on;
use muster_domain::model::{
    AgentMode, CommentBody, Description, EscalationReason, Proficiency, Reason, Tags, TaskPriority,
    TaskStatus, TemplateName, Title, UserRole,
};
use muster_domain::ports::UniqueKey;
use muster_domain::service::{
    AutoAssign, CandidateQuery, Conflict, NewEscalation, NewTask, PageRequest, ServiceError,
    TemplateOverrides,
};
use serde_json::json;

fn query(min_coverage: Option<i64>, max_results: Option<i64>) -> CandidateQuery {
    CandidateQuery::new(min_coverage, max_results).unwrap()
}

#[test]
fn candidates_rank_by_coverage_and_leave_out_those_below_the_threshold() {
    let world = World::new();
    let (both, _) = world.worker(
        "both",
        3,
        &[("rust", Proficiency::Standard), ("sql", Proficiency::Basic)],
    );
    let (half, _) = world.worker("half", 3, &[("rust", Proficiency::Expert)]);
    let (none, _) = world.worker("none", 3, &[("docs", Proficiency::Expert)]);
    let task = world.task_with(
        "rust and sql",
        TaskPriority::Normal,
        json!({ "requiredCapabilities": ["rust", "sql"] }),
    );

    let ranked = block_on(
        world
            .tasks
            .candidates(&world.admin, task.id, query(Some(0), None)),
    )
    .unwrap();
    let order: Vec<_> = ranked.iter().map(|c| (c.agent.id, c.coverage)).collect();
    assert_eq!(order[0], (both.id, 100));
    assert_eq!(order[1], (half.id, 50));
    assert!(order.contains(&(none.id, 0)));

    let covered = block_on(
        world
            .tasks
            .candidates(&world.admin, task.id, query(Some(50), None)),
    )
    .unwrap();
    assert_eq!(
        covered.iter().map(|c| c.agent.id).collect::<Vec<_>>(),
        [both.id, half.id]
    );
    let top = block_on(
        world
            .tasks
            .candidates(&world.admin, task.id, query(Some(0), Some(1))),
    )
    .unwrap();
    assert_eq!(top.len(), 1);
}

#[test]
fn auto_assign_picks_the_best_candidate_not_excluded() {
    let world = World::new();
    let (best, _) = world.worker("best", 3, &[("rust", Proficiency::Expert)]);
    let (second, _) = world.worker("second", 3, &[("rust", Proficiency::Basic)]);
    let task = world.task_with(
        "rust",
        TaskPriority::Normal,
        json!({ "requiredCapabilities": ["rust"] }),
    );
    let excluded = AutoAssign::new(None, vec![best.id]).unwrap();
    let assigned = block_on(world.tasks.auto_assign(&world.admin, task.id, excluded)).unwrap();
    assert_eq!(assigned.assignee_id, Some(second.id));
    assert_eq!(world.reread(&task).assignee_id, Some(second.id));

    let nobody = AutoAssign::new(None, vec![best.id, second.id]).unwrap();
    let err = block_on(world.tasks.auto_assign(&world.admin, task.id, nobody)).unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::NoCandidate)),
        "{err:?}"
    );
    assert_eq!(
        world.reread(&task).assignee_id,
        Some(second.id),
        "unchanged"
    );
}

#[test]
fn viewers_may_look_at_candidates_but_not_assign() {
    let world = World::new();
    world.worker("worker", 3, &[]);
    let task = world.task("anything");
    let viewer = world.user(UserRole::Viewer);
    assert!(block_on(world.tasks.candidates(&viewer, task.id, query(None, None))).is_ok());
    let err = block_on(world.tasks.auto_assign(
        &viewer,
        task.id,
        AutoAssign::new(None, Vec::new()).unwrap(),
    ))
    .unwrap_err();
    assert!(matches!(err, ServiceError::Forbidden(_)), "{err:?}");
    assert_eq!(world.reread(&task).assignee_id, None);
}

#[test]
fn dependencies_are_listed_removed_and_never_close_a_cycle() {
    let world = World::new();
    let (a, b, c) = (world.task("a"), world.task("b"), world.task("c"));
    let ab = block_on(world.tasks.add_dependency(&world.admin, a.id, b.id, true)).unwrap();
    let bc = block_on(world.tasks.add_dependency(&world.admin, b.id, c.id, false)).unwrap();
    assert_eq!(
        (ab.task_id, ab.depends_on_id, ab.blocking),
        (a.id, b.id, true)
    );

    let err = block_on(world.tasks.add_dependency(&world.admin, c.id, a.id, true)).unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::DependencyCycle { .. })
        ),
        "a cycle: {err:?}"
    );
    let err = block_on(world.tasks.add_dependency(&world.admin, a.id, b.id, false)).unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::Duplicate(UniqueKey::Dependency))
        ),
        "a repeat: {err:?}"
    );
    let err = block_on(world.tasks.add_dependency(&world.admin, a.id, a.id, true)).unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::SelfDependency)),
        "itself: {err:?}"
    );

    let listed = block_on(world.tasks.dependencies(&world.admin, b.id)).unwrap();
    assert_eq!(listed, std::slice::from_ref(&bc));
    let removed = block_on(world.tasks.remove_dependency(&world.admin, b.id, bc.id)).unwrap();
    assert_eq!(removed, bc);
    assert!(
        block_on(world.tasks.dependencies(&world.admin, b.id))
            .unwrap()
            .is_empty()
    );
    let err = block_on(world.tasks.remove_dependency(&world.admin, b.id, bc.id)).unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    // Now c may depend on a: the chain is broken.
    block_on(world.tasks.add_dependency(&world.admin, c.id, a.id, true)).unwrap();
    assert_eq!(world.events("task.dependency_added").len(), 3);
    assert_eq!(world.events("task.dependency_removed").len(), 1);
}

#[test]
fn a_blocking_dependency_holds_the_task_until_it_is_done() {
    let world = World::new();
    let (first, second) = (world.task("first"), world.task("second"));
    block_on(
        world
            .tasks
            .add_dependency(&world.admin, second.id, first.id, true),
    )
    .unwrap();
    let move_to = |id, to| block_on(world.tasks.transition(&world.admin, id, to, None));
    let err = move_to(second.id, TaskStatus::InProgress).unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::OpenDependencies { .. })
        ),
        "{err:?}"
    );
    for to in [TaskStatus::InProgress, TaskStatus::Done] {
        move_to(first.id, to).unwrap();
    }
    move_to(second.id, TaskStatus::InProgress).unwrap();
}

#[test]
fn comments_page_oldest_first_and_replies_stay_on_their_task() {
    let world = World::new();
    let (task, other) = (world.task("talked about"), world.task("elsewhere"));
    let say = |task, text: &str, parent| {
        block_on(world.tasks.comment(
            &world.admin,
            task,
            CommentBody::new(text.to_owned()).unwrap(),
            parent,
        ))
    };
    let first = say(task.id, "first", None).unwrap();
    let reply = say(task.id, "reply", Some(first.id)).unwrap();
    assert_eq!(reply.parent_comment_id, Some(first.id));
    let err = say(other.id, "not a reply here", Some(first.id)).unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");

    let page = PageRequest {
        cursor: None,
        limit: 1,
    };
    let one = block_on(world.tasks.comments(&world.admin, task.id, page)).unwrap();
    assert_eq!(one.items, std::slice::from_ref(&first));
    let next = PageRequest {
        cursor: one.next_cursor,
        limit: 10,
    };
    let two = block_on(world.tasks.comments(&world.admin, task.id, next)).unwrap();
    assert_eq!((two.items, two.next_cursor), (vec![reply.clone()], None));
    // The same, for a task read already; another organization's is not found.
    let all = PageRequest {
        cursor: None,
        limit: 10,
    };
    let of = block_on(world.tasks.comments_of(&world.admin, &task, all)).unwrap();
    assert_eq!(of.items, [first.clone(), reply]);
    let mut foreign = task.clone();
    foreign.org_id = muster_domain::model::OrgId::from_uuid(uuid::Uuid::from_u128(9_999));
    let err = block_on(world.tasks.comments_of(&world.admin, &foreign, all)).unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    assert_eq!(world.events("task.commented").len(), 2);
    assert!(world.reread(&task).last_activity_at >= first.created_at);
}

#[test]
fn an_escalation_hands_the_task_to_the_assignees_parent_or_a_senior() {
    let world = World::new();
    let (junior, _) = world.worker("junior", 2, &[]);
    let task = world.task("stuck");
    block_on(world.tasks.assign(&world.admin, task.id, junior.id)).unwrap();
    let new = NewEscalation {
        reason: EscalationReason::Manual,
        notes: Some(Reason::new("needs a senior".into()).unwrap()),
        target: None,
    };
    let escalation = block_on(world.tasks.escalate(&world.admin, task.id, new)).unwrap();
    // junior has no parent: the most senior executing agent above level 2 is HR.
    let hr = world.hr.agent_id().unwrap();
    assert_eq!(escalation.to_agent_id, Some(hr));
    assert_eq!(escalation.from_agent_id, Some(junior.id));
    assert!(!escalation.automatic);
    assert_eq!(world.reread(&task).assignee_id, Some(hr));
    let listed = block_on(
        world
            .tasks
            .escalations(&world.admin, task.id, PageRequest::first()),
    )
    .unwrap();
    assert_eq!(listed.items, [escalation]);
    assert_eq!(world.events("task.escalated").len(), 1);
}

#[test]
fn an_escalation_to_an_agent_that_cannot_take_work_is_refused() {
    let world = World::new();
    let (observer, _) = world.register("watcher", 5, AgentMode::Observer, &[]);
    let task = world.task("stuck");
    let new = NewEscalation {
        reason: EscalationReason::Manual,
        notes: None,
        target: Some(observer.id),
    };
    let err = block_on(world.tasks.escalate(&world.admin, task.id, new)).unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::AssigneeDoesNotExecute { .. })
        ),
        "{err:?}"
    );
    let nobody = NewEscalation {
        reason: EscalationReason::Manual,
        notes: None,
        target: None,
    };
    let err = block_on(world.tasks.escalate(&world.admin, task.id, nobody)).unwrap_err();
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::NoEscalationTarget)),
        "an unassigned task has nobody to escalate from: {err:?}"
    );
    assert!(world.events("task.escalated").is_empty());
}

#[test]
fn a_template_keeps_the_task_shape_and_instantiates_with_overrides() {
    let world = World::new();
    let source = world.task_with(
        "Weekly report",
        TaskPriority::High,
        json!({ "requiredCapabilities": ["docs"] }),
    );
    let name = TemplateName::new("Weekly").unwrap();
    let template = block_on(
        world
            .tasks
            .create_template(&world.admin, source.id, name.clone()),
    )
    .unwrap();
    assert_eq!(template.created_from_task_id, Some(source.id));
    assert_eq!(template.priority, TaskPriority::High);
    let again = block_on(world.tasks.create_template(
        &world.admin,
        source.id,
        TemplateName::new("WEEKLY").unwrap(),
    ))
    .unwrap_err();
    assert!(
        matches!(
            again,
            ServiceError::Conflict(Conflict::Duplicate(UniqueKey::TemplateName))
        ),
        "names are unique in any case: {again:?}"
    );

    let overrides = TemplateOverrides {
        title: Some(Title::new("Weekly report, week 12").unwrap()),
        ..TemplateOverrides::default()
    };
    let task = world.instantiate(template.id, overrides);
    assert_eq!(task.title.as_str(), "Weekly report, week 12");
    assert_eq!(
        (task.priority, task.metadata.clone()),
        (TaskPriority::High, source.metadata)
    );
    assert_eq!(task.status, TaskStatus::Todo);
    let listed = block_on(world.tasks.templates(&world.admin, PageRequest::first())).unwrap();
    assert_eq!(listed.items, [template]);
    assert_eq!(world.events("template.created").len(), 1);
}

#[test]
fn a_template_gives_its_description_and_the_overrides_their_assignee_and_parent() {
    let world = World::new();
    let (worker, _) = world.worker("builder", 3, &[]);
    let parent = world.task("Release 2.0");
    let new = NewTask {
        description: Some(Description::new("Build, sign, upload.".to_owned()).unwrap()),
        approval_required: true,
        tags: Tags::new(vec!["release".to_owned()]).unwrap(),
        ..NewTask::new(Title::new("Ship the build").unwrap())
    };
    let source = block_on(world.tasks.create(&world.admin, new)).unwrap();
    let name = TemplateName::new("Ship").unwrap();
    let template = block_on(world.tasks.create_template(&world.admin, source.id, name)).unwrap();
    let due = world.clock_now() + time::Duration::days(2);
    let overrides = TemplateOverrides {
        assignee_id: Some(worker.id),
        parent_task_id: Some(parent.id),
        due_at: Some(due),
        ..TemplateOverrides::default()
    };
    let task = world.instantiate(template.id, overrides);
    assert_eq!(task.title.as_str(), "Ship the build");
    assert_eq!(
        task.description.as_ref().map(Description::as_str),
        Some("Build, sign, upload.")
    );
    assert_eq!(
        (task.assignee_id, task.parent_task_id, task.due_at),
        (Some(worker.id), Some(parent.id), Some(due))
    );
    assert!(task.approval_required, "the template's");
    assert_eq!(task.tags.as_slice(), ["release"], "the template's");
    assert_eq!(world.reread(&task), task);
}

#[test]
fn escalating_to_the_current_assignee_records_it_without_changing_the_task() {
    let world = World::new();
    let (worker, _) = world.worker("keeper", 3, &[]);
    let task = world.task("stays");
    let assigned = block_on(world.tasks.assign(&world.admin, task.id, worker.id)).unwrap();
    let new = NewEscalation {
        reason: EscalationReason::Manual,
        notes: None,
        target: Some(worker.id),
    };
    let escalation = block_on(world.tasks.escalate(&world.admin, task.id, new)).unwrap();
    assert_eq!(escalation.to_agent_id, Some(worker.id));
    let after = world.reread(&task);
    assert_eq!(after.version, assigned.version, "nothing to change");
    assert_eq!(world.events("task.escalated").len(), 1);
}
