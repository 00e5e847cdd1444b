//! How runs end and stop on the in-memory store (decision D-106): the agent finishes
//! its run once; overseers ask it to stop; a cancelled or reassigned task asks it to
//! stop; a lapsed lease loses it and releases what it held.

use crate::common::economy::{checked, child, manager};
use crate::common::runs::{
    claimed, code, events_of, finish, funded, reread, running, start, usage,
};
use crate::common::world::World;

use futures_executor::block_on;
use muster_domain::model::{
    Lease, LogStream, NewLogLine, RunStatus, StopReason, TaskStatus, UserRole,
};
use muster_domain::service::{FinishRun, ServiceError};
use serde_json::json;
use time::Duration;

#[test]
fn the_agent_finishes_its_run_once_and_a_finished_run_takes_nothing_more() {
    let world = World::new();
    let (me, actor, task, run) = running(&world, "worker", 0);
    let (_, other) = funded(&world, "other", 0);
    assert_eq!(
        code(finish(&world, &other, run.id, RunStatus::Succeeded)),
        "run_agent_required"
    );
    assert_eq!(
        code(finish(&world, &world.admin, run.id, RunStatus::Succeeded)),
        "run_agent_required",
        "a user finishes no run"
    );
    assert_eq!(
        code(finish(&world, &actor, run.id, RunStatus::Lost)),
        "validation_failed",
        "lost is the sweep's"
    );
    assert_eq!(
        code(finish(&world, &actor, run.id, RunStatus::Running)),
        "validation_failed"
    );
    world.clock.advance(Duration::milliseconds(1_500));
    let done = block_on(world.runs.finish(
        &actor,
        run.id,
        FinishRun {
            status: RunStatus::Succeeded,
            exit_code: Some(0),
            summary: Some("all green".into()),
        },
    ))
    .unwrap();
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(done.ended_at, Some(world.clock_now()));
    assert_eq!(done.exit_code, Some(0));
    assert_eq!(done.summary.as_deref(), Some("all green"));
    assert_eq!(reread(&world, run.id), done);
    let finished = events_of(&world, "run.finished", run.id.as_uuid());
    assert_eq!(finished.len(), 1);
    let payload = &finished[0].payload;
    assert_eq!(payload["status"], "succeeded");
    assert_eq!(payload["taskId"], json!(task.id));
    assert_eq!(payload["agentId"], json!(me.id));
    assert_eq!(payload["exitCode"], 0);
    assert_eq!(payload["durationMs"], 1_500);
    assert_eq!(payload["usage"]["reports"], 0);

    for refused in [
        code(finish(&world, &actor, run.id, RunStatus::Failed)),
        code(block_on(world.runs.append_log(
            &actor,
            run.id,
            vec![NewLogLine {
                stream: LogStream::Stdout,
                text: "late".into(),
            }],
        ))),
        code(block_on(world.runs.report_usage(
            &actor,
            run.id,
            usage("gpt-5", 1, 1, Some(1)),
        ))),
        code(block_on(world.runs.heartbeat(
            &actor,
            run.id,
            Lease::seconds(Some(60)).unwrap(),
        ))),
    ] {
        assert_eq!(refused, "run_closed");
    }
    assert_eq!(reread(&world, run.id), done, "nothing changed");
    assert_eq!(world.events("run.finished").len(), 1);
    assert_eq!(
        world.reread(&task).status,
        TaskStatus::InProgress,
        "the task is the agent's to move"
    );
}

#[test]
fn overseers_may_ask_a_run_to_stop_and_the_first_reason_stays() {
    let world = World::new();
    let (_, boss) = manager(&world, "boss", 6, 0);
    let (kid, kid_actor) = child(&world, &boss, "kid");
    let task = crate::common::runs::task_for(&world, kid.id, &kid_actor, "kid's task");
    let run = start(&world, &kid_actor, &task, 0).unwrap();
    let (_, stranger) = funded(&world, "stranger", 0);

    assert_eq!(
        code(block_on(world.runs.stop(&stranger, run.id))),
        "overseer_required"
    );
    assert!(
        matches!(
            block_on(world.runs.stop(&stranger, run.id)),
            Err(ServiceError::Forbidden(_))
        ),
        "403"
    );
    assert_eq!(
        code(block_on(
            world.runs.stop(&world.user(UserRole::Viewer), run.id)
        )),
        "viewer_read_only"
    );
    assert!(!reread(&world, run.id).stop_requested);

    let stopped = block_on(world.runs.stop(&boss, run.id)).unwrap();
    assert!(stopped.stop_requested);
    assert_eq!(stopped.stop_reason, Some(StopReason::Requested));
    assert_eq!(stopped.status, RunStatus::Running, "the agent stops it");
    let asked = events_of(&world, "run.stop_requested", run.id.as_uuid());
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].payload["reason"], "requested");

    // Asking again (the agent itself, a user) changes nothing.
    let again = block_on(world.runs.stop(&kid_actor, run.id)).unwrap();
    assert_eq!(again, stopped);
    block_on(world.runs.stop(&world.admin, run.id)).unwrap();
    assert_eq!(world.events("run.stop_requested").len(), 1);

    let heard = block_on(world.runs.append_log(&kid_actor, run.id, Vec::new())).unwrap();
    assert!(heard.stop_requested, "every answer carries the stop");
    let ended = finish(&world, &kid_actor, run.id, RunStatus::Stopped).unwrap();
    assert_eq!(ended.status, RunStatus::Stopped);
    let late = block_on(world.runs.stop(&boss, run.id)).unwrap();
    assert_eq!(late, ended, "a finished run is left as it is");
    assert_eq!(world.events("run.stop_requested").len(), 1);
}

#[test]
fn a_user_may_stop_any_run_of_the_organization() {
    let world = World::new();
    let (_, _, _, run) = running(&world, "worker", 0);
    let stopped = block_on(world.runs.stop(&world.user(UserRole::Operator), run.id)).unwrap();
    assert_eq!(stopped.stop_reason, Some(StopReason::Requested));
}

#[test]
fn cancelling_the_task_asks_its_run_to_stop() {
    let world = World::new();
    let (_, actor, task, run) = running(&world, "worker", 0);
    block_on(
        world
            .tasks
            .transition(&world.admin, task.id, TaskStatus::Cancelled, None),
    )
    .unwrap();
    let asked = reread(&world, run.id);
    assert!(asked.stop_requested);
    assert_eq!(asked.stop_reason, Some(StopReason::Cancelled));
    assert_eq!(asked.status, RunStatus::Running);
    let events = events_of(&world, "run.stop_requested", run.id.as_uuid());
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].payload["reason"], "cancelled");
    assert_eq!(events[0].entity_type, "run");
    let ended = finish(&world, &actor, run.id, RunStatus::Cancelled).unwrap();
    assert_eq!(ended.status, RunStatus::Cancelled);
    assert_eq!(ended.stop_reason, Some(StopReason::Cancelled));
}

#[test]
fn handing_the_task_to_another_agent_asks_its_run_to_stop() {
    let world = World::new();
    let (_, actor, task, run) = running(&world, "first", 0);
    let (second, second_actor) = funded(&world, "second", 0);
    block_on(world.tasks.assign(&world.admin, task.id, second.id)).unwrap();
    let asked = reread(&world, run.id);
    assert!(asked.stop_requested);
    assert_eq!(asked.stop_reason, Some(StopReason::Reassigned));
    assert_eq!(
        events_of(&world, "run.stop_requested", run.id.as_uuid())[0].payload["reason"],
        "reassigned"
    );
    // The new assignee cannot start its own until the old run is finished.
    let task = world.reread(&task);
    assert_eq!(task.status, TaskStatus::InProgress);
    assert_eq!(task.assignee_id, Some(second.id));
    assert_eq!(
        code(start(&world, &second_actor, &task, 0)),
        "run_already_open"
    );
    finish(&world, &actor, run.id, RunStatus::Stopped).unwrap();
    assert_eq!(world.events("run.stop_requested").len(), 1);
}

#[test]
fn a_lapsed_lease_loses_the_run_and_releases_what_it_held() {
    let world = World::new();
    let (me, actor) = funded(&world, "sleeper", 100);
    world.task("leased");
    let task = claimed(&world, &actor, 60);
    let run = start(&world, &actor, &task, 30).unwrap();
    assert_eq!(checked(&world).agent(me.id).reserved_credits, 30);

    // A run heartbeat extends the task's lease like the task's own.
    world.clock.advance(Duration::seconds(50));
    let beat = block_on(
        world
            .runs
            .heartbeat(&actor, run.id, Lease::seconds(Some(60)).unwrap()),
    )
    .unwrap();
    assert_eq!(beat.id, run.id);
    assert_eq!(
        world.reread(&task).lease_expires_at,
        Some(world.clock_now() + Duration::seconds(60))
    );
    let (_, stranger) = funded(&world, "stranger", 0);
    assert_eq!(
        code(block_on(world.runs.heartbeat(
            &stranger,
            run.id,
            Lease::seconds(Some(60)).unwrap()
        ))),
        "run_agent_required"
    );

    world.clock.advance(Duration::seconds(61));
    let expired = block_on(world.tasks.expire_leases(Some(world.org), 100)).unwrap();
    assert_eq!(expired, [task.id]);
    let lost = reread(&world, run.id);
    assert_eq!(lost.status, RunStatus::Lost);
    assert_eq!(lost.ended_at, Some(world.clock_now()));
    assert_eq!(lost.reserved_credits, 0);
    let books = checked(&world);
    assert_eq!(books.agent(me.id).reserved_credits, 0, "released");
    assert_eq!(books.balance(me.id), 100);
    let finished = events_of(&world, "run.finished", run.id.as_uuid());
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].payload["status"], "lost");
    let task = world.reread(&task);
    assert_eq!(task.assignee_id, None);
    assert_eq!(
        code(finish(&world, &actor, run.id, RunStatus::Succeeded)),
        "run_closed"
    );
}
