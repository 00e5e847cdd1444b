//! Embedding the domain: the use cases wired to the in-memory ports (`muster-memory`).
//!
//! A small organization's day: bootstrap it with credits in its treasury, register two
//! agents with different capabilities, create a task that needs Rust (its reward is
//! escrowed from the treasury), let routing pick the agent that has it, move the task
//! to `done`, and read what that paid and what the audit log kept.
//!
//! Run: `cargo run -p muster-memory --example embedded`.

use std::error::Error;
use std::sync::Arc;

use futures_executor::block_on;
use muster_domain::model::{
    Actor, ActorKind, Agent, AgentHandle, CapabilityName, Email, Metadata, OrgName, Proficiency,
    TaskPriority, TaskStatus, Title, UserRole,
};
use muster_domain::ports::{EventFilter, PasswordHasher, SecretSealer};
use muster_domain::rules::reward::DEFAULT_TASK_REWARD;
use muster_domain::service::{
    AgentService, AutoAssign, BootstrapRequest, BootstrapService, EventQuery, EventService,
    NewAgent, NewTask, TaskService, TreasuryService,
};
use muster_memory::fakes::{PlainHasher, PlainVault};
use muster_memory::{MemoryStore, SystemClock, TimeOrderedIds};
use serde_json::json;

fn main() -> Result<(), Box<dyn Error>> {
    block_on(async {
        let services = Services::wire();
        let (admin, hr) = services.bootstrap().await?;
        let (rustacean, writer) = services.staff(&hr).await?;
        println!(
            "registered {} and {}",
            rustacean.handle.as_str(),
            writer.handle.as_str()
        );
        services.work(&admin, &rustacean).await?;
        services.audit(&admin).await
    })
}

/// Credits the operator grants the treasury at bootstrap: only grants create credits.
const TREASURY: i64 = 100;

/// The use cases, all on one in-memory store.
struct Services {
    vault: Arc<PlainVault>,
    bootstrap: BootstrapService,
    agents: AgentService,
    tasks: TaskService,
    treasury: TreasuryService,
    events: EventService,
}

impl Services {
    /// One store serves every port; the fakes stand in for cryptography (tests only).
    fn wire() -> Self {
        let store = MemoryStore::new();
        let vault = Arc::new(PlainVault::default());
        let (clock, ids) = (Arc::new(SystemClock), Arc::new(TimeOrderedIds));
        Self {
            bootstrap: BootstrapService::new(
                Arc::new(store.clone()),
                vault.clone(),
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
            tasks: TaskService::new(
                Arc::new(store.clone()),
                Arc::new(store.clone()),
                clock.clone(),
                ids.clone(),
            ),
            treasury: TreasuryService::new(
                Arc::new(store.clone()),
                Arc::new(store.clone()),
                clock,
                ids,
            ),
            events: EventService::new(Arc::new(store)),
            vault,
        }
    }

    /// The organization, its first admin and its HR agent, as actors.
    async fn bootstrap(&self) -> Result<(Actor, Actor), Box<dyn Error>> {
        let org = self
            .bootstrap
            .bootstrap(BootstrapRequest {
                treasury: TREASURY,
                ..BootstrapRequest::new(
                    OrgName::new("Acme")?,
                    Email::new("admin@acme.test")?,
                    PlainHasher
                        .hash("correct horse")
                        .await
                        .map_err(|e| e.to_string())?,
                    self.vault.generate()?,
                )
            })
            .await?;
        let admin = Actor {
            org_id: org.organization.id,
            kind: ActorKind::User {
                id: org.admin.id,
                role: UserRole::Admin,
                key: None,
            },
        };
        let hr = &org.hr_agent.agent;
        println!(
            "bootstrapped {} with HR agent {}",
            org.organization.name.as_str(),
            hr.handle.as_str()
        );
        let hr = Actor {
            org_id: hr.org_id,
            kind: ActorKind::Agent {
                id: hr.id,
                role: hr.role,
                mode: hr.mode,
                level: hr.level,
            },
        };
        Ok((admin, hr))
    }

    /// Two workers with one capability each; HR registers them.
    async fn staff(&self, hr: &Actor) -> Result<(Agent, Agent), Box<dyn Error>> {
        let register = |handle: &str, skill: &str| -> Result<NewAgent, Box<dyn Error>> {
            let new = NewAgent::new(AgentHandle::new(handle)?, handle.to_owned());
            Ok(NewAgent {
                capabilities: vec![(CapabilityName::new(skill)?, Proficiency::Expert)],
                ..new
            })
        };
        let rustacean = self
            .agents
            .register(hr, register("rustacean", "rust")?)
            .await?;
        let writer = self
            .agents
            .register(hr, register("writer", "docs")?)
            .await?;
        Ok((rustacean.view.agent, writer.view.agent))
    }

    /// A task that needs Rust, its default reward escrowed from the treasury, routed to
    /// whoever covers it best, moved along the transition table to done: its assignee is
    /// paid the escrow.
    async fn work(&self, admin: &Actor, rustacean: &Agent) -> Result<(), Box<dyn Error>> {
        let title = Title::new("Fix the parser")?;
        let new = NewTask {
            priority: TaskPriority::High,
            metadata: Metadata::new(json!({ "requiredCapabilities": ["rust"] }))?,
            ..NewTask::new(title)
        };
        let task = self.tasks.create(admin, new).await?;
        if task.reward != DEFAULT_TASK_REWARD {
            return Err(format!("the escrow was {}", task.reward).into());
        }
        let task = self
            .tasks
            .auto_assign(admin, task.id, AutoAssign::new(None, Vec::new())?)
            .await?;
        if task.assignee_id != Some(rustacean.id) {
            return Err(format!("routed to {:?}, not to the rustacean", task.assignee_id).into());
        }
        println!(
            "routed \"{}\" to {}",
            task.title.as_str(),
            rustacean.handle.as_str()
        );
        for to in [TaskStatus::InProgress, TaskStatus::Review, TaskStatus::Done] {
            self.tasks.transition(admin, task.id, to, None).await?;
        }
        let paid = self.agents.balance(admin, rustacean.id).await?;
        if paid.current_balance != DEFAULT_TASK_REWARD {
            return Err(format!("the reward was {}", paid.current_balance).into());
        }
        let treasury = self.treasury.get(admin).await?;
        if treasury.balance != TREASURY - DEFAULT_TASK_REWARD {
            return Err(format!("the treasury holds {}", treasury.balance).into());
        }
        println!(
            "done: {} earned {} credits from the treasury, which holds {}",
            paid.handle.as_str(),
            paid.current_balance,
            treasury.balance
        );
        Ok(())
    }

    /// What the audit log kept, oldest first.
    async fn audit(&self, admin: &Actor) -> Result<(), Box<dyn Error>> {
        let query = EventQuery {
            page: 1,
            limit: EventQuery::MAX_LIMIT,
        };
        let page = self
            .events
            .list(admin, &EventFilter::default(), query)
            .await?;
        println!("the audit log holds {} events:", page.total);
        for event in page.events.iter().rev() {
            println!("  {}  {}", event.event_type, event.entity_id);
        }
        Ok(())
    }
}
