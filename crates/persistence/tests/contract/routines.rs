//! Routines (decision D-108) on every store: a routine's every field round trips (a task
//! routine and a template one), edits are guarded by its version, lists page newest
//! first, another organization's routine is not there, the due ones are found across
//! organizations oldest due first, a (routine, due time) fires once, and deleting a
//! routine takes its firings along.

use crate::support::Store;
use muster_domain::model::{
    AgentId, Author, CatchUp, Description, Metadata, OrgId, Routine, RoutineFiring, RoutineId,
    RoutineName, RoutineTask, RoutineWork, Tags, TaskPriority, TemplateId, Title,
};
use muster_domain::ports::{Lock, UniqueKey, transact};
use muster_domain::rules::schedule::Schedule;
use muster_domain::service::{Conflict, ServiceError};
use serde_json::json;
use time::Duration;

use crate::support::{Seed, new_id, now_ms, seed_org, task};
use crate::writes::Writes;

contract_tests!(
    a_routine_round_trips_with_every_field,
    a_routine_changes_only_at_its_version,
    routines_page_newest_first_by_organization,
    due_routines_are_the_enabled_ones_whose_time_came,
    a_due_time_fires_once,
    deleting_a_routine_deletes_its_firings,
);

fn routine(seed: &Seed, name: &str) -> Routine {
    let now = now_ms();
    Routine {
        id: RoutineId::from_uuid(new_id()),
        org_id: seed.org,
        name: RoutineName::new(name).unwrap(),
        schedule: Schedule::new("0 9 * * MON-FRI", "Europe/Berlin").unwrap(),
        work: RoutineWork::Task(Box::new(RoutineTask::new(Title::new("Triage").unwrap()))),
        enabled: true,
        catch_up: CatchUp::One,
        owner: Author::Agent(seed.hr),
        next_run_at: Some(now + Duration::hours(1)),
        last_run_at: None,
        last_task_id: None,
        last_error: None,
        paused_reason: None,
        created_at: now,
        updated_at: now,
        version: 1,
    }
}

async fn store(db: &impl Store, routine: &Routine) -> Result<(), ServiceError> {
    let routine = routine.clone();
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.insert_routine(&routine).await?) })
    })
    .await
}

async fn fire_at(db: &impl Store, firing: RoutineFiring) -> Result<(), ServiceError> {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.insert_routine_firing(&firing).await?) })
    })
    .await
}

async fn a_routine_round_trips_with_every_field(db: &impl Store) {
    let seed = seed_org(db).await;
    let t = task(seed.org);
    db.insert(&t, &[]).await.unwrap();
    let full = Routine {
        work: RoutineWork::Task(Box::new(RoutineTask {
            description: Some(Description::new("ünïcode *markdown*".into()).unwrap()),
            priority: TaskPriority::Urgent,
            tags: Tags::new(vec!["ops".into(), "daily".into()]).unwrap(),
            assignee_id: Some(AgentId::from_uuid(seed.hr.as_uuid())),
            reward: Some(25),
            approval_required: true,
            metadata: Metadata::new(json!({"source": {"n": [1, 2]}})).unwrap(),
            project_id: None,
            ..RoutineTask::new(Title::new("Triage new issues").unwrap())
        })),
        catch_up: CatchUp::All,
        last_run_at: Some(now_ms() - Duration::hours(1)),
        last_task_id: Some(t.id),
        last_error: Some("Project 1 is archived".into()),
        paused_reason: Some("its owner agent is suspended".into()),
        enabled: false,
        next_run_at: None,
        version: 7,
        ..routine(&seed, "Morning triage")
    };
    store(db, &full).await.unwrap();
    assert_eq!(
        db.routine(seed.org, full.id).await.unwrap(),
        Some(full.clone())
    );
    let id = full.id;
    let locked = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.routine(seed.org, id, Lock::Update).await?) })
    })
    .await
    .unwrap();
    assert_eq!(locked, Some(full));
    // A template routine owned by a user: the other kind of work and of owner.
    let user = seed.new.admin.id;
    let template_id = {
        let template = muster_domain::model::TaskTemplate {
            id: TemplateId::from_uuid(new_id()),
            org_id: seed.org,
            name: muster_domain::model::TemplateName::new("audit").unwrap(),
            title: Title::new("Audit").unwrap(),
            description: None,
            priority: TaskPriority::Normal,
            tags: Tags::default(),
            approval_required: false,
            metadata: Metadata::default(),
            created_from_task_id: None,
            created_at: now_ms(),
        };
        let id = template.id;
        transact(db, move |tx| {
            Box::pin(async move { Ok(tx.insert_template(&template).await?) })
        })
        .await
        .unwrap();
        id
    };
    let templated = Routine {
        work: RoutineWork::Template(template_id),
        owner: Author::User(user),
        ..routine(&seed, "Weekly audit")
    };
    store(db, &templated).await.unwrap();
    assert_eq!(
        db.routine(seed.org, templated.id).await.unwrap(),
        Some(templated)
    );
}

async fn a_routine_changes_only_at_its_version(db: &impl Store) {
    let seed = seed_org(db).await;
    let original = routine(&seed, "Triage");
    store(db, &original).await.unwrap();
    let changed = Routine {
        name: RoutineName::new("Renamed").unwrap(),
        version: 2,
        ..original.clone()
    };
    let update = |r: Routine, expected: i64| async move {
        transact(db, move |tx| {
            Box::pin(async move { Ok(tx.update_routine(&r, expected).await?) })
        })
        .await
        .unwrap()
    };
    assert!(update(changed.clone(), 1).await);
    assert!(!update(changed, 1).await, "a stale version changes nothing");
    let read = db.routine(seed.org, original.id).await.unwrap().unwrap();
    assert_eq!((read.name.as_str(), read.version), ("Renamed", 2));
}

async fn routines_page_newest_first_by_organization(db: &impl Store) {
    let ours = seed_org(db).await;
    let theirs = seed_org(db).await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let r = routine(&ours, &format!("r{i}"));
        store(db, &r).await.unwrap();
        ids.push(r.id);
    }
    let foreign = routine(&theirs, "theirs");
    store(db, &foreign).await.unwrap();
    let all = db.routines(ours.org, None, 10).await.unwrap();
    assert_eq!(
        all.iter().map(|r| r.id).collect::<Vec<_>>(),
        [ids[2], ids[1], ids[0]]
    );
    let older = db.routines(ours.org, Some(ids[2]), 1).await.unwrap();
    assert_eq!(older.iter().map(|r| r.id).collect::<Vec<_>>(), [ids[1]]);
    assert_eq!(db.routine(ours.org, foreign.id).await.unwrap(), None);
}

async fn due_routines_are_the_enabled_ones_whose_time_came(db: &impl Store) {
    let a = seed_org(db).await;
    let b = seed_org(db).await;
    let now = now_ms();
    let at = |seed: &Seed, name: &str, minutes: i64, enabled: bool| Routine {
        next_run_at: Some(now + Duration::minutes(minutes)),
        enabled,
        ..routine(seed, name)
    };
    let older = at(&b, "due longest", -10, true);
    let newer = at(&a, "due", -1, true);
    let exact = at(&a, "due now", 0, true);
    let later = at(&a, "later", 5, true);
    let off = at(&b, "off", -20, false);
    let timeless = Routine {
        next_run_at: None,
        ..routine(&a, "no time left")
    };
    for r in [&newer, &later, &off, &older, &exact, &timeless] {
        store(db, r).await.unwrap();
    }
    let due = db.due_routines(now, 10).await.unwrap();
    assert_eq!(
        due,
        [(b.org, older.id), (a.org, newer.id), (a.org, exact.id)]
    );
    assert_eq!(db.due_routines(now, 1).await.unwrap(), [(b.org, older.id)]);
}

async fn a_due_time_fires_once(db: &impl Store) {
    let seed = seed_org(db).await;
    let r = routine(&seed, "Triage");
    store(db, &r).await.unwrap();
    let first_task = task(seed.org);
    let second_task = task(seed.org);
    db.insert(&first_task, &[]).await.unwrap();
    db.insert(&second_task, &[]).await.unwrap();
    let due = now_ms();
    let firing = |task| RoutineFiring {
        routine_id: r.id,
        org_id: seed.org,
        due_at: due,
        task_id: task,
        fired_at: now_ms(),
    };
    fire_at(db, firing(first_task.id)).await.unwrap();
    let again = fire_at(db, firing(second_task.id)).await;
    assert!(
        matches!(
            again,
            Err(ServiceError::Conflict(Conflict::Duplicate(
                UniqueKey::RoutineFiring
            )))
        ),
        "{again:?}"
    );
    // Another due time of the same routine is another firing.
    let next = RoutineFiring {
        due_at: due + Duration::seconds(2),
        ..firing(second_task.id)
    };
    fire_at(db, next).await.unwrap();
}

async fn deleting_a_routine_deletes_its_firings(db: &impl Store) {
    let seed = seed_org(db).await;
    let r = routine(&seed, "Triage");
    store(db, &r).await.unwrap();
    let t = task(seed.org);
    db.insert(&t, &[]).await.unwrap();
    let firing = RoutineFiring {
        routine_id: r.id,
        org_id: seed.org,
        due_at: now_ms(),
        task_id: t.id,
        fired_at: now_ms(),
    };
    fire_at(db, firing.clone()).await.unwrap();
    let (org, id) = (seed.org, r.id);
    let other: OrgId = seed_org(db).await.org;
    let deleted = transact(db, move |tx| {
        Box::pin(async move {
            let foreign = tx.delete_routine(other, id).await?;
            let own = tx.delete_routine(org, id).await?;
            Ok((foreign, own))
        })
    })
    .await
    .unwrap();
    assert_eq!(deleted, (false, true));
    assert_eq!(db.routine(seed.org, r.id).await.unwrap(), None);
    // The routine can be stored again, and fire for the same due time: its firings went.
    store(db, &r).await.unwrap();
    fire_at(db, firing).await.unwrap();
    // The task it created stays.
    assert!(
        muster_domain::ports::TaskRepository::get(db, seed.org, t.id)
            .await
            .unwrap()
            .is_some()
    );
}
