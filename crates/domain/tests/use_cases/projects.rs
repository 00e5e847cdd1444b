//! Projects (issue 66) on the in-memory store: creating, editing and archiving them,
//! tasks joining them (sub-tasks their parent's), claims and events limited to one, and
//! a progress report checked against a fixture counted by hand.

use futures_executor::block_on;
use muster_domain::model::{
    Actor, Description, ProjectGoal, ProjectId, ProjectName, ProjectStatus, Task, TaskId,
    TaskStatus, Title,
};
use muster_domain::ports::{EventFilter, EventLog};
use muster_domain::service::{
    ClaimRequest, NewProject, NewTask, PageRequest, ProjectPatch, ServiceError, TaskPatch,
};
use time::Duration;

use crate::common::economy::{grant, move_to};
use crate::common::runs::{claim_request, code, report, start, usage};
use crate::common::world::World;

fn new_project(name: &str) -> NewProject {
    NewProject {
        name: ProjectName::new(name).unwrap(),
        goal: Some(ProjectGoal::new("Ship it".into()).unwrap()),
        description: None,
        due_at: None,
    }
}

fn project(world: &World, name: &str) -> ProjectId {
    block_on(world.projects.create(&world.admin, new_project(name)))
        .unwrap()
        .id
}

fn task_in(
    world: &World,
    actor: &Actor,
    title: &str,
    project: Option<ProjectId>,
    parent: Option<TaskId>,
) -> Result<Task, ServiceError> {
    let new = NewTask {
        project_id: project,
        parent_task_id: parent,
        reward: Some(0),
        ..NewTask::new(Title::new(title).unwrap())
    };
    block_on(world.tasks.create(actor, new))
}

fn archive(world: &World, id: ProjectId) {
    block_on(world.projects.archive(&world.admin, id)).unwrap();
}

#[test]
fn a_project_is_created_active_with_its_event() {
    let world = World::new();
    let created = block_on(world.projects.create(&world.admin, new_project(" Launch "))).unwrap();
    assert_eq!(created.name.as_str(), "Launch");
    assert_eq!(created.status, ProjectStatus::Active);
    assert_eq!((created.version, created.archived_at), (1, None));
    let read = block_on(world.projects.get(&world.admin, created.id)).unwrap();
    assert_eq!(read, created);
    let events = world.events("project.created");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].entity_id, created.id.as_uuid());
    assert_eq!(events[0].payload["name"], "Launch");
}

#[test]
fn projects_list_newest_first_by_pages_and_by_status() {
    let world = World::new();
    let ids: Vec<ProjectId> = (0..5).map(|i| project(&world, &format!("p{i}"))).collect();
    archive(&world, ids[1]);
    let first = block_on(world.projects.list(
        &world.admin,
        None,
        PageRequest {
            cursor: None,
            limit: 3,
        },
    ))
    .unwrap();
    let names: Vec<&str> = first.items.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["p4", "p3", "p2"]);
    let rest = block_on(world.projects.list(
        &world.admin,
        None,
        PageRequest {
            cursor: first.next_cursor,
            limit: 3,
        },
    ))
    .unwrap();
    assert_eq!(rest.items.len(), 2);
    assert_eq!(rest.next_cursor, None);
    let archived = block_on(world.projects.list(
        &world.admin,
        Some(ProjectStatus::Archived),
        PageRequest::first(),
    ))
    .unwrap();
    assert_eq!(
        archived.items.iter().map(|p| p.id).collect::<Vec<_>>(),
        [ids[1]]
    );
}

#[test]
fn a_task_joins_an_active_project_and_a_sub_task_its_parents() {
    let world = World::new();
    let launch = project(&world, "Launch");
    let parent = task_in(&world, &world.admin, "parent", Some(launch), None).unwrap();
    assert_eq!(parent.project_id, Some(launch));
    let child = task_in(&world, &world.admin, "child", None, Some(parent.id)).unwrap();
    assert_eq!(child.project_id, Some(launch));
    // A sub-task may name another project than its parent's.
    let other = project(&world, "Other");
    let elsewhere = task_in(
        &world,
        &world.admin,
        "elsewhere",
        Some(other),
        Some(parent.id),
    );
    assert_eq!(elsewhere.unwrap().project_id, Some(other));
    let created = world.events("task.created");
    assert_eq!(
        created.last().unwrap().payload["projectId"],
        other.as_uuid().to_string()
    );
    // Once its project is archived, a parent's sub-tasks start outside any project.
    archive(&world, launch);
    let orphan = task_in(&world, &world.admin, "late child", None, Some(parent.id)).unwrap();
    assert_eq!(orphan.project_id, None);
}

#[test]
fn no_task_joins_an_archived_missing_or_foreign_project() {
    let world = World::new();
    let launch = project(&world, "Launch");
    archive(&world, launch);
    let refused = task_in(&world, &world.admin, "late", Some(launch), None);
    assert_eq!(code(refused), "project_archived");
    let missing = ProjectId::from_uuid(uuid::Uuid::now_v7());
    assert_eq!(
        code(task_in(&world, &world.admin, "lost", Some(missing), None)),
        "project_not_found"
    );
    let other = World::new();
    let theirs = project(&other, "Theirs");
    assert_eq!(
        code(task_in(&world, &world.admin, "stolen", Some(theirs), None)),
        "project_not_found"
    );
    assert_eq!(
        code(block_on(world.projects.get(&world.admin, theirs))),
        "project_not_found"
    );
    assert!(
        world.events("task.created").is_empty(),
        "nothing was created"
    );
}

#[test]
fn a_task_moves_between_projects_and_out_of_them() {
    let world = World::new();
    let (a, b) = (project(&world, "A"), project(&world, "B"));
    let task = task_in(&world, &world.admin, "mover", Some(a), None).unwrap();
    let patch = |project| TaskPatch {
        project_id: Some(project),
        ..TaskPatch::default()
    };
    let moved = block_on(world.tasks.update(&world.admin, task.id, patch(Some(b)))).unwrap();
    assert_eq!(moved.project_id, Some(b));
    let out = block_on(world.tasks.update(&world.admin, task.id, patch(None))).unwrap();
    assert_eq!(out.project_id, None);
    let fields: Vec<String> = world
        .events("task.updated")
        .iter()
        .map(|e| e.payload["fields"][0].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(fields, ["projectId", "projectId"]);
    archive(&world, a);
    let refused = block_on(world.tasks.update(&world.admin, task.id, patch(Some(a))));
    assert_eq!(code(refused), "project_archived");
    assert_eq!(world.reread(&task).project_id, None);
}

#[test]
fn an_edit_names_what_changed_and_an_archived_project_takes_none() {
    let world = World::new();
    let id = project(&world, "Launch");
    let empty = block_on(
        world
            .projects
            .update(&world.admin, id, ProjectPatch::default()),
    );
    assert_eq!(code(empty), "validation_failed");
    let due = world.clock_now() + Duration::days(30);
    let patch = ProjectPatch {
        name: Some(ProjectName::new("Launch").unwrap()),
        goal: Some(None),
        description: Some(Some(Description::new("All of it".into()).unwrap())),
        due_at: Some(Some(due)),
    };
    let edited = block_on(world.projects.update(&world.admin, id, patch)).unwrap();
    assert_eq!(
        (edited.goal, edited.due_at, edited.version),
        (None, Some(due), 2)
    );
    let updated = world.events("project.updated");
    assert_eq!(
        updated[0].payload["fields"],
        serde_json::json!(["goal", "description", "dueAt"])
    );
    archive(&world, id);
    archive(&world, id);
    assert_eq!(
        world.events("project.archived").len(),
        1,
        "archiving twice is once"
    );
    let late = ProjectPatch {
        name: Some(ProjectName::new("Relaunch").unwrap()),
        ..ProjectPatch::default()
    };
    assert_eq!(
        code(block_on(world.projects.update(&world.admin, id, late))),
        "project_archived"
    );
}

#[test]
fn an_observer_may_read_projects_but_not_change_them() {
    let world = World::new();
    let id = project(&world, "Launch");
    let (_, observer) =
        world.register("watcher", 3, muster_domain::model::AgentMode::Observer, &[]);
    assert!(block_on(world.projects.view(&observer, id)).is_ok());
    assert_eq!(
        code(block_on(
            world.projects.create(&observer, new_project("Mine"))
        )),
        "observer_read_only"
    );
    assert_eq!(
        code(block_on(world.projects.archive(&observer, id))),
        "observer_read_only"
    );
}

#[test]
fn a_claim_may_be_limited_to_one_project() {
    let world = World::new();
    let (launch, other) = (project(&world, "Launch"), project(&world, "Other"));
    // The oldest claimable task is outside the project asked for.
    task_in(&world, &world.admin, "elsewhere", Some(other), None).unwrap();
    task_in(&world, &world.admin, "loose", None, None).unwrap();
    let wanted = task_in(&world, &world.admin, "wanted", Some(launch), None).unwrap();
    let (_, worker) = world.worker("w1", 3, &[]);
    let in_launch = ClaimRequest {
        project_id: Some(launch),
        ..claim_request(300)
    };
    let claimed = block_on(world.tasks.claim(&worker, in_launch.clone())).unwrap();
    assert_eq!(claimed.map(|t| t.id), Some(wanted.id));
    assert_eq!(
        block_on(world.tasks.claim(&worker, in_launch)).unwrap(),
        None
    );
    let nowhere = ClaimRequest {
        project_id: Some(ProjectId::from_uuid(uuid::Uuid::now_v7())),
        ..claim_request(300)
    };
    assert_eq!(
        code(block_on(world.tasks.claim(&worker, nowhere))),
        "project_not_found"
    );
}

#[test]
fn the_events_of_a_project_are_its_own_and_its_tasks() {
    let world = World::new();
    let (launch, other) = (project(&world, "Launch"), project(&world, "Other"));
    let inside = task_in(&world, &world.admin, "inside", Some(launch), None).unwrap();
    task_in(&world, &world.admin, "outside", Some(other), None).unwrap();
    move_to(&world, &world.admin, inside.id, TaskStatus::Backlog);
    let filter = EventFilter {
        project_id: Some(launch),
        ..EventFilter::default()
    };
    let page = block_on(world.store.list(world.org, &filter, 0, 100)).unwrap();
    let mut seen: Vec<(&str, uuid::Uuid)> = page
        .events
        .iter()
        .map(|e| (e.event_type.as_str(), e.entity_id))
        .collect();
    seen.sort_unstable();
    assert_eq!(
        seen,
        [
            ("project.created", launch.as_uuid()),
            ("task.created", inside.id.as_uuid()),
            ("task.transitioned", inside.id.as_uuid()),
        ]
    );
    assert_eq!(page.total, 3);
}

/// The fixture of docs/projects.md, counted by hand: six tasks in the project (one of
/// each open status but review, two done, one cancelled), one outside it; one open task
/// past due and one cancelled past due; a run that cost $0.50 = 500 credits.
#[test]
fn progress_matches_a_fixture_counted_by_hand() {
    let world = World::new();
    let launch = project(&world, "Launch");
    let admin = world.admin.clone();
    let yesterday = world.clock_now() - Duration::days(1);
    let past_due = |title: &str| {
        let new = NewTask {
            project_id: Some(launch),
            due_at: Some(yesterday),
            reward: Some(0),
            ..NewTask::new(Title::new(title).unwrap())
        };
        block_on(world.tasks.create(&admin, new)).unwrap()
    };
    let late = past_due("late");
    let dropped = past_due("dropped");
    move_to(&world, &admin, dropped.id, TaskStatus::Cancelled);
    let stuck = task_in(&world, &admin, "stuck", Some(launch), None).unwrap();
    move_to(&world, &admin, stuck.id, TaskStatus::InProgress);
    move_to(&world, &admin, stuck.id, TaskStatus::Blocked);
    for title in ["shipped", "tested"] {
        let done = task_in(&world, &admin, title, Some(launch), None).unwrap();
        move_to(&world, &admin, done.id, TaskStatus::InProgress);
        move_to(&world, &admin, done.id, TaskStatus::Done);
    }
    let (worker, worker_actor) = world.worker("w1", 3, &[]);
    grant(&world, worker.id, 1_000);
    let busy = task_in(&world, &admin, "busy", Some(launch), None).unwrap();
    block_on(world.tasks.assign(&admin, busy.id, worker.id)).unwrap();
    let busy = move_to(&world, &worker_actor, busy.id, TaskStatus::InProgress);
    let run = start(&world, &worker_actor, &busy, 0).unwrap();
    report(
        &world.runs,
        &worker_actor,
        run.id,
        usage("gpt-5", 1_000, 100, Some(500_000)),
    )
    .unwrap();
    task_in(&world, &admin, "not in it", None, None).unwrap();

    let view = block_on(world.projects.view(&admin, launch)).unwrap();
    let p = view.progress;
    assert_eq!((p.total, p.open, p.done, p.done_pct), (6, 3, 2, 40));
    let t = &view.tally;
    let counts: Vec<u64> = TaskStatus::ALL.iter().map(|s| t.count(*s)).collect();
    // backlog, todo, in_progress, review, done, blocked, cancelled
    assert_eq!(counts, [0, 1, 1, 0, 2, 1, 1]);
    assert_eq!(t.overdue, 1);
    assert_eq!(
        t.overdue_tasks.iter().map(|b| b.id).collect::<Vec<_>>(),
        [late.id]
    );
    assert_eq!(
        t.blocked_tasks.iter().map(|b| b.id).collect::<Vec<_>>(),
        [stuck.id]
    );
    assert_eq!((t.spent_credits, t.cost_microusd), (500, 500_000));
}

#[test]
fn a_burn_up_counts_tasks_created_and_done_by_each_day() {
    let world = World::new();
    let launch = project(&world, "Launch");
    let admin = world.admin.clone();
    let first = task_in(&world, &admin, "one", Some(launch), None).unwrap();
    world.clock.advance(Duration::days(1));
    task_in(&world, &admin, "two", Some(launch), None).unwrap();
    move_to(&world, &admin, first.id, TaskStatus::InProgress);
    move_to(&world, &admin, first.id, TaskStatus::Done);
    world.clock.advance(Duration::days(1));
    let days = block_on(world.projects.burn_up(&admin, launch, 3)).unwrap();
    let got: Vec<(u64, u64)> = days.iter().map(|d| (d.created, d.done)).collect();
    assert_eq!(got, [(1, 0), (2, 1), (2, 1)]);
    assert_eq!(days[2].day, world.clock_now().date());
}
