//! Remote A2A agents (see [`crate::model::RemoteAgentLink`]): registering one from its
//! Agent Card, and taking its reports on the tasks handed to it. Handing tasks over is
//! the delivery worker's (`DeliveryService`): a remote agent's channel is a hook.

mod reports;

use std::sync::Arc;

pub use self::reports::RemoteReport;
use super::agents::insert_new;
use super::{AgentService, AgentView, ServiceError, TaskService};
use crate::ValidationError;
use crate::model::{
    Actor, AgentHandle, AgentRole, CapabilityName, HookEvents, HookName, HookTimeout, HookType,
    HookUrl, Metadata, Proficiency, PushAuth, REMOTE_EVENT_TYPES, RemoteAgentLink, Webhook,
    WebhookId,
};
use crate::policy;
use crate::ports::{
    AgentRepository, CardFetcher, Clock, IdGenerator, MessageSigner, RemoteCard, SecretVault,
    TargetGuard, UnitOfWork, WebhookRepository, transact,
};
use crate::service::NewAgent;
use crate::service::webhooks::seal_auth_for;

/// How long a hand-over call may take.
const HANDOVER_TIMEOUT_MS: i64 = 30_000;

/// Most skills of a card taken as capabilities.
const MAX_SKILLS: usize = 50;

/// A remote agent to register.
#[derive(Clone, PartialEq, Eq)]
pub struct NewRemoteAgent {
    /// Where its Agent Card is.
    pub card_url: HookUrl,
    /// The `agentId` of the agent that stands for it; made from the card's name when
    /// `None`.
    pub handle: Option<AgentHandle>,
    /// Muster's base URL as the remote agent reaches it.
    pub callback_url: String,
    /// Sent to it in `Authorization` with every task.
    pub auth: Option<PushAuth>,
}

impl std::fmt::Debug for NewRemoteAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewRemoteAgent")
            .field("card_url", &self.card_url)
            .field("handle", &self.handle)
            .field("callback_url", &self.callback_url)
            .field("auth", &self.auth)
            .finish()
    }
}

/// A registered remote agent: the agent that stands for it, and its card.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteRegistered {
    /// The agent, with a capability per skill of the card.
    pub view: AgentView,
    /// What the card said.
    pub card: RemoteCard,
    /// Its hand-over channel.
    pub link: RemoteAgentLink,
}

/// Registering remote A2A agents and taking their reports.
#[derive(Clone)]
pub struct RemoteAgentService {
    agents: AgentService,
    tasks: TaskService,
    agent_repo: Arc<dyn AgentRepository>,
    hooks: Arc<dyn WebhookRepository>,
    uow: Arc<dyn UnitOfWork>,
    vault: Arc<dyn SecretVault>,
    signer: Arc<dyn MessageSigner>,
    guard: Arc<dyn TargetGuard>,
    cards: Arc<dyn CardFetcher>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for RemoteAgentService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteAgentService").finish_non_exhaustive()
    }
}

/// The ports of [`RemoteAgentService`] beyond the agent and task services.
#[derive(Clone)]
pub struct RemotePorts {
    /// Reads agents.
    pub agents: Arc<dyn AgentRepository>,
    /// Reads hooks (the channels).
    pub hooks: Arc<dyn WebhookRepository>,
    /// Writes.
    pub uow: Arc<dyn UnitOfWork>,
    /// Seals the channels' secrets.
    pub vault: Arc<dyn SecretVault>,
    /// Makes push tokens.
    pub signer: Arc<dyn MessageSigner>,
    /// Checks the card's and the endpoint's URLs (decision D-81).
    pub guard: Arc<dyn TargetGuard>,
    /// Reads cards.
    pub cards: Arc<dyn CardFetcher>,
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// Ids.
    pub ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for RemotePorts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemotePorts").finish_non_exhaustive()
    }
}

impl RemoteAgentService {
    /// Wires the use cases.
    pub fn new(agents: AgentService, tasks: TaskService, ports: RemotePorts) -> Self {
        Self {
            agents,
            tasks,
            agent_repo: ports.agents,
            hooks: ports.hooks,
            uow: ports.uow,
            vault: ports.vault,
            signer: ports.signer,
            guard: ports.guard,
            cards: ports.cards,
            clock: ports.clock,
            ids: ports.ids,
        }
    }

    /// Registers the agent whose card is at `new.card_url`: reads the card (through the
    /// target checks), checks its JSON-RPC endpoint the same way, and stores an active
    /// worker agent (a capability per skill) with its hand-over channel and
    /// `agent.registered`, in one transaction. Admin users only: it both registers an
    /// agent and sends the organization's tasks outside.
    pub async fn register(
        &self,
        actor: &Actor,
        new: NewRemoteAgent,
    ) -> Result<RemoteRegistered, ServiceError> {
        policy::may_grant_agent_role(actor, AgentRole::Worker)?;
        policy::may_manage_webhooks(actor)?;
        check_callback(&new.callback_url)?;
        self.check_target("cardUrl", new.card_url.as_str()).await?;
        let card = self
            .cards
            .fetch(new.card_url.as_str())
            .await
            .map_err(|why| ValidationError::new(format!("cannot read the agent card: {why}")))?;
        let endpoint = HookUrl::new(&card.endpoint)
            .map_err(|e| ValidationError::new(format!("the card's endpoint: {e}")))?;
        self.check_target("the card's JSON-RPC endpoint", endpoint.as_str())
            .await?;
        let handle = match new.handle.clone() {
            Some(handle) => handle,
            None => default_handle(&card.name, self.ids.new_id())?,
        };
        let mut metadata = serde_json::Map::new();
        metadata.insert("source".into(), "a2a".into());
        // Without its query: a key in it is not for everyone who may read agents.
        let shown = new.card_url.as_str();
        let shown = shown.split(['?', '#']).next().unwrap_or(shown);
        metadata.insert("cardUrl".into(), shown.into());
        metadata.insert("endpoint".into(), endpoint.as_str().into());
        let (agent, capabilities, event) = self.agents.new_agent(
            actor,
            NewAgent {
                capabilities: skills(&card.skills),
                metadata: Metadata::new(serde_json::Value::Object(metadata))?,
                ..NewAgent::new(handle, display_name(&card.name))
            },
        )?;
        // The agent never signs a request: its secret is drawn and forgotten.
        let (credentials, _never_shown) = self.agents.with_secret(agent)?;
        let agent = &credentials.agent;
        let hook_id = WebhookId::from_uuid(self.ids.new_id());
        let secret = self.vault.random_hex(32).map_err(ServiceError::internal)?;
        let link = RemoteAgentLink {
            agent_id: agent.id,
            card_url: new.card_url.as_str().to_owned(),
            callback_url: new.callback_url.trim_end_matches('/').to_owned(),
            sealed_auth: new
                .auth
                .as_ref()
                .map(|auth| {
                    seal_auth_for(
                        self.vault.as_ref(),
                        RemoteAgentLink::AUTH_PURPOSE,
                        hook_id,
                        auth,
                    )
                })
                .transpose()?,
        };
        let now = self.clock.now();
        let channel = Webhook {
            id: hook_id,
            org_id: actor.org_id,
            name: HookName::new(&format!("A2A remote agent {}", agent.handle.as_str()))?,
            url: endpoint,
            sealed_secret: Some(
                self.vault
                    .seal(Webhook::SECRET_PURPOSE, hook_id.as_uuid(), &secret)
                    .map_err(ServiceError::internal)?,
            ),
            events: HookEvents::new(REMOTE_EVENT_TYPES.iter().map(|t| (*t).to_owned()).collect())?,
            hook_type: HookType::Post,
            can_block: false,
            timeout: HookTimeout::new(HANDOVER_TIMEOUT_MS)?,
            enabled: true,
            consecutive_failures: 0,
            last_error: None,
            push: None,
            remote: Some(link.clone()),
            created_at: now,
            updated_at: now,
        };
        let view = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let view = insert_new(tx, credentials, capabilities, event).await?;
                tx.insert_webhook(&channel).await?;
                Ok(view)
            })
        })
        .await?;
        Ok(RemoteRegistered { view, card, link })
    }

    async fn check_target(&self, what: &str, url: &str) -> Result<(), ServiceError> {
        self.guard
            .check(url)
            .await
            .map_err(|refusal| ValidationError::new(format!("{what}: {refusal}")).into())
    }
}

/// `callbackUrl`: an absolute http(s) URL with a host and nothing after the path.
fn check_callback(url: &str) -> Result<(), ValidationError> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    let fits = rest.is_some_and(|rest| {
        let host = rest.split('/').next().unwrap_or_default();
        !host.is_empty() && !host.contains('@')
    }) && url.len() <= HookUrl::MAX_CHARS
        && !url.contains(['?', '#'])
        && url.chars().all(|c| c.is_ascii_graphic());
    if fits {
        Ok(())
    } else {
        Err(ValidationError::new(
            "callbackUrl must be an absolute http(s) URL with a host, without query or fragment",
        ))
    }
}

/// `a2a-<name in lowercase letters, digits and dashes>-<8 hex of the id>`.
fn default_handle(name: &str, id: uuid::Uuid) -> Result<AgentHandle, ValidationError> {
    let mut slug = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 60 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    // The last hex digits: random in a UUID v7 (the first ones are its timestamp).
    let simple = id.simple().to_string();
    let short = &simple[simple.len() - 8..];
    let handle = if slug.is_empty() {
        format!("a2a-{short}")
    } else {
        format!("a2a-{slug}-{short}")
    };
    AgentHandle::new(&handle)
}

/// The card's name as a display name: trimmed, at most 255 characters, without the
/// characters that hide or reorder text, never without a visible character.
fn display_name(name: &str) -> String {
    let name: String = crate::validation::without_hidden(name.trim())
        .chars()
        .filter(|c| !c.is_control())
        .take(crate::model::Agent::MAX_NAME_CHARS)
        .collect();
    if name.chars().all(crate::validation::is_invisible) {
        "Remote A2A agent".to_owned()
    } else {
        name.trim().to_owned()
    }
}

/// The skills that make valid capability names, without repeats, at most
/// [`MAX_SKILLS`], each at the standard proficiency.
fn skills(ids: &[String]) -> Vec<(CapabilityName, Proficiency)> {
    let mut out: Vec<(CapabilityName, Proficiency)> = Vec::new();
    for id in ids {
        let Ok(name) = CapabilityName::new(id) else {
            continue;
        };
        if out.len() < MAX_SKILLS && out.iter().all(|(seen, _)| *seen != name) {
            out.push((name, Proficiency::Standard));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callbacks_are_absolute_http_urls_without_query() {
        for good in ["http://127.0.0.1:8080", "https://muster.example.com/base/"] {
            assert!(check_callback(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "ftp://x",
            "http://",
            "https://user@host",
            "https://host/?a=1",
            "https://host/#x",
            "https://ho st",
            "/relative",
        ] {
            assert!(check_callback(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn handles_are_made_from_the_name() {
        let id = uuid::Uuid::from_u128(0x0000_0000_0000_0000_0000_0000_abcd_ef12);
        assert_eq!(
            default_handle("Research Bot (v2)!", id).unwrap().as_str(),
            "a2a-research-bot-v2-abcdef12"
        );
        assert_eq!(default_handle("  ", id).unwrap().as_str(), "a2a-abcdef12");
        let long = "x".repeat(500);
        assert!(default_handle(&long, id).unwrap().as_str().len() <= AgentHandle::MAX_CHARS);
    }

    #[test]
    fn skills_become_capabilities_once_each() {
        let ids = vec![
            "Translate".to_owned(),
            "translate".to_owned(),
            String::new(),
        ];
        let caps = skills(&ids);
        assert_eq!(caps.len(), 1);
        assert_eq!(caps[0].0.as_str(), "translate");
    }

    #[test]
    fn display_names_are_never_empty() {
        assert_eq!(display_name(" \n "), "Remote A2A agent");
        assert_eq!(display_name(" Bot "), "Bot");
        assert_eq!(display_name("\u{200B}\u{3164}"), "Remote A2A agent");
        assert_eq!(display_name("Bot\u{202E}toB"), "BottoB");
    }
}
