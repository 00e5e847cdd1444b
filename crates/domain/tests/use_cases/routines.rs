//! Routines (decision D-108) on the in-memory store with a clock the tests move: a task
//! per due time and never two, catch-up after downtime by each policy, the owner's
//! permissions (a routine pauses when its owner loses them), a firing the rules refuse
//! kept as `lastError`, runs by hand, and who may change a routine.

use futures_executor::block_on;
use muster_domain::model::{
    Actor, AgentMode, CatchUp, ProjectName, Routine, RoutineName, RoutineTask, RoutineWork, Task,
    TaskStatus, TemplateName, Title, UserRole,
};
use muster_domain::ports::TaskFilter;
use muster_domain::rules::schedule::Schedule;
use muster_domain::service::{NewProject, NewRoutine, PageRequest, RoutinePatch};
use time::Duration;

use crate::common::runs::code;
use crate::common::world::{START, World};

fn new_routine(schedule: &str, catch_up: CatchUp) -> NewRoutine {
    NewRoutine {
        name: RoutineName::new("Morning triage").unwrap(),
        schedule: Schedule::new(schedule, "UTC").unwrap(),
        work: RoutineWork::Task(Box::new(RoutineTask {
            reward: Some(0),
            ..RoutineTask::new(Title::new("Triage new issues").unwrap())
        })),
        enabled: true,
        catch_up,
    }
}

fn create(world: &World, actor: &Actor, schedule: &str, catch_up: CatchUp) -> Routine {
    block_on(
        world
            .routines
            .create(actor, new_routine(schedule, catch_up)),
    )
    .unwrap()
}

fn fire(world: &World) -> usize {
    block_on(world.routines.fire_due()).unwrap().created
}

fn tasks(world: &World) -> Vec<Task> {
    block_on(
        world
            .tasks
            .list(&world.admin, &TaskFilter::default(), None, 500),
    )
    .unwrap()
    .items
}

fn reread(world: &World, routine: &Routine) -> Routine {
    block_on(world.routines.get(&world.admin, routine.id)).unwrap()
}

#[test]
fn a_routine_creates_one_task_per_due_time_and_never_two() {
    let world = World::new();
    // START is 09:00; hourly at minute 0.
    let routine = create(&world, &world.admin, "0 * * * *", CatchUp::One);
    assert_eq!(routine.next_run_at, Some(START + Duration::hours(1)));
    assert_eq!(fire(&world), 0, "nothing is due yet");
    world.clock.advance(Duration::hours(1));
    assert_eq!(fire(&world), 1);
    assert_eq!(fire(&world), 0, "the same due time never twice");
    let read = reread(&world, &routine);
    assert_eq!(read.last_run_at, Some(START + Duration::hours(1)));
    assert_eq!(read.next_run_at, Some(START + Duration::hours(2)));
    let created = tasks(&world);
    assert_eq!(created.len(), 1);
    assert_eq!(read.last_task_id, Some(created[0].id));
    assert_eq!(created[0].title.as_str(), "Triage new issues");
    assert_eq!(
        created[0].creator,
        Some(muster_domain::model::Author::of(&world.admin).unwrap())
    );
    let fired = world.events("routine.fired");
    assert_eq!(fired.len(), 1);
    assert_eq!(
        fired[0].payload["taskId"],
        created[0].id.as_uuid().to_string()
    );
    assert_eq!(fired[0].payload["manual"], false);
}

#[test]
fn after_downtime_each_catch_up_policy_does_what_it_says() {
    for (policy, expected) in [(CatchUp::Skip, 0), (CatchUp::One, 1), (CatchUp::All, 5)] {
        let world = World::new();
        let routine = create(&world, &world.admin, "0 * * * *", policy);
        // Down for five hours and a half: 10:00 to 14:00 were missed.
        world.clock.advance(Duration::minutes(5 * 60 + 30));
        assert_eq!(fire(&world), expected, "{policy:?}");
        let read = reread(&world, &routine);
        assert_eq!(
            read.next_run_at,
            Some(START + Duration::hours(6)),
            "{policy:?} goes on from now"
        );
        assert_eq!(tasks(&world).len(), expected);
        assert_eq!(fire(&world), 0);
    }
}

#[test]
fn a_routine_whose_owner_lost_the_right_to_create_tasks_pauses_with_a_reason() {
    let world = World::new();
    let (agent, owner) = world.worker("cron-owner", 5, &[]);
    let routine = create(&world, &owner, "*/5 * * * *", CatchUp::One);
    block_on(world.agents.suspend(&world.hr, agent.id)).unwrap();
    world.clock.advance(Duration::minutes(5));
    let report = block_on(world.routines.fire_due()).unwrap();
    assert_eq!((report.created, report.paused), (0, 1));
    let read = reread(&world, &routine);
    assert!(!read.enabled);
    assert_eq!(read.next_run_at, None);
    assert_eq!(
        read.paused_reason.as_deref(),
        Some("its owner agent is suspended")
    );
    let updated = world.events("routine.updated");
    assert_eq!(
        updated[0].payload["pausedReason"],
        "its owner agent is suspended"
    );
    assert!(tasks(&world).is_empty());
    // Switched on again by an admin, it is the admin's: it fires again.
    let on = RoutinePatch {
        enabled: Some(true),
        ..RoutinePatch::default()
    };
    let read = block_on(world.routines.update(&world.admin, routine.id, on)).unwrap();
    assert!(read.enabled && read.paused_reason.is_none());
    world.clock.advance(Duration::minutes(5));
    assert_eq!(fire(&world), 1);
}

#[test]
fn a_firing_the_rules_refuse_is_kept_and_the_routine_goes_on() {
    let world = World::new();
    let project = block_on(world.projects.create(
        &world.admin,
        NewProject {
            name: ProjectName::new("Launch").unwrap(),
            goal: None,
            description: None,
            due_at: None,
        },
    ))
    .unwrap();
    let mut new = new_routine("0 * * * *", CatchUp::One);
    if let RoutineWork::Task(task) = &mut new.work {
        task.project_id = Some(project.id);
    }
    let routine = block_on(world.routines.create(&world.admin, new)).unwrap();
    block_on(world.projects.archive(&world.admin, project.id)).unwrap();
    world.clock.advance(Duration::hours(1));
    let report = block_on(world.routines.fire_due()).unwrap();
    assert_eq!(report.failed.len(), 1);
    assert_eq!(report.failed[0].error.code(), "project_archived");
    let read = reread(&world, &routine);
    assert!(read.enabled, "still on");
    assert!(
        read.last_error
            .as_deref()
            .unwrap_or_default()
            .contains("archived")
    );
    assert_eq!(read.next_run_at, Some(START + Duration::hours(2)));
    assert!(tasks(&world).is_empty());
}

#[test]
fn a_template_routine_makes_its_tasks_from_the_template() {
    let world = World::new();
    let source = world.task("Weekly dependency audit");
    let template = block_on(world.tasks.create_template(
        &world.admin,
        source.id,
        TemplateName::new("audit").unwrap(),
    ))
    .unwrap();
    let new = NewRoutine {
        work: RoutineWork::Template(template.id),
        ..new_routine("0 10 * * *", CatchUp::One)
    };
    block_on(world.routines.create(&world.admin, new)).unwrap();
    world.clock.advance(Duration::hours(1));
    assert_eq!(fire(&world), 1);
    let titles: Vec<String> = tasks(&world)
        .iter()
        .map(|t| t.title.as_str().to_owned())
        .collect();
    assert_eq!(
        titles,
        ["Weekly dependency audit", "Weekly dependency audit"]
    );
    let missing = NewRoutine {
        work: RoutineWork::Template(muster_domain::model::TemplateId::from_uuid(
            uuid::Uuid::now_v7(),
        )),
        ..new_routine("0 10 * * *", CatchUp::One)
    };
    assert_eq!(
        code(block_on(world.routines.create(&world.admin, missing))),
        "template_not_found"
    );
}

#[test]
fn only_the_owner_or_an_admin_changes_runs_or_deletes_a_routine() {
    let world = World::new();
    let (_, owner) = world.worker("owner", 5, &[]);
    let (_, other) = world.worker("other", 5, &[]);
    let routine = create(&world, &owner, "0 * * * *", CatchUp::One);
    let rename = RoutinePatch {
        name: Some(RoutineName::new("Renamed").unwrap()),
        ..RoutinePatch::default()
    };
    assert_eq!(
        code(block_on(world.routines.update(
            &other,
            routine.id,
            rename.clone()
        ))),
        "routine_owner_required"
    );
    assert_eq!(
        code(block_on(world.routines.run_now(&other, routine.id))),
        "routine_owner_required"
    );
    assert_eq!(
        code(block_on(world.routines.delete(&other, routine.id))),
        "routine_owner_required"
    );
    // An admin may, and becomes its owner.
    let changed = block_on(world.routines.update(&world.admin, routine.id, rename)).unwrap();
    assert_eq!(
        changed.owner,
        muster_domain::model::Author::of(&world.admin).unwrap()
    );
    assert_eq!(
        world.events("routine.updated")[0].payload["fields"],
        serde_json::json!(["name", "owner"])
    );
    let viewer = world.user(UserRole::Viewer);
    assert_eq!(
        code(block_on(
            world
                .routines
                .create(&viewer, new_routine("0 * * * *", CatchUp::One))
        )),
        "viewer_read_only"
    );
    let (_, observer) = world.register("watcher", 3, AgentMode::Observer, &[]);
    assert!(block_on(world.routines.get(&observer, routine.id)).is_ok());
    block_on(world.routines.delete(&world.admin, routine.id)).unwrap();
    assert_eq!(
        code(block_on(world.routines.get(&world.admin, routine.id))),
        "routine_not_found"
    );
    assert_eq!(world.events("routine.deleted").len(), 1);
}

#[test]
fn a_run_by_hand_creates_a_task_now_and_keeps_the_schedule() {
    let world = World::new();
    let routine = create(&world, &world.admin, "0 0 1 1 *", CatchUp::One);
    let task = block_on(world.routines.run_now(&world.admin, routine.id)).unwrap();
    assert_eq!(task.status, TaskStatus::Todo);
    let read = reread(&world, &routine);
    assert_eq!(read.next_run_at, routine.next_run_at);
    assert_eq!(read.last_task_id, Some(task.id));
    assert_eq!(world.events("routine.fired")[0].payload["manual"], true);
    // A second run in the same millisecond is the same firing.
    assert_eq!(
        code(block_on(world.routines.run_now(&world.admin, routine.id))),
        "routine_already_fired"
    );
    world.clock.advance(Duration::milliseconds(1));
    assert!(block_on(world.routines.run_now(&world.admin, routine.id)).is_ok());
}

#[test]
fn switching_off_and_rescheduling_move_the_next_due_time() {
    let world = World::new();
    let routine = create(&world, &world.admin, "0 * * * *", CatchUp::One);
    let off = RoutinePatch {
        enabled: Some(false),
        ..RoutinePatch::default()
    };
    let read = block_on(world.routines.update(&world.admin, routine.id, off)).unwrap();
    assert_eq!(read.next_run_at, None);
    world.clock.advance(Duration::hours(3));
    assert_eq!(fire(&world), 0, "off: nothing fires");
    let daily = RoutinePatch {
        schedule: Some("30 9 * * *".into()),
        timezone: Some("Europe/Berlin".into()),
        enabled: Some(true),
        ..RoutinePatch::default()
    };
    let read = block_on(world.routines.update(&world.admin, routine.id, daily)).unwrap();
    // Now 12:00 UTC; 09:30 in Berlin (08:30 UTC) tomorrow.
    assert_eq!(
        read.next_run_at,
        Some(START + Duration::hours(3) + Duration::hours(20) + Duration::minutes(30))
    );
    let never = RoutinePatch {
        schedule: Some("0 0 30 2 *".into()),
        ..RoutinePatch::default()
    };
    assert_eq!(
        code(block_on(world.routines.update(
            &world.admin,
            routine.id,
            never
        ))),
        "validation_failed"
    );
    let page = block_on(world.routines.list(&world.admin, PageRequest::first())).unwrap();
    assert_eq!(page.items.len(), 1);
}
