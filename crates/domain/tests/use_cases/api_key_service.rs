//! `ApiKeyService::create`, `list`, `get` and `delete` against mocked ports.

use crate::common;

use std::sync::Arc;

use common::accounts::{fake_hash, fake_tokens, invalid_message, key_actor};
use common::writes::{Log, record_writes, written};
use common::{NOW, actor_user_id, agent_actor, org, types, user_actor};
use futures_executor::block_on;
use muster_domain::model::{
    Actor, AgentMode, ApiKey, ApiKeyId, ApiKeyName, ApiKeyScope, EventSeverity, TokenHash, UserRole,
};
use muster_domain::policy::Forbidden;
use muster_domain::ports::{
    MockTokenMinter, MockTransaction, MockUnitOfWork, MockUserRepository, Outcome,
};
use muster_domain::service::{ApiKeyService, Entity, NewApiKey, NotFound, ServiceError};
use serde_json::json;
use time::Duration;
use uuid::Uuid;

use ApiKeyScope::{Admin, Read, Write};

fn key_id(n: u128) -> ApiKeyId {
    ApiKeyId::from_uuid(Uuid::from_u128(0xd000 + n))
}

fn stored_key(id: ApiKeyId) -> ApiKey {
    ApiKey {
        id,
        org_id: org(),
        user_id: actor_user_id(),
        name: ApiKeyName::new("ci").unwrap(),
        key_prefix: "msk_abcdefgh".into(),
        key_hash: TokenHash([7; 32]),
        scopes: vec![Read, Write],
        last_used_at: None,
        expires_at: None,
        created_at: common::EARLIER,
    }
}

fn service_with(
    tx: MockTransaction,
    users: MockUserRepository,
    tokens: MockTokenMinter,
) -> (ApiKeyService, Arc<MockUnitOfWork>) {
    let uow = Arc::new(MockUnitOfWork::new(tx));
    let service = ApiKeyService::new(
        uow.clone(),
        Arc::new(users),
        Arc::new(tokens),
        common::clock(),
        common::ids(),
    );
    (service, uow)
}

/// A service whose transaction records its writes.
fn recording() -> (ApiKeyService, Arc<MockUnitOfWork>, Log) {
    let mut tx = MockTransaction::new();
    let log = record_writes(&mut tx);
    let (service, uow) = service_with(tx, MockUserRepository::new(), fake_tokens());
    (service, uow, log)
}

fn new_key(scopes: Option<Vec<ApiKeyScope>>, expires_in_days: Option<i64>) -> NewApiKey {
    NewApiKey {
        name: "  deploy bot  ".into(),
        scopes,
        expires_in_days,
    }
}

fn operator() -> Actor {
    user_actor(UserRole::Operator)
}

#[test]
fn a_key_is_created_read_only_by_default_and_its_secret_is_only_returned() {
    let (service, uow, log) = recording();

    let (key, secret) = block_on(service.create(&operator(), new_key(None, None))).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    assert_eq!(key.scopes, [Read]);
    assert_eq!(key.name.as_str(), "deploy bot");
    assert_eq!((key.org_id, key.user_id), (org(), actor_user_id()));
    assert_eq!(key.created_at, NOW);
    assert_eq!((key.expires_at, key.last_used_at), (None, None));
    assert_eq!(secret.expose(), "msk_0123456789abcdef-1");
    assert_eq!(key.key_prefix, "msk_01234567");
    assert_eq!(key.key_prefix, secret.expose()[..12]);
    assert_eq!(key.key_hash, fake_hash(secret.expose()));

    let w = written(&log);
    assert_eq!(w.calls, ["insert_api_key", "append_events"]);
    assert_eq!(w.api_keys, std::slice::from_ref(&key));
    assert_eq!(types(&w.events), ["api_key.created"]);
    let event = &w.events[0];
    assert_eq!(event.org_id, org());
    assert_eq!(event.entity_type, "api_key");
    assert_eq!(event.entity_id, key.id.as_uuid());
    assert_eq!(event.actor_id, Some(actor_user_id().as_uuid()));
    assert_eq!(event.severity, EventSeverity::Info);
    assert_eq!(event.created_at, NOW);
    assert_ne!(event.id.as_uuid(), key.id.as_uuid());
    assert_eq!(
        event.payload,
        json!({"name": "deploy bot", "keyPrefix": "msk_01234567", "scopes": ["read"]})
    );
    assert!(
        !event.payload.to_string().contains(secret.expose()),
        "the secret is never recorded"
    );
}

#[test]
fn scopes_are_sorted_weakest_first_without_repeats() {
    let (service, _, log) = recording();

    let (key, _) = block_on(service.create(
        &operator(),
        new_key(Some(vec![Admin, Read, Admin, Write, Read]), None),
    ))
    .unwrap();

    assert_eq!(key.scopes, [Read, Write, Admin]);
    assert_eq!(
        written(&log).events[0].payload["scopes"],
        json!(["read", "write", "admin"])
    );
}

#[test]
fn an_expiry_is_counted_in_days_from_now() {
    for days in [1, 30, ApiKeyService::MAX_EXPIRY_DAYS] {
        let (service, _, _) = recording();

        let (key, _) = block_on(service.create(&operator(), new_key(None, Some(days)))).unwrap();

        assert_eq!(key.expires_at, Some(NOW + Duration::days(days)), "{days}");
    }
}

#[test]
fn bad_requests_are_refused_before_minting_a_secret() {
    let cases = [
        (new_key(Some(Vec::new()), None), "scopes must not be empty"),
        (
            new_key(None, Some(0)),
            "expiresInDays must be between 1 and 3650",
        ),
        (
            new_key(None, Some(3651)),
            "expiresInDays must be between 1 and 3650",
        ),
        (
            new_key(None, Some(-1)),
            "expiresInDays must be between 1 and 3650",
        ),
        (
            NewApiKey {
                name: "   ".into(),
                ..new_key(None, None)
            },
            "name must not be empty",
        ),
    ];
    for (new, message) in cases {
        let mut tokens = MockTokenMinter::new();
        tokens.expect_new_secret().never();
        let (service, uow) =
            service_with(MockTransaction::new(), MockUserRepository::new(), tokens);

        let err = block_on(service.create(&operator(), new.clone())).unwrap_err();

        assert_eq!(invalid_message(&err), message, "{new:?}");
        assert!(uow.outcomes().is_empty());
    }
}

#[test]
fn list_answers_the_callers_keys() {
    let mut users = MockUserRepository::new();
    users
        .expect_api_keys_of()
        .withf(|o, u| *o == org() && *u == actor_user_id())
        .times(1)
        .returning(|_, _| Ok(vec![stored_key(key_id(2)), stored_key(key_id(1))]));
    let (service, _) = service_with(MockTransaction::new(), users, fake_tokens());

    let keys = block_on(service.list(&operator())).unwrap();

    assert_eq!(keys, [stored_key(key_id(2)), stored_key(key_id(1))]);
}

#[test]
fn get_answers_one_of_the_callers_keys_or_not_found() {
    let mut users = MockUserRepository::new();
    users
        .expect_api_key()
        .withf(|o, u, id| *o == org() && *u == actor_user_id() && *id == key_id(1))
        .returning(|_, _, id| Ok(Some(stored_key(id))));
    users
        .expect_api_key()
        .withf(|_, _, id| *id == key_id(9))
        .returning(|_, _, _| Ok(None));
    let (service, _) = service_with(MockTransaction::new(), users, fake_tokens());

    let key = block_on(service.get(&operator(), key_id(1))).unwrap();
    assert_eq!(key, stored_key(key_id(1)));

    let err = block_on(service.get(&operator(), key_id(9))).unwrap_err();
    assert!(
        matches!(&err, ServiceError::NotFound(nf) if *nf == NotFound::new(Entity::ApiKey, key_id(9))),
        "{err:?}"
    );
    assert_eq!(err.to_string(), format!("API key {} not found", key_id(9)));
}

#[test]
fn delete_revokes_the_key_with_an_event() {
    let mut tx = MockTransaction::new();
    tx.expect_delete_api_key()
        .withf(|o, u, id| *o == org() && *u == actor_user_id() && *id == key_id(1))
        .times(1)
        .returning(|_, _, id| Ok(Some(stored_key(id))));
    let log = record_writes(&mut tx);
    let (service, uow) = service_with(tx, MockUserRepository::new(), fake_tokens());

    block_on(service.delete(&operator(), key_id(1))).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let w = written(&log);
    assert_eq!(types(&w.events), ["api_key.revoked"]);
    let event = &w.events[0];
    assert_eq!(event.entity_type, "api_key");
    assert_eq!(event.entity_id, key_id(1).as_uuid());
    assert_eq!(event.actor_id, Some(actor_user_id().as_uuid()));
    assert_eq!(event.created_at, NOW);
    assert_eq!(event.payload, json!({"keyPrefix": "msk_abcdefgh"}));
}

#[test]
fn deleting_a_missing_key_is_not_found_and_writes_nothing() {
    let mut tx = MockTransaction::new();
    tx.expect_delete_api_key()
        .times(1)
        .returning(|_, _, _| Ok(None));
    let log = record_writes(&mut tx);
    let (service, uow) = service_with(tx, MockUserRepository::new(), fake_tokens());

    let err = block_on(service.delete(&operator(), key_id(3))).unwrap_err();

    assert!(
        matches!(&err, ServiceError::NotFound(nf) if *nf == NotFound::new(Entity::ApiKey, key_id(3))),
        "{err:?}"
    );
    assert_eq!(uow.outcomes(), [Outcome::RolledBack]);
    assert!(written(&log).is_empty());
}

#[test]
fn only_signed_in_users_manage_their_keys() {
    for actor in [
        key_actor(UserRole::Admin, Admin),
        agent_actor(AgentMode::Worker),
    ] {
        // Nothing may be read, minted or written.
        let mut tokens = MockTokenMinter::new();
        tokens.expect_new_secret().never();
        let (service, uow) =
            service_with(MockTransaction::new(), MockUserRepository::new(), tokens);

        let errors = [
            block_on(service.create(&actor, new_key(None, None))).unwrap_err(),
            block_on(service.list(&actor)).unwrap_err(),
            block_on(service.get(&actor, key_id(1))).unwrap_err(),
            block_on(service.delete(&actor, key_id(1))).unwrap_err(),
        ];

        for err in errors {
            assert!(
                matches!(err, ServiceError::Forbidden(Forbidden::UserRequired)),
                "{actor:?}: {err:?}"
            );
        }
        assert!(uow.outcomes().is_empty());
    }
}
