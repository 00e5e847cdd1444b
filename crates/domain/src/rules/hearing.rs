//! Which hooks hear an event: the deliveries an append of events queues in the outbox
//! (decision D-83). Three kinds of hook hear events, each its own way: the
//! organization's webhooks by the event types they subscribe to, an A2A push config by
//! the moves of its task, a remote agent's hand-over channel by the tasks handed to its
//! agent. The stores load the hooks that may hear an append ([`Listener`]s; a superset
//! is fine) and store what [`deliveries`] answers.

use std::collections::HashSet;

use time::OffsetDateTime;
use uuid::Uuid;

use crate::model::{
    AgentId, Event, EventId, HookEvents, HookType, OrgId, PUSH_EVENT_TYPES, TaskId, Webhook,
    WebhookId, hands_over,
};

/// How a hook comes to hear events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ear {
    /// One of the organization's own webhooks, subscribed to these event types
    /// ([`HookEvents::ALL`] for every type).
    Subscribed(Vec<String>),
    /// An A2A push config: it hears the moves of its task.
    Push(TaskId),
    /// A remote agent's hand-over channel: it hears the tasks handed to its agent.
    Remote(AgentId),
}

/// A hook as the hearing rule sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    /// The hook.
    pub hook: WebhookId,
    /// Its organization: it hears only that organization's events.
    pub org: OrgId,
    /// Whether it is called at all: a disabled hook hears nothing.
    pub enabled: bool,
    /// Only post-hooks are told from the outbox.
    pub hook_type: HookType,
    /// How it hears.
    pub ear: Ear,
}

impl Listener {
    /// How `hook` hears events.
    pub fn of(hook: &Webhook) -> Self {
        let ear = match (&hook.push, &hook.remote) {
            (Some(push), _) => Ear::Push(push.task_id),
            (None, Some(remote)) => Ear::Remote(remote.agent_id),
            (None, None) => Ear::Subscribed(hook.events.as_slice().to_vec()),
        };
        Self {
            hook: hook.id,
            org: hook.org_id,
            enabled: hook.enabled,
            hook_type: hook.hook_type,
            ear,
        }
    }
}

/// One delivery to queue: `event`, which happened `at`, to `hook`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// The hook told.
    pub hook: WebhookId,
    /// The event it is told about.
    pub event: EventId,
    /// When the event happened: the delivery is due then.
    pub at: OffsetDateTime,
}

/// Whether a subscription to `types` takes an event of `event_type`.
pub fn subscribed(types: &[String], event_type: &str) -> bool {
    types
        .iter()
        .any(|t| t == HookEvents::ALL || t == event_type)
}

/// Whether an event of `event_type` moves its task, which the task's push configs hear.
pub fn moves_task(event_type: &str) -> bool {
    PUSH_EVENT_TYPES.contains(&event_type)
}

/// Whether `hook` is asked about an event of `event_type` before the action (decision
/// D-84): an enabled pre-hook of the organization's own, subscribed to the type. The
/// stores load the organization's enabled pre-hooks; the gate asks those this admits.
pub fn asked(hook: &Webhook, event_type: &str) -> bool {
    hook.hook_type == HookType::Pre && hook.is_own() && hook.hears(event_type)
}

/// The deliveries that appending `events` queues, given the hooks that may hear them
/// and `assignee`, the current assignee of a task (by id) the events are about. Each
/// hook hears each event at most once, and a task is handed to a remote agent's
/// channel once per append, however many of its events name the assignment.
pub fn deliveries(
    events: &[Event],
    listeners: &[Listener],
    assignee: impl Fn(Uuid) -> Option<AgentId>,
) -> Vec<Delivery> {
    let mut handed = HashSet::new();
    let mut seen = HashSet::new();
    let mut queued = Vec::new();
    for event in events {
        for listener in listeners {
            if !listener.enabled
                || listener.hook_type != HookType::Post
                || listener.org != event.org_id
            {
                continue;
            }
            let hears = match &listener.ear {
                Ear::Subscribed(types) => subscribed(types, &event.event_type),
                Ear::Push(task) => {
                    task.as_uuid() == event.entity_id && moves_task(&event.event_type)
                }
                Ear::Remote(agent) => {
                    hands_over(&event.event_type, &event.payload)
                        && assignee(event.entity_id) == Some(*agent)
                        && handed.insert((listener.hook, event.entity_id))
                }
            };
            if hears && seen.insert((listener.hook, event.id)) {
                queued.push(Delivery {
                    hook: listener.hook,
                    event: event.id,
                    at: event.created_at,
                });
            }
        }
    }
    queued
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use time::macros::datetime;

    use super::*;
    use crate::model::EventSeverity;

    const AT: OffsetDateTime = datetime!(2026-06-01 12:00 UTC);

    fn org(n: u128) -> OrgId {
        OrgId::from_uuid(Uuid::from_u128(n))
    }

    fn task(n: u128) -> TaskId {
        TaskId::from_uuid(Uuid::from_u128(0x100 + n))
    }

    fn agent(n: u128) -> AgentId {
        AgentId::from_uuid(Uuid::from_u128(0x200 + n))
    }

    fn hook(n: u128) -> WebhookId {
        WebhookId::from_uuid(Uuid::from_u128(0x300 + n))
    }

    fn event(n: u128, org: OrgId, event_type: &str, about: TaskId, payload: Value) -> Event {
        Event {
            id: EventId::from_uuid(Uuid::from_u128(0x400 + n)),
            org_id: org,
            event_type: event_type.to_owned(),
            actor_id: None,
            entity_type: "task".to_owned(),
            entity_id: about.as_uuid(),
            severity: EventSeverity::Info,
            payload,
            created_at: AT + time::Duration::seconds(i64::try_from(n).unwrap()),
        }
    }

    fn listener(n: u128, org: OrgId, ear: Ear) -> Listener {
        Listener {
            hook: hook(n),
            org,
            enabled: true,
            hook_type: HookType::Post,
            ear,
        }
    }

    fn subscribed_to(types: &[&str]) -> Ear {
        Ear::Subscribed(types.iter().map(|t| (*t).to_owned()).collect())
    }

    fn heard(queued: &[Delivery]) -> Vec<(WebhookId, EventId)> {
        queued.iter().map(|d| (d.hook, d.event)).collect()
    }

    fn nobody(_: Uuid) -> Option<AgentId> {
        None
    }

    #[test]
    fn a_subscription_takes_its_types_and_the_star_takes_all() {
        let types = |t: &[&str]| t.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>();
        assert!(subscribed(&types(&["task.created"]), "task.created"));
        assert!(!subscribed(&types(&["task.created"]), "task.done"));
        assert!(subscribed(&types(&["task.done", "*"]), "agent.created"));
        assert!(subscribed(&types(&["a.b", "task.done"]), "task.done"));
        assert!(!subscribed(&[], "task.done"));
    }

    #[test]
    fn only_transitions_move_a_task() {
        assert!(moves_task("task.transitioned"));
        for other in ["task.created", "task.assigned", "task.updated", "*", ""] {
            assert!(!moves_task(other), "{other}");
        }
    }

    #[test]
    fn an_enabled_post_hook_of_the_organization_hears_its_subscribed_types() {
        let e = event(1, org(1), "task.created", task(1), json!({}));
        let cases = [
            (true, HookType::Post, org(1), &["task.created"][..], true),
            (true, HookType::Post, org(1), &["*"][..], true),
            (true, HookType::Post, org(1), &["task.done"][..], false),
            (true, HookType::Post, org(2), &["*"][..], false),
            (false, HookType::Post, org(1), &["*"][..], false),
            (true, HookType::Pre, org(1), &["*"][..], false),
        ];
        for (enabled, hook_type, at, types, expected) in cases {
            let l = Listener {
                enabled,
                hook_type,
                ..listener(1, at, subscribed_to(types))
            };
            let queued = deliveries(std::slice::from_ref(&e), &[l], nobody);
            assert_eq!(
                !queued.is_empty(),
                expected,
                "{enabled} {hook_type:?} {types:?}"
            );
        }
    }

    #[test]
    fn a_delivery_is_due_when_its_event_happened() {
        let e = event(3, org(1), "task.created", task(1), json!({}));
        let queued = deliveries(
            std::slice::from_ref(&e),
            &[listener(1, org(1), subscribed_to(&["*"]))],
            nobody,
        );
        assert_eq!(
            queued,
            [Delivery {
                hook: hook(1),
                event: e.id,
                at: e.created_at
            }]
        );
    }

    #[test]
    fn a_push_config_hears_the_moves_of_its_task_only() {
        let moved = event(1, org(1), "task.transitioned", task(1), json!({}));
        let other_task = event(2, org(1), "task.transitioned", task(2), json!({}));
        let not_a_move = event(3, org(1), "task.updated", task(1), json!({}));
        let other_org = event(4, org(2), "task.transitioned", task(1), json!({}));
        let push = listener(1, org(1), Ear::Push(task(1)));
        let events = [moved.clone(), other_task, not_a_move, other_org];
        let queued = deliveries(&events, std::slice::from_ref(&push), nobody);
        assert_eq!(heard(&queued), [(hook(1), moved.id)]);
        let off = Listener {
            enabled: false,
            ..push
        };
        assert!(deliveries(&events, &[off], nobody).is_empty());
    }

    #[test]
    fn a_remote_channel_hears_what_hands_its_agent_a_task_once_per_append() {
        let assigned = event(
            1,
            org(1),
            "task.assigned",
            task(1),
            json!({"assigneeId": "a"}),
        );
        let again = event(
            2,
            org(1),
            "task.assigned",
            task(1),
            json!({"assigneeId": "a"}),
        );
        let created = event(
            3,
            org(1),
            "task.created",
            task(2),
            json!({"assigneeId": "a"}),
        );
        let unassigned = event(
            4,
            org(1),
            "task.created",
            task(3),
            json!({"assigneeId": null}),
        );
        let moved = event(5, org(1), "task.transitioned", task(1), json!({}));
        let elsewhere = event(
            6,
            org(2),
            "task.assigned",
            task(1),
            json!({"assigneeId": "a"}),
        );
        let someone_else = event(7, org(1), "task.assigned", task(4), json!({}));
        let assignee_of = |id: Uuid| {
            [task(1), task(2), task(3)]
                .iter()
                .any(|t| t.as_uuid() == id)
                .then(|| agent(1))
                .or_else(|| (id == task(4).as_uuid()).then(|| agent(2)))
        };
        let events = [
            assigned.clone(),
            again,
            created.clone(),
            unassigned,
            moved,
            elsewhere,
            someone_else,
        ];
        let channel = listener(1, org(1), Ear::Remote(agent(1)));
        let queued = deliveries(&events, std::slice::from_ref(&channel), assignee_of);
        assert_eq!(
            heard(&queued),
            [(hook(1), assigned.id), (hook(1), created.id)]
        );
        // Each append hands the task over again.
        let queued = deliveries(&events[1..2], &[channel], assignee_of);
        assert_eq!(queued.len(), 1);
    }

    #[test]
    fn a_hook_hears_an_event_once_however_it_is_listed() {
        let e = event(1, org(1), "task.created", task(1), json!({}));
        let twice = [
            listener(1, org(1), subscribed_to(&["task.created"])),
            listener(1, org(1), subscribed_to(&["*"])),
            listener(2, org(1), subscribed_to(&["*", "task.created"])),
        ];
        let queued = deliveries(std::slice::from_ref(&e), &twice, nobody);
        assert_eq!(heard(&queued), [(hook(1), e.id), (hook(2), e.id)]);
    }

    #[test]
    fn only_an_enabled_own_pre_hook_subscribed_to_the_type_is_asked() {
        use crate::model::{HookName, HookTimeout, HookUrl, PushConfigId, TaskPush};
        let pre = Webhook {
            id: hook(1),
            org_id: org(1),
            name: HookName::new("h").unwrap(),
            url: HookUrl::new("https://example.com/h").unwrap(),
            sealed_secret: None,
            events: HookEvents::new(vec!["task.created".into()]).unwrap(),
            hook_type: HookType::Pre,
            can_block: true,
            timeout: HookTimeout::DEFAULT,
            enabled: true,
            consecutive_failures: 0,
            last_error: None,
            push: None,
            remote: None,
            created_at: AT,
            updated_at: AT,
        };
        assert!(asked(&pre, "task.created"));
        assert!(!asked(&pre, "task.done"));
        let off = Webhook {
            enabled: false,
            ..pre.clone()
        };
        assert!(!asked(&off, "task.created"));
        let post = Webhook {
            hook_type: HookType::Post,
            ..pre.clone()
        };
        assert!(!asked(&post, "task.created"));
        let push = Webhook {
            push: Some(TaskPush {
                task_id: task(1),
                config_id: PushConfigId::new("c").unwrap(),
                sealed_auth: None,
            }),
            ..pre
        };
        assert!(!asked(&push, "task.created"));
    }

    #[test]
    fn a_listener_follows_the_kind_of_its_hook() {
        use crate::model::{
            HookName, HookTimeout, HookUrl, PushConfigId, RemoteAgentLink, TaskPush,
        };
        let base = Webhook {
            id: hook(1),
            org_id: org(1),
            name: HookName::new("h").unwrap(),
            url: HookUrl::new("https://example.com/h").unwrap(),
            sealed_secret: None,
            events: HookEvents::new(vec!["task.created".into()]).unwrap(),
            hook_type: HookType::Pre,
            can_block: false,
            timeout: HookTimeout::DEFAULT,
            enabled: false,
            consecutive_failures: 0,
            last_error: None,
            push: None,
            remote: None,
            created_at: AT,
            updated_at: AT,
        };
        let own = Listener::of(&base);
        assert_eq!(
            own,
            Listener {
                hook: hook(1),
                org: org(1),
                enabled: false,
                hook_type: HookType::Pre,
                ear: subscribed_to(&["task.created"]),
            }
        );
        let push = Webhook {
            push: Some(TaskPush {
                task_id: task(1),
                config_id: PushConfigId::new("c").unwrap(),
                sealed_auth: None,
            }),
            ..base.clone()
        };
        assert_eq!(Listener::of(&push).ear, Ear::Push(task(1)));
        let remote = Webhook {
            remote: Some(RemoteAgentLink {
                agent_id: agent(1),
                card_url: "https://example.com/card".into(),
                callback_url: "https://muster.example.com".into(),
                sealed_auth: None,
            }),
            ..base
        };
        assert_eq!(Listener::of(&remote).ear, Ear::Remote(agent(1)));
    }
}
