//! `schema.rs` against the migrations: a row of every table is written and read back
//! through the ports, every column with a value and, where nullable, without one.
//! Timestamps come back equal at millisecond precision. The user columns and the
//! credential tables are in [`credentials`].

mod credentials;

use crate::writes::Writes;
use muster_domain::model::{
    AgentId, Description, Event, EventSeverity, Metadata, OrgId, Reason, Tags, Task, TaskId, Title,
};
use muster_domain::ports::{
    AgentRepository, EventLog, NonceOutcome, NonceStore, OrganizationRepository, TaskRepository,
    UserRepository,
};
use muster_persistence::Database;
use serde_json::json;
use time::Duration;

use crate::support::{
    Seed, at_minute, event, full_task, new_id, now_ms, raw_users, seed_org, seed_org_with, task,
    unique_handle,
};

engine_contract_tests!(
    organizations_round_trip,
    users_round_trip,
    agents_round_trip,
    tasks_round_trip_with_every_field_set,
    tasks_round_trip_with_every_optional_field_empty,
    events_round_trip,
    nonces_round_trip,
    foreign_keys_are_enforced,
    text_the_domain_accepts_round_trips,
);

/// Two organizations; the second's HR agent has the first's as parent, so `parent_id`
/// is set on one agent and null on the other.
async fn two_orgs(db: &Database) -> (Seed, Seed) {
    let first = seed_org(db).await;
    let second = seed_org_with(db, unique_handle("hr-child"), Some(first.hr)).await;
    (first, second)
}

async fn organizations_round_trip(db: &Database) {
    let (first, second) = two_orgs(db).await;
    for seed in [&first, &second] {
        let stored = OrganizationRepository::get(db, seed.org).await.unwrap();
        assert_eq!(stored.as_ref(), Some(&seed.new.organization));
    }
    assert!(first.new.organization.is_default);
    assert!(!second.new.organization.is_default);
}

async fn users_round_trip(db: &Database) {
    let seed = seed_org(db).await;
    let admin = &seed.new.admin;
    let users = raw_users(db, seed.org).await;
    assert_eq!(users.len(), 1, "one admin per new organization: {users:?}");
    let user = &users[0];
    assert_eq!(user.id, admin.id.to_string());
    assert_eq!(user.email, admin.email.as_str());
    assert_eq!(user.name, admin.name);
    assert_eq!(user.role, "admin");
    assert_eq!(user.password_hash, admin.password_hash);
    let stored = UserRepository::user(db, seed.org, admin.id).await.unwrap();
    assert_eq!(stored.as_ref(), Some(admin));
}

async fn agents_round_trip(db: &Database) {
    let (first, second) = two_orgs(db).await;
    assert_eq!(second.new.hr_agent.agent.parent_id, Some(first.hr));
    for seed in [&first, &second] {
        let agent = AgentRepository::get(db, seed.org, seed.hr).await.unwrap();
        assert_eq!(agent.as_ref(), Some(&seed.new.hr_agent.agent));
        let creds = db.find_credentials(&seed.handle).await.unwrap();
        assert_eq!(creds.as_ref(), Some(&seed.new.hr_agent));
        let creds = creds.unwrap();
        assert_eq!(
            creds.encrypted_secret,
            [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, 0x00]
        );
        assert_eq!(creds.agent.metadata["limits"]["ratio"], json!(0.25));
        assert_eq!(creds.agent.current_balance, 5_000_000_000);
    }
}

async fn tasks_round_trip_with_every_field_set(db: &Database) {
    let seed = seed_org(db).await;
    let parent = task(seed.org);
    db.insert(&parent, &[]).await.unwrap();
    let full = full_task(&seed, parent.id);
    db.insert(&full, &[]).await.unwrap();

    let stored = TaskRepository::get(db, seed.org, full.id)
        .await
        .unwrap()
        .expect("stored task");
    assert_eq!(stored, full);
    assert!(stored.description.is_some() && stored.due_at.is_some());
    assert_eq!(stored.tags.as_slice(), ["q4", "ops", "ünï"]);
    assert_eq!(
        stored.metadata.as_map()["source"]["nested"]["deep"][0],
        json!({ "x": null })
    );
    assert_eq!(
        stored.metadata.as_map()["big"],
        json!(9_007_199_254_740_993_i64)
    );
}

async fn tasks_round_trip_with_every_optional_field_empty(db: &Database) {
    let seed = seed_org(db).await;
    let bare = task(seed.org);
    db.insert(&bare, &[]).await.unwrap();
    let stored = TaskRepository::get(db, seed.org, bare.id).await.unwrap();
    assert_eq!(stored, Some(bare));
}

async fn events_round_trip(db: &Database) {
    let seed = seed_org(db).await;
    // The bootstrap events: system actor (null), JSON payload.
    for written in &seed.new.events {
        assert_eq!(written.actor_id, None);
        let stored = EventLog::get(db, seed.org, written.id).await.unwrap();
        assert_eq!(stored.as_ref(), Some(written));
    }
    // A written event with an actor and a nested payload.
    let mut written = event(seed.org, "task.transitioned", now_ms());
    written.actor_id = Some(seed.hr.as_uuid());
    written.severity = EventSeverity::Warning;
    written.payload = json!({ "from": "todo", "to": "in_progress", "reason": null, "n": [1, 2.5] });
    db.insert(&task(seed.org), std::slice::from_ref(&written))
        .await
        .unwrap();
    let stored = EventLog::get(db, seed.org, written.id).await.unwrap();
    assert_eq!(stored, Some(written));
}

async fn nonces_round_trip(db: &Database) {
    let seed = seed_org(db).await;
    let now = at_minute(0);
    let expires = now + Duration::minutes(10);
    let outcome = db.remember(seed.hr, "n-1", now, expires).await.unwrap();
    assert_eq!(outcome, NonceOutcome::Fresh);
    // The stored expiry is read back: the nonce is still taken one millisecond before it.
    let just_before = expires - Duration::milliseconds(1);
    let outcome = db
        .remember(seed.hr, "n-1", just_before, expires)
        .await
        .unwrap();
    assert_eq!(outcome, NonceOutcome::Replayed);
    assert_eq!(
        db.purge_expired(expires + Duration::seconds(1))
            .await
            .unwrap(),
        1
    );
}

async fn foreign_keys_are_enforced(db: &Database) {
    let seed = seed_org(db).await;
    // An assignee that is no agent, a parent that is no task, an org that does not exist.
    let mut orphan = task(seed.org);
    orphan.assignee_id = Some(AgentId::from_uuid(new_id()));
    assert!(db.insert(&orphan, &[]).await.is_err());
    let mut orphan = task(seed.org);
    orphan.parent_task_id = Some(TaskId::from_uuid(new_id()));
    assert!(db.insert(&orphan, &[]).await.is_err());
    let nowhere = task(OrgId::from_uuid(new_id()));
    assert!(db.insert(&nowhere, &[]).await.is_err());
    assert_eq!(
        TaskRepository::get(db, nowhere.org_id, nowhere.id)
            .await
            .unwrap(),
        None
    );
}

/// Whatever text the domain accepts, both engines must store and return unchanged:
/// the domain refuses what one engine cannot hold (U+0000 in text and JSON).
async fn text_the_domain_accepts_round_trips(db: &Database) {
    let seed = seed_org(db).await;
    let mut candidates = Vec::new();
    for text in [
        "nul \u{0} inside",
        "emoji 🦀 and accents é",
        "quote ' \" \\ back",
    ] {
        if let Ok(title) = Title::new(text) {
            candidates.push((
                "title",
                Task {
                    title,
                    ..task(seed.org)
                },
            ));
        }
        if let Ok(description) = Description::new(text.into()) {
            candidates.push((
                "description",
                Task {
                    description: Some(description),
                    ..task(seed.org)
                },
            ));
        }
        if let Ok(tags) = Tags::new(vec![text.into()]) {
            candidates.push((
                "tag",
                Task {
                    tags,
                    ..task(seed.org)
                },
            ));
        }
        if let Ok(metadata) = Metadata::new(json!({ "note": text, text: 1 })) {
            candidates.push((
                "metadata",
                Task {
                    metadata,
                    ..task(seed.org)
                },
            ));
        }
    }
    assert!(candidates.len() >= 8, "the ordinary texts must be accepted");
    let mut failures = Vec::new();
    for (field, written) in candidates {
        match db.insert(&written, &[]).await {
            Ok(()) => {
                let stored = TaskRepository::get(db, seed.org, written.id).await.unwrap();
                if stored.as_ref() != Some(&written) {
                    failures.push(format!("task {field}: read back as {stored:?}"));
                }
            }
            Err(err) => failures.push(format!("task {field}: {err:?}")),
        }
    }
    // Event payloads are built by the domain from validated values, such as a reason.
    for text in ["nul \u{0}", "plain"] {
        if let Ok(reason) = Reason::new(text.into()) {
            let with_reason = Event {
                payload: json!({ "reason": reason.as_str() }),
                ..event(seed.org, "x", now_ms())
            };
            if let Err(err) = db
                .insert(&task(seed.org), std::slice::from_ref(&with_reason))
                .await
            {
                failures.push(format!("event payload: {err:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "values the domain accepts were not stored: {failures:#?}"
    );
}
