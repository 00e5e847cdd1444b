//! The services' `Debug`: each names itself and shows none of its ports (which hold
//! keys, secrets and connections), so that logging a service never leaks one.

use crate::common::world::World;

use std::fmt::Debug;
use std::sync::Arc;

use muster_domain::model::{Breakers, HookType, OrgId, Threshold, UserRole};
use muster_domain::ports::{CallKind, HookCall, NewTotpSecret};
use muster_domain::rules::budget::BudgetPeriod;
use muster_domain::service::accounts::{LoginRequest, NewUser};
use muster_domain::service::guard::{GuardService, GuardedUnitOfWork, RunawayGuard};
use muster_domain::service::{
    AccountPorts, AccountService, ApiKeyService, BootstrapService, BudgetRollover, ChatService,
    ChatSettings, CodeHostPorts, CodeHostService, DeliveryService, EventService, GatedUnitOfWork,
    HookGate, InboundPorts, InboundService, WebhookService,
};
use muster_memory::fakes::{FakeTokens, FakeTotp, PlainHasher, RecordingHookCaller};

/// `value`'s `Debug` is `name { .. }` and nothing else.
fn names_only(value: &impl Debug, name: &str) {
    assert_eq!(format!("{value:?}"), format!("{name} {{ .. }}"));
}

#[test]
fn every_service_shows_its_name_and_hides_its_ports() {
    let world = World::new();
    let store = Arc::new(world.store.clone());
    names_only(&world.tasks, "TaskService");
    assert_eq!(
        format!("{:?}", world.agents),
        "AgentService { period: Day, .. }",
        "the budget period is configuration, not a secret"
    );
    names_only(&EventService::new(store), "EventService");
}

#[test]
fn the_integration_services_show_their_name_and_hide_their_ports() {
    let world = World::new();
    let store = Arc::new(world.store.clone());
    let caller = Arc::new(RecordingHookCaller::new(200, Vec::new()));

    let inbound = InboundPorts {
        keys: store.clone(),
        uow: store.clone(),
        vault: world.vault.clone(),
        signer: world.signer.clone(),
        clock: world.clock.clone(),
        ids: world.ids.clone(),
    };
    names_only(&inbound, "InboundPorts");
    names_only(&InboundService::new(inbound), "InboundService");

    let hooks = world.webhook_ports(caller.clone());
    names_only(&hooks, "WebhookPorts");
    names_only(&WebhookService::new(hooks), "WebhookService");
    let delivery = DeliveryService::new(
        store.clone(),
        store.clone(),
        store.clone(),
        world.vault.clone(),
        caller.clone(),
        world.clock.clone(),
        world.ids.clone(),
    );
    let shown = format!("{delivery:?}");
    assert!(
        shown.starts_with("DeliveryService { holder: ") && shown.ends_with(", .. }"),
        "its lease holder id, nothing else: {shown}"
    );
    let gate = HookGate::new(
        caller,
        world.vault.clone(),
        world.clock.clone(),
        world.ids.clone(),
    );
    names_only(&gate, "HookGate");

    let codehost = CodeHostPorts {
        tasks: world.tasks.clone(),
        connections: store.clone(),
        uow: store.clone(),
        vault: world.vault.clone(),
        signer: world.signer.clone(),
        clock: world.clock.clone(),
        ids: world.ids.clone(),
    };
    names_only(&codehost, "CodeHostPorts");
    names_only(&CodeHostService::new(codehost), "CodeHostService");
    let chat = ChatService::new(
        world.tasks.clone(),
        store.clone(),
        store.clone(),
        store.clone(),
        ChatSettings {
            token: Some("chat-token".into()),
            ..ChatSettings::default()
        },
    );
    names_only(&chat, "ChatService");
}

#[test]
fn the_account_and_guard_services_show_their_name_and_hide_their_ports() {
    let world = World::new();
    let store = Arc::new(world.store.clone());

    let defaults = Breakers {
        actions_per_minute: Threshold::OFF,
        credits_per_hour: Threshold::OFF,
    };
    let guard = Arc::new(RunawayGuard::new(
        defaults,
        world.clock.clone(),
        world.ids.clone(),
    ));
    assert_eq!(
        format!("{guard:?}"),
        "RunawayGuard { defaults: Breakers { actions_per_minute: Threshold(0), \
         credits_per_hour: Threshold(0) }, .. }"
    );
    let settings = GuardService::new(store.clone(), guard, world.clock.clone(), world.ids.clone());
    names_only(&settings, "GuardService");

    let tokens = Arc::new(FakeTokens::default());
    let keys = ApiKeyService::new(
        store.clone(),
        store.clone(),
        tokens.clone(),
        world.clock.clone(),
        world.ids.clone(),
    );
    names_only(&keys, "ApiKeyService");
    let accounts = AccountPorts {
        uow: store.clone(),
        users: store.clone(),
        orgs: store,
        hasher: Arc::new(PlainHasher),
        tokens,
        totp: Arc::new(FakeTotp::default()),
        clock: world.clock.clone(),
        ids: world.ids.clone(),
    };
    names_only(&accounts, "AccountPorts");
    names_only(&AccountService::new(accounts), "AccountService");
}

#[test]
fn the_jobs_and_the_wrapping_units_of_work_show_their_name_and_hide_their_ports() {
    let world = World::new();
    let store = Arc::new(world.store.clone());
    let rollover = BudgetRollover::new(store.clone(), world.clock.clone(), BudgetPeriod::Week);
    assert_eq!(
        format!("{rollover:?}"),
        "BudgetRollover { period: Week, .. }"
    );
    let bootstrap = BootstrapService::new(
        store.clone(),
        world.vault.clone(),
        world.clock.clone(),
        world.ids.clone(),
    );
    names_only(&bootstrap, "BootstrapService");
    let off = Breakers {
        actions_per_minute: Threshold::OFF,
        credits_per_hour: Threshold::OFF,
    };
    let guard = Arc::new(RunawayGuard::new(
        off,
        world.clock.clone(),
        world.ids.clone(),
    ));
    names_only(
        &GuardedUnitOfWork::new(store.clone(), store.clone(), guard),
        "GuardedUnitOfWork",
    );
    let gate = Arc::new(HookGate::new(
        Arc::new(RecordingHookCaller::new(200, Vec::new())),
        world.vault.clone(),
        world.clock.clone(),
        world.ids.clone(),
    ));
    names_only(&GatedUnitOfWork::new(store, gate), "GatedUnitOfWork");
}

/// `shown` holds none of `secrets` and every one of `fields`.
fn redacts(shown: &str, secrets: &[&str], fields: &[&str]) {
    for secret in secrets {
        assert!(!shown.contains(secret), "{secret} leaked: {shown}");
    }
    for field in fields {
        assert!(shown.contains(field), "{field} missing: {shown}");
    }
}

#[test]
fn requests_carrying_a_secret_show_everything_but_the_secret() {
    let org = OrgId::from_uuid(uuid::Uuid::from_u128(0x0a));
    let login = LoginRequest {
        org_id: Some(org),
        email: "ada@acme.test".into(),
        password: "correct horse battery".into(),
        second_factor: Some("482913".into()),
        from: muster_domain::model::ClientAddress::new(Some([192, 0, 2, 1].into())),
    };
    redacts(
        &format!("{login:?}"),
        &["correct horse", "482913"],
        &[
            "LoginRequest",
            "ada@acme.test",
            &org.to_string(),
            "192.0.2.1",
        ],
    );

    let user = NewUser {
        email: "grace@acme.test".into(),
        password: "hunter22hunter22".into(),
        name: "Grace".into(),
        org_id: org,
        role: Some(UserRole::Viewer),
    };
    redacts(
        &format!("{user:?}"),
        &["hunter22"],
        &[
            "NewUser",
            "grace@acme.test",
            "Grace",
            "Viewer",
            &org.to_string(),
        ],
    );

    let delivery = uuid::Uuid::from_u128(0xde);
    let call = HookCall {
        url: "https://hooks.example/in".into(),
        secret: Some("whsec-very-private".into()),
        timeout_ms: 5_000,
        hook_type: HookType::Pre,
        event_type: "task.created".into(),
        delivery_id: delivery,
        body: b"{\"private\":\"body\"}".to_vec(),
        content_type: HookCall::A2A_JSON,
        headers: vec![("authorization", "Bearer push-very-private".into())],
        kind: CallKind::PreHook,
        attempt: 1,
        trace: None,
    };
    redacts(
        &format!("{call:?}"),
        &["whsec-very-private", "private\\\":", "push-very-private"],
        &[
            "HookCall",
            "https://hooks.example/in",
            "<redacted>",
            "5000",
            "Pre",
            "task.created",
            &delivery.to_string(),
        ],
    );
    let unsigned = HookCall {
        secret: None,
        ..call
    };
    assert!(format!("{unsigned:?}").contains("secret: None"));

    let totp = NewTotpSecret {
        sealed: b"sealed-seed".to_vec(),
        qr_code: "data:image/png;base64,QRQRQR".into(),
        manual_key: muster_domain::model::BearerSecret::new("SEED".to_owned()),
    };
    assert_eq!(format!("{totp:?}"), "NewTotpSecret(***)");
}

#[test]
fn the_memory_store_shows_how_much_it_holds_and_none_of_it() {
    let world = World::new();
    world.task("a secret plan");
    let shown = format!("{:?}", world.store);
    assert_eq!(
        shown,
        format!(
            "MemoryStore {{ organizations: 1, agents: 1, tasks: 1, events: {}, .. }}",
            world.events("user.created").len()
                + world.events("agent.registered").len()
                + world.events("task.created").len()
        )
    );
    assert!(!shown.contains("secret plan"));
}
