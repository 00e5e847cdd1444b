//! `RunService::start`, `get` and `list` on the in-memory store (decision D-106): only the
//! assignee of a task in progress starts a run, one open run per task, and the runs of
//! an organization are its own.

use crate::common::economy::{checked, grant};
use crate::common::runs::{code, finish, funded, reread, running, start, task_for};
use crate::common::world::World;

use futures_executor::block_on;
use muster_domain::model::{Actor, OrgId, RunStatus, TaskStatus, UserRole};
use muster_domain::ports::RunFilter;
use muster_domain::service::{Conflict, PageRequest, ServiceError, StartRun, runs_of_task};
use serde_json::json;
use time::Duration;
use uuid::Uuid;

#[test]
fn only_the_assignee_of_a_task_in_progress_starts_a_run() {
    let world = World::new();
    let (me, my_actor) = funded(&world, "me", 0);
    let (_, other) = funded(&world, "other", 0);
    let todo = world.task("not started");
    assert_eq!(
        code(start(&world, &my_actor, &todo, 0)),
        "task_not_in_progress"
    );
    block_on(world.tasks.assign(&world.admin, todo.id, me.id)).unwrap();
    assert_eq!(
        code(start(&world, &my_actor, &todo, 0)),
        "task_not_in_progress",
        "assigned but not started"
    );
    let task = task_for(&world, me.id, &my_actor, "mine");
    assert_eq!(code(start(&world, &other, &task, 0)), "not_task_assignee");
    assert_eq!(
        code(start(&world, &world.admin, &task, 0)),
        "agent_required",
        "a user runs nothing"
    );
    assert!(world.events("run.started").is_empty());

    let run = start(&world, &my_actor, &task, 0).unwrap();
    assert_eq!(run.status, RunStatus::Running);
    assert_eq!((run.task_id, run.agent_id), (task.id, me.id));
    assert_eq!(run.adapter.as_deref(), Some("claude-code"));
    assert_eq!(run.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(run.started_at, world.clock_now());
    assert_eq!(run.ended_at, None);
    assert!(!run.stop_requested);
    assert_eq!(run.stop_reason, None);
    assert_eq!(
        (run.log_lines, run.log_bytes, run.log_truncated),
        (0, 0, false)
    );
    assert_eq!(run.credits_per_usd, 1_000);
    assert_eq!(run.usage.totals.reports, 0);
    assert_eq!(reread(&world, run.id), run, "stored as answered");
    let started = world.events("run.started");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0].entity_type, "run");
    assert_eq!(started[0].entity_id, run.id.as_uuid());
    assert_eq!(
        started[0].payload,
        json!({"taskId": task.id, "agentId": me.id, "adapter": "claude-code",
            "model": "claude-sonnet-4-5", "reservedCredits": 0})
    );
}

#[test]
fn a_task_has_one_open_run_at_a_time() {
    let world = World::new();
    let (_, actor, task, first) = running(&world, "worker", 0);
    let err = start(&world, &actor, &task, 0).unwrap_err();
    assert_eq!(err.code(), "run_already_open");
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::RunAlreadyOpen { run }) if run == first.id),
        "{err:?}"
    );
    assert_eq!(world.events("run.started").len(), 1);

    finish(&world, &actor, first.id, RunStatus::Failed).unwrap();
    world.clock.advance(Duration::seconds(1));
    let second = start(&world, &actor, &task, 0).unwrap();
    assert_ne!(
        second.id, first.id,
        "a finished run leaves room for the next"
    );
    let page = block_on(world.runs.list(
        &world.admin,
        &runs_of_task(task.id),
        PageRequest::first(),
    ))
    .unwrap();
    let ids: Vec<_> = page.items.iter().map(|r| r.id).collect();
    assert_eq!(ids, [second.id, first.id], "newest first");
}

#[test]
fn runs_are_listed_newest_first_filtered_and_paged() {
    let world = World::new();
    let (a, a_actor, a_task, a_run) = running(&world, "alpha", 0);
    world.clock.advance(Duration::seconds(1));
    let (b, _, _, b_run) = running(&world, "beta", 0);
    world.clock.advance(Duration::seconds(1));
    finish(&world, &a_actor, a_run.id, RunStatus::Succeeded).unwrap();
    let a_second = start(&world, &a_actor, &a_task, 0).unwrap();

    let list = |filter: RunFilter, limit: u32, cursor| {
        let page = block_on(
            world
                .runs
                .list(&world.admin, &filter, PageRequest { cursor, limit }),
        )
        .unwrap();
        (
            page.items.iter().map(|r| r.id).collect::<Vec<_>>(),
            page.next_cursor,
        )
    };
    let all = list(RunFilter::default(), 10, None);
    assert_eq!(all, (vec![a_second.id, b_run.id, a_run.id], None));
    let first = list(RunFilter::default(), 2, None);
    assert_eq!(first, (vec![a_second.id, b_run.id], Some(b_run.id)));
    assert_eq!(
        list(RunFilter::default(), 2, first.1),
        (vec![a_run.id], None)
    );
    let of_a = RunFilter {
        agent: Some(a.id),
        ..RunFilter::default()
    };
    assert_eq!(list(of_a, 10, None).0, [a_second.id, a_run.id]);
    let of_b = RunFilter {
        agent: Some(b.id),
        ..RunFilter::default()
    };
    assert_eq!(list(of_b, 10, None).0, [b_run.id]);
    let succeeded = RunFilter {
        status: Some(RunStatus::Succeeded),
        ..RunFilter::default()
    };
    assert_eq!(list(succeeded, 10, None).0, [a_run.id]);
    let started_late = RunFilter {
        from: Some(b_run.started_at),
        ..RunFilter::default()
    };
    assert_eq!(list(started_late, 10, None).0, [a_second.id, b_run.id]);
    let started_early = RunFilter {
        to: Some(b_run.started_at),
        ..RunFilter::default()
    };
    assert_eq!(
        list(started_early, 10, None).0,
        [a_run.id],
        "`to` is exclusive"
    );
    assert_eq!(
        code(block_on(world.runs.list(
            &world.admin,
            &RunFilter::default(),
            PageRequest {
                cursor: None,
                limit: 0
            }
        ))),
        "validation_failed"
    );
}

#[test]
fn another_organizations_run_is_not_found() {
    let world = World::new();
    let (_, actor, _, run) = running(&world, "worker", 10);
    let stranger_org = OrgId::from_uuid(Uuid::now_v7());
    let stranger = Actor {
        org_id: stranger_org,
        ..world.admin.clone()
    };
    let their_agent = Actor {
        org_id: stranger_org,
        ..actor.clone()
    };
    assert_eq!(
        code(block_on(world.runs.get(&stranger, run.id))),
        "run_not_found"
    );
    assert_eq!(
        code(block_on(world.runs.stop(&stranger, run.id))),
        "run_not_found"
    );
    assert_eq!(
        code(block_on(world.runs.log(&stranger, run.id, 0, 10))),
        "run_not_found"
    );
    assert_eq!(
        code(finish(&world, &their_agent, run.id, RunStatus::Succeeded)),
        "run_not_found"
    );
    assert_eq!(
        code(block_on(world.runs.append_log(
            &their_agent,
            run.id,
            Vec::new()
        ))),
        "run_not_found"
    );
    let listed = block_on(
        world
            .runs
            .list(&stranger, &RunFilter::default(), PageRequest::first()),
    )
    .unwrap();
    assert!(listed.items.is_empty());
    assert_eq!(reread(&world, run.id), run, "untouched");
}

#[test]
fn a_reservation_is_held_for_the_run_and_must_fit_what_the_agent_may_spend() {
    let world = World::new();
    let (me, actor) = funded(&world, "saver", 100);
    let task = task_for(&world, me.id, &actor, "reserved");
    let other = task_for(&world, me.id, &actor, "other");
    let before = checked(&world);
    assert_eq!(
        code(start(&world, &actor, &task, 101)),
        "budget_exhausted",
        "more than the balance"
    );
    assert_eq!(checked(&world), before, "a refused start changes nothing");
    assert_eq!(
        code(block_on(world.runs.start(
            &actor,
            task.id,
            StartRun {
                reserve_credits: -1,
                ..StartRun::default()
            }
        ))),
        "validation_failed"
    );

    let run = start(&world, &actor, &task, 60).unwrap();
    assert_eq!(run.reserved_credits, 60);
    let held = checked(&world);
    assert_eq!(held.agent(me.id).reserved_credits, 60);
    assert_eq!(held.balance(me.id), 100, "still its own");
    assert_eq!(
        world.events("run.started")[0].payload["reservedCredits"],
        json!(60)
    );
    assert_eq!(
        code(start(&world, &actor, &other, 41)),
        "budget_exhausted",
        "40 left besides the hold"
    );
    let second = start(&world, &actor, &other, 40).unwrap();
    assert_eq!(checked(&world).agent(me.id).reserved_credits, 100);

    finish(&world, &actor, run.id, RunStatus::Succeeded).unwrap();
    finish(&world, &actor, second.id, RunStatus::Succeeded).unwrap();
    let after = checked(&world);
    assert_eq!(after.agent(me.id).reserved_credits, 0, "released at finish");
    assert_eq!(after.balance(me.id), 100);
    assert_eq!(reread(&world, run.id).reserved_credits, 0);
    grant(&world, me.id, 1);
    assert_eq!(checked(&world).balance(me.id), 101);
}

#[test]
fn a_viewer_starts_nothing_and_an_agent_needs_a_task_that_exists() {
    let world = World::new();
    let (me, actor) = funded(&world, "me", 0);
    let task = task_for(&world, me.id, &actor, "mine");
    assert_eq!(
        code(start(&world, &world.user(UserRole::Viewer), &task, 0)),
        "agent_required"
    );
    let mut gone = task.clone();
    gone.id = muster_domain::model::TaskId::from_uuid(Uuid::now_v7());
    assert_eq!(code(start(&world, &actor, &gone, 0)), "task_not_found");
    assert_eq!(world.reread(&task).status, TaskStatus::InProgress);
}

#[test]
fn a_run_keeps_the_trace_it_was_started_in_and_only_a_trace_id() {
    let world = World::new();
    let (me, my_actor) = funded(&world, "me", 0);
    for (given, kept) in [
        (
            Some("4bf92f3577b34da6a3ce929d0e0e4736"),
            Some("4bf92f3577b34da6a3ce929d0e0e4736"),
        ),
        (Some("00000000000000000000000000000000"), None),
        (Some("4BF92F3577B34DA6A3CE929D0E0E4736"), None),
        (Some("not a trace id"), None),
        (None, None),
    ] {
        let task = task_for(&world, me.id, &my_actor, "traced");
        let run = block_on(world.runs.start(
            &my_actor,
            task.id,
            StartRun {
                adapter: None,
                model: None,
                reserve_credits: 0,
                trace_id: given.map(str::to_owned),
            },
        ))
        .unwrap();
        assert_eq!(run.trace_id.as_deref(), kept, "{given:?}");
        assert_eq!(reread(&world, run.id).trace_id.as_deref(), kept);
    }
}
