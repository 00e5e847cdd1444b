//! A whole organization on the in-memory ports (`muster-memory`): the use cases run
//! against a real store, so a test states what a caller sees and what the store keeps
//! instead of which port calls a use case makes.

use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{
    Actor, ActorKind, Agent, AgentHandle, AgentMode, CapabilityName, Email, Event, Level, Metadata,
    OrgId, OrgName, Proficiency, Task, TaskPriority, TemplateId, Title, UserRole,
};
use muster_domain::ports::{EventFilter, EventLog, SecretSealer};
use muster_domain::service::{
    AgentService, BootstrapRequest, BootstrapService, NewAgent, NewChild, NewTask, ProjectService,
    RoutineService, RunService, TaskService, TemplateOverrides, TreasuryService,
};
use muster_memory::fakes::{DigestSigner, PlainVault};
use muster_memory::{ManualClock, MemoryStore, TimeOrderedIds};
use serde_json::Value;
use time::OffsetDateTime;
use time::macros::datetime;

/// When every world's clock starts.
pub const START: OffsetDateTime = datetime!(2026-03-02 09:00:00 UTC);

/// One organization, bootstrapped, with its services.
pub struct World {
    pub store: MemoryStore,
    pub clock: Arc<ManualClock>,
    pub vault: Arc<PlainVault>,
    pub signer: Arc<DigestSigner>,
    pub ids: Arc<TimeOrderedIds>,
    pub tasks: TaskService,
    pub agents: AgentService,
    pub treasury: TreasuryService,
    /// Runs, with an empty price table and the default rate (decision D-106).
    pub runs: RunService,
    /// Projects (issue 66).
    pub projects: ProjectService,
    /// Routines (decision D-108).
    pub routines: RoutineService,
    pub org: OrgId,
    pub admin: Actor,
    pub hr: Actor,
}

impl World {
    /// A fresh store with organization "Acme", its admin and its HR agent (level 10),
    /// its treasury empty.
    pub fn new() -> Self {
        Self::with_treasury(0)
    }

    /// [`new`](Self::new), its treasury granted `treasury` credits at bootstrap.
    pub fn with_treasury(treasury: i64) -> Self {
        let store = MemoryStore::new();
        let clock = Arc::new(ManualClock::new(START));
        let vault = Arc::new(PlainVault::default());
        let ids = Arc::new(TimeOrderedIds);
        let bootstrap = BootstrapService::new(
            Arc::new(store.clone()),
            vault.clone(),
            clock.clone(),
            ids.clone(),
        );
        let org = block_on(bootstrap.bootstrap(BootstrapRequest {
            treasury,
            ..BootstrapRequest::new(
                OrgName::new("Acme").unwrap(),
                Email::new("admin@acme.test").unwrap(),
                "$plain$x".into(),
                vault.generate().unwrap(),
            )
        }))
        .unwrap();
        let admin = Actor {
            org_id: org.organization.id,
            kind: ActorKind::User {
                id: org.admin.id,
                role: UserRole::Admin,
                key: None,
            },
        };
        let hr = actor_of(&org.hr_agent.agent);
        let tasks = TaskService::new(
            Arc::new(store.clone()),
            Arc::new(store.clone()),
            clock.clone(),
            ids.clone(),
        );
        Self {
            routines: RoutineService::new(
                Arc::new(store.clone()),
                Arc::new(store.clone()),
                Arc::new(store.clone()),
                tasks.clone(),
                clock.clone(),
                ids.clone(),
            ),
            tasks,
            treasury: TreasuryService::new(
                Arc::new(store.clone()),
                Arc::new(store.clone()),
                clock.clone(),
                ids.clone(),
            ),
            runs: RunService::new(
                Arc::new(store.clone()),
                Arc::new(store.clone()),
                clock.clone(),
                ids.clone(),
            ),
            projects: ProjectService::new(
                Arc::new(store.clone()),
                Arc::new(store.clone()),
                clock.clone(),
                ids.clone(),
            ),
            agents: AgentService::new(
                Arc::new(store.clone()),
                Arc::new(store.clone()),
                vault.clone(),
                clock.clone(),
                ids.clone(),
            ),
            org: org.organization.id,
            store,
            clock,
            vault,
            signer: Arc::new(DigestSigner),
            ids,
            admin,
            hr,
        }
    }

    /// A user of the organization with `role`, not stored (actors are what the
    /// authenticators hand the use cases).
    pub fn user(&self, role: UserRole) -> Actor {
        let ActorKind::User { id, .. } = self.admin.kind else {
            unreachable!()
        };
        Actor {
            org_id: self.org,
            kind: ActorKind::User {
                id,
                role,
                key: None,
            },
        }
    }

    /// Registers (as HR) a worker agent with `skills`, at `level`.
    pub fn worker(
        &self,
        handle: &str,
        level: i64,
        skills: &[(&str, Proficiency)],
    ) -> (Agent, Actor) {
        self.register(handle, level, AgentMode::Worker, skills)
    }

    /// Registers (as HR) an agent in `mode` with `skills`, at `level`.
    pub fn register(
        &self,
        handle: &str,
        level: i64,
        mode: AgentMode,
        skills: &[(&str, Proficiency)],
    ) -> (Agent, Actor) {
        let new = NewAgent {
            mode,
            ..Self::new_worker(handle, level, skills)
        };
        let agent = block_on(self.agents.register(&self.hr, new))
            .unwrap()
            .view
            .agent;
        let actor = actor_of(&agent);
        (agent, actor)
    }

    /// What registering a worker with `skills` at `level` asks for.
    pub fn new_worker(handle: &str, level: i64, skills: &[(&str, Proficiency)]) -> NewAgent {
        NewAgent {
            level: Some(Level::new(level).unwrap()),
            capabilities: skills
                .iter()
                .map(|(name, level)| (CapabilityName::new(name).unwrap(), *level))
                .collect(),
            ..NewAgent::new(AgentHandle::new(handle).unwrap(), handle.to_owned())
        }
    }

    /// What spawning a worker child `handle` (knowing basic `rust`) at `level` asks for;
    /// `None` is one level below its parent.
    pub fn new_child(handle: &str, level: Option<i64>) -> NewChild {
        NewChild {
            level,
            capabilities: vec![(CapabilityName::new("rust").unwrap(), Proficiency::Basic)],
            ..NewChild::new(AgentHandle::new(handle).unwrap(), handle.to_owned())
        }
    }

    /// Creates (as the admin) a task with `priority` and `metadata`.
    pub fn task_with(&self, title: &str, priority: TaskPriority, metadata: Value) -> Task {
        let new = NewTask {
            priority,
            metadata: Metadata::new(metadata).unwrap(),
            ..NewTask::new(Title::new(title).unwrap())
        };
        block_on(self.tasks.create(&self.admin, new)).unwrap()
    }

    /// Creates (as the admin) a task from `template` with `overrides`.
    pub fn instantiate(&self, template: TemplateId, overrides: TemplateOverrides) -> Task {
        block_on(self.tasks.instantiate(&self.admin, template, overrides)).unwrap()
    }

    /// Creates (as the admin) a normal-priority task without requirements.
    pub fn task(&self, title: &str) -> Task {
        self.task_with(title, TaskPriority::Normal, serde_json::json!({}))
    }

    /// The webhook service's ports on this world's store, with every target allowed
    /// and `caller` answering the calls.
    pub fn webhook_ports(
        &self,
        caller: Arc<dyn muster_domain::ports::HookCaller>,
    ) -> muster_domain::service::WebhookPorts {
        let store = Arc::new(self.store.clone());
        muster_domain::service::WebhookPorts {
            hooks: store.clone(),
            uow: store,
            guard: Arc::new(muster_memory::fakes::OpenTargets),
            vault: self.vault.clone(),
            caller,
            clock: self.clock.clone(),
            ids: self.ids.clone(),
        }
    }

    /// The world's clock now.
    pub fn clock_now(&self) -> OffsetDateTime {
        muster_domain::ports::Clock::now(self.clock.as_ref())
    }

    /// The stored task `task`, as it is now.
    pub fn reread(&self, task: &Task) -> Task {
        block_on(self.tasks.get(&self.admin, task.id)).unwrap()
    }

    /// The organization's audit events of `event_type`, oldest first.
    pub fn events(&self, event_type: &str) -> Vec<Event> {
        let filter = EventFilter {
            event_type: Some(event_type.to_owned()),
            ..EventFilter::default()
        };
        let mut events = block_on(self.store.list(self.org, &filter, 0, 10_000))
            .unwrap()
            .events;
        events.reverse();
        events
    }
}

/// The actor an agent's signed request becomes.
pub fn actor_of(agent: &Agent) -> Actor {
    Actor {
        org_id: agent.org_id,
        kind: ActorKind::Agent {
            id: agent.id,
            role: agent.role,
            mode: agent.mode,
            level: agent.level,
        },
    }
}
